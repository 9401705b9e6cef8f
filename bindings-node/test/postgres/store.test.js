// The PostgreSQL approval store and audit sink through the Node binding's
// public API, against the real server `make test-postgres-bindings` starts
// (scripts/pg-test-cluster.sh). Without ORPC_AGENT_TEST_PG_URL these tests
// FAIL with instructions rather than pass silently.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

import { CapabilityError, createCapabilityRegistry } from "@orpc-agent/core";
import { PG_URL, registry, router } from "./app.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
if (!PG_URL) {
  throw new Error(
    "ORPC_AGENT_TEST_PG_URL is not set: run `make test-postgres-bindings` (it starts a throwaway PostgreSQL)",
  );
}

/** A fresh actor per test: the tests share one database, and filter by actor. */
const actor = () => `actor-${randomUUID()}`;

async function request(reg, who, order = "o-1") {
  const r = await reg.invoke("orders.refund", { id: order, amount: 5 }, { surface: "mcp", actor: { id: who } });
  assert.equal(r.status, "approval_required");
  return r.request;
}

/** Runs SQL on the test server with psql (the cluster's own client). */
function psql(sql) {
  const bin = process.env.ORPC_AGENT_TEST_PG_BIN ? join(process.env.ORPC_AGENT_TEST_PG_BIN, "psql") : "psql";
  return execFileSync(bin, [process.env.ORPC_AGENT_TEST_PG_URL, "-tAc", sql], { encoding: "utf8" }).trim();
}

test("create → list with filters and pages → approve → resume runs once; a second resume is APPROVAL_CONSUMED", async () => {
  const reg = await registry();
  const who = actor();
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await request(reg, who, `o-${i}`)).id);

  // Paging: 2 + 2 + 1, in creation order, the cursor from the last page is null.
  const seen = [];
  let cursor;
  let pages = 0;
  do {
    const page = await reg.approvals.page({ actorId: who, status: "pending", limit: 2, cursor });
    seen.push(...page.requests.map((r) => r.id));
    cursor = page.nextCursor ?? undefined;
    pages++;
  } while (cursor !== undefined);
  assert.deepEqual(seen, ids);
  assert.equal(pages, 3);
  assert.equal((await reg.approvals.list({ actorId: who, capabilityId: "orders.get" })).length, 0);
  assert.equal((await reg.approvals.list({ actorId: who, capabilityId: "orders.refund" })).length, 5);

  const approved = await reg.approvals.approve(ids[0], { approver: "boss", reason: "ok" });
  assert.equal(approved.status, "approved");
  assert.equal(approved.decidedBy, "boss");
  assert.deepEqual(
    (await reg.approvals.list({ actorId: who, status: "approved" })).map((r) => r.id),
    [ids[0]],
  );
  assert.equal((await reg.approvals.get(ids[0])).status, "approved");
  assert.equal(await reg.approvals.get("apr_00000000000000000000000000000000"), null);

  const out = await reg.resume(ids[0]);
  assert.equal(out.status, "ok");
  assert.deepEqual({ ...out.output, by: undefined }, { refunded: "o-0", amount: 5, by: undefined });
  await assert.rejects(reg.resume(ids[0]), (e) => e instanceof CapabilityError && e.code === "APPROVAL_CONSUMED");
  assert.equal((await reg.approvals.get(ids[0])).status, "consumed");
  assert.equal(reg.inFlight(), 0);
});

test("decisions keep the core's rules and codes: self-approval, double decision, pending, rejected, unknown ids, bad filters", async () => {
  const reg = await registry();
  const who = actor();
  const a = await request(reg, who);
  await assert.rejects(reg.approvals.approve(a.id, { approver: who }), (e) => e.code === "POLICY_DENIED");
  await assert.rejects(reg.resume(a.id), (e) => e.code === "APPROVAL_PENDING");
  await reg.approvals.reject(a.id, { approver: "boss" });
  await assert.rejects(
    reg.approvals.approve(a.id, { approver: "boss" }),
    (e) => e.code === "APPROVAL_REJECTED" && e.details.status === "rejected",
  );
  await assert.rejects(reg.resume(a.id), (e) => e.code === "APPROVAL_REJECTED");
  await assert.rejects(reg.resume("apr_00000000000000000000000000000000"), (e) => e.code === "APPROVAL_NOT_FOUND");
  await assert.rejects(reg.approvals.page({ status: "maybe" }), (e) => e.code === "INVALID_INPUT");
  await assert.rejects(reg.approvals.page({ cursor: "nonsense" }), (e) => e.code === "INVALID_INPUT");
  // A read capability never touches the store: the synchronous path still answers.
  assert.deepEqual((await reg.invoke("orders.get", { id: "x" }, { surface: "direct" })).output, {
    id: "x",
    status: "paid",
  });
});

