"""The records of a run: what `npu-graph run --json` prints and what `run.json` in the folder holds
(schema npu-graph-skill/run/1), the graph-vs-eager comparison, a bundle's re-diagnosis and a pack."""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.model import Record

RUN_SCHEMA = "npu-graph-skill/run/1"


@dataclasses.dataclass
class EagerResult(Record):
    """The same command with graph mode off, and whether the failure is graph-specific."""

    command: List[str]
    env: Dict[str, str]  # what --eager set
    exit_status: int
    ended_by: str
    error: str  # its decisive error, if any
    verdict: str  # graph_specific | not_graph_specific | fails_differently | inconclusive
    summary: Dict[str, str]  # en, zh
    folder: str = "eager"


@dataclasses.dataclass
class RunResult(Record):
    """One run: the command, how it ended, what was switched on and collected, the diagnosis."""

    command: List[str]
    command_line: str
    cwd: str
    started: str  # local time, ISO 8601
    duration_s: float
    status: str  # passed | failed
    exit_status: int  # the command's, as a shell reports it (128 + signal when killed)
    signal: Optional[str]
    ended_by: str  # exit | signal | interrupted | hang
    folder: Optional[str]  # the run folder; None once removed (success without --keep)
    archive: Optional[str] = None  # the .tar.gz beside it
    lang: str = "en"
    switches: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    installed: Dict[str, Any] = dataclasses.field(default_factory=dict)
    versions: Dict[str, Any] = dataclasses.field(default_factory=dict)  # from `npu-graph env`
    output: Dict[str, Any] = dataclasses.field(default_factory=dict)  # bytes, lines, dropped_bytes ...
    plogs: List[str] = dataclasses.field(default_factory=list)  # paths inside the folder
    first_failure: Optional[Dict[str, Any]] = None  # across ranks (log analyzer)
    decisive_live: Optional[str] = None  # the first decisive error seen while the command ran
    forwarded: List[str] = dataclasses.field(default_factory=list)  # signals forwarded to the job
    leftovers: List[Dict[str, Any]] = dataclasses.field(default_factory=list)  # still running, left alone
    killed: List[Dict[str, Any]] = dataclasses.field(default_factory=list)  # killed after a stop
    diagnosis: Optional[Dict[str, Any]] = None
    eager: Optional[Dict[str, Any]] = None
    redactions: Dict[str, int] = dataclasses.field(default_factory=dict)  # what the archive had removed
    redacted: bool = True
    files: List[str] = dataclasses.field(default_factory=list)  # what the folder holds
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = RUN_SCHEMA


@dataclasses.dataclass
class BundleReport(Record):
    """A bundle folder diagnosed again (`npu-graph bundle DIR`, the MCP `run_bundle` tool)."""

    folder: str
    run: Dict[str, Any]  # its run.json
    diagnosis: Optional[Dict[str, Any]]
    first_failure: Optional[Dict[str, Any]]
    inputs: List[str]  # the files the diagnosis read
    written: List[str] = dataclasses.field(default_factory=list)
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = "npu-graph-skill/bundle/1"


@dataclasses.dataclass
class PackResult(Record):
    archive: str
    files: int
    bytes: int
    redacted: bool
    redactions: Dict[str, int]
    schema: str = "npu-graph-skill/bundle-pack/1"
