// OpenTelemetry (issue 20): one span per governed call after the GenAI
// conventions for tool execution, with the governance outcome, tested with
// the real OpenTelemetry SDK and its in-memory exporters.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { os } from "@orpc/server";
import * as z from "zod";
import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
// Read on demand (collect()), never on a timer.
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
after(async () => {
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

const base = agentProcedure(os.$context());
const inner = tracerProvider.getTracer("the-app");
const records = [];
const registry = await createCapabilityRegistry(
  {
    orders: {
      lookup: base
        .meta({
          agent: {
            description: "Look up an order.",
            expose: { mcp: true, aiSdk: true },
            sideEffect: "read",
            risk: "low",
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input }) =>
          // The handler's own span is a child of the governed call's.
          inner.startActiveSpan("db.query", (s) => {
            s.end();
            return { id: input.id, card: "4111 1111 1111 1111" };
          }),
        ),
      cancel: base
        .meta({
          agent: {
            description: "Cancel an order.",
            expose: { mcp: true },
            sideEffect: "write",
            risk: "medium",
            policies: [{ name: "no-guests", when: { actorRole: ["guest"] }, decision: "deny" }],
            approval: { required: true },
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input }) => ({ cancelled: input.id })),
    },
  },
  { audit: (r) => records.push(r), telemetry: { tracerProvider, meterProvider } },
);

const PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const finished = () => records.filter((r) => r.event === "finished");
const byName = (name) => spans.getFinishedSpans().filter((s) => s.name === name);

test("an ok call: one execute_tool span, child of the frame's traceparent, whose ids the audit record carries", async () => {
  spans.reset();
  records.length = 0;
  const out = await registry.invoke(
    "orders_lookup",
    { id: "o-1" },
    { surface: "aiSdk", actor: { id: "ann" }, requestId: "call_7", trace: { traceparent: PARENT } },
  );
  assert.equal(out.status, "ok");
  const [span] = byName("execute_tool orders_lookup");
  assert.ok(
    span,
    spans
      .getFinishedSpans()
      .map((s) => s.name)
      .join(),
  );
  const sc = span.spanContext();
  assert.equal(sc.traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
  assert.equal(span.parentSpanContext?.spanId, "00f067aa0ba902b7");
  assert.equal(finished()[0].traceparent, `00-${sc.traceId}-${sc.spanId}-01`);
  assert.deepEqual(span.attributes, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "orders_lookup",
    "gen_ai.tool.type": "function",
    "gen_ai.tool.call.id": "call_7",
    "orpc_agent.capability.id": "orders.lookup",
    "orpc_agent.surface": "aiSdk",
    "orpc_agent.outcome": "ok",
    "orpc_agent.stage": "finished",
    "orpc_agent.attempts": 1,
    "orpc_agent.resumed": false,
    "orpc_agent.request.id": "call_7",
  });
  assert.equal(span.status.code, SpanStatusCode.UNSET);
  // No payload reaches the span.
  assert.doesNotMatch(JSON.stringify(span.attributes), /4111|o-1/);
  const [db] = byName("db.query");
  assert.equal(db.parentSpanContext?.spanId, sc.spanId, "the handler's span is the call span's child");
});

test("without a frame trace the span's parent is the active span", async () => {
  spans.reset();
  const app = inner.startSpan("http.request");
  await context.with(trace.setSpan(context.active(), app), () =>
    registry.invoke("orders.lookup", { id: "o-2" }, { surface: "mcp" }),
  );
  app.end();
  const [span] = byName("execute_tool orders.lookup");
  assert.equal(span.parentSpanContext?.spanId, app.spanContext().spanId);
  assert.equal(span.spanContext().traceId, app.spanContext().traceId);
});

test("a denied call: status ERROR, error.type and the deciding policy; an approval: its id and state", async () => {
  spans.reset();
  const denied = await registry
    .invoke("orders.cancel", { id: "o-3" }, { surface: "mcp", actor: { id: "g", roles: ["guest"] } })
    .catch((e) => e);
  assert.equal(denied.code, "POLICY_DENIED");
  const [d] = byName("execute_tool orders.cancel");
  assert.equal(d.status.code, SpanStatusCode.ERROR);
  assert.equal(d.status.message, "POLICY_DENIED");
  assert.equal(d.attributes["error.type"], "POLICY_DENIED");
  assert.equal(d.attributes["orpc_agent.policy.decision"], "deny");
  assert.equal(d.attributes["orpc_agent.policy.name"], "no-guests");

  spans.reset();
  const made = await registry.invoke("orders.cancel", { id: "o-4" }, { surface: "mcp", actor: { id: "ann" } });
  assert.equal(made.status, "approval_required");
  const [pending] = byName("execute_tool orders.cancel");
  assert.equal(pending.status.code, SpanStatusCode.UNSET);
  assert.equal(pending.attributes["orpc_agent.approval.state"], "pending");
  assert.equal(pending.attributes["orpc_agent.approval.id"], made.request.id);

  await registry.approvals.approve(made.request.id, { approver: "bob" });
  spans.reset();
  const ran = await registry.resume(made.request.id);
  assert.equal(ran.status, "ok");
  const [resumed] = spans.getFinishedSpans();
  assert.equal(resumed.name, "execute_tool orders.cancel");
  assert.equal(resumed.attributes["orpc_agent.resumed"], true);
  assert.equal(resumed.attributes["orpc_agent.approval.state"], "consumed");
});

test("a call counter and a duration histogram per capability and outcome", async () => {
  const { resourceMetrics } = await reader.collect();
  const metrics = resourceMetrics.scopeMetrics.find((s) => s.scope.name === "orpc-agent").metrics;
  const calls = metrics.find((m) => m.descriptor.name === "orpc_agent.calls");
  const points = calls.dataPoints.map((p) => [
    p.attributes["orpc_agent.capability.id"],
    p.attributes["orpc_agent.outcome"],
    p.value,
  ]);
  assert.deepEqual(points.filter(([id]) => id === "orders.cancel").sort(), [
    ["orders.cancel", "POLICY_DENIED", 1],
    ["orders.cancel", "approval_required", 1],
    ["orders.cancel", "ok", 1],
  ]);
  const duration = metrics.find((m) => m.descriptor.name === "orpc_agent.call.duration");
  assert.equal(duration.descriptor.unit, "s");
  const lookups = duration.dataPoints.find(
    (p) =>
      p.attributes["orpc_agent.capability.id"] === "orders.lookup" && p.attributes["orpc_agent.surface"] === "aiSdk",
  );
  assert.equal(lookups.value.count, 1);
  assert.ok(!JSON.stringify(metrics.map((m) => m.dataPoints.map((p) => p.attributes))).includes("orders_lookup"));
});

test("telemetry {payloads: true}: the span carries the redacted output, never the input; audit records stay without it", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const audited = [];
  const opted = await createCapabilityRegistry(
    {
      cards: {
        show: base
          .meta({
            agent: {
              description: "Show a card.",
              expose: { mcp: true },
              sideEffect: "read",
              risk: "low",
              redact: { output: (out) => ({ ...out, number: "**** 1111" }) },
            },
          })
          .input(z.object({ holder: z.string() }))
          .handler(async ({ input }) => ({ holder: input.holder, number: "4111 1111 1111 1111" })),
      },
    },
    { audit: (r) => audited.push(r), telemetry: { tracerProvider: provider, payloads: true } },
  );
  const out = await opted.invoke("cards.show", { holder: "Ann Example" }, { surface: "mcp" });
  assert.equal(out.status, "ok");
  const [span] = exporter.getFinishedSpans();
  assert.deepEqual(JSON.parse(span.attributes["gen_ai.tool.call.result"]), {
    holder: "Ann Example",
    number: "**** 1111",
  });
  assert.ok(!("gen_ai.tool.call.arguments" in span.attributes), "never the input");
  assert.doesNotMatch(JSON.stringify(span.attributes), /4111/);
  const finishedRecord = audited.find((r) => r.event === "finished");
  assert.equal(finishedRecord.output, undefined, "audit payloads were not asked for");
  // Without the option no payload reaches a span (the first test's registry).
  await provider.shutdown();
  await assert.rejects(
    createCapabilityRegistry({}, { telemetry: { payloads: "yes" } }),
    /options\.telemetry\.payloads/,
  );
});

test("options.telemetry is checked", async () => {
  await assert.rejects(
    createCapabilityRegistry({}, { telemetry: { tracerProvider: {} } }),
    /options\.telemetry\.tracerProvider/,
  );
  await assert.rejects(createCapabilityRegistry({}, { telemetry: { tracer: {} } }), /no option `tracer`/);
});

test("a span processor that throws changes nothing about the call: ok, audited once, the span ended", async () => {
  const ended = [];
  const throwing = new BasicTracerProvider({
    spanProcessors: [
      {
        onStart() {},
        onEnd(span) {
          ended.push(span.name);
          throw new Error("exporter down");
        },
        forceFlush: async () => {},
        shutdown: async () => {},
      },
    ],
  });
  const seen = [];
  const reg = await createCapabilityRegistry(
    {
      ping: base
        .meta({ agent: { description: "Ping.", expose: { mcp: true }, sideEffect: "read", risk: "low" } })
        .input(z.object({}))
        .handler(async () => "pong"),
    },
    { audit: (r) => seen.push(r.event), telemetry: { tracerProvider: throwing } },
  );
  const out = await reg.invoke("ping", {}, { surface: "mcp" });
  assert.deepEqual(out, { status: "ok", output: "pong" });
  assert.deepEqual(seen, ["started", "finished"]);
  assert.deepEqual(ended, ["execute_tool ping"]);
  reg.close();
});

// The trace state the audit record carries is the one the core kept from
// the frame, with telemetry on as off: the OpenTelemetry API's own parse
// drops members the core keeps (a key that starts with a digit) and whole
// states past 512 characters, and Python's SDK drops others.
test("with telemetry the recorded tracestate is the one the core kept, as without", async () => {
  const plainRecords = [];
  const plain = await createCapabilityRegistry(
    {
      orders: {
        lookup: base
          .meta({ agent: { description: "Look up.", expose: { aiSdk: true }, sideEffect: "read", risk: "low" } })
          .input(z.object({ id: z.string() }))
          .handler(async ({ input }) => input),
      },
    },
    { audit: (r) => plainRecords.push(r) },
  );
  const long = Array.from({ length: 30 }, (_, i) => `key${i}=${"v".repeat(20)}`).join(",");
  for (const tracestate of ["a=1,1special=2", "a=1,foo@@bar=2", long]) {
    records.length = 0;
    plainRecords.length = 0;
    const frame = { surface: "aiSdk", actor: { id: "ann" }, trace: { traceparent: PARENT, tracestate } };
    await registry.invoke("orders_lookup", { id: "o-1" }, frame);
    await plain.invoke("orders_lookup", { id: "o-1" }, frame);
    const kept = plainRecords.find((r) => r.event === "finished").tracestate;
    assert.ok(kept, tracestate);
    assert.equal(finished()[0].tracestate, kept, tracestate);
  }
});
