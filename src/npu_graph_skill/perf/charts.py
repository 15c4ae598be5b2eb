"""Pictures of the perf reports.

* `--html out.html`: one self-contained page (inline SVG and CSS, no scripts, no external assets)
  that opens on an offline machine; needs only the standard library.
* `--plot out.png`: a matplotlib figure; matplotlib is the optional extra `plot`
  (`pip install 'npu-graph-skill[plot]'`), imported only here.

Charts: per-step stacked time (computing / communication / free) for traces; latency
distribution and per-iteration latency, eager vs graph, for benchmarks; tasks per stream for
graph dumps.
"""
from __future__ import annotations

import html
import math
from typing import Any, Dict, List, Sequence, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.perf.output import write_atomic, write_with

COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]
SERIES_COLORS = {"computing": "#4e79a7", "communication": "#e15759", "free": "#bab0ac",
                 "eager": "#f28e2b", "graph": "#4e79a7"}
W, H = 760, 300
PAD_L, PAD_R, PAD_T, PAD_B = 64, 16, 34, 54
# inside every SVG too, so a chart copied out of the page keeps its look
SVG_STYLE = ("<style>.t{font:600 14px sans-serif}.a{font:11px sans-serif;fill:#555}"
             ".g{stroke:#e5e5e5}</style>")


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 4, 8, 10):  # quarters of these are round numbers (grid lines at y_max / 4)
        if value <= step * exp:
            return step * exp
    return 10 * exp


