"""Render the skill bundle: the entry SKILL.md, five sub-skills, their references and knowledge/.

The result is a list of files in memory; `install` writes them, `export` zips them, `validate`
checks what was written. Rendering is a pure function of the templates, the routing table and
the knowledge data, so two installs of one version produce the same bytes.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Dict, List, Optional, Sequence

from npu_graph_skill import __version__
from npu_graph_skill.core.errors import UserError
from npu_graph_skill.skill import references as ref
from npu_graph_skill.skill.markdown import as_dict, both, fill, frontmatter, generated_note, table
from npu_graph_skill.skill.resources import read_resource
from npu_graph_skill.skill.routing import SUB_SKILLS, load_table

SKILL_NAME = "npu-graph-skill"
GENERATED = "generated"  # rewritten on install unless the user edited it
USER = "user"  # written once when absent, never overwritten: the user's knowledge base

# Which references each sub-skill owns (kept one level below its SKILL.md).
DIAGNOSTICS_REFERENCES = ("known-patterns.md", "error-code-map.md", "constraints.md",
                          "diagnostic-checklist.md", "report-template.md")


@dataclasses.dataclass
class BundleFile:
    path: str  # relative to the skill folder, forward slashes
    data: bytes
    owner: str = GENERATED


@dataclasses.dataclass
class KnowledgeSources:
    """What the references are rendered from; `notes` says what could not be loaded."""

    patterns: Sequence[Any] = ()
    codes: Sequence[Any] = ()
    constraints: Sequence[Any] = ()
    concepts: Sequence[Any] = ()
    public_reports: Dict[str, List[Dict[str, Any]]] = dataclasses.field(default_factory=dict)  # pattern → reports
    notes: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Bundle:
    files: List[BundleFile]
    notes: List[str]

    def file(self, path: str) -> BundleFile:
        for item in self.files:
            if item.path == path:
                return item
        raise KeyError(path)

    def text(self, path: str) -> str:
        return self.file(path).data.decode("utf-8")


def load_sources() -> KnowledgeSources:
    """The shipped knowledge: patterns, codes, constraints (knowledge.loader) and concept notes."""
    sources = KnowledgeSources()
    try:
        from npu_graph_skill.knowledge.loader import load_knowledge
    except ImportError as exc:
        sources.notes.append(f"knowledge loader unavailable ({exc}); references rendered without patterns, codes, constraints")
    else:
        try:
            knowledge = load_knowledge()
        except Exception as exc:  # noqa: BLE001 - a broken knowledge base must not install a half-empty skill
            raise UserError(f"the knowledge data of this installation does not load, so the skill cannot be rendered: "
                            f"{exc.__class__.__name__}: {exc}") from None
        sources.patterns = list(getattr(knowledge, "patterns", []) or [])
        sources.codes = list(getattr(knowledge, "codes", []) or [])
        sources.constraints = list(getattr(knowledge, "constraints", []) or [])
    try:
        from npu_graph_skill.diagnose.reference import reports_by_pattern

        sources.public_reports = reports_by_pattern()
    except (ImportError, OSError, ValueError) as exc:
        sources.notes.append(f"reference index unavailable ({exc}); pattern pages list no public reports")
    try:
        from npu_graph_skill.knowledge.concepts import load_concepts
    except ImportError as exc:
        sources.notes.append(f"concept loader unavailable ({exc}); concepts.md lists none")
    else:
        try:
            sources.concepts = list(load_concepts())
        except Exception as exc:  # noqa: BLE001 - same rule as the patterns
            raise UserError(f"the concept notes of this installation do not load: {exc.__class__.__name__}: {exc}") from None
    return sources


@functools.lru_cache(maxsize=None)
def _yaml_resource(name: str) -> Dict[str, Any]:
    import yaml

    return yaml.safe_load(read_resource(name))


def skill_identity() -> Dict[str, Any]:
    return _yaml_resource("skills.yaml")


def skill_frontmatter(name: str) -> str:
    identity = skill_identity()
    metadata = {"version": __version__, "generated-by": "npu-graph skill install"}
    if name != SKILL_NAME:
        metadata["parent"] = SKILL_NAME
    return frontmatter({
        "name": name,
        "description": identity["skills"][name]["description"],
        "license": identity["license"],
        "compatibility": identity["compatibility"],
        "metadata": metadata,
    })


# --------------------------------------------------------------------------------------------
# The entry SKILL.md
# --------------------------------------------------------------------------------------------

def render_routing_table(lang_order: Sequence[str] = ("zh", "en")) -> str:
    """Gate 0 as the agent reads it: the same rows `npu-graph route` scores against."""
    routing = load_table()
    rows = []
    for name, skill in routing.skills.items():
        intents = [g for g in skill.groups if g.kind == "intent" and g.weight > 0
                   and any(s.kind == "term" for s in g.signals)]
        terms = [s.text for s in intents[0].signals if s.kind == "term"] if intents else []  # the main intent, listed first
        signals = [t for t in terms if not t.isascii()][:5] + [t for t in terms if t.isascii()][:6]
        examples = "; ".join(f"“{e}”" for lang in lang_order for e in skill.examples[lang])
        rows.append([f"[{name}]({name}/SKILL.md)", both(skill.summary), examples, ", ".join(signals),
                     both(skill.first_step)])
    return table(["子技能 Sub-skill", "处理 Handles", "典型请求 Typical requests", "意图信号 Intent cues",
                  "先执行 Start with"], rows)


def render_ask_back() -> str:
    """What to ask when a request is too thin to route (the router's own questions)."""
    routing = load_table()
    lines = [f"  - {routing.ask_back['default']['zh']}", f"    {routing.ask_back['default']['en']}",
             f"  - {routing.ask_back['refers_back']['zh']}", f"    {routing.ask_back['refers_back']['en']}"]
    return "\n".join(lines)


def render_command_table() -> str:
    """Every command of the CLI, from its own table, so the list cannot drift from the tool."""
    from npu_graph_skill.cli import COMMANDS

    return table(["命令 Command", "用途 Purpose"], [[f"`npu-graph {name}`", help_text] for name, (_, help_text) in COMMANDS.items()])


DEPOSIT_COMMANDS = """```bash
npu-graph diagnose error.txt --json | npu-graph kb record - --yes --symptom error.txt --verified passed
npu-graph kb search "107025 capture_end"     # similar recorded cases, with their fixes
npu-graph kb rebuild                         # after a git merge of knowledge/: regenerate history.md
```

`kb record` 写入本项目已安装 skill 的 `knowledge/`（或 `--kb DIR`）；用户同意后才加 `--yes`，验证过才写 `--verified passed`。
`kb record` writes into the installed skill's `knowledge/` of this project (or `--kb DIR`); pass `--yes` only after the user agreed, `--verified passed` only after the verification ran."""


def render_references_list(sources: KnowledgeSources) -> str:
    items = [
        ("graph-mode-diagnostics/references/known-patterns.md", f"已知模式 {len(sources.patterns)} 条 · known patterns"),
        ("graph-mode-diagnostics/references/error-code-map.md", "错误码速查 · error-code map"),
        ("graph-mode-diagnostics/references/constraints.md", "捕获约束与常见误解 · capture constraints and misbeliefs"),
        ("graph-mode-diagnostics/references/diagnostic-checklist.md", "诊断材料清单 · diagnostic checklist"),
        ("graph-mode-diagnostics/references/report-template.md", "四段式报告模板 · report template"),
        ("graph-mode-expert/references/concepts.md", f"概念笔记 {len(sources.concepts)} 篇 · concept notes"),
        ("graph-log-analyzer/references/log-switches.md", "日志开关与位置 · log switches and locations"),
        ("graph-performance-profiling/references/perf-method.md", "性能分析方法 · performance method"),
        ("graph-mcp-integration/references/agents.md", "Agent 与 MCP 接入 · agents and MCP"),
        ("knowledge/CASE_TEMPLATE.md", "案例模板 · case template"),
        ("knowledge/history.md", "案例历史 · case history"),
    ]
    return "\n".join(f"- [{path}]({path}) — {text}" for path, text in items)


def render_entry_skill(sources: KnowledgeSources) -> str:
    phases = _yaml_resource("phases.yaml")
    body = fill(read_resource("templates/npu-graph-skill.md"), {
        "generated_note": generated_note(),
        "routing_table": render_routing_table(),
        "ask_back": render_ask_back(),
        "phase_table": ref.render_phase_table(phases, sources.patterns),
        "layer_table": ref.render_layer_table(),
        "deposit_commands": DEPOSIT_COMMANDS,
        "command_table": render_command_table(),
        "references_list": render_references_list(sources),
    })
    return skill_frontmatter(SKILL_NAME) + "\n" + body


def render_sub_skill(name: str, sources: KnowledgeSources) -> str:
    body = fill(read_resource(f"templates/{name}.md"), {
        "generated_note": generated_note(),
        "summary": both(load_table().skills[name].summary),
        "pattern_count": str(len(sources.patterns)),
        "concept_count": str(len(sources.concepts)),
    })
    return skill_frontmatter(name) + "\n" + body


# --------------------------------------------------------------------------------------------
# knowledge/ (the case knowledge base, shared with `npu-graph kb`)
# --------------------------------------------------------------------------------------------

def render_case_files() -> Dict[str, str]:
    """CASE_TEMPLATE.md and an empty history.md, as the case module writes them."""
    try:
        from npu_graph_skill.cases.catalogue import Catalogue
        from npu_graph_skill.cases.history import render_history, render_template
        from npu_graph_skill.cases.location import KbLocation
    except ImportError:  # the case module is optional for the bundle; keep a minimal pair
        return {"CASE_TEMPLATE.md": _FALLBACK_TEMPLATE, "history.md": _FALLBACK_HISTORY}
    empty = Catalogue(KbLocation(path="", source="skill"), [], {}, [], {})
    return {"CASE_TEMPLATE.md": render_template(), "history.md": render_history(empty)}


_FALLBACK_TEMPLATE = """# 案例模板 · CASE_TEMPLATE

症状原文引用；层级精确到函数 + 文件:行号；未匹配已知模式记为 NEW。
Quote the symptom verbatim; locate the layer down to function and file:line; an unmatched case is NEW.

- 症状 Symptom (verbatim):
- 环境 Environment (CANN, driver, torch, torch_npu, chip):
- 阶段 Phase:
- 层级 Layer (function, file:line):
- 根因 Root cause:
- 修复 Fix:
- 验证 Verification:
- 模式 Pattern: P-XXX-NNN or NEW
- 日期 Date:
- 标签 Tags:
"""

_FALLBACK_HISTORY = "# 案例历史 · Case history\n\n尚无案例 · No cases yet.\n"


# --------------------------------------------------------------------------------------------
# The whole bundle
# --------------------------------------------------------------------------------------------

def render_bundle(sources: Optional[KnowledgeSources] = None) -> Bundle:
    sources = sources if sources is not None else load_sources()
    phases = _yaml_resource("phases.yaml")
    texts: Dict[str, str] = {"SKILL.md": render_entry_skill(sources)}
    for name in SUB_SKILLS:
        texts[f"{name}/SKILL.md"] = render_sub_skill(name, sources)

    diag = "graph-mode-diagnostics/references/"
    texts[diag + "known-patterns.md"] = ref.render_known_patterns(sources.patterns)
    for phase, items in ref.by_phase(sources.patterns).items():
        texts[f"{diag}known-patterns/{phase}.md"] = ref.render_pattern_details(phase, items, sources.public_reports)
    texts[diag + "error-code-map.md"] = ref.render_error_code_map(sources.codes, sources.patterns)
    texts[diag + "error-code-map-more.md"] = ref.render_error_code_map_more(sources.codes)
    texts[diag + "constraints.md"] = ref.render_constraints(sources.constraints, sources.patterns)
    texts[diag + "diagnostic-checklist.md"] = ref.render_checklist(phases, sources.patterns)
    texts[diag + "report-template.md"] = _static_reference("report-template.md")

    expert = "graph-mode-expert/references/"
    texts[expert + "concepts.md"] = ref.render_concept_index(sources.concepts)
    for concept in sources.concepts:
        texts[f"{expert}concepts/{as_dict(concept)['id']}.md"] = ref.render_concept(concept)

    texts["graph-log-analyzer/references/log-switches.md"] = _static_reference("log-switches.md")
    texts["graph-performance-profiling/references/perf-method.md"] = _static_reference("perf-method.md")
    texts["graph-mcp-integration/references/agents.md"] = ref.render_agents(_yaml_resource("agents.yaml"))

    files = [BundleFile(path, text.encode("utf-8")) for path, text in texts.items()]
    for name, text in render_case_files().items():
        files.append(BundleFile(f"knowledge/{name}", text.encode("utf-8"), USER if name == "history.md" else GENERATED))
    files.sort(key=lambda f: f.path)
    return Bundle(files=files, notes=list(sources.notes))


def _static_reference(name: str) -> str:
    return fill(read_resource(f"templates/references/{name}"), {"generated_note": generated_note()})
