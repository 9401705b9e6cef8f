"""tests/vectors/progress through the Python binding's public API: a
handler makes each case's reports with ``ctx.progress``, and an
``on_progress`` scope hears the accepted ones. The core decides which are
accepted; this runner only reads the numbers out of the vectors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from orpc_agent import HandlerContext, ProgressEvent, capability, create_capability_registry, on_progress

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "progress"
CASES = [c for f in sorted(VECTORS.glob("*.json")) for c in json.loads(f.read_text())["cases"]]


class Empty(BaseModel):
    pass


def test_there_are_progress_vectors() -> None:
    assert CASES


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
async def test_progress_vector(case: dict[str, Any]) -> None:
    reports = case["reports"]

    @capability(id="work.run", description="Reports progress.", expose={"direct": True}, side_effect="none", risk="low")
    async def run(_: Empty, ctx: HandlerContext) -> list[bool]:
        return [ctx.progress(r["done"], r.get("total")) for r in reports]

    events: list[ProgressEvent] = []
    with on_progress(events.append):
        out = await create_capability_registry([run]).invoke("work.run", {})
    accepted = [r["expect"] for r in reports if "dropped" not in r["expect"]]
    assert out.output == ["dropped" not in r["expect"] for r in reports]
    assert events == [ProgressEvent(e["done"], e.get("total")) for e in accepted]


async def test_an_integral_float_is_a_count_as_in_javascript() -> None:
    # JavaScript has one number type, so 2.0 and 2 are one count there; a
    # float that is not a whole number, or a bool, is none.
    @capability(id="work.floats", description="Reports.", expose={"direct": True}, side_effect="none", risk="low")
    async def floats(_: Empty, ctx: HandlerContext) -> list[bool]:
        reports: list[tuple[Any, Any]] = [(1.0, 4.0), (2.5, None), (True, None), (float("nan"), None), (2, None)]
        return [ctx.progress(done, total) for done, total in reports]

    events: list[ProgressEvent] = []
    with on_progress(events.append):
        out = await create_capability_registry([floats]).invoke("work.floats", {})
    assert out.output == [True, False, False, False, True]
    assert events == [ProgressEvent(1, 4), ProgressEvent(2, 4)]
