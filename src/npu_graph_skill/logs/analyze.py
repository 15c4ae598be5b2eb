"""`analyze_logs`: files, .gz, stdin and directories → a `LogReport` (E errors, T timeline, M memory,
anomalies, first failure across ranks); `reduce_for_diagnosis`: a big log → the few lines the
diagnosis should read.

Files, and byte ranges of big files, are scanned in parallel processes (`scan.py`); `collect.py` turns their results
into one machine's part; `finish` builds the report from the parts of one machine or, for `logs merge`, of many
(merge.py), in time order across ranks on one clock.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time
from collections import Counter, defaultdict
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.ingest import TextSource, resolve_sources
from npu_graph_skill.logs import scan as scanner
from npu_graph_skill.logs.formats import parse_time, rank_from_path
from npu_graph_skill.logs.model import (
    Anomaly,
    Consequence,
    ErrorGroup,
    FirstFailure,
    LogReport,
    MemoryFinding,
    SourceSummary,
    TimelineStat,
    Where,
)
from npu_graph_skill.logs.collect import CodeNames, Collected, SourcePart, collect, merge_groups, ts_key
from npu_graph_skill.logs.scan import ErrorAcc, Event, ScanTask, TaskResult

DEFAULT_THRESHOLDS = {
    "capture_s": 10.0,  # one graph capture longer than this is an anomaly (issue 3)
    "compile_s": 30.0,  # one compile step longer than this
    "replay_ratio": 3.0,  # replay spacing P99 > ratio × P50
    "idle_gap_s": 1.0,  # a gap between two replays longer than this is idle time, not jitter
}
SPLIT_BYTES = 16 << 20  # files above this are split into ranges for parallel scanning
PARALLEL_MIN_BYTES = 24 << 20  # below this in total, one process is faster than a pool
MAX_GROUPS_REPORTED = 200
MAX_CONSEQUENCES = 50


# --------------------------------------------------------------------------------------------
# Public functions.
# --------------------------------------------------------------------------------------------

def analyze_logs(paths: Sequence[str], since: Optional[str] = None, until: Optional[str] = None,
                 rank: Optional[int] = None, thresholds: Optional[Dict[str, float]] = None, context: int = 30,
                 jobs: Optional[int] = None, progress: Optional[Callable[[int, int], None]] = None,
                 sources: Optional[List[TextSource]] = None, summary_out: Optional[str] = None,
                 node: Optional[str] = None, **_ignored: Any) -> LogReport:
    """Scan logs and build the report.

    paths: files, .gz, directories (plog trees, per-rank folders) or `-` for stdin.
    since/until: times as printed in the logs (`2025-08-06 23:09:00`, `08-06 23:09:00`, `2025-08-06-23:09:00.000`).
    rank: keep only lines of this rank (from the line, else from the file/directory name).
    thresholds: overrides of DEFAULT_THRESHOLDS. jobs: worker processes (default: the idle CPUs, at most 8).
    progress: called with (bytes done, bytes total) as ranges finish.
    summary_out: also write this machine's summary there (summary.py), for `logs merge`; node: its name in the summary
    (default: the host name).
    """
    started = time.perf_counter()
    limits = dict(DEFAULT_THRESHOLDS)
    for key, value in (thresholds or {}).items():
        if key not in limits:
            raise UserError(f"unknown threshold {key!r}; known: {', '.join(sorted(limits))}")
        if not math.isfinite(float(value)):
            raise UserError(f"threshold {key}={value}: not a finite number")
        limits[key] = float(value)
    if summary_out is not None:
        node = node or default_node()
    jobs = jobs or default_jobs()
    sources = sources if sources is not None else resolve_sources(list(paths) or ["-"])
    _time_option("--since", since)  # checked here; each scan resolves a yearless time with its log's year
    _time_option("--until", until)
    tasks = plan_tasks(sources, jobs=jobs, context=context, since=since or None, until=until or None, only_rank=rank)
    results = run_tasks(tasks, jobs=jobs, progress=progress)
    part = collect(sources, tasks, results, node=node or "")
    scanned = time.perf_counter() - started
    report = finish([part], limits, context)
    report.totals["processes"] = worker_count(tasks, jobs, report.totals["bytes"])
    elapsed = time.perf_counter() - started
    report.totals["seconds"] = round(elapsed, 3)
    report.totals["mb_per_s"] = round(report.totals["bytes"] / 1e6 / elapsed, 1) if elapsed > 0 else None
    report.filters = {"since": since, "until": until, "rank": rank}
    if summary_out is not None:
        from npu_graph_skill.logs.summary import write_summary

        totals = {key: report.totals[key] for key in ("files", "bytes", "lines", "candidates")}
        totals["seconds"] = round(scanned, 3)
        write_summary(summary_out, part, {"context": context, "since": since, "until": until, "rank": rank,
                                          "thresholds": limits}, totals)
        report.totals["summary"] = summary_out
    return report


def default_node() -> str:
    """This machine's name in a summary: the host name (Slurm, pdsh, Ansible and Kubernetes pods all set one)."""
    import socket

    return socket.gethostname() or "localhost"


