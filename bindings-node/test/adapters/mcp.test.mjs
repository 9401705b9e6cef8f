// The MCP adapter through a real MCP `Client`: over `InMemoryTransport`, and
// over stdio against a server process (mcp-stdio-server.mjs).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

import { os } from "@orpc/server";
import * as z from "zod";

import {
  agentProcedure,
  CapabilityError,
  createCapabilityRegistry,
  MCP_APPROVAL_ID_META,
  registerMcpTools,
} from "@orpc-agent/core";

import { ordersFixture, waitFor } from "./orders-fixture.mjs";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

async function connectedClient(registryOptions, mcpOptions) {
  const fixture = await ordersFixture(registryOptions);
  const server = new McpServer({ name: "orders", version: "1.0.0" });
  registerMcpTools(server, fixture.registry, {
    frame: (extra) => ({
      actor: { id: "agent-7", roles: ["support"] },
      context: { tenant: "t1", requestId: extra.requestId },
    }),
    ...mcpOptions,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test-client", version: "1.0.0" });
  await client.connect(clientSide);
  return { ...fixture, client, server };
}

const errorMeta = (result) => result._meta?.["orpc-agent/error"];

describe("registerMcpTools over InMemoryTransport", () => {
  it("lists the core's descriptors: names, schemas, annotations with overrides", async () => {
    const { client, registry } = await connectedClient();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName).sort(), ["orders_customer", "orders_get", "orders_purge", "orders_refund"]);
    for (const descriptor of registry.descriptors({ surface: "mcp" })) {
      if (descriptor.discovery === "contextual") continue;
      const listed = byName[descriptor.toolNames.mcp];
      assert.deepEqual(listed.annotations, descriptor.annotations, descriptor.id);
      // Every keyword of the core's schema is listed as is (and nothing else: see the input schemas suite).
      for (const [keyword, value] of Object.entries(descriptor.inputSchema ?? {})) {
        assert.deepEqual(listed.inputSchema[keyword], value, `${descriptor.id} inputSchema.${keyword}`);
      }
      assert.equal(listed.description, descriptor.description);
    }
    // Derived by the core from sideEffect, plus the declared override.
    assert.deepEqual(byName.orders_get.annotations, {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
      title: "Get order",
    });
    assert.equal(byName.orders_purge.annotations.destructiveHint, true);
    assert.equal(byName.orders_refund.annotations.readOnlyHint, false);
    assert.equal(byName.orders_get.outputSchema.type, "object");
    assert.equal(byName.orders_purge.outputSchema, undefined, "no output schema declared");
  });

  it("returns output as text and structuredContent, with the app's frame and surface mcp", async () => {
    const { client, calls, audit } = await connectedClient();
    const result = await client.callTool({ name: "orders_get", arguments: { id: "o-1" } });
    assert.equal(result.isError, false);
    assert.deepEqual(result.structuredContent, { id: "o-1", status: "shipped", email: "ada@example.com" });
    // The core's text (`mcp::ok_result`, byte for byte as Python's): compact JSON.
    assert.equal(result.content[0].text, '{"id":"o-1","status":"shipped","email":"ada@example.com"}');
    assert.equal(calls[0].context.tenant, "t1");
    const finished = audit.find((r) => r.event === "finished");
    assert.equal(finished.surface, "mcp");
    assert.equal(finished.actorId, "agent-7");
  });

  it("carries _meta.traceparent and tracestate into the frame and the audit record", async () => {
    const { client, audit } = await connectedClient();
    await client.callTool({
      name: "orders_get",
      arguments: { id: "o-1" },
      _meta: { traceparent: TRACEPARENT, tracestate: "vendor=abc" },
    });
    const finished = audit.find((r) => r.event === "finished");
    assert.equal(finished.traceparent, TRACEPARENT);
    assert.equal(finished.tracestate, "vendor=abc");
  });

  it("the app's trace wins whole over _meta's, and no JSON-RPC id becomes the request id (Python's rule too)", async () => {
    const appParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const { client, audit } = await connectedClient(undefined, {
      frame: () => ({ actor: { id: "ana" }, trace: { traceparent: appParent, tracestate: "app=1" } }),
    });
    await client.callTool({ name: "orders_get", arguments: { id: "o-1" }, _meta: { traceparent: TRACEPARENT } });
    const finished = audit.find((r) => r.event === "finished");
    assert.deepEqual([finished.traceparent, finished.tracestate, finished.requestId], [appParent, "app=1", null]);
  });

  it("redacts output before it reaches the client", async () => {
    const { client } = await connectedClient();
    const result = await client.callTool({ name: "orders_customer", arguments: { orderId: "o-1" } });
    assert.deepEqual(result.structuredContent, { name: "Ada Lovelace", email: "***", phone: "***" });
    assert.ok(!JSON.stringify(result).includes("ada@example.com"));
  });

  it("maps capability errors to isError results with the code in text and _meta", async () => {
    const { client, calls } = await connectedClient();
    const invalid = await client.callTool({ name: "orders_get", arguments: { id: "" } });
    assert.equal(invalid.isError, true);
    assert.equal(errorMeta(invalid).code, "INVALID_INPUT");
    assert.equal(errorMeta(invalid).kind, "std:invalid-args");
    assert.match(invalid.content[0].text, /^INVALID_INPUT: .*Fix the arguments/s);

    const denied = await client.callTool({ name: "orders_purge", arguments: { id: "o-1" } });
    assert.equal(denied.isError, true);
    assert.equal(errorMeta(denied).code, "POLICY_DENIED");
    assert.equal(errorMeta(denied).retryable, false);
    assert.match(denied.content[0].text, /^POLICY_DENIED: Denied by policy "no-purge-by-agents"/);
    assert.equal(calls.length, 0, "neither handler ran");
  });

  it("never shows a failing handler's own message (SI-10)", async () => {
    const { client } = await connectedClient();
    const failed = await client.callTool({ name: "orders_get", arguments: { id: "boom" } });
    assert.equal(failed.isError, true);
    assert.equal(errorMeta(failed).code, "EXECUTION_FAILED");
    assert.ok(!JSON.stringify(failed).includes("hunter2"));
  });

  it("reports approval-required as a result the client acts on, then resumes the approved call", async () => {
    const { client, registry, calls } = await connectedClient();
    const first = await client.callTool({ name: "orders_refund", arguments: { id: "o-7", amount: 20 } });
    assert.equal(first.isError, true);
    const approval = first._meta["orpc-agent/approval"];
    assert.equal(approval.status, "approval_required");
    assert.equal(approval.capabilityId, "orders.refund");
    assert.equal(approval.type, "human-confirmation");
    assert.match(approval.requestId, /^apr_[0-9a-f]{32}$/);
    assert.ok(first.content[0].text.includes(approval.requestId));
    assert.deepEqual(approval.resumeWith, { _meta: { [MCP_APPROVAL_ID_META]: approval.requestId } });
    assert.equal(calls.length, 0);

    // Resuming before a decision: the core refuses.
    const early = await client.callTool({ name: "orders_refund", arguments: {}, ...approval.resumeWith });
    assert.equal(errorMeta(early).code, "APPROVAL_PENDING");

    await registry.approvals.approve(approval.requestId, { approver: "manager-1" });
    const resumed = await client.callTool({ name: "orders_refund", arguments: {}, ...approval.resumeWith });
    assert.equal(resumed.isError, false);
    assert.deepEqual(resumed.structuredContent, { refunded: 20, id: "o-7" });
    assert.deepEqual(
      calls.map((c) => c.input),
      [{ id: "o-7", amount: 20 }],
      "the approved input ran",
    );

    // Single use (SI-7).
    const again = await client.callTool({ name: "orders_refund", arguments: {}, ...approval.resumeWith });
    assert.equal(errorMeta(again).code, "APPROVAL_CONSUMED");
    assert.equal(calls.length, 1);
  });

  it("a client that sends only {name, arguments} runs its approved call by calling again (issue 18)", async () => {
    const { client, registry, calls } = await connectedClient();
    const args = { id: "o-8", amount: 30 };
    const first = await client.callTool({ name: "orders_refund", arguments: args });
    const { requestId } = first._meta["orpc-agent/approval"];
    assert.match(first.content[0].text, /call this tool again with the same arguments/);
    // Calling again while it waits: the same request, not another.
    const waiting = await client.callTool({ name: "orders_refund", arguments: args });
    assert.equal(waiting._meta["orpc-agent/approval"].requestId, requestId);
    // Other arguments are another call: a new request.
    const other = await client.callTool({ name: "orders_refund", arguments: { id: "o-8", amount: 31 } });
    assert.notEqual(other._meta["orpc-agent/approval"].requestId, requestId);
    assert.equal((await registry.approvals.list({ status: "pending" })).length, 2);

    await registry.approvals.approve(requestId, { approver: "manager-1" });
    const done = await client.callTool({ name: "orders_refund", arguments: args });
    assert.equal(done.isError, false, JSON.stringify(done));
    assert.deepEqual(done.structuredContent, { refunded: 30, id: "o-8" });
    assert.equal((await registry.approvals.get(requestId)).status, "consumed");
    assert.equal(calls.length, 1, "the approved call ran once");
    // The same call after that is a new request (single use, SI-7).
    const after = await client.callTool({ name: "orders_refund", arguments: args });
    assert.notEqual(after._meta["orpc-agent/approval"].requestId, requestId);
    assert.equal(calls.length, 1);
  });

  it("a resume through MCP runs only the caller's own request, through its own tool", async () => {
    const fixture = await ordersFixture();
    const { registry, calls } = fixture;
    // Two MCP servers over one registry, as two authenticated sessions would be.
    const connect = async (frame) => {
      const server = new McpServer({ name: "orders", version: "1.0.0" });
      registerMcpTools(server, registry, { frame: () => frame });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const client = new Client({ name: "test-client", version: "1.0.0" });
      await client.connect(clientSide);
      return client;
    };
    const alice = await connect({ actor: { id: "alice" } });
    const mallory = await connect({ actor: { id: "mallory" } });
    const anonymous = await connect({});

    const first = await alice.callTool({ name: "orders_refund", arguments: { id: "o-1", amount: 500 } });
    const { requestId } = first._meta["orpc-agent/approval"];
    await registry.approvals.approve(requestId, { approver: "manager-1" });
    const resumeWith = { _meta: { [MCP_APPROVAL_ID_META]: requestId } };

    // Another actor, a read-only tool, an anonymous caller: not found, nothing consumed, nothing ran.
    for (const [client, name] of [
      [mallory, "orders_refund"],
      [mallory, "orders_get"],
      [alice, "orders_get"],
      [anonymous, "orders_refund"],
    ]) {
      const refused = await client.callTool({ name, arguments: { id: "x" }, ...resumeWith });
      assert.equal(errorMeta(refused).code, "APPROVAL_NOT_FOUND", name);
      assert.equal((await registry.approvals.get(requestId)).status, "approved", "a refused resume consumed nothing");
    }
    assert.equal(calls.length, 0);

    // The same actor's request made on another surface (aiSdk), approved: never through MCP.
    const direct = await registry.invoke(
      "orders.refund",
      { id: "o-2", amount: 9 },
      { surface: "aiSdk", actor: { id: "alice" } },
    );
    await registry.approvals.approve(direct.request.id, { approver: "manager-1" });
    const viaMcp = await alice.callTool({
      name: "orders_refund",
      arguments: {},
      _meta: { [MCP_APPROVAL_ID_META]: direct.request.id },
    });
    assert.equal(errorMeta(viaMcp).code, "APPROVAL_NOT_FOUND", "made on another surface");

    // The requester, through the tool: runs once.
    const resumed = await alice.callTool({ name: "orders_refund", arguments: {}, ...resumeWith });
    assert.deepEqual(resumed.structuredContent, { refunded: 500, id: "o-1" });
    assert.equal(calls.length, 1);

    // A server that names no actor resumes its own anonymous requests.
    const anon = await anonymous.callTool({ name: "orders_refund", arguments: { id: "o-3", amount: 1 } });
    const anonId = anon._meta["orpc-agent/approval"].requestId;
    await registry.approvals.approve(anonId, { approver: "manager-1" });
    const byAlice = await alice.callTool({
      name: "orders_refund",
      arguments: {},
      _meta: { [MCP_APPROVAL_ID_META]: anonId },
    });
    assert.equal(errorMeta(byAlice).code, "APPROVAL_NOT_FOUND", "an actor is not the anonymous requester");
    const own = await anonymous.callTool({
      name: "orders_refund",
      arguments: {},
      _meta: { [MCP_APPROVAL_ID_META]: anonId },
    });
    assert.deepEqual(own.structuredContent, { refunded: 1, id: "o-3" });

    // Actors without ids match only an identical actor: a guest cannot run an admin's request.
    const admin = await connect({ actor: { roles: ["admin"] } });
    const guest = await connect({ actor: { roles: ["guest"] } });
    const byAdmin = await admin.callTool({ name: "orders_refund", arguments: { id: "o-4", amount: 2 } });
    const adminId = byAdmin._meta["orpc-agent/approval"].requestId;
    await registry.approvals.approve(adminId, { approver: "manager-1" });
    const stolen = await guest.callTool({
      name: "orders_refund",
      arguments: {},
      _meta: { [MCP_APPROVAL_ID_META]: adminId },
    });
    assert.equal(errorMeta(stolen).code, "APPROVAL_NOT_FOUND");
    const mine = await admin.callTool({
      name: "orders_refund",
      arguments: {},
      _meta: { [MCP_APPROVAL_ID_META]: adminId },
    });
    assert.deepEqual(mine.structuredContent, { refunded: 2, id: "o-4" });
  });

  it("reports a deadline as TIMEOUT, retryable, and the handler's signal aborts (SI-9)", async () => {
    // Long enough that a loaded machine starts the handler before it.
    const { client, signals } = await connectedClient({ defaults: { timeoutMs: 500 } });
    const timedOut = await client.callTool({ name: "orders_get", arguments: { id: "slow" } });
    assert.equal(timedOut.isError, true);
    // The error's JSON, as the core writes it for every adapter (Node and Python).
    assert.deepEqual(errorMeta(timedOut), {
      code: "TIMEOUT",
      message: "The capability did not finish within its 500 ms deadline.",
      retryable: true,
      kind: "std:timeout",
    });
    assert.match(timedOut.content[0].text, /^TIMEOUT: .* It is safe to retry\.$/);
    assert.equal(signals[0].aborted, true);
  });

  it("aborts the handler when the client cancels the request", async () => {
    const { client, signals, audit } = await connectedClient();
    const controller = new AbortController();
    const call = client.callTool({ name: "orders_get", arguments: { id: "slow" } }, undefined, {
      signal: controller.signal,
    });
    await waitFor(() => signals.length > 0, "the handler to start");
    controller.abort("user pressed stop");
    await assert.rejects(call);
    await waitFor(() => audit.some((r) => r.event === "finished"), "the finished audit record");
    assert.equal(signals[0].aborted, true);
    assert.equal(audit.find((r) => r.event === "finished").outcome, "CANCELLED");
  });

  it("a frame function that throws: the model reads INTERNAL, the operator gets the real error", async () => {
    const logged = [];
    const logger = { warn: (message, error) => logged.push([message, String(error?.message)]) };
    const secret = "session store postgres://app:hunter2@db refused";
    for (const frame of [
      () => {
        throw new Error(secret);
      },
      async () => {
        throw new Error(secret);
      },
    ]) {
      const { client, calls } = await connectedClient({ logger }, { frame });
      const result = await client.callTool({ name: "orders_get", arguments: { id: "o-1" } });
      assert.equal(result.isError, true);
      assert.equal(errorMeta(result).code, "INTERNAL");
      assert.ok(!JSON.stringify(result).includes("hunter2"));
      assert.deepEqual(calls, []);
    }
    const told =
      'orpc-agent: the tool call of capability "orders.get" failed in an adapter; the model was only told that it failed';
    assert.deepEqual(logged, [
      [told, secret],
      [told, secret],
    ]);
    // A misspelt field of the app's frame is refused (as Python's Frame
    // refuses it), never left out: `actorId` would make the call anonymous.
    logged.length = 0;
    const misspelt = await connectedClient({ logger }, { frame: () => ({ actorId: "agent-7" }) });
    const refused = await misspelt.client.callTool({ name: "orders_get", arguments: { id: "o-1" } });
    assert.equal(errorMeta(refused).code, "INTERNAL");
    assert.deepEqual(misspelt.calls, []);
    assert.equal(logged.length, 1);
    assert.match(logged[0][1], /the frame function's frame has no field `actorId`/);
    // A capability's own error is the call's answer, not an adapter failure.
    const { client } = await connectedClient({ logger });
    logged.length = 0;
    await client.callTool({ name: "orders_get", arguments: { id: "" } }); // INVALID_INPUT
    assert.deepEqual(logged, []);
  });

  it("a frame factory's error the core cannot read, or a factory that never settles, is INTERNAL, never the SDK's text", async () => {
    const deep = (n) => (n === 0 ? 1 : { a: deep(n - 1) });
    const logged = [];
    const logger = { warn: (message, error) => logged.push([message, String(error?.message)]) };
    // Details deeper than the core reads: the app's code and message, the details left out.
    const tooDeep = await connectedClient(
      { logger },
      {
        frame: () => {
          throw new CapabilityError("CREDENTIAL_REQUIRED", "Sign in first.", { details: deep(200) });
        },
      },
    );
    const r1 = await tooDeep.client.callTool({ name: "orders_get", arguments: { id: "o-1" } });
    assert.equal(r1.isError, true);
    assert.deepEqual(errorMeta(r1), {
      code: "CREDENTIAL_REQUIRED",
      message: "Sign in first.",
      retryable: false,
      kind: errorMeta(r1).kind,
    });
    // An error whose code cannot be read: INTERNAL, the operator told.
    const unreadable = new CapabilityError("POLICY_DENIED", "no");
    Object.defineProperty(unreadable, "code", {
      get() {
        throw new Error("getter of app code, token=s3cr3t");
      },
    });
    const badCode = await connectedClient(
      { logger },
      {
        frame: () => {
          throw unreadable;
        },
      },
    );
    const r2 = await badCode.client.callTool({ name: "orders_get", arguments: { id: "o-1" } });
    assert.equal(errorMeta(r2).code, "INTERNAL");
    assert.doesNotMatch(JSON.stringify(r2), /s3cr3t/);
    // An async factory that never settles: bounded by the capability's deadline.
    logged.length = 0;
    const stuck = await connectedClient(
      { logger, defaults: { timeoutMs: 200 } },
      { frame: () => new Promise(() => {}) },
    );
    const r3 = await stuck.client.callTool({ name: "orders_get", arguments: { id: "o-1" } });
    assert.equal(errorMeta(r3).code, "INTERNAL");
    assert.deepEqual(stuck.calls, []);
    assert.match(String(logged.at(-1)?.[1]), /the frame function did not settle within 200 ms/);
  });

  it("fixes the surface to mcp whatever the app's frame says (SI-2)", async () => {
    const { client, audit } = await connectedClient(undefined, { frame: () => ({ surface: "direct" }) });
    await client.callTool({ name: "orders_get", arguments: { id: "o-1" } });
    assert.equal(audit.find((r) => r.event === "finished").surface, "mcp");
  });

  it("lists contextual capabilities only when asked", async () => {
    const { client } = await connectedClient(undefined, { includeContextual: true });
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === "orders_note"));
  });
});

