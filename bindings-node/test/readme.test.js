// README.md's runnable snippets (a ```js or ```ts block right after a
// `<!-- snippet: run -->` line) run as they are, each in a fresh Node
// process from its own temporary working directory, and print what the
// `// comment` after each `console.log(...)` says. A TypeScript snippet is
// type-checked with `tsc --strict` and compiled first. Each is written into
// this package's `.readme-snippets/` (git-ignored) so that
// `@orpc-agent/core` resolves to this package, as it does in an app.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
const README = readFileSync(join(DIR, "README.md"), "utf8");
const SNIPPETS = [...README.matchAll(/<!-- snippet: run -->\n```(js|ts)\n([\s\S]*?)```/g)].map((m) => ({
  lang: m[1],
  code: m[2],
}));
const WORK = join(DIR, ".readme-snippets");
rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK);
after(() => rmSync(WORK, { recursive: true, force: true }));

test("the README has runnable snippets, one of them TypeScript", () => {
  assert.ok(SNIPPETS.length >= 2);
  assert.ok(SNIPPETS.some((s) => s.lang === "ts"));
});

const run = (file) => {
  const cwd = mkdtempSync(join(tmpdir(), "orpc-agent-readme-"));
  try {
    return execFileSync(process.execPath, [file], { cwd, encoding: "utf8", timeout: 60_000, stdio: "pipe" });
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
};

SNIPPETS.forEach(({ lang, code }, i) => {
  test(`README snippet ${i} (${lang}) runs and prints what it says`, () => {
    const source = join(WORK, `snippet-${i}.${lang}`);
    writeFileSync(source, code);
    if (lang === "ts") {
      const tsc = join(DIR, "node_modules", "typescript", "bin", "tsc");
      const flags = ["--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext"];
      try {
        execFileSync(process.execPath, [tsc, ...flags, "--types", "node", "--skipLibCheck", source], {
          cwd: DIR,
          encoding: "utf8",
          timeout: 120_000,
          stdio: "pipe",
        });
      } catch (e) {
        assert.fail(`tsc --strict: ${e.stdout}${e.stderr}`); // tsc reports on stdout
      }
    }
    const out = run(source.replace(/\.ts$/, ".js"));
    const expected = [...code.matchAll(/^.*console\.log\(.*\); \/\/ (.+)$/gm)].map((m) => m[1]);
    assert.ok(expected.length > 0);
    assert.deepEqual(out.trimEnd().split("\n"), expected);
  });
});
