/**
 * OpenTelemetry for governed calls (`createCapabilityRegistry(…, {telemetry})`):
 * one span per call, a call counter and a duration histogram, through
 * `@opentelemetry/api` (an optional peer dependency, loaded only when
 * telemetry is asked for).
 *
 * The span's name and attributes (the GenAI conventions for tool execution
 * and the governance outcome) are the core's (`orpc_agent_core::telemetry`),
 * computed from the call's finished audit record; this module starts the
 * span, makes it the parent the core records (`traceparent` of the audit
 * record = this span), and hands the core's view to the API.
 */
import type * as OtelApi from "@opentelemetry/api";
import { N } from "./native.js";
import type { TraceContext } from "./types.js";

/** Where spans and metrics go; by default the globally registered providers. */
export interface TelemetryOptions {
  tracerProvider?: OtelApi.TracerProvider;
  meterProvider?: OtelApi.MeterProvider;
  /**
   * Spans carry the call's output, redacted by the capability's
   * `redact.output` hook, as `gen_ai.tool.call.result` (JSON text). Off by
   * default; the input is never on a span.
   */
  payloads?: boolean;
}

interface CallView {
  spanName: string;
  attributes: OtelApi.Attributes;
  error: string | null;
  metricAttributes: OtelApi.Attributes;
  durationS: number;
}

const NAMES: { scopeName: string; callsMetric: string; durationMetric: string } = JSON.parse(N.telemetryNames());

/** One governed call's span, begun just before the core starts the call. */
export class CallSpan {
  readonly #telemetry: Telemetry;
  readonly #span: OtelApi.Span;
  readonly #context: OtelApi.Context;
  /** The trace the core records for this call: this span's, when it has valid ids. */
  readonly trace: TraceContext | undefined;
  #ended = false;

  /** @internal */
  constructor(telemetry: Telemetry, span: OtelApi.Span, context: OtelApi.Context, trace: TraceContext | undefined) {
    this.#telemetry = telemetry;
    this.#span = span;
    this.#context = context;
    this.trace = trace;
  }

  /** Runs `fn` with this span active, so the handler's own spans are its children. */
  run<T>(fn: () => T): T {
    return this.#telemetry.api.context.with(this.#context, fn);
  }

  /** Ends the span with the core's view of the finished call (`invokeTelemetry`). */
  finish(viewJson: string): void {
    if (this.#ended) return;
    this.#ended = true;
    // Telemetry is a report, never a gate: what the OpenTelemetry SDK (or
    // an app's span processor) throws changes nothing about the call.
    try {
      const v: CallView = JSON.parse(viewJson);
      const api = this.#telemetry.api;
      try {
        this.#span.updateName(v.spanName);
        this.#span.setAttributes(v.attributes);
        if (v.error !== null) this.#span.setStatus({ code: api.SpanStatusCode.ERROR, message: v.error });
      } finally {
        this.#span.end();
      }
      this.#telemetry.calls.add(1, v.metricAttributes);
      this.#telemetry.duration.record(v.durationS, v.metricAttributes);
    } catch {
      // See above.
    }
  }

  /**
   * Ends a span with no finished record to report (the core never started
   * the call: its start crossing threw), only the error's code; a span
   * already ended stays as it is.
   */
  endWithError(code: string): void {
    if (this.#ended) return;
    this.#ended = true;
    try {
      try {
        this.#span.setAttribute("error.type", code);
        this.#span.setStatus({ code: this.#telemetry.api.SpanStatusCode.ERROR, message: code });
      } finally {
        this.#span.end();
      }
    } catch {
      // Telemetry is a report, never a gate.
    }
  }
}

export class Telemetry {
  /** @internal */
  readonly api: typeof OtelApi;
  readonly #tracer: OtelApi.Tracer;
  /** @internal */
  readonly calls: OtelApi.Counter;
  /** @internal */
  readonly duration: OtelApi.Histogram;
  /** @internal Spans carry the redacted output. */
  readonly payloads: boolean;

  private constructor(api: typeof OtelApi, options: TelemetryOptions) {
    this.api = api;
    this.payloads = options.payloads === true;
    const tracers = options.tracerProvider ?? api.trace.getTracerProvider();
    const meters = options.meterProvider ?? api.metrics.getMeterProvider();
    this.#tracer = tracers.getTracer(NAMES.scopeName);
    const meter = meters.getMeter(NAMES.scopeName);
    this.calls = meter.createCounter(NAMES.callsMetric, {
      description: "Governed capability calls, by capability, surface and outcome.",
    });
    this.duration = meter.createHistogram(NAMES.durationMetric, {
      description: "Duration of governed capability calls.",
      unit: "s",
    });
  }

  /** Loads `@opentelemetry/api`; a clear error when it is not installed. */
  static async open(options: TelemetryOptions): Promise<Telemetry> {
    let api: typeof OtelApi;
    try {
      api = await import("@opentelemetry/api");
    } catch {
      throw new Error(
        "createCapabilityRegistry: options.telemetry needs the package @opentelemetry/api (npm install @opentelemetry/api).",
      );
    }
    return new Telemetry(api, options);
  }

  /**
   * Starts the span of a call made under `trace` (the frame's): its parent
   * is that trace context when the core keeps it, else the active context.
   */
  begin(trace: TraceContext | undefined): CallSpan {
    const api = this.api;
    let parent = api.context.active();
    if (trace !== undefined && typeof trace.traceparent === "string") {
      const text = N.telemetrySpanParent(
        trace.traceparent,
        typeof trace.tracestate === "string" ? trace.tracestate : null,
      );
      if (text !== null) {
        const p = JSON.parse(text);
        parent = api.trace.setSpanContext(parent, {
          traceId: p.traceId,
          spanId: p.spanId,
          traceFlags: p.traceFlags,
          isRemote: true,
          traceState: p.tracestate === null ? undefined : api.createTraceState(p.tracestate),
        });
      }
    }
    const span = this.#tracer.startSpan(
      "execute_tool",
      { kind: api.SpanKind.INTERNAL, attributes: { "gen_ai.operation.name": "execute_tool" } },
      parent,
    );
    const sc = span.spanContext();
    let recorded: TraceContext | undefined = trace;
    if (api.isSpanContextValid(sc)) {
      // The span's context as the core records it (`telemetry::recorded_trace`:
      // the trace state the core kept when the span continues the frame's).
      const frameTrace = trace !== undefined && typeof trace.traceparent === "string" ? trace : undefined;
      recorded = JSON.parse(
        N.telemetryRecordedTrace(
          frameTrace?.traceparent ?? null,
          typeof frameTrace?.tracestate === "string" ? frameTrace.tracestate : null,
          sc.traceId,
          sc.spanId,
          sc.traceFlags,
          sc.traceState?.serialize() ?? null,
        ),
      );
    }
    return new CallSpan(this, span, api.trace.setSpan(parent, span), recorded);
  }
}
