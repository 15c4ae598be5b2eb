"""`npu-graph logs merge node*.json`: the per-node summaries of a job → the report of the whole job.

Each node scans its own files (`npu-graph logs PATH --summary-out node07.json`, started by Slurm, pdsh, Ansible or
kubectl exec — README.md "Logs of a whole cluster job"); this module reads the summaries (summary.py refuses foreign,
cut, changed or other-version ones), puts every node's times on one clock (clocks.py) and builds the report with the
same code as a local analysis (analyze.finish), so the first failure, its consequences and the anomalies are those of
analysing all the files on one machine.
"""
from __future__ import annotations

import os
import time
from typing import Dict, List, Optional

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.logs.model import LogReport


def summary_paths(paths: List[str]) -> List[str]:
    """Files as given; a folder stands for the *.json files in it, by name."""
    out: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(os.path.join(path, n) for n in os.listdir(path)
                           if n.endswith(".json") and not n.startswith("."))
            if not found:
                raise UserError(f"{path}: no summary (*.json) in this folder")
            out.extend(found)
        else:
            out.append(path)
    if not out:
        raise UserError("logs merge needs the summaries to merge, e.g. npu-graph logs merge summaries/node*.json")
    return out


def merge_summaries(paths: List[str], clock_offsets: Optional[Dict[str, float]] = None) -> LogReport:
    """The report of the job whose nodes wrote these summaries. clock_offsets: {node: seconds its clock is ahead},
    taken as given; the other nodes' offsets are estimated from shared events."""
    from npu_graph_skill.logs.analyze import finish
    from npu_graph_skill.logs.clocks import estimate
    from npu_graph_skill.logs.summary import read_summary

    started = time.perf_counter()
    files = summary_paths(paths)
    parts = []
    docs = []
    where: Dict[str, str] = {}
    for path in files:
        part, doc = read_summary(path)
        if part.node in where:
            raise UserError(f"{path} and {where[part.node]} both describe node {part.node!r}; give each node its own "
                            f"name with `--node NAME` when writing the summaries")
        where[part.node] = path
        if docs and doc["options"] != docs[0]["options"]:
            differ = _differences(docs[0]["options"], doc["options"])
            raise UserError(f"{path} was written with other options than {files[0]} ({differ}); write every node's "
                            f"summary with the same --since/--until/--rank/--threshold/--context")
        parts.append(part)
        docs.append(doc)
    clocks = estimate(parts, clock_offsets)
    for part, clock in zip(parts, clocks):
        part.offset = clock.offset_s
    options = docs[0]["options"]
    uncertainty = {c.node: c.uncertainty_s for c in clocks if c.uncertainty_s is not None}
    report = finish(parts, dict(options["thresholds"]), int(options["context"]), uncertainty)
    report.clocks = clocks
    report.filters = {"since": options.get("since"), "until": options.get("until"), "rank": options.get("rank")}
    report.notes.extend(f"clock of {c.node}: {c.note}" for c in clocks if c.method in ("estimated", "unknown", "given"))
    elapsed = time.perf_counter() - started
    report.totals["nodes"] = len(parts)
    report.totals["scan_seconds"] = round(max((float(d["totals"].get("seconds") or 0) for d in docs), default=0.0), 3)
    report.totals["seconds"] = round(elapsed, 3)
    return report


def _differences(a: dict, b: dict) -> str:
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return ", ".join(f"{k}: {a.get(k)!r} vs {b.get(k)!r}" for k in keys)