test("20 concurrent resumes in one process: exactly one runs, 19 APPROVAL_CONSUMED", async () => {
  const reg = await registry();
  const a = await request(reg, actor());
  await reg.approvals.approve(a.id, { approver: "boss" });
  const settled = await Promise.allSettled(Array.from({ length: 20 }, () => reg.resume(a.id)));
  assert.equal(settled.filter((s) => s.status === "fulfilled").length, 1);
  assert.deepEqual(
    new Set(settled.filter((s) => s.status === "rejected").map((s) => s.reason.code)),
    new Set(["APPROVAL_CONSUMED"]),
  );
  assert.equal(reg.inFlight(), 0);
});

test("create in one process, approve from a second, resume from a third; 5 processes race 10 resumes each: one handler run", () => {
  const dir = mkdtempSync(join(tmpdir(), "orpc-pg-node-"));
  const log = join(dir, "handler.log");
  const env = { ...process.env, HANDLER_LOG: log };
  const run = (...args) => {
    const r = spawnSync(process.execPath, [join(HERE, "app.mjs"), ...args], { env, encoding: "utf8" });
    return JSON.parse(r.stdout.trim().split("\n").pop());
  };
  const who = actor();
  const created = run("create", who, "o-cross");
  assert.equal(created.status, "pending");
  assert.equal(run("approve", created.id, "boss").status, "approved");
  // Five processes at once, each with ten concurrent resumes.
  const procs = Array.from({ length: 5 }, () => import("node:child_process").then(({ spawn }) => spawn));
  return Promise.all(procs).then(async (spawns) => {
    const outs = await Promise.all(
      spawns.map(
        (spawn) =>
          new Promise((resolve) => {
            const p = spawn(process.execPath, [join(HERE, "app.mjs"), "race", created.id, "10"], { env });
            let text = "";
            p.stdout.on("data", (d) => (text += d));
            p.on("close", () => resolve(JSON.parse(text.trim())));
          }),
      ),
    );
    const codes = outs.flat();
    assert.equal(codes.length, 50);
    assert.equal(codes.filter((c) => c === "OK").length, 1);
    assert.equal(codes.filter((c) => c === "APPROVAL_CONSUMED").length, 49);
    assert.equal(readFileSync(log, "utf8").trim().split("\n").length, 1, "the handler ran exactly once");
  });
});

test("an unreachable database is a typed INTERNAL with details.store; bad options are INVALID_INPUT", async () => {
  const t0 = Date.now();
  await assert.rejects(
    createCapabilityRegistry(router(), {
      approvalStore: {
        postgres: { url: "postgresql://postgres@127.0.0.1:1/none?sslmode=disable", connectTimeoutMs: 200 },
      },
    }),
    (e) =>
      e instanceof CapabilityError &&
      e.code === "INTERNAL" &&
      e.details?.store === "cannot-open" &&
      !/127\.0\.0\.1/.test(e.message),
  );
  assert.ok(Date.now() - t0 < 15_000);
  await assert.rejects(
    createCapabilityRegistry(router(), { approvalStore: { postgres: { url: PG_URL, maxConections: 2 } } }),
    (e) => e.code === "INVALID_INPUT" && /maxConections/.test(e.message),
  );
  await assert.rejects(
    createCapabilityRegistry(router(), { approvalStore: { postgres: "" } }),
    (e) => e.code === "INVALID_INPUT",
  );
  await assert.rejects(
    createCapabilityRegistry(router(), { approvalStore: { postgres: {} } }),
    (e) => e.code === "INVALID_INPUT",
  );
});

