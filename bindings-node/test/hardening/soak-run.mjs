// Soak run (issue 10, item 3): many governed invocations through the Node
// binding, mixed — ok, invalid input, policy denied, approval round trips
// (create + approve + resume), timeouts, handler errors — with resident
// memory sampled after warm-up and at the end, and the leak checks: no
// pending approval rows, no timers, no invocations in flight.
//
// Used by test/hardening/soak.test.mjs (short) and bench/soak/node.mjs
// (`make soak-node`, one million). Every memory sample follows a full GC.

import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, deny } from "@orpc-agent/core";

/** The mix, per cycle of 10 slots; an approval slot is 2 invocations (create, resume). */
export const MIX = ["ok", "ok", "ok", "invalid", "denied", "approval", "timeout", "error", "ok"];

async function soakRegistry() {
  const base = agentProcedure(os.$context());
  let audited = 0;
  let logged = 0;
  const router = {
    soak: {
      read: base
        .meta({ agent: { description: "Read.", expose: { direct: true }, sideEffect: "read", risk: "low" } })
        .input(z.object({ n: z.number() }))
        .handler(async ({ input }) => ({ n: input.n, at: "x" })),
      purge: base
        .meta({
          agent: {
            description: "Denied.",
            expose: { direct: true },
            sideEffect: "destructive",
            risk: "high",
            policies: [{ name: "never", evaluate: () => deny("never") }],
          },
        })
        .input(z.object({ n: z.number() }))
        .handler(async () => ({ purged: true })),
      write: base
        .meta({
          agent: {
            description: "Approved write.",
            expose: { direct: true },
            sideEffect: "write",
            risk: "high",
            approval: { required: true },
          },
        })
        .input(z.object({ n: z.number() }))
        .handler(async ({ input }) => ({ wrote: input.n })),
      slow: base
        .meta({
          agent: { description: "Times out.", expose: { direct: true }, sideEffect: "read", risk: "low", timeoutMs: 2 },
        })
        .input(z.object({ n: z.number() }))
        .handler(
          ({ signal }) =>
            new Promise((resolve, reject) => {
              const t = setTimeout(resolve, 60_000);
              signal.addEventListener(
                "abort",
                () => {
                  clearTimeout(t);
                  reject(signal.reason);
                },
                { once: true },
              );
            }),
        ),
      fail: base
        .meta({ agent: { description: "Fails.", expose: { direct: true }, sideEffect: "read", risk: "low" } })
        .input(z.object({ n: z.number() }))
        .handler(async () => {
          throw new Error("handler failure");
        }),
    },
  };
  // A million calls, a share of them failing on purpose: the operator's
  // logger would print each one; counted instead, to prove it is called.
  const registry = await createCapabilityRegistry(router, {
    audit: () => void audited++,
    logger: { warn: () => void logged++ },
  });
  return { registry, audited: () => audited, logged: () => logged };
}

const FRAME = { surface: "direct", actor: { id: "soak" } };

/** Runs one slot; returns the number of governed invocations it made. */
async function slot(registry, kind, n, tally) {
  const expectCode = async (p, code) => {
    try {
      await p;
      tally.unexpected++;
    } catch (e) {
      if (e.code === code) tally[kind]++;
      else tally.unexpected++;
    }
  };
  switch (kind) {
    case "ok": {
      const r = await registry.invoke("soak.read", { n }, FRAME);
      if (r.status === "ok" && r.output.n === n) tally.ok++;
      else tally.unexpected++;
      return 1;
    }
    case "invalid":
      await expectCode(registry.invoke("soak.read", { n: "not a number" }, FRAME), "INVALID_INPUT");
      return 1;
    case "denied":
      await expectCode(registry.invoke("soak.purge", { n }, FRAME), "POLICY_DENIED");
      return 1;
    case "timeout":
      await expectCode(registry.invoke("soak.slow", { n }, FRAME), "TIMEOUT");
      return 1;
    case "error":
      await expectCode(registry.invoke("soak.fail", { n }, FRAME), "EXECUTION_FAILED");
      return 1;
    case "approval": {
      const pending = await registry.invoke("soak.write", { n }, FRAME);
      if (pending.status !== "approval_required") {
        tally.unexpected++;
        return 1;
      }
      await registry.approvals.approve(pending.request.id, { approver: "ops" });
      const done = await registry.resume(pending.request.id);
      if (done.status === "ok" && done.output.wrote === n) tally.approval++;
      else tally.unexpected++;
      return 2;
    }
  }
  throw new Error(`unknown slot ${kind}`);
}

