// Progress from inside a handler: checked by the core, delivered to a direct
// caller's `onProgress`, as MCP `notifications/progress` to a real MCP
// client that sent a progressToken, and as std: CBOR metadata.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { os } from "@orpc/server";
import * as z from "zod";

import {
  agentProcedure,
  CapabilityError,
  createCapabilityRegistry,
  progressMetadataCbor,
  registerMcpTools,
} from "@orpc-agent/core";

/** A capability whose handler makes the given reports and returns what `progress()` answered. */
async function reportingRegistry(reports) {
  const base = agentProcedure(os.$context());
  const router = {
    work: base
      .meta({
        agent: { description: "Does some work.", expose: { direct: true, mcp: true }, sideEffect: "none", risk: "low" },
      })
      .input(z.object({}))
      .handler(async ({ progress }) => {
        const answers = [];
        for (const [done, total] of reports) {
          answers.push(progress(done, total));
          await new Promise((resolve) => setImmediate(resolve));
        }
        return { answers };
      }),
  };
  return createCapabilityRegistry(router, { approvalStore: "memory" });
}

const REPORTS = [
  [0, 3],
  [1, undefined],
  [1, undefined], // not increasing: dropped
  [5, undefined], // above the total: dropped
  [2, 4], // the total changed: dropped
  [2, 3],
  [-1, undefined], // not a count: dropped
  [3, undefined],
];
const ACCEPTED = [
  { done: 0, total: 3 },
  { done: 1, total: 3 },
  { done: 2, total: 3 },
  { done: 3, total: 3 },
];
const ANSWERS = [true, true, false, false, false, true, false, true];

describe("progress", () => {
  it("direct invocation: the core's checks; accepted reports reach onProgress, rejected ones are dropped", async () => {
    const registry = await reportingRegistry(REPORTS);
    const events = [];
    const out = await registry.invoke("work", {}, { surface: "direct", onProgress: (e) => events.push(e) });
    assert.deepEqual(out, { status: "ok", output: { answers: ANSWERS } });
    assert.deepEqual(events, ACCEPTED);
    registry.close();
  });

  it("a report without a total stays without one; a throwing listener changes nothing", async () => {
    const registry = await reportingRegistry([[1], [2]]);
    const events = [];
    const out = await registry.invoke(
      "work",
      {},
      {
        surface: "direct",
        onProgress: (e) => {
          events.push(e);
          throw new Error("listener bug");
        },
      },
    );
    assert.deepEqual(out.output.answers, [true, true]);
    assert.deepEqual(events, [{ done: 1 }, { done: 2 }]);
    registry.close();
  });

  it("without a listener, progress() still answers (the handler behaves the same)", async () => {
    const registry = await reportingRegistry(REPORTS);
    const out = await registry.invoke("work", {}, { surface: "direct" });
    assert.deepEqual(out.output.answers, ANSWERS);
    registry.close();
  });

  it("progress is checked per invocation, across retries", async () => {
    const base = agentProcedure(os.$context());
    let attempt = 0;
    const registry = await createCapabilityRegistry(
      {
        flaky: base
          .meta({
            agent: {
              description: "Fails once.",
              expose: { direct: true },
              sideEffect: "read",
              risk: "low",
              idempotent: true,
              retry: { maxAttempts: 2, backoffMs: 1, retryOn: () => true },
            },
          })
          .input(z.object({}))
          .handler(async ({ progress }) => {
            attempt += 1;
            if (attempt === 1) {
              progress(1, 4);
              progress(2);
              throw new CapabilityError("EXECUTION_FAILED", "transient", { retryable: true });
            }
            return { answers: [progress(1), progress(3), progress(4, 5)] };
          }),
      },
      { approvalStore: "memory" },
    );
    const events = [];
    const out = await registry.invoke("flaky", {}, { surface: "direct", onProgress: (e) => events.push(e) });
    assert.equal(attempt, 2, "retried");
    assert.deepEqual(out.output.answers, [false, true, false]);
    assert.deepEqual(events, [
      { done: 1, total: 4 },
      { done: 2, total: 4 },
      { done: 3, total: 4 },
    ]);
    registry.close();
  });

  it("a real MCP client that sent a progressToken receives notifications/progress", async () => {
    const registry = await reportingRegistry(REPORTS);
    const server = new McpServer({ name: "progress", version: "1.0.0" });
    registerMcpTools(server, registry, { frame: () => ({ actor: { id: "agent" } }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);

    const received = [];
    const result = await client.callTool({ name: "work", arguments: {} }, undefined, {
      onprogress: (p) => received.push(p),
    });
    assert.equal(result.isError, false);
    assert.deepEqual(JSON.parse(result.content[0].text).answers, ANSWERS);
    assert.deepEqual(
      received.map(({ progress, total }) => ({ done: progress, total })),
      ACCEPTED,
    );

    // No token, no notifications.
    const quiet = [];
    client.setNotificationHandler?.(
      (await import("@modelcontextprotocol/sdk/types.js")).ProgressNotificationSchema,
      (n) => quiet.push(n),
    );
    await client.callTool({ name: "work", arguments: {} });
    assert.deepEqual(quiet, []);
    await client.close();
    registry.close();
  });

  it("std:progress / std:progress-total as deterministic CBOR metadata", () => {
    const bytes = Buffer.from(progressMetadataCbor({ done: 2, total: 5 }));
    // {"std:progress": 2, "std:progress-total": 5}, keys in deterministic order.
    const expected = Buffer.concat([
      Buffer.from([0xa2, 0x6c]),
      Buffer.from("std:progress"),
      Buffer.from([0x02, 0x72]),
      Buffer.from("std:progress-total"),
      Buffer.from([0x05]),
    ]);
    assert.deepEqual(bytes, expected);
    assert.deepEqual(
      Buffer.from(progressMetadataCbor({ done: 1 })),
      Buffer.concat([Buffer.from([0xa1, 0x6c]), Buffer.from("std:progress"), Buffer.from([0x01])]),
    );
    assert.throws(() => progressMetadataCbor({ done: 1.5 }), /integer/);
  });
});
