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
import math
import warnings
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel, field_serializer, field_validator, model_validator
from pydantic_core import PydanticCustomError

from orpc_agent import (
    ApprovalRequired,
    CapabilityError,
    Deny,
    Frame,
    InvokeOk,
    capability,
    create_capability_registry,
    host_policy,
    input_hash,
)
from orpc_agent.mcp import APPROVAL_META, ERROR_META, create_mcp_server

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


@capability(
    id="acct.get", description="Get an account.", expose=EXPOSE, side_effect="read", risk="low", redact_output=_strip
)
async def get(q: Id) -> dict[str, str]:
    return {"id": q.id, "secret": SECRET}


@capability(id="acct.create", description="Create an account.", expose=EXPOSE, side_effect="write", risk="low")
async def create(q: NewAccount) -> dict[str, bool]:
    return {"created": True}


@capability(
    id="acct.purge",
    description="Purge an account.",
    expose=EXPOSE,
    side_effect="destructive",
    risk="high",
    policies=[host_policy(lambda r: Deny("inputs with credentials are refused"), name="no-secrets")],
)
async def purge(q: PurgeIn) -> dict[str, bool]:
    return {"purged": True}


@capability(
    id="acct.transfer",
    description="Transfer funds.",
    expose=EXPOSE,
    side_effect="write",
    risk="high",
    approval={"required": True, "type": "human-confirmation"},
    redact_approval_input=_strip,
    redact_output=_strip,
)
async def transfer(q: TransferIn) -> dict[str, Any]:
    return {"to": q.to, "amount": q.amount, "secret": q.secret}


@capability(id="acct.fail", description="Always fails.", expose=EXPOSE, side_effect="read", risk="low")
async def fail(q: Id) -> None:
    raise RuntimeError(f"connect failed: password {SECRET} rejected")


@capability(id="acct.hidden", description="Direct only.", expose={"direct": True}, side_effect="read", risk="low")
async def hidden(q: Id) -> dict[str, str]:
    return {"secret": SECRET}


def build(audit: list[dict[str, Any]]) -> Any:
    return create_capability_registry(
        [get, create, purge, transfer, fail, hidden], audit=audit.append, audit_payloads=True
    )


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


