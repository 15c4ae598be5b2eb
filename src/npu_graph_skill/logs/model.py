"""The log report: the JSON contract of `npu-graph logs --json` and `api.analyze_logs`.

Finding ids (E-/T-/M-) are documented, in zh and en, in `knowledge/log_findings.yaml`.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.model import Record

SCHEMA = "npu-graph-skill/logs/1"


@dataclasses.dataclass
class Where(Record):
    """A line of the input: which file, which 1-based line, the text as printed."""

    source: str
    line: int
    text: str
    rank: Optional[int] = None
    time: str = ""
    node: str = ""  # the machine it was read on (`logs merge`); "" for a local analysis


@dataclasses.dataclass
class SourceSummary(Record):
    name: str
    rank: Optional[int]
    bytes: int
    lines: int
    layouts: Dict[str, int]  # line layout (formats.py names) → lines seen among the first 200 and the kept ones
    first_time: str = ""
    last_time: str = ""
    notes: List[str] = dataclasses.field(default_factory=list)
    node: str = ""


@dataclasses.dataclass
class CodeName(Record):
    code: str
    name: str = ""
    meaning: str = ""


@dataclasses.dataclass
class ErrorGroup(Record):
    """E-001 decisive error / E-002 consequence / E-003 benign / E-004 warning / E-005 notice (a warning the
    framework prints routinely): one normalised signature."""

    id: str
    kind: str  # error | warning
    role: str  # decisive | consequence | benign | warning | notice
    signature: str
    message: str  # the first occurrence's message
    level: str
    module: str
    format: str
    count: int
    first_time: str
    last_time: str
    first_ts: Optional[float]
    last_ts: Optional[float]
    ranks: List[int]
    sources: List[str]
    first: Where
    codes: List[CodeName] = dataclasses.field(default_factory=list)
    notice: str = ""  # the notice sign (knowledge/context_signs.yaml) a warning of role "notice" is


@dataclasses.dataclass
class Consequence(Record):
    rank: Optional[int]
    time: str
    where: Where
    why: str  # which rule made it a consequence
    group: str  # signature


@dataclasses.dataclass
class FirstFailure(Record):
    """E-010: which rank failed first and when, what the others reported afterwards, and the window of lines
    around the decisive error (verbatim, prefixes kept) for the diagnosis."""

    id: str
    rank: Optional[int]
    time: str
    ts: Optional[float]
    where: Where
    message: str
    signature: str
    codes: List[CodeName]
    only_consequences: bool  # no decisive error found: the cause is probably in a log that is missing
    consequences: List[Consequence]
    also_failed: List[Consequence]  # the same kind of decisive error, later, on other ranks
    window_first_line: int
    window: List[str]
    node: str = ""
    clock_uncertainty_s: float = 0.0  # how far the corrected clock of its node may still be off (merged summaries)
    # other ranks whose first error came so soon after this one that the clock uncertainty leaves their order open
    too_close: List[Consequence] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class TimelineStat(Record):
    """T-00x: durations (seconds) or counts of one lifecycle step, with P50/P99 where there are durations."""

    id: str
    kind: str  # capture | replay_interval | update | compile | capture_summary | fallback | update_calls
    source: str  # which lines it comes from: cpp | py | acl | npugraph | vllm | sglang | framework | graph_tree
    count: int
    unit: str = "s"
    total: Optional[float] = None
    p50: Optional[float] = None
    p99: Optional[float] = None
    max: Optional[float] = None
    ranks: List[int] = dataclasses.field(default_factory=list)
    examples: List[Where] = dataclasses.field(default_factory=list)
    note: str = ""
    unfinished: int = 0  # begins without an end (a capture under way when the log stops)


@dataclasses.dataclass
class MemoryFinding(Record):
    """M-00x: OOM, allocator peaks, memory taken by capture, free memory after capture, allocator retries."""

    id: str
    kind: str
    count: int
    values: Dict[str, Any] = dataclasses.field(default_factory=dict)
    ranks: List[int] = dataclasses.field(default_factory=list)
    examples: List[Where] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Anomaly(Record):
    """T-101 slow capture / T-102 slow compile / T-103 replay jitter: a number over its threshold."""

    id: str
    kind: str
    value: float
    threshold: float
    unit: str
    rank: Optional[int]
    where: Optional[Where]
    message: Dict[str, str]  # zh, en


@dataclasses.dataclass
class ClockOffset(Record):
    """How far one node's clock was ahead of the reference (`logs merge`): subtracted from every time it printed."""

    node: str
    offset_s: float  # applied
    uncertainty_s: Optional[float]  # None: no event shared with the other nodes, times taken as printed
    method: str  # reference | given | estimated | agrees | unknown
    estimate_s: Optional[float] = None  # from the shared events (also when it was not applied)
    events: int = 0  # shared events it was estimated from
    note: str = ""


@dataclasses.dataclass
class LogReport(Record):
    sources: List[SourceSummary]
    totals: Dict[str, Any]
    first_failure: Optional[FirstFailure]
    errors: List[ErrorGroup]
    warnings: List[ErrorGroup]
    timeline: List[TimelineStat]
    memory: List[MemoryFinding]
    anomalies: List[Anomaly]
    thresholds: Dict[str, float]
    filters: Dict[str, Any]
    notes: List[str] = dataclasses.field(default_factory=list)
    severity: str = "ok"  # ok | warning | error
    clocks: List[ClockOffset] = dataclasses.field(default_factory=list)  # per node, for merged summaries
    schema: str = SCHEMA

    @property
    def exit_code(self) -> int:
        """0 ran and found nothing severe, 1 found errors or anomalies."""
        return 1 if self.severity == "error" or self.anomalies else 0
