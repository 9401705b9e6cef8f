// Every registry vector (tests/vectors/registry) through the public API:
// createCapabilityRegistry over a real oRPC router, inspect(), descriptors().
import assert from "node:assert/strict";
import { test } from "node:test";

import { createCapabilityRegistry, RegistryValidationError } from "@orpc-agent/core";

import { loadVectors, subsetProblems, vectorOptions, vectorRouter } from "./helpers.js";

const key = (p) => `${p.capability}|${p.path}|${p.code}`;
const sorted = (list) => list.map(key).sort();

for (const c of loadVectors("registry")) {
  test(`registry vector ${c.file}: ${c.name}`, async () => {
    const caps = Object.fromEntries(Object.entries(c.capabilities).map(([id, meta]) => [id, { meta }]));
    const build = createCapabilityRegistry(vectorRouter(caps, {}, {}), vectorOptions(c.options, {}));
    if (c.expect.valid === false) {
      const err = await build.then(
        () => assert.fail("the registry built"),
        (e) => e,
      );
      assert.ok(err instanceof RegistryValidationError, `expected RegistryValidationError, got ${err}`);
      assert.deepEqual(sorted(err.problems), sorted(c.expect.problems));
      for (const p of err.problems) assert.equal(typeof p.message, "string");
      return;
    }
    const registry = await build;
    const report = registry.inspect();
    const warnings = report.capabilities.flatMap((cap) => cap.warnings.map((w) => ({ capability: cap.id, ...w })));
    assert.deepEqual(sorted(warnings), sorted(c.expect.warnings ?? []));
    for (const [id, resolved] of Object.entries(c.expect.resolved ?? {})) {
      const cap = report.capabilities.find((x) => x.id === id);
      assert.deepEqual(subsetProblems(resolved, cap.resolved), [], id);
    }
    for (const [id, names] of Object.entries(c.expect.toolNames ?? {})) {
      const cap = report.capabilities.find((x) => x.id === id);
      assert.deepEqual(cap.toolNames, names);
    }
    for (const [surface, ids] of Object.entries(c.expect.exposedOn ?? {})) {
      assert.deepEqual(
        registry.descriptors({ surface }).map((d) => d.id),
        ids,
        surface,
      );
    }
  });
}
