// Every trace context vector (tests/vectors/act/trace.json) through the
// public traceOf: a traceparent case is read as the only trace header (valid
// iff its `error` is null); a tracestate case beside a valid traceparent
// gives its `kept` (null: dropped). The validation codes themselves are the
// Rust runner's (core/tests/act_vectors.rs): Node exposes no validator.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { traceHeaders, traceOf } from "@orpc-agent/core";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const doc = JSON.parse(readFileSync(new URL("../../tests/vectors/act/trace.json", import.meta.url), "utf8"));

test("trace.json has its cases", () => {
  assert.ok(doc.cases.length >= 40);
});

for (const c of doc.cases) {
  test(`trace.json: ${c.name}`, () => {
    if (c.header === "traceparent") {
      const got = traceOf({ traceparent: c.value });
      if (c.error === null) assert.deepEqual(got, { traceparent: c.value });
      else assert.equal(got, undefined);
      return;
    }
    assert.equal(c.header, "tracestate");
    assert.ok("kept" in c, "every tracestate case says what is kept");
    for (const headers of [
      { traceparent: TRACEPARENT, tracestate: c.value },
      ["traceparent", TRACEPARENT, "TraceState", c.value],
    ]) {
      const got = traceOf(headers);
      assert.equal(got?.traceparent, TRACEPARENT);
      assert.equal(got.tracestate ?? null, c.kept);
      // What is kept is sent as it is.
      const sent = traceHeaders(got);
      assert.equal(sent.tracestate, c.kept ?? undefined);
    }
  });
}
