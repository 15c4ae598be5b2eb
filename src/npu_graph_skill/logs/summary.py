"""Per-node summaries: what `npu-graph logs PATH --summary-out FILE` writes and `npu-graph logs merge` reads.

A summary is the `Collected` state of one machine's scan (collect.py) as versioned JSON, cut down to what the report of
the whole job can use: every error signature with each rank's first occurrence (time, line, offset) and last time, the
text of the occurrences the report can show (each rank's first decisive and first consequence error, the node's first
51 consequences), the root-cause window of each rank's first decisive error, timeline events as numbers with the text
of the few that can become examples, replay spacing, allocator peaks, and the clock hints (communicator-init times).
Because every kept line is one that the report of the whole job could pick, merging summaries gives the report that
analysing all files on one machine gives. The schema is documented in README.md ("Logs of a whole cluster job").

A summary is refused, with one line, when it is not JSON or cut short, not a summary (another schema), written by
another version of the tool, or changed after it was written (its sha256 digest no longer matches).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill import __version__
from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.ingest import describe_os_error
from npu_graph_skill.logs.collect import Collected, SourcePart, ts_key
from npu_graph_skill.logs.scan import ErrorAcc, Event, ReplayAcc

SCHEMA = "npu-graph-skill/logs-summary/1"
TOOL = f"npu-graph-skill {__version__}"
MAX_SUMMARY_BYTES = 256 << 20  # a summary is kilobytes to a few MB; anything this big is not one
FIRST_EXAMPLES = 8  # events of each kind whose text is kept (the report shows at most 5)
SLOW_EXAMPLES = 25  # longest pairs whose text is kept (the report lists at most 20 slow captures)
CONSEQUENCES_KEPT = 51  # consequence occurrences whose text is kept (the report lists 50 after the first failure)
EVENT_FIELDS = ("source", "line", "offset", "ts", "rank", "pid", "tag", "family", "value", "extra", "time", "text",
                "message", "codes")
FIRST_FIELDS = ("source", "line", "offset", "ts", "rank", "pid", "level", "format", "module", "time", "text", "message",
                "codes", "role")
RANK_FIELDS = ("rank", "first_ts", "line", "offset", "source", "text", "last_ts")


# --------------------------------------------------------------------------------------------
# Writing.
# --------------------------------------------------------------------------------------------

def to_document(part: Collected, options: Dict[str, Any], totals: Dict[str, Any]) -> Dict[str, Any]:
    """The summary of one machine's scan as a JSON-ready dict, digest included."""
    texts = _texts_kept(part)
    windows = _windows_kept(part)
    events = _events_kept(part, options["thresholds"])
    doc = {
        "schema": SCHEMA,
        "tool": TOOL,
        "node": part.node,
        "options": options,
        "totals": totals,
        "notes": list(part.notes),
        "sources": [{"name": s.name, "rank": s.rank, "bytes": s.bytes, "lines": s.lines, "layouts": s.layouts,
                     "first_ts": s.first_ts, "last_ts": s.last_ts, "notes": s.notes,
                     "alloc_peak": list(s.alloc_peak) if s.alloc_peak else None, "alloc_lines": s.alloc_lines}
                    for s in part.sources],
        "dropped": part.dropped,
        "candidates": part.candidates,
        "oom_floods": part.oom_floods,
        "errors": [_group_doc(acc, texts) for acc in part.groups],
        "windows": [[source, offset, part.window_before[(source, offset)], part.windows[(source, offset)]]
                    for source, offset in sorted(windows)],
        "event_fields": list(EVENT_FIELDS),
        "events": [_event_row(e, keep) for e, keep in events],
        "replays": {"unsampled": part.replays_unsampled,
                    "processes": [[a.family, a.rank, a.count, _gap_counts(a.intervals)] for a in part.replays]},
        "clock": {"events": {key: [[rank, ts] for rank, ts in sorted(ranks.items(), key=lambda p: ts_key(p[1]))]
                             for key, ranks in sorted(part.hints.items())}},
    }
    doc["digest"] = digest(doc)
    return doc


