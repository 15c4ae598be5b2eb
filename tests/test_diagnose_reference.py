"""When no pattern matches, what similar public reports concluded weighs in (diagnose/reference.py):
their phases vote beside the input's signs and the causes they concluded are ranked among the
candidates (diagnose/causes.py). The reference index is built from the corpus' dev split only and
shipped up to date."""
from __future__ import annotations

import json
import pathlib

import pytest
import yaml

from conftest import load_benchmark
from npu_graph_skill.diagnose import causes as causes_module, reference
from npu_graph_skill.diagnose.engine import diagnose

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "corpus"
# A prose report (vllm-ascend#8365): Eagle's acceptance rate drops under FULL_DECODE_ONLY. No pattern
# matches its words; the thread concluded stale draft-graph attention parameters (an update fault).
PROSE_REPORT = "vllm-ascend-8365"


def _report_text(case_id: str) -> str:
    return yaml.safe_load((CORPUS / f"{case_id}.yaml").read_text(encoding="utf-8"))["error_text"]


def test_the_shipped_index_is_current_and_holds_only_dev_reports():
    build = load_benchmark("build_reference")
    split = load_benchmark("corpus_split")
    assert build.render() == reference.REFERENCE_FILE.read_text(encoding="utf-8"), \
        "out of date: run python benchmarks/build_reference.py"
    moved = split.moved_to_dev(CORPUS)
    reports = json.loads(reference.REFERENCE_FILE.read_text(encoding="utf-8"))["reports"]
    assert len(reports) >= 200
    assert all(split.split_of(r["id"], moved) == "dev" for r in reports)
    assert all(r["url"].startswith("https://") and r["phase"] for r in reports)


def test_a_report_finds_itself_unless_it_is_held_out():
    text = _report_text(PROSE_REPORT)
    assert reference.similar_reports(text)[0].id == PROSE_REPORT
    with reference.held_out([PROSE_REPORT]):
        assert PROSE_REPORT not in [r.id for r in reference.similar_reports(text)]
    assert reference.similar_reports(text)[0].id == PROSE_REPORT  # the hold ends with the block


def test_common_words_alone_find_no_report():
    # near miss: graph-mode words every report uses are not a resemblance
    assert reference.similar_reports("graph mode error on npu, it failed, please help") == []


def test_the_words_of_a_reports_form_find_no_report():
    # near miss: an issue or PR template's headings and fields are in many reports of the index, not their faults
    text = "Motivation: the issue. Expected behavior, details and reproduction in python; test results in the PR summary."
    assert reference.similar_reports(text) == []


def test_the_concluded_shares_are_weighted_by_similarity():
    reports = [reference.SimilarReport(id=i, url="", title="", phase=p, layer="L1", patterns=pats, score=s, matched=[])
               for i, p, pats, s in (("a", "update", ["P-UPD-020"], 3.0), ("b", "replay", ["P-REP-012"], 1.0))]
    assert reference.concluded(reports, "phase") == [("update", 0.75), ("replay", 0.25)]
    assert reference.concluded(reports, "patterns")[0] == ("P-UPD-020", 0.75)


def test_when_no_pattern_fits_the_similar_reports_decide_the_phase_and_name_causes(monkeypatch):
    text = _report_text(PROSE_REPORT)
    with reference.held_out([PROSE_REPORT]):  # judged as a report the index has never seen
        report = diagnose(text=text, lang="en")
    assert report.novel and report.phase == "update"
    whys = [v["why"] for v in report.evidence_summary["phase_votes"]]
    assert any("similar public reports concluded update" in w for w in whys)
    assert "P-UPD-020" in [c.id for c in report.candidates[:3]]
    assert any(m.startswith("concluded in similar public reports") for c in report.candidates for m in c.matched)
    # without the reports (the nearest ones and the causes' centroids) the signs alone miss the phase:
    # the reports made the difference
    monkeypatch.setattr(reference, "similar_reports", lambda query, limit=8: [])
    monkeypatch.setattr(causes_module, "resemblance", lambda query: {})
    assert diagnose(text=text, lang="en").phase != "update"