describe("registerMcpTools input schemas (portable: open only where the schema says so)", () => {
  async function schemasClient() {
    const base = agentProcedure(os.$context());
    const meta = (description) => ({
      agent: { description, expose: { mcp: true }, sideEffect: "read", risk: "low" },
    });
    const echo = async ({ input }) => ({ got: Object.keys(input).sort().join(",") });
    const Out = z.strictObject({ got: z.string() });
    const router = {
      plain: base
        .meta(meta("Plain object."))
        .input(z.object({ a: z.string() }))
        .output(Out)
        .handler(echo),
      strict: base
        .meta(meta("Strict object."))
        .input(z.strictObject({ a: z.string() }))
        .output(Out)
        .handler(echo),
      loose: base
        .meta(meta("Loose object."))
        .input(z.looseObject({ a: z.string() }))
        .output(Out)
        .handler(echo),
      none: base.meta(meta("No input.")).handler(async () => "done"),
    };
    const registry = await createCapabilityRegistry(router, { approvalStore: "memory" });
    const server = new McpServer({ name: "schemas", version: "1.0.0" });
    registerMcpTools(server, registry, { frame: () => ({ actor: { id: "a-1" } }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(clientSide);
    return { client, registry };
  }

  it("lists each descriptor's input and output JSON Schema as it is, with no additionalProperties: {} added", async () => {
    const { client, registry } = await schemasClient();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const descriptor of registry.descriptors({ surface: "mcp" })) {
      const listed = byName[descriptor.toolNames.mcp];
      assert.deepEqual(listed.inputSchema, descriptor.inputSchema ?? { type: "object" }, descriptor.id);
      if (descriptor.outputSchema?.type === "object") assert.deepEqual(listed.outputSchema, descriptor.outputSchema);
      else assert.equal(listed.outputSchema, undefined, descriptor.id);
    }
    assert.equal("additionalProperties" in byName.plain.inputSchema, false);
    assert.equal(byName.strict.inputSchema.additionalProperties, false);
    assert.deepEqual(byName.loose.inputSchema.additionalProperties, {}, "z.looseObject asks for it");
    assert.equal(byName.plain.outputSchema.additionalProperties, false);
  });

  it("still leaves validation to the pipeline: an unknown key reaches the procedure's schema, structuredContent matches the output schema", async () => {
    const { client } = await schemasClient();
    const plain = await client.callTool({ name: "plain", arguments: { a: "x", extra: 1 } });
    assert.equal(plain.isError, false);
    assert.deepEqual(plain.structuredContent, { got: "a" }, "zod's object strips the unknown key");
    const loose = await client.callTool({ name: "loose", arguments: { a: "x", extra: 1 } });
    assert.deepEqual(loose.structuredContent, { got: "a,extra" });
    const strict = await client.callTool({ name: "strict", arguments: { a: "x", extra: 1 } });
    assert.equal(strict.isError, true);
    assert.equal(strict._meta["orpc-agent/error"].code, "INVALID_INPUT", "the core's error, not the SDK's");
    const none = await client.callTool({ name: "none", arguments: {} });
    assert.equal(none.structuredContent, undefined, "no object output schema: text only");
    assert.equal(none.content[0].text, "done", "a string output is its text, as in Python (the core's ok_result)");
  });
});

describe("registerMcpTools over stdio", () => {
  it("serves a real Client over stdio: list, call, approval, resume", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fileURLToPath(new URL("./mcp-stdio-server.mjs", import.meta.url))],
      env: { ...process.env, ORPC_AGENT_MCP_STDIO_SERVER: "1" },
      stderr: "inherit",
    });
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.find((t) => t.name === "orders_get").annotations.readOnlyHint, true);
      const got = await client.callTool({
        name: "orders_get",
        arguments: { id: "o-3" },
        _meta: { traceparent: TRACEPARENT },
      });
      assert.deepEqual(got.structuredContent, { id: "o-3", status: "shipped", email: "ada@example.com" });

      const first = await client.callTool({ name: "orders_refund", arguments: { id: "o-3", amount: 5 } });
      const { requestId } = first._meta["orpc-agent/approval"];
      // The server's test-only approver tool stands in for an approval UI in that process.
      const decided = await client.callTool({ name: "test_approve", arguments: { requestId } });
      assert.equal(decided.isError, undefined);
      const resumed = await client.callTool({
        name: "orders_refund",
        arguments: {},
        _meta: { [MCP_APPROVAL_ID_META]: requestId },
      });
      assert.deepEqual(resumed.structuredContent, { refunded: 5, id: "o-3" });
      const trace = await client.callTool({ name: "test_last_trace", arguments: {} });
      assert.equal(trace.structuredContent.traceparent, TRACEPARENT);
    } finally {
      await client.close();
    }
  });
});

