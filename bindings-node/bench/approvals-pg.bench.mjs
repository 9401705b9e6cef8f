// Approval round trips through the Node binding's public API: create
// (invoke → approval_required) + decide (approvals.approve) + resume, on
// PostgreSQL and on SQLite, with 1 and 8 concurrent clients in one process.
// Run by `make bench-postgres-bindings` (a throwaway PostgreSQL on loopback).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCapabilityRegistry } from "@orpc-agent/core";
import { router } from "../test/postgres/app.mjs";

const ROUNDS = Number(process.env.ROUNDS ?? 300);
const pg = `${process.env.ORPC_AGENT_TEST_PG_URL}?sslmode=disable`;
const sqlite = join(mkdtempSync(join(tmpdir(), "orpc-bench-")), "approvals.db");

async function roundTrip(reg, actor, i) {
  const r = await reg.invoke("orders.refund", { id: `o-${i}`, amount: 1 }, { surface: "mcp", actor: { id: actor } });
  await reg.approvals.approve(r.request.id, { approver: "boss" });
  await reg.resume(r.request.id);
}

async function measure(name, store, clients) {
  const reg = await createCapabilityRegistry(router(), { approvalStore: store, approverMustDiffer: true });
  for (let i = 0; i < 20; i++) await roundTrip(reg, "warm", i); // warm-up (pool, statements)
  const per = Math.ceil(ROUNDS / clients);
  const lat = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < per; i++) {
        const s = performance.now();
        await roundTrip(reg, `bench-${c}-${Math.floor(i / 500)}`, i);
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const p = (q) => lat[Math.floor(q * (lat.length - 1))].toFixed(2);
  console.log(
    `${name.padEnd(10)} clients=${clients}  ${(lat.length / secs).toFixed(0).padStart(5)} round trips/s  p50 ${p(0.5)} ms  p99 ${p(0.99)} ms`,
  );
  reg.close();
}

console.log(`create + decide + resume, ${ROUNDS} round trips per line (Node ${process.version})`);
for (const clients of [1, 8]) {
  await measure("postgres", { postgres: pg }, clients);
  await measure("sqlite", { sqlite }, clients);
}
