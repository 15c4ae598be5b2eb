"""Lint findings as diagnosis evidence: `npu-graph diagnose --source-file script.py`, and scripts the
traceback names when they can be read here. Real error texts from ../shared/data/cases."""
from __future__ import annotations

import json
import pathlib

from npu_graph_skill import api

DATA = pathlib.Path(__file__).parent / "data" / "lint"
SCRIPT = str(DATA / "diagnose" / "test.py")


def case_text(shared_cases, case_id):
    return next(c for c in shared_cases if c["id"] == case_id)["error_text"]


def test_source_file_findings_near_the_failing_line_become_evidence(shared_cases, run_cli, tmp_path):
    saved = tmp_path / "error.txt"
    saved.write_text(case_text(shared_cases, "seed-default-stream"), encoding="utf-8")  # frame: test.py line 26
    code, out, _ = run_cli("diagnose", str(saved), "--source-file", SCRIPT, "--json", "--lang", "en")
    report = json.loads(out)
    assert code == 0 and report["candidates"][0]["id"] == "P-CAP-003"
    lint = report["evidence_summary"]["lint"]
    assert [(f["rule"], f["line"], f["distance"]) for f in lint] == [("NGL007", 26, 0)]
    assert lint[0]["near"] == "/home/user/test.py:26" and lint[0]["pattern"] == "P-CAP-003"
    assert any(n.startswith("lint NGL007 (P-CAP-003, likely) at ") and n.endswith("(agrees with the top candidate)")
               for n in report["notes"])
    code, text, _ = run_cli("diagnose", str(saved), "--source-file", SCRIPT, "--lang", "zh")
    assert "lint NGL007（P-CAP-003，可能）" in text and "与首选候选一致" in text


def test_without_a_readable_script_the_report_is_unchanged(shared_cases):
    text = case_text(shared_cases, "seed-default-stream")
    report = api.diagnose(text=text, lang="en")
    assert "lint" not in report.evidence_summary and not any(n.startswith("lint ") for n in report.notes)


def test_a_file_named_in_the_traceback_is_found_without_being_given(shared_cases, tmp_path):
    script = tmp_path / "train.py"
    script.write_text((DATA / "rules" / "NGL001.py").read_text(encoding="utf-8"), encoding="utf-8")
    error = case_text(shared_cases, "pytorch-78549").splitlines()[-5:]  # the real CUDA capture error lines
    text = "\n".join([f'  File "{script}", line 12, in with_torch_npu_graph', "    b = x.tolist()"] + error)
    report = api.diagnose(text=text, lang="en")
    lint = report.evidence_summary["lint"]
    assert [(f["rule"], f["line"]) for f in lint][:3] == [("NGL001", 12), ("NGL001", 11), ("NGL001", 13)]
    assert all(f["distance"] <= 10 for f in lint)


def test_a_missing_source_file_is_bad_usage(run_cli):
    code, out, err = run_cli("diagnose", "-e", "error code is 107027", "--source-file", "no/such/script.py")
    assert code == 2 and out == "" and "--source-file no/such/script.py: no such file" in err
