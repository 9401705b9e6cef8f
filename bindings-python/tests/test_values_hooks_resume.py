"""What the binding hands out and takes back, as the README promises:

1. reprs of outcomes, requests, hook infos and errors show no payload
   (input, input hash, output, context, actor attributes);
2. ``redact_approval_input`` gets the pydantic model of the stored input;
3. bytes-like values count against the input limits (as the JSON text they
   become), before any validator, store or handler sees them;
4. code-specific error classes take the message first;
5. one-parameter redactors work (the arity is read once, at declaration);
6. the info a hook gets is frozen, its actor a read-only copy;
7. on resume the handler gets the stored validated input as is: input
   validation does not run again (a validator that converts dollars to
   cents runs once; an aliased field still resumes), and an input whose
   model cannot be rebuilt from its JSON exactly is refused at the gate.
"""

from __future__ import annotations

import dataclasses
import enum
import pickle
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

import orpc_agent
from orpc_agent import (
    ERROR_CLASSES,
    Allow,
    ApprovalRequired,
    CapabilityError,
    Frame,
    HandlerContext,
    InvalidInputError,
    InvokeOk,
    LimitExceededError,
    NotFoundError,
    PolicyRequest,
    RedactionInfo,
    RegistryValidationError,
    capability,
    create_capability_registry,
    define_capability,
    host_policy,
    input_hash,
)

SECRET = "SENTINEL-5e1d-do-not-log"
EXPOSE = {"direct": True, "mcp": True}
ACTOR = {"id": "ana", "roles": ["clerk"], "attributes": {"tenant": "t-1", "badge": {"level": 2}, "tags": ["a"]}}


class Transfer(BaseModel):
    to: str
    note: str


# ----- 1. reprs ---------------------------------------------------------


async def test_reprs_of_outcomes_requests_and_hook_infos_show_no_payload() -> None:
    shown: list[str] = []

    def policy(r: PolicyRequest) -> Allow:
        shown.extend([repr(r), str(r)])
        return Allow()

    def redact(value: Any, info: RedactionInfo) -> Any:
        shown.extend([repr(info), str(info)])
        return value

    @capability(
        id="pay.send",
        description="Send.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True, "type": "human-confirmation"},
        policies=[policy],
        redact_output=redact,
    )
    async def send(t: Transfer) -> dict[str, str]:
        return {"receipt": SECRET}

    reg = create_capability_registry([send])
    frame = Frame("direct", actor={**ACTOR, "attributes": {"card": SECRET}}, context={"token": SECRET})
    out = await reg.invoke("pay.send", {"to": "bob", "note": SECRET}, frame)
    assert isinstance(out, ApprovalRequired)
    r = out.request
    listed = reg.approvals.list()
    page = reg.approvals.page()
    for text in (repr(out), str(out), repr(r), str(r), repr(listed), repr(page), repr(reg.approvals.get(r.id))):
        assert SECRET not in text, text
        assert input_hash("pay.send", r.input) not in text, text
        assert "input" not in text, text
        for part in (r.id, "pay.send", "'pending'", "human-confirmation", str(r.expires_at)):
            assert part in text, (part, text)
    assert repr(out).startswith("ApprovalRequired(") and "approval_required" in repr(out)
    # The full input stays available to code that asks for it.
    assert r.input == {"to": "bob", "note": SECRET} and r.to_dict()["input"] == r.input

    reg.approvals.approve(r.id, approver="carol")
    ok = await reg.resume(r.id, frame)
    assert isinstance(ok, InvokeOk) and ok.output == {"receipt": SECRET}
    for text in (repr(ok), str(ok)):
        assert SECRET not in text and "InvokeOk(" in text and "dict" in text, text
    assert len(shown) == 4  # the policy at the request, the redactor at the resume
    for text in shown:
        assert SECRET not in text, text
        assert "pay.send" in text and "'direct'" in text, text


def test_error_reprs_show_no_details() -> None:
    err = CapabilityError("POLICY_DENIED", "Denied.", details={"card": SECRET})
    for text in (repr(err), str(err), repr(err.args)):
        assert SECRET not in text, text
    assert err.to_dict()["details"] == {"card": SECRET}  # asked for, it is there


# ----- 2. redact_approval_input gets the model --------------------------


