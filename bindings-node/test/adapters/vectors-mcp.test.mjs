// tests/vectors/mcp: the same capabilities give the same tools/list and
// tools/call results from this adapter as from Python's, through the MCP
// SDK's own Client (InMemoryTransport), sending only {name, arguments}.
// Approval ids and times are normalized (normalizeMcp); everything else is
// compared exactly. The same cases run in tests/test_mcp_vectors.py.
import assert from "node:assert/strict";
import { appendFileSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

import { createCapabilityRegistry, registerMcpTools } from "@orpc-agent/core";

import { VECTORS, vectorOptions, vectorRouter } from "../helpers.js";

const doc = JSON.parse(readFileSync(`${VECTORS}/mcp/tools.json`, "utf8"));

const APPROVAL_ID = /apr_[0-9a-f]{32}/g;
const TOOL_FIELDS = ["name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta"];
const RESULT_FIELDS = ["content", "structuredContent", "isError", "_meta"];

/**
 * What the adapter decides, as tests/vectors/README.md (section mcp/) says:
 * the listed fields only (each SDK adds its own: Node's `execution`,
 * Python's `resultType`), `_meta` only under `orpc-agent/`.
 */
function adapterFields(value, fields) {
  const out = {};
  for (const f of fields) {
    if (value[f] === undefined) continue;
    out[f] =
      f === "_meta"
        ? Object.fromEntries(Object.entries(value[f]).filter(([k]) => k.startsWith("orpc-agent/")))
        : value[f];
    if (f === "_meta" && Object.keys(out[f]).length === 0) delete out[f];
  }
  return out;
}

/** Approval ids numbered in order of appearance, times as `<ms>`. */
function normalizeMcp(value, ids) {
  if (Array.isArray(value)) return value.map((v) => normalizeMcp(v, ids));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        /At$/.test(k) && typeof v === "number" ? "<ms>" : normalizeMcp(v, ids),
      ]),
    );
  }
  if (typeof value === "string") {
    return value.replace(APPROVAL_ID, (id) => {
      if (!ids.has(id)) ids.set(id, `<approval-${ids.size + 1}>`);
      return ids.get(id);
    });
  }
  return value;
}

for (const c of doc.cases) {
  test(`mcp vectors: ${c.name}`, async () => {
    const registry = await createCapabilityRegistry(
      vectorRouter(c.capabilities, c.hostPolicies, {}),
      vectorOptions(c.options, c.hostPolicies),
    );
    const server = new McpServer({ name: "vectors", version: "1.0.0" });
    registerMcpTools(server, registry, { frame: () => c.frame });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "vectors", version: "1.0.0" });
    await client.connect(clientSide);
    const ids = new Map();
    // Authoring: MCP_VECTORS_DUMP=<file> writes what this adapter answers, one JSON line each.
    const dumpTo = process.env.MCP_VECTORS_DUMP;
    const dump = dumpTo !== undefined;
    const write = (v) => appendFileSync(dumpTo, `${JSON.stringify(v)}\n`);
    try {
      const tools = (await client.listTools()).tools.map((t) => adapterFields(t, TOOL_FIELDS));
      if (dump) write({ list: tools });
      else assert.deepEqual(tools, c.list, "tools/list");
      for (const call of c.calls) {
        if (call.approve) {
          // A human's decision, through the registry (an approval UI's path).
          const id = [...ids].find(([, label]) => label === call.approve)?.[0];
          assert.ok(id, `${call.name}: no request ${call.approve} yet`);
          await registry.approvals.approve(id, { approver: call.approver });
          continue;
        }
        const result = await client.callTool({ name: call.tool, arguments: call.arguments });
        if (call.unknownTool) {
          assert.equal(result.isError, true, call.name); // the SDK's own "unknown tool" answer, worded by each SDK
          continue;
        }
        const got = normalizeMcp(adapterFields(result, RESULT_FIELDS), ids);
        if (dump) write({ name: call.name, result: got });
        else assert.deepEqual(got, call.result, call.name);
      }
    } finally {
      await client.close();
      registry.close();
    }
  });
}