describe("progress of a resumed call", () => {
  it("a call resumed through _meta approvalId reports its progress to the client, as an invoked one does", async () => {
    const router = {
      refund: agentProcedure(os.$context())
        .meta({
          agent: {
            description: "Refund.",
            expose: { mcp: true },
            sideEffect: "write",
            risk: "high",
            approval: { required: true },
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async ({ progress }) => {
          progress(1, 2);
          progress(2, 2);
          return { ok: true };
        }),
    };
    const registry = await createCapabilityRegistry(router, { approvalStore: "memory" });
    const server = new McpServer({ name: "orders", version: "1.0.0" });
    registerMcpTools(server, registry, { frame: () => ({ actor: { id: "ana" } }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const first = await client.callTool({ name: "refund", arguments: { id: "o-1" } });
      const id = first._meta["orpc-agent/approval"].requestId;
      await registry.approvals.approve(id, { approver: "lead" });
      const received = [];
      const resumed = await client.callTool(
        { name: "refund", arguments: { id: "o-1" }, _meta: { [MCP_APPROVAL_ID_META]: id } },
        undefined,
        { onprogress: (p) => received.push(p.progress) },
      );
      assert.equal(resumed.isError, false);
      assert.deepEqual(received, [1, 2]);
    } finally {
      await client.close();
      registry.close();
    }
  });
});

describe("_meta text with no UTF-8 form", () => {
  it("a traceparent or tracestate with a lone surrogate is dropped (the call runs); an approval id with one is not found", async () => {
    const { client, audit } = await connectedClient();
    try {
      const meta = { traceparent: "00-\ud800", tracestate: "a=\udc00" };
      const ran = await client.callTool({ name: "orders_get", arguments: { id: "o-1" }, _meta: meta });
      assert.equal(ran.isError, false, JSON.stringify(ran));
      assert.equal(audit.filter((r) => r.event === "finished").at(-1).traceparent, null);
      const named = await client.callTool({
        name: "orders_refund",
        arguments: { id: "o-1", amount: 1 },
        _meta: { [MCP_APPROVAL_ID_META]: "apr_\ud800" },
      });
      assert.equal(errorMeta(named).code, "APPROVAL_NOT_FOUND");
    } finally {
      await client.close();
    }
  });
});