class Refund(BaseModel):
    order_id: str = Field(alias="orderId")
    amount: int  # cents, converted from dollars once, at validation

    @field_validator("amount")
    @classmethod
    def dollars_to_cents(cls, v: int) -> int:
        return v * 100


async def test_redact_approval_input_gets_the_model_of_the_stored_input() -> None:
    seen: list[Any] = []

    def view(value: Any, info: RedactionInfo) -> dict[str, Any]:
        seen.append(value)
        return {"order": value.order_id, "cents": value.amount}

    @capability(
        id="refund",
        description="Refund.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True},
        redact_approval_input=view,
    )
    async def refund(r: Refund) -> None: ...

    reg = create_capability_registry([refund])
    out = await reg.invoke("refund", {"orderId": "o-1", "amount": 5})
    assert isinstance(out, ApprovalRequired)
    stored = dict(out.request.input)
    assert stored == {"order_id": "o-1", "amount": 500}
    assert await reg.redact_approval_input(out.request) == {"order": "o-1", "cents": 500}
    assert len(seen) == 1 and type(seen[0]) is Refund, seen
    assert seen[0].order_id == "o-1" and seen[0].amount == 500, "no validator ran again"
    # The value the hash binds did not change.
    assert out.request.input == stored
    assert input_hash("refund", out.request.input) == input_hash("refund", stored)
    again = reg.approvals.get(out.request.id)
    assert again is not None and again.input == stored


# ----- 3. bytes count against the limits ---------------------------------


class Counting:
    """A schema that counts its calls and returns its input unchanged."""

    def __init__(self) -> None:
        self.calls = 0

    def validate(self, value: Any) -> Any:
        self.calls += 1
        return value

    def dump(self, value: Any) -> Any:
        return {k: bytes(v).decode() if isinstance(v, bytes | bytearray | memoryview) else v for k, v in value.items()}

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object"}


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
async def test_bytes_like_values_count_against_the_input_limits(kind: Any) -> None:
    schema, runs = Counting(), {"n": 0}

    async def store(value: Any) -> str:
        runs["n"] += 1
        return "stored"

    spec = define_capability(
        store,
        id="blob.put",
        description="Store a blob.",
        expose=EXPOSE,
        side_effect="write",
        risk="high",
        approval={"required": True},
        input=schema,
    )
    reg = create_capability_registry([spec])
    two_mib = kind(b"\x00" * (2 * 1024 * 1024))
    cases = [
        ({"blob": two_mib}, "stringBytes"),
        # 20 × 60 000 NULs: each string under 64 KiB, but 6 bytes of JSON per NUL.
        ({"parts": [kind(b"\x00" * 60_000) for _ in range(20)]}, "inputBytes"),
        ({kind(b"k" * 70_000) if kind is bytes else "k": 1}, "stringBytes" if kind is bytes else None),
        ({"bad": kind(b"\xff" * 30_000)}, "stringBytes"),  # 3 bytes of replacement character each
    ]
    for value, limit in cases:
        if limit is None:
            continue
        with pytest.raises(LimitExceededError) as info:
            await reg.invoke("blob.put", value)
        assert info.value.details["limit"] == limit, (kind, limit)
    assert schema.calls == 0, "no validator sees an over-limit input"
    assert runs["n"] == 0 and reg.approvals.list() == [], "nothing stored"
    # Within the limits, bytes pass as before.
    small = await reg.invoke("blob.put", {"blob": kind(b"abc")})
    assert isinstance(small, ApprovalRequired) and schema.calls == 1


# ----- 4. error classes take the message first --------------------------


async def test_raising_a_code_specific_error_with_a_message_in_a_handler() -> None:
    @capability(id="orders.get", description="Get.", expose=EXPOSE, side_effect="read", risk="low")
    async def get(t: Transfer) -> None:
        raise NotFoundError("No order o-9; list orders first.")

    reg = create_capability_registry([get])
    with pytest.raises(NotFoundError) as info:
        await reg.invoke("orders.get", {"to": "x", "note": "y"})
    assert (info.value.code, info.value.message) == ("NOT_FOUND", "No order o-9; list orders first.")


@pytest.mark.parametrize("code", sorted(ERROR_CLASSES))
def test_every_code_specific_class_takes_the_message_first(code: str) -> None:
    cls = ERROR_CLASSES[code]
    err = cls("the message", retryable=True, details={"k": 1})
    assert (err.code, err.message, err.retryable, err.details) == (code, "the message", True, {"k": 1})
    assert str(err) == f"{code}: the message"
    assert cls().message == "" and cls().code == code
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls and back.to_dict() == err.to_dict()


