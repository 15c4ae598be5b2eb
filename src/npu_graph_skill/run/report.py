"""What the wrapper says, in English or Chinese: the switches at the start, the lines it prints while
the job runs (forwarded signals, a hang), and the summary at the end (how the command ended, the
first failure across ranks, graph vs eager, what was written)."""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

from npu_graph_skill.core.render import Style, pick

PREFIX = "npu-graph run: "

_T = {
    "recording": {"en": "recording into {folder} (output, plogs); the exit status stays the command's",
                  "zh": "记录到 {folder}（输出、plog）；退出码保持为命令自身的退出码"},
    "set": {"en": "set ", "zh": "设置"},
    "kept": {"en": "kept", "zh": "保留"},
    "skipped": {"en": "skip", "zh": "跳过"},
    "forwarded": {"en": "forwarded {name} to the job (process group {pgid})", "zh": "已把 {name} 转发给任务（进程组 {pgid}）"},
    "again": {"en": "; press Ctrl-C again to send {next}", "zh": "；再按 Ctrl-C 发送 {next}"},
    "hang": {"en": "no output for {seconds:g} s after a decisive error: stopping the job (SIGTERM, SIGKILL after {kill_after:g} s)\n  {line}",
             "zh": "决定性错误之后 {seconds:g} 秒无输出：停止任务（SIGTERM，{kill_after:g} 秒后 SIGKILL）\n  {line}"},
    "killed": {"en": "{count} process(es) of the job still running {seconds:g} s after the stop: sent SIGKILL",
               "zh": "停止 {seconds:g} 秒后任务仍有 {count} 个进程在运行：已发送 SIGKILL"},
    "passed": {"en": "the command succeeded (exit 0) in {duration}", "zh": "命令成功（退出码 0），用时 {duration}"},
    "removed": {"en": "removed the run folder (--keep keeps it)", "zh": "已删除运行目录（--keep 可保留）"},
    "failed_exit": {"en": "the command failed: exit {status} after {duration}", "zh": "命令失败：退出码 {status}，用时 {duration}"},
    "failed_signal": {"en": "the command was killed by {signal} (exit {status}) after {duration}",
                      "zh": "命令被 {signal} 终止（退出码 {status}），用时 {duration}"},
    "interrupted": {"en": "the command was interrupted ({signals} forwarded; exit {status}) after {duration}",
                    "zh": "命令被中断（已转发 {signals}；退出码 {status}），用时 {duration}"},
    "hung": {"en": "the command hung after a decisive error and was stopped (--hang-timeout; exit {status}) after {duration}",
             "zh": "命令在决定性错误后挂起，已被停止（--hang-timeout；退出码 {status}），用时 {duration}"},
    "first_failure": {"en": "First failure across ranks: rank {rank}{time}  ({source}:{line})",
                      "zh": "跨 rank 的首个失败：rank {rank}{time}（{source}:{line}）"},
    "consequences": {"en": "  consequences on other ranks: {count}{ranks}", "zh": "  其他 rank 上的后果：{count} 处{ranks}"},
    "eager": {"en": "Graph vs eager: {summary}", "zh": "图模式 vs eager：{summary}"},
    "leftovers": {"en": "still running after the command ended (left alone; `kill -- -{pgid}` stops the group):",
                  "zh": "命令结束后仍在运行（未处理；`kill -- -{pgid}` 可结束整个进程组）："},
    "killed_list": {"en": "killed after the stop (SIGKILL):", "zh": "停止后被强制结束（SIGKILL）："},
    "no_diagnosis": {"en": "nothing to diagnose: the command printed nothing and wrote no plog",
                     "zh": "没有可诊断的内容：命令没有输出，也没有写 plog"},
    "wrote": {"en": "wrote", "zh": "已写入"},
    "folder": {"en": "the raw record", "zh": "原始记录"},
    "archive": {"en": "to attach to an issue", "zh": "可直接附到 issue"},
    "redacted": {"en": "redacted: {what}; --no-redact keeps them", "zh": "已脱敏：{what}；--no-redact 可保留"},
    "nothing_redacted": {"en": "redaction found nothing to remove", "zh": "脱敏未发现需移除的内容"},
    "not_redacted": {"en": "not redacted (--no-redact)", "zh": "未脱敏（--no-redact）"},
    "dropped": {"en": "output over --max-output-mb: {dropped} of {total} dropped between the head and the tail",
                "zh": "输出超过 --max-output-mb：头尾之间丢弃了 {total} 中的 {dropped}"},
    "eager_start": {"en": "graph vs eager: running it again with graph mode off ({how})",
                    "zh": "图模式 vs eager：关闭图模式（{how}）后再运行一次"},
}


