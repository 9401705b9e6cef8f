"""The .pyi stubs match the native module (mypy.stubtest), and a typed use
of the public API passes mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_stubtest_matches_the_native_module() -> None:
    done = run("mypy.stubtest", "orpc_agent", "--allowlist", "stubtest-allowlist.txt")
    assert done.returncode == 0, done.stdout + done.stderr


def test_typed_usage_passes_mypy_strict() -> None:
    done = run("mypy", "tests/typed_usage.py")
    assert done.returncode == 0, done.stdout + done.stderr
