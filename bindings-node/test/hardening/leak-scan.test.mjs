// Secret-leak scan (issue 10, item 2): a sentinel secret goes in through
// every path — a redacted output, inputs of rejected calls, an approval
// input behind `redactApprovalInput`, a handler error — and must come out
// of none: error messages, audit records (payloads on), trace fields, log
// lines, MCP results (real Client over InMemoryTransport) or what an AI SDK
// model is sent (generateText with MockLanguageModelV3).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { CapabilityError, inputHash, MCP_APPROVAL_ID_META, registerMcpTools, toAiSdkTools } from "@orpc-agent/core";

import { SECRET, capturingOutput, safeText, secretsRegistry } from "./secrets-fixture.mjs";

const TRACE = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "vendor=x" };
const frame = (surface = "direct") => ({ surface, actor: { id: "agent-1" }, trace: TRACE, requestId: "req-1" });

function assertNoSecret(where, value) {
  const text = typeof value === "string" ? value : safeText(value);
  assert.ok(!text.includes(SECRET), `${where} leaks the secret: ${text.slice(0, 400)}`);
}

/** Every rejected path through `invoke`, returning the errors thrown. */
async function rejectedCalls(registry, surface) {
  const errors = [];
  const expectError = async (code, id, input) => {
    const e = await registry.invoke(id, input, frame(surface)).then(
      () => assert.fail(`${id} should fail`),
      (e) => e,
    );
    assert.ok(e instanceof CapabilityError, `${id}: ${e}`);
    assert.equal(e.code, code, `${id}: ${e.message}`);
    errors.push(e);
  };
  await expectError("INVALID_INPUT", "acct.create", { name: "x", pin: SECRET });
  await expectError("INVALID_INPUT", "acct.create", { name: SECRET, pin: 1 }); // too long
  await expectError("POLICY_DENIED", "acct.purge", { id: "a", token: SECRET });
  await expectError("NOT_FOUND", "acct.nope", { token: SECRET });
  if (surface !== "direct") await expectError("NOT_FOUND", "acct.hidden", { id: SECRET });
  await expectError("EXECUTION_FAILED", "acct.fail", { id: "a" });
  return errors;
}

describe("secret-leak scan: registry.invoke", () => {
  it("no error, audit record, trace field or log line carries the secret", async () => {
    const { registry, audit, operatorLog } = await secretsRegistry();
    let errors = [];
    let ok;
    let approved;
    let view;
    let shown = [];
    const logs = await capturingOutput(async () => {
      ok = await registry.invoke("acct.get", { id: "a" }, frame("mcp"));
      errors = [...(await rejectedCalls(registry, "direct")), ...(await rejectedCalls(registry, "mcp"))];
      const pending = await registry.invoke("acct.transfer", { to: "bob", amount: 5, secret: SECRET }, frame());
      assert.equal(pending.status, "approval_required");
      view = await registry.redactApprovalInput(pending.request);
      shown = [pending, await registry.approvals.get(pending.request.id), await registry.approvals.list()];
      shown.push(await registry.approvals.approve(pending.request.id, { approver: "ops", reason: "fine" }));
      approved = await registry.resume(pending.request.id, { trace: TRACE });
    });
    assert.deepEqual(ok, { status: "ok", output: { id: "a" } });
    assert.deepEqual(view, { to: "bob", amount: 5 });
    assert.deepEqual(approved, { status: "ok", output: { to: "bob", amount: 5 } });
    assert.equal(errors.length, 11);
    for (const e of errors) assertNoSecret(`${e.code} error`, e);
    // Audit: at least one record per call, with payloads on, trace fields kept.
    assert.ok(audit.length >= errors.length + 3, `only ${audit.length} audit records`);
    assert.ok(audit.some((r) => r.traceparent === TRACE.traceparent));
    assert.ok(
      audit.some((r) => r.event === "finished" && r.output !== undefined),
      "payloads were recorded",
    );
    for (const r of audit) assertNoSecret(`audit record ${r.event} ${r.outcome}`, r);
    assertNoSecret("console/stdout/stderr", logs);
    // The input hash is an unsalted SHA-256 of the full input: shown next
    // to a redacted view, hashing candidates would recover the secret
    // (issue 15, item 5). No outcome, view or audit record carries it.
    const hash = inputHash("acct.transfer", { to: "bob", amount: 5, secret: SECRET });
    for (const [where, value] of [
      ["outcome and views", shown],
      ["audit records", audit],
      ["logs", logs],
    ]) {
      const text = typeof value === "string" ? value : safeText(value);
      assert.ok(!text.includes(hash), `${where} carry the input hash`);
    }
    // The operator's audit record names the failure's class, not its text.
    const failedRecord = audit.find((r) => r.event === "finished" && r.capabilityId === "acct.fail");
    assert.equal(failedRecord.failure, "Error");
    // The operator is told what failed, with the real error.
    const failed = operatorLog.find((l) => /the handler of capability "acct\.fail"/.test(l.message));
    assert.ok(
      failed,
      `the handler's failure reached the operator's logger: ${JSON.stringify(operatorLog.map((l) => l.message))}`,
    );
    assert.ok(failed.error instanceof Error);
  });

  it("the scan fails when a secret does reach an output (the check can fail)", async () => {
    const { registry } = await secretsRegistry();
    const r = await registry.invoke("acct.hidden", { id: "a" }, frame("direct"));
    assert.throws(() => assertNoSecret("unredacted output", r), /leaks the secret/);
  });
});

