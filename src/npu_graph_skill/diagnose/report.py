"""The Diagnosis as text (terminal) or Markdown, in the four sections of the design brief:
overview, root cause, fix, verification — then candidates, drill-down and missing materials.
"""
from __future__ import annotations

from typing import List

from npu_graph_skill.core.model import LAYER_NAMES, Candidate, Diagnosis
from npu_graph_skill.core.render import FIX_IN_NAMES, Style, label, md_table, phase_name, pick
from npu_graph_skill.diagnose import causes
from npu_graph_skill.diagnose.match import KNOWN


def _layer(code: str, lang: str) -> str:
    return f"{code} {pick(LAYER_NAMES.get(code, {}), lang)}".strip()


def _also(d: Diagnosis, lang: str) -> str:
    """The phases nearly as likely, when the phase was decided on thin evidence."""
    if not d.other_phases:
        return ""
    names = ", ".join(phase_name(p, lang) for p in d.other_phases)
    return f" ({label('also_possible', lang)}: {names})"


# Why a candidate is listed, from the reasons diagnose/causes.py gives it
SOURCES = (
    (causes.BY_REPORTS, {"en": "similar reports", "zh": "相似报告"}),
    (causes.BY_WORDS, {"en": "similar words", "zh": "相似用词"}),
    (causes.BY_RESEMBLANCE, {"en": "its reports as a whole", "zh": "同类报告整体"}),
    (causes.BY_SYMPTOM.split("{")[0], {"en": "a cause of the symptom", "zh": "症状的成因"}),
)
MATCHED = {"en": "its matchers", "zh": "模式匹配"}
MATCHED_IN_PART = {"en": "matched in part", "zh": "部分匹配"}


def _listed_by(candidate: Candidate, lang: str) -> str:
    """The sources that named `candidate`: its own matchers (in part, below a known match), similar
    words, similar reports."""
    own = pick(MATCHED if candidate.score >= KNOWN else MATCHED_IN_PART, lang)
    names = []
    for reason in candidate.matched:
        name = next((pick(n, lang) for prefix, n in SOURCES if reason.startswith(prefix)), own)
        if name not in names:
            names.append(name)
    return " + ".join(names)


def render_markdown(d: Diagnosis) -> str:
    lang = d.lang
    out: List[str] = []
    title = {"en": "NPU graph-mode diagnosis", "zh": "NPU 图模式诊断报告"}
    out.append(f"# {pick(title, lang)}\n")
    out.append(f"## 1. {label('overview', lang)}\n")
    out.append(md_table(["", ""], [
        [label("error", lang), f"`{d.error}`" if d.error else "-"],
        [label("phase", lang), phase_name(d.phase, lang) + _also(d, lang)],
        [label("layer", lang), _layer(d.layer, lang)],
        [label("root_layer", lang), _layer(d.root_layer, lang)],
        [label("fix_in", lang), pick(FIX_IN_NAMES.get(d.fix_in, {}), lang) or d.fix_in],
        [label("confidence", lang), f"{d.confidence:.2f}" + (f" — {label('novel', lang)}" if d.novel else "")],
    ]))
    out.append(f"\n## 2. {label('root_cause', lang)}\n")
    for key in ("direct", "trigger", "scope"):
        if d.root_cause.get(key):
            out.append(f"- **{label(key, lang)}**: {d.root_cause[key]}")
    if d.consequences:
        out.append(f"- **{label('consequences', lang)}**: " + "; ".join(
            f"`{c['code']}` {c.get('name', '')} — {_role(c['role'], lang)} (line {c['line']})" for c in d.consequences))
    out.append(f"\n## 3. {label('fix', lang)}\n")
    out.append(f"- **{label('short_term', lang)}**: {d.fix.get('short_term', '')}")
    out.append(f"- **{label('long_term', lang)}**: {d.fix.get('long_term', '')}")
    if d.fix.get("locations"):
        out.append(f"- **{label('locations', lang)}**:")
        out.extend(f"  - `{loc}`" for loc in d.fix["locations"])
    out.append(f"\n## 4. {label('verification', lang)}\n")
    out.extend(f"{i}. {step}" for i, step in enumerate(d.verification, start=1))
    if d.candidates:
        out.append(f"\n### {label('candidates', lang)}\n")
        out.append(md_table(["id", "score", "title", "listed by", "evidence"],
                            [[c.id, f"{c.score:.2f}", c.title, _listed_by(c, lang), " / ".join(c.evidence[:2])]
                             for c in d.candidates]))
    if d.similar_reports:
        out.append(f"\n### {label('similar_reports', lang)}\n")
        for r in d.similar_reports:
            out.append(f"- [{r['id']}]({r['url']}) {r['title']} — {phase_name(r['phase'], lang)}"
                       f"{(', ' + ', '.join(r['patterns'])) if r['patterns'] else ''}")
            if r.get("fix"):
                out.append(f"  - {label('fixed_by' if r.get('concluded', True) else 'not_concluded', lang)}: {r['fix']}")
    if d.drill_down:
        out.append(f"\n### {label('drill_down', lang)}\n")
        for i, step in enumerate(d.drill_down, start=1):
            out.append(f"{i}. {step['layer']} {step['kind']}: `{step['where']}` {step.get('function', '')}"
                       f"{_range(step)} {('— ' + step['note']) if step.get('note') else ''}".rstrip())
            if step.get("excerpt"):
                out.append("```\n" + step["excerpt"].rstrip() + "\n```")
    if d.anchors:
        out.append(f"\n### {label('anchors', lang)}\n")
        out.extend(f"- {a}" for a in d.anchors)
    if d.missing:
        out.append(f"\n### {label('missing', lang)}\n")
        out.extend(f"- {m.what}: `{m.how}`" for m in d.missing)
    if d.pattern_stub:
        out.append(f"\n### {label('stub', lang)}\n")
        out.append("```yaml\n" + _yaml(d.pattern_stub) + "```")
    if d.notes:
        out.append(f"\n### {label('notes', lang)}\n")
        out.extend(f"- {n}" for n in d.notes)
    return "\n".join(out) + "\n"


