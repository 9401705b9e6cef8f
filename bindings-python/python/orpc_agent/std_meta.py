"""``std:`` metadata maps (spec/004): decode CBOR to a JSON view, encode the
view to deterministic CBOR, check a map against a metadata position; the
``act:component`` section of a WebAssembly component and ``std:forward``;
capability-class grant decisions and the tool-definition metadata an agent
metadata states —
the core's functions (``orpc_agent_core::ffi::act``), the same in every binding
and in ``orpc-agent meta``. Conversion only.

The JSON view: plain values map one to one; what JSON cannot say gets a
one-key wrapper — ``{"$bytes": hex}``, ``{"$tag": n, "value": ...}``,
``{"$float": "NaN"}``, ``{"$int": "<decimal>"}``, ``{"$map": [[k, v], ...]}``
— so a decoded map encodes back to the same bytes.

Bad input raises ``InvalidInputError`` whose ``details["reason"]`` is the
decoder's code (``NOT_A_MAP``, ``TRUNCATED``, ``DUPLICATE_KEY``, ...;
``UNKNOWN_POSITION`` for a position the core does not know).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict, cast

from . import _native


class StdMetaProblem(TypedDict):
    """One problem ``check_std_meta`` found."""

    key: str
    code: str
    severity: Literal["error", "warning"]
    message: str


def decode_std_meta(data: bytes) -> dict[str, Any]:
    """The JSON view of a CBOR metadata map."""
    return _native.std_meta_decode(bytes(data))


def encode_std_meta(meta: Mapping[str, Any]) -> bytes:
    """The deterministic CBOR of a metadata map in the JSON view."""
    return _native.std_meta_encode(meta)


def check_std_meta(data: bytes, position: str, *, strict: bool = False) -> list[StdMetaProblem]:
    """The problems of a metadata map at ``position`` (``tool-definition``,
    ``tool-call``, ...); an empty list means valid there. ``strict``: unknown
    ``std:`` keys are errors."""
    return cast("list[StdMetaProblem]", _native.std_meta_check(bytes(data), position, strict))


def inspect_component(wasm: bytes) -> dict[str, Any]:
    """The ``act:component`` metadata of a WebAssembly component, readable:
    ``{name, version, description, defaultLanguage, capabilities: [{id,
    description, allow, mountRoot, mounts}], metadata}``. A component
    without the section is ``InvalidInputError`` (``reason`` ``NO_SECTION``)."""
    return _native.act_component_inspect(bytes(wasm))


def embed_component(manifest: str, wasm: bytes, *, manifest_name: str = "act.toml") -> bytes:
    """``wasm`` with the ``act:component`` section the ``act.toml`` manifest
    text describes (replacing any it had). An invalid manifest is
    ``InvalidInputError`` (``details["reason"]``, and ``details["problems"]``
    for invalid metadata)."""
    return _native.act_component_embed(manifest, bytes(wasm), manifest_name)


def check_manifest(manifest: str, *, manifest_name: str = "act.toml") -> dict[str, Any]:
    """An ``act.toml`` manifest checked: the metadata it describes
    (``inspect_component``'s form), or ``InvalidInputError``."""
    return _native.act_manifest_check(manifest, manifest_name)


def wrap_std_forward(hops: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``std:forward`` for a chain of hops: ``hops[0]`` as the first
    component sees it, ``hops[1]`` under its ``std:forward``, and so on."""
    return _native.std_forward_wrap(list(hops))


def unwrap_std_forward(meta: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One ``std:forward`` layer unwrapped: this hop's metadata, and the next
    hop's (``None`` when there is none)."""
    out = _native.std_forward_unwrap(meta)
    return out["here"], out["next"]


class CapabilityGrantDecision(TypedDict, total=False):
    """What ``decide_capability_grant`` answers: ``allowed``, and for a
    denial ``reason`` (``UNDECLARED``, ``NOT_GRANTED``,
    ``OUTSIDE_DECLARATION``, ``OUTSIDE_GRANT``) and ``message``."""

    allowed: bool
    reason: str
    message: str


def decide_capability_grant(
    declared: Mapping[str, Any], grants: Mapping[str, Any], request: Mapping[str, Any]
) -> CapabilityGrantDecision:
    """One use of a capability class (spec/004 ``std.capabilities``) decided
    by the core against what a component declares (``declared``: the
    ``std.capabilities`` map, ``{"wasi:http": {"allow": [{"host":
    "*.example.com"}]}}``) and what the host granted (``grants``:
    ``{"wasi:http": {}}`` as declared, or ``{"allow": [...]}`` narrower; no
    grant widens a declaration). ``request``: ``{"id", "params"}``. A
    malformed declaration, grant or request is ``InvalidInputError``
    (``details["reason"]``: ``WILDCARD_CLASS``, ``BAD_CAPABILITY_ID``,
    ``BAD_PARAMETER``, ``BAD_REQUEST``, ...), never an allow."""
    return cast("CapabilityGrantDecision", _native.capability_grant_decide(declared, grants, request))


def tool_definition_meta(capability_id: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The tool-definition metadata map (spec/004) a capability's agent
    metadata states, in the JSON view: ``std:read-only`` and
    ``std:destructive`` from ``sideEffect``, ``std:idempotent``,
    ``std:timeout-ms``, ``std:tags``, the description as ``std:usage-hints``.
    ``meta`` is the metadata's JSON form (camelCase keys, as a declaration
    file writes it); metadata the registry would refuse is
    ``InvalidInputError`` with ``details["reason"]`` ``INVALID_AGENT_META``
    and ``details["problems"]``."""
    return _native.std_tool_definition_meta(capability_id, meta)


__all__ = [
    "CapabilityGrantDecision",
    "StdMetaProblem",
    "check_manifest",
    "check_std_meta",
    "decide_capability_grant",
    "decode_std_meta",
    "embed_component",
    "encode_std_meta",
    "inspect_component",
    "tool_definition_meta",
    "unwrap_std_forward",
    "wrap_std_forward",
]
