"""Run the checks in dependency order and gather a `DoctorReport`.

`run_doctor` is the function behind `npu-graph doctor` and `api.run_doctor`. Everything it touches
can be handed in — the command runner, the environment, the Ascend install base — so tests run
the whole doctor against doubles.
"""
from __future__ import annotations

import os
import time
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.doctor import ascend
from npu_graph_skill.doctor.checks import checks_for
from npu_graph_skill.doctor.commands import Runner, current_python, run_command
from npu_graph_skill.doctor.context import DEFAULT_TIMEOUTS, CheckSpec, DoctorContext, Outcome
from npu_graph_skill.doctor.model import (BACKENDS, CRIT, FAIL, PASS, SEVERE, SKIP, STATUSES, WARN, CheckResult,
                                          DoctorReport, Remedy, Text, txt)

ENVIRONMENT_CHECKS = ("python", "cann", "driver", "torch", "torch_npu_installed", "torch_npu_import", "versions",
                      "devices", "graph_api", "capture_settings", "log_vars", "device_health")


def resolve_backend(ctx: DoctorContext) -> Tuple[str, Text]:
    """auto: npu when torch_npu or an Ascend install is there, then cuda when torch is a CUDA build."""
    npu_version = ctx.package("torch-npu")
    if npu_version:
        return "npu", txt(f"auto: npu (torch-npu {npu_version} is installed)", f"auto：npu（已安装 torch-npu {npu_version}）")
    toolkit = ascend.find_toolkit(ctx.environ, ctx.ascend_base)
    driver = ascend.find_driver(ctx.ascend_base)
    if toolkit.path or driver.path:
        where = toolkit.path or driver.path
        return "npu", txt(f"auto: npu (Ascend software at {where})", f"auto：npu（发现昇腾软件 {where}）")
    if ctx.package("torch"):
        probe = ctx.probe("import", ["--modules", "torch"])
        cuda = (probe.data or {}).get("torch_cuda")
        if cuda:
            return "cuda", txt(f"auto: cuda (torch built with CUDA {cuda})", f"auto：cuda（torch 的 CUDA 版本 {cuda}）")
    return "none", txt("auto: no accelerator (no torch_npu, no Ascend install, torch is not a CUDA build)",
                       "auto：未发现加速器（无 torch_npu、无昇腾安装、torch 非 CUDA 版本）")


def run_doctor(backend: str = "auto", python: Optional[str] = None, environ: Optional[Mapping[str, str]] = None,
               runner: Optional[Runner] = None, timeout: Optional[float] = None,
               timeouts: Optional[Dict[str, float]] = None, ascend_base: Optional[str] = None,
               progress: Optional[Callable[[CheckResult], None]] = None, **_ignored) -> DoctorReport:
    """Check the environment for graph mode. `python`: the interpreter to check (default: this one).

    `timeout` caps every probe; `timeouts` sets them one by one (info, import, devices, graph_api,
    capture, smi). `progress` is called with each result as it is decided.
    """
    if backend not in ("auto",) + BACKENDS:
        raise UserError(f"unknown backend {backend!r}: use npu, cuda or auto")
    python = python or current_python()
    limits = dict(DEFAULT_TIMEOUTS)
    if timeout:
        limits = {key: float(timeout) for key in limits}
    limits.update(timeouts or {})
    start = time.monotonic()
    ctx = DoctorContext(backend="npu" if backend == "auto" else backend, python=python,
                        environ=dict(os.environ if environ is None else environ), runner=runner or run_command,
                        timeouts=limits, ascend_base=ascend_base or ascend.DEFAULT_BASE)
    notes: List[Text] = []
    if backend == "auto":
        ctx.backend, why = resolve_backend(ctx)
        notes.append(why)
    results: List[CheckResult] = []
    specs = checks_for(ctx.backend) if ctx.backend in BACKENDS else _no_backend_checks()
    for spec in specs:
        result = _run_one(spec, ctx)
        ctx.results[spec.id] = result
        results.append(result)
        if progress:
            progress(result)
    counts = {status: sum(1 for r in results if r.status == status) for status in STATUSES}
    return DoctorReport(backend=ctx.backend, requested_backend=backend, python=python, checks=results, counts=counts,
                        seconds=round(time.monotonic() - start, 2), verdict=_verdict(results), notes=notes)


