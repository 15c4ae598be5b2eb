"""The scan results of one machine's files → a `Collected`: everything the report is built from, in a form that merges
with the `Collected` of other machines.

The report is a function of the union of these parts (`analyze.finish`), so analysing every file on one machine and
merging per-node summaries (`logs merge`) run the same code on the same data: line numbers are made per file, error
groups are merged per signature with the ranks of pid-only lines resolved within their own file, and each group's
role comes from its signature alone. Nothing here depends on the other machines.
"""
from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.logs.scan import ErrorAcc, Event, ReplayAcc, ScanTask, TaskResult


@dataclasses.dataclass
class SourcePart:
    """One input file as the report needs it."""

    name: str
    rank: Optional[int]
    bytes: int
    lines: int
    layouts: Dict[str, int]
    first_ts: Optional[float]
    last_ts: Optional[float]
    notes: List[str]
    alloc_peak: Optional[Tuple[int, int]] = None  # (peak reserved, peak allocated) bytes
    alloc_lines: int = 0


@dataclasses.dataclass
class Collected:
    """What scanning the files of one machine leaves. Source numbers in groups, windows and events index `sources`."""

    node: str
    sources: List[SourcePart]
    notes: List[str]
    dropped: int  # lines of signatures beyond scan.MAX_GROUPS, counted but not grouped
    candidates: int
    groups: List[ErrorAcc]
    windows: Dict[Tuple[int, int], List[str]]  # (source, offset of the line) -> [lines before, *window lines]
    window_before: Dict[Tuple[int, int], int]
    events: List[Event]
    replays: List[ReplayAcc]
    replays_unsampled: int
    hints: Dict[str, Dict[Any, float]]  # clock hints: event key -> rank -> first time (see clocks.py)
    oom_floods: int = 0  # out-of-memory lines counted without a parse
    offset: float = 0.0  # seconds this machine's clock is ahead; subtracted from its times by the merge


def collect(sources: List[Any], tasks: List[ScanTask], results: List[TaskResult], node: str = "") -> Collected:
    """`sources` are the TextSource of the scan (name, path, size, notes), `tasks` and `results` in the same order."""
    _number_lines(tasks, results)
    by_source: Dict[int, List[Tuple[ScanTask, TaskResult]]] = defaultdict(list)
    for task, result in zip(tasks, results):
        by_source[task.index].append((task, result))
    parts = _sources(sources, by_source)
    notes: List[str] = []
    for index, source in enumerate(sources):
        notes.extend(source.notes)
        for _, result in by_source.get(index, ()):
            notes.extend(n for n in result.notes if "distinct error signatures" not in n)
    groups = merge_groups(_groups_per_source(tasks, results))
    _roles_from_codes(groups)
    windows: Dict[Tuple[int, int], List[str]] = {}
    before: Dict[Tuple[int, int], int] = {}
    for task, result in zip(tasks, results):
        for offset, window in result.windows.items():
            windows[(task.index, offset)] = window.before + [window.text] + window.after
            before[(task.index, offset)] = len(window.before)
    hints: Dict[str, Dict[Any, float]] = {}
    for result in results:
        for key, ranks in result.clock_hints.items():
            into = hints.setdefault(key, {})
            for rank, ts in ranks.items():
                if rank not in into or ts < into[rank]:
                    into[rank] = ts
    return Collected(
        node=node, sources=parts, notes=notes, dropped=sum(r.dropped_signatures for r in results),
        candidates=sum(r.candidates for r in results), groups=groups, windows=windows, window_before=before,
        events=[e for r in results for e in r.timeline], replays=[a for r in results for a in r.replays.values()],
        replays_unsampled=sum(r.replays_unsampled for r in results), hints=hints,
        oom_floods=sum(r.oom_floods for r in results))


def _number_lines(tasks: List[ScanTask], results: List[TaskResult]) -> None:
    """Line numbers of a range are counted from its start: add the lines of the earlier ranges of its file."""
    base: Dict[int, int] = defaultdict(int)
    for i in sorted(range(len(tasks)), key=lambda i: (tasks[i].index, tasks[i].start)):
        offset = base[tasks[i].index]
        base[tasks[i].index] += results[i].lines
        if not offset:
            continue
        result = results[i]
        for acc in result.errors.values():
            acc.first.line += offset
            acc.last_line += offset
            acc.per_rank = {r: (ts, line + offset, off, src, text) for r, (ts, line, off, src, text) in acc.per_rank.items()}
        for event in result.timeline:
            event.line += offset
        for window in result.windows.values():
            window.line += offset


def _sources(sources: List[Any], by_source: Dict[int, List[Tuple[ScanTask, TaskResult]]]) -> List[SourcePart]:
    out = []
    for index, source in enumerate(sources):
        parts = by_source.get(index, [])
        layouts: Counter = Counter()
        first_ts = last_ts = None
        notes: List[str] = []
        peak: Optional[List[int]] = None
        alloc_lines = 0
        for _, result in parts:
            layouts.update(result.census)
            layouts.update(result.layouts)
            if result.first_ts is not None and (first_ts is None or result.first_ts < first_ts):
                first_ts = result.first_ts
            if result.last_ts is not None and (last_ts is None or result.last_ts > last_ts):
                last_ts = result.last_ts
            notes.extend(result.notes)
            if result.alloc_peak is not None:
                cached, allocated = result.alloc_peak
                peak = [max(peak[0], cached), max(peak[1], allocated)] if peak else [cached, allocated]
                alloc_lines += result.alloc_lines
        if len(layouts) > 1:
            layouts.pop("text", None)
        out.append(SourcePart(
            name=source.name, rank=parts[0][0].rank if parts else None,
            bytes=(parts[0][0].size or source.size if parts else source.size) if source.path
            else sum(r.bytes_read for _, r in parts),
            lines=sum(r.lines for _, r in parts), layouts=dict(layouts.most_common()), first_ts=first_ts,
            last_ts=last_ts, notes=notes, alloc_peak=tuple(peak) if peak else None, alloc_lines=alloc_lines))
    return out