describe("secret-leak scan: MCP results", () => {
  it("no tool result, error or approval result carries the secret", async () => {
    const { registry, audit } = await secretsRegistry();
    const server = new McpServer({ name: "acct", version: "1.0.0" });
    registerMcpTools(server, registry, { frame: () => ({ actor: { id: "agent-1" } }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "leak-scan", version: "1.0.0" });
    await client.connect(clientSide);
    const results = [];
    const logs = await capturingOutput(async () => {
      const call = async (name, args, _meta) => {
        const r = await client.callTool({ name, arguments: args, ...(_meta ? { _meta } : {}) });
        results.push(r);
        return r;
      };
      assert.equal((await call("acct_get", { id: "a" })).isError, false);
      for (const [name, args] of [
        ["acct_create", { name: "x", pin: SECRET }],
        ["acct_create", { name: SECRET, pin: 1 }],
        ["acct_purge", { id: "a", token: SECRET }],
        ["acct_hidden", { id: SECRET }],
        ["acct_nope", { token: SECRET }],
        ["acct_fail", { id: "a" }],
      ]) {
        assert.equal((await call(name, args)).isError, true, name);
      }
      const pending = await call("acct_transfer", { to: "bob", amount: 5, secret: SECRET });
      assert.equal(pending.isError, true);
      const requestId = pending._meta["orpc-agent/approval"].requestId;
      await registry.approvals.approve(requestId, { approver: "ops" });
      const done = await call(
        "acct_transfer",
        { to: "bob", amount: 5, secret: SECRET },
        { [MCP_APPROVAL_ID_META]: requestId },
      );
      assert.equal(done.isError, false, safeText(done));
      // No output schema: the output is its text only (the core's ok_result).
      assert.deepEqual(JSON.parse(done.content[0].text), { to: "bob", amount: 5 });
    });
    await client.close();
    for (const r of results) assertNoSecret("MCP result", r);
    for (const r of audit) assertNoSecret("audit record", r);
    assertNoSecret("console/stdout/stderr", logs);
  });
});

describe("secret-leak scan: AI SDK tool results", () => {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  const calls = (list) => ({
    content: list.map(([toolName, input], i) => ({
      type: "tool-call",
      toolCallId: `c${i}`,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  });
  const text = {
    content: [{ type: "text", text: "done" }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  };

  it("nothing the model is sent back carries the secret", async () => {
    const { registry, audit } = await secretsRegistry();
    const model = new MockLanguageModelV3({
      doGenerate: [
        calls([
          ["acct_get", { id: "a" }],
          ["acct_create", { name: "x", pin: SECRET }],
          ["acct_create", { name: SECRET, pin: 1 }],
          ["acct_purge", { id: "a", token: SECRET }],
          ["acct_fail", { id: "a" }],
        ]),
        text,
      ],
    });
    let result;
    const logs = await capturingOutput(async () => {
      result = await generateText({
        model,
        tools: toAiSdkTools(registry, { actor: { id: "agent-1" } }),
        prompt: "Do the account chores.",
        stopWhen: stepCountIs(3),
      });
    });
    assert.equal(model.doGenerateCalls.length, 2);
    // The model's own tool-call arguments (its words) are the only place the
    // secret may be; everything the library answered is scanned.
    const sentBack = model.doGenerateCalls.map((c) =>
      c.prompt.map((m) =>
        m.role === "assistant" ? { ...m, content: m.content.filter((p) => p.type !== "tool-call") } : m,
      ),
    );
    const toolResults = sentBack[1].flatMap((m) => (m.role === "tool" ? m.content : []));
    assert.equal(toolResults.length, 5, safeText(sentBack[1]));
    assertNoSecret("prompts sent to the model", sentBack);
    // A step's tool-result/tool-error parts echo the model's `input`; what the
    // library produced is `output` / `error`.
    const produced = result.steps.flatMap((s) =>
      s.content.filter((p) => p.type !== "tool-call").map(({ input, ...p }) => p),
    );
    assert.equal(produced.filter((p) => p.type === "tool-error").length, 4, safeText(produced));
    assertNoSecret("step tool results and errors", produced);
    for (const r of audit) assertNoSecret("audit record", r);
    assertNoSecret("console/stdout/stderr", logs);
  });

  it("an approval round trip through ai's approval flow leaks nothing", async () => {
    const { registry, audit } = await secretsRegistry();
    const tools = toAiSdkTools(registry, { actor: { id: "agent-1" } });
    const model = new MockLanguageModelV3({
      doGenerate: [calls([["acct_transfer", { to: "bob", amount: 5, secret: SECRET }]]), text],
    });
    const first = await generateText({ model, tools, prompt: "Pay bob.", stopWhen: stepCountIs(2) });
    const approvalRequest = first.content.find((p) => p.type === "tool-approval-request");
    assert.ok(approvalRequest, safeText(first.content));
    const [pending] = await registry.approvals.list({ status: "pending" });
    assert.deepEqual(await registry.redactApprovalInput(pending), { to: "bob", amount: 5 });
    const model2 = new MockLanguageModelV3({ doGenerate: [text] });
    const second = await generateText({
      model: model2,
      tools,
      messages: [
        { role: "user", content: "Pay bob." },
        ...first.response.messages,
        {
          role: "tool",
          content: [{ type: "tool-approval-response", approvalId: approvalRequest.approvalId, approved: true }],
        },
      ],
      stopWhen: stepCountIs(2),
    });
    const sent = model2.doGenerateCalls[0].prompt.map((m) =>
      m.role === "assistant" ? { ...m, content: m.content.filter((p) => p.type !== "tool-call") } : m,
    );
    const results = sent.flatMap((m) => (m.role === "tool" ? m.content.filter((p) => p.type === "tool-result") : []));
    assert.equal(results.length, 1, safeText(sent));
    assert.deepEqual(results[0].output, { type: "json", value: { to: "bob", amount: 5 } });
    assertNoSecret("prompt after approval", sent);
    assertNoSecret(
      "second generateText steps",
      second.steps.flatMap((s) => s.toolResults.map(({ input, ...p }) => p)),
    );
    for (const r of audit) assertNoSecret("audit record", r);
  });
});
