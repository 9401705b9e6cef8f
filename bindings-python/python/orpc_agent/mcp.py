"""MCP adapter for the ``mcp`` 2.x SDK (``MCPServer``; ``FastMCP`` is gone).

``governed_tools(registry)`` turns every capability the core exposes on the
``mcp`` surface into an ``MCPServer`` tool; ``create_mcp_server(registry)``
builds a server with them. Each tool:

- is listed from the core's portable descriptor: name, description, input
  and output JSON Schema, and ``ToolAnnotations`` derived by the core from
  the metadata (plus ``adapters.mcp.annotations``);
- runs ``tools/call`` through the governed pipeline on surface ``mcp`` —
  the adapter fixes the surface (SI-2), the caller's ``frame`` factory adds
  the actor and application context, and ``traceparent``/``tracestate`` in
  the request's ``_meta`` travel into the frame;
- maps outcomes to the core's results (as in Node): output as text — a string
  as it is, else compact JSON — (and ``structuredContent`` when
  the tool has an object output schema); a ``CapabilityError`` as an
  ``isError`` result whose text is the core's model-actionable message and
  whose ``_meta["orpc-agent/error"]`` carries code and kind; an approval
  requirement as an ``isError`` result (the tool did not run) whose text
  tells the model what happened and whose
  ``_meta["orpc-agent/approval"]`` carries the request id for the client;
- resumes an approved request when the client calls the tool again with its
  id in the request's ``_meta["orpc-agent/approvalId"]``: the core runs it
  only if it is this tool's, made on MCP by this caller's actor
  (``registry.resume(..., through_tool=...)``), else ``APPROVAL_NOT_FOUND``;
- never lets an exception's text reach the client: an output with no JSON
  form (a serializer that raises, NaN, a cycle) is ``INTERNAL`` "The
  capability's output could not be converted to JSON.", anything else that
  is not a ``CapabilityError`` (the host's ``frame`` factory raising, say)
  is ``INTERNAL`` "The capability failed while running." The operator gets
  the real exception on the ``orpc_agent`` logger.

``GovernedTool`` lives in ``_mcp_tool``, ``FrameFactory`` and the ``_meta``
keys in ``_mcp_call``; both are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool

from ._mcp_call import APPROVAL_ID_META, FrameFactory
from ._mcp_call import APPROVAL_META as APPROVAL_META
from ._mcp_call import ERROR_META as ERROR_META
from ._mcp_tool import GovernedTool
from .registry import CapabilityRegistry

__all__ = ["governed_tools", "create_mcp_server", "GovernedTool", "FrameFactory", "APPROVAL_ID_META"]


def governed_tools(
    registry: CapabilityRegistry,
    *,
    frame: FrameFactory | None = None,
    include_contextual: bool = False,
    confirm_in_client: Sequence[str] = (),
) -> list[Tool]:
    """One governed tool per capability exposed on the ``mcp`` surface.
    Contextual capabilities are presented only bound to a context, so an
    unbound tool list leaves them out (as Node's adapters and the agent
    framework adapters do); ``include_contextual=True`` lists them too.
    Exposure itself is the core's answer either way.

    ``confirm_in_client``: approval types (e.g. ``"human-confirmation"``)
    whose requests are put to the person at the client through MCP
    elicitation when the client declared that capability: accept records
    the approval (approver: the frame's actor, under
    ``approver_must_differ``) and runs the call once; decline or cancel
    rejects it; no elicitation, a decision refused under
    ``approver_must_differ`` or no answer before the request expires leaves
    the ordinary approval-required result. A request decided elsewhere
    meanwhile answers what became of it; one approved elsewhere runs in
    this call only if the person accepted."""
    return [
        GovernedTool.from_descriptor(registry, d, frame, confirm_in_client)
        for d in registry.descriptors("mcp")
        if include_contextual or d.get("discovery") != "contextual"
    ]


def create_mcp_server(
    registry: CapabilityRegistry,
    name: str = "orpc-agent",
    *,
    frame: FrameFactory | None = None,
    include_contextual: bool = False,
    confirm_in_client: Sequence[str] = (),
    **server_options: Any,
) -> MCPServer[Any]:
    """An ``MCPServer`` serving the registry's MCP-exposed capabilities
    (contextual ones only with ``include_contextual=True``; approvals of the
    ``confirm_in_client`` types answered in the client: see
    ``governed_tools``)."""
    tools = governed_tools(
        registry, frame=frame, include_contextual=include_contextual, confirm_in_client=confirm_in_client
    )
    return MCPServer(name, tools=tools, **server_options)
