// The release manifest of @orpc-agent/core (scripts/release.sh): the
// platform packages as optionalDependencies at the package's own version —
// npm installs the one whose os/cpu/libc match — and no native module in
// the main package's files (each platform package carries its own).
//
//   node scripts/release-npm-manifest.mjs <package.json> <platform packages dir>
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [manifestPath, platformsDir] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const optional = {};
for (const dir of readdirSync(platformsDir).sort()) {
  // Only the platforms whose module was built (here, or by the release workflow).
  if (!readdirSync(join(platformsDir, dir)).some((f) => f.endsWith(".node"))) continue;
  const platform = JSON.parse(readFileSync(join(platformsDir, dir, "package.json"), "utf8"));
  if (platform.version !== manifest.version) {
    throw new Error(`${platform.name} is ${platform.version}, the package is ${manifest.version}`);
  }
  optional[platform.name] = manifest.version;
}
manifest.optionalDependencies = optional;
manifest.files = manifest.files.filter((f) => f !== "*.node");
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`optionalDependencies: ${Object.keys(optional).join(", ")}`);
