"""The knowledge base: every entry loads, validates, cites a source, and its real examples make it
the top match — while no other pattern's example does."""
from __future__ import annotations

import pathlib
import re
import sys

import pytest

from npu_graph_skill.diagnose.engine import diagnose
from npu_graph_skill.knowledge.codes import lookup, normalize
from npu_graph_skill.knowledge.loader import build_knowledge, load_knowledge
from npu_graph_skill.knowledge.prefilter import may_match, required_literals
from npu_graph_skill.knowledge.schema import KnowledgeError, parse_pattern

KNOWLEDGE = load_knowledge()
CORPUS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "corpus"
PATTERNS = KNOWLEDGE.patterns
MESSAGES = {m.id: m for m in KNOWLEDGE.messages}


def example_text(example: dict, shared_cases_by_id) -> str:
    if "text" in example:
        return example["text"]
    if "message" in example:
        text = MESSAGES[example["message"]].example
        for key, value in (example.get("fill") or {}).items():
            text = text.replace(f"<{key}>", value)
        return text
    case = shared_cases_by_id().get(example["case"])
    if case is None:
        pytest.skip(f"case {example['case']} needs ../shared/data/cases")
    return case["error_text"]


@pytest.fixture(scope="module")
def cases_by_id(request):
    def get():
        from conftest import find_shared_data
        import yaml

        root = find_shared_data()
        paths = sorted((root / "cases").glob("*.yaml")) if root is not None else []
        paths += sorted(CORPUS.glob("*.yaml"))  # the dev split of the corpus (see the test below)
        return {c["id"]: c for c in (yaml.safe_load(p.read_text(encoding="utf-8")) for p in paths) if isinstance(c, dict) and "id" in c}
    cache = {}

    def cached():
        if "v" not in cache:
            cache["v"] = get()
        return cache["v"]
    return cached


def test_knowledge_is_big_enough_and_covers_every_phase():
    assert len(PATTERNS) >= 35
    assert {p.phase for p in PATTERNS} == {"capture", "replay", "memory", "update", "compile", "environment"}
    assert len(KNOWLEDGE.messages) == 484
    assert len(KNOWLEDGE.codes) > 800


def test_every_pattern_cites_sources_and_anchor_lines_are_real_numbers():
    for pattern in PATTERNS:
        assert pattern.anchors or pattern.references, pattern.id
        for anchor in pattern.anchors:
            assert re.fullmatch(r"\d+(-\d+)?", anchor["line"]), (pattern.id, anchor)
            assert anchor["version"], pattern.id
        for message_id in re.findall(r"M-\d{3}", " ".join(a.get("note", "") for a in pattern.anchors)):
            assert message_id in MESSAGES, (pattern.id, message_id)


def test_ranked_causes_name_existing_patterns():
    ids = {p.id for p in PATTERNS}
    for pattern in PATTERNS:
        assert set(pattern.ranked_causes()) <= ids, (pattern.id, set(pattern.ranked_causes()) - ids)


def test_message_anchors_agree_with_the_messages_table():
    """An anchor that names a message (M-nnn) must point at that message's file."""
    for pattern in PATTERNS:
        for anchor in pattern.anchors:
            for message_id in re.findall(r"M-\d{3}", anchor.get("note", "")):
                assert MESSAGES[message_id].file == anchor["path"], (pattern.id, message_id)


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.id for p in PATTERNS])
def test_each_example_makes_its_pattern_the_top_match(pattern, cases_by_id):
    for example in pattern.examples:
        text = example_text(example, cases_by_id)
        report = diagnose(text=text, lang="en")
        top = next((c.id for c in report.candidates if c.kind == "pattern"), None)
        assert top == pattern.id, f"{pattern.id}: example {example} → top {top} ({[c.id for c in report.candidates]})"
        assert report.phase == pattern.phase
        assert not report.novel


@pytest.mark.parametrize("pattern", [p for p in PATTERNS if p.negatives], ids=[p.id for p in PATTERNS if p.negatives])
def test_near_miss_negatives_stay_below_the_known_threshold(pattern):
    from npu_graph_skill.diagnose.match import KNOWN

    for negative in pattern.negatives:
        report = diagnose(text=negative["text"], lang="en")
        score = next((c.score for c in report.candidates if c.id == pattern.id), 0.0)
        assert score < KNOWN, f"{pattern.id} scores {score} on its near miss ({negative['why']})"


