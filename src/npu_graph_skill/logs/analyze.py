"""`analyze_logs`: files, .gz, stdin and directories → a `LogReport` (E errors, T timeline, M memory,
anomalies, first failure across ranks); `reduce_for_diagnosis`: a big log → the few lines the
diagnosis should read.

Files, and byte ranges of big files, are scanned in parallel processes (`scan.py`); their results are
merged here, in time order across ranks.
"""
from __future__ import annotations

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
    CodeName,
    Consequence,
    ErrorGroup,
    FirstFailure,
    LogReport,
    MemoryFinding,
    SourceSummary,
    TimelineStat,
    Where,
)
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
                 sources: Optional[List[TextSource]] = None, **_ignored: Any) -> LogReport:
    """Scan logs and build the report.

    paths: files, .gz, directories (plog trees, per-rank folders) or `-` for stdin.
    since/until: times as printed in the logs (`2025-08-06 23:09:00`, `08-06 23:09:00`, `2025-08-06-23:09:00.000`).
    rank: keep only lines of this rank (from the line, else from the file/directory name).
    thresholds: overrides of DEFAULT_THRESHOLDS. jobs: worker processes (default: CPUs, at most 8).
    progress: called with (bytes done, bytes total) as ranges finish.
    """
    started = time.perf_counter()
    limits = dict(DEFAULT_THRESHOLDS)
    for key, value in (thresholds or {}).items():
        if key not in limits:
            raise UserError(f"unknown threshold {key!r}; known: {', '.join(sorted(limits))}")
        limits[key] = float(value)
    sources = sources if sources is not None else resolve_sources(list(paths) or ["-"])
    _time_option("--since", since)  # checked here; each scan resolves a yearless time with its log's year
    _time_option("--until", until)
    tasks = plan_tasks(sources, jobs=jobs, context=context, since=since or None, until=until or None, only_rank=rank)
    results = run_tasks(tasks, jobs=jobs, progress=progress)
    report = build_report(sources, tasks, results, limits, context)
    report.totals["processes"] = worker_count(tasks, jobs or default_jobs(), report.totals["bytes"])
    elapsed = time.perf_counter() - started
    report.totals["seconds"] = round(elapsed, 3)
    report.totals["mb_per_s"] = round(report.totals["bytes"] / 1e6 / elapsed, 1) if elapsed > 0 else None
    report.filters = {"since": since, "until": until, "rank": rank}
    return report


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
    try:
        cpus = len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus))


def plan_tasks(sources: List[TextSource], jobs: Optional[int] = None, context: int = 30, since: Optional[str] = None,
               until: Optional[str] = None, only_rank: Optional[int] = None) -> List[ScanTask]:
    jobs = jobs or default_jobs()
    split_bytes = SPLIT_BYTES
    tasks: List[ScanTask] = []
    for index, source in enumerate(sources):
        common = dict(index=index, name=source.name, path=source.path, year=scanner.file_year(source.path),
                      rank=rank_from_path(source.path or ""), context=context, since=since, until=until,
                      only_rank=only_rank, block_bytes=scanner.BLOCK_BYTES)
        size = source.size
        if source.path is None or source.path.endswith(".gz") or jobs <= 1 or size <= split_bytes:
            tasks.append(ScanTask(**common))
            continue
        pieces = max(2, min(jobs * 4, math.ceil(size / split_bytes)))
        step = math.ceil(size / pieces)
        for start in range(0, size, step):
            tasks.append(ScanTask(start=start, end=min(size, start + step), **common))
    return tasks


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
            try:
                sizes[task.index] = os.path.getsize(task.path)
            except OSError:
                sizes[task.index] = 0
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
        for position, result in pool.imap_unordered(_scan_indexed, [(i, tasks[i]) for i in order]):
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
# Merging and the report.
# --------------------------------------------------------------------------------------------

