"""Python binding benchmark (DESIGN §11), side by side in one process.

  direct      pydantic `model_validate` + `await handler(model)` (the peer)
  governed    `await registry.invoke(id, input)` — the same handler, governed
  crossing    reference: the native fast path alone, called synchronously
              (no `async def invoke` coroutine around it): the floor the
              Python API's coroutine adds to
  mcp plain   the same tool on an `MCPServer`, through `mcp`'s in-memory `Client`
  mcp gov.    the governed tool (orpc_agent.mcp) through the same `Client`

Method: each variant runs in batches (2 000 calls — 40 for MCP — in a tight
`await` loop, timed with perf_counter_ns, gc off); the per-call figure of a
batch is its time / N; variants alternate batch by batch (round-robin) so
load from other processes hits all alike; we report the median (p50) and
the minimum over batches, after a warm-up. Ratios are of p50s measured in
the same run. Run: `make bench-python` (release build of the native
module); BENCH_ROUNDS (default 40) sets the number of rounds.
"""

from __future__ import annotations

import asyncio
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from orpc_agent import Frame, capability, create_capability_registry
from orpc_agent.mcp import create_mcp_server


class Query(BaseModel):
    email: str
    limit: int = 10


class Result(BaseModel):
    email: str
    limit: int


async def handler(q: Query) -> Any:
    return q.limit


async def handler_out(q: Query) -> Result:
    return Result(email=q.email, limit=q.limit)


gov = capability(
    id="bench.search", description="Search.", expose={"direct": True, "mcp": True}, side_effect="read", risk="low"
)(handler)
gov_out = capability(
    id="bench.search_out", description="Search (output model).", expose={"direct": True}, side_effect="read", risk="low"
)(handler_out)

RAW = {"email": "ana@example.com", "limit": 3}


def plain_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("plain")

    @server.tool(name="bench_search", description="Search.")
    async def bench_search(email: str, limit: int = 10) -> int:
        return await handler(Query(email=email, limit=limit))

    return server


async def batches(fn: Callable[[int], Awaitable[None]], n: int, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        await fn(n)
        out.append((time.perf_counter_ns() - t0) / n / 1000.0)
    return out


async def main() -> None:
    registry = create_capability_registry([gov, gov_out])
    # Reference (not a target): the same call with an audit subscriber, two
    # records per call delivered as dicts.
    audited_registry = create_capability_registry([gov, gov_out], audit=lambda record: None)
    frame = Frame("direct")
    validate = Query.model_validate
    validate_out = Result.model_validate

    async def direct(n: int) -> None:
        for _ in range(n):
            await handler(validate(RAW))

    async def governed(n: int) -> None:
        invoke = registry.invoke
        for _ in range(n):
            await invoke("bench.search", RAW, frame)

    async def crossing(n: int) -> None:
        fast = registry._invoke_fast  # the one native crossing `invoke` makes first
        for _ in range(n):
            fast("bench.search", frame, RAW)

    async def governed_audited(n: int) -> None:
        invoke = audited_registry.invoke
        for _ in range(n):
            await invoke("bench.search", RAW, frame)

    async def direct_out(n: int) -> None:
        for _ in range(n):
            validate_out(await handler_out(validate(RAW)))

    async def governed_out(n: int) -> None:
        invoke = registry.invoke
        for _ in range(n):
            await invoke("bench.search_out", RAW, frame)

    # Sanity: every variant computes the same thing.
    assert (await registry.invoke("bench.search", RAW, frame)).output == 3  # type: ignore[union-attr]

    async with Client(plain_server()) as plain, Client(create_mcp_server(registry)) as governed_mcp:
        r1 = await plain.call_tool("bench_search", RAW)
        r2 = await governed_mcp.call_tool("bench_search", RAW)
        assert not r1.is_error and not r2.is_error, (r1, r2)

        async def mcp_plain(n: int) -> None:
            for _ in range(n):
                await plain.call_tool("bench_search", RAW)

        async def mcp_governed(n: int) -> None:
            for _ in range(n):
                await governed_mcp.call_tool("bench_search", RAW)

        micro = {
            "direct": direct,
            "governed": governed,
            "direct+out": direct_out,
            "governed+out": governed_out,
            "gov.+audit": governed_audited,
            "crossing": crossing,
        }
        mcp = {"mcp plain": mcp_plain, "mcp governed": mcp_governed}
        results: dict[str, list[float]] = {k: [] for k in [*micro, *mcp]}
        gc.disable()
        for fn in [*micro.values(), *mcp.values()]:
            await fn(200)  # warm-up
        for _ in range(int(os.environ.get("BENCH_ROUNDS", "40"))):
            for name, fn in micro.items():
                results[name] += await batches(fn, 2000, 1)
            for name, fn in mcp.items():
                results[name] += await batches(fn, 40, 1)
        gc.enable()

    p50 = {k: statistics.median(v) for k, v in results.items()}
    print(
        f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cpus; p50 per call over {len(results['direct'])} batches"
    )
    for k, v in p50.items():
        print(f"{k:14s} p50 {v:9.2f} us   min {min(results[k]):9.2f} us")
    print(f"governed / direct          = {p50['governed'] / p50['direct']:.2f}x  (target <= 1.3x)")
    print(f"governed+out / direct+out  = {p50['governed+out'] / p50['direct+out']:.2f}x")
    print(f"mcp governed / mcp plain   = {p50['mcp governed'] / p50['mcp plain']:.2f}x  (target <= 1.05x)")
    print(f"sequential governed invocations/s = {1e6 / p50['governed']:,.0f}")
    print(f"reference: with an audit subscriber p50 {p50['gov.+audit']:.2f} us")
    print(
        f"reference: the native crossing alone = {p50['crossing'] / p50['direct']:.2f}x direct "
        f"(the coroutine and Python around it: {p50['governed'] - p50['crossing']:.2f} us)"
    )
    if hasattr(os, "getloadavg"):
        print(f"# load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
