"""Two people record cases on their own clones and merge: git reports no conflict, the same
failure recorded on both sides counts once, and `kb rebuild` makes history.md whole again."""
from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

import pytest

from npu_graph_skill.cases.redact import Redactor
from npu_graph_skill.cases.store import case_stats, init_kb, rebuild, record_case

DATA = pathlib.Path(__file__).parent / "data" / "cases"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def git(cwd, *args):
    import os

    done = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def record(kb, name, error=None):
    report = json.loads((DATA / name).read_text(encoding="utf-8"))
    if error:
        report["error"] = error
    return record_case(report, kb_dir=str(kb), redactor=Redactor())


def test_parallel_additions_merge_without_conflict(tmp_path):
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    alice.mkdir()
    git(alice, "init", "-q")
    init_kb(str(alice / "kb"))
    git(alice, "add", "-A")
    git(alice, "commit", "-q", "-m", "empty knowledge base")
    git(tmp_path, "clone", "-q", str(alice), str(bob))

    same_a = record(alice / "kb", "report-capture-memcpy.json")
    record(alice / "kb", "report-novel-default-stream.json")
    git(alice, "add", "-A")
    git(alice, "commit", "-q", "-m", "alice's cases")

    same_b = record(bob / "kb", "report-capture-memcpy.json")  # the same failure, met by bob
    record(bob / "kb", "report-capture-memcpy.json", error="RuntimeError: event record failed, error code is 507009")
    git(bob, "add", "-A")
    git(bob, "commit", "-q", "-m", "bob's cases")

    git(alice, "pull", "-q", "--no-rebase", "--no-edit", str(bob), "HEAD")  # asserts: no conflict
    assert same_a.case_id != same_b.case_id  # two files, never the same name
    stats = case_stats(kb_dir=str(alice / "kb"))
    assert (stats.cases, stats.occurrences) == (3, 4)  # bob's repeat of alice's failure counts once
    assert not stats.history_current  # the union-merged history.md says it is stale ...
    assert rebuild(kb_dir=str(alice / "kb")).history_current  # ... until it is regenerated
    tracked = git(alice, "ls-files", "kb").split()
    assert "kb/history.md" in tracked and not any(n.endswith((".lock", ".index.json")) for n in tracked)
