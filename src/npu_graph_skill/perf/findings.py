"""A finding of a performance report: what the data shows, in both languages, with the numbers
and the references behind it. Shared by `trace`, `graph-dump`, `bench` and `compare`."""
from __future__ import annotations

import dataclasses
from typing import Dict, List

from npu_graph_skill.core.model import Record


def text(en: str, zh: str) -> Dict[str, str]:
    return {"en": en, "zh": zh}


@dataclasses.dataclass
class Finding(Record):
    """`level`: info (context), warn (worth acting on), problem (a regression or failure).
    `advice` is the concrete next step; `refs` are sources or recorded cases (`case:<id>`)."""

    id: str
    level: str
    title: Dict[str, str]
    detail: Dict[str, str]
    advice: Dict[str, str] = dataclasses.field(default_factory=dict)
    refs: List[str] = dataclasses.field(default_factory=list)
