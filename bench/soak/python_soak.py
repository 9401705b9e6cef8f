"""Soak run (issue 10, item 3) through the Python binding.

Mixed governed invocations — ok, invalid input, policy denied, approval
round trips (create + approve + resume), timeouts, handler errors — with
resident memory sampled after warm-up and at the end, and the leak checks:
no pending or approved-but-unconsumed approval rows, no asyncio tasks left,
Python object count stable.

Used by bindings-python/tests/test_hardening_soak.py (short) and
bench/soak/python.py (``make soak-python``, one million).
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from orpc_agent import CapabilityError, Deny, Frame, InvokeOk, capability, create_capability_registry, host_policy

# Per cycle of 9 slots; an approval slot is 2 invocations (create, resume).
MIX = ["ok", "ok", "ok", "invalid", "denied", "approval", "timeout", "error", "ok"]
CODES = {"invalid": "INVALID_INPUT", "denied": "POLICY_DENIED", "timeout": "TIMEOUT", "error": "EXECUTION_FAILED"}

#: Resident-memory growth allowed once warm (allocator arenas, caches)...
RSS_GROWTH_BOUND = 64 * 1024 * 1024
#: ...plus this much per approval row created while measuring: the memory store
#: keeps decided and consumed requests (a second resume must say
#: APPROVAL_CONSUMED), so they are retained data, not a leak (README.md).
RSS_PER_APPROVAL_ROW = 2048
#: Growth in the number of live Python objects allowed once warm: nothing per invocation survives.
OBJECT_GROWTH_BOUND = 2_000


class N(BaseModel):
    n: int


D = {"direct": True}


@capability(id="soak.read", description="Read.", expose=D, side_effect="read", risk="low")
async def read(q: N) -> dict[str, Any]:
    return {"n": q.n, "at": "x"}


@capability(id="soak.purge", description="Denied.", expose=D, side_effect="destructive", risk="high",
            policies=[host_policy(lambda r: Deny("never"), name="never")])
async def purge(q: N) -> dict[str, bool]:
    return {"purged": True}


@capability(id="soak.write", description="Approved write.", expose=D, side_effect="write", risk="high",
            approval={"required": True})
async def write(q: N) -> dict[str, int]:
    return {"wrote": q.n}


@capability(id="soak.slow", description="Times out.", expose=D, side_effect="read", risk="low", timeout_ms=2)
async def slow(q: N) -> None:
    await asyncio.sleep(60)


@capability(id="soak.fail", description="Fails.", expose=D, side_effect="read", risk="low")
async def fail(q: N) -> None:
    raise RuntimeError("handler failure")


@dataclass
class Figures:
    invocations: int = 0
    seconds: float = 0.0
    rss_start: int = 0
    rss_end: int = 0
    objects_start: int = 0
    objects_end: int = 0
    approval_rows: int = 0
    unfinished_approvals: int = 0
    tasks_left: int = 0
    audited: int = 0
    tally: dict[str, int] = field(default_factory=lambda: {k: 0 for k in [*CODES, "ok", "approval", "unexpected"]})

    @property
    def per_second(self) -> float:
        return self.invocations / self.seconds if self.seconds else 0.0


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def sample() -> tuple[int, int]:
    gc.collect()
    return rss(), len(gc.get_objects())


FRAME = Frame("direct", actor={"id": "soak"})


async def slot(registry: Any, kind: str, n: int, tally: dict[str, int]) -> int:
    if kind == "ok":
        r = await registry.invoke("soak.read", {"n": n}, FRAME)
        tally["ok" if isinstance(r, InvokeOk) and r.output["n"] == n else "unexpected"] += 1
        return 1
    if kind == "approval":
        pending = await registry.invoke("soak.write", {"n": n}, FRAME)
        registry.approvals.approve(pending.request.id, approver="ops")
        done = await registry.resume(pending.request.id)
        tally["approval" if isinstance(done, InvokeOk) and done.output == {"wrote": n} else "unexpected"] += 1
        return 2
    cap = {"invalid": "soak.read", "denied": "soak.purge", "timeout": "soak.slow", "error": "soak.fail"}[kind]
    try:
        await registry.invoke(cap, {"n": "not a number"} if kind == "invalid" else {"n": n}, FRAME)
        tally["unexpected"] += 1
    except CapabilityError as e:
        tally[kind if e.code == CODES[kind] else "unexpected"] += 1
    return 1


async def run(registry: Any, total: int, concurrency: int, tally: dict[str, int]) -> int:
    made = 0
    counter = iter(range(1 << 62))

    async def worker() -> None:
        nonlocal made
        while made < total:
            i = next(counter)
            n = await slot(registry, MIX[i % len(MIX)], i, tally)
            made += n  # after the await: `made += await ...` adds to a stale value

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return made


async def soak(total: int, warmup: int | None = None, concurrency: int = 32) -> Figures:
    """Soaks ``total`` invocations after ``warmup`` ones; asserts nothing (callers do)."""
    warmup = warmup if warmup is not None else min(50_000, max(5_000, total // 10))
    audited = 0

    def on_audit(_record: dict[str, Any]) -> None:
        nonlocal audited
        audited += 1

    registry = create_capability_registry([read, purge, write, slow, fail], audit=on_audit)
    f = Figures()
    tasks_before = len(asyncio.all_tasks())
    await run(registry, warmup, concurrency, dict(f.tally))
    await asyncio.sleep(0.02)
    f.rss_start, f.objects_start = sample()
    t0 = time.perf_counter()
    f.invocations = await run(registry, total, concurrency, f.tally)
    f.seconds = time.perf_counter() - t0
    await asyncio.sleep(0.02)
    f.rss_end, f.objects_end = sample()
    f.tasks_left = len(asyncio.all_tasks()) - tasks_before
    cursor = None
    while True:
        page = registry.approvals.page(limit=1000, cursor=cursor)
        f.approval_rows += len(page.requests)
        f.unfinished_approvals += sum(1 for r in page.requests if r.status in ("pending", "approved"))
        cursor = page.next_cursor
        if not cursor:
            break
    f.audited = audited
    return f


def problems(f: Figures) -> list[str]:
    """The leak checks and bounds; empty when the soak passed."""
    out = []
    if f.tally["unexpected"]:
        out.append(f"unexpected outcomes: {f.tally}")
    if f.unfinished_approvals:
        out.append(f"unfinished approvals: {f.unfinished_approvals}")
    if f.tasks_left:
        out.append(f"asyncio tasks left: {f.tasks_left}")
    if f.rss_end - f.rss_start >= rss_bound(f):
        out.append(f"RSS grew {mb(f.rss_end - f.rss_start)} MB, bound {mb(rss_bound(f))} MB")
    if f.objects_end - f.objects_start >= OBJECT_GROWTH_BOUND:
        out.append(f"live objects grew by {f.objects_end - f.objects_start}")
    return out


def rss_bound(f: Figures) -> int:
    return RSS_GROWTH_BOUND + RSS_PER_APPROVAL_ROW * f.tally["approval"]


def mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f}"


def summary(f: Figures) -> str:
    return (
        f"soak-python: {f.invocations} invocations in {f.seconds:.1f} s ({f.per_second:.0f}/s); "
        f"RSS start {mb(f.rss_start)} MB, end {mb(f.rss_end)} MB (growth {mb(f.rss_end - f.rss_start)}, bound {mb(rss_bound(f))}); "
        f"objects {f.objects_start} -> {f.objects_end}; approval rows {f.approval_rows} (unfinished {f.unfinished_approvals}); "
        f"tasks left {f.tasks_left}; tally {f.tally}"
    )