def _frame(title: str, y_max: float, y_unit: str) -> List[str]:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img">',
           f'<title>{_esc(title)}</title>', SVG_STYLE,
           f'<text x="{W / 2}" y="20" text-anchor="middle" class="t">{_esc(title)}</text>']
    plot_h = H - PAD_T - PAD_B
    for i in range(5):
        value = y_max * i / 4
        y = PAD_T + plot_h - plot_h * i / 4
        out.append(f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" class="g"/>')
        out.append(f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end" class="a">{value:g}</text>')
    out.append(f'<text x="14" y="{PAD_T + plot_h / 2}" transform="rotate(-90 14 {PAD_T + plot_h / 2})" '
               f'text-anchor="middle" class="a">{_esc(y_unit)}</text>')
    return out


def _legend(names: Sequence[str], colors: Sequence[str]) -> List[str]:
    out, x = [], PAD_L
    for name, color in zip(names, colors):
        out.append(f'<rect x="{x}" y="{H - 16}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{x + 14}" y="{H - 7}" class="a">{_esc(name)}</text>')
        x += 24 + 7 * len(name)
    return out


def svg_stacked_bars(title: str, labels: Sequence[str], series: Sequence[Tuple[str, Sequence[float], str]],
                     y_unit: str) -> str:
    totals = [sum(s[1][i] for s in series) for i in range(len(labels))]
    y_max = _nice_max(max(totals or [0]))
    out = _frame(title, y_max, y_unit)
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    n = max(len(labels), 1)
    slot = plot_w / n
    bar = max(min(slot * 0.7, 60), 1)
    for i, label in enumerate(labels):
        x = PAD_L + slot * i + (slot - bar) / 2
        base = PAD_T + plot_h
        for name, values, color in series:
            h = plot_h * values[i] / y_max
            base -= h
            out.append(f'<rect x="{x:.1f}" y="{base:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{color}">'
                       f'<title>{_esc(label)} {_esc(name)}: {values[i]:.3f} {_esc(y_unit)}</title></rect>')
        if n <= 30 or i % math.ceil(n / 30) == 0:
            out.append(f'<text x="{x + bar / 2:.1f}" y="{PAD_T + plot_h + 14}" text-anchor="middle" class="a">'
                       f'{_esc(label)[:10]}</text>')
    out += _legend([s[0] for s in series], [s[2] for s in series])
    out.append("</svg>")
    return "\n".join(out)


def svg_histogram(title: str, samples: Dict[str, Sequence[float]], bins: int = 40) -> str:
    values = [v for vs in samples.values() for v in vs]
    if not values:
        return ""
    low, high = min(values), max(values)
    width = (high - low) / bins if high > low else 1.0
    counts = {}
    for name, vs in samples.items():
        hist = [0] * bins
        for v in vs:
            hist[min(int((v - low) / width), bins - 1) if high > low else 0] += 1
        counts[name] = hist
    y_max = _nice_max(max(max(h) for h in counts.values()))
    out = _frame(title, y_max, "count")
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    slot = plot_w / bins
    for name, hist in counts.items():
        color = SERIES_COLORS.get(name, COLORS[0])
        for i, c in enumerate(hist):
            if c:
                h = plot_h * c / y_max
                out.append(f'<rect x="{PAD_L + slot * i:.1f}" y="{PAD_T + plot_h - h:.1f}" width="{slot:.1f}" '
                           f'height="{h:.1f}" fill="{color}" fill-opacity="0.55"><title>{_esc(name)} '
                           f'{low + width * i:.3f}-{low + width * (i + 1):.3f} ms: {c}</title></rect>')
    for i in range(0, bins + 1, max(bins // 8, 1)):
        out.append(f'<text x="{PAD_L + slot * i:.1f}" y="{PAD_T + plot_h + 14}" text-anchor="middle" class="a">'
                   f'{low + width * i:.3g}</text>')
    out.append(f'<text x="{W - PAD_R}" y="{PAD_T + plot_h + 28}" text-anchor="end" class="a">ms</text>')
    out += _legend(list(counts), [SERIES_COLORS.get(n, COLORS[0]) for n in counts])
    out.append("</svg>")
    return "\n".join(out)


def svg_lines(title: str, series: Dict[str, Sequence[float]], y_unit: str) -> str:
    values = [v for vs in series.values() for v in vs]
    if not values:
        return ""
    y_max = _nice_max(max(values))
    n = max(len(vs) for vs in series.values())
    out = _frame(title, y_max, y_unit)
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    for name, vs in series.items():
        points = " ".join(f"{PAD_L + plot_w * i / max(n - 1, 1):.1f},{PAD_T + plot_h - plot_h * v / y_max:.1f}"
                          for i, v in enumerate(vs))
        out.append(f'<polyline points="{points}" fill="none" stroke="{SERIES_COLORS.get(name, COLORS[0])}" '
                   'stroke-width="1.5"/>')
    out.append(f'<text x="{W - PAD_R}" y="{PAD_T + plot_h + 28}" text-anchor="end" class="a">iteration</text>')
    out += _legend(list(series), [SERIES_COLORS.get(n, COLORS[0]) for n in series])
    out.append("</svg>")
    return "\n".join(out)


def svg_hbars(title: str, items: Sequence[Tuple[str, float]], unit: str) -> str:
    if not items:
        return ""
    height = PAD_T + 22 * len(items) + 30
    v_max = _nice_max(max(v for _, v in items))
    label_w = 260
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" role="img">',
           f'<title>{_esc(title)}</title>', SVG_STYLE,
           f'<text x="{W / 2}" y="20" text-anchor="middle" class="t">{_esc(title)}</text>']
    for i, (label, value) in enumerate(items):
        y = PAD_T + 22 * i
        w = (W - label_w - 90) * value / v_max
        out.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end" class="a">{_esc(label[:42])}</text>')
        out.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="15" fill="{COLORS[0]}">'
                   f'<title>{_esc(label)}: {value:.3f} {_esc(unit)}</title></rect>')
        out.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 14}" class="a">{value:.1f} {_esc(unit)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# --- what each report draws ------------------------------------------------------------------

def charts_for(kind: str, report: Any, lang: str) -> List[str]:
    zh = lang == "zh"
    svgs: List[str] = []
    if kind == "trace":
        if report.steps:
            labels = [s.step for s in report.steps]
            svgs.append(svg_stacked_bars(
                "每步时间（ms）" if zh else "Time per step (ms)", labels,
                [("computing", [s.computing_us / 1000 for s in report.steps], SERIES_COLORS["computing"]),
                 ("communication (not overlapped)", [s.communication_not_overlapped_us / 1000 for s in report.steps],
                  SERIES_COLORS["communication"]),
                 ("free", [s.free_us / 1000 for s in report.steps], SERIES_COLORS["free"])], "ms"))
        if report.top_operators:
            svgs.append(svg_hbars("算子类型总耗时" if zh else "Time by operator type",
                                  [(o["op_type"], o["total_us"]) for o in report.top_operators], "µs"))
        if report.kernels and report.kernels.top_instances:
            svgs.append(svg_hbars("耗时最长的 kernel" if zh else "Longest kernels",
                                  [(k["name"], k["duration_us"]) for k in report.kernels.top_instances], "µs"))
    elif kind == "bench":
        samples = {name: vs for name, vs in (("eager", report.eager_ms), ("graph", report.graph_ms)) if vs}
        svgs.append(svg_histogram("时延分布（eager vs 图重放）" if zh else "Latency distribution (eager vs graph replay)",
                                  samples))
        svgs.append(svg_lines("逐次迭代时延（ms）" if zh else "Latency per iteration (ms)", samples, "ms"))
    elif kind == "graph-dump":
        kinds = sorted(report.kinds, key=lambda k: -report.kinds[k])
        svgs.append(svg_stacked_bars(
            "每条流的任务" if zh else "Tasks per stream", [s.stream for s in report.streams],
            [(k, [float(s.kinds.get(k, 0)) for s in report.streams], COLORS[i % len(COLORS)])
             for i, k in enumerate(kinds)], "tasks"))
    return [s for s in svgs if s]


CSS = ("body{font-family:-apple-system,'Segoe UI','Noto Sans CJK SC','Microsoft YaHei',sans-serif;margin:24px;"
       "color:#222;max-width:1000px}svg{display:block;margin:12px 0;background:#fff}.t{font-size:14px;font-weight:600}"
       ".a{font-size:11px;fill:#555}.g{stroke:#e5e5e5}pre{background:#f6f8fa;padding:12px;overflow-x:auto;"
       "font-size:12px;white-space:pre-wrap}")


def write_html(path: str, kind: str, report: Any, lang: str, text_report: str) -> None:
    title = {"trace": "Profiler trace", "bench": "Graph vs eager", "graph-dump": "aclGraph dump"}.get(kind, kind)
    body = "\n".join(charts_for(kind, report, lang))
    page = (f'<!DOCTYPE html>\n<html lang="{_esc(lang)}"><head><meta charset="utf-8">'
            f"<title>npu-graph perf {_esc(title)}</title><style>{CSS}</style></head><body>\n"
            f"<h1>npu-graph perf {_esc(kind)}</h1>\n{body}\n<pre>{_esc(text_report)}</pre>\n</body></html>\n")
    write_atomic(path, page)


def write_png(path: str, kind: str, report: Any, lang: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'npu-graph-skill[plot]' "
                        "(or use --html, which needs nothing extra)") from None
    panels = _png_panels(kind, report)
    if not panels:
        raise UserError("nothing to plot: the report has no per-step or per-iteration data")
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 3.2 * len(panels)), squeeze=False)
    for ax, draw in zip(axes[:, 0], panels):
        draw(ax)
    fig.tight_layout()
    try:
        write_with(path, lambda tmp: fig.savefig(tmp, dpi=110))
    finally:
        plt.close(fig)


