"""server.py's toolset served over MCP Streamable HTTP (``MCPServer``'s
streamable-http app, run by the SDK's uvicorn runner). With host 127.0.0.1 the
SDK rejects a Host header that is not localhost (DNS rebinding).
`make test-mcp-conformance` runs the official MCP conformance suite against
it, with MCP_CONFORMANCE_FIXTURES=1: the suite's tools
(conformance_fixtures.py) next to the orders ones.

    PORT=3002 python examples/python-agent/http_server.py   # http://127.0.0.1:3002/mcp
"""

from __future__ import annotations

import os

from conformance_fixtures import FIXTURES
from server import build, delete, get_order, refund

from orpc_agent import create_capability_registry
from orpc_agent.mcp import create_mcp_server

if __name__ == "__main__":
    if os.environ.get("MCP_CONFORMANCE_FIXTURES") == "1":
        # As the Node server's: approvals in memory.
        registry = create_capability_registry([get_order, refund, delete, *FIXTURES])
        server = create_mcp_server(registry, "orders")
    else:
        _, server = build(os.environ.get("ORDERS_APPROVALS_DB", "approvals.db"))
    server.run("streamable-http", host="127.0.0.1", port=int(os.environ.get("PORT", "3002")))