def test_a_matched_pattern_is_not_second_guessed_by_similar_reports():
    text = ("RuntimeError: Cannot copy between CPU and NPU tensors during NPU graph capture unless the CPU tensor "
            "is pinned.")
    report = diagnose(text=text, lang="en")
    assert not report.novel
    assert not any("similar public reports" in v["why"] for v in report.evidence_summary["phase_votes"])


def test_a_missing_index_does_not_break_a_diagnosis(monkeypatch, tmp_path):
    monkeypatch.setattr(reference, "REFERENCE_FILE", tmp_path / "absent.json")
    monkeypatch.setattr(reference, "_INDEX", None)
    report = diagnose(text=_report_text(PROSE_REPORT), lang="en")
    assert report.candidates  # the other signs still give candidates
    assert not any("similar public reports" in v["why"] for v in report.evidence_summary["phase_votes"])


@pytest.mark.parametrize("fmt", [0, 2])
def test_an_index_of_another_format_is_refused_in_one_line(monkeypatch, tmp_path, fmt):
    path = tmp_path / "reference_reports.json"
    path.write_text(json.dumps({"format": fmt, "reports": [], "index": {}}), encoding="utf-8")
    monkeypatch.setattr(reference, "REFERENCE_FILE", path)
    monkeypatch.setattr(reference, "_INDEX", None)
    with pytest.raises(ValueError, match="format"):
        reference.similar_reports("aclgraph capture failed with update_attn_params")


def test_a_novel_report_shows_the_nearest_public_threads_with_what_fixed_them():
    import io

    from npu_graph_skill.core.render import Style
    from npu_graph_skill.diagnose.report import render_markdown, render_text

    with reference.held_out([PROSE_REPORT]):
        report = diagnose(text=_report_text(PROSE_REPORT), lang="zh")
    shown = report.to_dict()["similar_reports"]
    assert 1 <= len(shown) <= 3 and PROSE_REPORT not in [r["id"] for r in shown]
    assert all(r["url"].startswith("https://github.com/") and r["fix"] for r in shown)
    text = render_text(report, Style(io.StringIO()))
    assert "相似的公开报告" in text and shown[0]["url"] in text and "修复: " in text
    assert f"[{shown[0]['id']}]({shown[0]['url']})" in render_markdown(report)


def test_a_matched_pattern_shows_only_threads_that_concluded_the_same_cause():
    text = _report_text("vllm-ascend-6002")  # 107030 in capture mode: P-CAP-002 matches
    report = diagnose(text=text, lang="en")
    assert not report.novel
    top = report.candidates[0].id
    assert report.similar_reports, "the corpus holds other threads of this cause"
    assert all(top in r["patterns"] for r in report.similar_reports)


def test_the_threads_of_one_cause_are_ordered_by_similarity():
    found = reference.similar_reports("capture failed: capture on the default stream is not allowed", limit=3,
                                      pattern="P-CAP-003")
    assert found and all("P-CAP-003" in r.patterns for r in found)
    assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)
    assert reference.similar_reports("capture on the default stream", pattern="P-NOT-000") == []


def test_a_pattern_page_lists_the_public_reports_that_concluded_it():
    import subprocess
    import sys

    seen = reference.reports_of("P-UPD-020")
    assert seen and all(r["url"].startswith("https://") for r in seen)
    assert PROSE_REPORT in [r["id"] for r in seen]
    backends = [r["backend"] for r in seen]
    assert backends == sorted(backends, key=lambda b: b != "npu")  # NPU reports first
    out = subprocess.run([sys.executable, "-m", "npu_graph_skill", "patterns", "P-UPD-020", "--lang", "en"],
                         capture_output=True, text=True, check=True).stdout
    assert f"public reports that concluded it ({len(seen)})" in out and seen[0]["url"] in out
    # a labeller working blind asks for the page without them: the rest of the page is the same
    blind = subprocess.run([sys.executable, "-m", "npu_graph_skill", "patterns", "P-UPD-020", "--lang", "en",
                            "--no-reports"], capture_output=True, text=True, check=True).stdout
    assert "public reports that concluded it" not in blind and seen[0]["url"] not in blind
    assert out.startswith(blind.rstrip("\n"))


