// `make soak-node`: one million mixed governed invocations through the Node
// binding (issue 10, item 3). Prints the figures as JSON and fails (exit 1)
// when a leak check or the documented bound (README.md) does not hold.
// Usage: node bench/soak/node.mjs [invocations=1000000]

import { mb, soak } from "../../bindings-node/test/hardening/soak-run.mjs";

const RSS_GROWTH_BOUND = 64 * 1024 * 1024;
const HEAP_GROWTH_BOUND = 4 * 1024 * 1024;

const total = Number(process.argv[2] ?? 1_000_000);
const f = await soak({ total, concurrency: 64 });
console.log(JSON.stringify({ binding: "node", ...f }));
console.log(
  `soak-node: ${f.invocations} invocations in ${f.seconds.toFixed(1)} s (${Math.round(f.perSecond)}/s); ` +
    `RSS start ${mb(f.rssStart)} MB, end ${mb(f.rssEnd)} MB (growth ${mb(f.rssEnd - f.rssStart)} MB, bound ${mb(RSS_GROWTH_BOUND)}); ` +
    `heap ${mb(f.heapStart)} -> ${mb(f.heapEnd)} MB; approval rows ${f.approvalRows} (unfinished ${f.unfinishedApprovals}); ` +
    `timers left ${f.timersLeft}; in flight ${f.inFlight}`,
);
const failures = [
  f.tally.unexpected !== 0 && `unexpected outcomes: ${f.tally.unexpected}`,
  f.unfinishedApprovals !== 0 && `unfinished approvals: ${f.unfinishedApprovals}`,
  f.timersLeft !== 0 && `timers left: ${f.timersLeft}`,
  f.inFlight !== 0 && `in flight: ${f.inFlight}`,
  f.rssEnd - f.rssStart >= RSS_GROWTH_BOUND && `RSS grew ${mb(f.rssEnd - f.rssStart)} MB`,
  f.heapEnd - f.heapStart >= HEAP_GROWTH_BOUND && `heap grew ${mb(f.heapEnd - f.heapStart)} MB`,
].filter(Boolean);
if (failures.length) {
  console.error(`soak-node FAILED: ${failures.join("; ")}`);
  process.exit(1);
}