def fmt_ts(ts: Optional[float]) -> str:
    if ts is None or not math.isfinite(ts):
        return ""
    millis = int(round(ts * 1000))  # round, not truncate: 12:10.100 stays .100 through the float
    whole, ms = divmod(millis, 1000)
    tm = time.gmtime(whole)
    return "%04d-%02d-%02d %02d:%02d:%02d.%03d" % (tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms)


class _Merged:
    """Results of all tasks with line numbers made global per source."""

    def __init__(self, sources: List[TextSource], tasks: List[ScanTask], results: List[TaskResult]):
        self.sources = sources
        self.tasks = tasks
        self.results = results
        base: Dict[int, int] = defaultdict(int)
        # the tasks of one source are contiguous ranges: number their lines in start order
        ordered = sorted(range(len(tasks)), key=lambda i: (tasks[i].index, tasks[i].start))
        self.line_base = [0] * len(tasks)
        for i in ordered:
            self.line_base[i] = base[tasks[i].index]
            base[tasks[i].index] += results[i].lines
        self.lines_per_source = dict(base)

    def where(self, event: Event, rank: Optional[int] = None) -> Where:
        return Where(source=self.sources[event.source].name, line=event.line, text=event.text,
                     rank=event.rank if rank is None else rank, time=event.time)


def _fix_lines(merged: _Merged) -> None:
    for i, result in enumerate(merged.results):
        base = merged.line_base[i]
        if not base:
            continue
        for acc in result.errors.values():
            acc.first.line += base
            acc.last_line += base
            acc.per_rank = {r: (ts, line + base, off, src, text) for r, (ts, line, off, src, text) in acc.per_rank.items()}
        for event in result.timeline:
            event.line += base
        for window in result.windows.values():
            window.line += base


def build_report(sources: List[TextSource], tasks: List[ScanTask], results: List[TaskResult],
                 limits: Dict[str, float], context: int) -> LogReport:
    merged = _Merged(sources, tasks, results)
    _fix_lines(merged)
    notes: List[str] = [note for source in sources for note in source.notes]
    for result in results:
        notes.extend(n for n in result.notes if "distinct error signatures" not in n)
    dropped = sum(r.dropped_signatures for r in results)
    if dropped:
        notes.append(f"more than {scanner.MAX_GROUPS} distinct error/warning signatures in one part of the input: "
                     f"{dropped:,} lines of later signatures were counted but not grouped")
    summaries = _source_summaries(merged)
    _ranks_from_other_files(tasks, results)
    groups = _merge_groups(results)
    _resolve_ranks(tasks, results, groups)
    code_names = _CodeNames()
    for acc in groups:  # the knowledge base knows codes that only ever follow an earlier fault (107020, 507011, EI0002 ...)
        if acc.kind == "error" and acc.role == "decisive" and any(code_names.role(c) == "consequence" for c in acc.first.codes):
            acc.role = "consequence"
    errors = [_error_group(merged, acc, code_names) for acc in groups if acc.kind == "error"]
    warnings = [_error_group(merged, acc, code_names) for acc in groups if acc.kind == "warning"]
    role_order = {"decisive": 0, "consequence": 1, "benign": 2}
    errors.sort(key=lambda g: (role_order.get(g.role, 3), _ts_key(g.first_ts), g.first.source, g.first.line))
    warnings.sort(key=lambda g: (-g.count, _ts_key(g.first_ts)))
    error_lines = sum(g.count for g in errors)
    warning_lines = sum(g.count for g in warnings)
    signatures = len(errors)
    if len(errors) > MAX_GROUPS_REPORTED:
        notes.append(f"{len(errors)} distinct error signatures; the report lists the first {MAX_GROUPS_REPORTED}")
        errors = errors[:MAX_GROUPS_REPORTED]
    if len(warnings) > MAX_GROUPS_REPORTED:
        warnings = warnings[:MAX_GROUPS_REPORTED]
    first = _first_failure(merged, groups, code_names, context)
    timeline, anomalies = _timeline(merged, limits)
    memory = _memory(merged)
    total_bytes = sum(s.size for s in sources if s.path) or sum(r.bytes_read for r in results)
    totals = {
        "files": len(sources),
        "bytes": total_bytes,
        "lines": sum(r.lines for r in results),
        "candidates": sum(r.candidates for r in results),
        "errors": error_lines,
        "error_signatures": signatures,
        "warnings": warning_lines,
        "uncounted_signature_lines": sum(r.dropped_signatures for r in results),
    }
    severity = "ok"
    if warnings:
        severity = "warning"
    if any(g.role in ("decisive", "consequence") for g in errors):
        severity = "error"
    if any(m.kind == "oom" for m in memory):
        severity = "error"
    return LogReport(sources=summaries, totals=totals, first_failure=first, errors=errors, warnings=warnings,
                     timeline=timeline, memory=memory, anomalies=anomalies, thresholds=dict(limits), filters={},
                     notes=notes, severity=severity)


