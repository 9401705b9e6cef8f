"""``std:`` metadata maps (spec/004): decode CBOR to a JSON view, encode the
view to deterministic CBOR, check a map against a metadata position — the
core's functions (``orpc_agent_core::ffi::act``), the same in every binding
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

from collections.abc import Mapping
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


__all__ = ["StdMetaProblem", "check_std_meta", "decode_std_meta", "encode_std_meta"]
