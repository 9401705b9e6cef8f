#!/usr/bin/env node
// Fails when the three bindings' Rust glue crates repeat each other's code
// (issue 16: "a duplicate-code scan finds no protocol code repeated across
// bindings"). Protocol code written twice is protocol code that can drift:
// it belongs in the core's `ffi` module, which all three call.
//
// jscpd (bindings-node's devDependencies) reads the glue of Node
// (`bindings-node/native`), Python (`bindings-python/src`) and Swift
// (`bindings-swift/src`) and reports every run of at least MIN_TOKENS
// identical tokens; a run whose two places are in different bindings fails
// the check. Runs inside one binding are its own business (the repo-wide
// `duplicates` review covers them).
//
//   node scripts/glue-duplicates.mjs        # part of `make lint`
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const GLUE = ["bindings-node/native", "bindings-python/src", "bindings-swift/src"];
// Small enough to catch a repeated match or loop of a few lines (a resume
// limit's three arms is about 40 tokens), large enough to pass a shared
// signature's boilerplate.
const MIN_TOKENS = "40";
const JSCPD = join(ROOT, "bindings-node/node_modules/.bin/jscpd");

const out = mkdtempSync(join(tmpdir(), "glue-duplicates-"));
try {
  try {
    // jscpd lists every run on stdout, within one binding too: shown only
    // when it fails (its error is there).
    execFileSync(
      JSCPD,
      [
        "--format",
        "rust",
        "--min-tokens",
        MIN_TOKENS,
        "--min-lines",
        "4",
        "--reporters",
        "json",
        "--output",
        out,
        ...GLUE,
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
  } catch (e) {
    process.stderr.write(e.stdout ?? "");
    throw e;
  }
  const report = JSON.parse(readFileSync(join(out, "jscpd-report.json"), "utf8"));
  // jscpd names files relative to the root, with the platform's separator.
  const binding = (file) => GLUE.find((dir) => file.replaceAll("\\", "/").startsWith(`${dir}/`));
  const across = report.duplicates.filter((d) => binding(d.firstFile.name) !== binding(d.secondFile.name));
  const { sources: files, tokens } = report.statistics.total;
  if (files === 0 || tokens === 0) throw new Error("jscpd read no glue source: check the paths");
  for (const d of across) {
    console.error(
      `repeated across bindings (${d.lines} lines, ${d.tokens} tokens): ` +
        `${d.firstFile.name}:${d.firstFile.start} ~ ${d.secondFile.name}:${d.secondFile.start}`,
    );
  }
  if (across.length > 0) {
    console.error("move the shared code into core/src/ffi and call it from each binding");
    process.exitCode = 1;
  } else {
    console.log(`glue duplicates: none across bindings (${files} files, runs of ${MIN_TOKENS}+ tokens)`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
