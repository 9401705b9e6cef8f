"""Fault injection through the Python binding (issue 10, item 4): a handler
that never finishes and swallows its cancellation, an audit subscriber that
raises or blocks, a host policy that raises or never answers, an SQLite
store that is locked or cannot be written. Each ends in a typed error or the
degradation docs/decisions.md ("Hardening") documents, with no handler run
twice and no late effect."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orpc_agent import (
    CapabilityError,
    ExecutionFailedError,
    Frame,
    InternalError,
    InvokeOk,
    PolicyDeniedError,
    TimeoutCapabilityError,
    capability,
    create_capability_registry,
    host_policy,
)

FRAME = Frame("direct", actor={"id": "a1"})
D = {"direct": True}


def live_tasks() -> int:
    return len([t for t in asyncio.all_tasks() if not t.done()])


async def test_a_handler_that_swallows_its_cancellation_is_timeout_with_no_late_effect() -> None:
    effects: list[str] = []
    runs = 0
    release = asyncio.Event()

    # Long enough that a loaded machine starts the handler before it.
    @capability(id="hang", description="x", expose=D, side_effect="write", risk="low", timeout_ms=400)
    async def hang(q: dict[str, Any]) -> str:
        nonlocal runs
        runs += 1
        while not release.is_set():  # ignores every cancellation until the test releases it
            try:
                await release.wait()
            except asyncio.CancelledError:
                pass
        effects.append("late write")
        return "late value"

    audit: list[dict[str, Any]] = []
    registry = create_capability_registry([hang], audit=audit.append, audit_payloads=True)
    before = live_tasks()
    # The handler can only finish after `release`, which is set once the
    # call has returned: the caller did not wait for it (bounded, so a
    # regression fails here instead of hanging).
    with pytest.raises(TimeoutCapabilityError) as info:
        await asyncio.wait_for(registry.invoke("hang", {}, FRAME), 10)
    assert info.value.code == "TIMEOUT"
    assert effects == []
    records = len(audit)
    release.set()  # the abandoned handler makes its late write now
    for _ in range(1000):
        if effects:
            break
        await asyncio.sleep(0.01)
    assert effects == ["late write"], "the abandoned handler did finish (the scenario happened)"
    await asyncio.sleep(0)
    assert len(audit) == records, "nothing audited after the outcome"
    assert "late value" not in repr(audit)
    assert runs == 1
    assert live_tasks() <= before, "the abandoned handler task is not left running"


async def test_a_handler_that_never_settles_is_timeout_and_leaves_no_task() -> None:
    @capability(id="forever", description="x", expose=D, side_effect="read", risk="low", timeout_ms=30)
    async def forever(q: dict[str, Any]) -> None:
        await asyncio.Event().wait()

    registry = create_capability_registry([forever])
    before = live_tasks()
    for _ in range(20):
        with pytest.raises(TimeoutCapabilityError):
            await registry.invoke("forever", {}, FRAME)
    await asyncio.sleep(0.01)
    assert live_tasks() <= before


async def test_an_audit_subscriber_that_raises_changes_no_outcome() -> None:
    runs = 0

    @capability(id="ok", description="x", expose=D, side_effect="read", risk="low")
    async def ok(q: dict[str, Any]) -> int:
        nonlocal runs
        runs += 1
        return runs

    def broken(_record: dict[str, Any]) -> None:
        raise RuntimeError("audit backend down")

    registry = create_capability_registry([ok], audit=broken)
    unraisable: list[Any] = []
    with pytest.MonkeyPatch.context() as mp:
        import sys

        mp.setattr(sys, "unraisablehook", unraisable.append)
        first = await registry.invoke("ok", {}, FRAME)
        second = await registry.invoke("ok", {}, FRAME)
        with pytest.raises(CapabilityError) as info:
            await registry.invoke("nope", {}, FRAME)
    assert isinstance(first, InvokeOk) and first.output == 1
    assert isinstance(second, InvokeOk) and second.output == 2
    assert info.value.code == "NOT_FOUND"
    assert unraisable, "the subscriber's failure is reported through sys.unraisablehook"


async def test_an_audit_subscriber_that_blocks_spends_the_deadline() -> None:
    """Documented degradation: subscribers are synchronous, so one that blocks
    delays the call; past the deadline the call is TIMEOUT."""
    runs = 0

    @capability(id="ok", description="x", expose=D, side_effect="write", risk="low", timeout_ms=20)
    async def ok(q: dict[str, Any]) -> int:
        nonlocal runs
        runs += 1
        return runs

    def slow(record: dict[str, Any]) -> None:
        if record["event"] == "started":
            time.sleep(0.06)

    registry = create_capability_registry([ok], audit=slow)
    with pytest.raises(TimeoutCapabilityError):
        await registry.invoke("ok", {}, FRAME)
    assert runs <= 1


async def test_a_handler_is_not_started_past_its_deadline() -> None:
    runs = 0

    @capability(id="ok", description="x", expose=D, side_effect="write", risk="low", timeout_ms=20)
    async def ok(q: dict[str, Any]) -> int:
        nonlocal runs
        runs += 1
        return runs

    def slow(record: dict[str, Any]) -> None:
        if record["event"] == "started":
            time.sleep(0.06)

    registry = create_capability_registry([ok], audit=slow)
    with pytest.raises(TimeoutCapabilityError):
        await registry.invoke("ok", {}, FRAME)
    assert runs == 0


def _raises(r: Any) -> Any:
    raise RuntimeError("policy engine crashed")


async def _rejects(r: Any) -> Any:
    raise ConnectionError("policy engine unreachable")


async def _never(r: Any) -> Any:
    await asyncio.Event().wait()


def _nonsense(r: Any) -> Any:
    return "maybe"


def _cancels_itself(r: Any) -> Any:
    raise asyncio.CancelledError  # its own: nobody cancelled the caller


async def _async_cancels_itself(r: Any) -> Any:
    await asyncio.sleep(0)
    raise asyncio.CancelledError


async def test_an_unnamed_lambda_policy_names_none_in_the_model_s_text_as_in_node() -> None:
    @capability(
        id="act.lambda",
        description="x",
        expose=D,
        side_effect="write",
        risk="low",
        policies=[lambda r: (_ for _ in ()).throw(RuntimeError("boom"))],
    )
    async def act(q: dict[str, Any]) -> str:
        return "ran"

    audit: list[dict[str, Any]] = []
    registry = create_capability_registry([act], audit=audit.append)
    with pytest.raises(PolicyDeniedError) as info:
        await registry.invoke("act.lambda", {"v": 1}, FRAME)
    assert "<lambda>" not in info.value.message and "<lambda>" not in json.dumps(audit)
    assert audit[-1]["policies"][-1].get("name") is None


@pytest.mark.parametrize(
    "policy",
    [_raises, _rejects, _never, _nonsense, _cancels_itself, _async_cancels_itself],
    ids=["raises", "async-raises", "never-answers", "nonsense", "cancels-itself", "async-cancels-itself"],
)
async def test_a_failing_host_policy_denies_and_the_handler_does_not_run(policy: Any) -> None:
    calls: list[Any] = []

    @capability(
        id="act",
        description="x",
        expose=D,
        side_effect="write",
        risk="low",
        timeout_ms=100,
        policies=[host_policy(policy, name="remote")],
    )
    async def act(q: dict[str, Any]) -> str:
        calls.append(q)
        return "ran"

    audit: list[dict[str, Any]] = []
    registry = create_capability_registry([act], audit=audit.append)
    with pytest.raises(PolicyDeniedError) as info:
        await registry.invoke("act", {"v": 1}, FRAME)
    assert info.value.code == "POLICY_DENIED"
    assert not any(w in str(info.value) for w in ("crashed", "unreachable")), "the policy's own error stays private"
    assert calls == []
    assert audit[-1]["policies"][-1]["failed"] is True


@capability(id="pay", description="x", expose=D, side_effect="write", risk="high", approval={"required": True})
async def pay(q: dict[str, Any]) -> str:
    return "paid"


@pytest.mark.parametrize("where", ["proc", "directory", "missing-dir"])
async def test_an_sqlite_store_that_cannot_be_written_is_a_typed_error(tmp_path: Path, where: str) -> None:
    path = {
        "proc": Path("/proc/self/orpc-agent-approvals.db"),
        "directory": tmp_path / "approvals.db",
        "missing-dir": Path("/nonexistent-dir-orpc/approvals.db"),
    }[where]
    if where == "directory":
        path.mkdir()
    try:
        registry = create_capability_registry([pay], approval_store={"sqlite": str(path)})
        with pytest.raises(CapabilityError) as info:
            await registry.invoke("pay", {}, FRAME)
        err: BaseException = info.value
    except CapabilityError as e:
        err = e
    assert isinstance(err, InternalError), repr(err)
    assert str(path) not in str(err), "the error names the path"


# Held by another process: POSIX file locks do not conflict within one
# process, and the store's bundled SQLite would not see this process's locks.
LOCKER = """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
c.execute("ROLLBACK")
"""


async def test_a_locked_sqlite_store_is_retryable_internal_and_runs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "approvals.db"
    runs = 0

    @capability(id="pay.once", description="x", expose=D, side_effect="write", risk="high", approval={"required": True})
    async def pay_once(q: dict[str, Any]) -> str:
        nonlocal runs
        runs += 1
        return "paid"

    registry = create_capability_registry([pay_once], approval_store={"sqlite": str(path)})
    pending = await registry.invoke("pay.once", {}, FRAME)
    request_id = pending.request.id  # type: ignore[union-attr]
    registry.approvals.approve(request_id, approver="ops")
    locker = await asyncio.create_subprocess_exec(
        sys.executable, "-c", LOCKER, str(path), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert locker.stdout is not None and (await locker.stdout.readline()).strip() == b"locked"
        with pytest.raises(InternalError) as info:
            await registry.resume(request_id)  # waits out the store's 5 s busy timeout
        assert info.value.retryable is True
        assert (info.value.details or {}).get("store") == "busy", info.value.details
        assert str(path) not in str(info.value)
        assert runs == 0
    finally:
        assert locker.stdin is not None
        locker.stdin.write(b"done\n")
        await locker.stdin.drain()
        await locker.wait()
    done = await registry.resume(request_id)  # still approved: it runs once now
    assert isinstance(done, InvokeOk) and done.output == "paid"
    with pytest.raises(CapabilityError) as again:
        await registry.resume(request_id)
    assert again.value.code == "APPROVAL_CONSUMED"
    assert runs == 1


async def test_an_input_or_output_a_serializer_cannot_dump_ends_typed_and_audited() -> None:
    """A validated value pydantic cannot serialize (here an arbitrary object
    inside a ``dict`` field) where the core needs its JSON form: for the
    approval hash it is INVALID_INPUT, audited, with nothing persisted; for
    the audit payload the output is recorded as null and the call stands."""
    runs = 0

    @capability(
        id="gated",
        description="x",
        expose=D,
        side_effect="write",
        risk="high",
        approval={"required": True},
    )
    async def gated(x: dict[str, Any]) -> str:
        nonlocal runs
        runs += 1
        return "ran"

    @capability(id="odd", description="x", expose=D, side_effect="read", risk="low")
    async def odd(x: dict[str, Any]) -> dict[str, Any]:
        return {"o": object()}

    audit: list[dict[str, Any]] = []
    registry = create_capability_registry([gated, odd], audit=audit.append, audit_payloads=True)

    with pytest.raises(CapabilityError) as info:
        await registry.invoke("gated", {"x": {"o": object()}}, FRAME)
    assert info.value.code == "INVALID_INPUT"
    # The core's reason, as Node's throwing toJSON and Swift's throwing
    # encode(to:) get it; the serializer's own text is not shown.
    assert info.value.message == "The input cannot be bound to an approval: a value in it has no JSON form."
    assert runs == 0
    assert registry.approvals.list() == []
    finished = [r for r in audit if r["event"] == "finished"]
    assert finished[-1]["outcome"] == "INVALID_INPUT"

    out = await registry.invoke("odd", {"x": {}}, FRAME)
    assert isinstance(out, InvokeOk)
    finished = [r for r in audit if r["event"] == "finished"]
    assert finished[-1]["outcome"] == "ok"
    assert finished[-1]["output"] is None


async def test_a_policy_sees_the_metadata_and_a_failing_one_is_logged_for_the_operator(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from orpc_agent import Allow, Deny, PolicyRequest

    def by_risk(req: PolicyRequest) -> Any:
        return Deny("too risky") if req.meta["risk"] == "high" else Allow()

    def broken(req: PolicyRequest) -> Any:
        raise ValueError(f"secret-{req.input['q']}")

    @capability(id="low", description="x", expose=D, side_effect="read", risk="low")
    async def low(q: dict[str, Any]) -> str:
        return "ok"

    @capability(id="high", description="x", expose=D, side_effect="write", risk="high")
    async def high(q: dict[str, Any]) -> str:
        return "ok"

    registry = create_capability_registry([low, high], policies=[by_risk])
    assert isinstance(await registry.invoke("low", {"q": "x"}, FRAME), InvokeOk)
    with pytest.raises(PolicyDeniedError):
        await registry.invoke("high", {"q": "x"}, FRAME)

    failing = create_capability_registry([low], policies=[host_policy(broken, name="broken")])
    with caplog.at_level("WARNING", logger="orpc_agent"), pytest.raises(PolicyDeniedError):
        await failing.invoke("low", {"q": "hunter2"}, FRAME)
    assert "raised ValueError" in caplog.text
    # The summary line names the type only; the real exception goes to the
    # operator with the record (issue 15), never to the caller.
    summary = [r for r in caplog.records if not r.exc_info]
    assert summary and all("hunter2" not in r.getMessage() for r in summary)
    assert any(r.exc_info and "hunter2" in str(r.exc_info[1]) for r in caplog.records)


async def test_an_approval_input_redactor_that_never_settles_fails_the_view_at_the_capabilitys_timeout() -> None:
    """It would hold an approval UI (or an MCP call asking the person) for
    ever: bounded by the capability's timeout (the core's bound), it fails as
    a raising one does, and is cancelled."""
    cancelled = asyncio.Event()

    async def never(value: Any, info: Any) -> Any:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    @capability(
        id="pay",
        description="x",
        expose=D,
        side_effect="write",
        risk="high",
        timeout_ms=200,
        approval={"required": True},
        redact_approval_input=never,
    )
    async def pay(q: dict[str, Any]) -> str:
        return "paid"

    registry = create_capability_registry([pay])
    made = await registry.invoke("pay", {"amount": 1}, FRAME)
    with pytest.raises(ExecutionFailedError):
        await asyncio.wait_for(registry.redact_approval_input(made.request), 10)
    await asyncio.wait_for(cancelled.wait(), 10)
