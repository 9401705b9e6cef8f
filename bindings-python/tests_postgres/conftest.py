from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

if not os.environ.get("ORPC_AGENT_TEST_PG_URL"):
    raise RuntimeError(
        "ORPC_AGENT_TEST_PG_URL is not set: run `make test-postgres-bindings` (it starts a throwaway PostgreSQL)"
    )
