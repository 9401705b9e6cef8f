// No exception text of application code reaches what a model or a remote
// client receives ("Nothing run twice, nothing leaked", item 4). Every
// capability below fails in the application's code with a message that
// holds a database connection string — an output whose `toJSON` throws, an
// output getter that throws, a handler's plain `Error`, a throwing output
// redactor, input and output validators that throw, a validated input the
// approval hash cannot read, and an application context whose getter throws
// under a host policy or a redactor — and the secret must appear in none of:
// `registry.invoke` rejections, MCP results (a real Client), the tool
// results/errors an AI SDK model is sent (generateText with the mock model),
// and the agent gateway's responses (real HTTP on loopback). Only a
// `CapabilityError` the application threw itself keeps its message.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/node";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import * as z from "zod";

import {
  agentProcedure,
  CapabilityError,
  createAgentGateway,
  createCapabilityRegistry,
  createGatewayClient,
  registerMcpTools,
  toAiSdkTools,
} from "@orpc-agent/core";

import { safeText } from "./secrets-fixture.mjs";

const SECRET = "postgres://app:Sup3r-s3cret-pw@db.internal:5432/prod";
const leak = () => new Error(`connection to ${SECRET} failed`);

function assertNoSecret(where, value) {
  const text = typeof value === "string" ? value : safeText(value);
  assert.ok(!text.includes(SECRET), `${where} leaks the secret: ${text.slice(0, 600)}`);
}

/** A Standard Schema whose validator throws the secret. */
const throwingSchema = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate() {
      throw leak();
    },
  },
};

/** An application context whose lazily opened service fails, naming the secret. */
function leakyContext() {
  return {
    tenant: "t1",
    get db() {
      throw leak();
    },
  };
}

const expose = { mcp: true, aiSdk: true, direct: true };
const meta = (extra = {}) => ({
  agent: { description: "Does a thing.", expose, sideEffect: "read", risk: "low", ...extra },
});

/**
 * Each capability fails in application code (or yields an output with no
 * JSON form); `rejects` lists those whose `registry.invoke` rejects (an
 * output with no JSON form is the app's own value in-process).
 */
async function leakyRegistry() {
  const base = agentProcedure(os.$context());
  const router = {
    outToJson: base
      .meta(meta())
      .input(z.object({}))
      .handler(async () => ({
        ok: true,
        toJSON: () => {
          throw leak();
        },
      })),
    outGetter: base
      .meta(meta())
      .input(z.object({}))
      .handler(async () => ({
        get value() {
          throw leak();
        },
      })),
    handlerThrows: base
      .meta(meta())
      .input(z.object({}))
      .handler(async () => {
        throw leak();
      }),
    redactorThrows: base
      .meta(
        meta({
          redact: {
            output: () => {
              throw leak();
            },
          },
        }),
      )
      .input(z.object({}))
      .handler(async () => ({ ok: true })),
    inputValidatorThrows: base
      .meta(meta())
      .input(throwingSchema)
      .handler(async () => ({ ok: true })),
    outputValidatorThrows: base
      .meta(meta())
      .input(z.object({}))
      .output(throwingSchema)
      .handler(async () => ({ ok: true })),
    // The validated input (a transform's value) cannot be read for the approval hash.
    gatedInputGetter: base
      .meta(meta({ sideEffect: "write", approval: { required: true } }))
      .input(
        z.object({ n: z.number() }).transform((v) => ({
          ...v,
          get extra() {
            throw leak();
          },
        })),
      )
      .handler(async () => ({ ok: true })),
    gatedInputToJson: base
      .meta(meta({ sideEffect: "write", approval: { required: true } }))
      .input(
        z.object({ n: z.number() }).transform((v) => ({
          ...v,
          toJSON: () => {
            throw leak();
          },
        })),
      )
      .handler(async () => ({ ok: true })),
    // A host policy and a redactor get a frozen copy of the context: its getter runs.
    contextUnderPolicy: base
      .meta(meta({ policies: [{ name: "open", evaluate: () => ({ decision: "allow" }) }] }))
      .input(z.object({}))
      .handler(async () => ({ ok: true })),
    contextUnderRedactor: base
      .meta(meta({ redact: { output: (out) => out } }))
      .input(z.object({}))
      .handler(async () => ({ ok: true })),
    // The application's own CapabilityError: marked safe, kept.
    ownError: base
      .meta(meta())
      .input(z.object({}))
      .handler(async () => {
        throw new CapabilityError("EXECUTION_FAILED", "The warehouse is closed today.");
      }),
  };
  const registry = await createCapabilityRegistry(router);
  const inputs = { gatedInputGetter: { n: 1 }, gatedInputToJson: { n: 1 } };
  const calls = Object.keys(router).map((name) => [name, inputs[name] ?? {}]);
  return { registry, calls };
}