test("TLS: sslmode=require verified against the test server's CA", async () => {
  const ca = process.env.ORPC_AGENT_TEST_PG_CA;
  if (!ca || !existsSync(ca)) throw new Error("ORPC_AGENT_TEST_PG_CA is not set (pg-test-cluster.sh sets it)");
  const url = `${process.env.ORPC_AGENT_TEST_PG_URL}?sslmode=require`;
  const reg = await registry(url, { approvalStore: { postgres: { url, tls: { caPem: readFileSync(ca, "utf8") } } } });
  const a = await request(reg, actor());
  assert.equal((await reg.approvals.get(a.id)).id, a.id);
  // The system trust store does not know the test CA: refused, typed.
  await assert.rejects(
    createCapabilityRegistry(router(), { approvalStore: { postgres: { url, connectTimeoutMs: 500 } } }),
    (e) => e.code === "INTERNAL" && e.details?.store === "cannot-open",
  );
});

test("audit {postgres}: one orpc_audit row per record, with the approver's decision joinable by approval id", async () => {
  const seen = [];
  const reg = await registry(PG_URL, { audit: { postgres: PG_URL, subscriber: (r) => seen.push(r) } });
  assert.ok(reg.auditSink);
  const who = actor();
  const a = await request(reg, who, "o-audit");
  await reg.approvals.approve(a.id, { approver: "boss" });
  await reg.resume(a.id);
  await reg.auditSink.flush();
  const stats = reg.auditSink.stats();
  assert.equal(stats.dropped, 0);
  assert.equal(stats.failed, 0);
  assert.ok(stats.written >= 2, JSON.stringify(stats));
  assert.equal(stats.written, seen.length, "the app's own subscriber gets every record too");
  const mine = seen.filter((r) => r.approvalId === a.id);
  assert.ok(mine.length >= 2);
  const rows = psql(
    // No audit row carries the input hash (issue 15: it could give away a
    // redacted value); the request's own row holds it.
    `SELECT a.event, a.outcome, a.input_hash IS NULL AND r.input_hash IS NOT NULL, r.decided_by FROM orpc_audit a JOIN orpc_approvals r ON r.id = a.approval_id WHERE r.id = '${a.id}' ORDER BY a.started_at`,
  );
  assert.equal(rows.split("\n").length, mine.length, rows);
  assert.match(rows, /\|t\|boss$/m);
  assert.doesNotMatch(rows, /\|f\|/);
});

test("audit {postgres} alone: every record is written from Rust, as the core holds it, with no subscriber", async () => {
  const reg = await registry(PG_URL, { audit: { postgres: PG_URL } });
  const who = actor();
  const a = await request(reg, who, "o-sink");
  await reg.approvals.approve(a.id, { approver: "boss" });
  await reg.resume(a.id);
  await assert.rejects(reg.resume(a.id), (e) => e.code === "APPROVAL_CONSUMED");
  await reg.auditSink.flush();
  const stats = reg.auditSink.stats();
  assert.equal(stats.dropped, 0);
  assert.equal(stats.failed, 0);
  // The request (finished), the resume (started, finished), the refused resume (finished).
  const rows = psql(
    `SELECT event, outcome FROM orpc_audit WHERE approval_id = '${a.id}' ORDER BY started_at, event DESC`,
  );
  assert.deepEqual(
    rows.split("\n").sort(),
    ["finished|APPROVAL_CONSUMED", "finished|approval_required", "finished|ok", "started|"].sort(),
  );
  assert.equal(reg.inFlight(), 0);
});

test("the memory store keeps its synchronous path and gains page()", async () => {
  const reg = await createCapabilityRegistry(router());
  const a = await request(reg, "ada");
  const page = await reg.approvals.page({ limit: 1 });
  assert.deepEqual(
    page.requests.map((r) => r.id),
    [a.id],
  );
  assert.equal(typeof page.nextCursor, "string");
  assert.deepEqual((await reg.approvals.page({ cursor: page.nextCursor })).requests, []);
});

test("the database crashes and restarts between approve and resume: the same registry resumes, once", async () => {
  const cluster = process.env.ORPC_AGENT_TEST_PG_CLUSTER;
  if (!cluster) throw new Error("ORPC_AGENT_TEST_PG_CLUSTER is not set (pg-test-cluster.sh run sets it)");
  const reg = await registry();
  const a = await request(reg, actor(), "o-restart");
  await reg.approvals.approve(a.id, { approver: "boss" });
  // Immediate stop (like a crash), then start: the pool's connections die.
  execFileSync(cluster, ["restart"], { stdio: "ignore" });
  const out = await reg.resume(a.id);
  assert.equal(out.status, "ok");
  await assert.rejects(reg.resume(a.id), (e) => e.code === "APPROVAL_CONSUMED");
  assert.equal((await reg.approvals.get(a.id)).status, "consumed");
});
