// README.md's runnable snippets (a ```js block right after a
// `<!-- snippet: run -->` line) run as they are, each in a fresh Node
// process (an ES module, from this package's directory so that
// `@orpc-agent/core` resolves to it), and print what the `// comment` after
// each `console.log(...)` says.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
const README = readFileSync(join(DIR, "README.md"), "utf8");
const SNIPPETS = [...README.matchAll(/<!-- snippet: run -->\n```js\n([\s\S]*?)```/g)].map((m) => m[1]);

test("the README has a runnable snippet", () => {
  assert.ok(SNIPPETS.length >= 1);
});

SNIPPETS.forEach((code, i) => {
  test(`README snippet ${i} runs and prints what it says`, () => {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: DIR,
      encoding: "utf8",
      timeout: 60_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const expected = [...code.matchAll(/^.*console\.log\(.*\); \/\/ (.+)$/gm)].map((m) => m[1]);
    assert.ok(expected.length > 0);
    assert.deepEqual(out.trimEnd().split("\n"), expected);
  });
});