describe("model-facing errors: registry.invoke", () => {
  it("no rejection carries application exception text", async () => {
    const { registry, calls } = await leakyRegistry();
    const frame = { surface: "direct", actor: { id: "u1" }, context: leakyContext() };
    const seen = {};
    for (const [name, input] of calls) {
      seen[name] = await registry.invoke(name, input, frame).then(
        (r) => ({ resolved: r.status }),
        (e) => e,
      );
    }
    for (const [name, outcome] of Object.entries(seen)) {
      if (outcome instanceof Error) {
        assert.ok(outcome instanceof CapabilityError, `${name}: ${outcome}`);
        assertNoSecret(`${name} rejection`, outcome);
      }
    }
    // The outputs with no JSON form are the app's own values in-process.
    assert.deepEqual(seen.outToJson, { resolved: "ok" });
    assert.deepEqual(seen.outGetter, { resolved: "ok" });
    assert.equal(seen.handlerThrows.code, "EXECUTION_FAILED");
    assert.equal(seen.redactorThrows.code, "EXECUTION_FAILED");
    assert.equal(seen.inputValidatorThrows.code, "INVALID_INPUT");
    assert.equal(seen.outputValidatorThrows.code, "OUTPUT_INVALID");
    assert.equal(seen.gatedInputGetter.code, "INVALID_INPUT");
    assert.equal(seen.gatedInputToJson.code, "INVALID_INPUT");
    // The core's reason, as Python's raising serializer and Swift's
    // throwing encode(to:) get it.
    assert.equal(
      seen.gatedInputToJson.message,
      "The input cannot be bound to an approval: a value in it has no JSON form.",
    );
    // A policy whose request cannot be built fails (deny); a redactor whose
    // info cannot be built fails (EXECUTION_FAILED): neither says why.
    assert.equal(seen.contextUnderPolicy.code, "POLICY_DENIED");
    assert.equal(seen.contextUnderRedactor.code, "EXECUTION_FAILED");
    assert.equal(seen.ownError.message, "The warehouse is closed today.", "the app's own CapabilityError is kept");
    registry.close();
  });

  it("a frame whose actor getter throws rejects (never throws), without the text", async () => {
    const { registry } = await leakyRegistry();
    const actor = {
      get id() {
        throw leak();
      },
    };
    let outcome;
    try {
      outcome = await registry.invoke("handlerThrows", {}, { surface: "direct", actor }).catch((e) => e);
    } catch (e) {
      assert.fail(`invoke threw synchronously: ${e}`);
    }
    assert.ok(outcome instanceof CapabilityError, String(outcome));
    assertNoSecret("rejection", outcome);
    registry.close();
  });
});

describe("model-facing errors: MCP results", () => {
  it("no tool result carries application exception text", async () => {
    const { registry, calls } = await leakyRegistry();
    const server = new McpServer({ name: "leaky", version: "1.0.0" });
    registerMcpTools(server, registry, { frame: () => ({ actor: { id: "u1" }, context: leakyContext() }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "leak-check", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      for (const [name, args] of calls) {
        const result = await client.callTool({ name, arguments: args });
        assertNoSecret(`MCP ${name}`, result);
        assert.equal(result.isError, true, `${name}: ${safeText(result)}`);
        const meta = result._meta?.["orpc-agent/error"];
        assert.ok(meta, `${name}: a capability error result, not the SDK's wrapper: ${safeText(result)}`);
        if (name === "ownError") assert.match(result.content[0].text, /The warehouse is closed today/);
      }
    } finally {
      await client.close();
      registry.close();
    }
  });
});

describe("model-facing errors: AI SDK tool results", () => {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };

  it("nothing the model is sent back, and no step result or error, carries application exception text", async () => {
    const { registry, calls } = await leakyRegistry();
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: calls.map(([toolName, input], i) => ({
            type: "tool-call",
            toolCallId: `c${i}`,
            toolName,
            input: JSON.stringify(input),
          })),
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        },
        {
          content: [{ type: "text", text: "done" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        },
      ],
    });
    const result = await generateText({
      model,
      tools: toAiSdkTools(registry, { actor: { id: "u1" }, context: leakyContext() }),
      prompt: "Do everything.",
      stopWhen: stepCountIs(3),
    });
    assert.equal(model.doGenerateCalls.length, 2);
    const sentBack = model.doGenerateCalls[1].prompt.flatMap((m) => (m.role === "tool" ? m.content : []));
    assert.equal(sentBack.length, calls.length, safeText(sentBack));
    assertNoSecret("tool results sent to the model", sentBack);
    const produced = result.steps.flatMap((s) =>
      s.content.filter((p) => p.type !== "tool-call").map(({ input, ...p }) => p),
    );
    assertNoSecret("step tool results and errors", produced);
    const errors = produced.filter((p) => p.type === "tool-error");
    assert.equal(errors.length, calls.length, safeText(produced));
    for (const e of errors) assert.ok(e.error instanceof CapabilityError, `${e.toolName}: ${safeText(e.error)}`);
    registry.close();
  });
});

describe("model-facing errors: agent gateway responses", () => {
  it("no response, error or result carries application exception text", async () => {
    const { registry, calls } = await leakyRegistry();
    const gateway = createAgentGateway(registry, { actor: () => ({ id: "u1" }), context: () => leakyContext() });
    const handler = new RPCHandler({ agent: gateway });
    const server = createServer(async (req, res) => {
      const { matched } = await handler.handle(req, res, { prefix: "/rpc", context: { headers: req.headers } });
      if (!matched) {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = createGatewayClient({ url: `http://127.0.0.1:${server.address().port}/rpc/agent` });
    try {
      for (const [capability, input] of calls) {
        const response = await client.invoke({ capability, input }).then(
          (r) => ({ result: r }),
          (e) => ({ error: { code: e.code, status: e.status, message: e.message, data: e.data } }),
        );
        assertNoSecret(`gateway ${capability}`, response);
        // oRPC's serializer leaves a plain object's `toJSON` out and sends its fields.
        if (capability !== "outToJson") assert.ok(response.error, `${capability}: ${safeText(response)}`);
      }
    } finally {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
      registry.close();
    }
  });
});
