"""The causes a report lists beside a known match, or instead of one, come from one ranking of three weak
sources (diagnose/causes.py): a partial match, similar words in the knowledge base, and the causes the
nearest public reports concluded."""
from __future__ import annotations

import pathlib
import re

import pytest
import yaml

from npu_graph_skill.core.model import Candidate
from npu_graph_skill.diagnose import causes, reference
from npu_graph_skill.diagnose.engine import diagnose
from npu_graph_skill.diagnose.match import KNOWN
from npu_graph_skill.diagnose.phase import Vote, decide

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "corpus"
# vllm-ascend PR 3862 (dev): DeepSeek under TorchAir loses accuracy because the TorchAir op patch missed the
# RMSNorm branch that one torch_npu version takes. Its words partly match the accuracy-drop pattern
# P-REP-013; its thread concluded P-REP-016 (a TorchAir op patch that misses a branch).
AGREED = "vllm-ascend-3862"


def _judged(case_id: str):
    text = yaml.safe_load((CORPUS / f"{case_id}.yaml").read_text(encoding="utf-8"))["error_text"]
    with reference.held_out([case_id]):  # judged as a report the index has never seen
        return diagnose(text=text, lang="en")


def test_a_cause_two_sources_agree_on_comes_before_a_partial_match_alone():
    report = _judged(AGREED)
    assert report.novel
    ids = [c.id for c in report.candidates]
    assert ids[0] == "P-REP-016"
    first = report.candidates[0].matched
    assert any(m.startswith("similar words:") for m in first)
    assert any(m.startswith("concluded in similar public reports:") for m in first)
    # the pattern the words match in part is still listed, below the agreed cause, with its quoted line
    partial = next(c for c in report.candidates if c.id == "P-REP-013")
    assert ids.index("P-REP-013") > 0 and partial.evidence


def test_a_listed_cause_never_scores_like_a_known_match():
    report = _judged(AGREED)
    assert report.candidates and all(c.score < KNOWN for c in report.candidates)
    assert report.confidence < 0.5


def _listed(phase: str, score: float, pattern_id: str) -> Candidate:
    return Candidate(id=pattern_id, title=pattern_id, score=score, phase=phase)


def test_the_likeliest_causes_vote_half_as_heavy_as_the_other_signs():
    signs = [Vote("replay", 0.3, 1, "words of replay"), Vote("capture", 0.1, 2, "a capture frame")]
    listed = [_listed("compile", 0.3, "P-CMP-029"), _listed("compile", 0.1, "P-CMP-010"), _listed("replay", 0.2, "P-REP-012")]
    votes = causes.cause_votes(listed, signs)
    weights = {v.phase: v.weight for v in votes}
    assert weights == {"compile": round(0.5 * 0.4 * 0.4 / 0.6, 3), "replay": round(0.5 * 0.4 * 0.2 / 0.6, 3)}
    assert decide(signs + votes)[0] == "replay"  # the signs still decide when they are clear
    assert "P-CMP-029, P-CMP-010" in next(v.why for v in votes if v.phase == "compile")


def test_with_no_other_sign_the_causes_name_the_phase_and_settings_still_count():
    listed = [_listed("memory", 0.2, "P-MEM-002")]
    assert decide(causes.cause_votes(listed, []))[0] == "memory"
    settings = [Vote("capture", 0.2, 3, "setting", fallback=True)]
    votes = causes.cause_votes(listed, settings)
    assert all(v.fallback for v in votes)  # a non-fallback vote would silence the settings
    assert decide(settings + votes)[0] == "capture"
    assert causes.cause_votes([], settings) == []


# vllm-ascend PR 10763 (dev): MTP's drafter dummy run fails a FULL decode capture with a TypeError, and
# then update_graph_params() is called on an attention backend that has none. The update-path pattern
# P-UPD-010 matches its words; the thread concluded a drafter whose capture metadata is incomplete
# (P-CAP-025), which only the similar words and a similar report name.
KNOWN_MATCH = "vllm-ascend-10763"


def test_after_a_known_match_the_other_causes_come_from_the_same_ranking():
    report = _judged(KNOWN_MATCH)
    ids = [c.id for c in report.candidates]
    assert not report.novel and ids[0] == "P-UPD-010"
    assert "P-CAP-025" in ids[1:3]
    second = report.candidates[ids.index("P-CAP-025")]
    assert second.score < KNOWN and any(m.startswith("similar words:") for m in second.matched)


def test_the_patterns_words_are_cached_and_a_damaged_cache_is_rebuilt(monkeypatch, tmp_path):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(causes, "_WORDS", None)
    query = "capture failed: the drafter's attention metadata has no positions_cpu"
    first = causes._similar_words(query)
    files = list(tmp_path.glob(f"{causes.WORDS_CACHE_PREFIX}*.marshal"))
    assert first and len(files) == 1
    monkeypatch.setattr(causes, "_WORDS", None)
    assert causes._similar_words(query) == first  # read back from the file: the same ranking
    files[0].write_bytes(files[0].read_bytes()[:100])  # cut short
    monkeypatch.setattr(causes, "_WORDS", None)
    assert causes._similar_words(query) == first