def _ts_key(ts: Optional[float]) -> float:
    return ts if ts is not None else math.inf


def _source_summaries(merged: _Merged) -> List[SourceSummary]:
    out = []
    for index, source in enumerate(merged.sources):
        parts = [(t, r) for t, r in zip(merged.tasks, merged.results) if t.index == index]
        layouts: Counter = Counter()
        first_ts = last_ts = None
        notes: List[str] = []
        for task, result in parts:
            layouts.update(result.census)
            layouts.update(result.layouts)
            if result.first_ts is not None and (first_ts is None or result.first_ts < first_ts):
                first_ts = result.first_ts
            if result.last_ts is not None and (last_ts is None or result.last_ts > last_ts):
                last_ts = result.last_ts
            notes.extend(result.notes)
        layouts.pop("text", None) if len(layouts) > 1 else None
        out.append(SourceSummary(name=source.name, rank=parts[0][0].rank if parts else None,
                                 bytes=source.size if source.path else sum(r.bytes_read for _, r in parts),
                                 lines=merged.lines_per_source.get(index, 0), layouts=dict(layouts.most_common()),
                                 first_time=fmt_ts(first_ts), last_time=fmt_ts(last_ts), notes=notes))
    return out


def _merge_groups(results: List[TaskResult]) -> List[ErrorAcc]:
    merged: Dict[str, ErrorAcc] = {}
    for result in results:
        for sig, acc in result.errors.items():
            into = merged.get(sig)
            if into is None:
                merged[sig] = ErrorAcc(signature=sig, kind=acc.kind, role=acc.role, first=acc.first, count=acc.count,
                                       last_ts=acc.last_ts, last_line=acc.last_line, per_rank=dict(acc.per_rank))
                continue
            into.count += acc.count
            if _before(acc.first, into.first):
                into.first = acc.first
            if acc.last_ts is not None and (into.last_ts is None or acc.last_ts > into.last_ts):
                into.last_ts = acc.last_ts
            for rank, seen in acc.per_rank.items():
                have = into.per_rank.get(rank)
                if have is None or _ts_key(seen[0]) < _ts_key(have[0]):
                    into.per_rank[rank] = seen
    return list(merged.values())


def _ranks_from_other_files(tasks: List[ScanTask], results: List[TaskResult]) -> None:
    """A file that never prints a rank next to its pid (a plog-PID file) takes the rank other files print
    next to that pid: one job's plogs beside the output of its ranks (the folder of `npu-graph run`). Done
    per file, before the merge, because each file is one process; a pid given different ranks elsewhere
    (logs of several machines) is left without one."""
    anywhere: Dict[str, Optional[int]] = {}
    for result in results:
        for pid, rank in result.pid_ranks.items():
            anywhere[pid] = rank if anywhere.get(pid, rank) == rank else None
    if not anywhere:
        return
    for task, result in zip(tasks, results):
        if task.rank is not None:
            continue
        for acc in result.errors.values():
            pid = acc.first.pid
            if None not in acc.per_rank or not pid or pid in result.pid_ranks or anywhere.get(pid) is None:
                continue
            rank = anywhere[pid]
            seen = acc.per_rank.pop(None)
            have = acc.per_rank.get(rank)
            if have is None or _ts_key(seen[0]) < _ts_key(have[0]):
                acc.per_rank[rank] = seen
            if acc.first.rank is None:
                acc.first.rank = rank


