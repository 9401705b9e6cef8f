"""SI-1 … SI-12 through the public API, plus the error-code drift test."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

import orpc_agent
from orpc_agent import (
    ApprovalRequired,
    CapabilityError,
    Deny,
    Frame,
    InvalidInputError,
    NotFoundError,
    PolicyDeniedError,
    RegistryValidationError,
    capability,
    create_capability_registry,
    host_policy,
)


class Item(BaseModel):
    name: str
    qty: int = 1


seen: list[Any] = []


@capability(id="items.get", description="Get an item.", expose={"direct": True}, side_effect="read", risk="low")
async def get_item(item: Item) -> Item:
    seen.append(item)
    return item


@capability(
    id="items.buy",
    description="Buy an item.",
    expose={"direct": True, "mcp": True},
    side_effect="write",
    risk="high",
    approval={"required": True, "expires_in_ms": 60_000},
)
async def buy(item: Item) -> dict[str, Any]:
    return {"bought": item.name, "qty": item.qty}


def test_error_codes_do_not_drift() -> None:
    core = orpc_agent.all_error_codes()
    assert set(orpc_agent.ERROR_CLASSES) == set(core)
    assert len(core) == len(set(core)) == 18
    for code, cls in orpc_agent.ERROR_CLASSES.items():
        e = cls()
        assert e.code == code and isinstance(e, CapabilityError)
        assert e.kind.startswith("std:")
    assert orpc_agent.TimeoutCapabilityError().retryable is True
    assert issubclass(orpc_agent.TimeoutCapabilityError, TimeoutError)
    assert issubclass(orpc_agent.CancelledCapabilityError, asyncio.CancelledError)


async def test_SI_1_exposure_is_deny_by_default_per_surface() -> None:
    reg = create_capability_registry([get_item])
    assert (await reg.invoke("items.get", {"name": "a"})).output == Item(name="a")  # type: ignore[union-attr]
    for surface in ("mcp", "aiSdk", "workflow", "test"):
        with pytest.raises(NotFoundError):
            await reg.invoke("items.get", {"name": "a"}, Frame(surface))


async def test_SI_2_surface_comes_from_the_frame_not_the_input() -> None:
    reg = create_capability_registry([get_item])
    # A "surface" in the input changes nothing; the mcp frame is refused.
    with pytest.raises(NotFoundError):
        await reg.invoke("items.get", {"name": "a", "surface": "direct"}, {"surface": "mcp"})


async def test_SI_3_resume_uses_recorded_surface_and_actor() -> None:
    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([buy], audit=audit.append)
    out = await reg.invoke("items.buy", {"name": "pen"}, Frame("mcp", actor={"id": "alice"}))
    assert isinstance(out, ApprovalRequired)
    assert out.request.surface == "mcp" and out.request.actor_id == "alice"
    reg.approvals.approve(out.request.id, approver="boss")
    done = await reg.resume(out.request.id, Frame("direct", actor={"id": "mallory"}, request_id="r-1"))
    assert done.output == {"bought": "pen", "qty": 1}  # type: ignore[union-attr]
    last = audit[-1]
    assert (last["surface"], last["actorId"], last["requestId"], last["resumed"]) == ("mcp", "alice", "r-1", True)


async def test_resume_as_requester_is_only_for_the_requester_on_its_surface() -> None:
    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([buy], audit=audit.append)
    out = await reg.invoke("items.buy", {"name": "pen"}, Frame("mcp", actor={"id": "alice"}))
    assert isinstance(out, ApprovalRequired)
    reg.approvals.approve(out.request.id, approver="boss")
    for frame in (Frame("mcp", actor={"id": "mallory"}), Frame("direct", actor={"id": "alice"}), Frame("mcp")):
        with pytest.raises(orpc_agent.ApprovalNotFoundError):
            await reg.resume(out.request.id, frame, as_requester=True)
        assert reg.approvals.get(out.request.id).status == "approved"  # type: ignore[union-attr]
    refused = [
        (r["surface"], r.get("actorId")) for r in audit if r["resumed"] and r.get("outcome") == "APPROVAL_NOT_FOUND"
    ]
    assert refused == [("mcp", "mallory"), ("direct", "alice"), ("mcp", None)]
    done = await reg.resume(out.request.id, Frame("mcp", actor={"id": "alice"}), as_requester=True)
    assert done.output == {"bought": "pen", "qty": 1}  # type: ignore[union-attr]


bought: list[str] = []


@capability(
    id="items.sell",
    description="Sell an item.",
    expose={"direct": True, "mcp": True},
    side_effect="write",
    risk="high",
    approval={"required": True},
    adapters={"mcp": {"tool_name": "sell_item"}},
)
async def sell(item: Item) -> dict[str, Any]:
    bought.append(item.name)
    return {"sold": item.name}


async def test_resume_through_a_tool_is_only_for_that_tool_its_requester_and_surface() -> None:
    # A request made over MCP by alice for items.sell runs only when alice
    # resumes it on MCP through items.sell's own tool (issue 14, item 11).
    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([buy, sell], audit=audit.append)
    out = await reg.invoke("items.sell", {"name": "pen"}, Frame("mcp", actor={"id": "alice"}))
    assert isinstance(out, ApprovalRequired)
    rid = out.request.id
    reg.approvals.approve(rid, approver="boss")
    bought.clear()
    refused = [
        (Frame("mcp", actor={"id": "mallory"}), "items.sell"),  # another actor
        (Frame("mcp"), "items.sell"),  # no actor
        (Frame("mcp", actor={"id": "alice"}), "items.buy"),  # another tool
        (Frame("mcp", actor={"id": "alice"}), "no_such_tool"),  # an unknown tool
        (Frame("direct", actor={"id": "alice"}), "items.sell"),  # another surface
        (Frame("aiSdk", actor={"id": "alice"}), "sell_item"),
    ]
    for frame, tool in refused:
        with pytest.raises(orpc_agent.ApprovalNotFoundError):
            await reg.resume(rid, frame, through_tool=tool)
        assert reg.approvals.get(rid).status == "approved", (frame, tool)  # type: ignore[union-attr]
    assert bought == []
    # The tool name resolves like the id; the call runs once, then never again.
    done = await reg.resume(rid, Frame("mcp", actor={"id": "alice"}, request_id="r-9"), through_tool="sell_item")
    assert done.output == {"sold": "pen"}  # type: ignore[union-attr]
    assert bought == ["pen"]
    assert audit[-1]["requestId"] == "r-9" and audit[-1]["outcome"] == "ok"
    with pytest.raises(CapabilityError) as again:
        await reg.resume(rid, Frame("mcp", actor={"id": "alice"}), through_tool="items.sell")
    assert again.value.code == "APPROVAL_CONSUMED"
    assert bought == ["pen"]


def test_resume_sync_through_a_tool_and_id_less_actors() -> None:
    # Without an actor id, only an identical id-less actor may resume
    # through the tool (an id-less guest cannot run an id-less admin's).
    reg = create_capability_registry([buy, sell])
    out = reg.invoke_sync("items.sell", {"name": "cup"}, Frame("mcp", actor={"roles": ["admin"]}))
    assert isinstance(out, ApprovalRequired)
    reg.approvals.approve(out.request.id, approver="boss")
    bought.clear()
    for actor, tool in (
        (None, "items.sell"),
        ({"roles": ["guest"]}, "items.sell"),
        ({"roles": ["admin"]}, "items.buy"),
    ):
        with pytest.raises(orpc_agent.ApprovalNotFoundError):
            reg.resume_sync(out.request.id, Frame("mcp", actor=actor), through_tool=tool)
    assert bought == []
    done = reg.resume_sync(out.request.id, Frame("mcp", actor={"roles": ["admin"]}), through_tool="items.sell")
    assert done.output == {"sold": "cup"} and bought == ["cup"]  # type: ignore[union-attr]


def test_SI_4_invalid_metadata_never_serves_and_lists_every_problem() -> None:
    @capability(id="bad.one", description="", expose={"mcp": "yes"}, side_effect="explode", risk="low")  # type: ignore[dict-item]
    def bad(x: Item) -> None: ...

    with pytest.raises(RegistryValidationError) as err:
        create_capability_registry([bad, get_item, get_item])
    codes = {p["code"] for p in err.value.problems}
    assert {"MISSING_FIELD", "WRONG_TYPE", "UNKNOWN_VALUE", "DUPLICATE_ID"} <= codes


async def test_SI_5_hooks_see_only_validated_input() -> None:
    got: list[Any] = []

    def record(request: Any) -> orpc_agent.Abstain:
        got.append(request.input)
        return orpc_agent.Abstain()

    @capability(id="v.x", description="X.", expose={"direct": True}, side_effect="read", risk="low", policies=[record])
    async def handler(item: Item) -> None:
        got.append(item)

    reg = create_capability_registry([handler])
    await reg.invoke("v.x", {"name": "a"})
    assert got == [Item(name="a", qty=1), Item(name="a", qty=1)]
    with pytest.raises(InvalidInputError):
        await reg.invoke("v.x", {"qty": "many"})
    assert len(got) == 2


async def test_SI_6_runtime_policies_first_and_a_failing_policy_denies() -> None:
    order: list[str] = []

    def runtime(request: Any) -> orpc_agent.Abstain:
        order.append("runtime")
        return orpc_agent.Abstain()

    def boom(request: Any) -> None:
        order.append("capability")
        raise RuntimeError("secret detail")

    @capability(id="p.x", description="X.", expose={"direct": True}, side_effect="read", risk="low", policies=[boom])
    async def handler(item: Item) -> None: ...

    reg = create_capability_registry([handler], policies=[runtime])
    with pytest.raises(PolicyDeniedError) as err:
        await reg.invoke("p.x", {"name": "a"})
    assert order == ["runtime", "capability"]
    assert "secret detail" not in str(err.value)


async def test_SI_6_a_policy_that_answers_nothing_denies_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    """``None`` (a policy that forgot to return) or any non-decision is a
    failed policy: denied and audited as failed, as in every binding; the
    operator's log names the policy and what it answered."""
    audit: list[dict[str, Any]] = []
    runs: list[str] = []

    def forgot(request: Any) -> None:
        runs.append("forgot")

    def nonsense(request: Any) -> Any:
        return "allow"

    @capability(
        id="p.none", description="X.", expose={"direct": True}, side_effect="read", risk="low", policies=[forgot]
    )
    async def none_handler(item: Item) -> str:
        runs.append("handler")
        return "ran"

    @capability(
        id="p.str", description="X.", expose={"direct": True}, side_effect="read", risk="low", policies=[nonsense]
    )
    async def str_handler(item: Item) -> str:
        runs.append("handler")
        return "ran"

    reg = create_capability_registry([none_handler, str_handler], audit=audit.append)
    with caplog.at_level("WARNING", logger="orpc_agent"):
        for cap in ["p.none", "p.str"]:
            with pytest.raises(PolicyDeniedError):
                await reg.invoke(cap, {"name": "a"})
    assert runs == ["forgot"], "no handler ran"
    finished = [r for r in audit if r["event"] == "finished"]
    assert [r["outcome"] for r in finished] == ["POLICY_DENIED", "POLICY_DENIED"]
    assert [r["policies"][0]["failed"] for r in finished] == [True, True]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "NoneType" in logged and "str" in logged


