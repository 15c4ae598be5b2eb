"""The rendered bundle: six spec-valid SKILL.md files, the routing section from the routing table,
references rendered from the knowledge data, and none of the design brief's known errors."""
from __future__ import annotations

import dataclasses
import re

import pytest
import yaml

from npu_graph_skill.skill import bundle as bundle_module
from npu_graph_skill.skill.bundle import SKILL_NAME, USER, render_bundle
from npu_graph_skill.skill.resources import read_resource
from npu_graph_skill.skill.routing import SUB_SKILLS, load_table
from npu_graph_skill.skill.validate import ALLOWED_KEYS, split_frontmatter
from skill_fakes import CONCEPTS, PATTERNS, fake_bundle, fake_sources

PHASE_TITLES = {"capture": "捕获阶段 · Capture", "replay": "重放阶段 · Replay"}
SKILL_FILES = ["SKILL.md"] + [f"{name}/SKILL.md" for name in SUB_SKILLS]
# What the design brief gets wrong (../shared/brief/CORRECTIONS.md): the skill must not repeat it.
BRIEF_ERRORS = ["0x100000", "0x100003", "MODEL_EXECUTE_FAILED", "TORCH_NPU_GRAPHS_LOG_LEVEL", "NPUGraph.cpp:240-348"]


@pytest.fixture(scope="module")
def bundle():
    return fake_bundle()


def frontmatter_of(text: str) -> dict:
    block, _ = split_frontmatter(text)
    return yaml.safe_load(block)


def test_the_bundle_has_the_entry_skill_five_sub_skills_and_the_knowledge_base(bundle):
    paths = {f.path for f in bundle.files}
    for path in SKILL_FILES + ["knowledge/CASE_TEMPLATE.md", "knowledge/history.md",
                               "graph-mode-diagnostics/references/known-patterns.md",
                               "graph-mode-diagnostics/references/error-code-map.md",
                               "graph-mode-diagnostics/references/constraints.md",
                               "graph-mode-diagnostics/references/diagnostic-checklist.md",
                               "graph-mode-expert/references/concepts.md",
                               "graph-mode-expert/references/concepts/replay.md"]:
        assert path in paths, path
    assert bundle.file("knowledge/history.md").owner == USER


@pytest.mark.parametrize("path", SKILL_FILES)
def test_every_skill_md_has_spec_frontmatter_named_after_its_folder(bundle, path):
    meta = frontmatter_of(bundle.text(path))
    folder = path.rsplit("/", 1)[0] if "/" in path else SKILL_NAME
    assert set(meta) <= set(ALLOWED_KEYS)
    assert meta["name"] == folder
    assert 0 < len(meta["description"]) <= 600
    assert "<" not in meta["description"] and ">" not in meta["description"]
    assert all(isinstance(v, str) for v in meta["metadata"].values())


def test_the_entry_description_carries_trigger_words_in_both_languages(bundle):
    description = frontmatter_of(bundle.text("SKILL.md"))["description"]
    for word in ("NPUGraph", "ACLGraph", "torch.npu.graph", "capture", "replay", "OOM", "TORCH_NPU_LOGS",
                 "图模式", "图捕获", "图重放"):
        assert word in description, word
    assert description.split()[0].endswith("s")  # third person: "Diagnoses ..."


def test_the_entry_skill_states_the_iron_law_and_the_workflow(bundle):
    text = bundle.text("SKILL.md")
    assert "NO FIX BEFORE THE PHASE AND THE LAYER ARE LOCATED" in text and "未定位到阶段和层级之前，不给修复方案" in text
    for section in ("问题概况 Overview", "根因分析 Root cause", "修复建议 Fix", "验证步骤 Verification",
                    "是否记录到知识库？[Y/n]", "python3 -m npu_graph_skill", "scripts/npu-graph.pyz"):
        assert section in text, section


def test_the_routing_section_is_rendered_from_the_routing_table(bundle, monkeypatch):
    text = bundle.text("SKILL.md")
    table = load_table()
    for name, skill in table.skills.items():
        assert f"[{name}]({name}/SKILL.md)" in text
        for example in skill.examples["zh"] + skill.examples["en"]:
            assert example in text
    changed = dataclasses.replace(table.skills["graph-log-analyzer"], examples={"zh": ["日志示例X"], "en": ["log example X"]})
    patched = dataclasses.replace(table, skills={**table.skills, "graph-log-analyzer": changed})
    monkeypatch.setattr(bundle_module, "load_table", lambda: patched)
    assert "日志示例X" in render_bundle(fake_sources()).text("SKILL.md")


def test_the_routing_section_tells_the_agent_what_to_ask_when_a_request_is_too_thin(bundle):
    gate = bundle.text("SKILL.md").split("## Gate 0", 1)[1].split("\n## ", 1)[0]
    for question in load_table().ask_back.values():
        assert question["zh"] in gate and question["en"] in gate
    for name, skill in load_table().skills.items():  # each row shows the sub-skill's main intent cues
        row = next(line for line in gate.splitlines() if line.startswith(f"| [{name}]"))
        first_intent = next(g for g in skill.groups if g.kind == "intent" and g.weight > 0)
        assert first_intent.signals[0].text in row


