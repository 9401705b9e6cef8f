"""Limits through the Python binding's public API (issue 10, item 5): every
case of tests/vectors/limits/limits.json — input size, nesting depth, keys
per object, string and key length in UTF-8 bytes, pending approvals per
actor on the memory and SQLite stores — gives the typed error the vector
names (``LimitExceededError``, details ``{limit, max}``) and runs no handler.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orpc_agent import (
    ApprovalRequired,
    CapabilityError,
    Frame,
    InvalidInputError,
    InvokeOk,
    LimitExceededError,
    create_capability_registry,
    define_capability,
)

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "limits" / "limits.json"
V = json.loads(VECTORS.read_text())


def generate(g: dict[str, Any]) -> Any:
    """The generators of tests/vectors/README.md, section limits."""
    if "depth" in g:
        a: Any = []
        for _ in range(g["depth"] - 2):
            a = [a]
        return {"v": a}
    if "keys" in g:
        return {f"k{i}": 0 for i in range(g["keys"])}
    if "string" in g:
        return {"text": g.get("char", "a") * g["string"]}
    if "key" in g:
        return {"a" * g["key"]: 0}
    if "size" in g:
        chunks: list[str] = []
        remaining = g["size"] - 13
        while remaining > 0:
            if chunks:
                remaining -= 1
            take = min(remaining - 2, 60000)
            chunks.append("a" * take)
            remaining -= take + 2
        return {"chunks": chunks}
    raise ValueError(g)


class Identity:
    """The host validator the vectors ask for: returns its input unchanged, counting calls."""

    def __init__(self, calls: dict[str, int]) -> None:
        self.calls = calls

    def validate(self, value: Any) -> Any:
        self.calls["validated"] += 1
        return value

    def dump(self, value: Any) -> Any:
        return value

    def json_schema(self) -> dict[str, Any] | None:
        return {"type": "object"}


def registry_for(store: Any = "memory") -> tuple[Any, dict[str, int]]:
    calls = {"handler": 0, "validated": 0}
    specs = []
    for cap_id, cap in V["capabilities"].items():

        async def handler(value: Any) -> dict[str, bool]:
            calls["handler"] += 1
            return {"ok": True}

        specs.append(define_capability(handler, id=cap_id, meta=cap["meta"], input=Identity(calls)))
    return create_capability_registry(specs, approval_store=store), calls


def test_generators_make_what_the_readme_says() -> None:
    assert json.dumps(generate({"depth": 3}), separators=(",", ":")) == '{"v":[[]]}'
    for n in (1048576, 1048577, 100):
        assert len(json.dumps(generate({"size": n}), separators=(",", ":")).encode()) == n


@pytest.mark.parametrize("case", V["cases"], ids=[c["name"] for c in V["cases"]])
async def test_limit_vector(case: dict[str, Any]) -> None:
    registry, calls = registry_for()
    expect = case["expect"]
    frame = Frame(V["surface"], actor={"id": "a1"})
    if expect["status"] == "ok":
        assert isinstance(await registry.invoke(case["capability"], generate(case["generate"]), frame), InvokeOk)
    else:
        with pytest.raises(CapabilityError) as info:
            await registry.invoke(case["capability"], generate(case["generate"]), frame)
        assert info.value.code == expect["code"], info.value
        if "details" in expect:
            assert info.value.details == expect["details"]
        if expect["code"] == "LIMIT_EXCEEDED":
            assert isinstance(info.value, LimitExceededError)
            assert (info.value.kind, info.value.retryable) == ("std:invalid-args", False)
            assert calls["validated"] == 0, "no validator sees an over-limit input"
    assert calls["handler"] == case["handlerCalls"]


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("case", V["pending"], ids=[p["name"] for p in V["pending"]])
async def test_pending_approvals_per_actor(case: dict[str, Any], store: str, tmp_path: Path) -> None:
    registry, calls = registry_for("memory" if store == "memory" else {"sqlite": str(tmp_path / "a.db")})
    for step in case["steps"]:
        # A case's own surface (on MCP a repeated identical call finds its request).
        frame = Frame(case.get("surface", V["surface"]), actor={"id": step["actor"]})
        for _ in range(step["times"]):
            if step["expect"]["status"] == "approval_required":
                assert isinstance(await registry.invoke(case["capability"], case["input"], frame), ApprovalRequired)
            else:
                with pytest.raises(LimitExceededError):
                    await registry.invoke(case["capability"], case["input"], frame)
    assert calls["handler"] == 0


async def test_limits_hold_without_an_input_schema_by_tool_name_and_on_cycles() -> None:
    """The raw input is measured before the first step whatever comes next:
    a capability without an input schema (no stage 4 validator), a call by
    tool name (the core resolves it), and a dict that contains itself (a
    depth error, not an endless walk)."""
    runs = {"n": 0}

    async def raw(value: Any) -> str:
        runs["n"] += 1
        return "ran"

    spec = define_capability(raw, id="raw.in", meta={**V["capabilities"]["docs.write"]["meta"]}, input=None)
    registry = create_capability_registry([spec])
    frame = Frame(V["surface"], actor={"id": "a1"})
    deep = generate({"depth": 65})
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    for name in ("raw.in", "raw_in"):
        for value, limit in (
            (deep, "depth"),
            (cyclic, "depth"),
            ({"s": "x" * 65537}, "stringBytes"),
            ({str(i): i for i in range(1025)}, "objectKeys"),
        ):
            with pytest.raises(LimitExceededError) as info:
                await registry.invoke(name, value, frame)
            assert info.value.details["limit"] == limit, (name, limit)
    assert runs["n"] == 0
    ok = await registry.invoke("raw_in", {"s": "x" * 65536, "tuple": (1, 2.5, None, True)}, frame)
    assert isinstance(ok, InvokeOk) and runs["n"] == 1


async def test_numbers_are_measured_by_value_never_through_python_code() -> None:
    """Ints beyond 64 bits count by their digits; an int subclass whose
    ``__str__`` runs Python code is read by value (the walk runs no Python
    code: it reads containers with borrowed references)."""
    seen: list[Any] = []

    class Loud(int):
        def __str__(self) -> str:  # pragma: no cover - must not be called
            seen.append("str")
            return "1"

    async def echo(value: Any) -> int:
        return 1

    registry = create_capability_registry(
        [define_capability(echo, id="n.in", meta={**V["capabilities"]["docs.write"]["meta"]}, input=None)]
    )
    frame = Frame(V["surface"], actor={"id": "a1"})
    big = 10**400
    ok = await registry.invoke("n.in", {"big": big, "neg": -big, "loud": Loud(5), "f": 1.5e300}, frame)
    assert isinstance(ok, InvokeOk)
    assert seen == []
    # A list of big ints past the size limit: counted by digits.
    with pytest.raises(LimitExceededError) as info:
        await registry.invoke("n.in", {"v": [10**1000] * 1100}, frame)
    assert info.value.details["limit"] == "inputBytes"
    # A NaN or infinity has no JSON form: refused before any validator or
    # handler (the core's NON_FINITE_NUMBER, by its pointer, as in Node and
    # Swift), once the limits passed (past them, the limit's error).
    with pytest.raises(InvalidInputError) as bad:
        await registry.invoke("n.in", {"ok": 1, "x": {"y": [0, float("nan")]}}, frame)
    assert (bad.value.details, "/x/y/1" in bad.value.message) == ({"reason": "NON_FINITE_NUMBER"}, True)
    with pytest.raises(LimitExceededError):
        await registry.invoke("n.in", {"nan": float("-inf"), "v": [10**1000] * 1100}, frame)


async def test_strings_with_lone_surrogates_are_measured() -> None:
    """``json.loads`` makes strings with lone surrogates (no UTF-8 form):
    they are measured through their ``surrogatepass`` bytes, not skipped."""

    async def echo(value: Any) -> int:
        return 1

    registry = create_capability_registry(
        [define_capability(echo, id="s.in", meta={**V["capabilities"]["docs.write"]["meta"]}, input=None)]
    )
    frame = Frame(V["surface"], actor={"id": "a1"})
    long_bad = json.loads('"' + "\\ud800" * 30_000 + '"')  # 90 000 bytes as surrogatepass
    with pytest.raises(LimitExceededError) as info:
        await registry.invoke("s.in", {"s": long_bad}, frame)
    assert info.value.details["limit"] == "stringBytes"
    with pytest.raises(LimitExceededError):
        await registry.invoke("s.in", {long_bad: 1}, frame)
    assert isinstance(await registry.invoke("s.in", {"s": json.loads('"a\\ud800b"')}, frame), InvokeOk)


def test_a_lone_surrogate_is_not_json_naming_where_in_node_s_words_too() -> None:
    """What Node's ``inputHash`` says too (vectors-hash.test.js): JSON files
    cannot carry a lone surrogate to every runner, so each pins the words."""
    from orpc_agent import input_hash

    for value, at in [({"a": "x\ud800"}, "/a"), ({"x": {"k\udc00": 1}}, "/x")]:
        with pytest.raises(InvalidInputError) as info:
            input_hash("t", value)
        assert (info.value.details, info.value.message) == (
            {"reason": "NOT_JSON_VALUE"},
            f"input at {at} is a string that is not valid UTF-8, which the JSON data model has no place for",
        )
    assert isinstance(input_hash("t", {"a": "\U0001f600"}), str)