def _groups_per_source(tasks: List[ScanTask], results: List[TaskResult]) -> List[ErrorAcc]:
    """Each file's groups, merged over its ranges, with rank-less occurrences (plog lines print a pid, not a rank)
    given the rank that other lines of the same file print next to that pid (`[rank:0]:[29930]`, `(Worker_TP0
    pid=29930)`, the HCCL init record). A file that prints no rank at all (a plog-PID file beside the output of
    its job's ranks, as in the folder of `npu-graph run`) takes the rank the other files print next to its pid,
    when they all agree on one."""
    out: List[ErrorAcc] = []
    by_source: Dict[int, List[TaskResult]] = defaultdict(list)
    rankless: Dict[int, bool] = {}
    anywhere: Dict[str, Optional[int]] = {}
    for task, result in zip(tasks, results):
        by_source[task.index].append(result)
        rankless[task.index] = task.rank is None
        for pid, rank in result.pid_ranks.items():
            anywhere[pid] = rank if anywhere.get(pid, rank) == rank else None
    for index in sorted(by_source):
        parts = by_source[index]
        groups = merge_groups(list(acc for r in parts for acc in r.errors.values()))
        pid_ranks: Dict[str, int] = {}
        for result in parts:
            for pid, rank in result.pid_ranks.items():
                pid_ranks.setdefault(pid, rank)
        for acc in groups:
            if None not in acc.per_rank or not acc.first.pid:
                continue
            rank = pid_ranks.get(acc.first.pid)
            if rank is None and rankless[index]:
                rank = anywhere.get(acc.first.pid)
            if rank is None:
                continue
            seen = acc.per_rank.pop(None)
            have = acc.per_rank.get(rank)
            if have is None or ts_key(seen[0]) < ts_key(have[0]):
                acc.per_rank[rank] = seen
            last = acc.last_by_rank.pop(None, None)
            if last is not None and (rank not in acc.last_by_rank or last > acc.last_by_rank[rank]):
                acc.last_by_rank[rank] = last
            if acc.first.rank is None:
                acc.first.rank = rank
        out.extend(groups)
    return out


def merge_groups(accs: List[ErrorAcc]) -> List[ErrorAcc]:
    """One group per signature: counts added, the earliest occurrence kept overall and per rank, the latest times."""
    merged: Dict[str, ErrorAcc] = {}
    for acc in accs:
        into = merged.get(acc.signature)
        if into is None:
            merged[acc.signature] = ErrorAcc(signature=acc.signature, kind=acc.kind, role=acc.role, first=acc.first,
                                             count=acc.count, last_ts=acc.last_ts, last_line=acc.last_line,
                                             per_rank=dict(acc.per_rank), last_by_rank=dict(acc.last_by_rank))
            continue
        into.count += acc.count
        if before(acc.first, into.first):
            into.first = acc.first
        if acc.last_ts is not None and (into.last_ts is None or acc.last_ts > into.last_ts):
            into.last_ts = acc.last_ts
        for rank, seen in acc.per_rank.items():
            have = into.per_rank.get(rank)
            if have is None or (ts_key(seen[0]), seen[3], seen[2]) < (ts_key(have[0]), have[3], have[2]):
                into.per_rank[rank] = seen
        for rank, last in acc.last_by_rank.items():
            if rank not in into.last_by_rank or last > into.last_by_rank[rank]:
                into.last_by_rank[rank] = last
    return list(merged.values())


def _roles_from_codes(groups: List[ErrorAcc]) -> None:
    """The knowledge base knows codes that only ever follow an earlier fault (107020, 507011, EI0002 ...): a group whose
    signature carries one is a consequence. The signature, not one occurrence, decides, so every machine agrees."""
    names = CodeNames()
    for acc in groups:
        if acc.kind == "error" and acc.role == "decisive":
            codes = [c for c in acc.signature.rsplit("|", 1)[-1].split(",") if c]
            if any(names.role(c) == "consequence" for c in codes):
                acc.role = "consequence"


def ts_key(ts: Optional[float]) -> float:
    return ts if ts is not None else float("inf")


def before(a: Event, b: Event) -> bool:
    return (ts_key(a.ts), a.source, a.offset) < (ts_key(b.ts), b.source, b.offset)


class CodeNames:
    """Names, meanings and roles of codes from the knowledge base (`knowledge.codes.describe`)."""

    def __init__(self) -> None:
        self.cache: Dict[str, Tuple[Any, str]] = {}
        try:
            from npu_graph_skill.knowledge.codes import describe

            self.describe = describe
        except Exception:  # noqa: BLE001 - without the knowledge base, codes stay unnamed
            self.describe = None

    def _entry(self, code: str) -> Tuple[Any, str]:
        from npu_graph_skill.logs.model import CodeName

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

    def name(self, code: str):
        return self._entry(code)[0]

    def role(self, code: str) -> str:
        """decisive | wrapper | consequence | noisy | '' (unknown)."""
        return self._entry(code)[1]
