"""The skill's reference documents, rendered from the knowledge data.

Each function takes plain records (dataclasses with `to_dict()`, objects or dicts — whatever the
knowledge loader returns) and returns Markdown. Nothing here is hand-written knowledge: patterns,
codes, constraints and concepts come from `npu_graph_skill.knowledge`, the phase checklist from
`phases.yaml`, the agent table from `agents.yaml`.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from npu_graph_skill.core.model import LAYER_NAMES
from npu_graph_skill.core.render import FIX_IN_NAMES, PHASE_NAMES
from npu_graph_skill.skill.markdown import as_dict, both, bullets, generated_note, one_line, slug, table

PHASE_ORDER = ("capture", "replay", "memory", "update", "compile", "environment", "unknown")


def phase_title(phase: str) -> str:
    names = PHASE_NAMES.get(phase, {"zh": phase, "en": phase})
    return f"{names['zh']} · {names['en']}"


def layer_label(layer: Any) -> str:
    return str(layer or "").strip() or "-"


def anchor_text(anchor: Any) -> str:
    """`repo path:line@version (note)` from an Anchor, a dict or a ready string."""
    if isinstance(anchor, str):
        return anchor
    data = as_dict(anchor)
    head = f"{data.get('repo', '')} {data.get('path', '')}:{data.get('line', '')}@{data.get('version', '')}".strip()
    note = one_line(data.get("note", ""))
    return f"{head} ({note})" if note else head


def reference_text(reference: Any) -> str:
    if isinstance(reference, str):
        return reference
    data = as_dict(reference)
    title, url = one_line(data.get("title", "")), str(data.get("url", "")).strip()
    return f"{title} — {url}" if title and url else title or url


def by_phase(records: Iterable[Any]) -> Dict[str, List[Dict[str, Any]]]:
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for record in records:
        data = as_dict(record)
        groups.setdefault(str(data.get("phase") or "unknown"), []).append(data)
    return {phase: groups[phase] for phase in sorted(groups, key=_phase_rank)}


def _phase_rank(phase: str) -> int:
    return PHASE_ORDER.index(phase) if phase in PHASE_ORDER else len(PHASE_ORDER)


# --------------------------------------------------------------------------------------------
# known-patterns.md
# --------------------------------------------------------------------------------------------

def signature(matchers: Sequence[Any], limit: int = 4) -> List[str]:
    """The strongest positive matchers of a pattern, as a reader would search for them."""
    positive = [as_dict(m) for m in matchers or [] if float(as_dict(m).get("weight", 0) or 0) > 0]
    positive.sort(key=lambda m: -float(m.get("weight", 0)))
    shown: List[str] = []
    for matcher in positive[:limit]:
        kind = str(matcher.get("type") or matcher.get("kind") or "")
        value = (matcher.get("regex") or matcher.get("code") or matcher.get("name") or matcher.get("value") or "")
        if kind == "env" and matcher.get("value") is not None:
            value = f"{matcher.get('name')}={matcher.get('value')}"
        value = str(value).replace("`", "'")
        shown.append(f"{kind} `{value}`" if kind else f"`{value}`")
    return shown


def _fix_in(value: Any) -> str:
    return both(FIX_IN_NAMES.get(str(value), {"zh": str(value), "en": str(value)}))


def pattern_link(pattern_id: str, phase: str, base: str = "") -> str:
    """Markdown link to a pattern's full entry in known-patterns/PHASE.md (relative to `base`)."""
    return f"[{pattern_id}]({base}known-patterns/{phase}.md#{slug(pattern_id)})"


def pattern_phases(patterns: Sequence[Any]) -> Dict[str, str]:
    return {str(p.get("id")): str(p.get("phase") or "unknown") for p in (as_dict(x) for x in patterns)}


def link_patterns(ids: Iterable[str], phases: Mapping[str, str]) -> str:
    return ", ".join(pattern_link(i, phases[i]) if i in phases else str(i) for i in ids)


