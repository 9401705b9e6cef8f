// The agent gateway over real HTTP on loopback: `@orpc/server/node`'s
// RPCHandler on node:http, `@orpc/client` with its fetch link, and `ai`'s
// mock language model driving `generateText` through remote tools.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import {
  CapabilityError,
  createAgentGateway,
  createGatewayClient,
  createRemoteAiSdkTools,
  presentBound,
} from "@orpc-agent/core";

import { bearer, startGatewayApp } from "./gateway-fixture.mjs";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const toolCallTurn = (toolName, input, toolCallId = "call-1") => ({
  content: [{ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: [],
});
const textTurn = (text) => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: "stop" },
  usage,
  warnings: [],
});
const scriptedModel = (...turns) => new MockLanguageModelV3({ doGenerate: turns });

/** Rejects with the error a promise rejects with (fails if it resolves). */
async function rejection(promise) {
  try {
    const value = await promise;
    assert.fail(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    return error;
  }
}

/** Waits (bounded) until `done()` holds. */
async function waitUntil(done, ms = 5_000) {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() > until) assert.fail("waited too long");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let app;
before(async () => {
  app = await startGatewayApp();
});
after(async () => {
  await app.close();
});
const client = (user, mount = "agent") =>
  createGatewayClient({ url: app.url(mount), headers: user ? bearer(user) : {} });

describe("agent gateway: descriptors", () => {
  it("lists the surface's descriptors as JSON; direct-only capabilities are absent", async () => {
    const out = await client("alice").descriptors({});
    assert.equal(out.format, "json");
    assert.equal(out.surface, "aiSdk");
    const ids = out.descriptors.map((d) => d.id).sort();
    assert.deepEqual(ids, ["orders.export", "orders.get", "orders.refund"]);
    assert.equal(out.descriptors.find((d) => d.id === "orders.refund").discovery, "contextual");
  });

  it("lists them as CBOR with std: keys when asked", async () => {
    const out = await client("alice").descriptors({ format: "cbor" });
    assert.equal(out.format, "cbor");
    assert.equal(out.contentType, "application/cbor");
    const bytes = Buffer.from(out.data, "base64");
    assert.equal(bytes[0], 0x80 | 3, "a CBOR array of three descriptors");
    const text = bytes.toString("latin1");
    assert.ok(text.includes("std:"), "std: metadata keys");
    assert.ok(text.includes("orders.refund") && text.includes("orders.get"));
    assert.ok(!text.includes("orders.purge"));
  });

  it("a malformed body is BAD_REQUEST", async () => {
    const error = await rejection(client("alice").descriptors({ format: "xml" }));
    assert.equal(error.code, "BAD_REQUEST");
    for (const body of [{}, { capability: 7 }, "orders.get", [1]]) {
      assert.equal((await rejection(client("alice").invoke(body))).code, "BAD_REQUEST", JSON.stringify(body));
    }
    assert.equal((await rejection(client("bob").approvals.decide({ id: "x", approve: "yes" }))).code, "BAD_REQUEST");
  });
});

describe("agent gateway: authentication stays the app's", () => {
  for (const mount of ["agent", "authedAgent"]) {
    it(`an unauthenticated caller gets nothing but an error (${mount})`, async () => {
      const before = { calls: app.calls.length, audit: app.audit.length };
      const anon = client(undefined, mount);
      for (const call of [
        () => anon.descriptors({}),
        () => anon.invoke({ capability: "orders.get", input: { id: "1" } }),
        () => anon.approvals.list({}),
        () => anon.approvals.get({ id: "x" }),
        () => anon.approvals.decide({ id: "x", approve: true }),
        () => anon.approvals.resume({ id: "x" }),
      ]) {
        const error = await rejection(call());
        assert.equal(error.code, "UNAUTHORIZED");
        assert.equal(error.status, 401);
        assert.equal(error.data, undefined, "no data leaks");
      }
      assert.equal(app.calls.length, before.calls, "nothing ran");
      assert.equal(app.audit.length, before.audit, "nothing reached the pipeline");
    });
  }

  it("the app's own routes sit next to the gateway", async () => {
    const res = await fetch(`${app.origin}/rpc/app/ping`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).json, "pong");
  });

  it("the gateway behind the app's middleware gets the actor from the middleware", async () => {
    const out = await client("alice", "authedAgent").invoke({ capability: "orders.get", input: { id: "7" } });
    assert.deepEqual(out, { status: "ok", output: { id: "7", status: "shipped" } });
    assert.equal(app.audit.at(-1).actorId, "alice");
  });
});

