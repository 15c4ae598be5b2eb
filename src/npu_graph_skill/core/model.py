"""The shared vocabulary: phases, layers and the records every capability passes around.

Only the standard library here: this module is imported on every start-up.
"""
from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, Dict, List, Optional


class Phase(str, Enum):
    """Where in the graph lifecycle a failure happens."""

    CAPTURE = "capture"
    REPLAY = "replay"
    MEMORY = "memory"
    UPDATE = "update"
    COMPILE = "compile"
    ENVIRONMENT = "environment"
    UNKNOWN = "unknown"

    @classmethod
    def parse(cls, value: str) -> "Phase":
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            return cls.UNKNOWN


class Layer(str, Enum):
    """The four layers a graph-mode call crosses, top to bottom."""

    L1 = "L1"  # Python API: torch_npu/npu/graphs.py, _graph_tree.py, handlers; the user's and framework's code
    L2 = "L2"  # C++ core: torch_npu/csrc (NPUGraph.cpp, allocator, generator)
    L3 = "L3"  # operator adaptation: op-plugin, aclnn vs aclop, custom kernels
    L4 = "L4"  # ACL/CANN runtime, driver, HCCL

    @classmethod
    def parse(cls, value: str) -> Optional["Layer"]:
        text = str(value or "").strip().upper()[:2]
        return cls(text) if text in cls._value2member_map_ else None


LAYER_NAMES = {
    "L1": {"en": "Python API / user & framework code", "zh": "Python API / 用户与框架代码"},
    "L2": {"en": "torch_npu C++ core", "zh": "torch_npu C++ 核心"},
    "L3": {"en": "operator adaptation (op-plugin / aclnn)", "zh": "算子适配层（op-plugin / aclnn）"},
    "L4": {"en": "ACL / CANN runtime, driver, HCCL", "zh": "ACL / CANN 运行时、驱动、HCCL"},
}

# Where a fix goes. "framework" is the serving/compiler framework driving graph mode
# (vLLM-Ascend, SGLang, torchair ...), apart from the user's own script.
FIX_IN = ("user_code", "framework", "torch_npu", "op_plugin", "cann_driver", "configuration")

LANGS = ("en", "zh")


def to_plain(value: Any) -> Any:
    """Dataclasses, enums, tuples → JSON-ready values (recursively)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in value]
    return value


class Record:
    """Mixin: `to_dict()` for every result dataclass."""

    def to_dict(self) -> Dict[str, Any]:
        return to_plain(self)


# --------------------------------------------------------------------------------------------
# Evidence: what was extracted from a pasted error or a log.
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Frame(Record):
    """One Python traceback frame."""

    file: str
    line: int
    function: str
    code: str = ""
    input_line: int = 0  # 1-based line in the (cleaned) input


@dataclasses.dataclass
class ExceptionRecord(Record):
    """`RuntimeError: ...` and friends, in the order they appear (chained tracebacks keep order)."""

    type: str
    message: str
    input_line: int = 0


@dataclasses.dataclass
class RaiseSite(Record):
    """A C++ (or CANN) location that raised: `func:file:line NPU function error`, `[FUNC:..][FILE:..][LINE:..]`,
    `Exception raised from f at file:line`, `[W file:line] Warning`."""

    file: str
    line: int
    function: str = ""
    kind: str = ""  # npu_check | cpp_exception | cann | warning | assert
    call: str = ""  # the stringified ACL call of NPU_CHECK_ERROR, if any
    input_line: int = 0


@dataclasses.dataclass
class CodeMention(Record):
    """An error code seen in the input, normalised (`107027`, `EE9999`, `ERR00100`, `0x7020023`)."""

    code: str
    kind: str  # acl | ecode | pta | inner | hccl | cuda
    input_line: int = 0
    context: str = ""  # how it appeared: "error code is", "runtime result =", "ErrCode=" ...


@dataclasses.dataclass
class LogEvent(Record):
    """A parsed log line that matters (error/warning level, or a graph lifecycle marker)."""

    input_line: int
    format: str
    level: str = ""
    time: str = ""
    module: str = ""
    pid: str = ""
    rank: Optional[int] = None
    message: str = ""


@dataclasses.dataclass
class Evidence(Record):
    """Everything extracted from one input, with 1-based line numbers into `lines`."""

    lines: List[str]
    exceptions: List[ExceptionRecord] = dataclasses.field(default_factory=list)
    frames: List[Frame] = dataclasses.field(default_factory=list)
    raise_sites: List[RaiseSite] = dataclasses.field(default_factory=list)
    codes: List[CodeMention] = dataclasses.field(default_factory=list)
    apis: Dict[str, int] = dataclasses.field(default_factory=dict)  # ACL API name → first input line
    versions: Dict[str, str] = dataclasses.field(default_factory=dict)
    hardware: List[str] = dataclasses.field(default_factory=list)
    env: Dict[str, str] = dataclasses.field(default_factory=dict)  # variables set: ASCEND_LAUNCH_BLOCKING=1
    settings: Dict[str, str] = dataclasses.field(default_factory=dict)  # options and config keys: cudagraph_mode=FULL
    log_events: List[LogEvent] = dataclasses.field(default_factory=list)
    ranks: List[int] = dataclasses.field(default_factory=list)
    routine: List[int] = dataclasses.field(default_factory=list)  # lines logged at INFO / DEBUG level
    notes: List[str] = dataclasses.field(default_factory=list)  # what was skipped or truncated

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def code_set(self) -> set:
        return {c.code for c in self.codes}


# --------------------------------------------------------------------------------------------
# Findings and reports.
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Anchor(Record):
    """A place in a source tree: `Ascend/pytorch torch_npu/csrc/core/npu/NPUGraph.cpp:270-274@master`."""

    repo: str
    path: str
    line: str  # "270" or "270-274"
    version: str
    note: str = ""

    def __str__(self) -> str:
        return f"{self.repo} {self.path}:{self.line}@{self.version}"


@dataclasses.dataclass
class Candidate(Record):
    """A ranked explanation: a known pattern, a recorded case or a message of the torch_npu table."""

    id: str
    title: str
    score: float
    phase: str = ""
    kind: str = "pattern"  # pattern | case | message
    evidence: List[str] = dataclasses.field(default_factory=list)  # quoted input lines that matched
    matched: List[str] = dataclasses.field(default_factory=list)  # which matchers fired (for --verbose)


@dataclasses.dataclass
class MissingMaterial(Record):
    """Something the diagnosis needs and the input lacks, with how to collect it."""

    what: str
    how: str


@dataclasses.dataclass
class Diagnosis(Record):
    """The four-section report. Its `to_dict()` is the JSON contract other faces rely on."""

    lang: str
    error: str  # the decisive error line, verbatim
    phase: str
    layer: str  # where it was detected
    root_layer: str  # where the cause lies
    fix_in: str
    confidence: float
    novel: bool
    candidates: List[Candidate]
    root_cause: Dict[str, str]  # direct, trigger, scope
    fix: Dict[str, Any]  # short_term, long_term, locations
    verification: List[str]
    missing: List[MissingMaterial]
    anchors: List[str]
    drill_down: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    consequences: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    pattern_stub: Optional[Dict[str, Any]] = None
    # public reports like this one: {id, url, title, phase, patterns, fix, concluded, score} (diagnose/reference.py)
    similar_reports: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    # with no pattern matched: other phases whose evidence weighs at least half the decided one's
    other_phases: List[str] = dataclasses.field(default_factory=list)
    evidence_summary: Dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = "npu-graph-skill/diagnosis/1"