@pytest.mark.parametrize(
    "decision",
    [
        orpc_agent.RequireApproval(type="manager", expires_in_ms="soon"),  # type: ignore[arg-type]
        orpc_agent.RequireApproval(type=7, expires_in_ms=60_000),  # type: ignore[arg-type]
        orpc_agent.Deny(reason=["not", "text"]),  # type: ignore[arg-type]
        orpc_agent.RequireApproval(type="manager", expires_in_ms=0),
        orpc_agent.RequireApproval(type="manager", expires_in_ms=-5),
        orpc_agent.RequireApproval(type="manager", expires_in_ms=float("nan")),
        orpc_agent.RequireApproval(type="manager", expires_in_ms=10**30),
    ],
)
async def test_SI_6_a_malformed_decision_is_a_failed_policy(decision: Any) -> None:
    """A decision whose fields have the wrong type, or whose expiry the core
    refuses, is a failed policy: denied and audited, never a raw exception
    out of the driver and never a default expiry in its place."""
    audit: list[dict[str, Any]] = []

    @capability(
        id="p.bad",
        description="X.",
        expose={"direct": True},
        side_effect="write",
        risk="high",
        policies=[lambda r: decision],
    )
    async def bad(item: Item) -> str:
        return "ran"

    reg = create_capability_registry([bad], audit=audit.append)
    with pytest.raises(PolicyDeniedError):
        await reg.invoke("p.bad", {"name": "a"})
    finished = [r for r in audit if r["event"] == "finished"]
    assert finished[-1]["outcome"] == "POLICY_DENIED"
    assert finished[-1]["policies"][0]["failed"] is True
    assert reg.approvals.list() == []