def _resolve_ranks(tasks: List[ScanTask], results: List[TaskResult], groups: List[ErrorAcc]) -> None:
    """Give rank-less occurrences (plog lines print a pid, not a rank) the rank that other lines of the same
    file print next to that pid (`[rank:0]:[29930]`, `(Worker_TP0 pid=29930)`)."""
    pid_ranks: Dict[Tuple[int, str], int] = {}
    for task, result in zip(tasks, results):
        for pid, rank in result.pid_ranks.items():
            pid_ranks.setdefault((task.index, pid), rank)
    if not pid_ranks:
        return
    for acc in groups:
        if None not in acc.per_rank or not acc.first.pid:
            continue
        rank = pid_ranks.get((acc.first.source, acc.first.pid))
        if rank is None:
            continue
        seen = acc.per_rank.pop(None)
        have = acc.per_rank.get(rank)
        if have is None or _ts_key(seen[0]) < _ts_key(have[0]):
            acc.per_rank[rank] = seen
        if acc.first.rank is None:
            acc.first.rank = rank


def _before(a: Event, b: Event) -> bool:
    return (_ts_key(a.ts), a.source, a.offset) < (_ts_key(b.ts), b.source, b.offset)


def _error_group(merged: _Merged, acc: ErrorAcc, names: "_CodeNames") -> ErrorGroup:
    first = acc.first
    kind_id = {"decisive": "E-001", "consequence": "E-002", "benign": "E-003"}
    role = acc.role if acc.kind == "error" else "warning"
    ranks = sorted(r for r in acc.per_rank if r is not None)
    return ErrorGroup(
        id=kind_id.get(role, "E-004"), kind=acc.kind, role=role, signature=acc.signature.split("|", 1)[1],
        message=first.message, level=first.level, module=first.module, format=first.format, count=acc.count,
        first_time=fmt_ts(first.ts), last_time=fmt_ts(acc.last_ts), first_ts=first.ts, last_ts=acc.last_ts,
        ranks=ranks, sources=[merged.sources[first.source].name], first=merged.where(first),
        codes=[names.name(code) for code in first.codes])


class _CodeNames:
    """Names, meanings and roles of codes from the knowledge base (`knowledge.codes.describe`)."""

    def __init__(self) -> None:
        self.cache: Dict[str, Tuple[CodeName, str]] = {}
        try:
            from npu_graph_skill.knowledge.codes import describe

            self.describe = describe
        except Exception:  # noqa: BLE001 - without the knowledge base, codes stay unnamed
            self.describe = None

    def _entry(self, code: str) -> Tuple[CodeName, str]:
        if code not in self.cache:
            entry = None
            if self.describe is not None:
                try:
                    entry = self.describe(code)
                except Exception:  # noqa: BLE001 - a broken knowledge file must not break the log report
                    entry = None
            if entry is None:
                self.cache[code] = (CodeName(code=code), "")
            else:
                self.cache[code] = (CodeName(code=code, name=str(entry.name), meaning=str(entry.meaning)),
                                    str(getattr(entry, "role", "") or ""))
        return self.cache[code]

    def name(self, code: str) -> CodeName:
        return self._entry(code)[0]

    def role(self, code: str) -> str:
        """decisive | wrapper | consequence | noisy | '' (unknown)."""
        return self._entry(code)[1]


# --------------------------------------------------------------------------------------------
# First failure across ranks.
# --------------------------------------------------------------------------------------------