def render_text(d: Diagnosis, style: Style) -> str:
    lang = d.lang
    out: List[str] = []
    head = {"en": "NPU graph-mode diagnosis", "zh": "NPU 图模式诊断报告"}
    out.append(style.bold(pick(head, lang)))
    out.append("")
    out.append(style.bold(f"[1] {label('overview', lang)}"))
    out.append(f"  {label('error', lang)}: {d.error or '-'}")
    out.append(f"  {label('phase', lang)}: {phase_name(d.phase, lang)}{_also(d, lang)}    "
               f"{label('layer', lang)}: {_layer(d.layer, lang)}    {label('root_layer', lang)}: {_layer(d.root_layer, lang)}")
    confidence = f"{d.confidence:.2f}"
    if d.novel:
        confidence += "  " + style.yellow(label("novel", lang))
    out.append(f"  {label('fix_in', lang)}: {pick(FIX_IN_NAMES.get(d.fix_in, {}), lang) or d.fix_in}    "
               f"{label('confidence', lang)}: {confidence}")
    if d.candidates:
        best = d.candidates[0]
        out.append(f"  {label('candidates', lang)}: " + ", ".join(
            f"{c.id} ({c.score:.2f}" + (f"; {_listed_by(c, lang)})" if d.novel and c.matched else ")")
            for c in d.candidates[:3]))
        out.append(f"  → {style.green(best.id)} {best.title}")
    out.append("")
    out.append(style.bold(f"[2] {label('root_cause', lang)}"))
    for key in ("direct", "trigger", "scope"):
        if d.root_cause.get(key):
            out.append(f"  {label(key, lang)}: {d.root_cause[key]}")
    if d.consequences:
        out.append(f"  {label('consequences', lang)}:")
        out.extend(style.dim(f"    {c['code']} {c.get('name', '')} — {_role(c['role'], lang)} (line {c['line']})")
                   for c in d.consequences)
    out.append("")
    out.append(style.bold(f"[3] {label('fix', lang)}"))
    out.append(f"  {label('short_term', lang)}: {d.fix.get('short_term', '')}")
    out.append(f"  {label('long_term', lang)}: {d.fix.get('long_term', '')}")
    for loc in d.fix.get("locations", []):
        out.append(f"  {label('locations', lang)}: {loc}")
    out.append("")
    out.append(style.bold(f"[4] {label('verification', lang)}"))
    out.extend(f"  {i}. {step}" for i, step in enumerate(d.verification, start=1))
    if d.similar_reports:
        out.append("")
        out.append(style.bold(label("similar_reports", lang)))
        for r in d.similar_reports:
            concluded = ", ".join([phase_name(r["phase"], lang)] + r["patterns"])
            out.append(f"  {r['id']} ({concluded}) {r['title']}")
            out.append(style.dim(f"      {r['url']}"))
            if r.get("fix"):
                name = label("fixed_by" if r.get("concluded", True) else "not_concluded", lang)
                out.append(style.dim(f"      {name}: {r['fix']}"))
    if d.drill_down:
        out.append("")
        out.append(style.bold(label("drill_down", lang)))
        for step in d.drill_down:
            out.append(f"  {step['layer']} {step['kind']}: {step['where']} {step.get('function', '')}{_range(step)}".rstrip())
            if step.get("excerpt"):
                out.extend(style.dim("      " + line) for line in step["excerpt"].rstrip().splitlines())
    if d.anchors:
        out.append("")
        out.append(style.bold(label("anchors", lang)))
        out.extend(f"  {a}" for a in d.anchors)
    if d.missing:
        out.append("")
        out.append(style.bold(label("missing", lang)))
        out.extend(f"  - {m.what}: {m.how}" for m in d.missing)
    if d.notes:
        out.append("")
        out.extend(style.dim(f"  {label('note', lang)}: {n}") for n in d.notes)
    return "\n".join(out) + "\n"


ROLES = {"consequence": {"en": "consequence of the first error", "zh": "首个错误的结果"},
         "noisy": {"en": "repeated noise", "zh": "重复噪声"},
         "later": {"en": "later error", "zh": "后续错误"}}


def _range(step) -> str:
    """' (lines 240-340)' when the source index knows the enclosing function's range."""
    return f" (lines {step['start']}-{step['end']})" if step.get("start") and step.get("end") else ""


def _role(role: str, lang: str) -> str:
    return pick(ROLES.get(role, {"en": role, "zh": role}), lang)


def _yaml(data) -> str:
    import yaml

    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