def test_examples_from_the_corpus_are_dev_cases_only():
    """Knowledge is written from the dev split; a test case may serve only once moved to dev."""
    sys.path.insert(0, str(CORPUS.parent))
    from corpus_split import moved_to_dev, split_of

    moved = moved_to_dev(CORPUS)
    corpus_ids = {p.stem for p in CORPUS.glob("*.yaml")}
    for pattern in PATTERNS:
        for example in pattern.examples:
            if example.get("case") in corpus_ids:
                assert split_of(example["case"], moved) == "dev", (pattern.id, example["case"])


def test_a_broken_pattern_is_a_clear_error():
    good = {"id": "P-CAP-999", "phase": "capture", "layer": "L2", "root_layer": "L1", "fix_in": "user_code",
            "title": {"en": "t", "zh": "t"}, "root_cause": {"en": "r", "zh": "r"}, "trigger": {"en": "t", "zh": "t"},
            "fix_short": {"en": "f", "zh": "f"}, "fix_long": {"en": "f", "zh": "f"},
            "verification": {"en": ["v"], "zh": ["v"]},
            "matchers": [{"type": "message", "regex": "boom", "weight": 1.0}],
            "anchors": [{"repo": "Ascend/pytorch", "path": "x.cpp", "line": "1", "version": "master"}],
            "examples": [{"text": "boom", "source": "test"}]}
    assert parse_pattern(good, "t.yaml").id == "P-CAP-999"
    for broken, message in [
        ({**good, "id": "P-REP-999"}, "family"),
        ({**good, "title": {"en": "only english"}}, "zh and en"),
        ({**good, "matchers": [{"type": "message", "regex": "(", "weight": 1}]}, "bad regex"),
        ({**good, "anchors": [{"repo": "r", "path": "p", "line": "around 270", "version": "v"}]}, "N or N-M"),
        ({**good, "examples": []}, "real example"),
        ({**good, "fix_in": "somewhere"}, "fix_in"),
        ({**good, "negatives": [{"text": "a near miss"}]}, "near miss"),
        ({**good, "matchers": [{"type": "message", "regex": "boom", "weight": 1.0, "reworded": "no"}]}, "reworded"),
        ({**good, "matchers": [{"type": "code", "code": "107027", "weight": 1.0, "reworded": False}]}, "reworded"),
    ]:
        with pytest.raises(KnowledgeError, match=message):
            parse_pattern(broken, "t.yaml")


def test_duplicate_ids_are_refused(tmp_path):
    import shutil
    from npu_graph_skill.knowledge.loader import KNOWLEDGE_DIR

    root = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR, root, ignore=shutil.ignore_patterns("*.py", "__pycache__", "concepts"))
    capture = (root / "patterns" / "capture.yaml").read_text(encoding="utf-8")
    (root / "patterns" / "zz_copy.yaml").write_text(capture, encoding="utf-8")
    with pytest.raises(KnowledgeError, match="duplicate pattern id"):
        build_knowledge(root)


def test_constraints_link_real_patterns_and_record_where_the_brief_is_wrong():
    ids = {p.id for p in PATTERNS}
    assert len(KNOWLEDGE.constraints) >= 6
    for constraint in KNOWLEDGE.constraints:
        assert set(constraint.patterns) <= ids
    wrong = [c for c in KNOWLEDGE.constraints if c.truth and "wrong" in c.truth["en"].lower()]
    assert len(wrong) >= 3  # allocation in capture, same-stream replay, dynamic shapes via update


@pytest.mark.parametrize("query,normalized,name", [
    ("107027", "107027", "ACL_ERROR_RT_STREAM_CAPTURED"),
    ("0x1a213", "107027", "ACL_ERROR_RT_STREAM_CAPTURED"),
    ("0x7bc83", "507011", "ACL_ERROR_RT_MODEL_EXECUTE"),
    ("107003", "107003", "ACL_ERROR_RT_STREAM_CONTEXT"),
    ("ee1016", "EE1016", None),
    ("ERR00100", "ERR00100", None),
    ("InnerCode=0x0703001c", "0x703001c", "RT_ERROR_STREAM_CAPTURE_MODE_NOT_SUPPORT"),
    ("retCode=0x7020023", "0x7020023", "RT_ERROR_DRV_NO_RESOURCES"),
])
def test_code_lookup_accepts_every_printed_form(query, normalized, name):
    result = lookup(query)
    assert result.normalized == normalized
    assert result.entries
    if name:
        assert name in [e.name for e in result.entries]


def test_the_design_briefs_invented_codes_are_explained():
    assert not lookup("0x100000").entries
    assert "507011" in lookup("0x100000").note
    assert "107003" in lookup("0x100003").note