def _occurrences(groups: List[ErrorAcc], role: str) -> List[Tuple[float, int, int, Optional[int], ErrorAcc]]:
    found = []
    for acc in groups:
        if acc.kind != "error" or acc.role != role:
            continue
        for rank, (ts, line, offset, source, _text) in acc.per_rank.items():
            found.append((_ts_key(ts), source, offset, rank, acc))
    found.sort(key=lambda o: (o[0], o[1], o[2]))
    return found


def _first_failure(merged: _Merged, groups: List[ErrorAcc], names: _CodeNames, context: int) -> Optional[FirstFailure]:
    decisive = _occurrences(groups, "decisive")
    only_consequences = not decisive
    pool = decisive or _occurrences(groups, "consequence")
    if not pool:
        return None
    ts, _, _, rank, acc = pool[0]
    event = _event_for(acc, rank)
    window = _window_for(merged, event)
    consequences: List[Consequence] = []
    also: List[Consequence] = []
    for other in _occurrences(groups, "consequence"):
        if other[4] is acc and other[3] == rank:
            continue
        consequences.append(_consequence(merged, other, "HCCL / notify-wait / task-timeout errors follow a failure elsewhere"))
    if not only_consequences:
        seen_ranks = {rank}
        for other in decisive[1:]:
            other_rank = other[3]
            if other_rank in seen_ranks or other_rank is None:
                continue
            seen_ranks.add(other_rank)
            also.append(_consequence(merged, other, "a decisive error on another rank, later than the first one"))
    where = merged.where(event, rank)
    before, lines = window
    return FirstFailure(
        id="E-010", rank=rank, time=fmt_ts(event.ts), ts=event.ts, where=where, message=event.message,
        signature=acc.signature.split("|", 1)[1], codes=[names.name(c) for c in event.codes],
        only_consequences=only_consequences, consequences=consequences[:MAX_CONSEQUENCES], also_failed=also[:MAX_CONSEQUENCES],
        window_first_line=max(1, event.line - before), window=lines)


def _event_for(acc: ErrorAcc, rank: Optional[int]) -> Event:
    ts, line, offset, source, text = acc.per_rank[rank]
    first = acc.first
    if source == first.source and offset == first.offset:
        return first
    return Event(source=source, line=line, offset=offset, ts=ts, rank=rank, pid=first.pid, level=first.level,
                 format=first.format, module=first.module, time=fmt_ts(ts), text=text, message=first.message,
                 codes=list(first.codes), role=first.role)


def _window_for(merged: _Merged, event: Event) -> Tuple[int, List[str]]:
    """(lines before the event, window lines) — the lines kept by the scanner around this occurrence."""
    for task, result in zip(merged.tasks, merged.results):
        if task.index != event.source:
            continue
        window = result.windows.get(event.offset)
        if window is not None:
            return len(window.before), window.before + [window.text] + window.after
    return 0, [event.text]


def _consequence(merged: _Merged, occurrence, why: str) -> Consequence:
    ts, source, offset, rank, acc = occurrence
    event = _event_for(acc, rank)
    return Consequence(rank=rank, time=fmt_ts(event.ts), where=merged.where(event, rank), why=why,
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
                        total=round(sum(values), 6) if values else None,
                        p50=round(scanner.percentile(values, 50), 6) if values else None,
                        p99=round(scanner.percentile(values, 99), 6) if values else None,
                        max=round(max(values), 6) if values else None,
                        ranks=sorted({r for r in ranks if r is not None}), examples=examples[:5], note=note)