def test_the_phase_table_counts_the_known_patterns_of_each_phase(bundle):
    row = next(line for line in bundle.text("SKILL.md").splitlines() if line.startswith("| 捕获阶段 · Capture"))
    assert "| 1 ([known-patterns]" in row


def test_known_patterns_lists_every_pattern_with_phase_signature_and_fix(bundle):
    catalogue = bundle.text("graph-mode-diagnostics/references/known-patterns.md")
    for pattern in PATTERNS:
        phase_section = catalogue.split(f"## {PHASE_TITLES[pattern['phase']]}", 1)[1].split("\n## ", 1)[0]
        row = next(line for line in phase_section.splitlines() if line.startswith(f"| [{pattern['id']}]"))
        assert f"(known-patterns/{pattern['phase']}.md#{pattern['id'].lower()})" in row
        assert pattern["fix_short"]["en"] in row and pattern["fix_short"]["zh"] in row
        details = bundle.text(f"graph-mode-diagnostics/references/known-patterns/{pattern['phase']}.md")
        section = details.split(f"### {pattern['id']}", 1)[1].split("\n### ", 1)[0]
        assert f"**阶段 Phase**: {pattern['phase']}" in section
        assert pattern["root_cause"]["en"] in section and pattern["verification"]["zh"][0] in section
    row = next(line for line in catalogue.splitlines() if line.startswith("| [P-CAP-003]"))
    assert "message `NPU graphs must be captured on a non-default stream`" in row
    assert "ExternalStream" not in row  # a negative matcher is not a signature


def test_error_code_map_keeps_graph_relevant_codes_and_links_the_patterns_that_match_them(bundle):
    text = bundle.text("graph-mode-diagnostics/references/error-code-map.md")
    assert "`507011`" in text and "[P-REP-001](known-patterns/replay.md#p-rep-001)" in text
    assert "100001" not in text  # no graph-mode relevance: left to `npu-graph errcode`
    assert "EE1009" in bundle.text("graph-mode-diagnostics/references/error-code-map-more.md")


def test_constraints_show_the_misbelief_next_to_the_truth_and_link_patterns(bundle):
    text = bundle.text("graph-mode-diagnostics/references/constraints.md")
    assert "**常见误解 Misbelief**" in text and "replay may use any stream" in text
    assert "[P-CAP-003](known-patterns/capture.md#p-cap-003)" in text


def test_concept_notes_are_rendered_with_both_languages_and_indexed(bundle):
    note = bundle.text("graph-mode-expert/references/concepts/replay.md")
    assert "## 中文" in note and "English body." in note and "NPUGraph.cpp:270-274@master@9e73e708" in note
    assert f"[{CONCEPTS[0]['id']}](concepts/replay.md)" in bundle.text("graph-mode-expert/references/concepts.md")


def test_the_sub_skills_name_the_commands_they_run(bundle):
    expected = {
        "graph-mode-diagnostics": ["npu-graph doctor", "npu-graph diagnose", "npu-graph errcode", "npu-graph patterns"],
        "graph-mode-expert": ["npu-graph ask", "npu-graph code"],
        "graph-performance-profiling": ["npu-graph perf bench", "npu-graph perf trace", "npu-graph perf compare"],
        "graph-log-analyzer": ["npu-graph logs"],
        "graph-mcp-integration": ["npu-graph mcp", "npu-graph skill install"],
    }
    for name, commands in expected.items():
        text = bundle.text(f"{name}/SKILL.md")
        for command in commands:
            assert command in text, (name, command)


@pytest.mark.parametrize("path", SKILL_FILES)
def test_the_skill_texts_do_not_repeat_the_errors_of_the_design_brief(bundle, path):
    text = bundle.text(path)
    for wrong in BRIEF_ERRORS:
        assert wrong not in text, wrong


def test_the_hand_written_templates_do_not_repeat_the_errors_of_the_design_brief():
    for name in ("perf-method.md", "log-switches.md", "report-template.md"):
        text = read_resource(f"templates/references/{name}")
        for wrong in BRIEF_ERRORS:
            assert wrong not in text, (name, wrong)


def test_every_source_anchor_in_the_skill_texts_names_a_line(bundle):
    for path in SKILL_FILES:
        for anchor in re.findall(r"`([\w/.]+\.(?:cpp|py|h)):([^`@]*)@master`", bundle.text(path)):
            assert re.match(r"^\d+(-\d+)?$", anchor[1]), anchor


def test_rendering_is_deterministic():
    first, second = fake_bundle(), fake_bundle()
    assert [(f.path, f.data) for f in first.files] == [(f.path, f.data) for f in second.files]


def test_the_entry_skill_body_stays_under_500_lines(bundle):
    _, body = split_frontmatter(bundle.text("SKILL.md"))
    assert body.count("\n") < 500
