"""Text rendering of a `DoctorReport` (zh or en). JSON is `report.to_dict()`."""
from __future__ import annotations

from typing import List

from npu_graph_skill.core.render import Style, pick
from npu_graph_skill.doctor.model import CRIT, FAIL, PASS, SKIP, STATUSES, WARN, DoctorReport

WORDS = {
    "title": {"en": "npu-graph doctor", "zh": "npu-graph 环境体检"},
    "backend": {"en": "backend", "zh": "后端"},
    "python": {"en": "python", "zh": "解释器"},
    "fix": {"en": "fix", "zh": "修复"},
    "source": {"en": "source", "zh": "依据"},
    "summary": {"en": "Summary", "zh": "汇总"},
    "verdict": {"en": "Verdict", "zh": "结论"},
    "only_crit": {"en": "Read the CRIT lines first: each one alone stops graph mode.",
                  "zh": "先看 CRIT 项：任意一项都会使图模式无法运行。"},
    "env_hint": {"en": "For a bug report, paste the output of `npu-graph env`.",
                 "zh": "提交问题时请附上 `npu-graph env` 的输出。"},
}


def _word(key: str, lang: str) -> str:
    return pick(WORDS[key], lang)


def _badge(status: str, style: Style) -> str:
    text = f"[{status}]"
    if status == PASS:
        return style.green(text)
    if status == WARN:
        return style.yellow(text)
    if status in (FAIL, CRIT):
        return style.red(style.bold(text)) if status == CRIT else style.red(text)
    return style.dim(text)


def render_text(report: DoctorReport, lang: str = "en", verbose: bool = False, style: Style = None) -> str:
    style = style or Style()
    lines: List[str] = []
    lines.append(style.bold(f"{_word('title', lang)} — {_word('backend', lang)} {report.backend} · "
                            f"{_word('python', lang)} {report.python}"))
    for note in report.notes:
        lines.append(style.dim("  " + pick(note, lang)))
    lines.append("")
    width = max((_display_width(pick(c.title, lang)) for c in report.checks), default=10)
    for check in report.checks:
        title = pick(check.title, lang)
        pad = " " * max(0, width - _display_width(title))
        lines.append(f"{_badge(check.status, style)} {title}{pad}  {pick(check.summary, lang)}")
        show_detail = verbose or check.status in (WARN, FAIL, CRIT)
        if verbose or check.status in (FAIL, CRIT):
            for item in check.evidence:
                lines.append(style.dim(f"       {item}"))
        if show_detail and check.status != SKIP:
            for remedy in check.remedy:
                text = pick(remedy.text, lang)
                lines.append(f"       → {_word('fix', lang)}: {text}" + (f"\n           $ {remedy.command}" if remedy.command else ""))
        if verbose or check.status in (FAIL, CRIT):
            for anchor in check.anchors:
                lines.append(style.dim(f"       {_word('source', lang)}: {anchor}"))
    lines.append("")
    counts = " · ".join(f"{report.counts.get(s, 0)} {s}" for s in STATUSES if report.counts.get(s))
    lines.append(f"{_word('summary', lang)}: {counts}  ({report.seconds:.1f} s)")
    lines.append(style.bold(f"{_word('verdict', lang)}: {pick(report.verdict, lang)}"))
    if report.counts.get(CRIT):
        lines.append(_word("only_crit", lang))
    lines.append(style.dim(_word("env_hint", lang)))
    return "\n".join(lines)


def _display_width(text: str) -> int:
    return sum(2 if "\u1100" <= ch <= "\uffdc" else 1 for ch in text)
