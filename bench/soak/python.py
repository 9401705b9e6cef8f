"""``make soak-python``: one million mixed governed invocations through the
Python binding (issue 10, item 3). Prints the figures and exits 1 when a
leak check or the documented bound (README.md) does not hold.
Usage: python bench/soak/python.py [invocations=1000000] [--no-approvals]
(--no-approvals: the control run, approval slots replaced by ok calls.)
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from python_soak import MIX, problems, soak, summary  # noqa: E402


def main() -> int:
    args = sys.argv[1:]
    if "--no-approvals" in args:
        MIX[MIX.index("approval")] = "ok"
    counts = [a for a in args if not a.startswith("--")]
    total = int(counts[0]) if counts else 1_000_000
    f = asyncio.run(soak(total, concurrency=64))
    print(json.dumps({"binding": "python", **asdict(f), "per_second": f.per_second}))
    print(summary(f))
    failed = problems(f)
    if failed:
        print("soak-python FAILED: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
