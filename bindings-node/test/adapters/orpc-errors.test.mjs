// oRPC's typed errors through the governed path (issue 20 item 1): an
// `ORPCError` a procedure or its middleware throws — `errors.X(...)` of
// `.errors({...})`, `new ORPCError(...)`, an auth middleware's
// UNAUTHORIZED — ends in the core's code by its table
// (core/src/orpc_error.rs), in `registry.invoke`, MCP results (the SDK's real
// Client over InMemoryTransport) and AI SDK tool results (generateText with
// the SDK's mock model). A declared error (`defined`, as oRPC's
// `validateORPCError` decides) shows its message and its `data` (as the
// error's details); an undeclared one's text and data reach nothing a
// model reads. And the other way: a `CapabilityError` a
// handler throws reaches a plain oRPC client of the same router (oRPC's own
// `RPCHandler`) as an `ORPCError`, not a 500.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createORPCClient } from "@orpc/client";
import { RPCLink } from "@orpc/client/fetch";
import { ORPCError, os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import * as z from "zod";

import {
  agentProcedure,
  CapabilityError,
  capabilityErrorsToORPC,
  createCapabilityRegistry,
  registerMcpTools,
  toAiSdkTools,
} from "@orpc-agent/core";

const SECRET = "postgres://app:Sup3r-s3cret-pw@db.internal:5432/prod";
const FAILED = "The capability failed while running.";

/** [oRPC code, core code, retryable, what the model reads when undeclared]: the core's table. */
const ROWS = [
  ["BAD_REQUEST", "INVALID_INPUT", false, "The capability rejected the arguments."],
  ["UNAUTHORIZED", "CREDENTIAL_REQUIRED", false, "The capability needs a credential the call did not carry."],
  ["FORBIDDEN", "POLICY_DENIED", false, "The capability does not allow this call."],
  ["NOT_FOUND", "EXECUTION_FAILED", false, "The capability did not find what the call asked for."],
  ["METHOD_NOT_SUPPORTED", "EXECUTION_FAILED", false, FAILED],
  ["NOT_ACCEPTABLE", "EXECUTION_FAILED", false, FAILED],
  ["TIMEOUT", "TIMEOUT", true, "The capability timed out while running."],
  ["CONFLICT", "EXECUTION_FAILED", false, "The call conflicts with the current state."],
  ["PRECONDITION_FAILED", "EXECUTION_FAILED", false, "A precondition of the call does not hold."],
  ["PAYLOAD_TOO_LARGE", "LIMIT_EXCEEDED", false, "The request is larger than the capability accepts."],
  ["UNSUPPORTED_MEDIA_TYPE", "INVALID_INPUT", false, "The capability rejected the arguments."],
  ["UNPROCESSABLE_CONTENT", "INVALID_INPUT", false, "The capability rejected the arguments."],
  ["TOO_MANY_REQUESTS", "LIMIT_EXCEEDED", true, "The capability is rate limited; try again later."],
  ["CLIENT_CLOSED_REQUEST", "EXECUTION_FAILED", false, FAILED],
  ["INTERNAL_SERVER_ERROR", "EXECUTION_FAILED", false, FAILED],
  ["NOT_IMPLEMENTED", "EXECUTION_FAILED", false, FAILED],
  ["BAD_GATEWAY", "EXECUTION_FAILED", true, "A service the capability needs failed."],
  ["SERVICE_UNAVAILABLE", "EXECUTION_FAILED", true, "The capability is unavailable at the moment."],
  ["GATEWAY_TIMEOUT", "TIMEOUT", true, "A service the capability needs timed out."],
  // The application's own code goes by its status.
  ["OUT_OF_STOCK", "EXECUTION_FAILED", false, "The call conflicts with the current state.", 409],
  ["SLOW_DOWN", "LIMIT_EXCEEDED", true, "The capability is rate limited; try again later.", 429],
  ["TEAPOT", "EXECUTION_FAILED", false, FAILED, 418],
];

const CODES = ROWS.map((r) => r[0]);
const statusOf = (code) => ROWS.find((r) => r[0] === code)[4];
const declaredText = (code) => `Declared ${code.toLowerCase()}: order 7.`;

const expose = { direct: true, mcp: true, aiSdk: true };
const meta = (description) => ({ agent: { description, expose, sideEffect: "read", risk: "low" } });
const codeInput = z.object({ code: z.enum(CODES) });

/** Every row declared in `.errors({...})` (custom codes with their status). */
const errorMap = Object.fromEntries(CODES.map((c) => [c, statusOf(c) === undefined ? {} : { status: statusOf(c) }]));

const requireUser = os.middleware(async ({ context, next }) => {
  if (!context.user) throw new ORPCError("UNAUTHORIZED", { message: `token for ${SECRET} expired` });
  return next();
});

async function registry() {
  const base = agentProcedure(os.$context());
  const router = {
    // `errors.X(...)`: defined.
    declared: base
      .errors(errorMap)
      .meta(meta("Fails with a declared error."))
      .input(codeInput)
      .handler(async ({ input, errors }) => {
        throw errors[input.code]({ message: declaredText(input.code), data: { order: 7 } });
      }),
    // `new ORPCError(...)` with no `.errors` declaring it: undeclared.
    undeclared: base
      .meta(meta("Fails with an undeclared error."))
      .input(codeInput)
      .handler(async ({ input }) => {
        throw new ORPCError(input.code, {
          status: statusOf(input.code),
          message: `row ${SECRET} locked`,
          data: { dsn: SECRET },
        });
      }),
    // `new ORPCError` of a declared code: oRPC counts it as defined.
    conflictByClass: base
      .errors({ CONFLICT: {} })
      .meta(meta("Throws ORPCError CONFLICT, declared."))
      .input(z.object({}))
      .handler(async () => {
        throw new ORPCError("CONFLICT", { message: "Order 7 is already paid." });
      }),
    // Declared, but the data does not match the declared schema: oRPC
    // says undeclared, and so does the core.
    badData: base
      .errors({ NOT_FOUND: { data: z.object({ id: z.string() }) } })
      .meta(meta("Throws NOT_FOUND with data its declaration refuses."))
      .input(z.object({}))
      .handler(async ({ errors }) => {
        throw errors.NOT_FOUND({ message: `no row in ${SECRET}`, data: { id: 7 } });
      }),
    // An auth middleware's UNAUTHORIZED.
    authed: base
      .use(requireUser)
      .meta(meta("Needs a signed-in user."))
      .input(z.object({}))
      .handler(async () => ({ ok: true })),
  };
  return createCapabilityRegistry(router);
}

/** Every call and what the model must read: [capability, input, code, retryable, message]. */
const CALLS = [
  ...ROWS.map(([c, code, retryable]) => ["declared", { code: c }, code, retryable, declaredText(c)]),
  ...ROWS.map(([c, code, retryable, generic]) => ["undeclared", { code: c }, code, retryable, generic]),
  ["conflictByClass", {}, "EXECUTION_FAILED", false, "Order 7 is already paid."],
  ["badData", {}, "EXECUTION_FAILED", false, "The capability did not find what the call asked for."],
  ["authed", {}, "CREDENTIAL_REQUIRED", false, "The capability needs a credential the call did not carry."],
];

/** What a caller is shown of the error's `data`: only a declared error's. */
const detailsOf = (name) => (name === "declared" ? { order: 7 } : undefined);

function assertNoSecret(where, value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  assert.ok(!text.includes(SECRET), `${where} leaks the undeclared text: ${text.slice(0, 400)}`);
  assert.ok(!text.includes("No such tool"), `${where} reads as "no such tool": ${text.slice(0, 400)}`);
}

const label = (name, input) => `${name}${input.code ? ` ${input.code}` : ""}`;

describe("oRPC errors: registry.invoke", () => {
  it("each row of the table, declared and undeclared, ends in the core's code and text", async () => {
    const reg = await registry();
    for (const [name, input, code, retryable, message] of CALLS) {
      const e = await reg.invoke(name, input, { surface: "direct", actor: { id: "u1" }, context: {} }).then(
        (r) => assert.fail(`${label(name, input)} resolved ${JSON.stringify(r)}`),
        (e) => e,
      );
      assert.ok(e instanceof CapabilityError, `${label(name, input)}: ${e}`);
      assert.deepEqual(
        { code: e.code, retryable: e.retryable, message: e.message },
        { code, retryable, message },
        label(name, input),
      );
      // A declared error's data is its details; an undeclared one's (or
      // data its declaration refuses) is never shown.
      assert.deepEqual(e.details, detailsOf(name), `${label(name, input)} details`);
      assert.notEqual(e.code, "NOT_FOUND", "a domain error is never the capability-level NOT_FOUND");
      assertNoSecret(label(name, input), { e: e.toJSON(), m: e.message, s: e.stack });
    }
    reg.close();
  });

  it("a retryable row is retried under the capability's retry policy, an undeclared text never", async () => {
    let calls = 0;
    const base = agentProcedure(os.$context());
    const reg = await createCapabilityRegistry({
      busy: base
        .meta({ agent: { ...meta("Busy.").agent, retry: { maxAttempts: 2, backoffMs: 0 } } })
        .input(z.object({}))
        .handler(async () => {
          calls += 1;
          if (calls === 1) throw new ORPCError("SERVICE_UNAVAILABLE", { message: SECRET });
          return { ok: true };
        }),
    });
    const r = await reg.invoke("busy", {}, { surface: "direct", actor: { id: "u1" } });
    assert.equal(r.status, "ok");
    assert.equal(calls, 2);
    reg.close();
  });
});

describe("oRPC errors: MCP results (real Client over InMemoryTransport)", () => {
  it("each row's result reads the core's code and text, never the undeclared text", async () => {
    const reg = await registry();
    const server = new McpServer({ name: "orpc-errors", version: "1.0.0" });
    registerMcpTools(server, reg, { frame: () => ({ actor: { id: "u1" }, context: {} }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "orpc-errors", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      for (const [name, input, code, retryable, message] of CALLS) {
        const result = await client.callTool({ name, arguments: input });
        assertNoSecret(`MCP ${label(name, input)}`, result);
        assert.equal(result.isError, true);
        const err = result._meta?.["orpc-agent/error"];
        assert.deepEqual(
          { code: err?.code, retryable: err?.retryable, message: err?.message },
          { code, retryable, message },
          label(name, input),
        );
        assert.deepEqual(err?.details, detailsOf(name), `MCP ${label(name, input)} details`);
        assert.ok(result.content[0].text.startsWith(`${code}: ${message}`), result.content[0].text);
      }
    } finally {
      await client.close();
      reg.close();
    }
  });
});

describe("oRPC errors: AI SDK tool results", () => {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };

  it("each tool error is the core's CapabilityError; nothing sent to the model carries undeclared text", async () => {
    const reg = await registry();
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: CALLS.map(([toolName, input], i) => ({
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
      tools: toAiSdkTools(reg, { actor: { id: "u1" }, context: {} }),
      prompt: "Try everything.",
      stopWhen: stepCountIs(3),
    });
    const sentBack = model.doGenerateCalls[1].prompt.flatMap((m) => (m.role === "tool" ? m.content : []));
    assert.equal(sentBack.length, CALLS.length);
    assertNoSecret("tool results sent to the model", sentBack);
    const errors = result.steps.flatMap((s) => s.content.filter((p) => p.type === "tool-error"));
    assert.equal(errors.length, CALLS.length);
    for (const part of errors) {
      const [name, input, code, retryable, message] = CALLS[Number(part.toolCallId.slice(1))];
      assert.ok(part.error instanceof CapabilityError, `${label(name, input)}: ${part.error}`);
      // The failure itself is `error.error`; the thrown message is the text
      // the model reads (`CODE: message. Hint`, as every adapter sends it).
      assert.deepEqual(
        { code: part.error.code, retryable: part.error.retryable, message: part.error.error.message },
        { code, retryable, message },
        label(name, input),
      );
      assert.ok(part.error.message.startsWith(`${code}: ${message}`), part.error.message);
      assertNoSecret(`AI SDK ${label(name, input)}`, { e: part.error.toJSON(), m: part.error.message });
    }
    reg.close();
  });
});

describe("oRPC errors: the same router through oRPC's own RPCHandler", () => {
  const refund = (base) =>
    base
      .meta(meta("Refunds an order."))
      .input(z.object({ order: z.number() }))
      .handler(async ({ input }) => {
        if (input.order === 1) throw new CapabilityError("POLICY_DENIED", "Refunds are closed today.");
        if (input.order === 2)
          throw new CapabilityError("LIMIT_EXCEEDED", "Too many refunds.", { retryable: true, details: { n: 3 } });
        if (input.order === 3) throw new ORPCError("CONFLICT", { message: "Already refunded." });
        if (input.order === 4) throw new CapabilityError("INVALID_INPUT", "No such order number.");
        return { refunded: input.order };
      });

  async function served(router) {
    const handler = new RPCHandler(router);
    return createORPCClient(
      new RPCLink({
        url: "http://127.0.0.1/rpc",
        fetch: async (request) => (await handler.handle(request, { prefix: "/rpc", context: {} })).response,
      }),
    );
  }

  const expectations = [
    [1, { code: "FORBIDDEN", status: 403, message: "Refunds are closed today." }],
    [2, { code: "TOO_MANY_REQUESTS", status: 429, message: "Too many refunds.", data: { n: 3 } }],
    [3, { code: "CONFLICT", status: 409, message: "Already refunded." }],
    [4, { code: "BAD_REQUEST", status: 400, message: "No such order number." }],
  ];

  for (const [how, make] of [
    ["an agentProcedure base", () => agentProcedure(os.$context())],
    ["a plain os base with .use(capabilityErrorsToORPC)", () => os.$context().use(capabilityErrorsToORPC)],
  ]) {
    it(`${how}: HTTP clients read oRPC errors, the governed path the CapabilityError`, async () => {
      const router = { refund: refund(make()) };
      const client = await served(router);
      assert.deepEqual(await client.refund({ order: 9 }), { refunded: 9 });
      for (const [order, want] of expectations) {
        const e = await client.refund({ order }).then(
          () => assert.fail("resolved"),
          (e) => e,
        );
        assert.ok(e instanceof ORPCError, String(e));
        const got = { code: e.code, status: e.status, message: e.message };
        if (want.data !== undefined) got.data = e.data;
        assert.deepEqual(got, want);
      }
      // The governed path skips the conversion: the core reads the CapabilityError.
      const reg = await createCapabilityRegistry(router);
      const frame = { surface: "direct", actor: { id: "u1" } };
      const e = await reg.invoke("refund", { order: 1 }, frame).catch((e) => e);
      assert.deepEqual([e.code, e.message], ["POLICY_DENIED", "Refunds are closed today."]);
      const l = await reg.invoke("refund", { order: 2 }, frame).catch((e) => e);
      assert.deepEqual([l.code, l.retryable], ["LIMIT_EXCEEDED", true]);
      reg.close();
    });
  }

  it("without the middleware a CapabilityError is oRPC's 500 (what the middleware is for)", async () => {
    const client = await served({ refund: refund(os.$context()) });
    const e = await client.refund({ order: 1 }).catch((e) => e);
    assert.deepEqual([e.code, e.status], ["INTERNAL_SERVER_ERROR", 500]);
  });
});
