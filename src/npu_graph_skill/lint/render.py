"""The faces of a lint report: text (one finding per line, ruff style, with the call chain), JSON (the
report's `to_dict()`), and a rule page for `--explain`."""
from __future__ import annotations

from typing import List, Optional

from npu_graph_skill.core.render import Style, pick
from npu_graph_skill.knowledge.lint_schema import LintConfig, LintRule
from npu_graph_skill.lint.model import Finding, LintReport

WORDS = {
    "captured": {"en": "captured by", "zh": "捕获位置"},
    "via": {"en": "via", "zh": "调用链"},
    "certain": {"en": "certain", "zh": "确定"},
    "likely": {"en": "likely", "zh": "可能"},
    "pattern": {"en": "prevents", "zh": "对应模式"},
}


def word(key: str, lang: str) -> str:
    return pick(WORDS[key], lang)


def render_text(report: LintReport, style: Optional[Style] = None, lang: Optional[str] = None) -> str:
    style = style or Style(None)
    lang = lang or report.lang
    out: List[str] = []
    for finding in report.findings:
        out.extend(_finding_lines(finding, style, lang))
    out.append(_summary(report, lang))
    return "\n".join(out) + "\n"


def _finding_lines(finding: Finding, style: Style, lang: str) -> List[str]:
    certainty = word(finding.certainty, lang)
    mark = style.red if finding.certainty == "certain" else style.yellow
    head = f"{style.bold(f'{finding.path}:{finding.line}:{finding.column}:')} {mark(finding.rule)} [{certainty}] {finding.message}"
    lines = [head]
    if finding.code:
        lines.append(style.dim(f"    | {finding.code}"))
    if finding.region:
        region = finding.region
        lines.append(style.dim(f"    = {word('captured', lang)}: {region['text']} ({region['path']}:{region['line']})"))
    hops = finding.chain[1:]
    if hops:
        path = " → ".join(f"{step.text} ({step.path}:{step.line})" for step in hops)
        lines.append(style.dim(f"    = {word('via', lang)}: {path}"))
    return lines


def _summary(report: LintReport, lang: str) -> str:
    counts = report.counts()
    files = report.files_checked
    if lang == "zh":
        text = (f"发现 {counts['findings']} 个问题（确定 {counts['certain']}，可能 {counts['likely']}），"
                f"检查了 {files} 个文件、{report.regions} 个捕获区")
        if report.suppressed:
            text += f"，{report.suppressed} 个被注释忽略"
        if report.skipped:
            text += f"，跳过 {len(report.skipped)} 个文件"
        if counts["findings"]:
            text += "。详情：npu-graph lint --explain 规则号"
        return text + "。" if not counts["findings"] else text
    text = (f"Found {counts['findings']} finding{'s' if counts['findings'] != 1 else ''} "
            f"({counts['certain']} certain, {counts['likely']} likely) in {files} file{'s' if files != 1 else ''}, "
            f"{report.regions} captured region{'s' if report.regions != 1 else ''}")
    if report.suppressed:
        text += f"; {report.suppressed} suppressed by comments"
    if report.skipped:
        text += f"; {len(report.skipped)} file{'s' if len(report.skipped) != 1 else ''} skipped"
    if counts["findings"]:
        text += ". Explain a rule: npu-graph lint --explain NGL001"
    return text + "."


def render_rule(rule: LintRule, lang: str, markdown: bool = False) -> str:
    """The rule page (what ruff prints for `ruff rule X`): why, example, fix, false alarms, sources."""
    h = "## " if markdown else ""
    fence = "```python" if markdown else ""
    labels = {
        "en": ("What it catches", "Why it fails", "Fix", "Example", "Instead", "When it is a false alarm", "Sources"),
        "zh": ("检查什么", "为什么会失败", "修复", "反例", "正例", "什么时候是误报", "来源"),
    }[lang if lang == "zh" else "en"]
    message = pick(rule.message, lang).replace("`{call}`", "…").replace("{call}", "…")
    out = [f"{h}{rule.id} {rule.name}", "",
           f"{word('pattern', lang)}: {rule.pattern}   {'确定性' if lang == 'zh' else 'certainty'}: {word(rule.certainty, lang)}"
           f"   {'范围' if lang == 'zh' else 'scope'}: {rule.scope}", "",
           f"{labels[0]}: {message}", "", f"{labels[1]}: {pick(rule.why, lang)}", "",
           f"{labels[2]}: {pick(rule.fix, lang)}", "",
           f"{labels[3]}:", fence, rule.bad.rstrip(), "```" if markdown else "", f"{labels[4]}:", fence, rule.good.rstrip(),
           "```" if markdown else "", f"{labels[5]}: {pick(rule.false_alarms, lang)}", "", f"{labels[6]}:"]
    out.extend(f"  - {a}" for a in rule.anchor_strings())
    out.extend(f"  - {r['title']} <{r['url']}>" for r in rule.references)
    text = "\n".join(line for line in out if line is not None)
    return text.replace("\n\n\n", "\n\n") + "\n"


def render_rule_list(config: LintConfig, lang: str) -> str:
    from npu_graph_skill.core.render import text_table

    rows = [[r.id, r.name, word(r.certainty, lang), r.pattern,
             pick(r.message, lang).replace("`{call}` ", "").replace("{call}", "…")[:90]] for r in config.rules]
    return text_table(["id", "name", "certainty", "pattern", "message"], rows) + "\n"