def test_threads_that_concluded_are_shown_before_those_that_did_not():
    from npu_graph_skill.diagnose.engine import _reports_to_show

    def report(i, concluded):
        return reference.SimilarReport(id=i, url=f"https://x/{i}", title=i, phase="replay", layer="L1",
                                       patterns=[], score=1.0, matched=[], fix="f", concluded=concluded)

    shown = _reports_to_show([report("open", False), report("fixed-a", True), report("fixed-b", True)])
    assert [r["id"] for r in shown] == ["fixed-a", "fixed-b", "open"]
    assert shown[2]["concluded"] is False


def test_the_index_is_read_back_from_a_marshal_copy_and_a_damaged_copy_is_parsed_again(monkeypatch, tmp_path):
    # the copy saves part of every diagnosis' start-up; it must hold exactly the shipped JSON
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    shipped = json.loads(reference.REFERENCE_FILE.read_text(encoding="utf-8"))
    from npu_graph_skill.core.cache import shipped_json

    assert shipped_json(str(reference.REFERENCE_FILE), "reference-") == shipped
    copies = list(tmp_path.glob("reference-*.marshal"))
    assert len(copies) == 1
    from npu_graph_skill.core import cache

    def no_json(handle):
        raise AssertionError("parsed the JSON although a copy was there")

    with monkeypatch.context() as patch:
        patch.setattr(cache.json, "load", no_json)
        assert shipped_json(str(reference.REFERENCE_FILE), "reference-") == shipped  # read back from the copy
    copies[0].write_bytes(b"\x00damaged")
    assert shipped_json(str(reference.REFERENCE_FILE), "reference-") == shipped
    monkeypatch.setenv("NPU_GRAPH_NO_CACHE", "1")
    copies[0].unlink()
    assert shipped_json(str(reference.REFERENCE_FILE), "reference-") == shipped and not list(tmp_path.glob("*.marshal"))


# --------------------------------------------------------------------------------------------
# Resemblance: the input against all the reports of each cause taken together (a centroid)
# --------------------------------------------------------------------------------------------

# pytorch#124582 is the only report of the index that concluded P-CAP-023 (a captured kernel's
# arguments hold a host pointer): its own words resemble that cause most, and nothing else does when
# it is held out.
ONLY_REPORT, ITS_CAUSE = "pytorch-124582", "P-CAP-023"


def test_a_report_resembles_the_reports_of_its_cause_most():
    cosines = reference.resemblance(_report_text(ONLY_REPORT))
    assert max(cosines, key=cosines.get) == ITS_CAUSE
    with reference.held_out([PROSE_REPORT]):  # a report with other reports of its cause: still found
        cosines = reference.resemblance(_report_text(PROSE_REPORT))
    assert "P-UPD-020" in sorted(cosines, key=cosines.get, reverse=True)[:3]


def test_a_held_out_report_leaves_the_sum_of_its_cause():
    with reference.held_out([ONLY_REPORT]):
        assert ITS_CAUSE not in reference.resemblance(_report_text(ONLY_REPORT))
    assert ITS_CAUSE in reference.resemblance(_report_text(ONLY_REPORT))  # the hold ends with the block


def test_one_rare_word_is_no_resemblance():
    # near miss: "npu" is rarer than the graph-mode words every report uses, but alone it names no cause
    assert reference.resemblance("graph mode error on npu, it failed, please help") == {}


def test_the_sums_are_read_back_from_the_cache_as_they_were_built(monkeypatch, tmp_path):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(reference, "_CENTROIDS", None)
    text = _report_text(PROSE_REPORT)
    built = reference.resemblance(text)
    assert len(list(tmp_path.glob("centroids-*.marshal"))) == 1
    monkeypatch.setattr(reference, "_CENTROIDS", None)
    monkeypatch.setattr(reference._Centroids, "_build", lambda self: pytest.fail("built again despite the cache"))
    assert reference.resemblance(text) == built
