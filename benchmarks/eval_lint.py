"""`npu-graph lint` measured on real code, read from git mirrors at run time (nothing fetched is committed).

Two measurements, both driven by benchmarks/lint_eval.yaml:

(a) before/after pairs of real fixing changes: the package is exported at the commit before the fix and at
    the fix (`git archive`), the package is linted as a user would (`npu-graph lint PACKAGE`: a region in one
    module follows calls into the fixed file) and the findings in the fixed file are kept; the pair
    counts when the code before is flagged at the fixed line with the expected rule and the code after is
    clean there (no finding of that rule on the flagged code or on the lines the fix wrote);
(b) whole real files that run correctly under capture (torch_npu's graph tests, the graph tests torch_npu
    ported from PyTorch's test_cuda.py, frameworks' graph runners): every finding is listed, and each must
    have been reviewed by hand in the data file (`reviewed`: intended = the test provokes that failure on
    purpose; true_positive = a real capture hazard, confirmed by a later fix or the maintainers; unconfirmed =
    reachable in a capture only on a configuration the review could not confirm; false_alarm = the code is
    fine; with the reason). An unreviewed finding, or a verdict not in this list, fails the run.

Mirrors are looked up as MIRRORS/<owner>+<name>/repo (default /work/.mirror, or --mirrors / $NPU_GRAPH_MIRRORS);
a missing mirror or commit is reported and skipped.

    python benchmarks/eval_lint.py
    python benchmarks/eval_lint.py --json
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from npu_graph_skill.lint.engine import lint_paths  # noqa: E402


VERDICTS = ("intended", "true_positive", "unconfirmed", "false_alarm")


def mirror(root: str, repo: str) -> Optional[str]:
    path = os.path.join(root, repo.replace("/", "+"), "repo")
    return path if os.path.isdir(path) else None


def export(git_dir: str, commit: str, paths: List[str], into: str) -> bool:
    """The .py files under `paths` at `commit`, written under `into`. File by file (not `git archive`): a
    snapshot may lack its largest files (binaries, tarballs), and only Python source is linted."""
    listing = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "-z", commit, "--", *paths],
                             capture_output=True)
    if listing.returncode != 0:
        return False
    blobs = []
    for entry in listing.stdout.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob" and name.endswith(b".py"):
            blobs.append((fields[2].decode(), name.decode("utf-8", "replace")))
    if not blobs:
        return False
    batch = subprocess.run(["git", "-C", git_dir, "cat-file", "--batch"], capture_output=True,
                           input="".join(f"{sha}\n" for sha, _ in blobs).encode())
    data, offset = batch.stdout, 0
    for sha, name in blobs:
        header_end = data.index(b"\n", offset)
        header = data[offset:header_end].split()
        offset = header_end + 1
        if len(header) < 3 or header[1] != b"blob":  # missing from the snapshot
            continue
        size = int(header[2])
        target = os.path.join(into, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data[offset:offset + size])
        offset += size + 1
    return True


def written_lines(git_dir: str, before: str, after: str, path: str) -> set:
    """Lines of the file after the fix that the fix added or changed."""
    diff = subprocess.run(["git", "-C", git_dir, "diff", "-U0", before, after, "--", path],
                          capture_output=True, text=True, errors="replace").stdout
    lines = set()
    for match in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff, re.M):
        start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
        lines.update(range(start, start + count))
    return lines


def lint_file(folder: str, path: str, scope: List[str]) -> List[Any]:
    """Findings in `path` when the scope (the package, as `npu-graph lint PACKAGE` would be run) is linted:
    a region in another module of the package may reach the file."""
    target = os.path.join(folder, path)
    report = lint_paths([os.path.join(folder, s) for s in scope], lang="en")
    return [f for f in report.findings if os.path.normpath(f.path) == os.path.normpath(target)]


def evaluate_pair(pair: Dict[str, Any], mirrors: str) -> Dict[str, Any]:
    result = {"name": pair["name"], "url": pair["url"], "rule": pair["rule"], "line": pair["line"]}
    git_dir = mirror(mirrors, pair["repo"])
    if git_dir is None:
        return dict(result, status="skipped", note=f"no mirror of {pair['repo']}")
    scope = [pair.get("package") or os.path.dirname(pair["file"]) or pair["file"]]
    lint_scope = pair.get("lint") or scope
    with tempfile.TemporaryDirectory(prefix="eval-lint-") as folder:
        before, after = os.path.join(folder, "before"), os.path.join(folder, "after")
        exported = pair.get("export") or scope
        if not (export(git_dir, pair["before"], exported, before) and export(git_dir, pair["after"], exported, after)):
            return dict(result, status="skipped", note="commit or path not in the mirror")
        flagged = [f for f in lint_file(before, pair["file"], lint_scope)
                   if f.rule == pair["rule"] and f.line == pair["line"]]
        fixed_lines = written_lines(git_dir, pair["before"], pair["after"], pair["file"])
        codes = {f.code for f in flagged}
        remaining = [f for f in lint_file(after, pair["file"], lint_scope)
                     if f.rule == pair["rule"] and (f.code in codes or f.line in fixed_lines)]
    result.update(before_flagged=bool(flagged), after_clean=not remaining,
                  status="ok" if flagged and not remaining else "missed",
                  chain=[s.text for s in flagged[0].chain] if flagged else [],
                  remaining=[f"{f.line} {f.rule} {f.code}" for f in remaining])
    return result


def evaluate_files(entry: Dict[str, Any], mirrors: str) -> Dict[str, Any]:
    result: Dict[str, Any] = {"name": entry["name"], "repo": entry["repo"], "commit": entry["commit"]}
    git_dir = mirror(mirrors, entry["repo"])
    if git_dir is None:
        return dict(result, status="skipped", note=f"no mirror of {entry['repo']}")
    with tempfile.TemporaryDirectory(prefix="eval-lint-") as folder:
        if not export(git_dir, entry["commit"], entry["export"], folder):
            return dict(result, status="skipped", note="commit or path not in the mirror")
        targets = [os.path.join(folder, p) for p in entry["lint"]]
        expanded = [t for pattern in targets for t in (sorted(_glob(pattern)) or [pattern])]
        report = lint_paths(expanded, lang="en")
        reviewed: Dict[str, Dict[str, str]] = entry.get("reviewed") or {}
        findings = []
        for finding in report.findings:
            key = f"{os.path.relpath(finding.path, folder)}:{finding.line}:{finding.rule}"
            review = reviewed.get(key)
            findings.append({"key": key, "certainty": finding.certainty, "message": finding.message,
                             "verdict": review["verdict"] if review else "UNREVIEWED",
                             "why": review["why"] if review else ""})
        lines = sum(_count_lines(p) for p in expanded if os.path.isfile(p)) + sum(
            _count_lines(os.path.join(d, n)) for p in expanded if os.path.isdir(p)
            for d, _, names in os.walk(p) for n in names if n.endswith(".py"))
    result.update(status="ok", files=report.files_checked, lines=lines, regions=report.regions, findings=findings,
                  stale_reviews=sorted(set(reviewed) - {f["key"] for f in findings}))
    return result


def _glob(pattern: str) -> List[str]:
    import glob

    return glob.glob(pattern)


def _count_lines(path: str) -> int:
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(HERE, "lint_eval.yaml"))
    parser.add_argument("--mirrors", default=os.environ.get("NPU_GRAPH_MIRRORS", "/work/.mirror"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import yaml

    with open(args.data, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    pairs = [evaluate_pair(p, args.mirrors) for p in data.get("pairs") or []]
    files = [evaluate_files(e, args.mirrors) for e in data.get("real_files") or []]
    if args.json:
        print(json.dumps({"pairs": pairs, "real_files": files}, ensure_ascii=False, indent=2))
    else:
        print("(a) before/after pairs of real fixing changes")
        for pair in pairs:
            mark = {"ok": "ok    ", "missed": "MISSED", "skipped": "skip  "}[pair["status"]]
            print(f"  {mark} {pair['rule']} {pair['name']}  {pair['url']}")
            if pair["status"] == "missed":
                print(f"         before flagged: {pair['before_flagged']}, after clean: {pair['after_clean']} {pair['remaining']}")
            elif pair["status"] == "skipped":
                print(f"         {pair['note']}")
        done = [p for p in pairs if p["status"] != "skipped"]
        print(f"  → {sum(p['status'] == 'ok' for p in done)} of {len(done)} pairs: flagged before at the fixed line, "
              f"clean after ({len(pairs) - len(done)} skipped)")
        print("\n(b) whole real files that run correctly under capture")
        totals = {"files": 0, "lines": 0, "UNREVIEWED": 0, **{v: 0 for v in VERDICTS}}
        for entry in files:
            if entry["status"] == "skipped":
                print(f"  skip   {entry['name']}: {entry['note']}")
                continue
            verdicts = [f["verdict"] for f in entry["findings"]]
            print(f"  {entry['name']}: {entry['files']} files, {entry['lines']} lines, {entry['regions']} captured regions, "
                  f"{len(verdicts)} findings ({', '.join(f'{verdicts.count(v)} {v}' for v in VERDICTS)})")
            for finding in entry["findings"]:
                print(f"      {finding['verdict']:<13} {finding['key']}  {finding['why']}")
            for key in entry["stale_reviews"]:
                print(f"      (review of {key} matches no finding any more)")
            totals["files"] += entry["files"]
            totals["lines"] += entry["lines"]
            for verdict in verdicts:
                totals[verdict if verdict in totals else "UNREVIEWED"] += 1
        print(f"  → {totals['files']} files, {totals['lines']} lines: {totals['false_alarm']} false alarms, "
              f"{totals['true_positive']} real hazards, {totals['unconfirmed']} unconfirmed, "
              f"{totals['intended']} intended failures, {totals['UNREVIEWED']} unreviewed")
    unreviewed = sum(f["verdict"] not in VERDICTS for e in files if e["status"] == "ok" for f in e["findings"])
    return 1 if unreviewed else 0


if __name__ == "__main__":
    raise SystemExit(main())
