// Limits through the Node binding's public API (issue 10, item 5): every
// case of tests/vectors/limits/limits.json — input size, nesting depth, keys
// per object, string and key length in UTF-8 bytes, pending approvals per
// actor on the memory and SQLite stores — gives the typed error the vector
// names (LIMIT_EXCEEDED with details {limit, max}) and runs no handler.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";

import { os } from "@orpc/server";

import { agentProcedure, CapabilityError, createCapabilityRegistry } from "@orpc-agent/core";

import { VECTORS } from "../helpers.js";

const V = JSON.parse(readFileSync(join(VECTORS, "limits", "limits.json"), "utf8"));

/** The generators of tests/vectors/README.md, section limits. */
export function generate(g) {
  if (g.depth !== undefined) {
    let a = [];
    for (let i = 1; i < g.depth - 1; i++) a = [a];
    return { v: a };
  }
  if (g.keys !== undefined) return Object.fromEntries(Array.from({ length: g.keys }, (_, i) => [`k${i}`, 0]));
  if (g.string !== undefined) return { text: (g.char ?? "a").repeat(g.string) };
  if (g.key !== undefined) return { ["a".repeat(g.key)]: 0 };
  if (g.size !== undefined) {
    const chunks = [];
    let remaining = g.size - 13;
    while (remaining > 0) {
      if (chunks.length) remaining -= 1;
      const take = Math.min(remaining - 2, 60000);
      chunks.push("a".repeat(take));
      remaining -= take + 2;
    }
    return { chunks };
  }
  throw new Error(`unknown generator ${JSON.stringify(g)}`);
}

/** The identity validator the vectors ask for ("host input validation on"). */
const identity = { "~standard": { version: 1, vendor: "limits", validate: (value) => ({ value }) } };

async function limitsRegistry(options = {}) {
  const calls = { count: 0, validated: 0 };
  const base = agentProcedure(os);
  const router = {};
  for (const [id, { meta }] of Object.entries(V.capabilities)) {
    const [ns, name] = id.split(".");
    const validator = {
      "~standard": {
        ...identity["~standard"],
        validate: (value) => {
          calls.validated++;
          return { value };
        },
      },
    };
    router[ns] ??= {};
    router[ns][name] = base
      .meta({ agent: meta })
      .input(validator)
      .handler(async () => {
        calls.count++;
        return { ok: true };
      });
  }
  return { registry: await createCapabilityRegistry(router, options), calls };
}

function check(name, settled, expect) {
  if (expect.status === "error") {
    assert.equal(
      settled.ok,
      false,
      `${name}: expected ${expect.code}, got ${JSON.stringify(settled.value)?.slice(0, 200)}`,
    );
    assert.ok(settled.error instanceof CapabilityError, `${name}: ${settled.error}`);
    assert.equal(settled.error.code, expect.code, `${name}: ${settled.error.message}`);
    if (expect.details) assert.deepEqual(settled.error.details, expect.details, name);
    if (expect.code === "LIMIT_EXCEEDED") {
      assert.equal(settled.error.kind, "std:invalid-args");
      assert.equal(settled.error.retryable, false);
    }
  } else {
    assert.equal(settled.ok, true, `${name}: ${settled.error?.code} ${settled.error?.message}`);
    assert.equal(settled.value.status, expect.status, name);
  }
}

const settle = (p) =>
  p.then(
    (value) => ({ ok: true, value }),
    (error) => ({ ok: false, error }),
  );

describe("limits vectors through registry.invoke", () => {
  it("the generators make what the README says", () => {
    assert.equal(JSON.stringify(generate({ depth: 3 })), '{"v":[[]]}');
    for (const n of [1048576, 1048577, 100]) assert.equal(Buffer.byteLength(JSON.stringify(generate({ size: n }))), n);
  });

  for (const c of V.cases) {
    it(c.name, async () => {
      const { registry, calls } = await limitsRegistry();
      const settled = await settle(
        registry.invoke(c.capability, generate(c.generate), { surface: V.surface, actor: { id: "a1" } }),
      );
      check(c.name, settled, c.expect);
      assert.equal(calls.count, c.handlerCalls, `${c.name}: handler calls`);
      if (c.expect.code === "LIMIT_EXCEEDED") {
        assert.equal(calls.validated, 0, `${c.name}: no validator sees an over-limit input`);
        assert.doesNotMatch(settled.error.message, /aaaa|k1024|chunks/, "the message names the limit, not the input");
      }
    });
  }
});

describe("pending approvals per actor", () => {
  for (const store of ["memory", "sqlite"]) {
    for (const p of V.pending) {
      it(`${p.name} (${store})`, async () => {
        const approvalStore =
          store === "memory" ? "memory" : { sqlite: join(mkdtempSync(join(tmpdir(), "orpc-limits-")), "a.db") };
        const { registry, calls } = await limitsRegistry({ approvalStore });
        for (const step of p.steps) {
          for (let i = 0; i < step.times; i++) {
            const settled = await settle(
              // A case's own surface (on MCP a repeated identical call finds its request).
              registry.invoke(p.capability, p.input, { surface: p.surface ?? V.surface, actor: { id: step.actor } }),
            );
            check(`${p.name} ${step.actor} #${i + 1}`, settled, step.expect);
          }
        }
        assert.equal(calls.count, 0);
        registry.close();
      });
    }
  }
});

