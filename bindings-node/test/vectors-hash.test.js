// Every hash vector (tests/vectors/hash) through the public API: the
// exported `inputHash`, and for JSON inputs also the `inputHash` of a real
// approval request made by the pipeline. `input_cbor` cases are decoded by
// the small CBOR reader below into JavaScript values (NaN, Map with a
// non-text key, Uint8Array, a tag object) and hashed as host values.
// `host_integer` cases are read with BigInt for integers beyond ±2^53 (the
// README asks for a big-integer-preserving parse) and hashed as BigInts.
// No case is skipped.
import assert from "node:assert/strict";
import { test } from "node:test";
import { os } from "@orpc/server";

import { CapabilityError, createCapabilityRegistry, inputHash } from "@orpc-agent/core";

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { loadVectors, VECTORS } from "./helpers.js";

class Tag {
  constructor(tag, value) {
    this.tag = tag;
    this.value = value;
  }
}

/** A minimal CBOR decoder (RFC 8949) for the vectors' inputs. */
function decodeCbor(hex) {
  const b = Buffer.from(hex, "hex");
  let i = 0;
  const arg = (info) => {
    if (info < 24) return info;
    const n = { 24: 1, 25: 2, 26: 4, 27: 8 }[info];
    let v = 0n;
    for (let k = 0; k < n; k++) v = (v << 8n) | BigInt(b[i++]);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  const half = (h) => {
    const e = (h >> 10) & 0x1f,
      m = h & 0x3ff,
      s = h & 0x8000 ? -1 : 1;
    if (e === 0) return s * m * 2 ** -24;
    if (e === 31) return m ? NaN : s * Infinity;
    return s * (1 + m / 1024) * 2 ** (e - 15);
  };
  const item = () => {
    const ib = b[i++];
    const major = ib >> 5,
      info = ib & 31;
    if (major === 7) {
      if (info === 20) return false;
      if (info === 21) return true;
      if (info === 22) return null;
      if (info === 23) return undefined;
      if (info === 25) {
        const v = half(b.readUInt16BE(i));
        i += 2;
        return v;
      }
      if (info === 26) {
        const v = b.readFloatBE(i);
        i += 4;
        return v;
      }
      if (info === 27) {
        const v = b.readDoubleBE(i);
        i += 8;
        return v;
      }
      throw new Error(`simple ${info}`);
    }
    const n = arg(info);
    switch (major) {
      case 0:
        return n;
      case 1:
        return typeof n === "bigint" ? -1n - n : -1 - n;
      case 2: {
        const v = new Uint8Array(b.subarray(i, i + n));
        i += n;
        return v;
      }
      case 3: {
        const v = b.toString("utf8", i, i + n);
        i += n;
        return v;
      }
      case 4:
        return Array.from({ length: n }, item);
      case 5: {
        const entries = Array.from({ length: n }, () => [item(), item()]);
        return entries.every(([k]) => typeof k === "string") ? Object.fromEntries(entries) : new Map(entries);
      }
      case 6:
        return new Tag(n, item());
    }
  };
  return item();
}

const cases = loadVectors("hash");

/** The vector file again, integers beyond ±2^53 as BigInt (`host_integer` cases). */
function bigIntInputs() {
  const text = readFileSync(join(VECTORS, "hash", "input_hash.json"), "utf8").replace(
    /"(?:\\.|[^"\\])*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g,
    (m) => (m.startsWith('"') || /[.eE]/.test(m) || Number.isSafeInteger(Number(m)) ? m : `"__bigint:${m}"`),
  );
  const revive = (v) =>
    typeof v === "string" && v.startsWith("__bigint:")
      ? BigInt(v.slice(9))
      : Array.isArray(v)
        ? v.map(revive)
        : v && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))
          : v;
  return new Map(JSON.parse(text).cases.map((c) => [c.name, revive(c.input)]));
}
const bigInputs = bigIntInputs();

for (const c of cases) {
  test(`hash vector: ${c.name}`, () => {
    const input = "input_cbor" in c ? decodeCbor(c.input_cbor) : c.host_integer ? bigInputs.get(c.name) : c.input;
    if (c.host_integer) assert.equal(typeof input, "bigint");
    if (c.error !== undefined) {
      assert.throws(
        () => inputHash(c.capability, input),
        (e) =>
          e instanceof CapabilityError &&
          e.code === c.error_code &&
          e.details?.reason === c.error &&
          (c.message === undefined || e.message === c.message),
      );
    } else {
      assert.equal(inputHash(c.capability, input), c.sha256);
    }
  });
}

test("hash vectors: the input an approval request stores hashes to the vector hash", async () => {
  const json = cases.filter((c) => "input" in c && c.error === undefined && !c.host_integer);
  assert.ok(json.length > 20);
  const router = {};
  for (const c of json) {
    router[c.capability] ??= os
      .meta({
        agent: {
          description: "Gated.",
          expose: { test: true },
          sideEffect: "write",
          risk: "low",
          approval: { required: true },
        },
      })
      .handler(async () => null);
  }
  const registry = await createCapabilityRegistry(router);
  for (const c of json) {
    const r = await registry.invoke(c.capability, c.input, { surface: "test" });
    assert.equal(r.status, "approval_required");
    // The hash itself is the store's (no view shows it, issue 15); what
    // the request holds — the value the hash binds — hashes to the vector.
    assert.equal(r.request.inputHash, undefined, c.name);
    assert.equal(inputHash(c.capability, r.request.input), c.sha256, c.name);
  }
});

test("a lone surrogate has no UTF-8 form: NOT_JSON_VALUE naming where, in Python's words (JSON files cannot carry one to every runner)", () => {
  for (const [value, at] of [
    [{ a: "x\ud800" }, "/a"],
    [{ x: { ["k\udc00"]: 1 } }, "/x"],
  ]) {
    const e = (() => {
      try {
        inputHash("t", value);
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    assert.ok(e instanceof CapabilityError);
    assert.deepEqual(
      [e.code, e.details, e.message],
      [
        "INVALID_INPUT",
        { reason: "NOT_JSON_VALUE" },
        `input at ${at} is a string that is not valid UTF-8, which the JSON data model has no place for`,
      ],
    );
  }
  assert.equal(typeof inputHash("t", { a: "\ud83d\ude00" }), "string", "a pair is a character");
});
