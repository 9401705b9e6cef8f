// Fails when the committed generated `index.d.ts` / `index.js` drift from
// what `napi build` produces now: builds into a temporary directory and
// compares byte for byte.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = mkdtempSync(join(tmpdir(), "orpc-agent-dts-"));
try {
  execFileSync(
    "npx",
    [
      "napi",
      "build",
      "--platform",
      "--esm",
      "--output-dir",
      out,
      "--js",
      "index.js",
      "--dts",
      "index.d.ts",
      "--no-dts-cache",
    ],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
  );
  let drift = false;
  for (const f of ["index.d.ts", "index.js"]) {
    if (readFileSync(join(root, f), "utf8") !== readFileSync(join(out, f), "utf8")) {
      console.error(`${f} drifted from \`napi build\`; run \`make node-native\` and commit it`);
      drift = true;
    }
  }
  if (drift) process.exit(1);
  console.log("generated index.js / index.d.ts match napi build");
} finally {
  rmSync(out, { recursive: true, force: true });
}
