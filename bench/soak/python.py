"""``make soak-python``: one million mixed governed invocations through the
Python binding (issue 10, item 3). Prints the figures and exits 1 when a
leak check or the documented bound (README.md) does not hold.
Usage: python bench/soak/python.py [invocations=1000000]
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from python_soak import problems, soak, summary  # noqa: E402


def main() -> int:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
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