def test_capability_error_keeps_code_then_message() -> None:
    err = CapabilityError("LIMIT_EXCEEDED", "Too many.", retryable=False)
    assert (err.code, err.message) == ("LIMIT_EXCEEDED", "Too many.")
    assert pickle.loads(pickle.dumps(err)).to_dict() == err.to_dict()
    with pytest.raises(ValueError, match="unknown error code"):
        CapabilityError("msg")


# ----- 5. one-parameter redactors ----------------------------------------


async def test_redactors_of_one_or_two_parameters() -> None:
    def out_one(value: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in value.items() if k != "secret"}

    def view_one(value: Transfer) -> dict[str, str]:
        return {"to": value.to}

    def view_two(value: Transfer, info: RedactionInfo, *, unused: int = 0) -> dict[str, str]:
        return {"to": value.to, "for": str(info.actor.get("id"))}

    @capability(
        id="one",
        description="One.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True},
        redact_output=out_one,
        redact_approval_input=view_one,
    )
    async def one(t: Transfer) -> dict[str, str]:
        return {"ok": "yes", "secret": SECRET}

    @capability(
        id="two",
        description="Two.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True},
        redact_output=lambda v, i: {"ok": v["ok"]},
        redact_approval_input=view_two,
    )
    async def two(t: Transfer) -> dict[str, str]:
        return {"ok": "yes", "secret": SECRET}

    reg = create_capability_registry([one, two])
    frame = Frame("direct", actor={"id": "ana"})
    for cap, shown in (("one", {"to": "bob"}), ("two", {"to": "bob", "for": "ana"})):
        out = await reg.invoke(cap, {"to": "bob", "note": "n"}, frame)
        assert isinstance(out, ApprovalRequired)
        assert await reg.redact_approval_input(out.request) == shown
        reg.approvals.approve(out.request.id, approver="carol")
        ok = await reg.resume(out.request.id)
        assert isinstance(ok, InvokeOk) and ok.output == {"ok": "yes"}, cap


def test_a_redactor_that_takes_neither_form_is_a_build_problem() -> None:
    def three(value: Any, info: Any, extra: Any) -> Any:
        return value

    @capability(
        id="bad",
        description="Bad.",
        expose=EXPOSE,
        side_effect="read",
        risk="low",
        redact_output=three,
        redact_approval_input=lambda: None,
    )
    async def bad(t: Transfer) -> dict[str, str]:
        return {}

    with pytest.raises(RegistryValidationError) as info:
        create_capability_registry([bad])
    got = {(p["path"], p["code"]) for p in info.value.problems}
    assert got == {("redact.output", "HOOK_SIGNATURE"), ("redact.approvalInput", "HOOK_SIGNATURE")}


# ----- 6. the info a hook gets is frozen --------------------------------


