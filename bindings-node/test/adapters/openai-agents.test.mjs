// The OpenAI Agents SDK adapter, driven by the SDK's own offline model
// (`@openai/agents-core/testing` ScriptedModel, an implementation of its
// Model interface): a real Runner tool loop, no network. The same cases as
// Python's tests/test_openai_agents.py.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";

import { Agent, RunContext, Runner, RunState, ToolCallError } from "@openai/agents-core";
import { ScriptedModel, assistantMessage, functionCall } from "@openai/agents-core/testing";
import { os } from "@orpc/server";
import * as z from "zod";

import {
  CapabilityError,
  OpenAiAgentsPrincipalRequiredError,
  agentProcedure,
  createCapabilityRegistry,
  governedAgentTools,
} from "@orpc-agent/core";

import { NO_JSON_OUTPUTS, noJsonOutputFixture } from "./orders-fixture.mjs";

const EMAIL = "ana@example.com";
const CARD = "4111111111111111";
/** The caller, as the app's authenticated transport gives it; the adapter fixes the surface (aiSdk). */
const ANA = { actor: { id: "ana" }, sessionId: "conv-1" };
const runner = new Runner({ tracingDisabled: true });

/** A read whose output is redacted, a destructive call a policy refuses, a write behind approval. */
async function build(calls, { audit = [], approvalStore = "memory", ...options } = {}) {
  const base = agentProcedure(os.$context());
  const count = (id) => calls.set(id, (calls.get(id) ?? 0) + 1);
  const router = {
    orders: {
      get: base
        .meta({
          agent: {
            description: "Find the customer's order by email.",
            expose: { aiSdk: true },
            sideEffect: "read",
            risk: "low",
            redact: { output: (o) => ({ ...o, email: "a***@example.com", card: `****${o.card.slice(-4)}` }) },
          },
        })
        .input(z.object({ email: z.string() }))
        .output(z.object({ id: z.string(), email: z.string(), card: z.string() }))
        .handler(async ({ input }) => {
          count("orders.get");
          return { id: "o-1", email: input.email, card: CARD };
        }),
      purge: base
        .meta({
          agent: {
            description: "Delete every order.",
            expose: { aiSdk: true },
            sideEffect: "destructive",
            risk: "critical",
            policies: [{ name: "no-purge", decision: "deny", reason: "Purging is disabled; archive instead." }],
          },
        })
        .input(z.object({ email: z.string() }))
        .handler(async () => {
          count("orders.purge");
          return null;
        }),
      refund: base
        .meta({
          agent: {
            description: "Refund an order.",
            expose: { aiSdk: true, direct: true },
            sideEffect: "write",
            risk: "high",
            approval: { required: true, type: "refund" },
          },
        })
        .input(z.object({ order: z.string(), cents: z.number().int() }))
        .handler(async ({ input }) => {
          count("orders.refund");
          return { refunded: input.order, cents: input.cents };
        }),
      internal: base
        .meta({ agent: { description: "Not for models.", expose: { direct: true }, sideEffect: "read", risk: "low" } })
        .handler(async () => "direct only"),
    },
  };
  return createCapabilityRegistry(router, {
    approvalStore,
    audit: { subscriber: (record) => audit.push(record), payloads: true },
    ...options,
  });
}

/** What the model was sent of each tool call, by call id, at that turn. */
function outputs(model, turn) {
  const sent = {};
  for (const item of model.calls[turn].request.input) {
    if (item.type === "function_call_result") sent[item.callId] = item.output.text ?? item.output;
  }
  return sent;
}

const finished = (audit) =>
  audit.filter((r) => r.event === "finished").map((r) => [r.capabilityId, r.outcome, r.resumed]);

const firstTurn = () => [
  functionCall("orders_get", { email: EMAIL }, { callId: "call_get" }),
  functionCall("orders_purge", { email: EMAIL }, { callId: "call_purge" }),
  functionCall("orders_refund", { order: "o-1", cents: 500 }, { callId: "call_refund" }),
];