def test_a_novel_report_says_what_to_try_first_for_its_likeliest_causes():
    from npu_graph_skill.knowledge.loader import load_knowledge

    knowledge = load_knowledge()
    report = _judged(AGREED)
    first, second = report.candidates[0].id, report.candidates[1].id
    short = report.fix["short_term"]
    assert short.startswith("No known pattern matches")
    assert short.index(f"(1) {first}") < short.index(f"(2) {second}") and "(4)" not in short
    assert " ".join(knowledge.pattern(first).fix_short["en"].split())[:40] in short  # its first step, quoted
    assert "missing materials" in short  # what to collect is still said
    text = yaml.safe_load((CORPUS / f"{AGREED}.yaml").read_text(encoding="utf-8"))["error_text"]
    with reference.held_out([AGREED]):
        zh = diagnose(text=text, lang="zh").fix["short_term"]
    assert zh.startswith("没有已知模式完全匹配") and f"(1) {first}" in zh


def test_a_known_match_keeps_its_own_fix():
    from npu_graph_skill.knowledge.loader import load_knowledge

    report = _judged(KNOWN_MATCH)
    assert report.fix["short_term"] == load_knowledge().pattern(report.candidates[0].id).fix_short["en"]


def test_the_report_says_which_sources_listed_each_cause():
    import io

    from npu_graph_skill.core.render import Style
    from npu_graph_skill.diagnose.report import render_markdown, render_text

    report = _judged(AGREED)
    text = render_text(report, Style(io.StringIO()))
    line = next(row for row in text.splitlines() if row.strip().startswith("Candidates:"))
    assert f"{report.candidates[0].id} (" in line and "similar words + similar reports" in line
    assert "matched in part" in line  # the partial match of the accuracy-drop pattern
    assert "| listed by |" in render_markdown(report)
    known = _judged(KNOWN_MATCH)
    assert "its matchers" in render_markdown(known)


def test_a_data_parallel_launch_alone_is_not_evidence_that_the_ranks_disagree():
    # P-REP-019's cause is ranks that disagree on the step's size or mode; most DP deployments never meet it,
    # so a DP launch with graph mode and an unrelated error must not vote for it, match it in part, rank it first
    # or move the phase to replay. (Public reports of DP launches that concluded it and the pattern's words may
    # still list it lower down, saying so; none of its own matchers may.)
    launch = diagnose(text="Launched with vllm serve --data-parallel-size 4 and FULL_DECODE_ONLY graphs.\n"
                           "KeyError: 'attn_metadata'", lang="en")
    assert not any("P-REP-019" in v["why"] for v in launch.evidence_summary["phase_votes"])
    listed = {c.id: c for c in launch.candidates}
    assert launch.candidates[0].id != "P-REP-019" and launch.phase != "replay"
    assert "P-REP-019" not in listed or all(
        m.startswith((causes.BY_WORDS, causes.BY_REPORTS)) for m in listed["P-REP-019"].matched)
    differ = diagnose(text="With data parallel size 2 and FULL_DECODE_ONLY, the DP ranks pick different padded "
                           "token counts for the same step and the MoE all-to-all hangs.", lang="en")
    assert not differ.novel and differ.candidates[0].id == "P-REP-019"


def test_a_cause_is_listed_with_how_much_the_input_resembles_its_reports():
    import io

    from npu_graph_skill.core.render import Style
    from npu_graph_skill.diagnose.report import render_text

    report = _judged(AGREED)
    reasons = [m for c in report.candidates for m in c.matched if m.startswith(causes.BY_RESEMBLANCE)]
    assert reasons and all(re.search(r"cosine 0\.\d\d$", m) for m in reasons)
    line = next(row for row in render_text(report, Style(io.StringIO())).splitlines() if "Candidates:" in row)
    assert "its reports as a whole" in line


def test_a_description_ranks_the_same_causes_with_a_worker_prefix_on_every_line():
    """vLLM prints `(Worker_TP3 pid=4242) ERROR 03-12 10:11:12 [multiproc_executor.py:611] ` before every line
    it relays: the prefix is the log's layout, and the line it turns into a log event must not count twice."""
    text = yaml.safe_load((CORPUS / "sglang-1421.yaml").read_text(encoding="utf-8"))["error_text"]
    prefixed = "\n".join(f"(Worker_TP3 pid=4242) ERROR 03-12 10:11:12 [multiproc_executor.py:611] {line}"
                         for line in text.split("\n"))
    with reference.held_out(["sglang-1421"]):
        plain, logged = diagnose(text=text, lang="en"), diagnose(text=prefixed, lang="en")
    assert logged.phase == plain.phase
    assert [c.id for c in logged.candidates[:3]] == [c.id for c in plain.candidates[:3]]


@pytest.mark.parametrize("case_id", ["ascend-op-plugin-4616", "vllm-53406"])
def test_a_description_ranks_the_same_causes_inside_a_chinese_request_for_help(case_id):
    """A Chinese user wraps the paste in a request ("运行的时候遇到下面的报错，麻烦大家帮忙看一下"). Its bigrams across
    word boundaries (的时, 的报) are rare in reports mostly in English and used to pull other reports in
    (ascend-op-plugin-4616 ranked P-CMP-003 first; vllm-53406 another third cause)."""
    text = yaml.safe_load((CORPUS / f"{case_id}.yaml").read_text(encoding="utf-8"))["error_text"]
    wrapped = "运行的时候遇到下面的报错，麻烦大家帮忙看一下：\n```\n" + text + "\n```\n谢谢！"
    with reference.held_out([case_id]):
        plain, asked = diagnose(text=text, lang="en"), diagnose(text=wrapped, lang="en")
    assert asked.phase == plain.phase
    assert [c.id for c in asked.candidates[:3]] == [c.id for c in plain.candidates[:3]]
