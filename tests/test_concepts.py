"""The concept notes: every note loads and validates, the topics the expert must cover are there,
the facts that correct the design brief are stated, and the loader rejects broken notes."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from npu_graph_skill.knowledge.concepts import (
    CONCEPTS_DIR, ConceptError, anchor_problems, line_range, load_concepts, note_problems, parse_note,
)

# The topics issue 5 asks the notes to cover.
REQUIRED_TOPICS = {
    "lifecycle", "capture-begin", "capture-end", "replay", "reset-teardown", "capture-modes", "memory-pool",
    "graph-tree", "update-mechanism", "make-graphed-callables", "multi-stream-capture", "conditional-nodes",
    "host-functions", "super-kernel", "logging-switches", "capture-constraints",
}


@pytest.fixture(scope="module")
def notes():
    return {note.id: note for note in load_concepts()}


def test_every_note_loads_and_validates(notes):
    files = sorted(f[:-3] for f in os.listdir(CONCEPTS_DIR) if f.endswith(".md"))
    assert sorted(notes) == files
    for note in notes.values():
        assert note_problems(note, stem=note.id) == [], note.id


def test_the_required_topics_are_covered(notes):
    assert REQUIRED_TOPICS <= set(notes)


def test_every_note_is_bilingual_throughout(notes):
    for note in notes.values():
        for part in (note.title, note.summary, note.body):
            assert re.search(r"[\u4e00-\u9fff]", part["zh"]), note.id
            assert re.search(r"[A-Za-z]{4,}", part["en"]), note.id
        # the two sections cite the same source lines: a fact added in one language only is a defect
        zh_refs = set(re.findall(r"\b\d{2,4}-\d{2,4}\b", note.body["zh"]))
        en_refs = set(re.findall(r"\b\d{2,4}-\d{2,4}\b", note.body["en"]))
        assert zh_refs == en_refs, (note.id, zh_refs ^ en_refs)


def test_every_anchor_is_well_formed_and_versioned(notes):
    for note in notes.values():
        for anchor in note.anchors:
            assert anchor_problems(anchor) == [], (note.id, anchor)
            assert "@" in anchor["version"]


def test_capture_begin_lists_its_checks_in_source_order(notes):
    body = notes["capture-begin"].body["en"]
    checks = ["TASK_QUEUE_ENABLE", "pin_memory_expandable_segments", "already owns a captured graph",
              "ExternalStream", "non-default stream", "aclmdlRICaptureBegin", "aclmdlRICaptureGetInfo"]
    positions = [body.index(c) for c in checks]
    assert positions == sorted(positions)
    assert any(a["line"] == "240-340" and a["path"].endswith("NPUGraph.cpp") for a in notes["capture-begin"].anchors)


def test_the_notes_correct_the_design_brief(notes):
    logging = notes["logging-switches"]
    assert "TORCH_NPU_GRAPHS_LOG_LEVEL" in logging.summary["en"] and "not exist" in logging.summary["en"]
    assert "TORCH_NPU_GRAPHS_LOG_LEVEL" in logging.summary["zh"] and "不存在" in logging.summary["zh"]
    for text in ("+aclgraph", "TORCH_LOGS=cudagraphs", "TORCH_NPU_LOGS_FILTER"):
        assert text in logging.body["en"] and text in logging.body["zh"]
    constraints = notes["capture-constraints"].body["en"]
    assert "graphs.py:359" in constraints  # the brief's wrong raise site, named and corrected
    assert "allowed" in constraints and "private pool" in constraints  # allocation during capture is fine
    assert "any stream" in constraints  # replay is not tied to the capture stream
    assert "240-348" in notes["capture-begin"].body["en"]


def test_capture_modes_names_all_three_modes_and_the_default(notes):
    body = notes["capture-modes"].body["en"]
    for mode in ('"global"', "thread_local", "relaxed", "Unknown capture error mode"):
        assert mode in body


def test_symbol_anchors_name_their_function(notes):
    for note in notes.values():
        for anchor in note.anchors:
            if anchor.get("symbol") and "::" in anchor["symbol"]:
                assert anchor["path"].endswith((".cpp", ".h")), (note.id, anchor)


def test_related_ids_exist_when_the_knowledge_base_is_there(notes):
    try:
        from npu_graph_skill.knowledge.loader import load_knowledge
    except ImportError:
        pytest.skip("knowledge loader not present")
    knowledge = load_knowledge()
    known = {p.id for p in knowledge.patterns} | {c.id for c in knowledge.constraints} | set(notes)
    for note in notes.values():
        assert set(note.related) <= known, (note.id, set(note.related) - known)


# -- the loader refuses broken notes -------------------------------------------------------------

GOOD = """---
id: sample
title: {zh: 示例, en: Sample}
summary: {zh: 一句话。, en: One line.}
tags: [capture]
anchors:
  - {repo: Ascend/pytorch, path: torch_npu/csrc/core/npu/NPUGraph.cpp, line: "270-274", version: master@9e73e708, note: check}
