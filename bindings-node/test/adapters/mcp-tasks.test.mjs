// MCP tasks for approval-gated calls (issue 18.3): registerMcpTools' `tasks`
// lists a capability that declares an approval with taskSupport "optional";
// the SDK's real Client asks for a task, polls tasks/get and reads
// tasks/result. Waits are explicit: each test waits for a task status
// (bounded), never for a length of time.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/experimental/tasks/types.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, registerMcpTools } from "@orpc-agent/core";

const ARGS = { id: "o-7", amount: 20 };

async function connected({ expiresInMs = 600_000, taskStore = new InMemoryTaskStore(), logger, handler, port } = {}) {
  const calls = [];
  const base = agentProcedure(os.$context());
  const router = {
    orders: {
      get: base
        .meta({ agent: { description: "Get an order.", expose: { mcp: true }, sideEffect: "read", risk: "low" } })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input }) => ({ id: input.id })),
      refund: base
        .meta({
          agent: {
            description: "Refund an order.",
            expose: { mcp: true },
            sideEffect: "write",
            risk: "high",
            approval: { required: true, type: "manager", expiresInMs },
          },
        })
        .input(z.object({ id: z.string(), amount: z.number() }))
        .output(z.object({ refunded: z.number() }))
        .handler(
          handler ??
            (async ({ input }) => {
              calls.push(input);
              return { refunded: input.amount };
            }),
        ),
    },
  };
  const registry = await createCapabilityRegistry(router, logger === undefined ? {} : { logger });
  const server = new McpServer(
    { name: "orders", version: "1.0.0" },
    { capabilities: { tasks: { requests: { tools: { call: {} } }, list: {}, cancel: {} } }, taskStore },
  );
  registerMcpTools(server, port?.(registry) ?? registry, {
    frame: () => ({ actor: { id: "ana" } }),
    tasks: { approvalPollMs: 5 },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "agent", version: "1.0.0" }, { capabilities: { tasks: {} } });
  await client.connect(clientSide);
  // The store's ttl timers keep the process alive until cleared.
  const close = async () => {
    await client.close();
    taskStore.cleanup();
  };
  return { client, registry, calls, close };
}

