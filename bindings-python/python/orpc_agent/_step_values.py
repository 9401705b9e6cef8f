"""The values the step loop hands across: the input and output as JSON for
the core (``ExportInput``, ``ExportOutput``), the redactor's
``RedactionInfo``, and on resume the stored input and the recorded frame
given back to the handler and the hooks.

Conversions only, nothing is decided here: separate from the step loop
(``_driver``) so that the loop reads as the steps it performs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from . import _native
from ._app_errors import APP_FAILURES
from .errors import CapabilityError
from .schema import rebuilds, restore, to_jsonable
from .types import RedactionInfo

if TYPE_CHECKING:
    from .capability import CapabilitySpec


def _redaction_info(inv: Any, frame: _native.Frame) -> RedactionInfo:
    info = inv.redaction_info()
    return RedactionInfo(info["surface"], info["capabilityId"], info.get("actor") or {}, frame.context)


def _dump(schema: Any, value: Any) -> Any:
    return schema.dump(value) if schema is not None else to_jsonable(value)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _export_input(inv: Any, schema: Any, value: Any) -> int:
    """Answers ``ExportInput``: the validated input's JSON form, which the
    core judges (predicates), hashes and stores, and from which a resumed
    handler gets its input back (``restore``, no validation). A form that
    does not give the value back exactly (a lossy serializer, an excluded
    field that was set, a value of a type JSON does not carry back) is not
    a form of this value: not exportable, so nothing is bound to it."""
    try:
        dumped = _dump(schema, value)
    except APP_FAILURES as e:
        # A serializer that raises: the core ends the call (INVALID_INPUT,
        # audited) with its own reason; the app's CapabilityError says its own.
        return int(
            inv.answer(_native.ANSWER_INPUT_NOT_EXPORTABLE, e.message if isinstance(e, CapabilityError) else None)
        )
    if not rebuilds(schema, value, dumped) and _is_json(dumped):
        # (Text without a JSON form — NaN, a value no JSON holds — is
        # handed over as is: the core names why it cannot be bound.)
        return int(inv.answer(_native.ANSWER_INPUT_NOT_REBUILT))
    return int(inv.input_exported(dumped))


def _handler_input(inv: Any, spec: CapabilitySpec, value: Any) -> tuple[bool, Any]:
    """The handler's input for this ``RunHandler`` step: on resume, the
    stored validated input, restored without validating it again (it was
    validated once, before its hash bound it; the approver saw it)."""
    stored = inv.input_json()
    if stored is None:
        return True, value
    try:
        return True, restore(spec.input, stored)
    except APP_FAILURES:
        return False, None


def _core_frame(inv: Any, frame: _native.Frame) -> _native.Frame:
    """The frame as the core holds it, with the caller's context: what a
    host policy is shown, and a resumed handler (the recorded surface and
    actor, SI-3). Stage 3 dropped what names no one (an empty actor or
    session id, an invalid trace), so a policy reads the core's frame, as
    in every binding, never the caller's raw one."""
    f = inv.frame()
    trace = f.get("trace") or {}
    return _native.Frame(
        f["surface"],
        actor=f.get("actor"),
        traceparent=trace.get("traceparent"),
        tracestate=trace.get("tracestate"),
        request_id=f.get("requestId"),
        agent_id=f.get("agentId"),
        session_id=f.get("sessionId"),
        context=frame.context,
    )