def render_known_patterns(patterns: Sequence[Any]) -> str:
    """The catalogue: one row per pattern with phase, layer, signature and short fix; the full
    entries (root cause, long fix, verification, anchors) live in known-patterns/PHASE.md."""
    grouped = by_phase(patterns)
    total = sum(len(items) for items in grouped.values())
    out = [
        "# 已知模式 · Known patterns", "", generated_note(), "",
        f"共 {total} 条，按阶段分组。先用 `npu-graph diagnose` 自动匹配；本表供人工对照，点 ID 看完整条目（根因、长期修复、验证、锚点）。",
        f"{total} patterns by phase. Let `npu-graph diagnose` match them first; this table is for checking by hand — "
        "follow an ID to the full entry (root cause, long-term fix, verification, anchors).",
        "`npu-graph patterns ID` 显示单条的全部字段。 `npu-graph patterns ID` shows every field of one.", "",
        "## 目录 · Contents", "",
    ]
    out += [f"- [{phase_title(phase)}](#{slug(phase_title(phase))}) ({len(items)})" for phase, items in grouped.items()]
    out.append("")
    for phase, items in grouped.items():
        rows = []
        for p in items:
            fix = p.get("fix_short") or {}
            rows.append([pattern_link(p["id"], phase), both(p.get("title")),
                         f"{layer_label(p.get('layer'))} → {layer_label(p.get('root_layer'))}",
                         "; ".join(signature(p.get("matchers") or [], limit=3)) or "-",
                         " / ".join(one_line(fix[lang]) for lang in ("zh", "en") if fix.get(lang))])
        out += [f"## {phase_title(phase)}", "",
                table(["ID", "标题 Title", "层级 Layer (报错 → 根因)", "特征 Signature", "修复 Fix"], rows), ""]
    return "\n".join(out).rstrip() + "\n"


def render_pattern_details(phase: str, items: Sequence[Any],
                           public_reports: Optional[Mapping[str, Sequence[Mapping[str, Any]]]] = None) -> str:
    """known-patterns/PHASE.md: every field of the patterns of one phase, and the public reports of
    the corpus that concluded each (`public_reports`: pattern id → reports)."""
    out = [f"# 已知模式 · Known patterns — {phase_title(phase)}", "", generated_note(), "",
           "[← 目录 · catalogue](../known-patterns.md)", ""]
    for p in (as_dict(x) for x in items):
        out += _pattern_section(p, (public_reports or {}).get(p["id"], ()))
    return "\n".join(out).rstrip() + "\n"


SHOWN_PUBLIC_REPORTS = 3


def _pattern_section(p: Mapping[str, Any], reports: Sequence[Mapping[str, Any]] = ()) -> List[str]:
    title = p.get("title") or {}
    out = [f"### {p['id']}", "", f"**{one_line(title.get('zh', ''))}** · {one_line(title.get('en', ''))}", ""]
    facts = [
        ("阶段 Phase", p.get("phase", "")),
        ("层级 Layer", f"{layer_label(p.get('layer'))} 报错 detected → {layer_label(p.get('root_layer'))} 根因 root cause"),
        ("修复位置 Fix in", _fix_in(p.get("fix_in"))),
        ("特征 Signature", "; ".join(signature(p.get("matchers") or [])) or "-"),
    ]
    out += [f"- **{name}**: {value}" for name, value in facts]
    for key, name in (("root_cause", "根因 Root cause"), ("fix_short", "修复 Fix"), ("fix_long", "长期 Long term")):
        texts = p.get(key) or {}
        if texts:
            out.append(f"- **{name}**:")
            out += [f"  - {one_line(texts[lang])}" for lang in ("zh", "en") if texts.get(lang)]
    locations = p.get("fix_locations") or []
    if locations:
        out.append("- **文件定位 Where**: " + "; ".join(f"`{one_line(x)}`" for x in locations))
    verification = p.get("verification") or {}
    steps = [(lang, step) for lang in ("zh", "en") for step in verification.get(lang, []) or []]
    if steps:
        out.append("- **验证 Verify**:")
        out += [f"  - {one_line(step)}" for _, step in steps]
    anchors = p.get("anchors") or []
    if anchors:
        out.append("- **源码锚点 Anchors**: " + "; ".join(f"`{anchor_text(a)}`" for a in anchors))
    references = p.get("references") or []
    if references:
        out.append("- **参考 References**: " + "; ".join(reference_text(r) for r in references))
    if reports:
        links = "; ".join(f"[{r['id']}]({r['url']})" for r in reports[:SHOWN_PUBLIC_REPORTS])
        more = f" (+{len(reports) - SHOWN_PUBLIC_REPORTS})" if len(reports) > SHOWN_PUBLIC_REPORTS else ""
        out.append(f"- **公开报告 Public reports**: {links}{more}")
    out.append("")
    return out


