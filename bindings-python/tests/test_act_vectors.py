"""The std: metadata vectors (tests/vectors/act/decode.json, metadata.json)
through the public decode_std_meta / encode_std_meta / check_std_meta:
hostile CBOR gets its typed reason, each map's problems per position are
the core's, and every valid map round-trips through the JSON view. The
same cases run in Rust, Node and Swift."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orpc_agent import (
    InvalidInputError,
    check_manifest,
    check_std_meta,
    create_capability_registry,
    decide_capability_grant,
    decode_std_meta,
    define_capability,
    embed_component,
    encode_std_meta,
    inspect_component,
    tool_definition_meta,
    unwrap_std_forward,
    wrap_std_forward,
)

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "act"


def cases(name: str) -> list[dict[str, Any]]:
    return json.loads((VECTORS / name).read_text())["cases"]  # type: ignore[no-any-return]


DECODE = cases("decode.json")
METADATA = cases("metadata.json")


def test_the_act_vectors_have_their_cases() -> None:
    assert len(DECODE) >= 10 and len(METADATA) >= 25


@pytest.mark.parametrize("case", DECODE, ids=[c["name"] for c in DECODE])
def test_hostile_cbor_gets_its_reason(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["cbor"])
    for attempt in (lambda: decode_std_meta(data), lambda: check_std_meta(data, "tool-call")):
        with pytest.raises(InvalidInputError) as info:
            attempt()
        assert info.value.details == {"reason": case["error"]}


@pytest.mark.parametrize("case", METADATA, ids=[c["name"] for c in METADATA])
def test_problems_per_position_and_the_round_trip(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["cbor"])
    got = check_std_meta(data, case["position"], strict=case["strict"])
    key = lambda p: (p["key"], p["code"], p["severity"])  # noqa: E731
    assert {key(p) for p in got} == {key(p) for p in case["problems"]}
    assert all(isinstance(p["message"], str) for p in got)
    view = decode_std_meta(data)
    assert decode_std_meta(encode_std_meta(view)) == view


def test_an_unknown_position_names_the_known_ones() -> None:
    with pytest.raises(InvalidInputError, match="tool-definition") as info:
        check_std_meta(encode_std_meta({}), "nowhere")
    assert info.value.details == {"reason": "UNKNOWN_POSITION"}


def test_big_integers_and_bytes_cross_exactly() -> None:
    meta = {"acme:big": 2**64 - 1, "acme:neg": -(2**63), "acme:bytes": {"$bytes": "00ff"}}
    assert decode_std_meta(encode_std_meta(meta)) == meta


def test_a_manifest_embedded_into_a_component_reads_back_and_a_bad_one_is_typed() -> None:
    manifest = (VECTORS.parents[2] / "examples" / "act" / "act.toml").read_text()
    checked = check_manifest(manifest)
    assert checked["name"] == "orders-component"
    empty = bytes.fromhex("0061736d01000000")
    assert inspect_component(embed_component(manifest, empty)) == checked
    with pytest.raises(InvalidInputError) as info:
        inspect_component(empty)
    assert info.value.details == {"reason": "NO_SECTION"}
    with pytest.raises(InvalidInputError, match="mine.toml") as info:
        check_manifest("not toml [", manifest_name="mine.toml")
    assert info.value.details == {"reason": "MANIFEST_TOML"}


def test_std_forward_wraps_a_chain_and_unwraps_one_layer() -> None:
    hops = [{"std:request-id": "a"}, {"std:request-id": "b"}, {"std:request-id": "c"}]
    meta: dict[str, Any] | None = wrap_std_forward(hops)
    for hop in hops:
        assert meta is not None
        here, meta = unwrap_std_forward(meta)
        assert here == hop
    assert meta is None
    with pytest.raises(InvalidInputError) as info:
        unwrap_std_forward({"std:forward": 3})
    assert info.value.details == {"reason": "NOT_A_MAP"}


@pytest.mark.parametrize("case", cases("grants.json"), ids=lambda c: c["name"])
def test_grant_decisions(case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(InvalidInputError) as e:
            decide_capability_grant(case["declared"], case["grants"], case["request"])
        assert e.value.details["reason"] == case["error"]
        return
    got = decide_capability_grant(case["declared"], case["grants"], case["request"])
    assert got["allowed"] is case["allowed"]
    assert got.get("reason") == case.get("reason")
    assert isinstance(got.get("message"), str) is (not case["allowed"])


@pytest.mark.parametrize("case", cases("tool_meta.json"), ids=lambda c: c["name"])
def test_tool_definition_metadata(case: dict[str, Any]) -> None:
    if "problems" in case:
        with pytest.raises(InvalidInputError) as e:
            tool_definition_meta(case["id"], case["meta"])
        assert e.value.details["reason"] == "INVALID_AGENT_META"
        got = {(p["path"], p["code"]) for p in e.value.details["problems"]}
        assert got == {(p["path"], p["code"]) for p in case["problems"]}
        return
    view = tool_definition_meta(case["id"], case["meta"])
    assert view == case["view"]
    assert check_std_meta(encode_std_meta(view), "tool-definition", strict=True) == []


@pytest.mark.parametrize("case", cases("descriptors.json"), ids=lambda c: c["name"])
def test_descriptors_as_cbor(case: dict[str, Any]) -> None:
    async def echo(x: Any) -> Any:
        return x

    specs = [define_capability(echo, id=cap_id, meta=meta) for cap_id, meta in case["capabilities"].items()]
    registry = create_capability_registry(specs)
    assert registry.descriptors_cbor(case["surface"]).hex() == case["cbor"]
