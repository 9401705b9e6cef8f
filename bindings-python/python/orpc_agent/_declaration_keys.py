"""The Python spelling of a declaration's fields (``expires_in_ms``,
``tool_name``) as the core's (``expiresInMs``, ``toolName``): a conversion
of the library's own field names only. The application's data inside a
declaration — surface names, MCP annotations, actor attribute schemas — is
handed to the core as given, so the core reads the same declaration from
Python as from Node (and refuses the same unknown surface)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")

# Fields whose value is the application's data, not the library's field
# names: surface names (the core reads them, and refuses one it does not
# know), and a JSON Schema of the application's actor attribute names.
_VERBATIM = frozenset({"expose", "actorAttributes"})

# MCP annotations: MCP's own hints in the Python spelling too
# (``read_only_hint``); any other key (a vendor's) and every value as given.
_MCP_HINTS = frozenset({"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"})


def _camel(key: str) -> str:
    """``tool_name`` → ``toolName``; anything else (``mcp_``, ``toolName``) as it is."""
    if not _SNAKE.fullmatch(key):
        return key
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def camel_keys(value: Any) -> Any:
    """The Python spelling of the library's own declaration fields
    (``expires_in_ms``) → the core's (``expiresInMs``), recursively, except
    in the application's data (``_VERBATIM``: kept as given). Two keys
    that name one field (``tool_name`` and ``toolName``) are refused."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            name = _camel(key) if isinstance(key, str) else key
            if name in out:
                raise ValueError(f"{key!r} names the field {name!r} given already")
            out[name] = item if name in _VERBATIM else _annotations(item) if name == "annotations" else camel_keys(item)
        return out
    if isinstance(value, list | tuple):
        return [camel_keys(v) for v in value]
    return value


def _annotations(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    out: dict[Any, Any] = {}
    for key, item in value.items():
        name = _camel(key) if isinstance(key, str) and _camel(key) in _MCP_HINTS else key
        if name in out:
            raise ValueError(f"{key!r} names the MCP annotation {name!r} given already")
        out[name] = item
    return out
