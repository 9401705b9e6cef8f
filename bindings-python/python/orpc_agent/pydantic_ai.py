"""PydanticAI adapter (PyPI ``pydantic-ai-slim``): governed capabilities as
a toolset whose gated calls are PydanticAI's deferred approvals.

``governed_toolset(registry, frame)`` lists every capability the core
exposes on surface ``aiSdk`` (contextual ones left out): the tool name is
the descriptor's ``toolNames.aiSdk``, the parameters its input JSON Schema.
Arguments are not validated by PydanticAI (an any-schema validator): the
core validates at stage 4, so there is one validation and one error text.

Each call runs the governed pipeline once:

- an output is the tool's return value (its JSON form);
- a ``CapabilityError`` is ``ToolFailed`` with the core's text (``CODE:
  message`` and the code's hint): the model reads it, and it does not
  spend PydanticAI's retry budget — the core's text says whether to call
  again (MCP errors answered with retries were what queued duplicate
  approvals and ended runs with ``UnexpectedModelBehavior``);
- ``approval_required`` raises ``ApprovalRequired`` with the core's
  description of the request (id, capability, type, reason, expiry; never
  the input) as the call's metadata under ``"orpc-agent/approval"``, so
  the run ends with ``DeferredToolRequests`` (give the agent
  ``output_type=[..., DeferredToolRequests]``). A call presented again
  while its request is open (pending or approved) gets the same request:
  one call, one request.

Answer the requests with ``await toolset.answer(requests, {call_id:
True | False}, approver=...)``: the core approves or rejects each, and the
``DeferredToolResults`` it returns carry the request ids (a rejected call
gets ``ToolDenied`` with the core's answer as what the model reads). Run
the agent again with ``message_history=`` and ``deferred_tool_results=``:
the approved call resumes the core's request once (only this tool's,
made on ``aiSdk`` by this caller); a replay is refused by the core
(``APPROVAL_CONSUMED``). ``DeferredToolResults`` built by the app with
``True`` work too: the adapter records the approval as the core's decision
(approver: the ``approver`` option, else the frame's actor id) unless
``decide_approvals=False``. An approved call resumes only its own request:
the one kept for it (caller, call id, tool, arguments), or, where none is
kept (another process), the one its metadata names if that request holds
these arguments. Metadata naming another call's request, and
``ToolApproved(override_args=...)`` (the request holds the arguments the
model sent; an edit needs an approval of its own), run nothing: the model
reads ``APPROVAL_NOT_FOUND``.

``GovernedToolset`` lives in ``_pydantic_ai_toolset`` and is re-exported
here.
"""

from __future__ import annotations

from collections.abc import MutableMapping

# First of the package's modules imported here: `_pydantic_ai_toolset`
# imports PydanticAI before any other orpc_agent module, as this module did.
from ._pydantic_ai_toolset import APPROVAL_META, GovernedToolset, PrincipalRequiredError
from .registry import CapabilityRegistry
from .types import Frame

__all__ = ["governed_toolset", "GovernedToolset", "PrincipalRequiredError", "APPROVAL_META"]


def governed_toolset(
    registry: CapabilityRegistry,
    frame: Frame | None = None,
    *,
    id: str | None = None,
    approver: str | None = None,
    decide_approvals: bool = True,
    approval_ids: MutableMapping[str, str] | None = None,
) -> GovernedToolset:
    """The registry's capabilities exposed on ``aiSdk`` as a PydanticAI
    toolset for one caller (``Agent(toolsets=[...])`` or ``agent.run(...,
    toolsets=[...])``). ``frame`` names the caller (its surface is replaced
    by ``aiSdk``); a call that needs approval needs an actor id or a
    session id in it (``PrincipalRequiredError`` otherwise).
    ``approval_ids``: where request ids wait for calls answered without
    this toolset's ``answer`` (default: in process, per registry)."""
    return GovernedToolset(
        registry, frame, id=id, approver=approver, decide_approvals=decide_approvals, approval_ids=approval_ids
    )
