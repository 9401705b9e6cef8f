"""The README's runnable snippets (a ```python block right after a
``<!-- snippet: run -->`` line) run as they are, each in a fresh process,
and print what their ``print(...)  # expected`` comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SNIPPETS = re.findall(r"<!-- snippet: run -->\n```python\n(.*?)```", README.read_text(), re.S)


def test_the_readme_has_runnable_snippets() -> None:
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_snippet_runs(code: str) -> None:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=100)
    assert run.returncode == 0, run.stderr
    expected = re.findall(r"^\s*print\(.*\)  # (.+)$", code, re.M)
    assert run.stdout.splitlines() == expected
