// The std: metadata vectors (tests/vectors/act/decode.json, metadata.json)
// through the public decodeStdMeta / encodeStdMeta / checkStdMeta: hostile
// CBOR gets its typed reason, each map's problems per position are the
// core's, and every valid map round-trips byte for byte through the JSON
// view. The same cases run in Rust, Python and Swift.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { vectorRouter } from "./helpers.js";

import {
  CapabilityError,
  checkManifest,
  checkStdMeta,
  createCapabilityRegistry,
  decideCapabilityGrant,
  decodeStdMeta,
  embedComponent,
  encodeStdMeta,
  inspectComponent,
  toolDefinitionMeta,
  unwrapStdForward,
  wrapStdForward,
} from "@orpc-agent/core";

const load = (name) =>
  JSON.parse(readFileSync(new URL(`../../tests/vectors/act/${name}`, import.meta.url), "utf8")).cases;
const bytes = (hex) => Buffer.from(hex, "hex");
const key = (p) => `${p.key}|${p.code}|${p.severity}`;

const decode = load("decode.json");
const metadata = load("metadata.json");
const grants = load("grants.json");
const toolMeta = load("tool_meta.json");
const descriptors = load("descriptors.json");

test("the act vectors have their cases", () => {
  assert.ok(decode.length >= 10);
  assert.ok(metadata.length >= 25);
  assert.ok(grants.length >= 20);
  assert.ok(toolMeta.length >= 6);
});

for (const c of decode) {
  test(`decode.json: ${c.name}`, () => {
    for (const attempt of [() => decodeStdMeta(bytes(c.cbor)), () => checkStdMeta(bytes(c.cbor), "tool-call")]) {
      assert.throws(attempt, (e) => {
        assert.ok(e instanceof CapabilityError, String(e));
        assert.equal(e.code, "INVALID_INPUT");
        assert.deepEqual(e.details, { reason: c.error });
        return true;
      });
    }
  });
}

for (const c of metadata) {
  test(`metadata.json: ${c.name}`, () => {
    const got = checkStdMeta(bytes(c.cbor), c.position, { strict: c.strict });
    assert.deepEqual(new Set(got.map(key)), new Set(c.problems.map(key)));
    for (const p of got) assert.equal(typeof p.message, "string");
    const view = decodeStdMeta(bytes(c.cbor));
    const again = encodeStdMeta(view);
    assert.deepEqual(decodeStdMeta(again), view, "the JSON view encodes back to the same map");
  });
}

test("an unknown position names the known ones", () => {
  assert.throws(
    () => checkStdMeta(encodeStdMeta({}), "nowhere"),
    (e) => e.code === "INVALID_INPUT" && e.details.reason === "UNKNOWN_POSITION" && /tool-definition/.test(e.message),
  );
});

test("integers beyond 2^53 cross exactly, both ways", () => {
  const meta = { "acme:big": 9007199254740993n, "acme:bytes": { $bytes: "00ff" } };
  const view = decodeStdMeta(encodeStdMeta(meta));
  assert.deepEqual(view, meta);
});

test("act:component: a manifest embedded into a component reads back; a bad one is typed", () => {
  const manifest = readFileSync(new URL("../../examples/act/act.toml", import.meta.url), "utf8");
  const checked = checkManifest(manifest);
  assert.equal(checked.name, "orders-component");
  const empty = Buffer.from("0061736d01000000", "hex");
  const wasm = embedComponent(manifest, empty);
  assert.deepEqual(inspectComponent(wasm), checked);
  assert.throws(
    () => inspectComponent(empty),
    (e) => e.code === "INVALID_INPUT" && e.details.reason === "NO_SECTION",
  );
  assert.throws(
    () => checkManifest("not toml [", "mine.toml"),
    (e) => e.code === "INVALID_INPUT" && e.details.reason === "MANIFEST_TOML" && /mine\.toml/.test(e.message),
  );
});

test("std:forward wraps a chain of hops and unwraps one layer", () => {
  const hops = [{ "std:request-id": "a" }, { "std:request-id": "b" }, { "std:request-id": "c" }];
  let meta = wrapStdForward(hops);
  for (const hop of hops) {
    const { here, next } = unwrapStdForward(meta);
    assert.deepEqual(here, hop);
    meta = next;
  }
  assert.equal(meta, null);
  assert.throws(
    () => wrapStdForward({ "std:request-id": "a" }),
    (e) => e.code === "INVALID_INPUT" && e.details.reason === "NOT_A_LIST",
  );
  assert.throws(
    () => unwrapStdForward({ "std:forward": 3 }),
    (e) => e.code === "INVALID_INPUT" && e.details.reason === "NOT_A_MAP",
  );
});

const invalidWith = (reason) => (e) => {
  assert.ok(e instanceof CapabilityError, String(e));
  assert.equal(e.code, "INVALID_INPUT");
  assert.equal(e.details.reason, reason);
  return true;
};

for (const c of grants) {
  test(`grants.json: ${c.name}`, () => {
    const decide = () => decideCapabilityGrant(c.declared, c.grants, c.request);
    if (c.error) return assert.throws(decide, invalidWith(c.error));
    const got = decide();
    assert.equal(got.allowed, c.allowed);
    assert.equal(got.reason, c.reason);
    assert.equal(typeof got.message, c.allowed ? "undefined" : "string");
  });
}

for (const c of toolMeta) {
  test(`tool_meta.json: ${c.name}`, () => {
    const derive = () => toolDefinitionMeta(c.id, c.meta);
    if (!c.problems) {
      const view = derive();
      assert.deepEqual(view, c.view);
      assert.deepEqual(checkStdMeta(encodeStdMeta(view), "tool-definition", { strict: true }), []);
      return;
    }
    assert.throws(derive, (e) => {
      invalidWith("INVALID_AGENT_META")(e);
      const pairs = (list) => new Set(list.map((p) => `${p.path}|${p.code}`));
      assert.deepEqual(pairs(e.details.problems), pairs(c.problems));
      return true;
    });
  });
}

for (const c of descriptors) {
  test(`descriptors.json: ${c.name}`, async () => {
    const router = vectorRouter(
      Object.fromEntries(Object.entries(c.capabilities).map(([id, meta]) => [id, { meta }])),
      {},
      {},
    );
    const registry = await createCapabilityRegistry(router);
    try {
      assert.equal(Buffer.from(registry.descriptorsCbor({ surface: c.surface })).toString("hex"), c.cbor);
    } finally {
      registry.close();
    }
  });
}
