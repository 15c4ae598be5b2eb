"""Rendering of a `LogReport` as terminal text or Markdown, in English or Chinese."""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

from npu_graph_skill.core.render import Style, md_table, text_table
from npu_graph_skill.logs.findings import title
from npu_graph_skill.logs.model import ErrorGroup, LogReport, TimelineStat

WORDS = {
    "read": {"en": "read", "zh": "读取"},
    "files": {"en": "files", "zh": "个文件"},
    "lines": {"en": "lines", "zh": "行"},
    "in": {"en": "in", "zh": "用时"},
    "layouts": {"en": "Layouts", "zh": "日志格式"},
    "first_failure": {"en": "First failure", "zh": "首个故障"},
    "rank": {"en": "rank", "zh": "rank"},
    "at": {"en": "at", "zh": "时间"},
    "codes": {"en": "codes", "zh": "错误码"},
    "only_conseq": {"en": "only consequences were found: the rank that failed first is probably not among these logs "
                          "(collect the logs of every rank, e.g. $HOME/ascend/log/debug/plog and device-*/ of all nodes)",
                    "zh": "只找到连带错误：首先出错的 rank 很可能不在这些日志中（请收集所有 rank 的日志，如所有节点的 "
                          "$HOME/ascend/log/debug/plog 与 device-*/）"},
    "consequences": {"en": "Consequences on other ranks", "zh": "其他 rank 的连带错误"},
    "also_failed": {"en": "Later decisive errors on other ranks", "zh": "其他 rank 之后的关键错误"},
    "window": {"en": "Root-cause window", "zh": "根因窗口"},
    "errors": {"en": "Errors", "zh": "错误"},
    "warnings": {"en": "Warnings", "zh": "警告"},
    "timeline": {"en": "Timeline", "zh": "时间线"},
    "memory": {"en": "Memory", "zh": "内存"},
    "anomalies": {"en": "Anomalies", "zh": "异常"},
    "notes": {"en": "Notes", "zh": "说明"},
    "none_found": {"en": "no errors, warnings or graph-mode events found", "zh": "未发现错误、警告或图模式事件"},
    "id": {"en": "id", "zh": "编号"},
    "count": {"en": "count", "zh": "次数"},
    "first": {"en": "first", "zh": "首次"},
    "ranks": {"en": "ranks", "zh": "rank"},
    "message": {"en": "message", "zh": "信息"},
    "where": {"en": "where", "zh": "位置"},
    "kind": {"en": "kind", "zh": "类型"},
    "source": {"en": "from", "zh": "来源"},
    "more": {"en": "more", "zh": "更多"},
    "value": {"en": "value", "zh": "数值"},
    "role": {"en": "role", "zh": "角色"},
    "max": {"en": "max", "zh": "最大"},
    "total": {"en": "total", "zh": "合计"},
    "too_close": {"en": "Too close to order (within the clocks' uncertainty)", "zh": "无法排序（在时钟误差范围内）"},
    "clocks": {"en": "Clocks", "zh": "时钟"},
    "node": {"en": "node", "zh": "节点"},
    "agree": {"en": "agree with the reference within", "zh": "与基准时钟一致，误差不超过"},
    "reference": {"en": "reference", "zh": "基准"},
    "nodes": {"en": "nodes", "zh": "个节点"},
}
ROLE = {"decisive": {"en": "decisive", "zh": "关键"}, "consequence": {"en": "consequence", "zh": "连带"},
        "benign": {"en": "benign", "zh": "无害"}, "warning": {"en": "warning", "zh": "警告"},
        "notice": {"en": "notice", "zh": "提示"}}