def test_code_roles_drive_the_first_error_rule():
    assert KNOWLEDGE.role_of("507011") == "consequence"
    assert KNOWLEDGE.role_of("ERR00100") == "wrapper"
    assert KNOWLEDGE.role_of("107030") == "noisy"
    assert KNOWLEDGE.role_of("107025") == "decisive"


def test_normalize_refuses_what_is_not_a_code():
    from npu_graph_skill.core.errors import UserError

    with pytest.raises(UserError):
        normalize("capture failed")


def test_knowledge_validates_strictly():
    """Every regex compiles (a normal run compiles them on demand only)."""
    strict = build_knowledge(strict=True)
    assert len(strict.patterns) == len(PATTERNS)


def test_prefilter_never_rules_out_a_real_match():
    """For every matcher and message, the literal texts it requires are really in its examples."""
    for entry in KNOWLEDGE.messages:
        text = entry.example.lower()
        if entry.pattern().search(entry.example):
            assert may_match(entry.literals(), text), entry.id
    for pattern in PATTERNS:
        for example in pattern.examples:
            text = example.get("text") or (MESSAGES[example["message"]].example if "message" in example else "")
            for matcher in pattern.matchers:
                if matcher.regex and text and matcher.pattern().search(text):
                    assert may_match(matcher.literals(), text.lower()), (pattern.id, matcher.regex)


def test_required_literals_cover_alternatives_and_skip_optional_parts():
    assert required_literals(r"Capture must end on the same stream it began on\.") == \
        ["capture must end on the same stream it began on."]
    assert required_literals(r"no stream resource|stream resources are insufficient") == \
        ["no stream resource", "stream resources are insufficient"]
    assert required_literals(r"(NPU|CUDA) graphs must be captured") == ["graphs must be captured"]
    assert required_literals(r"retCode=0x2[6a]\b|x") is None  # an alternative without a literal
    assert required_literals(r"not allow(ed)? to synchroni[sz]e") == ["to synchroni"]
    # a required group counts when each of its alternatives holds a literal; the most selective part wins
    assert required_literals(r"\b(AttributeError|KeyError)\b[^\n]{0,80}(graph|图模式)") == ["attributeerror", "keyerror"]
    assert required_literals(r"(NPU|MTP)\w*") == ["npu", "mtp"]
    assert required_literals(r"(captured?)+ on (the )?default stream") == ["default stream"]
    assert required_literals(r"(captured?)+ on (the )?\w+ stream") == ["capture"]  # a repeat's body is required once
    assert required_literals(r"(SP|DP) size") == ["size"] and required_literals(r"(SP|DP)\b") is None
    assert required_literals(r"(捕获|入图)失败") == ["失败"]  # one CJK character is three bytes: enough


def test_a_warm_start_reads_the_literals_and_a_start_without_cache_works_them_out_on_demand(tmp_path, monkeypatch):
    from npu_graph_skill.knowledge import prefilter

    def must_not_parse(regex):
        raise AssertionError(f"worked out again although the cache holds it: {regex}")

    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(prefilter, "_MEMO", {})
    cold = build_knowledge()
    assert len(list(tmp_path.glob("literals*.marshal"))) == 1
    monkeypatch.setattr(prefilter, "_MEMO", {})  # as in a new process
    with monkeypatch.context() as patch:
        patch.setattr(prefilter, "required_literals", must_not_parse)
        warm = build_knowledge()
        assert [m.literals() for m in warm.messages] == [m.literals() for m in cold.messages]
    monkeypatch.setenv("NPU_GRAPH_NO_CACHE", "1")
    monkeypatch.setattr(prefilter, "_MEMO", {})
    build_knowledge()
    assert not prefilter._MEMO  # no cache to keep them in: none worked out ahead of use


def test_prefilter_never_rules_out_a_match_in_real_reports():
    """Over a seventh of the corpus (its reports are what users paste), no regex the prefilter rules out matches."""
    import yaml

    regexes = [m.regex for p in PATTERNS for m in p.matchers if m.regex and m.type == "message"]
    regexes += [m.regex for m in KNOWLEDGE.messages] + [s.regex for s in KNOWLEDGE.signs if s.regex]
    compiled = [(regex, re.compile(regex, re.IGNORECASE), required_literals(regex)) for regex in regexes]
    texts = [yaml.safe_load(path.read_text(encoding="utf-8"))["error_text"] or ""
             for path in sorted(CORPUS.glob("*.yaml"))[::7]]
    assert len(texts) > 140 and sum(literals is not None for _, _, literals in compiled) > 0.9 * len(compiled)
    missed = [(regex, text[:60]) for text in texts for regex, pattern, literals in compiled
              if not may_match(literals, text.lower()) and pattern.search(text)]
    assert not missed
