// Short soak (issue 10, item 3) in `make test`: 20 000 mixed governed
// invocations after warm-up; the full million is `make soak-node`
// (bench/soak/node.mjs). Bounds: soak-run.mjs, documented in bench/soak/README.md.

import assert from "node:assert/strict";
import { it } from "node:test";

import { problems, soak, summary } from "./soak-run.mjs";

it("20 000 mixed invocations: no leaked approvals, timers or in-flight calls; memory bounded", async () => {
  const f = await soak({ total: 20_000 });
  console.log(summary(f));
  assert.ok(f.invocations >= 20_000);
  for (const kind of ["ok", "invalid", "denied", "approval", "timeout", "error"])
    assert.ok(f.tally[kind] > 1000, `${kind}: ${f.tally[kind]}`);
  assert.equal(f.unfinishedApprovals, 0, "approval rows left pending or approved-but-unconsumed");
  assert.equal(f.timersLeft, 0, "timers left armed");
  assert.equal(f.inFlight, 0, "invocations still in flight");
  assert.deepEqual(problems(f), []);
});
