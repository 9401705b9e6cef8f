// tests/vectors/progress through the Node binding's public API: a real oRPC
// procedure's handler makes each case's reports with its `progress`, and
// the frame's `onProgress` hears the accepted ones. The core decides which
// are accepted; this runner only reads numbers out of the vectors (every
// count in them is exact as a JavaScript number).
import assert from "node:assert/strict";
import { test } from "node:test";
import { os } from "@orpc/server";

import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";

import { loadVectors } from "./helpers.js";

const meta = { description: "Reports progress.", expose: { direct: true }, sideEffect: "none", risk: "low" };

for (const c of loadVectors("progress")) {
  test(`progress vector: ${c.name}`, async () => {
    const router = {
      work: {
        run: agentProcedure(os)
          .meta({ agent: meta })
          .handler(({ progress }) => c.reports.map((r) => progress(r.done, r.total))),
      },
    };
    const registry = await createCapabilityRegistry(router);
    const events = [];
    const outcome = await registry.invoke("work.run", undefined, {
      surface: "direct",
      onProgress: (event) => events.push(event),
    });
    registry.close();
    assert.deepEqual(outcome, {
      status: "ok",
      output: c.reports.map((r) => r.expect.dropped === undefined),
    });
    assert.deepEqual(
      events,
      c.reports.filter((r) => r.expect.dropped === undefined).map((r) => r.expect),
    );
  });
}
