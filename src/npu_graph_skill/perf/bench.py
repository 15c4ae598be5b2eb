"""`npu-graph perf bench TARGET`: the same step run eagerly and as a captured graph, measured.

TARGET is `module:function` (or `path/to/file.py:function`); the function returns
`(callable, example_inputs)` and may take `device=` (and any `--arg KEY=VALUE`).

Method (the CUDA-graph recipe torch_npu mirrors; Ascend/pytorch torch_npu/npu/graphs.py):
1. eager: `warmup` untimed calls, then `iters` timed calls;
2. graph: the inputs are cloned into static inputs, `warmup` calls run on a side stream, the step
   is captured once on that stream, `warmup` untimed replays follow, then `iters` timed replays,
   each first refreshing the static inputs with `copy_` (so the graph pays for feeding new data,
   as it does in real use);
3. each iteration is timed with device events and followed by a synchronize: samples are
   per-step latencies in milliseconds, without overlap between iterations.
Every report records the environment (device, torch / torch_npu / CANN versions), warm-up and
iterations, as the design brief requires of every comparison.
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import InputError, UserError
from npu_graph_skill.core.model import Record
from npu_graph_skill.perf.backends import ensure_cwd_importable, host_env, open_backend
from npu_graph_skill.perf.findings import Finding, text
from npu_graph_skill.perf.stats import Summary, summarize

SCHEMA = "npu-graph-skill/perf-bench/1"
SLOW_CAPTURE_MS = 10_000.0  # design brief: capture > 10 s is an anomaly
JITTER_RATIO = 3.0  # design brief: replay P99 > 3 x P50 is an anomaly


@dataclasses.dataclass
class BenchReport(Record):
    target: str
    lang: str
    config: Dict[str, Any]
    env: Dict[str, Any]
    eager_ms: List[float]
    graph_ms: List[float]
    eager: Optional[Summary]
    graph: Optional[Summary]
    speedup_p50: Optional[float]
    speedup_mean: Optional[float]
    capture_ms: Optional[float]
    memory: Dict[str, Optional[float]]
    outputs_max_abs_diff: Optional[float]
    graph_error: Optional[str]
    findings: List[Finding]
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = SCHEMA

    @property
    def failed(self) -> bool:
        return any(f.level == "problem" for f in self.findings)


def _one_line(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()
    return f"{exc.__class__.__name__}: {message[0]}" if message else exc.__class__.__name__


def _root_then_last(exc: BaseException) -> str:
    """torch_npu's graph context always calls capture_end on exit, so a capture error arrives
    chained behind a second one; the first is the root cause (NPUGraph __exit__, graphs.py:916-931)."""
    chain = [exc]
    while chain[-1].__context__ is not None and len(chain) < 10:
        chain.append(chain[-1].__context__)
    if len(chain) == 1:
        return _one_line(exc)
    return f"{_one_line(chain[-1])} (then: {_one_line(exc)})"


def _parse_value(raw: str) -> Any:
    for convert in (int, float):
        try:
            return convert(raw)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(raw.lower(), raw)


def parse_target_args(pairs: Optional[List[str]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--arg {pair!r}: expected KEY=VALUE")
        out[key.strip()] = _parse_value(value.strip())
    return out


def _import_module(spec: str) -> Any:
    if spec.endswith(".py") or os.sep in spec:
        if os.path.isdir(spec):
            raise InputError(f"{spec}: is a directory, expected a .py file")
        if not os.path.isfile(spec):
            raise InputError(f"{spec}: no such file")
        name = "_npu_graph_target_" + os.path.splitext(os.path.basename(spec))[0]
        module_spec = importlib.util.spec_from_file_location(name, spec)
        if module_spec is None or module_spec.loader is None:
            raise InputError(f"{spec}: cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
        return module
    ensure_cwd_importable()
    return importlib.import_module(spec)


def resolve_target(target: str) -> Callable[..., Any]:
    """Import the factory named by TARGET (before any accelerator is touched, so a typo fails fast)."""
    module_spec, sep, attr = target.rpartition(":")
    if not sep or not module_spec or not attr:
        raise UserError(f"target {target!r}: expected module:function or path/to/file.py:function")
    try:
        return getattr(_import_module(module_spec), attr)
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's code: report, never a traceback
        raise UserError(f"cannot load target {target!r}: {_one_line(exc)}") from None


def build_step(target: str, factory: Callable[..., Any], device: str,
               kwargs: Dict[str, Any]) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    """Call the factory (with `device=` when it takes one) and check it returned (callable, inputs)."""
    call_kwargs = dict(kwargs)
    try:
        parameters = inspect.signature(factory).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        if "device" in parameters or takes_any:
            call_kwargs.setdefault("device", device)
    except (TypeError, ValueError):
        pass
    try:
        result = factory(**call_kwargs)
    except Exception as exc:  # noqa: BLE001
        raise UserError(f"target {target!r} raised {_one_line(exc)}") from None
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and callable(result[0])):
        raise UserError(f"target {target!r} must return (callable, example_inputs), got {type(result).__name__}")
    fn, inputs = result
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    return fn, tuple(inputs)


def _timed(backend: Any, step: Callable[[], Any], iters: int) -> List[float]:
    samples: List[float] = []
    for _ in range(iters):
        start, end = backend.Event(), backend.Event()
        start.record()
        step()
        end.record()
        backend.synchronize()
        samples.append(float(start.elapsed_time(end)))
    return samples


def run_bench(target: str, backend: str = "auto", warmup: int = 10, iters: int = 100, device: int = 0,
              lang: str = "en", target_args: Optional[Dict[str, Any]] = None, atol: float = 1e-3,
              **_: Any) -> BenchReport:
    if warmup < 0 or iters < 1:
        raise UserError("--warmup must be >= 0 and --iters >= 1")
    factory = resolve_target(target)
    be = open_backend(backend, device)
    fn, inputs = build_step(target, factory, getattr(be, "device", "cpu"), target_args or {})
    env = dict(host_env())
    env.update(be.env())
    config = {"backend": env.get("backend", backend), "device": env.get("device"), "warmup": warmup, "iters": iters,
              "timing": "device events per iteration, synchronize after each",
              "graph_includes_input_copy": True, "target_args": target_args or {}}
    notes: List[str] = []

    try:
        for _ in range(warmup):
            fn(*inputs)
        be.synchronize()
        be.reset_peak_memory()
        eager_ms = _timed(be, lambda: fn(*inputs), iters)
        eager_out = fn(*inputs)
        be.synchronize()
        eager_peak = be.memory().get("peak_allocated_mb")
    except Exception as exc:  # noqa: BLE001 - the user's step failed eagerly: nothing to compare
        raise UserError(f"target step failed in eager mode: {_one_line(exc)}") from None

    graph_ms: List[float] = []
    capture_ms = capture_pool = graph_peak = diff = None
    graph_error = None
    static = [be.clone(x) for x in inputs]
    try:
        side = be.Stream()
        side.wait_stream(be.current_stream())
        with be.stream(side):
            for _ in range(warmup):
                fn(*static)
        be.current_stream().wait_stream(side)
        be.synchronize()
        # the graph context empties the cache before capturing; do it first so the reserved-memory
        # delta is the capture's private pool, not cached blocks released on the way
        be.empty_cache()
        reserved_before = be.memory().get("reserved_mb")
        graph = be.Graph()
        started = time.perf_counter()
        with be.graph(graph, stream=side):
            static_out = fn(*static)
        be.synchronize()
        capture_ms = (time.perf_counter() - started) * 1000.0
        reserved_after = be.memory().get("reserved_mb")
        if reserved_before is not None and reserved_after is not None:
            capture_pool = reserved_after - reserved_before

        def replay() -> None:
            for dst, src in zip(static, inputs):
                if be.is_tensor(dst):
                    dst.copy_(src)
            graph.replay()

        for _ in range(warmup):
            replay()
        be.synchronize()
        be.reset_peak_memory()
        graph_ms = _timed(be, replay, iters)
        graph_peak = be.memory().get("peak_allocated_mb")
        diff = be.max_abs_diff(eager_out, static_out)
    except Exception as exc:  # noqa: BLE001 - a capture failure is a finding, not a crash
        graph_error = _root_then_last(exc)

    eager = summarize(eager_ms)
    graph_summary = summarize(graph_ms)
    speedup_p50 = eager.p50 / graph_summary.p50 if eager and graph_summary and graph_summary.p50 > 0 else None
    speedup_mean = eager.mean / graph_summary.mean if eager and graph_summary and graph_summary.mean > 0 else None
    report = BenchReport(
        target=target, lang=lang, config=config, env=env, eager_ms=eager_ms, graph_ms=graph_ms, eager=eager,
        graph=graph_summary, speedup_p50=speedup_p50, speedup_mean=speedup_mean, capture_ms=capture_ms,
        memory={"eager_peak_mb": eager_peak, "graph_peak_mb": graph_peak, "capture_pool_mb": capture_pool},
        outputs_max_abs_diff=diff, graph_error=graph_error, findings=[], notes=notes)
    report.findings = _findings(report, atol)
    return report


def _findings(r: BenchReport, atol: float) -> List[Finding]:
    out: List[Finding] = []
    if r.graph_error:
        out.append(Finding(
            id="BN-CAPTURE-FAILED", level="problem",
            title=text("Graph capture or replay failed", "图捕获或重放失败"),
            detail=text(f"Eager ran; the graph path raised {r.graph_error}",
                        f"eager 可以运行；图路径抛出异常 {r.graph_error}"),
            advice=text("Paste the full error into `npu-graph diagnose -` for the phase, layer and fix.",
                        "把完整报错交给 `npu-graph diagnose -`，获取阶段、层级与修复建议。")))
        return out
    if r.speedup_p50 is not None and r.eager and r.graph:
        faster = r.speedup_p50 >= 1.0
        out.append(Finding(
            id="BN-SPEEDUP", level="info" if faster else "warn",
            title=text(f"Graph replay is {r.speedup_p50:.2f}x eager (P50)", f"图重放相对 eager 加速 {r.speedup_p50:.2f} 倍（P50）"),
            detail=text(f"P50 eager {r.eager.p50:.3f} ms vs graph {r.graph.p50:.3f} ms; P99 {r.eager.p99:.3f} vs "
                        f"{r.graph.p99:.3f} ms over {r.graph.n} iterations after {r.config['warmup']} warm-up.",
                        f"P50：eager {r.eager.p50:.3f} ms，图 {r.graph.p50:.3f} ms；P99：{r.eager.p99:.3f} 对 "
                        f"{r.graph.p99:.3f} ms；预热 {r.config['warmup']} 次后测量 {r.graph.n} 次。"),
            advice=text("" if faster else
                        "The graph is slower: the step is probably device-bound (few, long kernels), or copying new "
                        "inputs into the static buffers costs more than the launches saved. Profile both with "
                        "torch_npu.profiler and run `npu-graph perf trace`.",
                        "" if faster else
                        "图模式更慢：该步可能受 device 计算限制（kernel 少而长），或向静态输入 copy_ 的开销超过了节省的下发开销。"
                        "请用 torch_npu.profiler 分别采集并运行 `npu-graph perf trace`。")))
    if r.graph and r.graph.p50 > 0 and r.graph.p99 > JITTER_RATIO * r.graph.p50:
        out.append(Finding(
            id="BN-JITTER", level="warn", title=text("Replay jitter", "重放抖动"),
            detail=text(f"Graph P99 {r.graph.p99:.3f} ms is more than 3 x P50 {r.graph.p50:.3f} ms.",
                        f"图重放 P99 {r.graph.p99:.3f} ms 超过 P50 {r.graph.p50:.3f} ms 的 3 倍。"),
            advice=text("Look for other processes on the device, host preemption, or memory pressure; rerun with more "
                        "iterations to see whether the tail persists.",
                        "检查设备上的其他进程、host 抢占或内存压力；增加迭代次数重测，看长尾是否持续。"),
            refs=["design brief: replay P99 > 3 x P50 is an anomaly"]))
    if r.capture_ms is not None and r.capture_ms > SLOW_CAPTURE_MS:
        out.append(Finding(
            id="BN-SLOW-CAPTURE", level="warn", title=text("Slow capture", "捕获耗时过长"),
            detail=text(f"Capture took {r.capture_ms / 1000:.1f} s (> 10 s).", f"捕获耗时 {r.capture_ms / 1000:.1f} s（> 10 s）。"),
            refs=["design brief: capture > 10 s is an anomaly"]))
    if r.outputs_max_abs_diff is not None and r.outputs_max_abs_diff > atol:
        out.append(Finding(
            id="BN-OUTPUT-MISMATCH", level="problem",
            title=text("Graph output differs from eager", "图输出与 eager 不一致"),
            detail=text(f"Largest absolute difference {r.outputs_max_abs_diff:.3g} (> {atol:g}) for the same inputs.",
                        f"相同输入下最大绝对误差 {r.outputs_max_abs_diff:.3g}（> {atol:g}）。"),
            advice=text("Typical causes: the step reads CPU values or Python state that were frozen at capture, random "
                        "ops, or inputs not refreshed in place (the graph reads the static buffers captured).",
                        "常见原因：步内读取了在捕获时被固化的 CPU 值或 Python 状态、随机算子、或输入没有原地刷新（图只读取捕获时的静态缓冲区）。")))
    return out