async def test_hooks_cannot_change_the_actor_or_the_surface() -> None:
    attempts: list[str] = []
    actors: list[Any] = []

    def must_raise(what: str, write: Any) -> None:
        try:
            write()
        except (TypeError, AttributeError, dataclasses.FrozenInstanceError):
            attempts.append(what)

    def tamper(target: Any, name: str) -> None:
        actor = target.actor  # read outside the writes: a missing attribute is a failure, not a pass
        attributes = actor["attributes"]
        must_raise(f"{name}.actor[id]", lambda: actor.__setitem__("id", "mallory"))
        must_raise(f"{name}.actor.update", lambda: actor.update(id="mallory"))
        must_raise(f"{name}.roles", lambda: actor["roles"].append("admin"))
        must_raise(f"{name}.attributes", lambda: attributes.__setitem__("tenant", "t-2"))
        must_raise(f"{name}.nested", lambda: attributes["badge"].__setitem__("level", 9))
        must_raise(f"{name}.list", lambda: attributes["tags"].append("b"))
        must_raise(f"{name}.actor=", lambda: setattr(target, "actor", {"id": "mallory"}))

    def policy(r: PolicyRequest) -> Allow:
        tamper(r, "policy")
        must_raise("policy.frame=", lambda: setattr(r, "frame", Frame("mcp")))
        must_raise("policy.frame.surface", lambda: setattr(r.frame, "surface", "mcp"))
        must_raise("policy.input=", lambda: setattr(r, "input", None))
        r.context["seen"] = True  # the application's own object, handed as is
        actors.append(dict(r.actor))
        return Allow()

    def redact(value: Any, info: RedactionInfo) -> Any:
        tamper(info, "redact")
        must_raise("redact.surface", lambda: setattr(info, "surface", "mcp"))
        actors.append(dict(info.actor))
        return value

    @capability(
        id="frozen",
        description="F.",
        expose=EXPOSE,
        side_effect="read",
        risk="low",
        policies=[host_policy(policy, name="tamper")],
        redact_output=redact,
    )
    async def frozen(t: Transfer, ctx: HandlerContext) -> dict[str, Any]:
        return {"actor": ctx.frame.actor, "surface": ctx.frame.surface}

    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([frozen], audit=audit.append)
    context: dict[str, Any] = {}
    out = await reg.invoke("frozen", {"to": "a", "note": "b"}, Frame("direct", actor=ACTOR, context=context))
    assert isinstance(out, InvokeOk)
    names = ["actor[id]", "actor.update", "roles", "attributes", "nested", "list", "actor="]
    assert attempts == [
        *(f"policy.{n}" for n in names),
        "policy.frame=",
        "policy.frame.surface",
        "policy.input=",
        *(f"redact.{n}" for n in names),
        "redact.surface",
    ]
    original = {
        "id": "ana",
        "roles": ("clerk",),
        "attributes": {"tenant": "t-1", "badge": {"level": 2}, "tags": ("a",)},
    }
    assert actors == [original, original]
    assert out.output == {"actor": ACTOR, "surface": "direct"}, "the handler sees the original actor"
    assert all(r["actorId"] == "ana" and r["surface"] == "direct" for r in audit)
    assert context == {"seen": True}, "the context is the application's object"


async def test_the_approval_input_redactor_gets_a_frozen_info_too() -> None:
    def view(value: Transfer, info: RedactionInfo) -> Any:
        with pytest.raises(TypeError):
            info.actor["id"] = "mallory"  # type: ignore[index]
        with pytest.raises(dataclasses.FrozenInstanceError):
            info.surface = "mcp"  # type: ignore[misc]
        return {"to": value.to, "for": info.actor["id"], "surface": info.surface}

    @capability(
        id="pay.view",
        description="P.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True},
        redact_approval_input=view,
    )
    async def pay(t: Transfer) -> None: ...

    reg = create_capability_registry([pay])
    out = await reg.invoke("pay.view", {"to": "bob", "note": "n"}, Frame("mcp", actor=ACTOR))
    assert isinstance(out, ApprovalRequired)
    for _ in range(2):
        assert await reg.redact_approval_input(out.request) == {"to": "bob", "for": "ana", "surface": "mcp"}


# ----- 7. resume hands the handler the stored validated input -------------


class Kind(enum.Enum):
    REFUND = "refund"
    CREDIT = "credit"


class Line(BaseModel):
    sku: str
    cents: int

    @field_validator("cents")
    @classmethod
    def to_cents(cls, v: int) -> int:
        return v * 100


class Order(BaseModel):
    model_config = ConfigDict(populate_by_name=False)

    order_id: str = Field(alias="orderId")
    kind: Kind
    at: datetime
    lines: list[Line]
    first: Line | None = None


async def test_resume_does_not_validate_the_stored_input_again() -> None:
    got: list[Any] = []

    @capability(
        id="refund.run",
        description="Refund.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True},
    )
    async def run(r: Refund) -> int:
        got.append(r)
        return r.amount

    @capability(
        id="order.run",
        description="Order.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True},
    )
    async def order(o: Order) -> str:
        got.append(o)
        return o.order_id

    reg = create_capability_registry([run, order])
    out = await reg.invoke("refund.run", {"orderId": "o-1", "amount": 5})
    assert isinstance(out, ApprovalRequired) and out.request.input == {"order_id": "o-1", "amount": 500}
    reg.approvals.approve(out.request.id, approver="carol")
    ok = await reg.resume(out.request.id)
    assert isinstance(ok, InvokeOk) and ok.output == 500, "approved 500 cents, the handler got 500 cents"
    assert type(got[-1]) is Refund and got[-1].order_id == "o-1"

    raw = {
        "orderId": "o-2",
        "kind": "credit",
        "at": "2026-01-02T03:04:05Z",
        "lines": [{"sku": "a", "cents": 1}],
        "first": {"sku": "b", "cents": 2},
    }
    validated = Order.model_validate(raw)
    out = await reg.invoke("order.run", raw)
    assert isinstance(out, ApprovalRequired)
    reg.approvals.approve(out.request.id, approver="carol")
    ok = await reg.resume(out.request.id)
    assert isinstance(ok, InvokeOk) and ok.output == "o-2"
    o = got[-1]
    assert o == validated, "the handler gets exactly the value that was validated and approved"
    assert (type(o.kind), type(o.at), type(o.lines[0]), type(o.first)) == (Kind, datetime, Line, Line)
    assert o.at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc) and o.lines[0].cents == 100