describe("agent gateway: the surface is the mount's", () => {
  it("a gateway cannot be created for surface direct", () => {
    assert.throws(() => createAgentGateway(app.registry, { surface: "direct", actor: () => ({ id: "x" }) }), /direct/);
    // A name that is not one of the core's surfaces is refused when the mount
    // is made (it used to index Object.prototype and run on direct).
    for (const surface of ["constructor", "__proto__", "toString", "bogus"]) {
      assert.throws(
        () => createAgentGateway(app.registry, { surface, actor: () => ({ id: "x" }) }),
        TypeError,
        surface,
      );
    }
  });

  it("a direct-only capability is unreachable through the gateway", async () => {
    const error = await rejection(client("bob").invoke({ capability: "orders.purge", input: { id: "1" } }));
    assert.ok(error instanceof Error);
    assert.equal(error.code, "NOT_FOUND");
    assert.equal(error.data.kind, "std:not-found");
    assert.ok(!app.calls.some((c) => c.tool === "purge"));
  });

  it("a forged surface field in the body changes nothing", async () => {
    const forged = client("alice");
    const purge = await rejection(forged.invoke({ capability: "orders.purge", input: { id: "1" }, surface: "direct" }));
    assert.equal(purge.code, "NOT_FOUND");
    const refund = await forged.invoke({
      capability: "orders.refund",
      input: { id: "42", amount: 5 },
      surface: "direct",
      actor: { id: "bob", roles: ["manager"] },
    });
    assert.equal(refund.status, "approval_required", "still stopped by its approval gate");
    assert.equal(refund.request.surface, "aiSdk");
    assert.equal(refund.request.actor.id, "alice", "the body's actor is ignored");
    const record = app.audit.at(-1);
    assert.equal(record.surface, "aiSdk");
    assert.equal(record.actorId, "alice");
    assert.ok(!app.calls.some((c) => c.tool === "purge" || c.tool === "refund"));
  });
});

describe("agent gateway: trace context", () => {
  it("traceparent/tracestate headers reach the audit record", async () => {
    const trace = { traceparent: TRACEPARENT, tracestate: "vendor=abc" };
    await client("alice").invoke({ capability: "orders.get", input: { id: "t" } }, { context: { trace } });
    const finished = app.audit.filter((r) => r.event === "finished").at(-1);
    assert.equal(finished.traceparent, TRACEPARENT);
    assert.equal(finished.tracestate, "vendor=abc");
  });

  it("an invalid traceparent is dropped, not fatal", async () => {
    const c = createGatewayClient({ url: app.url(), headers: { ...bearer("alice"), traceparent: "00-zz" } });
    const out = await c.invoke({ capability: "orders.get", input: { id: "u" } });
    assert.equal(out.status, "ok");
    assert.equal(app.audit.at(-1).traceparent ?? null, null);
  });
});

