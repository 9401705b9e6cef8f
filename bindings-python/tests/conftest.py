from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

VECTORS = HERE.parent.parent / "tests" / "vectors"


@pytest.fixture
def vectors_dir() -> Path:
    return VECTORS
