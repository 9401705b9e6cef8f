// `make demo-gateway`: the app on loopback, then (1) a remote AI SDK tool
// loop driven by ai's mock model, (2) a bound presentation ("refund order
// 42") that the gateway stops at its approval gate until a manager approves.

import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { createGatewayClient, createRemoteAiSdkTools, presentBound } from "@orpc-agent/core";

import { startApp } from "./app.mjs";

const log = (...a) => console.log(...a);
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const call = (toolName, input, toolCallId) => ({
  content: [{ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: [],
});
const say = (text) => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: "stop" },
  usage,
  warnings: [],
});
const trace = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };

const app = await startApp({ log });
try {
  log(`gateway at ${app.url}`);
  const alice = { authorization: "Bearer token-alice" };

  log("\n1. remote AI SDK tools (unbound list) and a mock-model tool loop");
  const tools = await createRemoteAiSdkTools({ url: app.url, headers: alice, frame: { actorId: "alice", trace } });
  log(`  tools: ${Object.keys(tools).join(", ")}   (orders.refund is contextual: not listed)`);
  const answer = await generateText({
    model: new MockLanguageModelV3({
      doGenerate: [call("orders_get", { id: "42" }, "c1"), say("Order 42 has shipped.")],
    }),
    tools,
    stopWhen: stepCountIs(3),
    prompt: "Where is order 42?",
  });
  log(`  tool result: ${JSON.stringify(answer.steps[0].content.find((p) => p.type === "tool-result").output)}`);
  log(`  model: ${answer.text}`);

  log("\n2. a bound presentation: the UI shows 'refund order 42' (id fixed)");
  const bound = await presentBound({
    url: app.url,
    headers: alice,
    capability: "orders.refund",
    fixed: { id: "42" },
    frame: { trace },
  });
  log(
    `  presented as tool ${bound.toolName}; the model sees: ${JSON.stringify(Object.keys(bound.tools[bound.toolName].inputSchema.jsonSchema.properties))}`,
  );
  const first = await bound.run({ amount: 20, id: "999" });
  log(
    `  alice runs it: ${first.status}, request ${first.request.id} with input ${JSON.stringify(first.request.input)}`,
  );
  const aliceClient = createGatewayClient({ url: app.url, headers: alice });
  try {
    await aliceClient.approvals.decide({ id: first.request.id, approve: true });
  } catch (e) {
    log(`  alice tries to approve her own request: ${e.code}`);
  }
  const bob = createGatewayClient({ url: app.url, headers: { authorization: "Bearer token-bob" } });
  const decided = await bob.approvals.decide({ id: first.request.id, approve: true, reason: "customer goodwill" });
  log(`  bob (manager) decides: ${decided.status}`);
  const done = await bound.resume(first.request.id);
  log(`  alice resumes: ${JSON.stringify(done)}`);
  try {
    await bound.resume(first.request.id);
  } catch (e) {
    log(`  resuming again: ${e.code}`);
  }

  log("\n3. no credentials, no gateway");
  try {
    await createGatewayClient({ url: app.url }).descriptors({});
  } catch (e) {
    log(`  anonymous descriptors: ${e.code} (${e.status})`);
  }
} finally {
  await app.close();
}
