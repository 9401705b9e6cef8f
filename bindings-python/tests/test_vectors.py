"""Every vector in tests/vectors/{registry,pipeline,hash}, through the public API.

Errors are compared by code (and path), never by message. The pipeline
vectors run on a manual event-loop clock starting at unix ms 1 000 000.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import cbor2
import pytest

from orpc_agent import (
    Abstain,
    Allow,
    ApprovalRequired,
    CapabilityError,
    Deny,
    RegistryValidationError,
    RequireApproval,
    create_capability_registry,
    define_capability,
    input_hash,
)
from orpc_agent.schema import to_jsonable
from virtual_loop import VirtualClock, run_virtual

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors"


def cases(suite: str) -> list[Any]:
    files = sorted((VECTORS / suite).glob("*.json"))
    out = [
        pytest.param(case, id=f"{f.stem}: {case['name']}") for f in files for case in json.loads(f.read_text())["cases"]
    ]
    assert out, f"no {suite} vectors"  # a vanished vector set must not pass
    return out


def subset(expected: Any, actual: Any, path: str = "") -> None:
    """Objects by key, arrays element-wise with equal length; an expected
    None also matches an absent key."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for k, v in expected.items():
            if v is None and k not in actual:
                continue
            assert k in actual, f"{path}.{k}: missing in {actual!r}"
            subset(v, actual[k], f"{path}.{k}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: {actual!r} != {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            subset(e, a, f"{path}[{i}]")
    else:
        assert expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


def _noop(x: Any, *_: Any) -> Any:
    return x


def _fill_markers(spec: Any) -> None:
    """Registry vectors declare hooks as markers; give each an implementation."""
    meta = spec.meta
    if not isinstance(meta, dict):
        return
    redact = meta.get("redact")
    if isinstance(redact, dict):
        if redact.get("output") is True:
            spec.redact_output = _noop
        if redact.get("approvalInput") is True:
            spec.redact_approval_input = _noop
    retry = meta.get("retry")
    if isinstance(retry, dict) and retry.get("retryOn") is True:
        spec.retry_on = lambda e: False
    policies = meta.get("policies")
    if isinstance(policies, list):
        for i, p in enumerate(policies):
            if isinstance(p, dict) and p.get("host") is True:
                spec.policies[i] = lambda r: None


# ----- registry ---------------------------------------------------------


def _keys(items: list[dict[str, Any]]) -> set[tuple[Any, str, str]]:
    return {(p.get("capability"), p["path"], p["code"]) for p in items}


@pytest.mark.parametrize("case", cases("registry"))
def test_registry_vector(case: dict[str, Any]) -> None:
    specs = []
    for cap_id, meta in case["capabilities"].items():
        spec = define_capability(_noop, id=cap_id, meta=meta)
        _fill_markers(spec)
        specs.append(spec)
    options = case.get("options") or {}
    runtime = {
        i: (lambda r: None)
        for i, p in enumerate(options.get("policies") or [])
        if isinstance(p, dict) and p.get("host") is True
    }
    host_policies = {p.get("name", ""): fn for i, fn in runtime.items() for p in [options["policies"][i]]}
    expect = case["expect"]
    if expect["valid"] is False:
        with pytest.raises(RegistryValidationError) as err:
            create_capability_registry(specs, options=options, host_policies=host_policies)
        actual = _keys(err.value.problems)
        assert actual == _keys(expect["problems"])
        assert len(err.value.problems) == len(actual), "duplicate problems"
        return
    try:
        reg = create_capability_registry(specs, options=options, host_policies=host_policies)
    except RegistryValidationError as e:
        # Unnamed runtime host policies cannot be bound by name: only then
        # is a MISSING_HOOK acceptable here, and no vector has one.
        raise AssertionError(f"expected a valid registry: {e.problems}") from e
    report = reg.inspect()
    warnings = {(c["id"], w["path"], w["code"]) for c in report["capabilities"] for w in c["warnings"]}
    assert warnings == _keys(expect.get("warnings", []))
    by_id = {c["id"]: c for c in report["capabilities"]}
    for cap_id, exp in (expect.get("resolved") or {}).items():
        subset(exp, by_id[cap_id]["resolved"], cap_id)
    for cap_id, exp in (expect.get("toolNames") or {}).items():
        subset(exp, by_id[cap_id]["toolNames"], cap_id)
        for name in by_id[cap_id]["toolNames"].values():
            assert reg._native.id_at(reg._native.resolve(name)) == cap_id
    for surface, ids in (expect.get("exposedOn") or {}).items():
        assert [d["id"] for d in reg.descriptors(surface)] == ids


# ----- hash -------------------------------------------------------------


def _decode_input(hex_cbor: str) -> Any:
    # Keep NaN/inf, byte strings, tags and non-text keys as host values.
    return cbor2.loads(bytes.fromhex(hex_cbor))


@pytest.mark.parametrize("case", cases("hash"))
def test_hash_vector(case: dict[str, Any]) -> None:
    if "input_cbor" in case:
        try:
            value = _decode_input(case["input_cbor"])
        except RecursionError:
            # cbor2 decodes recursively; the deep-nesting vector is arrays of
            # one item (0x81 …) around a scalar: built without recursion, so
            # no interpreter skips it.
            raw = bytes.fromhex(case["input_cbor"])
            depth = len(raw) - len(raw.lstrip(b"\x81"))
            value = cbor2.loads(raw[depth:])
            for _ in range(depth):
                value = [value]
    else:
        value = case["input"]
    if "error" in case:
        with pytest.raises(CapabilityError) as err:
            input_hash(case["capability"], value)
        assert err.value.code == case["error_code"]
        assert err.value.details == {"reason": case["error"]}
        if "message" in case:
            assert err.value.message == case["message"]
    else:
        assert input_hash(case["capability"], value) == case["sha256"]


def test_python_values_hash_like_json() -> None:
    # Python 1 and 1.0 hash alike (DESIGN §5); tuples are arrays; a pydantic
    # dump and the dict it came from agree.
    assert input_hash("c", {"a": 1.0}) == input_hash("c", {"a": 1})
    assert input_hash("c", {"a": (1, 2)}) == input_hash("c", {"a": [1, 2]})
    assert input_hash("c", {"a": 2**64 - 1}) != input_hash("c", {"a": float(2**64 - 1)})
    with pytest.raises(CapabilityError) as err:
        input_hash("c", {"a": math.inf})
    assert err.value.details == {"reason": "NON_FINITE_NUMBER"}


# ----- pipeline ---------------------------------------------------------


class MiniSchema:
    """The vectors' schema subset (tests/vectors/README.md)."""

    TYPES = {
        "string": lambda v: isinstance(v, str),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "null": lambda v: v is None,
    }

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema

    def validate(self, value: Any) -> Any:
        if "throw" in self.schema:  # a validator that raises (never shown)
            raise RuntimeError(self.schema["throw"])
        if "refuse" in self.schema:  # the app's own CapabilityError (shown)
            raise CapabilityError("INVALID_INPUT", self.schema["refuse"])
        if not isinstance(value, dict):
            raise ValueError("expected an object")
        value = {**self.schema.get("defaults", {}), **value}
        for k in self.schema.get("required", []):
            if k not in value:
                raise ValueError(f"`{k}` is required")
        for k, t in self.schema.get("properties", {}).items():
            if k in value and not self.TYPES[t](value[k]):
                raise ValueError(f"`{k}` must be a {t}")
        return value

    def dump(self, value: Any) -> Any:
        return value

    def json_schema(self) -> dict[str, Any]:
        return self.schema


def _handler(cap_id: str, h: dict[str, Any], calls: dict[str, int]) -> Any:
    kind = h["kind"]

    async def handler(x: Any) -> Any:
        calls[cap_id] = calls.get(cap_id, 0) + 1
        if kind == "echo":
            return x
        if kind == "fail-with-code":
            raise CapabilityError(
                h["code"], "the handler's own error", retryable=h.get("retryable"), details=h.get("details")
            )
        if kind == "fail-retryable-n-times":
            if calls[cap_id] <= h["n"]:
                raise CapabilityError("EXECUTION_FAILED", "transient", retryable=True)
            return x
        if kind == "delay":
            await asyncio.sleep(h["ms"] / 1000)
            return x
        if kind == "throw":
            raise RuntimeError(h["message"])
        if kind == "return":
            return h["value"]
        if kind == "return-nan":
            return {"score": float("nan")}
        if kind == "cancel-itself":
            raise asyncio.CancelledError  # its own, the caller not cancelled
        raise AssertionError(f"unknown handler kind {kind}")

    return handler


def _redactor(r: dict[str, Any]) -> Any:
    if r["kind"] == "throw":

        def throw(value: Any, info: Any) -> Any:
            raise RuntimeError(f"cannot redact {value!r}")

        return throw

    def mask(value: Any, info: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("***" if k in r["fields"] else v) for k, v in value.items()}
        return value

    return mask


def _policy(p: dict[str, Any]) -> Any:
    kind = p["kind"]

    async def policy(request: Any) -> Any:
        if kind == "allow":
            return Allow()
        if kind == "deny-anonymous":
            anonymous = request.frame.actor_id is None and request.frame.session_id is None
            return Deny(p.get("reason")) if anonymous else Allow()
        if kind == "abstain":
            return Abstain()
        if kind == "deny":
            return Deny(p.get("reason"))
        if kind == "throw":
            raise RuntimeError("policy failure quoting input")
        if kind == "require-approval":
            return RequireApproval(p.get("approvalType"), p.get("reason"), p.get("expiresInMs"))
        if kind == "delay":
            await asyncio.sleep(p["ms"] / 1000)
            return Allow()
        raise AssertionError(kind)

    return policy


def _outcome_json(outcome: Any) -> dict[str, Any]:
    if isinstance(outcome, ApprovalRequired):
        r = outcome.request
        return {
            "status": "approval_required",
            "id": r.id,
            "approval": {
                "capabilityId": r.capability_id,
                "type": r.type,
                "reason": r.reason,
                "expiresInMs": r.expires_at - r.created_at,
                "surface": r.surface,
                "actorId": r.actor_id,
                "input": r.input,
            },
        }
    return {"status": "ok", "output": to_jsonable(outcome.output)}


CALLER_CANCEL = "cancelled by the vector runner"


async def _run_op(reg: Any, op: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    frame = op.get("frame") or {"surface": "mcp"}
    if op["op"] == "invoke":
        call = reg.invoke(op["capability"], op.get("input"), frame)
    else:
        approval_id = labels[op["approval"]] if "approval" in op else op["approvalId"]
        limit = op.get("limit")
        # A limited resume: as the frame's caller, and through a tool.
        through_tool = limit.get("throughTool") if isinstance(limit, dict) else None
        call = reg.resume(approval_id, frame, as_requester=limit is not None, through_tool=through_tool)
    task = asyncio.ensure_future(call)
    fired: list[bool] = []
    if "cancelAfterMs" in op:

        def cancel() -> None:
            # True only when the call was still running: the caller's
            # cancellation really reached it.
            fired.append(task.cancel(CALLER_CANCEL))

        asyncio.get_running_loop().call_later(op["cancelAfterMs"] / 1000, cancel)
    try:
        return _outcome_json(await task)
    except CapabilityError as e:
        # A real error with its own JSON, compared like any other (a handler
        # that cancelled itself is EXECUTION_FAILED, vector execution.json).
        return {"status": "error", "code": e.code, "error": e.to_dict()}
    except asyncio.CancelledError as e:
        # The public API on a caller's cancellation (docs/decisions.md,
        # Cancellation): the caller's own CancelledError, re-raised
        # unchanged. Only that one is an answer; any other cancellation
        # (none asked for, or one the binding made up) fails the case.
        if not (fired == [True] and task.cancelled() and e.args == (CALLER_CANCEL,)):
            raise AssertionError(f"unexpected cancellation {e!r} (the runner's own cancel fired: {fired})") from e
        # No error JSON exists for it: an expectation of `error` details or
        # `sameErrorAs` cannot be met by a cancellation.
        return {"status": "error", "code": "CANCELLED", "callerCancelled": True}


def _check_audit(expected: dict[str, Any], record: dict[str, Any]) -> None:
    exp = dict(expected)
    if "inputHash" in exp and isinstance(exp["inputHash"], bool):
        assert (record.get("inputHash") is not None) == exp.pop("inputHash")
    # Whether the record names a plain failure's class (which class is the
    # language's).
    if "hasFailure" in exp:
        failure = record.get("failure")
        assert (isinstance(failure, str) and failure != "") == exp.pop("hasFailure"), f"failure {failure!r}"
    subset(exp, record, "audit")


@pytest.mark.parametrize("case", cases("pipeline"))
def test_pipeline_vector(case: dict[str, Any]) -> None:
    clock = VirtualClock()
    calls: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    named = {name: _policy(p) for name, p in (case.get("hostPolicies") or {}).items()}
    specs = []
    for cap_id, c in case["capabilities"].items():
        spec = define_capability(
            _handler(cap_id, c["handler"], calls),
            id=cap_id,
            meta=c["meta"],
            input=MiniSchema(c["inputSchema"]) if "inputSchema" in c else None,
            output=MiniSchema(c["outputSchema"]) if "outputSchema" in c else None,
            host_policies=named,
        )
        if "redactOutput" in c:
            spec.redact_output = _redactor(c["redactOutput"])
        if "redactApprovalInput" in c:
            spec.redact_approval_input = _redactor(c["redactApprovalInput"])
        if "retryOn" in c:
            codes = c["retryOn"]["codes"]
            spec.retry_on = lambda e, codes=codes: e.code in codes
        specs.append(spec)

    def build() -> Any:
        return create_capability_registry(
            specs,
            options=case.get("options") or {},
            host_policies=named,
            audit=records.append,
            audit_payloads=case.get("auditPayloads", False),
            clock=clock.now_ms,
        )

    if case.get("expectBuildError"):
        with pytest.raises(RegistryValidationError):
            build()
        return
    reg = build()
    labels: dict[str, str] = {}
    results: list[dict[str, Any]] = []

    async def run() -> None:
        for i, op in enumerate(case["operations"]):
            where = f"op {i} ({op['op']})"
            if op["op"] == "advance":
                clock.elapsed_ms += op["ms"]
                results.append({})
                continue
            if op["op"] == "decide":
                approval_id = labels[op["approval"]]
                try:
                    fn = reg.approvals.approve if op["decision"] == "approve" else reg.approvals.reject
                    fn(approval_id, approver=op.get("approver"), reason=op.get("reason"))
                    got = {"status": "ok"}
                except CapabilityError as e:
                    got = {"status": "error", "code": e.code}
                subset(op["expect"], got, where)
                results.append(got)
                continue
            if op["op"] == "approvalInput":
                request = reg.approvals.get(labels[op["approval"]])
                try:
                    got = {"status": "ok", "output": to_jsonable(await reg.redact_approval_input(request))}
                except CapabilityError as e:
                    got = {"status": "error", "code": e.code}
                assert got == op["expect"], f"{where}: {got}"
                results.append(got)
                continue
            first_record = len(records)
            started = clock.now_ms()
            got = await _run_op(reg, op, labels)
            results.append(got)
            expect = op["expect"]
            assert got["status"] == expect["status"], f"{where}: {got}"
            if expect["status"] == "error":
                assert got["code"] == expect["code"], f"{where}: {got}"
                if "error" in expect:
                    assert "error" in got, f"{where}: a cancellation has no error JSON to compare"
                    subset(expect["error"], got["error"], where)
            elif expect["status"] == "ok" and "output" in expect:
                assert got["output"] == expect["output"], where
            elif expect["status"] == "approval_required" and "approval" in expect:
                subset(expect["approval"], got["approval"], where)
            if "save" in op:
                labels[op["save"]] = got["id"]
            if "elapsedMs" in op:
                assert clock.now_ms() - started == op["elapsedMs"], where
            mine = records[first_record:]
            if got.get("callerCancelled"):
                # It was this invocation that was cancelled, and the core
                # knew it: its one finished record says CANCELLED.
                finished = [r for r in mine if r["event"] == "finished"]
                assert len(finished) == 1, f"{where}: {mine}"
                assert finished[0]["outcome"] == "CANCELLED", f"{where}: {finished[0]}"
            if "auditEvents" in op:
                assert [r["event"] for r in mine] == op["auditEvents"], where
            if "audit" in op:
                finished = [r for r in mine if r["event"] == "finished"]
                assert len(finished) == 1, f"{where}: {mine}"
                _check_audit(op["audit"], finished[0])
            if "handlerCalls" in op:
                for cap_id, n in op["handlerCalls"].items():
                    assert calls.get(cap_id, 0) == n, f"{where}: {cap_id} calls"
            if "mustNotContain" in op:
                needle = op["mustNotContain"]
                assert needle not in json.dumps(got.get("error", {})), where
                assert all(needle not in json.dumps(r) for r in mine), where
            if "sameErrorAs" in op:
                assert "error" in got and "error" in results[op["sameErrorAs"]], f"{where}: no error JSON"
                assert got["error"] == results[op["sameErrorAs"]]["error"], where

    run_virtual(clock, run())