async def test_SI_7_approval_binds_input_single_use_and_expires() -> None:
    clock = [1_000_000]
    reg = create_capability_registry([buy], clock=lambda: clock[0])
    out = await reg.invoke("items.buy", {"name": "pen"})
    assert isinstance(out, ApprovalRequired)
    # The hash binds the stored input; it is the store's, never shown (issue 15).
    assert not hasattr(out.request, "input_hash") and "inputHash" not in out.request.raw
    assert orpc_agent.input_hash("items.buy", out.request.input) == orpc_agent.input_hash(
        "items.buy", {"name": "pen", "qty": 1}
    )
    reg.approvals.approve(out.request.id, approver="boss")
    await reg.resume(out.request.id)
    with pytest.raises(orpc_agent.ApprovalConsumedError):
        await reg.resume(out.request.id)
    late = await reg.invoke("items.buy", {"name": "ink"})
    assert isinstance(late, ApprovalRequired)
    reg.approvals.approve(late.request.id, approver="boss")
    clock[0] += 60_000
    with pytest.raises(orpc_agent.ApprovalExpiredError):
        await reg.resume(late.request.id)


async def test_SI_8_unexposed_is_indistinguishable_from_missing() -> None:
    reg = create_capability_registry([get_item])
    errors = []
    for name in ("items.get", "items.nope"):
        with pytest.raises(NotFoundError) as err:
            await reg.invoke(name, {"name": "a"}, Frame("mcp"))
        errors.append(err.value.to_dict())
    assert errors[0] == errors[1]


