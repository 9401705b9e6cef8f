"""``_as_frame``: what a caller passes as ``frame`` (a ``Frame``, a mapping
with snake_case or camelCase keys, or nothing) as the ``Frame`` the core
reads.

A conversion only (the core checks the surface): separate from
``CapabilityRegistry`` (``_capability_registry``), whose module holds the
invoke/resume API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _native
from .types import Frame

_DIRECT = _native.Frame("direct")


def _as_frame(frame: Frame | Mapping[str, Any] | None) -> Frame:
    if frame is None:
        return _DIRECT
    if isinstance(frame, Frame):
        return frame
    f = dict(frame)
    trace = f.pop("trace", None) or {}
    kwargs = {
        "actor": f.pop("actor", None),
        "traceparent": f.pop("traceparent", None) or trace.get("traceparent"),
        "tracestate": f.pop("tracestate", None) or trace.get("tracestate"),
        "request_id": f.pop("request_id", None) or f.pop("requestId", None),
        "agent_id": f.pop("agent_id", None) or f.pop("agentId", None),
        "session_id": f.pop("session_id", None) or f.pop("sessionId", None),
        "context": f.pop("context", None),
    }
    surface = f.pop("surface", None)  # required: the core names the five
    if f:
        raise ValueError(f"unknown frame field(s): {', '.join(sorted(f))}")
    return Frame(surface, **kwargs)