def _timeline(merged: _Merged, limits: Dict[str, float]) -> Tuple[List[TimelineStat], List[Anomaly]]:
    events = sorted((e for r in merged.results for e in r.timeline), key=lambda e: (_ts_key(e.ts), e.source, e.offset))
    stats: List[TimelineStat] = []
    anomalies: List[Anomaly] = []

    captures, unfinished = _durations(events, "capture_begin", "capture_end")
    if captures or unfinished:
        family = max(set(captures) | set(unfinished), key=lambda f: (len(captures.get(f, [])), f == "cpp"))
        pairs = captures.get(family, [])
        left = sorted(unfinished.get(family, []), key=lambda e: (_ts_key(e.ts), e.source, e.offset))
        slow = sorted((p for p in pairs if p[0] > limits["capture_s"]), key=lambda p: -p[0])
        note = ""
        if left:  # a capture under way when the log stops or fails is where a capture error happened
            note = (f"{len(left)} capture(s) began and never ended, first at "
                    f"{merged.sources[left[0].source].name}:{left[0].line}")
        stats.append(_stat("capture", "T-001", family, [p[0] for p in pairs], [p[1].rank for p in pairs] + [e.rank for e in left],
                           [merged.where(e) for e in left] + [merged.where(p[1]) for p in (slow or pairs)], note=note))
        stats[-1].count = len(pairs)
        stats[-1].unfinished = len(left)
        for seconds, begin, end in slow[:20]:
            anomalies.append(Anomaly(
                id="T-101", kind="slow_capture", value=round(seconds, 3), threshold=limits["capture_s"], unit="s",
                rank=begin.rank, where=merged.where(begin),
                message={"en": f"graph capture took {seconds:.1f} s (> {limits['capture_s']:g} s), from line {begin.line} to {end.line}",
                         "zh": f"图捕获耗时 {seconds:.1f} 秒（阈值 {limits['capture_s']:g} 秒），第 {begin.line} 行到第 {end.line} 行"}))

    updates, _ = _durations(events, "update_begin", "update_end")
    if updates:
        family = max(updates, key=lambda f: len(updates[f]))
        pairs = updates[family]
        stats.append(_stat("update", "T-003", family, [p[0] for p in pairs], (p[1].rank for p in pairs),
                           [merged.where(p[1]) for p in pairs]))
    point_updates = [e for e in events if e.tag == "update"]
    if point_updates:
        stats.append(_stat("update_calls", "T-003", point_updates[0].family, [], (e.rank for e in point_updates),
                           [merged.where(e) for e in point_updates], unit="count",
                           note="graph parameter updates announced; the logs carry no end marker, so no durations"))
        stats[-1].count = len(point_updates)

    compiles = [e for e in events if e.tag in ("compile", "compile_total")]
    if compiles:
        steps = [e for e in compiles if e.tag == "compile"] or compiles
        stats.append(_stat("compile", "T-004", "framework", [e.value for e in steps], (e.rank for e in steps),
                           [merged.where(e) for e in steps]))
        for event in sorted(compiles, key=lambda e: -e.value):
            if event.value > limits["compile_s"]:
                anomalies.append(Anomaly(
                    id="T-102", kind="slow_compile", value=event.value, threshold=limits["compile_s"], unit="s",
                    rank=event.rank, where=merged.where(event),
                    message={"en": f"compile took {event.value:.1f} s (> {limits['compile_s']:g} s)",
                             "zh": f"编译耗时 {event.value:.1f} 秒（阈值 {limits['compile_s']:g} 秒）"}))

    summaries = [e for e in events if e.tag == "capture_summary"]
    if summaries:
        stats.append(_stat("capture_summary", "T-005", summaries[0].family, [e.value for e in summaries],
                           (e.rank for e in summaries), [merged.where(e) for e in summaries],
                           note="total capture time the framework reports for all its graphs"))

    replay = _replay_stat(merged, limits)
    if replay is not None:
        stat, anomaly = replay
        stats.append(stat)
        if anomaly is not None:
            anomalies.append(anomaly)

    fallbacks = [e for e in events if e.tag == "fallback"]
    if fallbacks:
        stat = _stat("fallback", "T-006", "graph_tree", [], (e.rank for e in fallbacks), [merged.where(e) for e in fallbacks],
                     unit="count", note="graph mode was skipped for these graphs: they ran eagerly")
        stat.count = len(fallbacks)
        stats.append(stat)
    return stats, anomalies