describe("OpenAI Agents SDK adapter", () => {
  it("lists the aiSdk capabilities as function tools with the descriptor's schema", async () => {
    const governed = governedAgentTools(await build(new Map()), ANA);
    const byName = Object.fromEntries(governed.tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName).sort(), ["orders_get", "orders_purge", "orders_refund"]);
    assert.equal(byName.orders_get.description, "Find the customer's order by email.");
    assert.deepEqual(byName.orders_get.parameters.required, ["email"]);
    assert.equal(byName.orders_get.strict, false);
  });

  it("a read, a refusal, a gated call approved and resumed once across processes, and a replay refused", async () => {
    const calls = new Map();
    const audit = [];
    const approvalStore = { sqlite: join(mkdtempSync(join(tmpdir(), "oa-")), "approvals.db") };
    const ids = new Map(); // where request ids wait: shared by both "processes"
    const model = new ScriptedModel([firstTurn(), [assistantMessage("Refunded.")], [assistantMessage("Again?")]]);

    const registry = await build(calls, { audit, approvalStore });
    const agent = new Agent({
      name: "support",
      model,
      tools: governedAgentTools(registry, ANA, { approvalIds: ids }).tools,
    });
    const result = await runner.run(agent, "Refund Ana's order.");
    assert.deepEqual(
      result.interruptions.map((i) => i.name),
      ["orders_refund"],
    );
    assert.deepEqual(Object.fromEntries(calls), { "orders.get": 1 });
    const snapshot = result.state.toString();

    // Another process: a new registry on the same store, new tools, the state read back.
    const registry2 = await build(calls, { audit, approvalStore });
    const governed2 = governedAgentTools(registry2, ANA, { approvalIds: ids });
    const agent2 = new Agent({ name: "support", model, tools: governed2.tools });
    const state = await RunState.fromString(agent2, snapshot);
    const [item] = state.getInterruptions();
    const request = await governed2.request(item);
    assert.equal(request.status, "pending");
    assert.equal(request.type, "refund");
    assert.equal(request.capabilityId, "orders.refund");
    const decided = await governed2.approve(state, item, { approver: "lead" });
    assert.equal(decided.status, "approved");
    assert.equal(decided.decidedBy, "lead");
    const done = await runner.run(agent2, state);
    assert.equal(done.finalOutput, "Refunded.");
    assert.equal(calls.get("orders.refund"), 1);

    const sent = outputs(model, 1);
    // Redaction: the model reads the redacted output only.
    assert.deepEqual(JSON.parse(sent.call_get), { id: "o-1", email: "a***@example.com", card: "****1111" });
    assert.match(sent.call_purge, /^POLICY_DENIED: /);
    assert.match(sent.call_purge, /Purging is disabled; archive instead\./);
    assert.deepEqual(JSON.parse(sent.call_refund), { refunded: "o-1", cents: 500 });
    assert.equal((await registry2.approvals.get(request.id)).status, "consumed");

    // A replay: the snapshot of the interruption, approved again.
    const replay = await RunState.fromString(agent2, snapshot);
    const [again] = replay.getInterruptions();
    await assert.rejects(governed2.approve(replay, again, { approver: "lead" }), (e) => e instanceof CapabilityError);
    replay.approve(again); // the SDK's own approval: the core refuses the second run
    const replayed = await runner.run(agent2, replay);
    assert.equal(replayed.finalOutput, "Again?");
    assert.match(outputs(model, 2).call_refund, /^APPROVAL_CONSUMED: /);
    assert.deepEqual(Object.fromEntries(calls), { "orders.get": 1, "orders.refund": 1 }); // nothing ran twice

    // Audit: on aiSdk, as ana, the tool call id as request id; no raw value anywhere.
    const records = finished(audit);
    assert.deepEqual(
      records.slice(0, 3).sort(),
      [
        ["orders.get", "ok", false],
        ["orders.purge", "POLICY_DENIED", false],
        ["orders.refund", "approval_required", false],
      ].sort(),
    );
    assert.deepEqual(records.slice(3), [
      ["orders.refund", "ok", true],
      ["orders.refund", "APPROVAL_CONSUMED", true],
    ]);
    const done_ = audit.filter((r) => r.event === "finished");
    assert.deepEqual([...new Set(done_.map((r) => `${r.surface}/${r.actorId}/${r.sessionId}`))], ["aiSdk/ana/conv-1"]);
    assert.deepEqual([...new Set(done_.map((r) => r.requestId))].sort(), ["call_get", "call_purge", "call_refund"]);
    const text = JSON.stringify(audit);
    assert.ok(!text.includes(EMAIL) && !text.includes(CARD));
  });

  it("a rejection is the core's, and the model reads the core's answer", async () => {
    const calls = new Map();
    const audit = [];
    const governed = governedAgentTools(await build(calls, { audit }), ANA);
    const model = new ScriptedModel([
      [functionCall("orders_refund", { order: "o-1", cents: 500 }, { callId: "call_r" })],
      [assistantMessage("It was not approved.")],
    ]);
    const agent = new Agent({ name: "support", model, tools: governed.tools });
    const { state } = await runner.run(agent, "Refund.");
    const [item] = state.getInterruptions();
    const decided = await governed.reject(state, item, { approver: "lead", reason: "Not this one." });
    assert.equal(decided.status, "rejected");
    const done = await runner.run(agent, state);
    assert.equal(done.finalOutput, "It was not approved.");
    assert.equal(calls.get("orders.refund"), undefined);
    assert.match(outputs(model, 1).call_r, /^APPROVAL_REJECTED: /);
    assert.deepEqual(finished(audit), [
      ["orders.refund", "approval_required", false],
      ["orders.refund", "APPROVAL_REJECTED", true],
    ]);
  });

  it("the SDK's approval is recorded as the core's decision, which the core may refuse", async () => {
    const calls = new Map();
    const registry = await build(calls, { approverMustDiffer: true });
    const governed = governedAgentTools(registry, ANA);
    const model = new ScriptedModel([
      [functionCall("orders_refund", { order: "o-1", cents: 500 }, { callId: "call_r" })],
      [assistantMessage("Waiting.")],
    ]);
    const agent = new Agent({ name: "support", model, tools: governed.tools });
    const { state } = await runner.run(agent, "Refund.");
    const [item] = state.getInterruptions();
    await assert.rejects(governed.approve(state, item, { approver: "ana" }), (e) => e instanceof CapabilityError);
    state.approve(item); // recorded with the frame's actor (ana): refused by the core
    await runner.run(agent, state);
    assert.equal(calls.get("orders.refund"), undefined);
    assert.match(outputs(model, 1).call_r, /^APPROVAL_PENDING: /);
    assert.equal((await registry.approvals.get(governed.requestId(item))).status, "pending");
  });

  it("a gated call needs a caller the approval can be kept for", async () => {
    const calls = new Map();
    const registry = await build(calls);
    const governed = governedAgentTools(registry, {}); // no actor id, no session
    const model = new ScriptedModel([
      [functionCall("orders_refund", { order: "o-1", cents: 5 }, { callId: "call_r" })],
    ]);
    await assert.rejects(
      runner.run(new Agent({ name: "support", model, tools: governed.tools }), "Refund."),
      // The SDK wraps what a tool's needsApproval throws (ToolCallError.error).
      (e) => e instanceof ToolCallError && e.error instanceof OpenAiAgentsPrincipalRequiredError,
    );
    assert.equal(calls.get("orders.refund"), undefined);
    assert.deepEqual(await registry.approvals.list({}), []); // refused before storing a request
  });

  it("an output with no JSON form: the model reads INTERNAL, the operator gets why", async () => {
    for (const { output, logged: told } of NO_JSON_OUTPUTS) {
      const { registry, logged } = await noJsonOutputFixture(output);
      const governed = governedAgentTools(registry, ANA);
      const model = new ScriptedModel([
        [functionCall("count", {}, { callId: "call_n" })],
        [assistantMessage("Sorry.")],
      ]);
      await runner.run(new Agent({ name: "support", model, tools: governed.tools }), "Count.");
      assert.match(outputs(model, 1).call_n, /^INTERNAL: /);
      assert.deepEqual(logged, told);
    }
  });

  it("invalid arguments get the core's validation text", async () => {
    const governed = governedAgentTools(await build(new Map()), ANA);
    const model = new ScriptedModel([
      [functionCall("orders_get", { email: 3 }, { callId: "call_bad" })],
      [assistantMessage("Sorry.")],
    ]);
    await runner.run(new Agent({ name: "support", model, tools: governed.tools }), "Find.");
    const text = outputs(model, 1).call_bad;
    assert.match(text, /^INVALID_INPUT: /);
    assert.match(text, /email/);
  });

  it("an undecided call asked again keeps its one request", async () => {
    const calls = new Map();
    const registry = await build(calls);
    const governed = governedAgentTools(registry, ANA);
    const call = () => functionCall("orders_refund", { order: "o-1", cents: 500 }, { callId: "call_r" });
    const model = new ScriptedModel([[call()], [call()]]);
    const agent = new Agent({ name: "support", model, tools: governed.tools });
    const { state } = await runner.run(agent, "Refund.");
    const again = await runner.run(agent, state); // run again without a decision
    assert.deepEqual(
      again.interruptions.map((i) => i.name),
      ["orders_refund"],
    );
    const fresh = await runner.run(agent, "Refund."); // a new run presenting the same call
    assert.deepEqual(
      fresh.interruptions.map((i) => i.name),
      ["orders_refund"],
    );
    const pending = await registry.approvals.list({ status: "pending" });
    assert.deepEqual(
      pending.map((r) => r.capabilityId),
      ["orders.refund"],
    );
    assert.equal(calls.get("orders.refund"), undefined);
    // A provider that reuses the call id for another tool: that call is not
    // the kept one (another capability), so it is asked of the core afresh.
    const reused = new ScriptedModel([
      [functionCall("orders_get", { email: EMAIL }, { callId: "call_r" })],
      [assistantMessage("Found.")],
    ]);
    const read = await runner.run(new Agent({ name: "support", model: reused, tools: governed.tools }), "Find.");
    assert.deepEqual(read.interruptions, []);
    assert.equal(calls.get("orders.get"), 1);
    // An interruption of another tool under that call id does not name the
    // refund's request: nothing to show, nothing approved.
    const other = { name: "orders_get", rawItem: { callId: "call_r" } };
    assert.equal(await governed.request(other), null);
    const untouched = { approve: () => assert.fail("the run state was approved") };
    await assert.rejects(governed.approve(untouched, other, { approver: "lead" }), { code: "APPROVAL_NOT_FOUND" });
    assert.equal((await registry.approvals.list({ status: "pending" })).length, 1);
  });
  it("a call id reused with other arguments is another call: what the person approves is what runs", async () => {
    const calls = new Map();
    const registry = await build(calls);
    const governed = governedAgentTools(registry, ANA);
    const refund = (order) => functionCall("orders_refund", { order, cents: 500 }, { callId: "call_0" });
    const support = (model) => new Agent({ name: "support", model, tools: governed.tools });
    const first = await runner.run(support(new ScriptedModel([[refund("o-1")]])), "Refund o-1.");
    assert.equal(first.interruptions.length, 1);
    // A later conversation turn: the provider reuses the call id for another refund.
    const model = new ScriptedModel([[refund("o-2")], [assistantMessage("Done.")]]);
    const second = await runner.run(support(model), "Refund o-2.");
    const [item] = second.interruptions;
    const request = await governed.request(item);
    assert.deepEqual(request?.input, { order: "o-2", cents: 500 }, "the interruption names its own call's request");
    // Approved with the SDK's own API, by a person shown o-2's arguments.
    second.state.approve(item);
    const done = await runner.run(support(model), second.state);
    assert.equal(done.finalOutput, "Done.");
    assert.equal(outputs(model, 1).call_0, JSON.stringify({ refunded: "o-2", cents: 500 }), "as Python writes it");
    assert.equal(calls.get("orders.refund"), 1);
    const pending = await registry.approvals.list({ status: "pending" });
    assert.deepEqual(
      pending.map((r) => r.input),
      [{ order: "o-1", cents: 500 }],
      "the first call's request still waits, unrun",
    );
  });
  it("a call the gate let through but the SDK never called never runs, and never answers a later call under its id", async () => {
    const calls = new Map();
    const audit = [];
    const registry = await build(calls, { audit });
    const governed = governedAgentTools(registry, ANA);
    const tool = (name) => governed.tools.find((t) => t.name === name);
    const context = new RunContext();
    // A read that passed the gate, whose run ended before the SDK called the tool.
    assert.equal(await tool("orders_get").needsApproval(context, { email: EMAIL }, "call_0"), false);
    assert.equal(calls.get("orders.get"), undefined, "held before its handler: nothing ran");
    // Later the provider reuses the call id for a refund, which is approved and called.
    const refund = { order: "o-1", cents: 500 };
    assert.equal(await tool("orders_refund").needsApproval(context, refund, "call_0"), true);
    const text = await tool("orders_refund").invoke(context, JSON.stringify(refund), {
      toolCall: { type: "function_call", callId: "call_0", name: "orders_refund", arguments: JSON.stringify(refund) },
    });
    assert.equal(text, JSON.stringify({ refunded: "o-1", cents: 500 }), "the refund's own outcome, not the read's");
    assert.equal(calls.get("orders.refund"), 1);
    assert.equal(calls.get("orders.get"), undefined, "the read nobody called never ran");
    assert.deepEqual(
      audit.filter((r) => r.event === "finished" && r.capabilityId === "orders.get").map((r) => r.outcome),
      ["CANCELLED"],
    );
    assert.equal(registry.inFlight(), 0);
  });
  it("a kept request gone from the store is never asked again (a memory store drops consumed requests after a day)", async () => {
    const calls = new Map();
    const registry = await build(calls);
    const ids = new Map();
    const refund = governedAgentTools(registry, ANA, { approvalIds: ids }).tools.find(
      (t) => t.name === "orders_refund",
    );
    const context = new RunContext();
    const args = { order: "o-1", cents: 5 };
    assert.equal(await refund.needsApproval(context, args, "call_9"), true);
    for (const key of ids.keys()) ids.set(key, `apr_${"0".repeat(32)}`); // the request it named is gone
    assert.equal(await refund.needsApproval(context, args, "call_9"), false);
    const text = await refund.invoke(context, JSON.stringify(args), {
      toolCall: { type: "function_call", callId: "call_9", name: "orders_refund", arguments: JSON.stringify(args) },
    });
    assert.match(text, /^APPROVAL_NOT_FOUND: /);
    assert.equal((await registry.approvals.list()).length, 1, "no second request");
    assert.equal(calls.get("orders.refund"), undefined);
  });

  it("a saved call replayed after it ran, or after a rejection made elsewhere, is answered, not asked again", async () => {
    const calls = new Map();
    const audit = [];
    const registry = await build(calls, { audit });
    const governed = governedAgentTools(registry, ANA);
    const call = (callId) => functionCall("orders_refund", { order: "o-1", cents: 500 }, { callId });
    const model = new ScriptedModel([
      [call("call_r")],
      [assistantMessage("Refunded.")],
      [assistantMessage("Already done.")],
      [call("call_s")],
      [assistantMessage("Refused.")],
    ]);
    const agent = new Agent({ name: "support", model, tools: governed.tools });
    const first = await runner.run(agent, "Refund.");
    const saved = first.state.toString(); // the call undecided
    const [item] = first.state.getInterruptions();
    await governed.approve(first.state, item, { approver: "lead" });
    assert.equal((await runner.run(agent, first.state)).finalOutput, "Refunded.");

    // The saved state replayed: the SDK asks again whether the call needs
    // approval. A second request here is one a person could approve, and
    // the refund would run twice.
    const replayed = await runner.run(agent, await RunState.fromString(agent, saved));
    assert.deepEqual(replayed.interruptions, []);
    assert.equal(replayed.finalOutput, "Already done.");
    assert.match(outputs(model, 2).call_r, /^APPROVAL_CONSUMED: /);

    // A request rejected in an approval UI (not through the run state).
    const second = await runner.run(agent, "Refund again.");
    const [other] = second.state.getInterruptions();
    await registry.approvals.reject(governed.requestId(other), { approver: "lead" });
    const refused = await runner.run(agent, second.state);
    assert.deepEqual(refused.interruptions, []);
    assert.match(outputs(model, 4).call_s, /^APPROVAL_REJECTED: /);

    assert.equal(calls.get("orders.refund"), 1);
    const requests = await registry.approvals.list({});
    assert.deepEqual(requests.map((r) => r.status).sort(), ["consumed", "rejected"]);
    assert.deepEqual(finished(audit).slice(-2), [
      ["orders.refund", "approval_required", false],
      ["orders.refund", "APPROVAL_REJECTED", true],
    ]);
  });
});
