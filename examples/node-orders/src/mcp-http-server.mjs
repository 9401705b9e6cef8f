// The orders app served as an MCP server over Streamable HTTP (the SDK's
// StreamableHTTPServerTransport, one session per client, on an Express app
// from the SDK's createMcpExpressApp, which rejects a Host header that is not
// localhost: DNS rebinding). `make test-mcp-conformance` runs the official
// MCP conformance suite against it.
//
//   PORT=3001 node src/mcp-http-server.mjs     # http://127.0.0.1:3001/mcp

import { randomUUID } from "node:crypto";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

import { createCapabilityRegistry, registerMcpTools } from "@orpc-agent/core";

import { createDb, createRegistry, router } from "./app.mjs";
import { conformanceRouter } from "./conformance-fixtures.mjs";

const port = Number(process.env.PORT ?? 3001);
const db = createDb();
// MCP_CONFORMANCE_FIXTURES=1 adds the conformance suite's tools (conformance-fixtures.mjs).
const registry =
  process.env.MCP_CONFORMANCE_FIXTURES === "1"
    ? await createCapabilityRegistry({ ...router, ...conformanceRouter }, { approvalStore: "memory" })
    : await createRegistry({ sqlitePath: process.env.ORDERS_APPROVALS });

/** One McpServer per session (an McpServer serves one transport); the registry is shared. */
function sessionServer() {
  const server = new McpServer({ name: "node-orders", version: "1.0.0" });
  registerMcpTools(server, registry, {
    // A real deployment takes the actor from the transport's authentication
    // (extra.authInfo); this example has none, so every session is one agent.
    frame: () => ({ actor: { id: "http-agent", roles: ["agent"] }, context: { db } }),
  });
  return server;
}

const transports = new Map();
const app = createMcpExpressApp({ host: "127.0.0.1" });

app.post("/mcp", async (req, res) => {
  const sessionId = req.header("mcp-session-id");
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport) {
    if (sessionId || !isInitializeRequest(req.body)) {
      res.status(sessionId ? 404 : 400).json({
        jsonrpc: "2.0",
        error: { code: -32000, message: sessionId ? "Unknown session." : "No session: initialize first." },
        id: null,
      });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await sessionServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

// GET opens a session's server-to-client stream; DELETE ends the session.
const sessionRequest = async (req, res) => {
  const transport = transports.get(req.header("mcp-session-id") ?? "");
  if (!transport) {
    res.status(404).send("Unknown session.");
    return;
  }
  await transport.handleRequest(req, res);
};
app.get("/mcp", sessionRequest);
app.delete("/mcp", sessionRequest);

const listener = app.listen(port, "127.0.0.1", (error) => {
  if (error) throw error;
  process.stdout.write(`node-orders MCP over Streamable HTTP on http://127.0.0.1:${listener.address().port}/mcp\n`);
});