def _no_backend_checks() -> List[CheckSpec]:
    from npu_graph_skill.doctor.checks import check_python, check_torch

    def no_accelerator(ctx: DoctorContext) -> Outcome:
        return Outcome(FAIL, txt("no accelerator backend: graph mode needs torch_npu (Ascend) or a CUDA build of torch",
                                 "没有加速器后端：图模式需要 torch_npu（昇腾）或 CUDA 版 torch"),
                       evidence=[f"torch-npu: {ctx.package('torch-npu') or 'not installed'}",
                                 f"torch: {ctx.package('torch') or 'not installed'}",
                                 f"no CANN or driver under {ctx.ascend_base}"],
                       remedy=[Remedy(txt("on an Ascend server, check the interpreter (--python) or install torch_npu; to test on a GPU use --backend cuda",
                                          "在昇腾服务器上请确认解释器（--python）或安装 torch_npu；在 GPU 上测试请用 --backend cuda"))])

    return [CheckSpec("python", txt("Python", "Python"), check_python),
            CheckSpec("torch", txt("PyTorch", "PyTorch"), check_torch, ("python",)),
            CheckSpec("backend", txt("Accelerator", "加速器"), no_accelerator)]


def _run_one(spec: CheckSpec, ctx: DoctorContext) -> CheckResult:
    blocked = [dep for dep in spec.depends_on if dep in ctx.results and not ctx.results[dep].ok]
    if blocked:
        reasons = [f"{dep} ({ctx.results[dep].status})" for dep in blocked]
        return CheckResult(id=spec.id, title=spec.title, status=SKIP,
                           summary=txt("skipped: depends on " + ", ".join(reasons),
                                       "已跳过：所依赖的 " + "、".join(reasons) + " 未通过"),
                           depends_on=list(spec.depends_on))
    start = time.monotonic()
    try:
        outcome = spec.func(ctx)
    except (KeyboardInterrupt, UserError):
        raise
    except Exception as exc:  # noqa: BLE001 - a bug in one check must not hide the others
        outcome = Outcome(FAIL, txt(f"this check itself failed: {exc.__class__.__name__}: {exc}",
                                    f"本检查自身出错：{exc.__class__.__name__}: {exc}"),
                          remedy=[Remedy(txt("please report it with `npu-graph env` output",
                                             "请附上 `npu-graph env` 的输出反馈此问题"))])
    return CheckResult(id=spec.id, title=spec.title, status=outcome.status, summary=outcome.summary,
                       evidence=outcome.evidence, remedy=outcome.remedy, anchors=outcome.anchors,
                       depends_on=list(spec.depends_on), data=outcome.data,
                       seconds=round(time.monotonic() - start, 2))


def _verdict(results: List[CheckResult]) -> Text:
    severe = [r for r in results if r.status in SEVERE]
    env_severe = [r for r in severe if r.id in ENVIRONMENT_CHECKS or r.id == "backend"]
    if env_severe:
        names = ", ".join(f"{r.id} ({r.status})" for r in env_severe)
        return txt(f"Environment problem — fix these first, before looking at your code: {names}",
                   f"环境问题 —— 请先修复以下各项，再排查代码：{names}")
    if severe:
        return txt("The environment checks pass, but the capture/replay self-test fails: the NPU stack itself cannot run a graph",
                   "环境检查通过，但捕获/重放自检失败：NPU 软件栈本身无法运行图")
    if any(r.status == WARN for r in results):
        return txt("Ready for graph mode, with warnings: a failure in your run is more likely in your code, but read the warnings",
                   "图模式环境可用（有警告）：运行中的问题更可能在代码中，但请先阅读警告")
    if any(r.status == SKIP for r in results):
        return txt("No failure found, but some checks were skipped", "未发现失败，但部分检查被跳过")
    return txt("Ready for graph mode: a failure in your run is in your code or configuration, not the environment",
               "图模式环境正常：运行中的问题出在代码或配置，而非环境")


__all__ = ["run_doctor", "resolve_backend", "PASS", "WARN", "FAIL", "CRIT", "SKIP"]