def write_summary(path: str, part: Collected, options: Dict[str, Any], totals: Dict[str, Any]) -> Dict[str, Any]:
    """Write the summary whole or not at all (core.files.atomic_write), or to stdout for `-` (kubectl exec ... >
    node.json); returns the document."""
    from npu_graph_skill.core.files import atomic_write

    doc = to_document(part, options, totals)
    if path == "-":
        import sys

        sys.stdout.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")
        sys.stdout.flush()
        return doc
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UserError(f"--summary-out {path}: folder {folder} does not exist")
    try:
        atomic_write(path, json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")
    except OSError as exc:
        raise UserError(f"--summary-out {path}: cannot write ({exc.strerror or exc})") from None
    return doc


def digest(doc: Dict[str, Any]) -> str:
    body = {k: v for k, v in doc.items() if k != "digest"}
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _texts_kept(part: Collected) -> set:
    """(group id, rank) of the per-rank occurrences whose text the report of the whole job can show."""
    keep = set()
    for role in ("decisive", "consequence"):
        found = []
        for acc in part.groups:
            if acc.kind == "error" and acc.role == role:
                for rank, (ts, _line, offset, source, _text) in acc.per_rank.items():
                    found.append((ts_key(ts), source, offset, rank, id(acc)))
        found.sort(key=lambda o: o[:3])
        seen = set()
        for item in found:  # each rank's first: the first failure, the later failures, the ranks too close to order
            if item[3] not in seen:
                seen.add(item[3])
                keep.add((item[4], item[3]))
        if role == "consequence":
            keep.update((item[4], item[3]) for item in found[:CONSEQUENCES_KEPT])
    return keep


def _windows_kept(part: Collected) -> set:
    """The root-cause window of each rank's first decisive error, and of the node's first consequence."""
    keys = set()
    for role in ("decisive", "consequence"):
        firsts: Dict[Any, Tuple] = {}
        for acc in part.groups:
            if acc.kind != "error" or acc.role != role:
                continue
            for rank, (ts, _line, offset, source, _text) in acc.per_rank.items():
                key = (ts_key(ts), source, offset)
                if rank not in firsts or key < firsts[rank]:
                    firsts[rank] = key
        chosen = list(firsts.values()) if role == "decisive" else sorted(firsts.values())[:1]
        keys.update((source, offset) for _, source, offset in chosen if (source, offset) in part.windows)
    return keys


def _events_kept(part: Collected, thresholds: Dict[str, float]) -> List[Tuple[Event, bool]]:
    """Every timeline event, and whether its text is kept: the first ones of each kind, the longest captures and
    updates, captures that never ended, compiles over the threshold, the lowest free memory after capture."""
    from npu_graph_skill.logs.analyze import _durations
    from npu_graph_skill.logs.families import avail_after_capture

    events = sorted(part.events, key=lambda e: (ts_key(e.ts), e.source, e.offset))
    keep = set()
    by_tag: Dict[str, List[Event]] = {}
    for event in events:
        by_tag.setdefault(event.tag, []).append(event)
    for tag, items in by_tag.items():
        keep.update(id(e) for e in items[:FIRST_EXAMPLES])
    summaries = [e for e in by_tag.get("capture_summary", []) if e.extra == e.extra]
    keep.update(id(e) for e in summaries[:FIRST_EXAMPLES])
    avail = [(avail_after_capture(e.message), ts_key(e.ts), e.source, e.offset, e)
             for e in by_tag.get("capture_summary", []) if "avail mem=" in e.message]
    avail = sorted((p for p in avail if p[0] is not None), key=lambda p: p[:4])
    keep.update(id(p[4]) for p in avail[:FIRST_EXAMPLES])
    for begin, end in (("capture_begin", "capture_end"), ("update_begin", "update_end")):
        pairs, unfinished = _durations(events, begin, end)
        for family, items in pairs.items():
            for _, b, e in items[:FIRST_EXAMPLES] + sorted(items, key=lambda p: -p[0])[:SLOW_EXAMPLES]:
                keep.update((id(b), id(e)))
        for family, items in unfinished.items():
            keep.update(id(e) for e in sorted(items, key=lambda e: (ts_key(e.ts), e.source, e.offset))[:FIRST_EXAMPLES])
    for event in by_tag.get("compile", []) + by_tag.get("compile_total", []):
        if event.value > thresholds.get("compile_s", math.inf):
            keep.add(id(event))
    return [(e, id(e) in keep) for e in events]


def _event_row(event: Event, keep: bool) -> list:
    message = event.message if event.tag == "capture_summary" and "avail mem=" in event.message else ""
    return [event.source, event.line, event.offset, event.ts, event.rank, event.pid, event.tag, event.family,
            event.value, None if event.extra != event.extra else event.extra, event.time, event.text if keep else "",
            message, list(event.codes) if event.tag == "oom" else []]


def _group_doc(acc: ErrorAcc, texts: set) -> Dict[str, Any]:
    first = acc.first
    return {
        "signature": acc.signature, "kind": acc.kind, "role": acc.role, "count": acc.count, "last_ts": acc.last_ts,
        "last_line": acc.last_line,
        "first": [first.source, first.line, first.offset, first.ts, first.rank, first.pid, first.level, first.format,
                  first.module, first.time, first.text, first.message, list(first.codes), first.role],
        "ranks": [[rank, ts, line, offset, source, text if (id(acc), rank) in texts else "", acc.last_by_rank.get(rank)]
                  for rank, (ts, line, offset, source, text) in sorted(acc.per_rank.items(), key=lambda p: _rank_key(p[0]))],
    }


def _rank_key(rank: Optional[int]) -> Tuple[int, int]:
    return (1, 0) if rank is None else (0, rank)


def _gap_counts(intervals: List[float]) -> List[List[float]]:
    counts: Dict[float, int] = {}
    for gap in intervals:
        counts[gap] = counts.get(gap, 0) + 1
    return [[gap, n] for gap, n in sorted(counts.items())]


# --------------------------------------------------------------------------------------------
# Reading.
# --------------------------------------------------------------------------------------------

def read_summary(path: str) -> Tuple[Collected, Dict[str, Any]]:
    """(the node's part, the document) — or UserError with one line saying why the file is refused."""
    name = path
    if os.path.isdir(path):
        raise UserError(f"{name}: is a directory, expected a summary file")
    try:
        size = os.path.getsize(path)
        if size > MAX_SUMMARY_BYTES:
            raise UserError(f"{name}: {size / 2 ** 20:.0f} MB is not a summary (they are KB to a few MB)")
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise UserError(describe_os_error(name, exc, "a summary file")) from None
    if not raw.lstrip().startswith(b"{"):
        raise UserError(f"{name}: not a summary (not a JSON object; write one with `npu-graph logs PATH --summary-out FILE`)")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{name}: not a summary (not UTF-8 text)") from None
    except ValueError as exc:
        where = f" at byte {exc.pos:,} of {len(raw):,}" if getattr(exc, "pos", None) is not None else ""
        raise UserError(f"{name}: not a complete summary (the JSON is cut short or damaged{where}); copy it again "
                        f"or rewrite it with `npu-graph logs PATH --summary-out FILE`") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str):
        raise UserError(f"{name}: not an npu-graph logs summary (write one with `npu-graph logs PATH --summary-out FILE`)")
    if doc["schema"] != SCHEMA and doc["schema"].startswith(SCHEMA.rsplit("/", 1)[0] + "/"):
        raise UserError(f"{name}: a summary of schema {doc['schema']!r}, this version reads {SCHEMA!r}; write every "
                        f"node's summary with the same version")
    if doc["schema"] != SCHEMA:
        hint = " (that is a report: `--json` output)" if doc["schema"].startswith("npu-graph-skill/logs/") else ""
        raise UserError(f"{name}: not an npu-graph logs summary: schema {doc['schema']!r}{hint}, expected {SCHEMA!r}")
    if doc.get("tool") != TOOL:
        raise UserError(f"{name}: written by {doc.get('tool') or 'an unknown tool'}, this is {TOOL}; write every "
                        f"node's summary with the same version")
    if doc.get("digest") != digest(doc):
        raise UserError(f"{name}: digest mismatch: the summary was changed after it was written; write it again")
    try:
        return _part(doc), doc
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise UserError(f"{name}: malformed summary ({exc.__class__.__name__}: {exc})") from None


