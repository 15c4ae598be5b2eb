"""The records `npu-graph lint` produces: findings with their call chain, skipped files, the report.

`LintReport.to_dict()` is the stable JSON contract (schema npu-graph-skill/lint/1).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.model import Record

SCHEMA = "npu-graph-skill/lint/1"


@dataclasses.dataclass
class Step(Record):
    """One hop from a capture site to the flagged line: where the call is and what it calls."""

    path: str
    line: int
    text: str  # "with torch.npu.graph(g)", "self.forward(x) → Model.forward"


@dataclasses.dataclass
class Finding(Record):
    rule: str
    name: str
    pattern: str
    certainty: str  # certain | likely (the less sure of the rule and the region)
    path: str
    line: int
    column: int  # 1-based
    end_line: int
    end_column: int
    message: str
    code: str  # the flagged source line, stripped
    region: Optional[Dict[str, Any]] = None  # kind, path, line, text of the capture site (capture-scope rules)
    chain: List[Step] = dataclasses.field(default_factory=list)

    def key(self):
        return (self.path, self.line, self.column, self.rule)


@dataclasses.dataclass
class Skipped(Record):
    path: str
    reason: str


@dataclasses.dataclass
class LintReport(Record):
    files_checked: int
    findings: List[Finding]
    skipped: List[Skipped]
    notes: List[str]
    rules: List[str]  # the rule ids that ran
    regions: int  # captured regions found
    suppressed: int
    lang: str = "en"
    schema: str = SCHEMA

    def counts(self) -> Dict[str, Any]:
        by_rule: Dict[str, int] = {}
        for finding in self.findings:
            by_rule[finding.rule] = by_rule.get(finding.rule, 0) + 1
        return {"findings": len(self.findings),
                "certain": sum(1 for f in self.findings if f.certainty == "certain"),
                "likely": sum(1 for f in self.findings if f.certainty == "likely"),
                "by_rule": dict(sorted(by_rule.items()))}

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        data["counts"] = self.counts()
        return data