describe("agent gateway: approvals", () => {
  it("a contextual capability is stopped by its gate; only a permitted decider decides; the requester resumes", async () => {
    const alice = client("alice");
    const bob = client("bob");
    const first = await alice.invoke({ capability: "orders.refund", input: { id: "42", amount: 5 } });
    assert.equal(first.status, "approval_required");
    const id = first.request.id;
    assert.ok(!app.calls.some((c) => c.tool === "refund" && c.input.id === "42"));

    assert.equal((await rejection(alice.approvals.resume({ id }))).code, "APPROVAL_PENDING");
    assert.equal(
      (await rejection(alice.approvals.decide({ id, approve: true }))).code,
      "FORBIDDEN",
      "no permission, no decision",
    );
    assert.equal(
      (await rejection(bob.approvals.resume({ id }))).code,
      "APPROVAL_NOT_FOUND",
      "only the requester resumes",
    );

    assert.ok(
      (await alice.approvals.list({})).some((r) => r.id === id),
      "the requester sees their request",
    );
    assert.ok(
      (await bob.approvals.list({ status: "pending" })).some((r) => r.id === id),
      "a decider sees it",
    );
    const decided = await bob.approvals.decide({ id, approve: true, reason: "ok" });
    assert.equal(decided.status, "approved");
    assert.equal(decided.decidedBy, "bob");

    const resumed = await alice.approvals.resume({ id });
    assert.deepEqual(resumed, { status: "ok", output: { refunded: 5, id: "42" } });
    assert.equal((await rejection(alice.approvals.resume({ id }))).code, "APPROVAL_CONSUMED", "single use");
  });

  it("a requester reads only what they made on the gateway's surface; others get APPROVAL_NOT_FOUND", async () => {
    const alice = client("alice");
    // The same actor id, but made on surface direct (the app's own UI, say):
    // not alice's request as far as an aiSdk gateway is concerned, as for resume.
    const elsewhere = await app.registry.invoke(
      "orders.refund",
      { id: "77", amount: 31 },
      { surface: "direct", actor: { id: "alice" } },
    );
    assert.equal(elsewhere.status, "approval_required");
    const otherId = elsewhere.request.id;
    assert.equal((await rejection(alice.approvals.get({ id: otherId }))).code, "APPROVAL_NOT_FOUND");
    assert.ok(!(await alice.approvals.list({})).some((r) => r.id === otherId), "not listed either");
    assert.equal((await rejection(alice.approvals.resume({ id: otherId }))).code, "APPROVAL_NOT_FOUND");

    // Made through this gateway by bob: alice (no canDecide permission) sees nothing.
    const bobs = await client("bob").invoke({ capability: "orders.refund", input: { id: "78", amount: 32 } });
    assert.equal((await rejection(alice.approvals.get({ id: bobs.request.id }))).code, "APPROVAL_NOT_FOUND");
    assert.ok(!(await alice.approvals.list({})).some((r) => r.id === bobs.request.id));
    // Alice's own request through the gateway is hers.
    const own = await alice.invoke({ capability: "orders.refund", input: { id: "79", amount: 33 } });
    assert.equal((await alice.approvals.get({ id: own.request.id })).id, own.request.id);
  });

  it("another actor's 100+ requests hide none of the caller's own; a decider still gets a full page", async () => {
    // A fresh store: only the requests made here.
    const local = await startGatewayApp();
    try {
      const as = (user) => createGatewayClient({ url: local.url(), headers: bearer(user) });
      // 120 pending requests of another actor on the gateway's surface, first.
      for (let i = 0; i < 120; i++) {
        const out = await local.registry.invoke(
          "orders.refund",
          { id: `m-${i}`, amount: 1 },
          { surface: "aiSdk", actor: { id: "mallory" } },
        );
        assert.equal(out.status, "approval_required");
      }
      // Alice's own request through the gateway, then one of hers on another surface (not hers here).
      const own = await as("alice").invoke({ capability: "orders.refund", input: { id: "a-1", amount: 2 } });
      await local.registry.invoke(
        "orders.refund",
        { id: "a-2", amount: 3 },
        { surface: "direct", actor: { id: "alice" } },
      );

      for (const filter of [{}, { status: "pending" }, { capabilityId: "orders.refund" }, { limit: 1 }]) {
        const listed = await as("alice").approvals.list(filter);
        assert.deepEqual(
          listed.map((r) => r.id),
          [own.request.id],
          `alice's list ${JSON.stringify(filter)}`,
        );
      }
      // Bob may decide every request: a full page of them, in creation order.
      const page = await as("bob").approvals.list({ limit: 50 });
      assert.equal(page.length, 50);
      assert.deepEqual(
        page.map((r) => r.input.id),
        Array.from({ length: 50 }, (_, i) => `m-${i}`),
      );
      const all = await as("bob").approvals.list({ limit: 1000 });
      assert.equal(all.length, 122, "every request, alice's on direct included (bob may decide it)");
      assert.ok(all.some((r) => r.id === own.request.id));
    } finally {
      await local.close();
    }
  });

  it("the caller's own requests come from an exact store query: her requests on other surfaces hide none", async () => {
    const local = await startGatewayApp();
    try {
      const as = (user) => createGatewayClient({ url: local.url(), headers: bearer(user) });
      // More of alice's requests on direct than ten pages of one (the scan
      // bound of what canDecide lets a caller see) hold, first.
      for (let i = 0; i < 12; i++) {
        await local.registry.invoke(
          "orders.refund",
          { id: `d-${i}`, amount: 1 },
          { surface: "direct", actor: { id: "alice" } },
        );
      }
      const own = await as("alice").invoke({ capability: "orders.refund", input: { id: "a-1", amount: 2 } });
      for (const filter of [{ limit: 1 }, { limit: 1, status: "pending" }, {}]) {
        assert.deepEqual(
          (await as("alice").approvals.list(filter)).map((r) => r.id),
          [own.request.id],
          `alice's list ${JSON.stringify(filter)}`,
        );
      }
      // The store filter itself: exactly her requests on that surface.
      const onDirect = await local.registry.approvals.list({ actorId: "alice", surface: "direct", limit: 100 });
      assert.equal(onDirect.length, 12);
      assert.ok(onDirect.every((r) => r.surface === "direct"));
      await assert.rejects(local.registry.approvals.list({ surface: "constructor" }), (e) => {
        assert.equal(e.code, "INVALID_INPUT");
        assert.match(e.message, /surface/);
        return true;
      });
    } finally {
      await local.close();
    }
  });

  it("a throwing or missing canDecide refuses", async () => {
    for (const canDecide of [
      undefined,
      () => {
        throw new Error("boom");
      },
      () => "yes",
    ]) {
      const local = await startGatewayApp({ gatewayOptions: { canDecide } });
      try {
        const c = createGatewayClient({ url: local.url(), headers: bearer("bob") });
        const out = await c.invoke({ capability: "orders.refund", input: { id: "1", amount: 1 } });
        const error = await rejection(c.approvals.decide({ id: out.request.id, approve: true }));
        assert.equal(error.code, "FORBIDDEN");
        assert.equal((await local.registry.approvals.get(out.request.id)).status, "pending");
      } finally {
        await local.close();
      }
    }
  });
});