async def test_SI_9_deadline_cancels_the_handler_and_discards_late_results() -> None:
    finished: list[str] = []

    # A deadline long enough that a loaded machine starts the handler before
    # it (the core never starts one at its deadline).
    @capability(
        id="t.slow", description="Slow.", expose={"direct": True}, side_effect="read", risk="low", timeout_ms=400
    )
    async def slow(item: Item) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            finished.append("cancelled")
            raise
        finished.append("late")
        return "late"

    reg = create_capability_registry([slow])
    with pytest.raises(orpc_agent.TimeoutCapabilityError) as err:
        await reg.invoke("t.slow", {"name": "a"})
    assert err.value.code == "TIMEOUT"
    for _ in range(1000):  # the cancellation reaches the handler at its next turn
        if finished:
            break
        await asyncio.sleep(0.01)
    assert finished == ["cancelled"]


class SlowToValidate(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def slow(cls, v: str) -> str:
        time.sleep(0.25)  # a synchronous validator that spends the whole deadline
        return v


async def test_SI_9_a_handler_never_starts_after_a_validator_spent_the_deadline() -> None:
    """The time of the validation answer is the core's to judge (Node and
    Swift pass it too): 250 ms of synchronous validation against a 100 ms
    deadline is TIMEOUT, and the write never starts."""
    started: list[str] = []

    @capability(
        id="t.write", description="W.", expose={"direct": True}, side_effect="write", risk="low", timeout_ms=100
    )
    async def write(item: SlowToValidate) -> str:
        started.append(item.name)
        return "wrote"

    # Without an audit subscriber (whose delivery is a step of its own) the
    # validation answer is the last thing before the handler.
    for audit in (None, []):
        reg = create_capability_registry([write], audit=None if audit is None else audit.append)
        with pytest.raises(orpc_agent.TimeoutCapabilityError):
            await reg.invoke("t.write", {"name": "a"})
        assert started == []
    assert audit is not None and audit[-1]["outcome"] == "TIMEOUT"


async def test_SI_10_nothing_unredacted_leaves() -> None:
    audit: list[dict[str, Any]] = []

    def boom(output: Any, info: Any) -> Any:
        raise RuntimeError(f"cannot redact {output}")

    @capability(id="r.x", description="X.", expose={"direct": True}, side_effect="read", risk="low", redact_output=boom)
    async def leaky(item: Item) -> dict[str, str]:
        return {"ssn": "123-45-6789"}

    @capability(id="r.y", description="Y.", expose={"direct": True}, side_effect="read", risk="low")
    async def thrower(item: Item) -> None:
        raise RuntimeError("password=hunter2")

    reg = create_capability_registry([leaky, thrower], audit=audit.append, audit_payloads=True)
    with pytest.raises(orpc_agent.ExecutionFailedError) as err:
        await reg.invoke("r.x", {"name": "a"})
    with pytest.raises(orpc_agent.ExecutionFailedError) as err2:
        await reg.invoke("r.y", {"name": "a"})
    blob = repr(audit) + str(err.value) + str(err2.value)
    assert "123-45-6789" not in blob and "hunter2" not in blob


@pytest.mark.parametrize("verdict", ["no", 1, "yes", [True], None])
async def test_SI_11_only_true_from_retry_on_retries(verdict: Any) -> None:
    """``retry_on`` answers a boolean; anything else (a truthy string, 1) is
    not a yes: the core retries only on ``True``, as in every binding."""
    calls = {"n": 0}

    @capability(
        id="rt.flaky",
        description="F.",
        expose={"direct": True},
        side_effect="read",
        risk="low",
        retry={"max_attempts": 3, "backoff_ms": 0, "retry_on": lambda e: verdict},
    )
    async def flaky(item: Item) -> str:
        calls["n"] += 1
        raise CapabilityError("EXECUTION_FAILED", "flaky", retryable=True)

    reg = create_capability_registry([flaky])
    with pytest.raises(CapabilityError):
        await reg.invoke("rt.flaky", {"name": "a"})
    assert calls["n"] == 1, f"{verdict!r} retried"


async def test_SI_11_retry_on_true_retries() -> None:
    calls = {"n": 0}

    @capability(
        id="rt.flaky2",
        description="F.",
        expose={"direct": True},
        side_effect="read",
        risk="low",
        retry={"max_attempts": 3, "backoff_ms": 0, "retry_on": lambda e: True},
    )
    async def flaky(item: Item) -> str:
        calls["n"] += 1
        raise CapabilityError("EXECUTION_FAILED", "flaky", retryable=True)

    reg = create_capability_registry([flaky])
    with pytest.raises(CapabilityError):
        await reg.invoke("rt.flaky2", {"name": "a"})
    assert calls["n"] == 4  # the first attempt and max_attempts (3) retries


async def test_SI_11_retries_only_when_eligible() -> None:
    calls = {"read": 0, "write": 0}

    @capability(
        id="rt.read",
        description="R.",
        expose={"direct": True},
        side_effect="read",
        risk="low",
        retry={"max_attempts": 2, "backoff_ms": 1},
    )
    async def read(item: Item) -> str:
        calls["read"] += 1
        if calls["read"] < 3:
            raise CapabilityError("EXECUTION_FAILED", "flaky", retryable=True)
        return "ok"

    @capability(
        id="rt.write",
        description="W.",
        expose={"direct": True},
        side_effect="write",
        risk="low",
        approval=None,
        policies=[lambda r: orpc_agent.Allow()],
    )
    async def write(item: Item) -> str:
        calls["write"] += 1
        raise CapabilityError("EXECUTION_FAILED", "flaky", retryable=True)

    reg = create_capability_registry([read, write])
    assert (await reg.invoke("rt.read", {"name": "a"})).output == "ok"  # type: ignore[union-attr]
    assert calls["read"] == 3
    with pytest.raises(orpc_agent.ExecutionFailedError):
        await reg.invoke("rt.write", {"name": "a"})
    assert calls["write"] == 1


async def test_SI_12_contextual_discovery_grants_no_authority() -> None:
    @capability(
        id="c.x",
        description="X.",
        expose={"mcp": True},
        side_effect="write",
        risk="high",
        discovery="contextual",
        policies=[host_policy(lambda r: Deny("no"), name="never")],
    )
    async def ctx(item: Item) -> None: ...

    reg = create_capability_registry([ctx])
    with pytest.raises(NotFoundError):
        await reg.invoke("c.x", {"name": "a"}, Frame("direct"))
    with pytest.raises(PolicyDeniedError):
        await reg.invoke("c.x", {"name": "a"}, Frame("mcp"))


async def test_SI_6_declared_policies_and_host_policies_both_apply() -> None:
    """A deny declared in ``meta`` plus a host allow given as ``policies=``:
    both lists apply, declared first, so the call is denied (the host list
    used to replace the declared one)."""
    ran: list[str] = []

    def host_allow(request: Any) -> orpc_agent.Allow:
        ran.append("host")
        return orpc_agent.Allow()

    async def pay(item: Item) -> str:
        ran.append("handler")
        return "paid"

    spec = orpc_agent.define_capability(
        pay,
        id="p.both",
        description="Pay.",
        expose={"direct": True},
        side_effect="write",
        risk="high",
        meta={"policies": [{"name": "frozen", "decision": "deny", "reason": "Payments are frozen."}]},
        policies=[host_allow],
    )
    reg = create_capability_registry([spec])
    with pytest.raises(PolicyDeniedError) as err:
        await reg.invoke("p.both", {"name": "a"})
    assert err.value.details is not None and err.value.details["policy"] == "frozen"
    assert ran == []