# --------------------------------------------------------------------------------------------
# error-code-map.md
# --------------------------------------------------------------------------------------------

CODE_KIND_TITLES = {
    "acl": "ACL 错误码 · ACL codes",
    "runtime": "运行时错误码 · runtime codes (107xxx, 207xxx, 507xxx)",
    "pta": "torch_npu ERR 码 · torch_npu ERR codes",
    "hccl": "HCCL 错误码 · HCCL codes",
    "aclnn": "aclnn 错误码 · aclnn codes",
    "ge": "GE 错误码 · GE codes",
    "ecode": "CANN E 码 · CANN E-codes",
    "inner": "运行时内部码 · runtime-internal codes (retCode=0x07...)",
    "driver": "驱动错误码 · driver codes",
}
# The families a user meets first go into error-code-map.md; the long tail into error-code-map-more.md.
MAIN_KINDS = ("acl", "runtime", "pta", "hccl", "aclnn", "ge")


def _first_source(source: Any) -> str:
    return one_line(str(source or "").split(" ; ")[0])


def _code_rows(codes: Sequence[Dict[str, Any]]) -> List[List[str]]:
    return [[f"`{c.get('code', '')}`", c.get("name", ""), c.get("meaning", ""), c.get("graph_mode", ""),
             _first_source(c.get("source"))] for c in codes]


def _codes_by_kind(codes: Sequence[Any]) -> Dict[str, List[Dict[str, Any]]]:
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for code in (as_dict(c) for c in codes):
        if one_line(code.get("graph_mode", "")):
            groups.setdefault(str(code.get("kind") or "other"), []).append(code)
    order = list(CODE_KIND_TITLES)
    return {k: groups[k] for k in sorted(groups, key=lambda k: order.index(k) if k in order else len(order))}


def pattern_codes(patterns: Sequence[Any]) -> Dict[str, List[str]]:
    """code → ids of the patterns that match on it (the codes that decide a diagnosis)."""
    found: Dict[str, List[str]] = {}
    for p in (as_dict(x) for x in patterns):
        for matcher in (as_dict(m) for m in p.get("matchers") or []):
            if (matcher.get("type") or matcher.get("kind")) == "code" and float(matcher.get("weight", 0) or 0) > 0:
                found.setdefault(str(matcher.get("code") or matcher.get("value")), []).append(str(p.get("id")))
    return found


_HEADER = ["码 Code", "名称 Name", "含义 Meaning", "图模式下 In graph mode", "来源 Source"]


def render_error_code_map(codes: Sequence[Any], patterns: Sequence[Any] = ()) -> str:
    """The codes that decide a diagnosis (those the known patterns match on) first, then every
    graph-relevant code of the families a user meets; the long tail lives in error-code-map-more.md."""
    groups = _codes_by_kind(codes)
    by_code = {str(c.get("code")): c for items in groups.values() for c in items}
    decisive = pattern_codes(patterns)
    phases = pattern_phases(patterns)
    main = sum(len(groups.get(k, [])) for k in MAIN_KINDS)
    out = [
        "# 错误码速查 · Error-code map", "", generated_note(), "",
        "看到错误码先查表；任何码都可以用 `npu-graph errcode CODE` 查询（包括本页没有列出的）。",
        "Look a code up here first; `npu-graph errcode CODE` explains any code, listed here or not.",
        "日志里数值码以十进制出现（`error code is 507011`）。 Logs print numeric codes in decimal (`error code is 507011`).", "",
        "## 决定诊断的错误码 · Codes the known patterns match on", "",
    ]
    rows = []
    for code in sorted(decisive):
        entry = by_code.get(code, {})
        links = link_patterns(decisive[code], phases)
        rows.append([f"`{code}`", entry.get("name", ""), entry.get("graph_mode", "") or entry.get("meaning", ""), links])
    out += [table(["码 Code", "名称 Name", "图模式下 In graph mode", "模式 Patterns"], rows) if rows else "-", ""]
    out += [f"## 全部图模式相关错误码 · All graph-relevant codes ({main})", "",
            "E 码、运行时内部码和驱动码见 [error-code-map-more.md](error-code-map-more.md)。",
            "E-codes, runtime-internal and driver codes are in error-code-map-more.md.", ""]
    for kind in MAIN_KINDS:
        if groups.get(kind):
            out += [f"### {CODE_KIND_TITLES[kind]}", "", table(_HEADER, _code_rows(groups[kind])), ""]
    return "\n".join(out).rstrip() + "\n"


