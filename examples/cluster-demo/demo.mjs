// make demo-cluster: two instances of the same oRPC app (server.mjs) share
// one PostgreSQL (scripts/pg-test-cluster.sh starts it). An agent asks for
// a refund on instance A; a human sees the request in instance B's approval
// API and approves it there; the agent's call is resumed on instance B; a
// second resume, on A, is refused: approvals are single-use across the
// whole cluster.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const DATABASE_URL = `${process.env.ORPC_AGENT_TEST_PG_URL}?sslmode=disable`;
if (!process.env.ORPC_AGENT_TEST_PG_URL) throw new Error("run through `make demo-cluster` (it starts PostgreSQL)");

function start(name) {
  const child = spawn(process.execPath, [join(HERE, "server.mjs")], {
    env: { ...process.env, INSTANCE: name, PORT: "0", DATABASE_URL },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      const m = /READY (\d+)/.exec(buf);
      if (m && !child.port) {
        child.port = Number(m[1]);
        resolve(child);
      }
      for (const line of buf.split("\n").slice(0, -1)) if (!line.startsWith("READY")) console.log(line);
      buf = buf.split("\n").pop();
    });
    child.on("exit", (code) => reject(new Error(`instance ${name} exited with ${code}`)));
  });
}

async function call(inst, method, path, body, headers = {}) {
  const res = await fetch(`http://127.0.0.1:${inst.port}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const t0 = Date.now();
const [a, b] = await Promise.all([start("A"), start("B")]);
try {
  console.log(`two instances of the orders app on one PostgreSQL: A on :${a.port}, B on :${b.port}`);

  console.log("\n1. the agent (actor ada) asks instance A to refund order 42");
  const asked = await call(
    a,
    "POST",
    "/agent/tools/orders.refund",
    { orderId: "42", amount: 30 },
    { "x-actor": "ada" },
  );
  const id = asked.body.request.id;
  console.log(
    `   A answers ${asked.body.status}: request ${id} (${asked.body.request.type}, expires ${new Date(asked.body.request.expiresAt).toISOString()})`,
  );

  console.log("\n2. the approval UI lists pending refunds through instance B");
  const page = await call(b, "GET", `/approvals?status=pending&capabilityId=orders.refund&actorId=ada&limit=10`);
  const listed = page.body.requests.find((r) => r.id === id);
  console.log(
    `   B lists ${page.body.requests.length} pending request(s) of ada; ours: ${listed.capabilityId} ${JSON.stringify(listed.input)}`,
  );

  console.log("\n3. ada cannot approve her own request (approverMustDiffer), on B");
  const self = await call(b, "POST", `/approvals/${id}/approve`, { approver: "ada" });
  console.log(`   B answers ${self.status}: ${self.body.error.code}`);

  console.log("\n4. the manager approves it on B");
  const approved = await call(b, "POST", `/approvals/${id}/approve`, {
    approver: "manager",
    reason: "customer is right",
  });
  console.log(`   status ${approved.body.status}, decided by ${approved.body.decidedBy}`);

  console.log("\n5. the agent's call is resumed on instance B");
  const resumed = await call(b, "POST", `/approvals/${id}/resume`);
  console.log(`   B answers ${resumed.body.status}: ${JSON.stringify(resumed.body.output)}`);

  console.log("\n6. a second resume, on instance A, is refused: single use across the cluster");
  const again = await call(a, "POST", `/approvals/${id}/resume`);
  console.log(`   A answers ${again.status}: ${again.body.error.code}`);

  const audit = await call(b, "GET", "/audit");
  console.log(
    `\nB's PostgreSQL audit sink: ${JSON.stringify(audit.body)} (orpc_audit joins orpc_approvals on approval_id)`,
  );
  const ok =
    asked.body.status === "approval_required" &&
    listed !== undefined &&
    self.body.error.code === "POLICY_DENIED" &&
    approved.body.status === "approved" &&
    resumed.body.status === "ok" &&
    resumed.body.output.instance === "B" &&
    again.body.error.code === "APPROVAL_CONSUMED";
  console.log(`\ndemo-cluster ${ok ? "OK" : "FAILED"} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  process.exitCode = ok ? 0 : 1;
} finally {
  a.kill("SIGTERM");
  b.kill("SIGTERM");
}