describe("input limits on every path into the pipeline", () => {
  const meta = { description: "Raw input.", expose: { direct: true, mcp: true }, sideEffect: "none", risk: "low" };

  it("without an input schema, by tool name, with an audit subscriber, and frames of every shape", async () => {
    let runs = 0;
    const records = [];
    const registry = await createCapabilityRegistry(
      {
        raw: {
          take: agentProcedure(os)
            .meta({ agent: meta })
            .handler(async () => ++runs),
        },
      },
      { audit: (r) => records.push(r) },
    );
    const deep = generate({ depth: 65 });
    const frames = [
      { surface: "direct" },
      { surface: "mcp", actor: { id: "a1" } },
      { surface: "mcp", actor: { id: "a1", roles: ["x"] }, requestId: "r" },
    ];
    for (const name of ["raw.take", "raw_take"]) {
      for (const frame of frames) {
        const settled = await settle(registry.invoke(name, deep, frame));
        check(`${name} ${JSON.stringify(frame)}`, settled, {
          status: "error",
          code: "LIMIT_EXCEEDED",
          details: { limit: "depth", max: 64 },
        });
      }
    }
    assert.equal(runs, 0);
    assert.ok(
      records.every((r) => r.event === "finished" && r.outcome === "LIMIT_EXCEEDED"),
      JSON.stringify(records[0]),
    );
  });

  it("inputs with no JSON text are measured too: a BigInt by its digits, a cycle as too deep (as in Python)", async () => {
    let runs = 0;
    const registry = await createCapabilityRegistry({
      raw: {
        take: agentProcedure(os)
          .meta({ agent: meta })
          .handler(async ({ input }) => {
            runs++;
            return typeof input;
          }),
      },
    });
    const cyclic = {};
    cyclic.self = cyclic;
    assert.deepEqual(await registry.invoke("raw.take", 10n, { surface: "direct" }), { status: "ok", output: "bigint" });
    assert.deepEqual(await registry.invoke("raw.take", { n: 10n, s: "a".repeat(65_536) }, { surface: "direct" }), {
      status: "ok",
      output: "object",
    });
    // A BigInt beside an over-limit string does not hide it.
    const long = await settle(registry.invoke("raw.take", { n: 1n, s: "a".repeat(100_000) }, { surface: "direct" }));
    check("bigint + long string", long, {
      status: "error",
      code: "LIMIT_EXCEEDED",
      details: { limit: "stringBytes", max: 65536 },
    });
    const keys = await settle(
      registry.invoke(
        "raw.take",
        { n: 1n, ...Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])) },
        { surface: "direct" },
      ),
    );
    check("bigint + many keys", keys, {
      status: "error",
      code: "LIMIT_EXCEEDED",
      details: { limit: "objectKeys", max: 1024 },
    });
    const cycle = await settle(registry.invoke("raw.take", cyclic, { surface: "direct" }));
    check("a cycle", cycle, { status: "error", code: "LIMIT_EXCEEDED", details: { limit: "depth", max: 64 } });
    // A value whose toJSON throws has no text to measure: the app's own value, handled as before.
    const odd = {
      n: 1n,
      v: {
        toJSON() {
          throw new TypeError("no JSON for me");
        },
      },
    };
    assert.deepEqual(await registry.invoke("raw.take", odd, { surface: "direct" }), { status: "ok", output: "object" });
    assert.equal(runs, 3);
  });

  it("lone surrogates (which JSON.stringify escapes and serde refuses) are still measured", async () => {
    let runs = 0;
    const registry = await createCapabilityRegistry({
      raw: {
        take: agentProcedure(os)
          .meta({ agent: meta })
          .handler(async () => ++runs),
      },
    });
    const settled = await settle(registry.invoke("raw.take", { s: "\ud800".repeat(30_000) }, { surface: "direct" }));
    check("surrogates", settled, {
      status: "error",
      code: "LIMIT_EXCEEDED",
      details: { limit: "stringBytes", max: 65536 },
    });
    assert.deepEqual(await registry.invoke("raw.take", { s: "a\ud800b".repeat(100) }, { surface: "direct" }), {
      status: "ok",
      output: 1,
    });
    assert.equal(runs, 1);
  });

  it("an unexposed capability is NOT_FOUND, whatever the input's size (SI-8)", async () => {
    const registry = await createCapabilityRegistry({
      raw: {
        take: agentProcedure(os)
          .meta({ agent: { ...meta, expose: { mcp: true } } })
          .handler(async () => 1),
      },
    });
    const settled = await settle(registry.invoke("raw.take", generate({ depth: 65 }), { surface: "direct" }));
    check("unexposed", settled, { status: "error", code: "NOT_FOUND" });
  });
});
