"""Secret-leak scan (issue 10, item 2) through the Python binding.

A sentinel secret goes in through every path — an output the redactor
removes, inputs of rejected calls (invalid input, policy denied, not
found), an approval input behind ``redact_approval_input``, a handler error
naming it — and must come out of none: error messages (and their repr,
args, details, cause), audit records (payloads on), trace fields, log lines
(``logging``, stdout, stderr, warnings) or MCP results (the real ``mcp``
in-memory ``Client``).
"""

from __future__ import annotations

import json
import logging
import warnings
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel

from orpc_agent import (
    ApprovalRequired,
    CapabilityError,
    Deny,
    Frame,
    InvokeOk,
    capability,
    create_capability_registry,
    host_policy,
)
from orpc_agent.mcp import APPROVAL_META, create_mcp_server

SECRET = "SENTINEL-7f3a9c-do-not-leak"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _strip(value: Any, _info: Any = None) -> Any:
    if isinstance(value, BaseModel):  # the approval input, as its model
        value = value.model_dump()
    return {k: v for k, v in value.items() if k != "secret"}


class Id(BaseModel):
    id: str


class NewAccount(BaseModel):
    name: str
    pin: int


class PurgeIn(BaseModel):
    id: str
    token: str


class TransferIn(BaseModel):
    to: str
    amount: int
    secret: str


EXPOSE = {"direct": True, "mcp": True}


@capability(id="acct.get", description="Get an account.", expose=EXPOSE, side_effect="read", risk="low", redact_output=_strip)
async def get(q: Id) -> dict[str, str]:
    return {"id": q.id, "secret": SECRET}


@capability(id="acct.create", description="Create an account.", expose=EXPOSE, side_effect="write", risk="low")
async def create(q: NewAccount) -> dict[str, bool]:
    return {"created": True}


@capability(id="acct.purge", description="Purge an account.", expose=EXPOSE, side_effect="destructive", risk="high",
            policies=[host_policy(lambda r: Deny("inputs with credentials are refused"), name="no-secrets")])
async def purge(q: PurgeIn) -> dict[str, bool]:
    return {"purged": True}


@capability(id="acct.transfer", description="Transfer funds.", expose=EXPOSE, side_effect="write", risk="high",
            approval={"required": True, "type": "human-confirmation"}, redact_approval_input=_strip, redact_output=_strip)
async def transfer(q: TransferIn) -> dict[str, Any]:
    return {"to": q.to, "amount": q.amount, "secret": q.secret}


@capability(id="acct.fail", description="Always fails.", expose=EXPOSE, side_effect="read", risk="low")
async def fail(q: Id) -> None:
    raise RuntimeError(f"connect failed: password {SECRET} rejected")


@capability(id="acct.hidden", description="Direct only.", expose={"direct": True}, side_effect="read", risk="low")
async def hidden(q: Id) -> dict[str, str]:
    return {"secret": SECRET}


def build(audit: list[dict[str, Any]]) -> Any:
    return create_capability_registry([get, create, purge, transfer, fail, hidden], audit=audit.append, audit_payloads=True)


def text_of(value: Any) -> str:
    """Everything an object shows: repr, str, and for errors their args, details, cause, context, notes."""
    parts = [repr(value), str(value)]
    if isinstance(value, BaseException):
        parts += [repr(value.args), repr(getattr(value, "details", None)), repr(getattr(value, "__notes__", None))]
        for chained in (value.__cause__, value.__context__):
            if chained is not None:
                parts.append(text_of(chained))
    return "\n".join(parts)


def assert_no_secret(where: str, value: Any) -> None:
    text = value if isinstance(value, str) else text_of(value)
    assert SECRET not in text, f"{where} leaks the secret: {text[:400]}"


def frame(surface: str) -> Frame:
    return Frame(surface, actor={"id": "agent-1"}, traceparent=TRACEPARENT, tracestate="vendor=x", request_id="req-1")


async def rejected_calls(registry: Any, surface: str) -> list[CapabilityError]:
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("INVALID_INPUT", "acct.create", {"name": "x", "pin": SECRET}),
        ("INVALID_INPUT", "acct.create", {"name": 3, "pin": 1, SECRET: SECRET}),
        ("POLICY_DENIED", "acct.purge", {"id": "a", "token": SECRET}),
        ("NOT_FOUND", "acct.nope", {"token": SECRET}),
        ("EXECUTION_FAILED", "acct.fail", {"id": "a"}),
    ]
    if surface != "direct":
        cases.append(("NOT_FOUND", "acct.hidden", {"id": SECRET}))
    errors = []
    for code, cap, inp in cases:
        with pytest.raises(CapabilityError) as info:
            await registry.invoke(cap, inp, frame(surface))
        assert info.value.code == code, (cap, info.value)
        errors.append(info.value)
    return errors


