"""Presentation helpers shared by every capability: language choice, bilingual labels, JSON,
Markdown tables and terminal colour. Capabilities keep their own report layout; the words that
appear in more than one report live here so zh and en stay in step.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence

from npu_graph_skill.core.model import LANGS, to_plain

LABELS: Dict[str, Dict[str, str]] = {
    "overview": {"en": "Overview", "zh": "问题概况"},
    "root_cause": {"en": "Root cause", "zh": "根因分析"},
    "fix": {"en": "Fix", "zh": "修复建议"},
    "verification": {"en": "Verification", "zh": "验证步骤"},
    "error": {"en": "Error", "zh": "错误"},
    "phase": {"en": "Phase", "zh": "阶段"},
    "layer": {"en": "Detected in", "zh": "报错层级"},
    "root_layer": {"en": "Root cause in", "zh": "根因层级"},
    "fix_in": {"en": "Fix goes in", "zh": "修复位置"},
    "confidence": {"en": "Confidence", "zh": "置信度"},
    "direct": {"en": "Direct cause", "zh": "直接原因"},
    "trigger": {"en": "Trigger", "zh": "触发条件"},
    "scope": {"en": "Scope", "zh": "影响范围"},
    "short_term": {"en": "Short term", "zh": "短期"},
    "long_term": {"en": "Long term", "zh": "长期"},
    "locations": {"en": "Where", "zh": "文件定位"},
    "candidates": {"en": "Candidates", "zh": "候选模式"},
    "missing": {"en": "Missing materials", "zh": "待补充材料"},
    "note": {"en": "note", "zh": "说明"},
    "drill_down": {"en": "Drill-down", "zh": "调用链下钻"},
    "consequences": {"en": "Later errors (not the cause)", "zh": "后续报错（不是原因）"},
    "anchors": {"en": "Source anchors", "zh": "源码锚点"},
    "similar_reports": {"en": "Similar public reports (what fixed them)", "zh": "相似的公开报告（及其修复）"},
    "fixed_by": {"en": "fixed by", "zh": "修复"},
    "not_concluded": {"en": "not concluded, so far", "zh": "尚无定论，目前"},
    "also_possible": {"en": "also possible", "zh": "也可能"},
    "novel": {"en": "No known pattern fits: this looks new", "zh": "未匹配到已知模式：疑似新问题"},
    "stub": {"en": "Pattern stub to start from", "zh": "可作为新模式起点的草稿"},
    "notes": {"en": "Notes", "zh": "说明"},
    "similar_cases": {"en": "Similar recorded cases", "zh": "相似历史案例"},
    "yes": {"en": "yes", "zh": "是"},
    "no": {"en": "no", "zh": "否"},
    "none": {"en": "none", "zh": "无"},
}

PHASE_NAMES = {
    "capture": {"en": "Capture", "zh": "捕获阶段"},
    "replay": {"en": "Replay", "zh": "重放阶段"},
    "memory": {"en": "Memory", "zh": "内存"},
    "update": {"en": "Update", "zh": "参数更新"},
    "compile": {"en": "Compile", "zh": "编译阶段"},
    "environment": {"en": "Environment", "zh": "环境"},
    "unknown": {"en": "Unknown", "zh": "未知"},
}

FIX_IN_NAMES = {
    "user_code": {"en": "your code", "zh": "用户代码"},
    "framework": {"en": "the serving/compiler framework (vLLM-Ascend, SGLang, torchair ...)", "zh": "推理/编译框架（vLLM-Ascend、SGLang、torchair 等）"},
    "torch_npu": {"en": "torch_npu", "zh": "torch_npu"},
    "op_plugin": {"en": "op-plugin / operator implementation", "zh": "op-plugin / 算子实现"},
    "cann_driver": {"en": "CANN / driver / firmware", "zh": "CANN / 驱动 / 固件"},
    "configuration": {"en": "configuration (environment variables, launch options)", "zh": "配置（环境变量、启动参数）"},
}


def default_lang(environ: Optional[Dict[str, str]] = None) -> str:
    """zh when the locale says Chinese, else en. NPU_GRAPH_LANG overrides the locale."""
    env = os.environ if environ is None else environ
    explicit = env.get("NPU_GRAPH_LANG", "").strip().lower()
    if explicit in LANGS:
        return explicit
    for key in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(key, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def label(key: str, lang: str) -> str:
    entry = LABELS.get(key)
    return entry.get(lang, entry["en"]) if entry else key


def pick(texts: Any, lang: str) -> str:
    """A bilingual {zh, en} mapping → the text in `lang` (falls back to the other language)."""
    if isinstance(texts, dict):
        return texts.get(lang) or texts.get("en") or texts.get("zh") or ""
    return "" if texts is None else str(texts)


def phase_name(phase: str, lang: str) -> str:
    return pick(PHASE_NAMES.get(phase, {"en": phase, "zh": phase}), lang)


def to_json(obj: Any, indent: Optional[int] = 2) -> str:
    data = obj.to_dict() if hasattr(obj, "to_dict") else to_plain(obj)
    return json.dumps(data, ensure_ascii=False, indent=indent, sort_keys=False)


def md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(md_escape(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(md_escape(c) for c in row) + " |")
    return "\n".join(lines)


def text_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    rows = [[str(c) for c in row] for row in rows]
    widths = [max([_width(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(headers)]
    out = ["  ".join(_pad(h, w) for h, w in zip(headers, widths)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    for row in rows:
        out.append("  ".join(_pad(c, w) for c, w in zip(row, widths)).rstrip())
    return "\n".join(out)


def _width(text: str) -> int:
    """Display width: CJK characters take two columns."""
    return sum(2 if "\u1100" <= ch <= "\uffdc" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


class Style:
    """ANSI styling, only on a terminal and only when NO_COLOR is unset."""

    def __init__(self, stream: Any = None) -> None:
        stream = stream or sys.stdout
        self.enabled = bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


def bullet_list(items: List[str], prefix: str = "- ") -> str:
    return "\n".join(prefix + item for item in items)