describe("remote AI SDK tools", () => {
  it("the unbound list leaves the contextual capability out; a mock-model tool loop calls the gateway", async () => {
    const trace = { traceparent: TRACEPARENT };
    const tools = await createRemoteAiSdkTools({
      url: app.url(),
      headers: bearer("alice"),
      frame: { actorId: "alice", trace },
    });
    assert.deepEqual(Object.keys(tools).sort(), ["orders_export", "orders_get"]);
    const result = await generateText({
      model: scriptedModel(toolCallTurn("orders_get", { id: "9" }), textTurn("Order 9 has shipped.")),
      tools,
      stopWhen: stepCountIs(3),
      prompt: "Where is order 9?",
    });
    assert.equal(result.text, "Order 9 has shipped.");
    const toolResult = result.steps[0].content.find((p) => p.type === "tool-result");
    assert.deepEqual(toolResult.output, { id: "9", status: "shipped" });
    const record = app.audit.filter((r) => r.event === "finished").at(-1);
    assert.equal(record.capabilityId, "orders.get");
    assert.equal(record.surface, "aiSdk");
    assert.equal(record.traceparent, TRACEPARENT);
  });

  it("a remote tool's approval hook never runs the call: a step ai does not execute (finish reason length) runs nothing", async () => {
    const tools = await createRemoteAiSdkTools({
      url: app.url(),
      headers: bearer("alice"),
      frame: { actorId: "alice" },
    });
    const ran = () => app.calls.filter((c) => c.tool === "get" && c.input.id === "77").length;
    const cut = {
      ...toolCallTurn("orders_get", { id: "77" }, "call-77"),
      finishReason: { unified: "length", raw: "length" },
    };
    const first = await generateText({ model: scriptedModel(cut), tools, prompt: "Where is 77?" });
    assert.equal(first.toolResults.length, 0, "ai executed no tool");
    assert.equal(ran(), 0, "held at the gateway before its handler");
    const second = await generateText({
      model: scriptedModel(toolCallTurn("orders_get", { id: "77" }, "call-78"), textTurn("Shipped.")),
      tools,
      stopWhen: stepCountIs(3),
      prompt: "Where is 77?",
    });
    assert.equal(second.text, "Shipped.");
    assert.equal(ran(), 1, "executed: it ran once");
  });

  it("a held call is released only by the caller who asked, once", async () => {
    const held = await client("alice").invokeHeld({ capability: "orders.get", input: { id: "78" } });
    assert.equal(held.status, "held");
    const notHers = await rejection(client("bob").release({ holdId: held.holdId, run: true }));
    assert.equal(notHers.code, "NOT_FOUND");
    const ended = await rejection(client("alice").release({ holdId: held.holdId, run: false }));
    assert.equal(ended.code, "CANCELLED");
    const again = await rejection(client("alice").release({ holdId: held.holdId, run: true }));
    assert.equal(again.code, "NOT_FOUND");
    assert.ok(!app.calls.some((c) => c.tool === "get" && c.input.id === "78"), "never ran");
  });

  it("a held call released after its deadline answers its TIMEOUT (never NOT_FOUND), and never ran", async () => {
    const local = await startGatewayApp({ registryOptions: { defaults: { timeoutMs: 300 } } });
    try {
      const tools = await createRemoteAiSdkTools({
        url: local.url(),
        headers: bearer("alice"),
        frame: { actorId: "alice" },
      });
      const late = { toolCallId: "call-late", messages: [] };
      assert.equal(await tools.orders_get.needsApproval({ id: "80" }, late), false, "passed the gate, held");
      await new Promise((resolve) => setTimeout(resolve, 600)); // past its deadline (the core judges by the time)
      const error = await rejection(tools.orders_get.execute({ id: "80" }, late));
      assert.equal(error.code, "TIMEOUT", "what became of it");
      assert.ok(!local.calls.some((c) => c.tool === "get"), "never ran");
    } finally {
      await local.close();
    }
  });

  it("an abort of a remote tool's signal ends its held call at the gateway (CANCELLED), not at its deadline", async () => {
    const local = await startGatewayApp();
    try {
      const abort = new AbortController();
      const tools = await createRemoteAiSdkTools({
        url: local.url(),
        headers: bearer("alice"),
        frame: { actorId: "alice", signal: abort.signal },
      });
      assert.equal(
        await tools.orders_get.needsApproval({ id: "81" }, { toolCallId: "call-gone", messages: [] }),
        false,
      );
      assert.equal(local.registry.inFlight(), 1, "held at the gateway");
      abort.abort();
      await waitUntil(() => local.registry.inFlight() === 0); // its deadline is 30 s away
      assert.deepEqual(
        local.audit.filter((r) => r.event === "finished").map((r) => r.outcome),
        ["CANCELLED"],
      );
      assert.deepEqual(local.calls, [], "never ran");
    } finally {
      await local.close();
    }
  });

  it("a remote capability error is a CapabilityError for the tool", async () => {
    const tools = await createRemoteAiSdkTools({ url: app.url(), headers: bearer("alice") });
    const error = await rejection(tools.orders_get.execute({ id: "" }, { toolCallId: "x", messages: [] }));
    assert.ok(error instanceof CapabilityError);
    assert.equal(error.code, "INVALID_INPUT");
  });

  it("a bound presentation shows the contextual capability, fixes its arguments, and goes through approval", async () => {
    const alice = client("alice");
    const bound = await presentBound({
      client: alice,
      capability: "orders.refund",
      fixed: { id: "42" },
      toolName: "refund_this_order",
      frame: { actorId: "alice", sessionId: "s1" },
    });
    assert.deepEqual(Object.keys(bound.tools), ["refund_this_order"]);
    assert.equal(bound.descriptor.discovery, "contextual");

    // The model may try another order: the fixed id wins.
    const model = scriptedModel(
      toolCallTurn("refund_this_order", { id: "99", amount: 3 }, "call-r"),
      textTurn("Refunded."),
    );
    const prompt = [{ role: "user", content: "Refund 3 on this order." }];
    const turn1 = await generateText({ model, tools: bound.tools, stopWhen: stepCountIs(3), messages: prompt });
    const approval = turn1.content.find((p) => p.type === "tool-approval-request");
    assert.ok(approval, "ai asks for approval: the gateway's gate fired");
    assert.ok(!app.calls.some((c) => c.tool === "refund" && c.input.amount === 3), "nothing ran");
    const pending = (await client("bob").approvals.list({ status: "pending", capabilityId: "orders.refund" })).find(
      (r) => r.input?.amount === 3,
    );
    assert.deepEqual(pending.input, { id: "42", amount: 3 }, "the full, merged input reached the gateway");
    await client("bob").approvals.decide({ id: pending.id, approve: true });

    // The user approves in the chat; alice may not decide, so the manager's decision is the one that counts.
    // The app builds its tools again for the next request (approval ids outlive a tool set).
    const again = await presentBound({
      client: alice,
      capability: "orders.refund",
      fixed: { id: "42" },
      toolName: "refund_this_order",
      frame: { actorId: "alice", sessionId: "s1" },
    });
    const turn2 = await generateText({
      model,
      tools: again.tools,
      stopWhen: stepCountIs(3),
      messages: [
        ...prompt,
        ...turn1.response.messages,
        {
          role: "tool",
          content: [{ type: "tool-approval-response", approvalId: approval.approvalId, approved: true }],
        },
      ],
    });
    assert.equal(turn2.text, "Refunded.");
    assert.deepEqual(
      app.calls.filter((c) => c.tool === "refund" && c.input.amount === 3).map((c) => c.input),
      [{ id: "42", amount: 3 }],
    );
  });

  it("a bound action run by a UI: stopped by the gate until a manager approves", async () => {
    const bound = await presentBound({
      url: app.url(),
      headers: bearer("alice"),
      capability: "orders_refund",
      fixed: { id: "43" },
    });
    // What the model reads of it is the core's text (`gateway::bound_description`).
    const [tool] = Object.values(bound.tools);
    assert.equal(
      tool.description,
      `${bound.descriptor.description} (Bound to {"id":"43"}; those arguments are fixed.)`,
    );
    const out = await bound.run({ amount: 2, id: "other" });
    assert.equal(out.status, "approval_required");
    assert.deepEqual(out.request.input, { id: "43", amount: 2 });
    assert.equal((await rejection(bound.resume(out.request.id))).code, "APPROVAL_PENDING");
    await client("bob").approvals.decide({ id: out.request.id, approve: true });
    assert.deepEqual(await bound.resume(out.request.id), { status: "ok", output: { refunded: 2, id: "43" } });
  });

  it("a bound presentation resumes only its capability's requests; a resume may name the tool", async () => {
    const alice = client("alice");
    const first = await alice.invoke({ capability: "orders.refund", input: { id: "44", amount: 4 } });
    const id = first.request.id;
    await client("bob").approvals.decide({ id, approve: true });
    // A presentation of another capability cannot run alice's approved refund.
    const reader = await presentBound({
      url: app.url(),
      headers: bearer("alice"),
      capability: "orders.get",
      fixed: {},
    });
    assert.equal((await rejection(reader.resume(id))).code, "APPROVAL_NOT_FOUND");
    assert.equal(
      (await rejection(alice.approvals.resume({ id, throughTool: "orders.get" }))).code,
      "APPROVAL_NOT_FOUND",
    );
    assert.equal((await rejection(alice.approvals.resume({ id, throughTool: 5 }))).code, "BAD_REQUEST");
    assert.ok(!app.calls.some((c) => c.tool === "refund" && c.input.id === "44"), "nothing ran");
    assert.equal((await client("bob").approvals.get({ id })).status, "approved", "nothing consumed");
    assert.deepEqual(await alice.approvals.resume({ id, throughTool: "orders_refund" }), {
      status: "ok",
      output: { refunded: 4, id: "44" },
    });
  });

  it("a bound presentation still validates the full input", async () => {
    const bound = await presentBound({
      url: app.url(),
      headers: bearer("alice"),
      capability: "orders.refund",
      fixed: { id: "44" },
    });
    const error = await rejection(bound.run({ amount: -1 }));
    assert.equal(error.code, "INVALID_INPUT");
    assert.equal(
      (
        await rejection(
          presentBound({ url: app.url(), headers: bearer("alice"), capability: "orders.purge", fixed: {} }),
        )
      ).code,
      "NOT_FOUND",
    );
    // The core's one NOT_FOUND text (SI-8): the name asked for is not echoed.
    const missing = await rejection(
      presentBound({ url: app.url(), headers: bearer("alice"), capability: "orders.<b>purge</b>", fixed: {} }),
    );
    assert.equal(missing.code, "NOT_FOUND");
    assert.ok(!missing.message.includes("<b>"), missing.message);
  });
});