def _png_panels(kind: str, report: Any) -> List[Any]:
    panels = []
    if kind == "trace" and report.steps:
        def steps(ax: Any) -> None:
            labels = [s.step for s in report.steps]
            bottom = [0.0] * len(labels)
            for name, key, color in (("computing", "computing_us", SERIES_COLORS["computing"]),
                                     ("communication (not overlapped)", "communication_not_overlapped_us",
                                      SERIES_COLORS["communication"]),
                                     ("free", "free_us", SERIES_COLORS["free"])):
                values = [getattr(s, key) / 1000 for s in report.steps]
                ax.bar(labels, values, bottom=bottom, label=name, color=color)
                bottom = [b + v for b, v in zip(bottom, values)]
            ax.set_ylabel("ms")
            ax.set_title("Time per step")
            ax.legend(fontsize=8)
        panels.append(steps)
    if kind == "trace" and report.top_operators:
        def ops(ax: Any) -> None:
            items = report.top_operators[::-1]
            ax.barh([o["op_type"][:40] for o in items], [o["total_us"] for o in items], color=COLORS[0])
            ax.set_xlabel("µs")
            ax.set_title("Time by operator type")
        panels.append(ops)
    if kind == "bench":
        samples = {name: vs for name, vs in (("eager", report.eager_ms), ("graph", report.graph_ms)) if vs}
        if samples:
            def hist(ax: Any) -> None:
                everything = [v for vs in samples.values() for v in vs]
                low, high = min(everything), max(everything)
                if high <= low:
                    low, high = low * 0.95, high * 1.05 + 1e-9
                edges = [low + (high - low) * i / 40 for i in range(41)]  # one set of bins for both modes
                for name, vs in samples.items():
                    ax.hist(vs, bins=edges, alpha=0.55, label=name, color=SERIES_COLORS[name])
                ax.set_xlabel("ms")
                ax.set_title("Latency distribution")
                ax.legend(fontsize=8)

            def lines(ax: Any) -> None:
                for name, vs in samples.items():
                    ax.plot(vs, label=name, color=SERIES_COLORS[name], linewidth=1)
                ax.set_xlabel("iteration")
                ax.set_ylabel("ms")
                ax.set_title("Latency per iteration")
                ax.legend(fontsize=8)
            panels += [hist, lines]
    if kind == "graph-dump" and report.streams:
        def streams(ax: Any) -> None:
            labels = [s.stream for s in report.streams]
            bottom = [0] * len(labels)
            for i, k in enumerate(sorted(report.kinds, key=lambda k: -report.kinds[k])):
                values = [s.kinds.get(k, 0) for s in report.streams]
                ax.bar(labels, values, bottom=bottom, label=k, color=COLORS[i % len(COLORS)])
                bottom = [b + v for b, v in zip(bottom, values)]
            ax.set_title("Tasks per stream")
            ax.legend(fontsize=7, ncol=3)
        panels.append(streams)
    return panels
