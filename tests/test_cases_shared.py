"""The knowledge base on the real reports of ../shared/data/cases: every report recorded as a
case keeps its error codes through redaction, the same runtime failure reported by two projects
becomes one case with two occurrences, and each case is found again by its own error line."""
from __future__ import annotations

import re

import pytest

from npu_graph_skill.cases.redact import Redactor
from npu_graph_skill.cases.store import case_stats, get_case, record_case, search_cases

_DECISIVE = re.compile(r"Error|Exception|error code|runtime result|\bE[A-Z0-9]\d{4}\b|\bERR\d{5}\b|failed")
_CODES = re.compile(r"(?<![\w.])(?:[1-5]0\d{4}|E[A-Z0-9]\d{4}|ERR\d{5})(?![\w.])")


def _report(case: dict) -> dict:
    """A diagnosis report as the engine would hand it over (novel: the KB test does not depend on patterns)."""
    lines = [line for line in (case.get("error_text") or "").splitlines() if line.strip()]
    decisive = [line for line in lines if _DECISIVE.search(line)]
    return {"schema": "npu-graph-skill/diagnosis/1", "lang": "en", "error": (decisive or lines)[-1].strip(),
            "phase": str(case.get("phase") or "unknown").lower(), "layer": case.get("layer"),
            "root_layer": case.get("layer"), "novel": True, "candidates": [],
            "root_cause": {"direct": case.get("root_cause") or ""}, "fix": {"short_term": case.get("fix") or ""},
            "evidence_summary": {"versions": {k: v for k, v in (case.get("reported_versions") or {}).items() if v},
                                 "hardware": [case["hardware"]] if case.get("hardware") else [],
                                 "codes": sorted(set(_CODES.findall(case.get("error_text") or "")))}}


@pytest.fixture(scope="module")
def recorded(shared_cases, tmp_path_factory):
    kb = tmp_path_factory.mktemp("shared-kb")
    results = {}
    for case in shared_cases:
        if not (case.get("error_text") or "").strip():
            continue
        results[case["id"]] = record_case(_report(case), kb_dir=str(kb), symptom=case["error_text"],
                                          title=case.get("title"), redactor=Redactor())
    return kb, results


def test_every_real_report_is_recorded_and_counted(recorded):
    kb, results = recorded
    stats = case_stats(kb_dir=str(kb))
    assert stats.occurrences == len(results)
    assert stats.cases == len({r.case_id for r in results.values()})
    assert stats.history_current


def test_redaction_keeps_every_error_code_of_the_real_texts(recorded, shared_cases):
    kb, results = recorded
    for case in shared_cases:
        if case["id"] not in results or results[case["id"]].action != "created":
            continue
        symptom = get_case(results[case["id"]].case_id, kb_dir=str(kb)).case["symptom"]
        for code in set(_CODES.findall(case["error_text"])):
            assert code in symptom, f"{case['id']}: code {code} lost in redaction"


def test_same_runtime_failure_from_two_projects_is_one_case(recorded):
    _, results = recorded
    pair = ("llama.cpp-16586", "vllm-ascend-2567")  # both: "synchronize stream failed, runtime result = 107027"
    if not all(p in results for p in pair):
        pytest.skip("the two 107027 reports are not in this copy of the shared cases")
    assert results[pair[0]].case_id == results[pair[1]].case_id
    different = ("vllm-ascend-2629", "vllm-ascend-9691")  # begin capture failed: 207005 vs 207008
    if all(p in results for p in different):
        assert results[different[0]].case_id != results[different[1]].case_id


def test_each_case_is_found_by_its_own_error_line(recorded, shared_cases):
    kb, results = recorded
    misses = []
    for case in shared_cases:
        if case["id"] not in results:
            continue
        hits = search_cases(_report(case)["error"], kb_dir=str(kb), limit=3)
        if results[case["id"]].case_id not in [h.case_id for h in hits]:
            misses.append(case["id"])
    assert misses == []