describe("agent gateway: invokeStream", () => {
  it("streams the handler's accepted progress (with std: CBOR metadata), then the outcome", async () => {
    const events = [];
    for await (const event of await client("alice").invokeStream({ capability: "orders.export", input: { id: "5" } })) {
      events.push(event);
    }
    const progress = events.filter((e) => e.type === "progress");
    assert.deepEqual(
      progress.map(({ done, total }) => ({ done, total })),
      [
        { done: 1, total: 3 },
        { done: 2, total: 3 },
        { done: 3, total: 3 },
      ],
    );
    const meta = Buffer.from(progress[0].metadata, "base64");
    assert.deepEqual(
      meta,
      Buffer.concat([
        Buffer.from([0xa2, 0x6c]),
        Buffer.from("std:progress"),
        Buffer.from([0x01, 0x72]),
        Buffer.from("std:progress-total"),
        Buffer.from([0x03]),
      ]),
    );
    assert.deepEqual(events.at(-1), {
      type: "result",
      status: "ok",
      output: { id: "5", answers: [true, true, false, true] },
    });
  });

  it("an approval gate ends the stream with approval_required; an error ends it with the error", async () => {
    const events = [];
    for await (const e of await client("alice").invokeStream({
      capability: "orders.refund",
      input: { id: "8", amount: 1 },
    }))
      events.push(e);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, "result");
    assert.equal(events[0].status, "approval_required");
    const error = await rejection(
      (async () => {
        for await (const _ of await client("alice").invokeStream({ capability: "orders.purge", input: { id: "1" } }));
      })(),
    );
    assert.equal(error.code, "NOT_FOUND");
    const anon = await rejection(
      (async () => {
        for await (const _ of await client(undefined).invokeStream({ capability: "orders.get", input: { id: "1" } }));
      })(),
    );
    assert.equal(anon.code, "UNAUTHORIZED");
  });
});

