"""PostgreSQL: one approval queue (and audit trail) shared by every
instance of an app (issue 8).

``approval_store={"postgres": url}`` (or ``{"postgres": {"url": url,
"max_connections": 8, "tls": {"ca_pem": pem}, ...}}``) and
``audit={"postgres": url}`` on ``create_capability_registry``. Store calls
run on one process-wide tokio runtime; ``await registry.invoke`` and the
``*_async`` approval calls never block the event loop, the synchronous
ones block with the GIL released. Create registries after ``fork()``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from . import _native
from .capability import camel_keys

__all__ = ["ApprovalPage", "PostgresAuditSink"]


@dataclass(frozen=True)
class ApprovalPage:
    """One page of approval requests; pass ``next_cursor`` as ``cursor`` for
    the next (``None``: this was the last page)."""

    requests: list[Any]
    next_cursor: str | None


def connection(value: Any) -> tuple[str, str]:
    """``url`` or ``{"url": ..., **options}`` → (url, options as JSON).
    Options are checked by the core (an unknown key is INVALID_INPUT)."""
    if isinstance(value, str):
        return value, "null"
    if isinstance(value, Mapping) and isinstance(value.get("url"), str):
        options = {k: v for k, v in value.items() if k != "url"}
        return value["url"], json.dumps(camel_keys(options))
    # Let the core word the error for a malformed option.
    return "", "null"


_executor: ThreadPoolExecutor | None = None


async def wait(pending: _native.Pending) -> Any:
    """Awaits a store call running on the native runtime: a worker thread
    waits for it with the GIL released, so the event loop keeps running and
    the runtime's own threads never call into Python."""
    global _executor
    if _executor is None:
        # Each waiting call holds a worker; enough for a pool of connections.
        _executor = ThreadPoolExecutor(max_workers=64, thread_name_prefix="orpc-agent-postgres")
    return await asyncio.get_running_loop().run_in_executor(_executor, pending.wait)


async def settled(pending: _native.Pending) -> tuple[Any, bool]:
    """``wait``, to the store call's end even when the caller is cancelled
    meanwhile: the call runs on the native runtime and cannot be undone (a
    consume may commit), so the core must hear what it did before it hears
    of the cancellation. The result, and whether a cancellation came."""
    running = asyncio.ensure_future(wait(pending))
    cancelled = False
    while True:
        try:
            return await asyncio.shield(running), cancelled
        except asyncio.CancelledError:
            if running.cancelled():
                raise
            cancelled = True


class PostgresAuditSink:
    """The registry's PostgreSQL audit sink: one ``orpc_audit`` row per
    record, written in the background (an invocation never waits for it;
    when the queue is full records are dropped and counted)."""

    def __init__(self, native: _native.NativeRegistry) -> None:
        self._native = native

    def _stats(self) -> tuple[int, int, int]:
        return _native.audit_stats(self._native) or (0, 0, 0)

    @property
    def written(self) -> int:
        return self._stats()[0]

    @property
    def dropped(self) -> int:
        return self._stats()[1]

    @property
    def failed(self) -> int:
        return self._stats()[2]

    def flush(self) -> None:
        """Blocks (GIL released) until every queued record is written or counted as failed."""
        _native.audit_flush(self._native)

    async def flush_async(self) -> None:
        await wait(_native.audit_flush_async(self._native))