async def test_no_error_audit_trace_or_log_carries_the_secret(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit)
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        ok = await registry.invoke("acct.get", {"id": "a"}, frame("mcp"))
        errors = await rejected_calls(registry, "direct") + await rejected_calls(registry, "mcp")
        pending = await registry.invoke("acct.transfer", {"to": "bob", "amount": 5, "secret": SECRET}, frame("direct"))
        assert isinstance(pending, ApprovalRequired)
        assert_no_secret("an approval outcome's repr", pending)
        view = await registry.redact_approval_input(pending.request)
        registry.approvals.approve(pending.request.id, approver="ops", reason="fine")
        done = await registry.resume(pending.request.id)
    assert isinstance(ok, InvokeOk) and ok.output == {"id": "a"}
    assert view == {"to": "bob", "amount": 5}
    assert isinstance(done, InvokeOk) and done.output == {"to": "bob", "amount": 5}
    assert len(errors) == 11
    for e in errors:
        assert_no_secret(f"{e.code} error", e)
    assert len(audit) >= len(errors) + 3
    assert any(r.get("traceparent") == TRACEPARENT for r in audit)
    assert any(r.get("output") is not None for r in audit), "payloads were recorded"
    for r in audit:
        assert_no_secret(f"audit record {r.get('event')} {r.get('outcome')}", json.dumps(r))
    out = capsys.readouterr()
    # The operator's channel (issue 15): the orpc_agent logger's failure
    # records carry the real exception, by design; everything else —
    # other records, stdout, stderr, warnings — carries no secret.
    operator = [r for r in caplog.records if r.name == "orpc_agent" and r.exc_info]
    assert any("acct.fail" in r.getMessage() for r in operator), "the handler's failure reached the operator"
    others = [f"{r.getMessage()}" for r in caplog.records if r not in operator]
    logs = "\n".join([out.out, out.err, *others, *(str(w.message) for w in warned)])
    assert_no_secret("logging/stdout/stderr/warnings", logs)
    for r in operator:
        assert_no_secret("an operator record's message line", r.getMessage())


async def test_the_scan_can_fail() -> None:
    registry = build([])
    r = await registry.invoke("acct.hidden", {"id": "a"}, frame("direct"))
    assert isinstance(r, InvokeOk)
    with pytest.raises(AssertionError, match="leaks the secret"):
        assert_no_secret("unredacted output", r.output)


async def test_no_mcp_result_carries_the_secret(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit)
    caplog.set_level(logging.DEBUG)
    results: list[Any] = []
    server = create_mcp_server(registry, "acct", frame=lambda ctx: Frame("mcp", actor={"id": "agent-1"}))
    async with Client(server) as client:
        ok = await client.call_tool("acct_get", {"id": "a"})
        assert not ok.is_error and ok.structured_content == {"id": "a"}
        results.append(ok)
        for name, args in [
            ("acct_create", {"name": "x", "pin": SECRET}),
            ("acct_purge", {"id": "a", "token": SECRET}),
            ("acct_hidden", {"id": SECRET}),
            ("acct_nope", {"token": SECRET}),
            ("acct_fail", {"id": "a"}),
        ]:
            r = await client.call_tool(name, args)
            assert r.is_error, name
            results.append(r)
        pending = await client.call_tool("acct_transfer", {"to": "bob", "amount": 5, "secret": SECRET})
        results.append(pending)
        request_id = pending.meta[APPROVAL_META]["id"]  # type: ignore[index]
        registry.approvals.approve(request_id, approver="ops")
        done = await registry.resume(request_id)
    assert isinstance(done, InvokeOk) and done.output == {"to": "bob", "amount": 5}
    for r in results:
        assert_no_secret("MCP result", r.model_dump_json())
    for rec in audit:
        assert_no_secret("audit record", json.dumps(rec))
    out = capsys.readouterr()
    # The orpc_agent logger's failure records (the operator's channel) carry
    # the real exception; nothing else does.
    others = [r.getMessage() for r in caplog.records if not (r.name == "orpc_agent" and r.exc_info)]
    assert_no_secret("logging/stdout/stderr", "\n".join([out.out, out.err, *others]))
