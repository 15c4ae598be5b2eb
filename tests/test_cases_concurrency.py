"""Several writers at once, and a writer killed mid-write (issue 7, "done when")."""
from __future__ import annotations

import json
import multiprocessing
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from npu_graph_skill.cases.case import validate
from npu_graph_skill.cases.catalogue import load_catalogue
from npu_graph_skill.cases.history import history_is_current
from npu_graph_skill.cases.location import resolve_kb_dir
from npu_graph_skill.core.files import PAUSE_ENV
from npu_graph_skill.cases.store import case_stats, init_kb

DATA = pathlib.Path(__file__).parent / "data" / "cases"
BASE = json.loads((DATA / "report-capture-memcpy.json").read_text(encoding="utf-8"))
# Distinct failures differ in words, not numbers (numbers are masked by the signature).
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"]


def _report(word: str, pid: int) -> dict:
    report = json.loads(json.dumps(BASE))
    report["error"] = f"(Worker_TP{pid % 8} pid={pid}) ERROR RuntimeError: {word} stream failed during capture"
    return report


def _temp_files(root: pathlib.Path) -> list:
    return [str(p) for p in root.rglob("*.tmp")]


def _record_when_all_ready(kb: str, word: str, pid: int, barrier, results) -> None:
    from npu_graph_skill.cases.redact import Redactor
    from npu_graph_skill.cases.store import record_case

    barrier.wait(timeout=30)
    result = record_case(_report(word, pid), kb_dir=kb, redactor=Redactor())
    results.put((result.action, result.case_id))


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl locking is POSIX")
def test_sixteen_concurrent_writers(tmp_path):
    kb = tmp_path / "kb"
    jobs = [(word, 1000 + i) for i, word in enumerate(WORDS)] + [(w, 2000 + i) for i, w in enumerate(WORDS[:4])]
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(len(jobs))
    results = ctx.Queue()
    procs = [ctx.Process(target=_record_when_all_ready, args=(str(kb), word, pid, barrier, results)) for word, pid in jobs]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * len(jobs)
    outcomes = [results.get(timeout=5) for _ in jobs]
    assert sorted(action for action, _ in outcomes).count("created") == 12
    assert sorted(action for action, _ in outcomes).count("repeat") == 4

    stats = case_stats(kb_dir=str(kb))
    assert (stats.cases, stats.occurrences) == (12, 16)
    assert len(list((kb / "cases").glob("*.yaml"))) == 12
    assert len(list((kb / "occurrences").glob("*.yaml"))) == 4
    for path in (kb / "cases").glob("*.yaml"):
        assert validate(yaml.safe_load(path.read_text(encoding="utf-8"))) == []
    history = (kb / "history.md").read_text(encoding="utf-8")
    assert "**12** 个案例 cases · **16** 次记录 occurrences" in history
    assert history_is_current(history, load_catalogue(resolve_kb_dir(str(kb))))
    assert len(re.findall(r"^\| \d{4}-\d{2}-\d{2} \| \[C-", history, re.M)) == 12
    assert _temp_files(kb) == []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_killed_writer_leaves_no_partial_case(tmp_path):
    kb = tmp_path / "kb"
    init_kb(str(kb))  # so the first file the writer writes is the case itself
    report_file = tmp_path / "report.json"
    report_file.write_text(json.dumps(BASE), encoding="utf-8")
    env = {**os.environ, PAUSE_ENV: "60"}
    cmd = [sys.executable, "-m", "npu_graph_skill", "kb", "record", str(report_file), "--yes", "--kb", str(kb)]
    writer = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not _temp_files(kb / "cases") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _temp_files(kb / "cases"), "the writer never reached the rename"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
    # killed between the temp write and the rename: no case, only its hidden temp file, which readers ignore
    assert list((kb / "cases").glob("*.yaml")) == []
    assert case_stats(kb_dir=str(kb)).cases == 0
    # the lock died with the writer: the next record goes through at once and sweeps the temp file away
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert len(list((kb / "cases").glob("*.yaml"))) == 1
    assert _temp_files(kb) == []
    assert case_stats(kb_dir=str(kb)).cases == 1