async def test_no_error_audit_trace_or_log_carries_the_secret(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
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
    # The input hash is an unsalted SHA-256 of the full input: next to a
    # redacted view, hashing candidates would recover the secret (issue 15,
    # item 5). No outcome, view or audit record carries it.
    digest = input_hash("acct.transfer", {"to": "bob", "amount": 5, "secret": SECRET})
    shown = [pending.request.raw, registry.approvals.get(pending.request.id).raw, *audit]  # type: ignore[union-attr]
    assert all(digest not in json.dumps(v) for v in shown)
    # The operator's audit record names the failure's class, not its text.
    failed = [r for r in audit if r.get("event") == "finished" and r.get("capabilityId") == "acct.fail"]
    assert failed and all(r.get("failure") == "RuntimeError" for r in failed), failed
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


async def test_no_mcp_result_carries_the_secret(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
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
        request_id = pending.meta[APPROVAL_META]["requestId"]  # type: ignore[index]
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


# --- Exception text from application code never reaches an MCP result (issue 15, item 4) ---

DSN = "postgres://user:hunter2@db"


class Unprintable:
    """An output object whose every text form raises with the secret."""

    def __str__(self) -> str:
        raise RuntimeError(f"cannot reach {DSN}")

    def __repr__(self) -> str:
        raise RuntimeError(f"cannot reach {DSN}")


class Row(BaseModel):
    n: int

    @field_serializer("n")
    def _n(self, v: int) -> int:
        raise RuntimeError(f"lost the connection to {DSN}")


class Lookup(BaseModel):
    id: str

    @field_validator("id")
    @classmethod
    def _exists(cls, v: str) -> str:
        raise ValueError(f"lookup failed on {DSN}")


class Parsed(BaseModel):
    id: str

    @field_validator("id")
    @classmethod
    def _number(cls, v: str) -> str:
        return str(int(v))  # int()'s ValueError quotes the rejected value


class Asserted(BaseModel):
    id: str

    @model_validator(mode="after")
    def _check(self) -> Asserted:
        assert self.id == "ok", DSN
        return self


class Crashing(BaseModel):
    id: str

    @field_validator("id")
    @classmethod
    def _crash(cls, v: str) -> str:
        raise RuntimeError(DSN)


class Checked(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def _check(cls, v: int) -> int:
        raise ValueError(DSN)


M = {"mcp": True}
_LEAKY: list[Any] = []


def _leaky(id: str, fn: Any) -> Any:
    cap = capability(id=id, description="Leaks, if it can.", expose=M, side_effect="read", risk="low")(fn)
    _LEAKY.append(cap)
    return cap


async def _unprintable(q: Id) -> dict[str, Any]:
    return {"v": Unprintable()}


async def _unprintable_top(q: Id) -> Any:
    return Unprintable()


async def _serializer(q: Id) -> Any:
    return Row(n=1)


async def _nan(q: Id) -> dict[str, Any]:
    return {"v": math.nan}


async def _inf(q: Id) -> float:
    return math.inf


async def _cycle(q: Id) -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["d"] = d
    return d


async def _raises(q: Id) -> None:
    raise RuntimeError(f"connect failed: {DSN}")


async def _lookup(q: Lookup) -> int:
    return 1


async def _parsed(q: Parsed) -> int:
    return 1


async def _asserted(q: Asserted) -> int:
    return 1


async def _crashing(q: Crashing) -> int:
    return 1


async def _checked(q: Id) -> Checked:
    return {"n": 1}  # type: ignore[return-value]  # validated into Checked, whose validator raises


for _id, _fn in [
    ("leak.unprintable", _unprintable),
    ("leak.unprintable_top", _unprintable_top),
    ("leak.serializer", _serializer),
    ("leak.nan", _nan),
    ("leak.inf", _inf),
    ("leak.cycle", _cycle),
    ("leak.raises", _raises),
    ("leak.lookup", _lookup),
    ("leak.parsed", _parsed),
    ("leak.asserted", _asserted),
    ("leak.crashing", _crashing),
    ("leak.checked", _checked),
]:
    _leaky(_id, _fn)

NOT_JSON = ("INTERNAL", "The capability's output could not be converted to JSON.")
CASES: list[tuple[str, dict[str, Any], tuple[str, str]]] = [
    ("leak_unprintable", {"id": "a"}, NOT_JSON),
    ("leak_unprintable_top", {"id": "a"}, NOT_JSON),
    ("leak_serializer", {"id": "a"}, NOT_JSON),
    ("leak_nan", {"id": "a"}, NOT_JSON),
    ("leak_inf", {"id": "a"}, NOT_JSON),
    ("leak_cycle", {"id": "a"}, NOT_JSON),
    ("leak_raises", {"id": "a"}, ("EXECUTION_FAILED", "The capability failed while running.")),
    ("leak_lookup", {"id": "a"}, ("INVALID_INPUT", "The input is invalid: /id: Value error.")),
    ("leak_parsed", {"id": "hunter2"}, ("INVALID_INPUT", "The input is invalid: /id: Value error.")),
    ("leak_asserted", {"id": "a"}, ("INVALID_INPUT", "The input is invalid: /: Assertion failed.")),
    ("leak_crashing", {"id": "a"}, ("INVALID_INPUT", "The input could not be validated, so the call did not run.")),
    (
        "leak_checked",
        {"id": "a"},
        ("OUTPUT_INVALID", "The capability returned output that does not match its declared schema."),
    ),
]


async def test_no_exception_text_from_application_code_reaches_an_mcp_result(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    registry = create_capability_registry(_LEAKY)
    results = {}
    async with Client(create_mcp_server(registry, frame=lambda ctx: Frame("mcp", actor={"id": "agent-1"}))) as client:
        for tool, args, _ in CASES:
            results[tool] = await client.call_tool(tool, args)
    for tool, _, (code, message) in CASES:
        r = results[tool]
        dumped = r.model_dump_json(by_alias=True)  # content, structuredContent and _meta
        assert "hunter2" not in dumped, f"{tool} leaks: {dumped[:400]}"
        assert r.is_error is True, tool
        assert r.structured_content is None, tool
        assert r.meta[ERROR_META]["code"] == code, (tool, r.meta)  # type: ignore[index]
        assert r.meta[ERROR_META]["message"] == message, (tool, r.meta)  # type: ignore[index]
        # The core's text: code, message, then what the model can do next.
        assert r.content[0].text.startswith(f"{code}: {message}"), tool  # type: ignore[union-attr]
    # The operator gets the real exception on the orpc_agent logger.
    operator = [rec for rec in caplog.records if rec.name == "orpc_agent" and rec.exc_info]
    for what in (
        "leak.unprintable",
        "leak.serializer",
        "leak.nan",
        "leak.raises",
        "leak.lookup",
        "leak.parsed",
        "leak.crashing",
    ):
        assert any(what + " " in rec.getMessage() for rec in operator), what
    for what in ("leak.serializer", "leak.raises", "leak.lookup", "leak.parsed", "leak.crashing"):
        assert any(what + " " in rec.getMessage() and "hunter2" in str(rec.exc_info[1]) for rec in operator), what  # type: ignore[index]
    for rec in operator:
        assert "hunter2" not in rec.getMessage()


async def test_a_frame_factory_that_raises_reaches_only_the_operator(caplog: pytest.LogCaptureFixture) -> None:
    def factory(ctx: Any) -> Frame:
        raise RuntimeError(f"session store at {DSN} is down")

    caplog.set_level(logging.DEBUG)
    registry = create_capability_registry(_LEAKY)
    async with Client(create_mcp_server(registry, frame=factory)) as client:
        r = await client.call_tool("leak_raises", {"id": "a"})
    assert "hunter2" not in r.model_dump_json(by_alias=True)
    assert r.is_error and r.meta[ERROR_META]["code"] == "INTERNAL"  # type: ignore[index]
    assert r.content[0].text == "INTERNAL: The capability failed while running."  # type: ignore[union-attr]
    assert any(
        rec.name == "orpc_agent" and rec.exc_info and "hunter2" in str(rec.exc_info[1]) for rec in caplog.records
    )


class Known(BaseModel):
    id: str
    n: int = 0

    @field_validator("id")
    @classmethod
    def _known(cls, v: str) -> str:
        if v != "ok":
            raise PydanticCustomError("unknown_id", "no such id; list the ids first")
        return v


@capability(id="leak.known", description="Checks an id.", expose=M, side_effect="read", risk="low")
async def known(q: Known) -> int:
    return 1


async def test_pydantic_s_own_reasons_and_custom_errors_still_reach_the_model() -> None:
    # What pydantic writes itself, and a PydanticCustomError the application
    # wrote for the model, are not an exception's text: they stay.
    registry = create_capability_registry([known])
    with pytest.raises(CapabilityError) as custom:
        await registry.invoke("leak.known", {"id": "x"}, Frame("mcp"))
    assert custom.value.message == "The input is invalid: /id: no such id; list the ids first."
    with pytest.raises(CapabilityError) as own:
        await registry.invoke("leak.known", {"id": "ok", "n": "many"}, Frame("mcp"))
    assert own.value.message.startswith("The input is invalid: /n: Input should be a valid integer")