related: []
---

## 中文

中文正文。

## English

English text.
"""


def test_a_good_note_parses():
    note = parse_note(GOOD, "sample.md")
    assert note.body == {"zh": "中文正文。", "en": "English text."}
    assert note_problems(note, "sample") == []


@pytest.mark.parametrize("broken, why", [
    (GOOD.replace("---\nid: sample", "id: sample", 1), "no YAML frontmatter"),
    (GOOD.replace("tags: [capture]\n", "tags: [capture\n"), "not valid YAML"),
    (GOOD.replace("related: []\n", ""), "lacks related"),
])
def test_unparseable_notes_name_the_file(broken, why):
    with pytest.raises(ConceptError) as info:
        parse_note(broken, "sample.md")
    assert "sample.md" in str(info.value) and why in str(info.value)


@pytest.mark.parametrize("broken, why", [
    (GOOD.replace("## 中文\n\n中文正文。\n", ""), "body lacks its 'zh' text"),
    (GOOD.replace("## English\n\nEnglish text.\n", ""), "body lacks its 'en' text"),
    (GOOD.replace("en: One line.", "en: ''"), "summary lacks its 'en' text"),
    (GOOD.replace('line: "270-274"', 'line: "274-270"'), "N <= M"),
    (GOOD.replace("version: master@9e73e708", "version: master"), "must look like master@9e73e708"),
    (GOOD.replace("path: torch_npu", "path: /abs/torch_npu"), "relative"),
    (GOOD.replace("repo: Ascend/pytorch", "repo: someone/fork"), "is not one of"),
    (GOOD.replace("  - {repo", "  - {nope: 1}\n  - {repo"), "lacks 'repo'"),
    (GOOD.replace("id: sample", "id: Sample_Note"), "lower-case"),
    (GOOD.replace("zh: 示例", "zh: Sample"), "written in Chinese"),
])
def test_invalid_notes_are_reported(broken, why):
    problems = note_problems(parse_note(broken, "sample.md"), "sample")
    assert any(why in p for p in problems), problems


def test_a_broken_note_in_a_directory_fails_loading_with_its_name(tmp_path):
    (tmp_path / "sample.md").write_text(GOOD, encoding="utf-8")
    (tmp_path / "other.md").write_text(GOOD.replace("id: sample", "id: sample2"), encoding="utf-8")
    with pytest.raises(ConceptError, match="other.md: id 'sample2' differs from the file name 'other'"):
        load_concepts(str(tmp_path))


def test_line_range():
    assert line_range("270") == (270, 270)
    assert line_range(" 240-340 ") == (240, 340)
    assert line_range("340-240") is None and line_range("0") is None and line_range("a-b") is None


# -- optional: anchors against a real Ascend/pytorch git history ---------------------------------

def test_anchors_exist_at_their_commit():
    """Set NPU_GRAPH_PYTORCH_GIT to an Ascend/pytorch clone (bare is fine) to check that every
    anchored file exists at the anchor's commit and is long enough for its line range."""
    git_dir = os.environ.get("NPU_GRAPH_PYTORCH_GIT")
    if not git_dir:
        pytest.skip("set NPU_GRAPH_PYTORCH_GIT to an Ascend/pytorch clone to check anchors against the source")
    lengths = {}
    for note in load_concepts():
        for anchor in note.anchors:
            if anchor["repo"] != "Ascend/pytorch":
                continue
            key = (anchor["version"].rpartition("@")[2], anchor["path"])
            if key not in lengths:
                shown = subprocess.run(["git", "--git-dir", git_dir, "show", f"{key[0]}:{key[1]}"],
                                       capture_output=True, text=True, errors="replace")
                lengths[key] = len(shown.stdout.splitlines()) if shown.returncode == 0 else -1
            assert lengths[key] >= line_range(anchor["line"])[1], (note.id, anchor)
