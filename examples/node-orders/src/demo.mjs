// `make demo` for the Node binding: the orders app end to end.
//
// 1. MCP: a real MCP client starts the app's stdio server, lists its tools with
//    their annotations, calls a read, meets an approval gate, has the approval
//    decided in the approvers' console (this process, same SQLite queue),
//    resumes the approved call, sees a policy denial and a redacted result.
// 2. AI SDK: a generateText tool loop driven by the SDK's mock model, with an
//    approval round trip.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { MCP_APPROVAL_ID_META, toAiSdkTools } from "@orpc-agent/core";

import { createDb, createRegistry } from "./app.mjs";

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
let step = 0;
const say = (title) => console.log(`\n== ${++step}. ${title}`);
const show = (label, value) => console.log(`   ${label}: ${typeof value === "string" ? value : JSON.stringify(value)}`);

const dir = mkdtempSync(join(tmpdir(), "node-orders-"));
const approvalsDb = join(dir, "approvals.sqlite");
try {
  await mcpDemo();
  await aiSdkDemo();
  console.log("\nnode-orders demo: every step ran as expected.");
} finally {
  rmSync(dir, { recursive: true, force: true });
}

async function mcpDemo() {
  console.log("# MCP over stdio (src/mcp-server.mjs)");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [fileURLToPath(new URL("./mcp-server.mjs", import.meta.url))],
    env: { ...process.env, ORDERS_APPROVALS: approvalsDb },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk) => {
    for (const line of String(chunk).trimEnd().split("\n")) console.log(`   (server) ${line}`);
  });
  const client = new Client({ name: "node-orders-demo", version: "1.0.0" });
  await client.connect(transport);
  try {
    say("tools/list: the app's capabilities with the annotations the core derived");
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const hints = Object.entries(tool.annotations ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(" ");
      console.log(`   ${tool.name.padEnd(16)} ${hints}`);
    }
    expect(tools.length === 4, "four tools listed");

    say("call orders_get (a read) with a W3C traceparent in _meta");
    const got = await client.callTool({
      name: "orders_get",
      arguments: { id: "o-1001" },
      _meta: { traceparent: TRACEPARENT },
    });
    show("structuredContent", got.structuredContent);
    expect(got.structuredContent?.status === "shipped", "order read");

    say("call orders_refund (a write behind approval): approval requested");
    const asked = await client.callTool({
      name: "orders_refund",
      arguments: { id: "o-1001", amount: 20, note: "damaged box" },
    });
    show("isError", asked.isError);
    show("text", asked.content[0].text);
    const approval = asked._meta?.["orpc-agent/approval"];
    show("_meta", approval);
    expect(approval?.status === "approval_required", "approval requested");

    say("the approvers' console (another process, same SQLite queue) approves it");
    const console_ = await createRegistry({ sqlitePath: approvalsDb });
    const request = await console_.approvals.get(approval.requestId);
    show("request", {
      id: request.id,
      capabilityId: request.capabilityId,
      status: request.status,
      actor: request.actor,
    });
    show("input as the approval UI shows it", await console_.redactApprovalInput(request));
    await console_.approvals.approve(approval.requestId, { approver: "manager-ana", reason: "box photo checked" });
    show("status", (await console_.approvals.get(approval.requestId)).status);

    say("the client resumes the approved call");
    const resumed = await client.callTool({
      name: "orders_refund",
      arguments: {},
      _meta: { [MCP_APPROVAL_ID_META]: approval.requestId },
    });
    show("structuredContent", resumed.structuredContent);
    expect(resumed.structuredContent?.amount === 20, "refund ran once approved");

    say("resuming the same approval again is refused (single use)");
    const again = await client.callTool({
      name: "orders_refund",
      arguments: {},
      _meta: { [MCP_APPROVAL_ID_META]: approval.requestId },
    });
    show("text", again.content[0].text);
    expect(again._meta?.["orpc-agent/error"]?.code === "APPROVAL_CONSUMED", "single use");

    say("call orders_cancel (destructive) on a paid order: the policy denies it");
    const denied = await client.callTool({ name: "orders_cancel", arguments: { id: "o-1003" } });
    show("text", denied.content[0].text);
    show("_meta", denied._meta);
    expect(denied._meta?.["orpc-agent/error"]?.code === "POLICY_DENIED", "policy denial");

    say("call customers_get: the output is redacted before it leaves the server");
    const customer = await client.callTool({ name: "customers_get", arguments: { orderId: "o-1001" } });
    show("structuredContent", customer.structuredContent);
    expect(customer.structuredContent?.phone === "***", "redacted");
  } finally {
    await client.close();
  }
}

async function aiSdkDemo() {
  console.log("\n# AI SDK tool loop (generateText + MockLanguageModelV3)");
  const db = createDb();
  const registry = await createRegistry();
  const frame = { actor: { id: "chat-user-1" }, context: { db } };
  const turns = [
    toolCall("c1", "customers_get", { orderId: "o-1002" }),
    toolCall("c2", "orders_refund", { id: "o-1002", amount: 12 }),
    text("Refund r-1 of 12 is done for Ada."),
  ];
  const model = new MockLanguageModelV3({ doGenerate: turns });
  const messages = [{ role: "user", content: "Refund 12 on o-1002 and tell me who the customer is." }];

  say("generateText: the model looks up the customer, then asks for a refund");
  const first = await generateText({ model, tools: toAiSdkTools(registry, frame), messages, stopWhen: stepCountIs(5) });
  for (const s of first.steps) {
    for (const part of s.content) {
      if (part.type === "tool-call") show("tool call", `${part.toolName} ${JSON.stringify(part.input)}`);
      if (part.type === "tool-result") show("tool result", part.output);
      if (part.type === "tool-approval-request")
        show("approval requested", `${part.toolCall.toolName} (ai approval ${part.approvalId})`);
    }
  }
  const ask = first.content.find((p) => p.type === "tool-approval-request");
  expect(ask !== undefined, "ai asked for approval because the core's gate fired");
  const pending = await registry.approvals.list({ status: "pending" });
  show(
    "core approval queue",
    pending.map((r) => `${r.id} ${r.capabilityId} ${r.status}`),
  );

  say("the user approves in the chat UI; the next generateText resumes the core's request");
  const second = await generateText({
    model,
    tools: toAiSdkTools(registry, frame),
    messages: [
      ...messages,
      ...first.response.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: ask.approvalId, approved: true }] },
    ],
    stopWhen: stepCountIs(5),
  });
  const result = second.response.messages.find((m) => m.role === "tool")?.content.find((p) => p.type === "tool-result");
  show("tool result", result?.output);
  show("model", second.text);
  expect(result?.output?.value?.refundId === "r-1", "refund executed after approval");
  expect(db.refunds.length === 1, "exactly one refund");
}

function toolCall(toolCallId, toolName, input) {
  return {
    content: [{ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: usage(),
    warnings: [],
  };
}

function text(value) {
  return {
    content: [{ type: "text", text: value }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: usage(),
    warnings: [],
  };
}

function usage() {
  return {
    inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 5, text: 5, reasoning: 0 },
  };
}

function expect(condition, what) {
  if (!condition) {
    console.error(`demo failed: ${what}`);
    process.exit(1);
  }
}
