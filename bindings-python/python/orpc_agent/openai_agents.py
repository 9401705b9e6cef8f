"""OpenAI Agents SDK adapter (PyPI ``openai-agents``): governed capabilities
as the SDK's ``FunctionTool``s, approvals as the SDK's run interruptions.

``governed_tools(registry, frame)`` lists every capability the core exposes
on surface ``aiSdk`` (contextual ones left out) as a ``FunctionTool``: the
tool name is the descriptor's ``toolNames.aiSdk``, the parameters are the
descriptor's input JSON Schema — strict when the SDK can make it strict
without changing what it accepts (the SDK's own rule for MCP tools), else
not strict. The SDK validates nothing more: the core validates at stage 4.

The approval decision is the core's, asked through one invocation (as in
Node's AI SDK adapter). The SDK asks a tool's ``needs_approval`` before it
runs it; the adapter answers by running the governed call:

- ``approval_required`` → ``True``: the core stored a request, its id is
  kept under the caller and the tool call id, and the run ends with an
  interruption (``result.interruptions``);
- anything else → ``False``: the settled outcome (the output, or the
  core's error text) is what the tool returns when the SDK calls it — the
  pipeline ran once.

Answer an interruption with ``await tools.approve(state, item,
approver=...)`` (the core's approve, then ``state.approve``) or ``await
tools.reject(state, item, approver=...)`` (the core's reject, then
``state.reject`` with the core's text for the model), then run the state
again; ``RunState.to_string()``/``from_string`` in between are fine. The
approved call resumes the core's request once (``through_tool``: only this
tool's request, made on ``aiSdk`` by this caller); a replay of the run is
refused by the core (``APPROVAL_CONSUMED``). A call presented again keeps
its one request while it is pending or approved; once run or rejected, it
is answered with the core's refusal, never with a second request
(``agent_tools::kept_request``). A plain ``state.approve(item)``
works too: the adapter records it as the core's decision (approver: the
``approver`` option, else the frame's actor id) unless
``decide_approvals=False``. A plain ``state.reject(item)`` never reaches a
tool: the core's request stays pending until it expires.

What the model reads of a call without an output is the core's text
(``CODE: message`` and the code's hint); an exception that is not a
``CapabilityError`` is ``INTERNAL`` with a fixed text, the exception on the
``orpc_agent`` logger.

``GovernedTools`` lives in ``_openai_tools`` and is re-exported here.
"""

from __future__ import annotations

from collections.abc import MutableMapping

# First of the package's modules imported here: `_openai_tools` imports
# the SDK (`agents`) before any other orpc_agent module, as this module did.
from ._openai_tools import GovernedTools, PrincipalRequiredError
from .registry import CapabilityRegistry
from .types import Frame

__all__ = ["governed_tools", "GovernedTools", "PrincipalRequiredError"]


def governed_tools(
    registry: CapabilityRegistry,
    frame: Frame | None = None,
    *,
    approver: str | None = None,
    decide_approvals: bool = True,
    approval_ids: MutableMapping[str, str] | None = None,
) -> GovernedTools:
    """The registry's capabilities exposed on ``aiSdk``, as ``FunctionTool``s
    for one caller. ``frame`` names the caller (actor, session, context;
    its surface is replaced by ``aiSdk``); a call that needs approval needs
    an actor id or a session id in it (``PrincipalRequiredError``
    otherwise). ``approval_ids``: where request ids wait between the
    interruption and the approved run (default: in process, per registry);
    pass a shared mapping when another process resumes the run."""
    return GovernedTools(
        registry, frame, approver=approver, decide_approvals=decide_approvals, approval_ids=approval_ids
    )
