"""The routing corpus (benchmarks/route_corpus) is what Gate 0 is measured on: real public requests,
well formed, kept apart from the words the router was written from, and routed at the bar the issue
set on the development split."""
from __future__ import annotations

import pathlib
import re
from collections import Counter

import pytest

from npu_graph_skill.skill.routing import SUB_SKILLS
from conftest import load_benchmark

REPO = pathlib.Path(__file__).resolve().parents[1]
ROUTES = set(SUB_SKILLS) | {"vague"}


def _module(name: str):
    return load_benchmark(name)


@pytest.fixture(scope="module")
def questions():
    return _module("eval_route").load_questions()


def test_the_corpus_is_large_bilingual_and_well_formed(questions):
    assert len(questions) >= 100
    ids = [q["id"] for q in questions]
    assert len(ids) == len(set(ids))
    langs = Counter(q["lang"] for q in questions)
    assert min(langs["zh"], langs["en"]) >= 0.4 * len(questions)
    for q in questions:
        assert q["route"] in ROUTES and q.get("secondary") in (None, *SUB_SKILLS), q["id"]
        assert q.get("secondary") != q["route"], q["id"]
        assert q["url"].startswith("https://github.com/"), q["id"]
        assert bool(re.search(r"[\u4e00-\u9fff]", q["question"])) == (q["lang"] == "zh"), q["id"]
    assert {q["route"] for q in questions} == ROUTES


def test_no_corpus_request_is_a_request_the_router_was_written_from(questions):
    written_from = (REPO / "src" / "npu_graph_skill" / "skill" / "routing.yaml").read_text(encoding="utf-8")
    written_from += (REPO / "tests" / "test_route.py").read_text(encoding="utf-8")
    for q in questions:
        assert q["question"] not in written_from, q["id"]


def test_moved_cases_are_test_cases_with_a_reason(questions):
    split = _module("corpus_split")
    moved = split.moved_to_dev(REPO / "benchmarks" / "route_corpus")
    ids = {q["id"] for q in questions}
    for case_id, reason in moved.items():
        assert case_id in ids and split.hashed_split(case_id) == "test" and reason.strip(), case_id


def test_development_requests_are_routed_at_the_bar(questions, tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    evaluation = _module("eval_route")
    moved = _module("corpus_split").moved_to_dev(evaluation.CORPUS)
    result = evaluation.evaluate(evaluation.select(questions, "dev", moved, include_moved=False))
    assert result["overall"]["n"] >= 70
    assert result["overall"]["accuracy"] >= 0.95, result["misses"]
    assert result["by_route"]["vague"]["accuracy"] == 1.0  # thin requests are asked back, never guessed