const asTask = (client) =>
  client.request(
    { method: "tools/call", params: { name: "orders_refund", arguments: ARGS, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );

/** Polls tasks/get until the task has one of `statuses` (at most 10 s: a bound, not a timing). */
async function untilStatus(client, taskId, statuses) {
  for (let i = 0; i < 2_000; i++) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (statuses.includes(task.status)) return task;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`task ${taskId} never reached ${statuses}`);
}

/** A task asked for, waiting for its approval, and the request approved (by "lead"). */
async function approvedTask(client, registry) {
  const { task } = await asTask(client);
  await untilStatus(client, task.taskId, ["input_required"]);
  const [request] = await registry.approvals.list({});
  await registry.approvals.approve(request.id, { approver: "lead" });
  return task;
}

describe("MCP tasks for approval-gated calls", () => {
  it("lists gated tools as task-optional, the others as plain tools", async () => {
    const { client, close } = await connected();
    try {
      const { tools } = await client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
      assert.equal(byName.orders_refund, "optional");
      assert.notEqual(byName.orders_get, "optional");
    } finally {
      await close();
    }
  });

  it("a task for an approval that expires past setTimeout's range (30 days) stays: its ttl is capped, not overflowed", async () => {
    const { client, close } = await connected({ expiresInMs: 30 * 24 * 3600 * 1000 });
    try {
      const { task } = await asTask(client);
      assert.ok(task.ttl <= 2 ** 31 - 1, `ttl ${task.ttl}`);
      await new Promise((resolve) => setTimeout(resolve, 50)); // a store's overflowed timer fires after ~1 ms
      assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, "input_required");
    } finally {
      await close();
    }
  });

  it("while its approved call runs, a task is working (no longer input_required), and then completed", async () => {
    let started = false;
    let finish;
    const running = new Promise((resolve) => (finish = resolve));
    const handler = async ({ input }) => {
      started = true;
      await running;
      return { refunded: input.amount };
    };
    const { client, registry, close } = await connected({ handler });
    try {
      const task = await approvedTask(client, registry);
      for (let i = 0; i < 2_000 && !started; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(started, "the approved call started");
      assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, "working");
      finish();
      await untilStatus(client, task.taskId, ["completed"]);
    } finally {
      await close();
    }
  });

  it("a task whose approval store is down stops waiting once its request expired: it fails, never waits until its ttl", async () => {
    let down = false;
    // The registry as the adapter sees it, its approval reads failing once `down`.
    const port = (registry) => ({
      descriptors: (...a) => registry.descriptors(...a),
      invoke: (...a) => registry.invoke(...a),
      resume: (...a) => registry.resume(...a),
      redactApprovalInput: (...a) => registry.redactApprovalInput(...a),
      logger: { warn: () => {} },
      approvals: {
        ...registry.approvals,
        get: async (id) => {
          if (down) throw new Error("the approval store is down");
          return registry.approvals.get(id);
        },
      },
    });
    // Expiring well after the task is seen waiting, even on a loaded machine.
    const { client, close } = await connected({ expiresInMs: 2_000, port });
    try {
      const { task } = await asTask(client);
      await untilStatus(client, task.taskId, ["input_required"]);
      down = true;
      const ended = await untilStatus(client, task.taskId, ["failed", "completed"]);
      assert.equal(ended.status, "failed");
    } finally {
      await close();
    }
  });

  it("a plain call whose task store fails runs nothing: an approved request stays approved for the retry", async () => {
    let failing = false;
    class FlakyStore extends InMemoryTaskStore {
      async createTask(...a) {
        if (failing) throw new Error("the task store is down");
        return super.createTask(...a);
      }
    }
    const { client, registry, calls, close } = await connected({ taskStore: new FlakyStore(), logger: { warn() {} } });
    try {
      const asked = await client.callTool({ name: "orders_refund", arguments: ARGS });
      const id = asked._meta["orpc-agent/approval"].requestId;
      await registry.approvals.approve(id, { approver: "lead" });
      failing = true;
      const failed = await client.callTool({ name: "orders_refund", arguments: ARGS });
      assert.equal(failed.isError, true);
      assert.deepEqual(calls, [], "nothing ran for a call the model is told failed");
      assert.equal((await registry.approvals.get(id)).status, "approved");
      failing = false;
      const ran = await client.callTool({ name: "orders_refund", arguments: ARGS });
      assert.equal(ran.isError, false, JSON.stringify(ran));
      assert.deepEqual(calls, [ARGS], "the retry ran it, once");
    } finally {
      await close();
    }
  });

  it("a task store that fails reaches the client as the core's INTERNAL text, never its own", async () => {
    class FailingStore extends InMemoryTaskStore {
      async createTask() {
        throw new Error("connect redis://app:hunter2@cache.internal:6379 refused");
      }
    }
    const logged = [];
    const logger = { warn: (message, error) => logged.push([message, error.message]) };
    const { client, calls, close } = await connected({ taskStore: new FailingStore(), logger });
    try {
      const result = await client.callTool({ name: "orders_refund", arguments: ARGS });
      assert.equal(result.isError, true);
      const text = JSON.stringify(result);
      assert.ok(!text.includes("hunter2") && !text.includes("redis"), text);
      assert.match(result.content[0].text, /INTERNAL/);
      assert.deepEqual(calls, []);
      // The operator gets the real error.
      assert.deepEqual(logged, [
        [
          'orpc-agent: the MCP task store of capability "orders.refund" failed in an adapter; the model was only told that it failed',
          "connect redis://app:hunter2@cache.internal:6379 refused",
        ],
      ]);
    } finally {
      await close();
    }
  });

  it("waits in input_required until approved, then runs once and completes", async () => {
    const { client, registry, calls, close } = await connected();
    try {
      const { task } = await asTask(client);
      const waiting = await untilStatus(client, task.taskId, ["input_required"]);
      assert.match(waiting.statusMessage, /^APPROVAL_REQUIRED: .* This task runs the call once when it is approved/);
      assert.deepEqual(calls, []);
      const [request] = await registry.approvals.list({});
      assert.equal(request.status, "pending");
      await registry.approvals.approve(request.id, { approver: "lead" });
      const done = await untilStatus(client, task.taskId, ["completed", "failed"]);
      assert.equal(done.status, "completed");
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(result.isError, false, JSON.stringify(result));
      assert.deepEqual(result.structuredContent, { refunded: 20 });
      assert.deepEqual(calls, [ARGS]);
      assert.equal((await registry.approvals.get(request.id)).status, "consumed");
    } finally {
      await close();
    }
  });

  it("an approved call whose output has no JSON form the façade writes still completes its task", async () => {
    const deep = (n) => (n === 0 ? 1 : { a: deep(n - 1) });
    const handler = async ({ input }) => ({ refunded: input.amount, s: deep(200) });
    const { client, registry, close } = await connected({ handler });
    try {
      const task = await approvedTask(client, registry);
      const done = await untilStatus(client, task.taskId, ["completed", "failed"]);
      assert.equal(done.status, "completed");
    } finally {
      await close();
    }
  });

  it("a rejection fails the task with APPROVAL_REJECTED and nothing runs", async () => {
    const { client, registry, calls, close } = await connected();
    try {
      const { task } = await asTask(client);
      await untilStatus(client, task.taskId, ["input_required"]);
      const [request] = await registry.approvals.list({});
      await registry.approvals.reject(request.id, { approver: "lead", reason: "no" });
      assert.equal((await untilStatus(client, task.taskId, ["completed", "failed"])).status, "failed");
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(result.isError, true);
      assert.equal(result._meta["orpc-agent/error"].code, "APPROVAL_REJECTED");
      assert.deepEqual(calls, []);
    } finally {
      await close();
    }
  });

  it("an expiry fails the task with APPROVAL_EXPIRED and nothing runs", async () => {
    const { client, calls, close } = await connected({ expiresInMs: 50 });
    try {
      const { task } = await asTask(client);
      assert.equal((await untilStatus(client, task.taskId, ["completed", "failed"])).status, "failed");
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(result._meta["orpc-agent/error"].code, "APPROVAL_EXPIRED");
      assert.deepEqual(calls, []);
    } finally {
      await close();
    }
  });

  it("a task cancelled while it waits runs nothing, even once the request is approved", async () => {
    const { client, registry, calls, close } = await connected();
    try {
      const { task } = await asTask(client);
      await untilStatus(client, task.taskId, ["input_required"]);
      await client.experimental.tasks.cancelTask(task.taskId);
      const [request] = await registry.approvals.list({});
      await registry.approvals.approve(request.id, { approver: "lead" });
      // The approved request stays unconsumed: the same call repeated (a plain call) runs it, once.
      const again = await client.callTool({ name: "orders_refund", arguments: ARGS });
      assert.equal(again.isError, false, JSON.stringify(again));
      assert.deepEqual(calls, [ARGS]);
      assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, "cancelled");
    } finally {
      await close();
    }
  });

  it("a call that asks for no task gets the plain approval-required result at once", async () => {
    const { client, registry, calls, close } = await connected();
    try {
      const result = await client.callTool({ name: "orders_refund", arguments: ARGS });
      assert.equal(result.isError, true);
      assert.equal(result._meta["orpc-agent/approval"].status, "approval_required");
      const [request] = await registry.approvals.list({});
      await registry.approvals.approve(request.id, { approver: "lead" });
      // Repeating the call runs the approved request once, as for a plain tool.
      const again = await client.callTool({ name: "orders_refund", arguments: ARGS });
      assert.equal(again.isError, false, JSON.stringify(again));
      assert.deepEqual(calls, [ARGS]);
    } finally {
      await close();
    }
  });
});
