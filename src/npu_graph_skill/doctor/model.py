"""The doctor's records: one `CheckResult` per check, gathered in a `DoctorReport`.

Texts a user reads are kept in both languages ({"en": ..., "zh": ...}) so the JSON is the same
whatever `--lang` says; the text renderer picks one.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.model import Record

PASS, WARN, FAIL, CRIT, SKIP = "PASS", "WARN", "FAIL", "CRIT", "SKIP"
STATUSES = (PASS, WARN, FAIL, CRIT, SKIP)
SEVERE = (FAIL, CRIT)
BACKENDS = ("npu", "cuda")

Text = Dict[str, str]


def txt(en: str, zh: str) -> Text:
    """A bilingual text."""
    return {"en": en, "zh": zh}


@dataclasses.dataclass
class Remedy(Record):
    """What to do about a finding: a sentence, and the command to run where one exists."""

    text: Text
    command: str = ""


@dataclasses.dataclass
class CheckResult(Record):
    id: str
    title: Text
    status: str
    summary: Text
    evidence: List[str] = dataclasses.field(default_factory=list)  # versions, paths, the exact error
    remedy: List[Remedy] = dataclasses.field(default_factory=list)
    anchors: List[str] = dataclasses.field(default_factory=list)  # where the rule comes from
    depends_on: List[str] = dataclasses.field(default_factory=list)
    data: Dict[str, Any] = dataclasses.field(default_factory=dict)  # machine-readable facts
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status in (PASS, WARN)


@dataclasses.dataclass
class DoctorReport(Record):
    backend: str  # npu | cuda | none
    requested_backend: str
    python: str  # the interpreter the checks ran in
    checks: List[CheckResult]
    counts: Dict[str, int]
    seconds: float
    verdict: Text
    notes: List[Text] = dataclasses.field(default_factory=list)
    schema: str = "npu-graph-skill/doctor/1"

    @property
    def exit_code(self) -> int:
        return 1 if any(c.status in SEVERE for c in self.checks) else 0

    def check(self, check_id: str) -> Optional[CheckResult]:
        for result in self.checks:
            if result.id == check_id:
                return result
        return None