def reduce_for_diagnosis(sources: List[TextSource], context: int = 30,
                         report: Optional[LogReport] = None) -> Tuple[str, List[str]]:
    """For large inputs: the text the diagnosis should read — the root-cause window (lines around the first
    decisive error, prefixes kept verbatim) plus the first occurrence of every other distinct error signature,
    in input order — and notes saying what was reduced. `report`: the analysis of these sources, when the
    caller has it already."""
    if report is None:
        report = analyze_logs([], sources=sources, context=context)
    pieces: List[Tuple[int, int, List[str]]] = []  # (source order, line, lines)
    order = {source.name: i for i, source in enumerate(sources)}
    failure = report.first_failure
    window_range = None
    if failure is not None:
        source_i = order.get(failure.where.source, 0)
        window_range = (source_i, failure.window_first_line, failure.window_first_line + len(failure.window) - 1)
        pieces.append((source_i, failure.window_first_line, list(failure.window)))
    benign = 0
    for group in report.errors:
        if group.role == "benign":  # self-declared harmless: it would only mislead the diagnosis
            benign += 1
            continue
        source_i = order.get(group.first.source, 0)
        if window_range and source_i == window_range[0] and window_range[1] <= group.first.line <= window_range[2]:
            continue
        pieces.append((source_i, group.first.line, [group.first.text]))
    pieces.sort(key=lambda p: (p[0], p[1]))
    lines = [line for _, _, block in pieces for line in block]
    totals = report.totals
    notes = [f"read {totals['lines']:,} lines from {totals['files']} file{'s' if totals['files'] != 1 else ''}; "
             f"kept {len(lines):,}"
             + (f" (the {len(failure.window)} lines around the first decisive error"
                f"{'' if failure.rank is None else f' on rank {failure.rank}'}, and the first line of "
                f"{len(pieces) - 1} other error signature{'s' if len(pieces) != 2 else ''})" if failure else "")]
    if benign:
        notes.append(f"left out {benign} benign error signature{'s' if benign != 1 else ''} "
                     f"(messages torch_npu declares harmless, e.g. the allocator's retry)")
    notes.extend(report.notes)
    return "\n".join(lines), notes


# --------------------------------------------------------------------------------------------
# Planning and running the scan.
# --------------------------------------------------------------------------------------------

def default_jobs() -> int:
    """The CPUs that are idle (usable CPUs minus the 1-minute load average), at most 8: on a machine busy with other
    jobs, worker processes would only queue behind them and pay for forking and for sending their results back."""
    try:
        cpus = len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        idle = int(cpus - os.getloadavg()[0] + 0.5)
    except (AttributeError, OSError):
        idle = cpus
    return max(1, min(8, cpus, idle))


def plan_tasks(sources: List[TextSource], jobs: Optional[int] = None, context: int = 30, since: Optional[str] = None,
               until: Optional[str] = None, only_rank: Optional[int] = None) -> List[ScanTask]:
    jobs = jobs or default_jobs()
    split_bytes = SPLIT_BYTES
    tasks: List[ScanTask] = []
    for index, source in enumerate(sources):
        size, year = _size_and_year(source.path)  # one stat per file: a thousand rank files pay for nothing twice
        common = dict(index=index, name=source.name, path=source.path, year=year, size=size,
                      rank=rank_from_path(source.path or ""), context=context, since=since, until=until,
                      only_rank=only_rank, block_bytes=scanner.BLOCK_BYTES)
        if source.path is None or source.path.endswith(".gz") or jobs <= 1 or size <= split_bytes:
            tasks.append(ScanTask(**common))
            continue
        pieces = max(2, min(jobs * 4, math.ceil(size / split_bytes)))
        step = math.ceil(size / pieces)
        for start in range(0, size, step):
            tasks.append(ScanTask(start=start, end=min(size, start + step), **common))
    return tasks