class Masked(BaseModel):
    card: str

    @field_serializer("card")
    def last4(self, v: str) -> str:
        return "****" + v[-4:]


class Hidden(BaseModel):
    to: str
    pin: str = Field(default="", exclude=True)


async def test_an_input_whose_model_does_not_rebuild_from_its_json_is_refused_at_the_gate() -> None:
    runs = {"n": 0}

    @capability(
        id="masked", description="M.", expose=EXPOSE, side_effect="external", risk="high", approval={"required": True}
    )
    async def masked(m: Masked) -> None:
        runs["n"] += 1

    @capability(
        id="hidden", description="H.", expose=EXPOSE, side_effect="external", risk="high", approval={"required": True}
    )
    async def hidden(h: Hidden) -> None:
        runs["n"] += 1

    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([masked, hidden], audit=audit.append)
    for cap, value in (("masked", {"card": "4111111111111111"}), ("hidden", {"to": "bob", "pin": "1234"})):
        with pytest.raises(InvalidInputError) as info:
            await reg.invoke(cap, value)
        assert "rebuilt" in info.value.message and "4111" not in info.value.message and "1234" not in info.value.message
        assert audit[-1]["outcome"] == "INVALID_INPUT"
    assert reg.approvals.list() == [] and runs["n"] == 0
    # Without the excluded field set, the JSON holds the whole value.
    out = await reg.invoke("hidden", {"to": "bob"})
    assert isinstance(out, ApprovalRequired)


async def test_a_stored_input_that_no_longer_fits_the_model_fails_the_call_typed(tmp_path: Path) -> None:
    """A request made for an older shape of the model, resumed by a registry
    with the newer one (the same SQLite store): the resumed call fails as
    EXECUTION_FAILED, audited, and no pydantic error (which quotes the
    input) leaves."""

    class V1(BaseModel):
        order_id: str

    class V2(BaseModel):
        order_id: int

    async def ship_v1(s: V1) -> None: ...

    async def ship_v2(s: V2) -> None: ...

    meta: dict[str, Any] = dict(
        description="S.", expose=EXPOSE, side_effect="external", risk="high", approval={"required": True}
    )
    store = {"sqlite": str(tmp_path / "a.db")}
    old = create_capability_registry([define_capability(ship_v1, id="ship", input=V1, **meta)], approval_store=store)
    out = await old.invoke("ship", {"order_id": "not-a-number"})
    assert isinstance(out, ApprovalRequired)
    old.approvals.approve(out.request.id, approver="carol")
    audit: list[dict[str, Any]] = []
    new = create_capability_registry(
        [define_capability(ship_v2, id="ship", input=V2, **meta)], approval_store=store, audit=audit.append
    )
    with pytest.raises(orpc_agent.ExecutionFailedError) as info:
        await new.resume(out.request.id)
    assert "not-a-number" not in repr(info.value.to_dict()) + repr(info.value.__cause__) + repr(info.value.__context__)
    assert audit[-1]["outcome"] == "EXECUTION_FAILED" and audit[-1]["resumed"] is True
    # The core's rule (Answer::StoredInputUnusable), the same in Swift: its
    # text, the handler never started (no attempt), the approval consumed.
    assert info.value.message == "The approved input could not be given to the capability's handler; it did not run."
    assert audit[-1]["attempts"] == 0 and audit[-1]["failure"] == "StoredInputUnusable"
    assert new.approvals.get(out.request.id).status == "consumed"  # type: ignore[union-attr]


