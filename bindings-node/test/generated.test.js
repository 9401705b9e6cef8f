// The committed generated native bindings (index.js / index.d.ts) must be
// what `napi build` produces now: fails on drift (scripts/check-dts.js).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

test("committed index.d.ts and index.js match napi build", { timeout: 600_000 }, () => {
  const script = fileURLToPath(new URL("../scripts/check-dts.js", import.meta.url));
  const out = execFileSync(process.execPath, [script], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  assert.match(out, /match napi build/);
});