KIND = {
    "capture": {"en": "capture", "zh": "捕获"}, "replay_interval": {"en": "replay spacing", "zh": "重放间隔"},
    "update": {"en": "update", "zh": "更新"}, "update_calls": {"en": "update calls", "zh": "更新调用"},
    "compile": {"en": "compile", "zh": "编译"}, "capture_summary": {"en": "capture (framework total)", "zh": "捕获（框架汇总）"},
    "fallback": {"en": "eager fallback", "zh": "回退 eager"},
    "oom": {"en": "out of memory", "zh": "内存不足"}, "allocator_peak": {"en": "allocator peak", "zh": "分配器峰值"},
    "capture_memory": {"en": "memory taken by capture", "zh": "捕获占用内存"},
    "free_after_capture": {"en": "free after capture", "zh": "捕获后剩余"},
    "allocator_retry": {"en": "allocator retries", "zh": "分配器重试"},
}
WINDOW_LINES_TEXT = 12  # lines of the root-cause window shown on a terminal (all of them in --md / --json)
GROUPS_TEXT = 15


def w(key: str, lang: str) -> str:
    entry = WORDS.get(key) or ROLE.get(key) or KIND.get(key)
    return entry.get(lang, entry["en"]) if entry else key


def _short(text: str, width: int = 110) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024.0
    return str(n)


def place(where: Any, line: bool = True) -> str:
    """`node07:path:line` for a line read on another node (merged summaries), `path:line` otherwise."""
    text = f"{where.node}:{where.source}" if getattr(where, "node", "") else where.source
    return f"{text}:{where.line}" if line else text


def _clock_lines(report: LogReport, lang: str) -> List[str]:
    """One line per node whose clock was corrected or could not be checked, one for those that agree."""
    if not report.clocks:
        return []
    zh = lang == "zh"
    out = []
    agree = [c for c in report.clocks if c.method == "agrees"]
    for clock in report.clocks:
        if clock.method == "reference":
            out.append(f"  {clock.node}: {w('reference', lang)}")
        elif clock.method in ("estimated", "given"):
            how = ("给定" if zh else "given") if clock.method == "given" else (
                f"由 {clock.events} 个共同事件估计" if zh else f"from {clock.events} shared events")
            out.append(f"  {clock.node}: {clock.offset_s:+.3f} s ± {clock.uncertainty_s or 0:.3f} s ({how})")
        elif clock.method == "unknown":
            out.append(f"  {clock.node}: " + ("没有与其他节点共同的事件，时间按原样使用" if zh else
                                             "no event shared with the other nodes: times taken as printed"))
    if agree:
        worst = max(c.uncertainty_s or 0.0 for c in agree)
        out.append(f"  {len(agree)} {w('nodes', lang)} {w('agree', lang)} {worst:.3f} s" if not zh else
                   f"  {len(agree)} {w('nodes', lang)}{w('agree', lang)} {worst:.3f} 秒")
    return out


def _secs(value: Optional[float], unit: str = "s") -> str:
    if value is None:
        return "-"
    if unit != "s":
        return f"{value:g}"
    if value < 1:
        return f"{value * 1e3:.2f} ms"
    return f"{value:.2f} s"


def headline(report: LogReport, lang: str) -> str:
    t = report.totals
    speed = f", {t['mb_per_s']} MB/s" if t.get("mb_per_s") else ""
    if lang == "zh":
        return (f"npu-graph logs：{w('read', lang)} {t['files']} {w('files', lang)}，{t['lines']:,} 行，{_size(t['bytes'])}，"
                f"{w('in', lang)} {t.get('seconds', 0)} 秒{speed}")
    return (f"npu-graph logs: read {t['files']} file{'s' if t['files'] != 1 else ''}, {t['lines']:,} lines, "
            f"{_size(t['bytes'])} in {t.get('seconds', 0)} s{speed}")