class Cents:
    """A schema of one's own that converts at validation and defines ``restore``."""

    def __init__(self) -> None:
        self.validated = 0

    def validate(self, value: Any) -> Any:
        self.validated += 1
        return {"cents": value["dollars"] * 100}

    def dump(self, value: Any) -> Any:
        return dict(value)

    def restore(self, data: Any) -> Any:
        return dict(data)

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object"}


async def test_a_schema_of_ones_own_restores_with_its_restore_and_hooks_may_be_async() -> None:
    got: list[Any] = []
    schema = Cents()

    async def view(value: Any) -> Any:  # one parameter, async
        return {"shown": value["cents"]}

    async def charge(value: Any) -> int:
        got.append(value)
        return int(value["cents"])

    spec = define_capability(
        charge,
        id="charge",
        description="C.",
        expose=EXPOSE,
        side_effect="external",
        risk="high",
        approval={"required": True},
        input=schema,
        redact_approval_input=view,
    )
    reg = create_capability_registry([spec])
    out = await reg.invoke("charge", {"dollars": 5})
    assert isinstance(out, ApprovalRequired) and out.request.input == {"cents": 500}
    assert await reg.redact_approval_input(out.request) == {"shown": 500}
    reg.approvals.approve(out.request.id, approver="carol")
    ok = await reg.resume(out.request.id)
    assert isinstance(ok, InvokeOk) and ok.output == 500 and got == [{"cents": 500}]
    assert schema.validated == 1


def test_declared_hooks_without_an_implementation_are_reported_with_the_core_problems() -> None:
    """Issue 14 item 8: a hook the metadata declares (``True`` markers, a
    ``{"host": true}`` policy) without an implementation is the core's
    MISSING_HOOK, in the same aggregate error as every other problem."""
    meta = {
        "redact": {"output": True, "approvalInput": True},
        "retry": {"maxAttempts": 1, "retryOn": True},
        "policies": [{"host": True, "name": "nowhere"}],
    }

    @capability(
        id="hooks.declared", description="Declares hooks.", expose=EXPOSE, side_effect="read", risk="low", meta=meta
    )
    async def declared(t: Transfer) -> dict[str, str]:
        return {}

    @capability(id="hooks.bad", description="", expose=EXPOSE, side_effect="read", risk="low")
    async def bad(t: Transfer) -> dict[str, str]:
        return {}

    with pytest.raises(RegistryValidationError) as info:
        create_capability_registry([declared, bad], options={"policies": [{"host": True}]})
    got = sorted((p["capability"] or "-", p["path"], p["code"]) for p in info.value.problems)
    assert got == [
        ("-", "policies[0]", "MISSING_HOOK"),
        ("hooks.bad", "description", "MISSING_FIELD"),
        ("hooks.declared", "policies[0]", "MISSING_HOOK"),
        ("hooks.declared", "redact.approvalInput", "MISSING_HOOK"),
        ("hooks.declared", "redact.output", "MISSING_HOOK"),
        ("hooks.declared", "retry.retryOn", "MISSING_HOOK"),
    ], got


async def test_a_declared_host_marker_is_implemented_by_the_given_policy_of_its_name_once() -> None:
    """A policy declared in the metadata as a host marker and given as a
    host policy of the same name is one policy (as in Swift): it builds
    without ``host_policies`` and is evaluated once, in the marker's place."""
    seen: list[str] = []

    def budget(request: Any) -> Any:
        seen.append(request.capability_id)
        return orpc_agent.Allow()

    meta = {"policies": [{"host": True, "name": "budget"}, {"name": "open", "decision": "allow"}]}

    @capability(
        id="pay.small",
        description="Pay.",
        expose=EXPOSE,
        side_effect="write",
        risk="low",
        meta=meta,
        policies=[orpc_agent.host_policy(budget, name="budget")],
    )
    async def pay(t: Transfer) -> dict[str, str]:
        return {}

    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([pay], audit=audit.append)
    await reg.invoke("pay.small", {"to": "bob", "note": "lunch"})
    assert seen == ["pay.small"]
    finished = next(r for r in audit if r["event"] == "finished")
    assert [(p["name"], p["host"]) for p in finished["policies"]] == [("budget", True), ("open", False)]


# ----- InputIssues of another shape ----------------------------------------


