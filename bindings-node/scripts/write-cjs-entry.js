// Writes the CommonJS entry: a re-export of the ESM build through
// require(esm) (Node ≥ 20.19), so both entry points share one module
// instance and `instanceof CapabilityError` holds across them.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "index.cjs"), '"use strict";\nmodule.exports = require("./index.js");\n');
writeFileSync(join(out, "index.d.cts"), 'export * from "./index.js";\n');