def text(key: str, lang: str, **values: Any) -> str:
    return pick(_T[key], lang).format(**values)


def job_texts(lang: str) -> Dict[str, Callable[..., str]]:
    """The lines `child.Job` prints while the job runs."""
    def forwarded(name: str, pgid: int, next: str) -> str:  # noqa: A002 - the message's own word
        line = PREFIX + text("forwarded", lang, name=name, pgid=pgid)
        return line + (text("again", lang, next=next) if next else "")

    return {
        "forwarded": forwarded,
        "hang": lambda **v: PREFIX + text("hang", lang, **v),
        "killed": lambda **v: PREFIX + text("killed", lang, **v),
    }


def shown_path(path: Optional[str]) -> str:
    """Relative to the working directory when inside it (shorter to read and to paste)."""
    if not path:
        return ""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return relative if not relative.startswith("..") else path


def start_lines(folder: str, switches: List[Dict[str, Any]], lang: str, style: Style) -> List[str]:
    lines = [PREFIX + text("recording", lang, folder=shown_path(folder) + os.sep)]
    for switch in switches:
        action = pick(_T[switch["action"]], lang)
        shown = f"{switch['name']}={switch['value']}" if switch.get("value") is not None else switch["name"]
        lines.append(style.dim(f"  {action}  {shown}  — {pick(switch['why'], lang)}"))
    return lines


def duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def status_line(result, lang: str) -> str:
    values = dict(status=result.exit_status, duration=duration(result.duration_s), signal=result.signal or "",
                  signals=", ".join(result.forwarded))
    if result.status == "passed":
        return PREFIX + text("passed", lang, **values)
    key = {"hang": "hung", "interrupted": "interrupted", "signal": "failed_signal"}.get(result.ended_by, "failed_exit")
    return PREFIX + text(key, lang, **values)


def summary_lines(result, lang: str, style: Style) -> List[str]:
    """After the report: ranks, A/B, leftovers, what was written."""
    lines: List[str] = []
    failure = result.first_failure
    if failure and failure.get("rank") is not None and len(failure.get("ranks_seen") or []) > 1:
        lines.append(style.bold(text("first_failure", lang, rank=failure["rank"],
                                     time=f", {failure['time']}" if failure.get("time") else "",
                                     source=failure["source"], line=failure["line"])))
        lines.append("  " + failure["text"][:300])
        if failure.get("consequences"):
            ranks = failure.get("consequence_ranks") or []
            lines.append(text("consequences", lang, count=failure["consequences"],
                              ranks=f" (ranks {', '.join(map(str, ranks))})" if ranks else ""))
    if result.eager:
        lines.append(style.bold(text("eager", lang, summary=pick(result.eager["summary"], lang))))
    if result.leftovers:
        pgid = result.leftovers[0].get("pgid", "")
        lines.append(text("leftovers", lang, pgid=pgid))
        lines.extend(f"  {p['pid']}  {p['command'][:200]}" for p in result.leftovers)
    if result.killed:
        lines.append(text("killed_list", lang))
        lines.extend(f"  {p['pid']}  {p['command'][:200]}" for p in result.killed)
    if result.output.get("dropped_bytes"):
        lines.append(text("dropped", lang, dropped=_size(result.output["dropped_bytes"]), total=_size(result.output["bytes"])))
    for note in result.notes:
        lines.append(style.dim("note: " + note))
    return lines


def written_lines(result, lang: str) -> List[str]:
    if not result.folder:
        return [PREFIX + text("removed", lang)]
    lines = [PREFIX + text("wrote", lang)]
    listed = ", ".join(_describe_file(result, name) for name in result.files if "/" not in name and name != "run.json")
    plogs = len(result.plogs)
    if plogs:
        listed += f", {plogs} plog{'s' if plogs != 1 else ''}"
    lines.append(f"  {shown_path(result.folder)}{os.sep}  {text('folder', lang)}: {listed}")
    if result.archive:
        if not result.redacted:
            redaction = text("not_redacted", lang)
        elif result.redactions:
            from npu_graph_skill.run.pack import describe_redactions

            redaction = text("redacted", lang, what=describe_redactions(result.redactions, lang))
        else:
            redaction = text("nothing_redacted", lang)
        lines.append(f"  {shown_path(result.archive)}  {text('archive', lang)} ({redaction})")
    return lines


def _describe_file(result, name: str) -> str:
    if name == "output.log" and result.output:
        return f"output.log ({_size(result.output.get('kept_bytes', 0))}, {result.output.get('lines', 0):,} lines)"
    return name


def _size(count: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"
