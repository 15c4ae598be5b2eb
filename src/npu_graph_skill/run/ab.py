"""Graph vs eager: run the same command again with graph mode off and say whether the failure is
graph-specific — the verification the Iron Law asks for before blaming graph mode.

How graph mode is switched off depends on the framework, so the user says it: `--eager "ENV=VAL ..."`
(variables added to the same command, e.g. `TORCH_COMPILE_DISABLE=1`) or `--eager-cmd "..."` (another
command line, e.g. the same `vllm serve` with `--enforce-eager`).

Verdicts: graph_specific (eager passes), not_graph_specific (eager fails with the same decisive
error, up to its numbers), fails_differently (eager fails with another error), inconclusive (the
eager run was interrupted, or stopped as hung with nothing to compare).
"""
from __future__ import annotations

import re
import shlex
from typing import Dict, List, Optional

from npu_graph_skill.core.errors import UserError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+")


def parse_eager_env(text: str) -> Dict[str, str]:
    """`"TORCH_COMPILE_DISABLE=1 VLLM_X=0"` → {name: value}."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UserError(f"--eager {text!r}: {exc}") from None
    found: Dict[str, str] = {}
    for word in words:
        name, sep, value = word.partition("=")
        if not sep or not _NAME.match(name):
            raise UserError(f"--eager: {word!r} is not NAME=VALUE (e.g. --eager \"TORCH_COMPILE_DISABLE=1\")")
        found[name] = value
    if not found:
        raise UserError("--eager: give at least one NAME=VALUE that turns graph mode off")
    return found


def parse_eager_cmd(text: str) -> List[str]:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UserError(f"--eager-cmd {text!r}: {exc}") from None
    if not words:
        raise UserError("--eager-cmd: give the command line that runs the same job with graph mode off")
    return words


def signature(line: Optional[str]) -> str:
    """A decisive error up to its numbers, pointers and surrounding space."""
    return " ".join(_VOLATILE.sub("#", line or "").split())


def verdict(graph_error: Optional[str], graph_pattern: Optional[str], eager_status: int, eager_ended_by: str,
            eager_error: Optional[str], eager_pattern: Optional[str]) -> str:
    if eager_ended_by == "interrupted":
        return "inconclusive"
    if eager_status == 0 and eager_ended_by != "hang":
        return "graph_specific"
    if not eager_error:
        return "inconclusive"
    same = signature(graph_error) == signature(eager_error) or (graph_pattern and graph_pattern == eager_pattern)
    return "not_graph_specific" if same else "fails_differently"


SUMMARIES = {
    "graph_specific": {
        "en": "graph-specific: the same job passes with graph mode off ({how}, exit {status})",
        "zh": "图模式特有：关闭图模式后同一任务通过（{how}，退出码 {status}）"},
    "not_graph_specific": {
        "en": "not graph-specific: with graph mode off ({how}) it fails with the same error (exit {status}) — look at "
              "the model, the operator or the environment before graph mode",
        "zh": "不是图模式特有：关闭图模式（{how}）后以相同错误失败（退出码 {status}）——先查模型、算子或环境，而不是图模式"},
    "fails_differently": {
        "en": "inconclusive: with graph mode off ({how}) it fails with another error (exit {status}): {error}",
        "zh": "无法判定：关闭图模式（{how}）后以另一个错误失败（退出码 {status}）：{error}"},
    "inconclusive": {
        "en": "inconclusive: the graph-off run ({how}) ended {ended_by} (exit {status})",
        "zh": "无法判定：关闭图模式的运行（{how}）以 {ended_by} 结束（退出码 {status}）"},
}


def summary(kind: str, how: str, status: int, error: Optional[str], ended_by: str) -> Dict[str, str]:
    return {lang: text.format(how=how, status=status, error=(error or "")[:300], ended_by=ended_by)
            for lang, text in SUMMARIES[kind].items()}