async function runInvocations(registry, total, concurrency, tally) {
  let made = 0;
  let next = 0;
  const worker = async () => {
    while (made < total) {
      const i = next++;
      const n = await slot(registry, MIX[i % MIX.length], i, tally);
      made += n; // after the await: `made += await …` would add to a stale value
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return made;
}

/** A full GC before each sample, with or without --expose-gc. */
const gc =
  globalThis.gc ??
  (() => {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc");
  })();

function memory() {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout" || r === "Immediate").length;

/**
 * Soaks `total` invocations after `warmup` ones, `concurrency` at a time.
 * Returns the figures and the leak counts; asserts nothing (callers do).
 */
export async function soak({ total, warmup = Math.min(50_000, Math.max(5_000, total / 10)), concurrency = 32 }) {
  const { registry, audited } = await soakRegistry();
  const tally = { ok: 0, invalid: 0, denied: 0, approval: 0, timeout: 0, error: 0, unexpected: 0 };
  const timersBefore = timers();
  await runInvocations(registry, warmup, concurrency, { ...tally });
  await sleep(20); // let the last aborted timers and microtasks drain
  const start = memory();
  const t0 = performance.now();
  const made = await runInvocations(registry, total, concurrency, tally);
  const seconds = (performance.now() - t0) / 1000;
  await sleep(20);
  const end = memory();
  let rows = 0;
  let pending = 0;
  for (let cursor; ; ) {
    const page = await registry.approvals.page({ limit: 1000, ...(cursor ? { cursor } : {}) });
    rows += page.requests.length;
    pending += page.requests.filter((r) => r.status === "pending" || r.status === "approved").length;
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  const figures = {
    invocations: made,
    seconds,
    perSecond: made / seconds,
    rssStart: start.rss,
    rssEnd: end.rss,
    heapStart: start.heapUsed,
    heapEnd: end.heapUsed,
    approvalRows: rows,
    unfinishedApprovals: pending,
    timersLeft: timers() - timersBefore,
    inFlight: registry.inFlight(),
    audited: audited(),
    tally,
  };
  registry.close();
  return figures;
}

export const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

/** Resident-memory growth allowed once warm (allocator arenas, V8 code and map space)... */
export const RSS_GROWTH_BOUND = 64 * 1024 * 1024;
/**
 * ...plus this much per approval row created while measuring: the memory
 * store keeps decided and consumed requests (a second resume must say
 * APPROVAL_CONSUMED), so they are retained data, not a leak (bench/soak/README.md).
 */
export const RSS_PER_APPROVAL_ROW = 2048;
/** JS heap growth allowed once warm: nothing per invocation survives a GC. */
export const HEAP_GROWTH_BOUND = 4 * 1024 * 1024;

export const rssBound = (f) => RSS_GROWTH_BOUND + RSS_PER_APPROVAL_ROW * f.tally.approval;

/** The leak checks and bounds; empty when the soak passed. */
export function problems(f) {
  return [
    f.tally.unexpected !== 0 && `unexpected outcomes: ${JSON.stringify(f.tally)}`,
    f.unfinishedApprovals !== 0 && `unfinished approvals: ${f.unfinishedApprovals}`,
    f.timersLeft !== 0 && `timers left: ${f.timersLeft}`,
    f.inFlight !== 0 && `in flight: ${f.inFlight}`,
    f.rssEnd - f.rssStart >= rssBound(f) && `RSS grew ${mb(f.rssEnd - f.rssStart)} MB, bound ${mb(rssBound(f))} MB`,
    f.heapEnd - f.heapStart >= HEAP_GROWTH_BOUND && `heap grew ${mb(f.heapEnd - f.heapStart)} MB`,
  ].filter(Boolean);
}

export const summary = (f) =>
  `soak-node: ${f.invocations} invocations in ${f.seconds.toFixed(1)} s (${Math.round(f.perSecond)}/s); ` +
  `RSS start ${mb(f.rssStart)} MB, end ${mb(f.rssEnd)} MB (growth ${mb(f.rssEnd - f.rssStart)}, bound ${mb(rssBound(f))}); ` +
  `heap ${mb(f.heapStart)} -> ${mb(f.heapEnd)} MB; approval rows ${f.approvalRows} (unfinished ${f.unfinishedApprovals}); ` +
  `timers left ${f.timersLeft}; in flight ${f.inFlight}; tally ${JSON.stringify(f.tally)}`;
