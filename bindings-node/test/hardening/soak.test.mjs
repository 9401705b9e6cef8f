// Short soak (issue 10, item 3) in `make test`: 20 000 mixed governed
// invocations after warm-up; the full million is `make soak-node`
// (bench/soak/node.mjs). Bounds: docs in bench/soak/README.md.

import assert from "node:assert/strict";
import { it } from "node:test";

import { mb, soak } from "./soak-run.mjs";

/** Resident-memory growth allowed once warm (allocator arenas, V8 code space, retained approval rows). */
export const RSS_GROWTH_BOUND = 64 * 1024 * 1024;
/** JS heap growth allowed once warm: nothing per invocation survives a GC. */
export const HEAP_GROWTH_BOUND = 4 * 1024 * 1024;

it("20 000 mixed invocations: no leaked approvals, timers or in-flight calls; memory bounded", async () => {
  const f = await soak({ total: 20_000 });
  console.log(
    `soak-node short: ${f.invocations} invocations in ${f.seconds.toFixed(1)} s (${Math.round(f.perSecond)}/s), ` +
      `RSS ${mb(f.rssStart)} -> ${mb(f.rssEnd)} MB, heap ${mb(f.heapStart)} -> ${mb(f.heapEnd)} MB`,
  );
  assert.equal(f.tally.unexpected, 0, JSON.stringify(f.tally));
  for (const kind of ["ok", "invalid", "denied", "approval", "timeout", "error"]) assert.ok(f.tally[kind] > 1000, `${kind}: ${f.tally[kind]}`);
  assert.ok(f.invocations >= 20_000);
  assert.equal(f.unfinishedApprovals, 0, "approval rows left pending or approved-but-unconsumed");
  assert.equal(f.timersLeft, 0, "timers left armed");
  assert.equal(f.inFlight, 0, "invocations still in flight");
  assert.ok(f.rssEnd - f.rssStart < RSS_GROWTH_BOUND, `RSS grew ${mb(f.rssEnd - f.rssStart)} MB`);
  assert.ok(f.heapEnd - f.heapStart < HEAP_GROWTH_BOUND, `heap grew ${mb(f.heapEnd - f.heapStart)} MB`);
});
