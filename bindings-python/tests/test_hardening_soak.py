"""Short soak (issue 10, item 3) in ``make test``: 20 000 mixed governed
invocations after warm-up. The full million is ``make soak-python``
(bench/soak/python.py); the runner and its bounds are in
bench/soak/python_soak.py, documented in bench/soak/README.md."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "soak"))

import python_soak  # noqa: E402


async def test_20k_mixed_invocations_leak_nothing_and_stay_bounded() -> None:
    # A fifth of the calls fail on purpose, and each failure is logged for
    # operators with its exception; pytest's log capture would keep every
    # record (and its traceback) alive and count as a leak. The soak
    # measures the library, so the operator's log is off here.
    quiet = logging.getLogger("orpc_agent")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        f = await python_soak.soak(20_000)
    finally:
        quiet.setLevel(level)
    print(python_soak.summary(f))
    assert f.invocations >= 20_000
    for kind in ("ok", "invalid", "denied", "approval", "timeout", "error"):
        assert f.tally[kind] > 1000, f.tally
    assert f.tally["unexpected"] == 0, f.tally
    assert f.unfinished_approvals == 0
    assert f.tasks_left == 0
    assert python_soak.problems(f) == []