def _replay_stat(merged: _Merged, limits: Dict[str, float]):
    by_family: Dict[str, List] = defaultdict(list)
    for result in merged.results:
        for acc in result.replays.values():
            by_family[acc.family].append(acc)
    if not by_family:
        return None
    family = "npugraph" if "npugraph" in by_family else "acl"
    accs = by_family[family]
    count = sum(a.count for a in accs) + (sum(r.replays_unsampled for r in merged.results) if family == "npugraph" else 0)
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

def _memory(merged: _Merged) -> List[MemoryFinding]:
    findings: List[MemoryFinding] = []
    events = [e for r in merged.results for e in r.timeline]
    ooms = sorted((e for e in events if e.tag == "oom"), key=lambda e: (_ts_key(e.ts), e.source, e.offset))
    if ooms:
        findings.append(MemoryFinding(id="M-001", kind="oom", count=len(ooms),
                                      values={"codes": sorted({c for e in ooms for c in e.codes})},
                                      ranks=sorted({e.rank for e in ooms if e.rank is not None}),
                                      examples=[merged.where(e) for e in ooms[:5]]))
    peaks = []
    for task, result in zip(merged.tasks, merged.results):
        if result.alloc_peak is not None:
            peaks.append((task, result))
    if peaks:
        by_source: Dict[int, List[int]] = {}
        lines = 0
        for task, result in peaks:
            cached, _, allocated, _ = result.alloc_peak
            have = by_source.get(task.index)
            by_source[task.index] = [max(have[0], cached), max(have[1], allocated)] if have else [cached, allocated]
            lines += result.alloc_lines
        values = {merged.sources[i].name: {"peak_reserved_bytes": v[0], "peak_allocated_bytes": v[1],
                                           "peak_reserved_gib": round(v[0] / 2 ** 30, 3),
                                           "peak_allocated_gib": round(v[1] / 2 ** 30, 3)} for i, v in by_source.items()}
        findings.append(MemoryFinding(id="M-002", kind="allocator_peak", count=lines, values=values,
                                      ranks=sorted({t.rank for t, _ in peaks if t.rank is not None})))
    summaries = [e for e in events if e.tag == "capture_summary" and e.extra == e.extra]  # extra is NaN when absent
    if summaries:
        findings.append(MemoryFinding(id="M-003", kind="capture_memory", count=len(summaries),
                                      values={"max_gib": max(e.extra for e in summaries),
                                              "per_line_gib": [e.extra for e in summaries][:64]},
                                      ranks=sorted({e.rank for e in summaries if e.rank is not None}),
                                      examples=[merged.where(e) for e in summaries[:5]]))
    from npu_graph_skill.logs.families import avail_after_capture

    avail = [(avail_after_capture(e.message), e) for e in events if e.tag == "capture_summary" and "avail mem=" in e.message]
    avail = [(v, e) for v, e in avail if v is not None]
    if avail:
        findings.append(MemoryFinding(id="M-004", kind="free_after_capture", count=len(avail),
                                      values={"min_gib": min(v for v, _ in avail)},
                                      ranks=sorted({e.rank for _, e in avail if e.rank is not None}),
                                      examples=[merged.where(e) for _, e in sorted(avail, key=lambda p: p[0])[:5]]))
    retries = [acc for r in merged.results for acc in r.errors.values() if "existing pool failed" in acc.first.message]
    if retries:
        count = sum(a.count for a in retries)
        findings.append(MemoryFinding(id="M-005", kind="allocator_retry", count=count,
                                      ranks=sorted({r for a in retries for r in a.per_rank if r is not None}),
                                      examples=[merged.where(retries[0].first)]))
    return findings
