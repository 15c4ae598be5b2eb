"""Candidate before/after pairs for benchmarks/lint_eval.yaml, mined from a git mirror's history.

A candidate is a commit whose message speaks of graphs, capture or host syncs, that removes a line
with a capture hazard, and where `npu-graph lint` flags a removed or changed line before the commit
and not after it (the same rule on the same code). The folders of the changed files are linted, at
the commit's parent and at the commit. Each candidate still needs reading by hand before it becomes
a pair: is it a capture fix, is the "after" really clean, which line is the fixed one.

    python benchmarks/mine_lint_pairs.py /work/.mirror/vllm-project+vllm-ascend/repo [--limit 200]

Prints `commit path:line RULE code` per candidate and a count; mirrors are read, never written.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from typing import List, Set

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval_lint import export  # noqa: E402

from npu_graph_skill.lint.engine import lint_paths  # noqa: E402

MESSAGE = r"cuda ?graph|npu ?graph|acl ?graph|aclgraph|capture|graph mode|reduce-overhead|host sync|d2h|graph break"
HAZARD = re.compile(r"^-[^-].*(\.item\(\)|\.tolist\(\)|\.cpu\(\)|torch\.tensor\(|nonzero\(|masked_select|"
                    r"synchronize\(\)|\.numpy\(\)|manual_seed|Generator\(|pin_memory|\[[^\]]*(mask|>|<|==)[^\]]*\])", re.M)
MAX_CHANGED_FILES = 40  # larger commits are refactors whose lint difference says little


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "-C", git_dir, *args], capture_output=True, text=True, errors="replace").stdout


def old_lines(git_dir: str, parent: str, commit: str, path: str) -> Set[int]:
    """Lines of the file before the commit that the commit removed or changed."""
    lines: Set[int] = set()
    for match in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+", git(git_dir, "diff", "-U0", parent, commit, "--", path), re.M):
        start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
        lines.update(range(start, start + count))
    return lines


def candidates(git_dir: str, commit: str) -> List[str]:
    parent = commit + "~1"
    if not HAZARD.search(git(git_dir, "show", "--format=", commit, "--", "*.py")):
        return []
    changed = [p for p in git(git_dir, "diff", "--name-only", parent, commit).split()
               if p.endswith(".py") and "test" not in p]
    if not changed or len(changed) > MAX_CHANGED_FILES:
        return []
    scope = sorted({os.path.dirname(p) or p for p in changed})
    found = []
    with tempfile.TemporaryDirectory(prefix="mine-lint-") as folder:
        before, after = os.path.join(folder, "before"), os.path.join(folder, "after")
        export(git_dir, parent, scope, before)
        export(git_dir, commit, scope, after)
        linted_before = [os.path.join(before, s) for s in scope if os.path.exists(os.path.join(before, s))]
        linted_after = [os.path.join(after, s) for s in scope if os.path.exists(os.path.join(after, s))]
        if not linted_before:
            return []
        findings_before = lint_paths(linted_before, lang="en").findings
        findings_after = lint_paths(linted_after, lang="en").findings if linted_after else []
        for path in changed:
            removed = old_lines(git_dir, parent, commit, path)
            was, now = os.path.join(before, path), os.path.join(after, path)
            kept = {(f.rule, f.code) for f in findings_after if os.path.normpath(f.path) == os.path.normpath(now)}
            found += [f"{commit} {path}:{f.line} {f.rule} {f.code}" for f in findings_before
                      if os.path.normpath(f.path) == os.path.normpath(was) and f.line in removed
                      and (f.rule, f.code) not in kept]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir", help="a git directory (a mirror: /work/.mirror/<owner>+<name>/repo)")
    parser.add_argument("--limit", type=int, default=0, help="look at the newest N matching commits only")
    args = parser.parse_args()
    if not os.path.isdir(args.git_dir):
        print(f"mine_lint_pairs: no such git directory: {args.git_dir}", file=sys.stderr)
        return 2
    commits = git(args.git_dir, "log", "--all", "--no-merges", "-i", "-E", f"--grep={MESSAGE}", "--format=%h").split()
    commits = commits[: args.limit] if args.limit else commits
    print(f"# {len(commits)} commits whose message matches", file=sys.stderr, flush=True)
    total = 0
    for number, commit in enumerate(commits, start=1):
        for line in candidates(args.git_dir, commit):
            print(line, flush=True)
            total += 1
        if number % 50 == 0:
            print(f"# {number}/{len(commits)} commits, {total} candidates", file=sys.stderr, flush=True)
    print(f"# {total} candidates in {len(commits)} commits", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