describe("gateway callers with hostile ids", () => {
  it("an actor id with a lone surrogate is refused on every procedure, never read as another caller's (U+FFFD)", async () => {
    const local = await startGatewayApp({ gatewayOptions: { actor: () => ({ id: "ann\ud800" }) } });
    try {
      const made = await local.registry.invoke(
        "orders.refund",
        { id: "9", amount: 1 },
        { surface: "aiSdk", actor: { id: "ann\ufffd" } },
      );
      assert.equal(made.status, "approval_required");
      const gw = createGatewayClient({ url: local.url() });
      for (const call of [
        () => gw.approvals.get({ id: made.request.id }),
        () => gw.approvals.list({}),
        () => gw.invoke({ capability: "orders.get", input: { id: "1" } }),
      ]) {
        const error = await rejection(call());
        assert.equal(error.code, "INVALID_INPUT");
      }
    } finally {
      await local.close();
    }
  });

  it("a decision reason with a lone surrogate is the caller's BAD_REQUEST, never a 500", async () => {
    const local = await startGatewayApp({ gatewayOptions: { actor: () => ({ id: "ann" }) } });
    try {
      const made = await local.registry.invoke(
        "orders.refund",
        { id: "9", amount: 1 },
        { surface: "aiSdk", actor: { id: "ann" } },
      );
      const gw = createGatewayClient({ url: local.url() });
      const error = await rejection(gw.approvals.decide({ id: made.request.id, approve: false, reason: "no\ud800" }));
      assert.equal(error.code, "BAD_REQUEST");
      assert.equal((await local.registry.approvals.get(made.request.id)).status, "pending");
    } finally {
      await local.close();
    }
  });
});
