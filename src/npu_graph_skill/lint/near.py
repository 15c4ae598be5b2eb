"""Lint findings as evidence for a diagnosis: the user's script (given, or named in the traceback and
readable here) is linted, and the findings at or near the failing lines are returned.

Used lazily by `diagnose` (one optional call); nothing here imports the diagnosis engine.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

NEAR_LINES = 10  # a finding this close to a failing frame's line counts as "near"
MAX_FILES = 8
LIBRARY_PATH = re.compile(r"(site-packages|dist-packages|/torch/|/torch_npu/|/lib/python\d|<frozen|<string>)")


def _frame_files(frames: Sequence[Any]) -> List[str]:
    """Readable user/framework files named by the traceback, innermost last, no library code."""
    files: List[str] = []
    for frame in frames:
        path = getattr(frame, "file", "") or ""
        if path.endswith(".py") and not LIBRARY_PATH.search(path) and os.path.isfile(path) and path not in files:
            files.append(path)
    return files[-MAX_FILES:]


def _same_file(frame_path: str, path: str, given: bool = False) -> bool:
    """A traceback path and a local path name the same file: equal, or the shorter is a suffix of the longer
    by whole components. A script the user named (--source-file) matches by its file name alone: the
    traceback may come from another machine."""
    a = os.path.normpath(frame_path).replace("\\", "/").split("/")
    b = os.path.normpath(os.path.abspath(path)).replace("\\", "/").split("/")
    if a[-1:] != b[-1:]:
        return False
    if given:
        return True
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    shorter = [p for p in shorter if p not in ("", ".")]
    return longer[-len(shorter):] == shorter


def lint_near_failure(frames: Sequence[Any], source_files: Optional[Sequence[str]] = None,
                      lang: str = "en") -> Tuple[List[Dict[str, Any]], List[str]]:
    """([finding dicts with `near` and `distance`], notes). Findings at or within NEAR_LINES of a failing
    frame come first; with no frame in a linted file, every finding of the given files is returned."""
    from npu_graph_skill.core.errors import UserError
    from npu_graph_skill.lint.engine import lint_paths

    given = [p for p in (source_files or [])]
    notes: List[str] = []
    for path in given:
        if not os.path.isfile(path):
            raise UserError(f"--source-file {path}: no such file")
    files = given + [f for f in _frame_files(frames) if f not in given]
    if not files:
        return [], notes
    try:
        report = lint_paths(files, lang=lang)
    except UserError as exc:
        return [], [f"lint: {exc}"]
    notes.extend(f"lint skipped {s.path}: {s.reason}" for s in report.skipped)
    failing = [(getattr(f, "file", ""), int(getattr(f, "line", 0) or 0)) for f in frames]
    named = {os.path.normpath(p) for p in given}
    results: List[Dict[str, Any]] = []
    for finding in report.findings:
        best: Optional[Tuple[int, str]] = None
        for frame_path, frame_line in failing:
            if not frame_line:
                continue
            places = [(finding.path, finding.line)] + [(s.path, s.line) for s in finding.chain]
            for path, line in places:
                if _same_file(frame_path, path, os.path.normpath(path) in named) and abs(line - frame_line) <= NEAR_LINES:
                    distance = abs(line - frame_line)
                    if best is None or distance < best[0]:
                        best = (distance, f"{frame_path}:{frame_line}")
        data = finding.to_dict()
        data["near"] = best[1] if best else None
        data["distance"] = best[0] if best else None
        results.append(data)
    if any(r["near"] for r in results):
        results = [r for r in results if r["near"]]
    elif not given:
        results = []  # files found through the traceback but nothing near its lines: not evidence
    results.sort(key=lambda r: (r["distance"] if r["distance"] is not None else 10 ** 6, r["certainty"] != "certain"))
    return results, notes


def describe(finding: Dict[str, Any], lang: str, top_pattern: str = "") -> str:
    """One line for the diagnosis notes."""
    where = f"{finding['path']}:{finding['line']}"
    agree = finding["pattern"] == top_pattern
    if lang == "zh":
        near = (f"，距失败行 {finding['near']} {finding['distance']} 行" if finding["near"] else "")
        tail = "（与首选候选一致）" if agree else ""
        return f"lint {finding['rule']}（{finding['pattern']}，{'确定' if finding['certainty'] == 'certain' else '可能'}）于 {where}{near}：{finding['message']}{tail}"
    near = f", {finding['distance']} line(s) from the failing line {finding['near']}" if finding["near"] else ""
    tail = " (agrees with the top candidate)" if agree else ""
    return f"lint {finding['rule']} ({finding['pattern']}, {finding['certainty']}) at {where}{near}: {finding['message']}{tail}"
