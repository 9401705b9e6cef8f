// `make soak-node`: one million mixed governed invocations through the Node
// binding (issue 10, item 3). Prints the figures and exits 1 when a leak
// check or the documented bound (README.md) does not hold.
// Usage: node bench/soak/node.mjs [invocations=1000000] [--no-approvals]
// (--no-approvals: the control run, approval slots replaced by ok calls.)

import { MIX, problems, soak, summary } from "../../bindings-node/test/hardening/soak-run.mjs";

const args = process.argv.slice(2);
if (args.includes("--no-approvals")) MIX[MIX.indexOf("approval")] = "ok";
const total = Number(args.find((a) => !a.startsWith("--")) ?? 1_000_000);
const f = await soak({ total, concurrency: 64 });
console.log(JSON.stringify({ binding: "node", ...f }));
console.log(summary(f));
const failed = problems(f);
if (failed.length) {
  console.error(`soak-node FAILED: ${failed.join("; ")}`);
  process.exit(1);
}