def _size_and_year(path: Optional[str]) -> Tuple[int, int]:
    """(bytes, the year assumed for lines that print none: the file's modification year; stdin: 0 and this year)."""
    try:
        stat = os.stat(path) if path else None
    except OSError:
        stat = None
    stamp = stat.st_mtime if stat is not None else time.time()
    return (stat.st_size if stat is not None else 0), time.localtime(stamp).tm_year


def _task_bytes(task: ScanTask, sizes: Dict[int, int]) -> int:
    if task.end is not None:
        return task.end - task.start
    return sizes.get(task.index, 0)


def run_tasks(tasks: List[ScanTask], jobs: Optional[int] = None,
              progress: Optional[Callable[[int, int], None]] = None) -> List[TaskResult]:
    """Scan every task, in parallel processes when the input is big enough; results in task order."""
    jobs = jobs or default_jobs()
    sizes = {}
    for task in tasks:
        if task.path is not None and task.end is None:
            sizes[task.index] = task.size
    total = sum(_task_bytes(t, sizes) for t in tasks)
    done = 0
    if worker_count(tasks, jobs, total) == 1:
        results = []
        for task in tasks:
            results.append(scanner.scan_task(task))
            done += _task_bytes(task, sizes)
            if progress:
                progress(done, total)
        return results
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    order = sorted(range(len(tasks)), key=lambda i: -_task_bytes(tasks[i], sizes))
    pool = context.Pool(processes=min(jobs, len(tasks)), initializer=_ignore_sigint)
    by_position: Dict[int, TaskResult] = {}
    try:
        # a thousand small rank files: hand them out in batches, one round trip per batch (still 8 per worker at least)
        batch = max(1, len(tasks) // (min(jobs, len(tasks)) * 8))
        scanning = pool.imap_unordered(_scan_indexed, [(i, tasks[i]) for i in order], chunksize=batch)
        _warm_code_names()  # the parent only waits meanwhile: load the code tables the report names codes with
        for position, result in scanning:
            by_position[position] = result
            done += _task_bytes(tasks[position], sizes)
            if progress:
                progress(done, total)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    return [by_position[i] for i in range(len(tasks))]


def _warm_code_names() -> None:
    try:
        from npu_graph_skill.knowledge.codes import describe

        describe("107020")
    except Exception:  # noqa: BLE001 - the report works without names; it will say nothing more here
        pass


def worker_count(tasks: List[ScanTask], jobs: int, total: int) -> int:
    """Processes that scan `tasks`: one when the input is small, on stdin or a single piece."""
    if jobs <= 1 or len(tasks) == 1 or total < PARALLEL_MIN_BYTES or any(t.path is None for t in tasks):
        return 1
    return min(jobs, len(tasks))


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is handled once, by the parent


def _scan_indexed(item: Tuple[int, ScanTask]) -> Tuple[int, TaskResult]:
    position, task = item
    return position, scanner.scan_task(task)


def _time_option(name: str, value: Optional[str]) -> Optional[float]:
    if value is None or value == "":
        return None
    stamp = parse_time(value)
    if stamp is None:
        raise UserError(f"{name} {value!r}: not a time; use e.g. '2025-08-06 23:09:00' or '08-06 23:09:00'")
    return stamp


# --------------------------------------------------------------------------------------------
# The report: one machine's parts or several machines' parts, on one clock.
# --------------------------------------------------------------------------------------------

def fmt_ts(ts: Optional[float]) -> str:
    if ts is None or not math.isfinite(ts):
        return ""
    millis = int(round(ts * 1000))  # round, not truncate: 12:10.100 stays .100 through the float
    whole, ms = divmod(millis, 1000)
    tm = time.gmtime(whole)
    return "%04d-%02d-%02d %02d:%02d:%02d.%03d" % (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms)


class _Whole:
    """The parts of every machine as one input: sources numbered in part order, times moved onto one clock (each
    part's `offset`, the lead of its clock, subtracted)."""

    def __init__(self, parts: List[Collected], uncertainty: Optional[Dict[str, float]] = None):
        self.sources: List[SourcePart] = []
        self.nodes: List[str] = []
        self.notes: List[str] = []
        self.events: List[Event] = []
        self.replays: List[Any] = []
        self.windows: Dict[Tuple[int, int], List[str]] = {}
        self.window_before: Dict[Tuple[int, int], int] = {}
        self.uncertainty = uncertainty or {}
        self.replays_unsampled = self.dropped = self.candidates = self.oom_floods = 0
        accs: List[ErrorAcc] = []
        for part in parts:
            base = len(self.sources)
            shift = part.offset
            for source in part.sources:
                if base or shift:
                    source = dataclasses.replace(source, first_ts=_shifted(source.first_ts, shift),
                                                 last_ts=_shifted(source.last_ts, shift))
                self.sources.append(source)
                self.nodes.append(part.node)
            self.notes.extend(part.notes)
            self.dropped += part.dropped
            self.candidates += part.candidates
            self.oom_floods += part.oom_floods
            self.replays.extend(part.replays)
            self.replays_unsampled += part.replays_unsampled
            for (source, offset), lines in part.windows.items():
                self.windows[(source + base, offset)] = lines
                self.window_before[(source + base, offset)] = part.window_before[(source, offset)]
            if not base and not shift:
                self.events.extend(part.events)
                accs.extend(part.groups)
                continue
            self.events.extend(dataclasses.replace(e, source=e.source + base, ts=_shifted(e.ts, shift)) for e in part.events)
            for acc in part.groups:
                accs.append(dataclasses.replace(
                    acc, first=dataclasses.replace(acc.first, source=acc.first.source + base,
                                                   ts=_shifted(acc.first.ts, shift)),
                    last_ts=_shifted(acc.last_ts, shift),
                    per_rank={r: (_shifted(ts, shift), line, off, src + base, text)
                              for r, (ts, line, off, src, text) in acc.per_rank.items()},
                    last_by_rank={r: ts - shift for r, ts in acc.last_by_rank.items()}))
        self.groups = merge_groups(accs) if len(parts) > 1 else accs
        names = [s.name for s in self.sources]
        clash = {n for n, c in Counter(names).items() if c > 1}  # the same path on two nodes
        self.labels = [f"{node}:{name}" if name in clash and node else name for name, node in zip(names, self.nodes)]

    def where(self, event: Event, rank: Optional[int] = None) -> Where:
        return Where(source=self.sources[event.source].name, line=event.line, text=event.text,
                     rank=event.rank if rank is None else rank, time=event.time, node=self.nodes[event.source])


def _shifted(ts: Optional[float], shift: float) -> Optional[float]:
    return ts - shift if ts is not None and shift else ts


def build_report(sources: List[TextSource], tasks: List[ScanTask], results: List[TaskResult],
                 limits: Dict[str, float], context: int) -> LogReport:
    """The report of one machine's scan."""
    return finish([collect(sources, tasks, results)], limits, context)


def finish(parts: List[Collected], limits: Dict[str, float], context: int,
           uncertainty: Optional[Dict[str, float]] = None) -> LogReport:
    """The report of the union of `parts` (one machine's scan, or the summaries of many). `uncertainty`: node → how
    far off (s) its corrected clock may still be; ranks closer than that cannot be ordered."""
    whole = _Whole(parts, uncertainty)
    notes = list(whole.notes)
    if whole.dropped:
        notes.append(f"more than {scanner.MAX_GROUPS} distinct error/warning signatures in one part of the input: "
                     f"{whole.dropped:,} lines of later signatures were counted but not grouped")
    summaries = [SourceSummary(name=s.name, rank=s.rank, bytes=s.bytes, lines=s.lines, layouts=dict(s.layouts),
                               first_time=fmt_ts(s.first_ts), last_time=fmt_ts(s.last_ts), notes=list(s.notes), node=node)
                 for s, node in zip(whole.sources, whole.nodes)]
    groups = whole.groups
    code_names = CodeNames()
    errors = [_error_group(whole, acc, code_names) for acc in groups if acc.kind == "error"]
    warnings = _mark_notices([_error_group(whole, acc, code_names) for acc in groups if acc.kind == "warning"])
    role_order = {"decisive": 0, "consequence": 1, "benign": 2}
    errors.sort(key=lambda g: (role_order.get(g.role, 3), ts_key(g.first_ts), g.first.node, g.first.source, g.first.line))
    # the warnings frameworks print on every run last: they are not what went wrong
    warnings.sort(key=lambda g: (g.role == "notice", -g.count, ts_key(g.first_ts), g.first.node, g.first.source,
                                 g.first.line))
    error_lines = sum(g.count for g in errors)
    warning_lines = sum(g.count for g in warnings)
    signatures = len(errors)
    if len(errors) > MAX_GROUPS_REPORTED:
        notes.append(f"{len(errors)} distinct error signatures; the report lists the first {MAX_GROUPS_REPORTED}")
        errors = errors[:MAX_GROUPS_REPORTED]
    if len(warnings) > MAX_GROUPS_REPORTED:
        warnings = warnings[:MAX_GROUPS_REPORTED]
    first = _first_failure(whole, groups, code_names, context)
    timeline, anomalies = _timeline(whole, limits)
    memory = _memory(whole, groups)
    totals = {
        "files": len(whole.sources),
        "bytes": sum(s.bytes for s in whole.sources),
        "lines": sum(s.lines for s in whole.sources),
        "candidates": whole.candidates,
        "errors": error_lines,
        "error_signatures": signatures,
        "warnings": warning_lines,
        "notices": sum(g.count for g in warnings if g.role == "notice"),
        "uncounted_signature_lines": whole.dropped,
    }
    severity = "ok"
    if any(g.role != "notice" for g in warnings):
        severity = "warning"
    if any(g.role in ("decisive", "consequence") for g in errors):
        severity = "error"
    if any(m.kind == "oom" for m in memory):
        severity = "error"
    return LogReport(sources=summaries, totals=totals, first_failure=first, errors=errors, warnings=warnings,
                     timeline=timeline, memory=memory, anomalies=anomalies, thresholds=dict(limits), filters={},
                     notes=notes, severity=severity)


NOTICE_ID = "E-005"


def _mark_notices(warnings: List[ErrorGroup]) -> List[ErrorGroup]:
    """Warnings a framework prints routinely (the notices of knowledge/context_signs.yaml) get the role
    "notice": a log whose only warnings are notices is not a log with a problem."""
    if not warnings:
        return warnings  # nothing to compare: do not load the knowledge (start-up)
    from npu_graph_skill.diagnose.notices import notice_of
    from npu_graph_skill.knowledge.loader import load_knowledge

    signs = load_knowledge().signs
    for group in warnings:
        sign = notice_of(group.message, signs)
        if sign is not None:
            group.role, group.id, group.notice = "notice", NOTICE_ID, sign.id
    return warnings


def _error_group(whole: _Whole, acc: ErrorAcc, names: CodeNames) -> ErrorGroup:
    first = acc.first
    kind_id = {"decisive": "E-001", "consequence": "E-002", "benign": "E-003"}
    role = acc.role if acc.kind == "error" else "warning"
    ranks = sorted(r for r in acc.per_rank if r is not None)
    return ErrorGroup(
        id=kind_id.get(role, "E-004"), kind=acc.kind, role=role, signature=acc.signature.split("|", 1)[1],
        message=first.message, level=first.level, module=first.module, format=first.format, count=acc.count,
        first_time=fmt_ts(first.ts), last_time=fmt_ts(acc.last_ts), first_ts=first.ts, last_ts=acc.last_ts,
        ranks=ranks, sources=[whole.sources[first.source].name], first=whole.where(first),
        codes=[names.name(code) for code in first.codes])


# --------------------------------------------------------------------------------------------
# First failure across ranks.
# --------------------------------------------------------------------------------------------

def occurrences(groups: List[ErrorAcc], role: str) -> List[Tuple[float, int, int, Optional[int], ErrorAcc]]:
    """Each rank's first occurrence of each group of this role: (time, source, offset, rank, group), earliest first."""
    found = []
    for acc in groups:
        if acc.kind != "error" or acc.role != role:
            continue
        for rank, (ts, line, offset, source, _text) in acc.per_rank.items():
            found.append((ts_key(ts), source, offset, rank, acc))
    found.sort(key=lambda o: (o[0], o[1], o[2]))
    return found


def rank_firsts(found: List[Tuple[float, int, int, Optional[int], ErrorAcc]]) -> List[tuple]:
    """The earliest occurrence of each rank (rank-less ones left out), in time order."""
    seen = set()
    out = []
    for item in found:
        if item[3] is None or item[3] in seen:
            continue
        seen.add(item[3])
        out.append(item)
    return out


def _first_failure(whole: _Whole, groups: List[ErrorAcc], names: CodeNames, context: int) -> Optional[FirstFailure]:
    decisive = occurrences(groups, "decisive")
    only_consequences = not decisive
    consequential = occurrences(groups, "consequence")
    pool = decisive or consequential
    if not pool:
        return None
    ts, source, _, rank, acc = pool[0]
    event = _event_for(acc, rank)
    before, window = _window_for(whole, event)
    consequences: List[Consequence] = []
    also: List[Consequence] = []
    for other in consequential:
        if other[4] is acc and other[3] == rank:
            continue
        consequences.append(_consequence(whole, other, "HCCL / notify-wait / task-timeout errors follow a failure elsewhere"))
    if not only_consequences:
        for other in rank_firsts(decisive):
            if other[3] != rank:
                also.append(_consequence(whole, other, "a decisive error on another rank, later than the first one"))
    # Clocks of different nodes agree only within their uncertainty: a rank that failed within it cannot be ordered.
    node = whole.nodes[source]
    spread = whole.uncertainty.get(node, 0.0)
    close: List[Consequence] = []
    for other in rank_firsts(pool):
        if other[3] == rank:
            continue
        other_node = whole.nodes[other[1]]
        allowed = 0.0 if other_node == node else spread + whole.uncertainty.get(other_node, 0.0)
        if other[0] - ts > allowed:
            break
        close.append(_consequence(whole, other, f"{other[0] - ts:.3f} s later, within the {allowed:.3f} s the clocks "
                                                f"of the nodes may still differ by: the two cannot be ordered"))
    return FirstFailure(
        id="E-010", rank=rank, time=fmt_ts(event.ts), ts=event.ts, where=whole.where(event, rank), message=event.message,
        signature=acc.signature.split("|", 1)[1], codes=[names.name(c) for c in event.codes],
        only_consequences=only_consequences, consequences=consequences[:MAX_CONSEQUENCES], also_failed=also[:MAX_CONSEQUENCES],
        window_first_line=max(1, event.line - before), window=window, node=node, clock_uncertainty_s=round(spread, 6),
        too_close=close[:MAX_CONSEQUENCES])


def _event_for(acc: ErrorAcc, rank: Optional[int]) -> Event:
    ts, line, offset, source, text = acc.per_rank[rank]
    first = acc.first
    if source == first.source and offset == first.offset:
        return first
    return Event(source=source, line=line, offset=offset, ts=ts, rank=rank, pid=first.pid, level=first.level,
                 format=first.format, module=first.module, time=fmt_ts(ts), text=text, message=first.message,
                 codes=list(first.codes), role=first.role)


def _window_for(whole: _Whole, event: Event) -> Tuple[int, List[str]]:
    """(lines before the event, window lines) — the lines kept by the scanner around this occurrence."""
    key = (event.source, event.offset)
    window = whole.windows.get(key)
    if window is not None:
        return whole.window_before[key], window
    return 0, [event.text]


def _consequence(whole: _Whole, occurrence, why: str) -> Consequence:
    ts, source, offset, rank, acc = occurrence
    event = _event_for(acc, rank)
    return Consequence(rank=rank, time=fmt_ts(event.ts), where=whole.where(event, rank), why=why,
                       group=acc.signature.split("|", 1)[1])


# --------------------------------------------------------------------------------------------
# Timeline (T) and anomalies.
# --------------------------------------------------------------------------------------------

def _durations(events: List[Event], begin: str, end: str):
    """Pair begin/end markers per (source family, rank, pid): ({family: [(seconds, begin, end)]},
    {family: [begins that never ended]})."""
    open_: Dict[Tuple[str, Any, str, int], List[Event]] = defaultdict(list)
    out: Dict[str, List[Tuple[float, Event, Event]]] = defaultdict(list)
    for event in events:
        key = (event.family, event.rank, event.pid, event.source)
        if event.tag == begin:
            open_[key].append(event)
        elif event.tag == end and open_[key]:
            start = open_[key].pop()
            if start.ts is not None and event.ts is not None and event.ts >= start.ts:
                out[event.family].append((event.ts - start.ts, start, event))
    unfinished: Dict[str, List[Event]] = defaultdict(list)
    for (family, _, _, _), starts in open_.items():
        unfinished[family].extend(starts)
    return out, unfinished


def _stat(kind: str, finding_id: str, source: str, values: List[float], ranks: Iterable[Optional[int]],
          examples: List[Where], unit: str = "s", note: str = "") -> TimelineStat:
    return TimelineStat(id=finding_id, kind=kind, source=source, count=len(values), unit=unit,
                        total=round(math.fsum(values), 6) if values else None,
                        p50=round(scanner.percentile(values, 50), 6) if values else None,
                        p99=round(scanner.percentile(values, 99), 6) if values else None,
                        max=round(max(values), 6) if values else None,
                        ranks=sorted({r for r in ranks if r is not None}), examples=examples[:5], note=note)


def _timeline(whole: _Whole, limits: Dict[str, float]) -> Tuple[List[TimelineStat], List[Anomaly]]:
    events = sorted(whole.events, key=lambda e: (ts_key(e.ts), e.source, e.offset))
    stats: List[TimelineStat] = []
    anomalies: List[Anomaly] = []

    captures, unfinished = _durations(events, "capture_begin", "capture_end")
    if captures or unfinished:
        family = max(set(captures) | set(unfinished), key=lambda f: (len(captures.get(f, [])), f == "cpp"))
        pairs = captures.get(family, [])
        left = sorted(unfinished.get(family, []), key=lambda e: (ts_key(e.ts), e.source, e.offset))
        slow = sorted((p for p in pairs if p[0] > limits["capture_s"]), key=lambda p: -p[0])
        note = ""
        if left:  # a capture under way when the log stops or fails is where a capture error happened
            note = (f"{len(left)} capture(s) began and never ended, first at "
                    f"{whole.labels[left[0].source]}:{left[0].line}")
        stats.append(_stat("capture", "T-001", family, [p[0] for p in pairs], [p[1].rank for p in pairs] + [e.rank for e in left],
                           [whole.where(e) for e in left] + [whole.where(p[1]) for p in (slow or pairs)], note=note))
        stats[-1].count = len(pairs)
        stats[-1].unfinished = len(left)
        for seconds, begin, end in slow[:20]:
            anomalies.append(Anomaly(
                id="T-101", kind="slow_capture", value=round(seconds, 3), threshold=limits["capture_s"], unit="s",
                rank=begin.rank, where=whole.where(begin),
                message={"en": f"graph capture took {seconds:.1f} s (> {limits['capture_s']:g} s), from line {begin.line} to {end.line}",
                         "zh": f"图捕获耗时 {seconds:.1f} 秒（阈值 {limits['capture_s']:g} 秒），第 {begin.line} 行到第 {end.line} 行"}))

    updates, _ = _durations(events, "update_begin", "update_end")
    if updates:
        family = max(updates, key=lambda f: len(updates[f]))
        pairs = updates[family]
        stats.append(_stat("update", "T-003", family, [p[0] for p in pairs], (p[1].rank for p in pairs),
                           [whole.where(p[1]) for p in pairs]))
    point_updates = [e for e in events if e.tag == "update"]
    if point_updates:
        stats.append(_stat("update_calls", "T-003", point_updates[0].family, [], (e.rank for e in point_updates),
                           [whole.where(e) for e in point_updates], unit="count",
                           note="graph parameter updates announced; the logs carry no end marker, so no durations"))
        stats[-1].count = len(point_updates)

    compiles = [e for e in events if e.tag in ("compile", "compile_total")]
    if compiles:
        steps = [e for e in compiles if e.tag == "compile"] or compiles
        stats.append(_stat("compile", "T-004", "framework", [e.value for e in steps], (e.rank for e in steps),
                           [whole.where(e) for e in steps]))
        for event in sorted(compiles, key=lambda e: -e.value):
            if event.value > limits["compile_s"]:
                anomalies.append(Anomaly(
                    id="T-102", kind="slow_compile", value=event.value, threshold=limits["compile_s"], unit="s",
                    rank=event.rank, where=whole.where(event),
                    message={"en": f"compile took {event.value:.1f} s (> {limits['compile_s']:g} s)",
                             "zh": f"编译耗时 {event.value:.1f} 秒（阈值 {limits['compile_s']:g} 秒）"}))

    summaries = [e for e in events if e.tag == "capture_summary"]
    if summaries:
        stats.append(_stat("capture_summary", "T-005", summaries[0].family, [e.value for e in summaries],
                           (e.rank for e in summaries), [whole.where(e) for e in summaries],
                           note="total capture time the framework reports for all its graphs"))

    replay = _replay_stat(whole, limits)
    if replay is not None:
        stat, anomaly = replay
        stats.append(stat)
        if anomaly is not None:
            anomalies.append(anomaly)

    fallbacks = [e for e in events if e.tag == "fallback"]
    if fallbacks:
        stat = _stat("fallback", "T-006", "graph_tree", [], (e.rank for e in fallbacks), [whole.where(e) for e in fallbacks],
                     unit="count", note="graph mode was skipped for these graphs: they ran eagerly")
        stat.count = len(fallbacks)
        stats.append(stat)
    return stats, anomalies


def _replay_stat(whole: _Whole, limits: Dict[str, float]):
    by_family: Dict[str, List] = defaultdict(list)
    for acc in whole.replays:
        by_family[acc.family].append(acc)
    if not by_family:
        return None
    family = "npugraph" if "npugraph" in by_family else "acl"
    accs = by_family[family]
    count = sum(a.count for a in accs) + (whole.replays_unsampled if family == "npugraph" else 0)
    idle_gap = limits["idle_gap_s"]
    gaps = [g for a in accs for g in a.intervals if g <= idle_gap]
    idle = sum(1 for a in accs for g in a.intervals if g > idle_gap)
    ranks = [a.rank for a in accs]
    stat = _stat("replay_interval", "T-002", family, gaps, ranks, [],
                 note=f"gaps between consecutive replays of one process; {idle} gaps > {idle_gap:g} s counted as idle")
    stat.count = count
    anomaly = None
    if len(gaps) >= 20 and stat.p50 and stat.p99 is not None and stat.p99 > limits["replay_ratio"] * stat.p50:
        ratio = stat.p99 / stat.p50
        anomaly = Anomaly(
            id="T-103", kind="replay_jitter", value=round(ratio, 2), threshold=limits["replay_ratio"], unit="x",
            rank=None, where=None,
            message={"en": f"replay spacing P99 {stat.p99 * 1e3:.2f} ms is {ratio:.1f}x its P50 {stat.p50 * 1e3:.2f} ms "
                           f"(> {limits['replay_ratio']:g}x): host-side stalls between replays",
                     "zh": f"重放间隔 P99 {stat.p99 * 1e3:.2f} 毫秒是 P50 {stat.p50 * 1e3:.2f} 毫秒的 {ratio:.1f} 倍"
                           f"（阈值 {limits['replay_ratio']:g} 倍）：重放之间存在主机侧停顿"})
    return stat, anomaly


# --------------------------------------------------------------------------------------------
# Memory (M).
# --------------------------------------------------------------------------------------------

def _memory(whole: _Whole, groups: List[ErrorAcc]) -> List[MemoryFinding]:
    findings: List[MemoryFinding] = []
    events = whole.events
    ooms = sorted((e for e in events if e.tag == "oom"), key=lambda e: (ts_key(e.ts), e.source, e.offset))
    if ooms:
        findings.append(MemoryFinding(id="M-001", kind="oom", count=len(ooms) + whole.oom_floods,
                                      values={"codes": sorted({c for e in ooms for c in e.codes})},
                                      ranks=sorted({e.rank for e in ooms if e.rank is not None}),
                                      examples=[whole.where(e) for e in ooms[:5]]))
    peaks = [(i, s) for i, s in enumerate(whole.sources) if s.alloc_peak is not None]
    if peaks:
        values = {whole.labels[i]: {"peak_reserved_bytes": s.alloc_peak[0], "peak_allocated_bytes": s.alloc_peak[1],
                                    "peak_reserved_gib": round(s.alloc_peak[0] / 2 ** 30, 3),
                                    "peak_allocated_gib": round(s.alloc_peak[1] / 2 ** 30, 3)} for i, s in peaks}
        findings.append(MemoryFinding(id="M-002", kind="allocator_peak", count=sum(s.alloc_lines for _, s in peaks),
                                      values=values, ranks=sorted({s.rank for _, s in peaks if s.rank is not None})))
    summaries = [e for e in events if e.tag == "capture_summary" and e.extra == e.extra]  # extra is NaN when absent
    if summaries:
        summaries.sort(key=lambda e: (ts_key(e.ts), e.source, e.offset))
        findings.append(MemoryFinding(id="M-003", kind="capture_memory", count=len(summaries),
                                      values={"max_gib": max(e.extra for e in summaries),
                                              "per_line_gib": [e.extra for e in summaries][:64]},
                                      ranks=sorted({e.rank for e in summaries if e.rank is not None}),
                                      examples=[whole.where(e) for e in summaries[:5]]))
    from npu_graph_skill.logs.families import avail_after_capture

    avail = [(avail_after_capture(e.message), e) for e in events if e.tag == "capture_summary" and "avail mem=" in e.message]
    avail = [(v, e) for v, e in avail if v is not None]
    if avail:
        avail.sort(key=lambda p: (p[0], ts_key(p[1].ts), p[1].source, p[1].offset))
        findings.append(MemoryFinding(id="M-004", kind="free_after_capture", count=len(avail),
                                      values={"min_gib": avail[0][0]},
                                      ranks=sorted({e.rank for _, e in avail if e.rank is not None}),
                                      examples=[whole.where(e) for _, e in avail[:5]]))
    retries = [acc for acc in groups if "existing pool failed" in acc.first.message]
    if retries:
        earliest = min(retries, key=lambda a: (ts_key(a.first.ts), a.first.source, a.first.offset))
        findings.append(MemoryFinding(id="M-005", kind="allocator_retry", count=sum(a.count for a in retries),
                                      ranks=sorted({r for a in retries for r in a.per_rank if r is not None}),
                                      examples=[whole.where(earliest.first)]))
    return findings