def _part(doc: Dict[str, Any]) -> Collected:
    sources = [SourcePart(name=str(s["name"]), rank=s["rank"], bytes=int(s["bytes"]), lines=int(s["lines"]),
                          layouts=dict(s["layouts"]), first_ts=s["first_ts"], last_ts=s["last_ts"], notes=list(s["notes"]),
                          alloc_peak=tuple(s["alloc_peak"]) if s["alloc_peak"] else None, alloc_lines=int(s["alloc_lines"]))
               for s in doc["sources"]]
    groups = []
    for g in doc["errors"]:
        first = Event(**dict(zip(FIRST_FIELDS, g["first"])))
        first.codes = list(first.codes)
        acc = ErrorAcc(signature=g["signature"], kind=g["kind"], role=g["role"], first=first, count=int(g["count"]),
                       last_ts=g["last_ts"], last_line=int(g["last_line"]))
        for rank, ts, line, offset, source, text, last in g["ranks"]:
            acc.per_rank[rank] = (ts, line, offset, source, text)
            if last is not None:
                acc.last_by_rank[rank] = last
        groups.append(acc)
    fields = doc["event_fields"]
    if list(fields) != list(EVENT_FIELDS):
        raise ValueError(f"event fields {fields}")
    events = []
    for row in doc["events"]:
        values = dict(zip(EVENT_FIELDS, row))
        if values["extra"] is None:
            values["extra"] = math.nan
        events.append(Event(level="", format="", module="", **values))
    replays = []
    for family, rank, count, gaps in doc["replays"]["processes"]:
        acc = ReplayAcc(family=family, rank=rank, count=int(count))
        acc.intervals = [float(gap) for gap, n in gaps for _ in range(int(n))]
        replays.append(acc)
    windows = {}
    before = {}
    for source, offset, count, lines in doc["windows"]:
        windows[(source, offset)] = list(lines)
        before[(source, offset)] = int(count)
    hints = {key: {rank: ts for rank, ts in pairs} for key, pairs in doc["clock"]["events"].items()}
    for index, source in enumerate(sources):
        if not isinstance(source.name, str):
            raise ValueError(f"source {index}")
    return Collected(node=str(doc["node"]), sources=sources, notes=list(doc["notes"]), dropped=int(doc["dropped"]),
                     candidates=int(doc["candidates"]), groups=groups, windows=windows, window_before=before,
                     events=events, replays=replays, replays_unsampled=int(doc["replays"]["unsampled"]), hints=hints,
                     oom_floods=int(doc["oom_floods"]))