def render_error_code_map_more(codes: Sequence[Any]) -> str:
    groups = _codes_by_kind(codes)
    rest = [k for k in groups if k not in MAIN_KINDS]
    out = ["# 更多错误码 · More error codes", "", generated_note(), "",
           "按 Ctrl-F 搜索错误码，或运行 `npu-graph errcode CODE`。 Search this page for the code, or run `npu-graph errcode CODE`.", "",
           "## 目录 · Contents", ""]
    out += [f"- [{CODE_KIND_TITLES.get(k, k)}](#{slug(CODE_KIND_TITLES.get(k, k))}) ({len(groups[k])})" for k in rest]
    out.append("")
    for kind in rest:
        out += [f"## {CODE_KIND_TITLES.get(kind, kind)}", "", table(_HEADER, _code_rows(groups[kind])), ""]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------------------
# constraints.md
# --------------------------------------------------------------------------------------------

def render_constraints(constraints: Sequence[Any], patterns: Sequence[Any] = ()) -> str:
    phases = pattern_phases(patterns)
    out = [
        "# 图捕获的约束 · Capture constraints", "", generated_note(), "",
        "每条约束给出源码能证明的规则、常见误解与事实、锚点和相关模式。",
        "Each constraint gives the rule the source proves, the common misbelief and the truth, the anchors and the related patterns.", "",
    ]
    for item in (as_dict(c) for c in constraints):
        out += [f"## {item.get('id', '')} · {both(item.get('title'), ' · ')}", ""]
        if item.get("rule"):
            out.append(f"- **规则 Rule**: {both(item.get('rule'))}")
        if item.get("brief_claim"):
            out.append(f"- **常见误解 Misbelief**: {both(item.get('brief_claim'))}")
        if item.get("truth"):
            out.append(f"- **事实 Truth**: {both(item.get('truth'))}")
        anchors = item.get("anchors") or []
        if anchors:
            out.append("- **源码锚点 Anchors**: " + "; ".join(f"`{anchor_text(a)}`" for a in anchors))
        related = item.get("patterns") or []
        if related:
            out.append("- **相关模式 Patterns**: " + link_patterns([str(p) for p in related], phases))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------------------
# diagnostic-checklist.md and the phase table
# --------------------------------------------------------------------------------------------

def render_checklist(phases: Mapping[str, Any], patterns: Sequence[Any]) -> str:
    grouped = by_phase(patterns)
    common = phases["common"]
    out = [
        "# 诊断材料清单 · Diagnostic checklist", "", generated_note(), "",
        "材料齐了再下结论。缺什么，一次向用户要全。 Conclude only with the material in hand; ask for everything missing at once.", "",
        "## 每次都要 · Always", "",
    ]
    out += [f"- [ ] {item['zh']}\n      {item['en']}" for item in common["collect"]]
    out += ["", "锚点 Anchors: " + "; ".join(f"`{a}`" for a in common.get("anchors", [])), ""]
    for phase, entry in phases["phases"].items():
        ids = [p["id"] for p in grouped.get(phase, [])]
        out += [f"## {phase_title(phase)}", "",
                f"**信号 Signals** — {entry['signals']['zh']}", "", f"{entry['signals']['en']}", "",
                "**补充材料 Collect**", ""]
        out += [f"- [ ] {item['zh']}\n      {item['en']}" for item in entry.get("collect", [])]
        out += ["", "**已知模式 Known patterns**: " + (", ".join(pattern_link(i, phase) for i in ids) or "-"), "",
            "**锚点 Anchors**: " + "; ".join(f"`{a}`" for a in entry.get("anchors", [])), ""]
    return "\n".join(out).rstrip() + "\n"


def render_phase_table(phases: Mapping[str, Any], patterns: Sequence[Any]) -> str:
    grouped = by_phase(patterns)
    rows = []
    for phase, entry in phases["phases"].items():
        count = len(grouped.get(phase, []))
        rows.append([phase_title(phase), entry["signals"]["zh"], entry["signals"]["en"],
                     f"{count} ([known-patterns](graph-mode-diagnostics/references/known-patterns.md))"])
    return table(["阶段 Phase", "信号", "Signals", "已知模式 Patterns"], rows)