def _counts_line(report: LogReport, lang: str) -> str:
    by_role = {}
    for group in report.errors:
        by_role[group.role] = by_role.get(group.role, 0) + group.count
    parts = [f"{w(role, lang)} {n}" for role, n in by_role.items()]
    warn = sum(g.count for g in report.warnings)
    notices = sum(g.count for g in report.warnings if g.role == "notice")
    if lang == "zh":
        of = f"（其中 {notices} 条是例行打印的提示）" if notices else ""
        return f"{w('errors', lang)}：{'，'.join(parts) or 0}；{w('warnings', lang)}：{warn}{of}；{w('anomalies', lang)}：{len(report.anomalies)}"
    of = f" ({notices} of them notices printed routinely)" if notices else ""
    return f"{w('errors', lang)}: {', '.join(parts) or 0}; {w('warnings', lang)}: {warn}{of}; {w('anomalies', lang)}: {len(report.anomalies)}"


def _layouts(report: LogReport) -> str:
    seen = {}
    for source in report.sources:
        for name, count in source.layouts.items():
            seen[name] = seen.get(name, 0) + count
    return ", ".join(sorted(seen, key=lambda k: -seen[k]))


def render_text(report: LogReport, lang: str, summary: bool = False, style: Optional[Style] = None) -> str:
    style = style or Style()
    out: List[str] = [style.bold(headline(report, lang)), f"{w('layouts', lang)}: {_layouts(report) or '-'}",
                      _counts_line(report, lang)]
    failure = report.first_failure
    if failure:
        out.append("")
        where = place(failure.where)
        rank = f"{w('rank', lang)} {failure.rank}" if failure.rank is not None else w("rank", lang) + " ?"
        stamp = (failure.time or "-") + (f" ± {failure.clock_uncertainty_s:.3f} s" if failure.clock_uncertainty_s else "")
        out.append(style.red(style.bold(f"{failure.id} {title('E-010', lang)}: {rank}, {stamp}  ({where})")))
        out.append("  " + _short(failure.where.text, 160))
        if failure.codes:
            out.append(f"  {w('codes', lang)}: " + "; ".join(
                f"{c.code}{' ' + c.name if c.name else ''}" for c in failure.codes))
        if failure.only_consequences:
            out.append("  " + style.yellow(w("only_conseq", lang)))
        if failure.consequences:
            ranks = sorted({c.rank for c in failure.consequences if c.rank is not None})
            out.append(f"  {w('consequences', lang)}: {len(failure.consequences)}"
                       + (f" ({w('ranks', lang)} {', '.join(map(str, ranks))})" if ranks else ""))
            if not summary:
                for item in failure.consequences[:5]:
                    out.append(f"    - {w('rank', lang)} {item.rank if item.rank is not None else '?'} {item.time}  "
                               f"{_short(item.where.text, 120)}")
        if failure.also_failed:
            out.append(f"  {w('also_failed', lang)}: " + ", ".join(
                f"{w('rank', lang)} {c.rank} {c.time}" for c in failure.also_failed[:8]))
        if failure.too_close:
            out.append(style.yellow(f"  {w('too_close', lang)}: " + ", ".join(
                f"{w('rank', lang)} {c.rank} {c.time}" + (f" ({c.where.node})" if c.where.node else "")
                for c in failure.too_close[:8])))
        if not summary and failure.window:
            center = failure.where.line - failure.window_first_line
            lo = max(0, center - WINDOW_LINES_TEXT // 2)
            hi = min(len(failure.window), lo + WINDOW_LINES_TEXT)
            out.append(f"  {w('window', lang)} ({place(failure.where, line=False)}, {failure.window_first_line + lo}–"
                       f"{failure.window_first_line + hi - 1}):")
            for i in range(lo, hi):
                mark = ">" if i == center else " "
                out.append(style.dim(f"   {mark} {failure.window_first_line + i:>7} | {_short(failure.window[i], 150)}"))
    elif not report.errors and not report.warnings and not report.timeline and not report.memory:
        out.append(w("none_found", lang))
    clocks = _clock_lines(report, lang)
    if clocks:
        out.append("")
        out.append(style.bold(w("clocks", lang)))
        out.extend(clocks)
    if report.anomalies:
        out.append("")
        out.append(style.bold(w("anomalies", lang)))
        for anomaly in report.anomalies[: (5 if summary else 20)]:
            out.append(f"  {anomaly.id} {title(anomaly.id, lang)}: {anomaly.message.get(lang) or anomaly.message['en']}")
    if summary:
        return "\n".join(out) + "\n"
    if report.errors:
        out.append("")
        out.append(style.bold(w("errors", lang)))
        out.append(_group_table(report.errors[:GROUPS_TEXT], lang, text_table))
        if len(report.errors) > GROUPS_TEXT:
            out.append(f"  … {len(report.errors) - GROUPS_TEXT} {w('more', lang)} (--json)")
    if report.warnings:
        out.append("")
        out.append(style.bold(w("warnings", lang)))
        out.append(_group_table(report.warnings[:8], lang, text_table))
    if report.timeline:
        out.append("")
        out.append(style.bold(w("timeline", lang)))
        out.append(_timeline_table(report.timeline, lang, text_table))
        for stat in report.timeline:
            if stat.unfinished:
                out.append(style.yellow(f"  {stat.id}: {_unfinished(stat, lang)}"))
    if report.memory:
        out.append("")
        out.append(style.bold(w("memory", lang)))
        for item in report.memory:
            out.append(f"  {item.id} {title(item.id, lang)}: {_memory_text(item, lang)}")
    if report.notes:
        out.append("")
        out.append(w("notes", lang) + ":")
        out.extend(f"  - {note}" for note in report.notes)
    return "\n".join(out) + "\n"


def _group_table(groups: Sequence[ErrorGroup], lang: str, table: Callable[..., str]) -> str:
    rows = []
    for group in groups:
        codes = ",".join(c.code for c in group.codes[:3])
        ranks = ",".join(map(str, group.ranks[:6])) + ("…" if len(group.ranks) > 6 else "")
        role = f"{w(group.role, lang)} {group.notice}" if group.notice else w(group.role, lang)
        rows.append([group.id, role, group.count, group.first_time[5:19] if group.first_time else "-",
                     ranks or "-", codes or "-", _short(group.message, 90)])
    headers = [w("id", lang), w("role", lang), w("count", lang), w("first", lang), w("ranks", lang), w("codes", lang),
               w("message", lang)]
    return _indent(table(headers, rows)) if table is text_table else table(headers, rows)


def _timeline_table(stats: Sequence[TimelineStat], lang: str, table: Callable[..., str]) -> str:
    rows = []
    for stat in stats:
        rows.append([stat.id, w(stat.kind, lang), stat.source, stat.count, _secs(stat.p50, stat.unit),
                     _secs(stat.p99, stat.unit), _secs(stat.max, stat.unit), _secs(stat.total, stat.unit)])
    headers = [w("id", lang), w("kind", lang), w("source", lang), w("count", lang), "P50", "P99", w("max", lang),
               w("total", lang)]
    return _indent(table(headers, rows)) if table is text_table else table(headers, rows)


def _unfinished(stat: TimelineStat, lang: str) -> str:
    where = place(stat.examples[0]) if stat.examples else "?"
    if lang == "zh":
        return f"{stat.unfinished} 次捕获开始后没有结束（首个在 {where}）：失败发生在捕获过程中"
    return f"{stat.unfinished} capture(s) began and never ended (first at {where}): the failure happened during capture"


def _memory_text(item: Any, lang: str) -> str:
    values = item.values
    zh = lang == "zh"
    if item.kind == "oom":
        return f"{item.count} × " + _short(item.examples[0].text, 120) if item.examples else str(item.count)
    if item.kind == "allocator_peak":
        parts = [f"{name.rsplit('/', 1)[-1]}: {'保留' if zh else 'reserved'} {_size(v['peak_reserved_bytes'])}, "
                 f"{'已分配' if zh else 'allocated'} {_size(v['peak_allocated_bytes'])}" for name, v in list(values.items())[:6]]
        return "; ".join(parts)
    if item.kind == "capture_memory":
        return (f"最大 {values.get('max_gib')} GiB（{item.count} 行）" if zh
                else f"max {values.get('max_gib')} GiB over {item.count} line(s)")
    if item.kind == "free_after_capture":
        return f"{'最少' if zh else 'min'} {values.get('min_gib')} GB"
    return f"{item.count}"


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def render_markdown(report: LogReport, lang: str, summary: bool = False) -> str:
    out: List[str] = [f"# {headline(report, lang)}", "", f"- {w('layouts', lang)}: {_layouts(report) or '-'}",
                      f"- {_counts_line(report, lang)}"]
    failure = report.first_failure
    if failure:
        rank = failure.rank if failure.rank is not None else "?"
        out += ["", f"## {failure.id} {title('E-010', lang)}: {w('rank', lang)} {rank}, {failure.time or '-'}", "",
                f"`{place(failure.where)}`", "", "```text", failure.where.text, "```"]
        if failure.clock_uncertainty_s:
            out += ["", f"± {failure.clock_uncertainty_s:.3f} s"]
        if failure.codes:
            out.append("")
            out.append(f"{w('codes', lang)}: " + "; ".join(
                f"`{c.code}` {c.name} — {c.meaning}".rstrip(" —") for c in failure.codes))
        if failure.only_consequences:
            out += ["", f"> {w('only_conseq', lang)}"]
        if failure.consequences:
            out += ["", f"### {w('consequences', lang)}", ""]
            out.append(md_table([w("rank", lang), w("first", lang), w("where", lang), w("message", lang)],
                                [[c.rank if c.rank is not None else "?", c.time, place(c.where),
                                  _short(c.where.text, 140)] for c in failure.consequences[:20]]))
        if failure.also_failed:
            out += ["", f"### {w('also_failed', lang)}", ""]
            out.append(md_table([w("rank", lang), w("first", lang), w("where", lang), w("message", lang)],
                                [[c.rank, c.time, place(c.where), _short(c.where.text, 140)]
                                 for c in failure.also_failed[:20]]))
        if failure.too_close:
            out += ["", f"### {w('too_close', lang)}", ""]
            out.append(md_table([w("rank", lang), w("first", lang), w("where", lang), w("message", lang)],
                                [[c.rank, c.time, place(c.where), _short(c.why, 140)] for c in failure.too_close[:20]]))
        if failure.window and not summary:
            out += ["", f"### {w('window', lang)} ({place(failure.where, line=False)}, {failure.window_first_line}–"
                        f"{failure.window_first_line + len(failure.window) - 1})", "", "```text"]
            out.extend(failure.window)
            out.append("```")
    clocks = _clock_lines(report, lang)
    if clocks:
        out += ["", f"## {w('clocks', lang)}", ""]
        out.extend("- " + line.strip() for line in clocks)
    if report.anomalies:
        out += ["", f"## {w('anomalies', lang)}", ""]
        out.extend(f"- **{a.id}** {title(a.id, lang)}: {a.message.get(lang) or a.message['en']}" for a in report.anomalies)
    if not summary:
        if report.errors:
            out += ["", f"## {w('errors', lang)}", "", _group_table(report.errors, lang, md_table)]
        if report.warnings:
            out += ["", f"## {w('warnings', lang)}", "", _group_table(report.warnings, lang, md_table)]
        if report.timeline:
            out += ["", f"## {w('timeline', lang)}", "", _timeline_table(report.timeline, lang, md_table)]
            out.extend(f"\n> {stat.id}: {_unfinished(stat, lang)}" for stat in report.timeline if stat.unfinished)
        if report.memory:
            out += ["", f"## {w('memory', lang)}", ""]
            out.extend(f"- **{m.id}** {title(m.id, lang)}: {_memory_text(m, lang)}" for m in report.memory)
    if report.notes:
        out += ["", f"## {w('notes', lang)}", ""]
        out.extend(f"- {note}" for note in report.notes)
    return "\n".join(out) + "\n"
