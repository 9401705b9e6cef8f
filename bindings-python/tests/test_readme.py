"""The README's runnable snippets (a ```python block right after a
``<!-- snippet: run -->`` line) run as they are, as a script, each in a
fresh process and its own temporary working directory (a snippet may
create ``approvals.db``), and print what their ``print(...)  # expected``
comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
SNIPPETS = re.findall(r"<!-- snippet: run -->\n```python\n(.*?)```", README.read_text(), re.S)


def test_the_readme_has_runnable_snippets() -> None:
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet-{i}" for i in range(len(SNIPPETS))])
def test_snippet_runs(code: str, tmp_path: Path) -> None:
    script = tmp_path / "snippet.py"
    script.write_text(code)
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=100)
    assert run.returncode == 0, run.stderr
    expected = re.findall(r"^\s*print\(.*\)  # (.+)$", code, re.M)
    assert run.stdout.splitlines() == expected
