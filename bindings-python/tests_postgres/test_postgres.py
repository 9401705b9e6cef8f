"""The PostgreSQL approval store and audit sink through the Python
binding's public API, against the real server `make test-postgres-bindings`
starts; and the cross-binding scenario: a request created by one binding's
process, approved by the other's, resumed by a third process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from app import PG_URL, registry
from orpc_agent import ApprovalRequired, CapabilityError, InvokeOk

HERE = Path(__file__).resolve().parent
NODE_APP = HERE.parent.parent / "bindings-node" / "test" / "postgres" / "app.mjs"
PY_APP = HERE / "app.py"


def actor() -> str:
    return f"actor-{uuid.uuid4()}"


async def request(reg: Any, who: str, order: str = "o-1") -> Any:
    r = await reg.invoke("orders.refund", {"id": order, "amount": 5}, {"surface": "mcp", "actor": {"id": who}})
    assert isinstance(r, ApprovalRequired)
    return r.request


def psql(sql: str) -> str:
    bin_dir = os.environ.get("ORPC_AGENT_TEST_PG_BIN")
    exe = os.path.join(bin_dir, "psql") if bin_dir else "psql"
    return subprocess.run(
        [exe, os.environ["ORPC_AGENT_TEST_PG_URL"], "-tAc", sql], check=True, capture_output=True, text=True
    ).stdout.strip()


async def test_create_page_approve_resume_once() -> None:
    reg = registry()
    who = actor()
    ids = [(await request(reg, who, f"o-{i}")).id for i in range(5)]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await reg.approvals.page_async(actor_id=who, status="pending", limit=2, cursor=cursor)
        seen += [r.id for r in page.requests]
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == ids and pages == 3
    assert await reg.approvals.list_async(actor_id=who, capability_id="orders.get") == []
    approved = await reg.approvals.approve_async(ids[0], approver="boss", reason="ok")
    assert approved.status == "approved" and approved.decided_by == "boss"
    assert [r.id for r in await reg.approvals.list_async(actor_id=who, status="approved")] == [ids[0]]
    assert (await reg.approvals.get_async(ids[0])).status == "approved"  # type: ignore[union-attr]
    assert await reg.approvals.get_async("apr_00000000000000000000000000000000") is None
    out = await reg.resume(ids[0])
    assert isinstance(out, InvokeOk) and out.output["refunded"] == "o-0"
    with pytest.raises(CapabilityError) as e:
        await reg.resume(ids[0])
    assert e.value.code == "APPROVAL_CONSUMED"
    # A read never touches the store.
    assert (await reg.invoke("orders.get", {"id": "x"})).output == {"id": "x", "status": "paid"}  # type: ignore[union-attr]


async def test_rules_and_codes_are_the_cores() -> None:
    reg = registry()
    who = actor()
    a = await request(reg, who)
    for call, code in [
        (reg.approvals.approve_async(a.id, approver=who), "POLICY_DENIED"),
        (reg.resume(a.id), "APPROVAL_PENDING"),
        (reg.resume("apr_00000000000000000000000000000000"), "APPROVAL_NOT_FOUND"),
        (reg.approvals.page_async(status="maybe"), "INVALID_INPUT"),
        (reg.approvals.page_async(cursor="nonsense"), "INVALID_INPUT"),
    ]:
        with pytest.raises(CapabilityError) as e:
            await call
        assert e.value.code == code
    await reg.approvals.reject_async(a.id, approver="boss")
    with pytest.raises(CapabilityError) as e:
        await reg.resume(a.id)
    assert e.value.code == "APPROVAL_REJECTED"


def test_synchronous_approval_calls_block_without_a_loop() -> None:
    reg = registry()
    who = actor()
    a = reg.invoke_sync("orders.refund", {"id": "s", "amount": 1}, {"surface": "direct", "actor": {"id": who}})
    assert isinstance(a, ApprovalRequired)
    assert [r.id for r in reg.approvals.list(actor_id=who)] == [a.request.id]
    assert reg.approvals.page(actor_id=who, limit=1).next_cursor is not None
    assert reg.approvals.approve(a.request.id, approver="boss").status == "approved"
    assert reg.approvals.get(a.request.id).status == "approved"  # type: ignore[union-attr]
    assert isinstance(reg.resume_sync(a.request.id), InvokeOk)


async def test_twenty_concurrent_resumes_run_once_and_the_loop_stays_free() -> None:
    reg = registry()
    a = await request(reg, actor())
    await reg.approvals.approve_async(a.id, approver="boss")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    t = asyncio.ensure_future(ticker())
    results = await asyncio.gather(*(reg.resume(a.id) for _ in range(20)), return_exceptions=True)
    t.cancel()
    assert sum(isinstance(r, InvokeOk) for r in results) == 1
    assert {r.code for r in results if isinstance(r, CapabilityError)} == {"APPROVAL_CONSUMED"}
    assert len([r for r in results if isinstance(r, CapabilityError)]) == 19
    assert ticks > 20, "the event loop ran while the database worked"


async def test_audit_sink_writes_one_row_per_record() -> None:
    seen: list[dict[str, Any]] = []
    reg = registry(audit={"postgres": PG_URL, "subscriber": seen.append})
    assert reg.audit_sink is not None
    a = await request(reg, actor(), "o-audit")
    await reg.approvals.approve_async(a.id, approver="boss")
    await reg.resume(a.id)
    await reg.audit_sink.flush_async()
    assert reg.audit_sink.dropped == 0 and reg.audit_sink.failed == 0
    assert reg.audit_sink.written == len(seen) >= 2
    rows = psql(
        # No audit row carries the input hash (issue 15); the request's own row does.
        "SELECT a.outcome, a.input_hash IS NULL AND r.input_hash IS NOT NULL, r.decided_by FROM orpc_audit a "
        f"JOIN orpc_approvals r ON r.id = a.approval_id WHERE r.id = '{a.id}'"
    )
    assert len(rows.splitlines()) == len([r for r in seen if r.get("approvalId") == a.id]) >= 2
    assert "|t|boss" in rows and "|f|" not in rows


def test_unreachable_database_and_bad_options() -> None:
    with pytest.raises(CapabilityError) as e:
        registry(
            approval_store={
                "postgres": {"url": "postgresql://postgres@127.0.0.1:1/x?sslmode=disable", "connect_timeout_ms": 200}
            }
        )
    assert e.value.code == "INTERNAL" and e.value.details == {"store": "cannot-open"}
    assert "127.0.0.1" not in e.value.message
    with pytest.raises(CapabilityError) as e:
        registry(approval_store={"postgres": {"url": PG_URL, "max_conections": 2}})
    assert e.value.code == "INVALID_INPUT" and "maxConections" in e.value.message


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork()")
def test_a_registry_made_before_fork_refuses_in_the_child() -> None:
    reg = registry()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            reg.approvals.get("apr_00000000000000000000000000000000")
            os.write(w, b"no error")
        except CapabilityError as exc:
            os.write(w, f"{exc.code} {exc.message}".encode())
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    os.close(w)
    said = os.read(r, 1000).decode()
    assert said.startswith("INTERNAL") and "fork" in said, said
    assert reg.approvals.get("apr_00000000000000000000000000000000") is None  # the parent still works


def _run(cmd: list[str], env: dict[str, str]) -> Any:
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("creator,approver,resumer", [("node", "python", "node"), ("python", "node", "python")])
def test_cross_binding_create_approve_resume(tmp_path: Path, creator: str, approver: str, resumer: str) -> None:
    log = tmp_path / "handler.log"
    env = {**os.environ, "HANDLER_LOG": str(log)}
    app = {"node": ["node", str(NODE_APP)], "python": [sys.executable, str(PY_APP)]}
    created = _run(app[creator] + ["create", actor(), "o-x"], env)
    assert created["status"] == "pending"
    assert _run(app[approver] + ["approve", created["id"], "boss"], env)["status"] == "approved"
    out = _run(app[resumer] + ["resume", created["id"]], env)
    assert out["status"] == "ok" and out["output"]["refunded"] == "o-x"
    again = _run(app[creator] + ["resume", created["id"]], env)
    assert again["error"]["code"] == "APPROVAL_CONSUMED"
    assert len(log.read_text().splitlines()) == 1


def test_fifty_resumes_from_five_processes_of_both_bindings_run_once(tmp_path: Path) -> None:
    log = tmp_path / "handler.log"
    env = {**os.environ, "HANDLER_LOG": str(log)}
    created = _run([sys.executable, str(PY_APP), "create", actor(), "o-race"], env)
    _run(["node", str(NODE_APP), "approve", created["id"], "boss"], env)
    cmds = [["node", str(NODE_APP)] if i % 2 else [sys.executable, str(PY_APP)] for i in range(5)]
    procs = [
        subprocess.Popen(c + ["race", created["id"], "10"], env=env, stdout=subprocess.PIPE, text=True) for c in cmds
    ]
    codes = [c for p in procs for c in json.loads(p.communicate(timeout=60)[0].strip().splitlines()[-1])]
    assert len(codes) == 50
    assert codes.count("OK") == 1 and codes.count("APPROVAL_CONSUMED") == 49
    assert len(log.read_text().splitlines()) == 1


async def test_database_restart_between_approve_and_resume_loses_nothing() -> None:
    cluster = os.environ.get("ORPC_AGENT_TEST_PG_CLUSTER")
    assert cluster, "ORPC_AGENT_TEST_PG_CLUSTER is not set (pg-test-cluster.sh run sets it)"
    reg = registry()
    a = await request(reg, actor(), "o-restart")
    await reg.approvals.approve_async(a.id, approver="boss")
    # Immediate stop (like a crash), then start: the pool's connections die.
    subprocess.run([cluster, "restart"], check=True, capture_output=True)
    assert isinstance(await reg.resume(a.id), InvokeOk)
    with pytest.raises(CapabilityError) as e:
        await reg.resume(a.id)
    assert e.value.code == "APPROVAL_CONSUMED"


async def test_a_cancel_during_the_consume_is_told_after_the_store_answers() -> None:
    """The caller is cancelled while PostgreSQL's consume waits (another
    connection holds the row): the consume cannot be undone, so the core
    hears that it committed before it hears of the cancellation. Before,
    Python told the core "cancelled, nothing consumed" while the row was
    consumed, and the audit record said the opposite of the store."""
    records: list[dict[str, Any]] = []
    reg = registry(audit=records.append)
    req = await request(reg, actor(), "o-cancel")
    await reg.approvals.approve_async(req.id, approver="boss")
    bin_dir = os.environ.get("ORPC_AGENT_TEST_PG_BIN")
    locker = subprocess.Popen(
        [os.path.join(bin_dir, "psql") if bin_dir else "psql", os.environ["ORPC_AGENT_TEST_PG_URL"], "-tA"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert locker.stdin is not None and locker.stdout is not None
    locker.stdin.write(f"BEGIN;\nSELECT 'locked' FROM orpc_approvals WHERE id = '{req.id}' FOR UPDATE;\n")
    locker.stdin.flush()
    while (line := await asyncio.to_thread(locker.stdout.readline)).strip() != "locked":
        assert line, "psql ended before it held the row"
    resumed = asyncio.create_task(reg.resume(req.id))
    # Waits until the consume is blocked on the row (an event, not a delay).
    waiting = (
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE orpc_approvals%'"
    )
    while await asyncio.to_thread(psql, waiting) == "0":
        await asyncio.sleep(0.01)
    resumed.cancel()
    locker.stdin.write("COMMIT;\n")
    locker.stdin.close()
    await asyncio.to_thread(locker.wait)
    with pytest.raises(asyncio.CancelledError):
        await resumed
    stored = await reg.approvals.get_async(req.id)
    assert stored is not None and stored.status == "consumed"
    finished = [r for r in records if r["event"] == "finished"][-1]
    assert finished["outcome"] == "CANCELLED"
    assert finished["stage"] == 11, finished  # past the consume: the core knows the row is consumed