class Reporting:
    """A schema that reports these issues, however they are shaped."""

    def __init__(self, issues: Any) -> None:
        self.issues = issues

    def validate(self, value: Any) -> Any:
        raise orpc_agent.InputIssues(self.issues)

    def dump(self, value: Any) -> Any:
        return value

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object"}


@pytest.mark.parametrize(
    ("issues", "message"),
    [
        ([(["email"], "is not an address")], "email"),
        ([("email", "is not an address")], None),  # a bare string is not a path
        ([("only one",)], None),
        (["not a pair at all"], None),
        (None, None),
    ],
)
async def test_input_issues_of_another_shape_are_a_failed_validator(issues: Any, message: str | None) -> None:
    """Whether invoked by id or by tool name: INVALID_INPUT, audited, never a
    raw exception; the generic words when the issues are not (path, message)
    pairs."""
    records: list[Any] = []

    def check(value: Any) -> str:
        return "ran"

    spec = define_capability(
        check,
        id="mail.check",
        description="Check.",
        expose=EXPOSE,
        side_effect="read",
        risk="low",
        input=Reporting(issues),
    )
    reg = create_capability_registry([spec], audit=records.append)
    for name in ("mail.check", "mail_check"):
        with pytest.raises(orpc_agent.InvalidInputError) as raised:
            await reg.invoke(name, {"to": "x"}, Frame(surface="mcp"))
        if message is None:
            assert raised.value.message == "The input could not be validated, so the call did not run."
        else:
            assert message in raised.value.message and "e/m/a/i/l" not in raised.value.message
    assert [r["outcome"] for r in records if r["event"] == "finished"] == ["INVALID_INPUT", "INVALID_INPUT"]


class Trip(BaseModel):
    date: str

    @field_validator("date")
    @classmethod
    def in_the_future(cls, v: str) -> str:
        if v < "2026":
            raise CapabilityError("INVALID_INPUT", "Pick a departure date in the future.")
        return v


async def test_a_capability_error_raised_in_a_pydantic_validator_refuses_with_its_message() -> None:
    """pydantic passes an exception that is not a ValueError through: the
    app's own words reach the caller as INVALID_INPUT, the handler never runs."""
    ran: list[Trip] = []

    def book(trip: Trip) -> str:
        ran.append(trip)
        return "booked"

    spec = define_capability(book, id="trips.book", description="Book.", expose=EXPOSE, side_effect="write", risk="low")
    reg = create_capability_registry([spec])
    with pytest.raises(InvalidInputError) as raised:
        await reg.invoke("trips.book", {"date": "2020-01-01"})
    assert raised.value.message == "Pick a departure date in the future."
    assert ran == []
    assert (await reg.invoke("trips.book", {"date": "2027-01-01"})).output == "booked"  # type: ignore[union-attr]


def test_an_async_progress_listener_is_refused() -> None:
    async def listener(event: Any) -> None:
        return None

    with pytest.raises(TypeError, match="progress listener must be a plain function"):
        with orpc_agent.on_progress(listener):
            pass


def test_a_schema_with_an_async_validate_is_refused() -> None:
    """Validation is synchronous: an async ``validate`` would hand the
    handler a coroutine in place of the validated input."""

    class Later:
        async def validate(self, value: Any) -> Any:
            return value

        def dump(self, value: Any) -> Any:
            return value

        def json_schema(self) -> dict[str, Any]:
            return {"type": "object"}

    def check(value: Any) -> str:
        return "ran"

    with pytest.raises(TypeError, match="validate must be a plain method"):
        define_capability(
            check, id="mail.check", description="Check.", expose=EXPOSE, side_effect="read", risk="low", input=Later()
        )


async def test_a_page_limit_is_any_whole_number_as_in_node() -> None:
    @capability(
        id="pay.send",
        description="Pay.",
        expose={"direct": True},
        side_effect="external",
        risk="high",
        approval={"required": True},
    )
    async def send(t: Transfer) -> dict[str, str]:
        return {"receipt": "r"}

    reg = create_capability_registry([send])
    await reg.invoke("pay.send", {"to": "bob", "note": "n"}, Frame("direct", actor=ACTOR))
    limits: tuple[Any, ...] = (2.0, 2**53)
    for limit in limits:
        assert len(reg.approvals.page(limit=limit).requests) == 1, limit
    with pytest.raises(CapabilityError):
        reg.approvals.page(limit=2.5)  # type: ignore[arg-type]
