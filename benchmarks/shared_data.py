"""Where the project's real data lies (../shared/data: cases, samples, code tables), for the
benchmark scripts and the tests alike.

`NPU_GRAPH_SHARED_DATA` names it; otherwise the first `shared/data` folder beside the checkout or
above it. None when there is none: callers skip or say so.
"""
from __future__ import annotations

import os
import pathlib
from typing import Optional

REPO = pathlib.Path(__file__).resolve().parents[1]


def find_shared_data() -> Optional[pathlib.Path]:
    explicit = os.environ.get("NPU_GRAPH_SHARED_DATA")
    if explicit:
        path = pathlib.Path(explicit)
        return path if path.is_dir() else None
    for base in [REPO, *REPO.parents]:
        candidate = base / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None