def render_layer_table() -> str:
    return table(["层级 Layer", "名称", "Name"], [[key, names["zh"], names["en"]] for key, names in LAYER_NAMES.items()])


# --------------------------------------------------------------------------------------------
# Concepts (graph-mode-expert)
# --------------------------------------------------------------------------------------------

def render_concept_index(concepts: Sequence[Any]) -> str:
    out = [
        "# 概念笔记 · Concept notes", "", generated_note(), "",
        "按问题挑一篇读，不必全读。每篇都带源码锚点。 Read the note the question needs; each carries source anchors.", "",
    ]
    rows = []
    for item in (as_dict(c) for c in concepts):
        rows.append([f"[{item['id']}](concepts/{item['id']}.md)", both(item.get("title")), one_line(
            (item.get("summary") or {}).get("zh", "")), one_line((item.get("summary") or {}).get("en", ""))])
    out += [table(["笔记 Note", "标题 Title", "摘要", "Summary"], rows) if rows else "（暂无 · none yet）", ""]
    return "\n".join(out)


def render_concept(concept: Any) -> str:
    item = as_dict(concept)
    title = item.get("title") or {}
    out = [f"# {one_line(title.get('zh', ''))} · {one_line(title.get('en', ''))}", "", generated_note(), ""]
    anchors = item.get("anchors") or []
    if anchors:
        out += ["**源码锚点 Anchors**", "", bullets(f"`{anchor_text(a)}`" for a in anchors), ""]
    summary = item.get("summary") or {}
    if summary:
        out += [f"> {one_line(summary.get('zh', ''))}", ">", f"> {one_line(summary.get('en', ''))}", ""]
    body = item.get("body") or ""
    if isinstance(body, Mapping):  # {zh, en} sections, as the concept loader returns them
        headings = {"zh": "## 中文", "en": "## English"}
        body = "\n\n".join(f"{headings[lang]}\n\n{str(body[lang]).strip()}" for lang in ("zh", "en") if body.get(lang))
    body = str(body).strip()
    out += [body, ""] if body else []
    references = item.get("references") or []
    if references:
        out += ["**参考 References**", "", bullets(reference_text(r) for r in references), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# agents.md (graph-mcp-integration)
# --------------------------------------------------------------------------------------------

def render_agents(agents: Mapping[str, Any]) -> str:
    out = [
        "# Agent 接入 · Agents", "", generated_note(), "",
        "## Skill 放在哪里 · Where skills live", "",
        "`npu-graph skill install --agent NAME [--scope project|user]` 写到下表的位置（user 相对于家目录）。",
        "`npu-graph skill install --agent NAME [--scope project|user]` writes to these folders (user: relative to the home folder).", "",
    ]
    rows = [[key, entry["name"], f"`{entry['project']}/npu-graph-skill/`", f"`~/{entry['user']}/npu-graph-skill/`",
             "; ".join(entry.get("sources", []))] for key, entry in agents["agents"].items()]
    out += [table(["--agent", "Agent", "project", "user", "来源 Source"], rows), ""]
    out += ["## 注册 MCP 服务 · Registering the MCP server", "",
            "先确认 `npu-graph mcp --help` 能运行（需要 `pip install 'npu-graph-skill[mcp]'`，Python ≥ 3.10）；"
            "`npu-graph mcp --print-config --agent NAME` 直接打印该 Agent 的配置内容（含本机命令的完整路径）。",
            "First check that `npu-graph mcp --help` runs (needs `pip install 'npu-graph-skill[mcp]'`, Python 3.10+); "
            "`npu-graph mcp --print-config --agent NAME` prints the agent's configuration with this installation's full command path.", ""]
    for entry in agents["agents"].values():
        out += [f"- **{entry['name']}**: {entry['mcp']['zh']}", f"  {entry['mcp']['en']}"]
    out += ["", "mcpServers JSON（Claude Code 的 .mcp.json、Cursor、Trae 通用）· for Claude Code's .mcp.json, Cursor and Trae:", "",
            "```json", agents["mcp_json"].rstrip(), "```", "",
            "`npu-graph` 不在 PATH 上时，把 command 换成 Python 的完整路径，args 换成 `[\"-m\", \"npu_graph_skill\", \"mcp\"]`。",
            "When `npu-graph` is not on PATH, use the full path of Python as command and `[\"-m\", \"npu_graph_skill\", \"mcp\"]` as args.", ""]
    return "\n".join(out)
