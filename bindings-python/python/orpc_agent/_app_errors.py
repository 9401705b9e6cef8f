"""What the core is told when application code raises (an input validator,
a handler, a host policy, a redactor), and what the operator's log gets:
the exception itself, never passed on to the caller or the model (SI-10).

Separate from the step loop (``_driver``) because the registry's fast path
(``CapabilityRegistry._invoke_slow``) maps a validator or handler that
raised in the native crossing the same way, before the loop runs.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from . import _native
from .errors import CapabilityError
from .schema import InputIssues

_log = logging.getLogger("orpc_agent")

#: What application code (a handler, validator, host policy, redactor,
#: serializer) raising is that code's own failure: any ``Exception``, and a
#: ``CancelledError`` it raised itself. The caller's cancellation never
#: comes out of a hook's own call or result: it arrives at the driver's
#: awaits, which let it through; so a ``CancelledError`` from application
#: code is the code's failure, as Node's ``AbortError`` and Swift's
#: ``CancellationError`` thrown by a hook are — never "cancelled by the
#: caller" (the core's CANCELLED) when nobody cancelled.
APP_FAILURES = (Exception, asyncio.CancelledError)


#: pydantic error types whose message ends in the text of an exception that
#: application code raised (a validator's ``ValueError``/``assert``, a
#: getter, an iterator, a mapping): that text may quote the input or hold a
#: secret (``int('4111…')``, a connection string), so only pydantic's own
#: words are kept. A message meant for the model is raised as
#: ``PydanticCustomError`` or :class:`InputIssues`.
_EXCEPTION_TEXT = {
    "value_error": "Value error",
    "assertion_error": "Assertion failed",
    "get_attribute_error": "Error extracting attribute",
    "iteration_error": "Error iterating over object",
    "mapping_type": "Input should be a valid mapping",
}

#: pydantic error types whose message quotes the input itself (the tag a
#: discriminated union did not know, a character of a UUID): pydantic's
#: words without the quoted value. The input's own text never reaches the
#: model (issues.rs: an issue names a field and a reason, not the value).
_QUOTES_INPUT = {
    "union_tag_invalid": "Input tag does not match any of the expected tags: {expected_tags}",
    "uuid_parsing": "Input should be a valid UUID",
}


def _issue_text(e: Any) -> str:
    kind = e.get("type")
    template = _QUOTES_INPUT.get(kind)
    if template is None:
        return str(e.get("msg"))
    ctx = e.get("ctx") or {}
    return template.format(expected_tags=ctx.get("expected_tags", "?"))


def _invalid_input(inv: Any, exc: BaseException) -> int:
    """Stage 4's answer for a validator that raised: its issues (pydantic's
    field paths and reasons, or a :class:`InputIssues`), from which the core
    writes the model's message, or a :class:`CapabilityError`, whose message
    is shown; anything else only says the input could not be validated —
    an exception's text may quote the input (SI-10)."""
    if isinstance(exc, CapabilityError):  # the app's own words: shown as INVALID_INPUT
        return int(inv.answer(_native.ANSWER_INPUT_INVALID, str(exc.message)))
    if isinstance(exc, InputIssues):
        try:
            issues = [(_path_text(path), str(msg)) for path, msg in exc.issues]
        except Exception:  # not (path, message) pairs: a failed validator, as the core reads malformed issues
            _operator_log(inv, "the input validator", exc)
            return int(inv.answer(_native.ANSWER_INPUT_VALIDATOR_FAILED))
        return _issues_answer(inv, issues)
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic.ValidationError
        withheld = False
        try:
            issues = []
            for e in errors(include_url=False, include_input=False, include_context=True):
                msg = _EXCEPTION_TEXT.get(e.get("type"))
                withheld = withheld or msg is not None
                issues.append(([str(p) for p in e.get("loc", ())], msg if msg is not None else _issue_text(e)))
        except Exception:
            issues = []
        if withheld or not issues:
            _operator_log(inv, "the input validator", exc)
        if issues:
            return _issues_answer(inv, issues)
    else:
        _operator_log(inv, "the input validator", exc)
    return int(inv.answer(_native.ANSWER_INPUT_VALIDATOR_FAILED))


def _path_text(path: Any) -> list[str]:
    """An issue's path as text: a list or tuple of keys and indices (a bare
    string is not a path: ``"email"`` would read as ``e/m/a/i/l``)."""
    if not isinstance(path, (list, tuple)):
        raise TypeError(f"an issue's path is a list of keys, not {type(path).__name__}")
    return [str(p) for p in path]


def _issues_answer(inv: Any, issues: list[tuple[list[str], str]]) -> int:
    """The validator's issues as the core reads them (``ffi::answer``)."""
    text = json.dumps([{"path": path, "message": message} for path, message in issues])
    return int(inv.answer(_native.ANSWER_INPUT_ISSUES, text))


def _operator_log(inv: Any, what: str, exc: BaseException) -> None:
    """Tells the operator what application code raised, with the real
    exception (type, message, traceback) on the ``orpc_agent`` logger; the
    caller and the model only ever get the core's generic error."""
    _log.warning(
        "orpc_agent: %s of capability %s failed; the caller was only told that it failed",
        what,
        inv.capability_id,
        exc_info=exc,
    )


def _handler_failed(inv: Any, exc: BaseException) -> int:
    if isinstance(exc, CapabilityError):
        try:
            return int(inv.handler_error(exc.code, exc.message, exc.retryable, exc.details))
        except (TypeError, ValueError, OverflowError):
            # Fields changed to what the core cannot read: a plain failure
            # (EXECUTION_FAILED, the finished record delivered), as in Node.
            pass
    # A plain exception: the core replaces it by a generic EXECUTION_FAILED;
    # its text never reaches the caller (SI-10), only the operator's log.
    _operator_log(inv, "the handler", exc)
    return int(inv.handler_error(None, type(exc).__name__, False))
