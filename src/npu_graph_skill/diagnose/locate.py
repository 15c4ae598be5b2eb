"""From the Python frame the user sees down to the check that raised: the drill-down, the first
frame of the user's (or the framework's) own code, the error chain in order, and what is missing.
"""
from __future__ import annotations

import re
from typing import Any, Collection, Dict, List, Optional

from npu_graph_skill.core.model import Evidence, Frame, MissingMaterial
from npu_graph_skill.diagnose.match import MessageHit
from npu_graph_skill.knowledge.loader import Knowledge

# The serving and compiler frameworks that drive graph mode, by package name.
FRAMEWORK_PACKAGES = ("vllm_ascend", "vllm_omni", "vllm", "sglang", "xllm", "lmdeploy", "dlinfer", "torchair",
                      "tensorrt_llm", "verl", "xpu_graph", "llama_cpp", r"mindie\w{0,40}")
# ... as directories of a frame's file
FRAMEWORK_PATHS = re.compile(r"[/\\](?:" + "|".join(FRAMEWORK_PACKAGES) + r")[/\\]", re.IGNORECASE)
TORCH_NPU_FRAME = re.compile(r"torch_npu[/\\]")
# torch, torch_npu, triton and Python's own modules: a frame there is not where anyone's code called in
LIBRARY_FRAME = re.compile(r"[/\\](?:torch|torch_npu|triton)[/\\]|[/\\]python3\.\d{1,2}[/\\](?!site-packages|dist-packages)"
                           r"|<frozen |threading\.py")


def user_frame(evidence: Evidence) -> Optional[Frame]:
    """The innermost frame outside torch / torch_npu / triton / the standard library: where the user's or
    the framework's code called into graph mode."""
    return next((frame for frame in reversed(evidence.frames) if not LIBRARY_FRAME.search(frame.file)), None)


def framework_frame(frame: Frame) -> bool:
    """The frame is a serving or compiler framework's file, not the user's own code."""
    return bool(FRAMEWORK_PATHS.search(frame.file))


def drill_down(evidence: Evidence, messages: List[MessageHit], knowledge: Knowledge) -> List[Dict[str, Any]]:
    """Steps from the outermost relevant frame to the runtime, each with its layer."""
    steps: List[Dict[str, Any]] = []
    frame = user_frame(evidence)
    if frame:
        kind = "framework" if framework_frame(frame) else "user code"
        steps.append({"layer": "L1", "kind": kind, "where": f"{frame.file}:{frame.line}", "function": frame.function,
                      "code": frame.code})
    for frame in evidence.frames:
        if TORCH_NPU_FRAME.search(frame.file):
            steps.append({"layer": "L1", "kind": "torch_npu python", "where": f"{_short(frame.file)}:{frame.line}",
                          "function": frame.function, "note": "line in the reporter's torch_npu version"})
    for hit in messages[:2]:
        entry = hit.entry
        v73 = f"; line {entry.line_v73} at v7.3.0" if entry.line_v73 else ""
        steps.append({"layer": entry.layer, "kind": "raise site", "where": f"{entry.repo} {entry.file}:{entry.line or entry.line_v73}",
                      "function": entry.function, "note": f"{entry.kind} at {entry.version}{v73}; {entry.condition}"[:400],
                      "message_id": entry.id})
    for site in evidence.raise_sites:
        if site.kind == "npu_check":
            steps.append({"layer": "L4", "kind": "ACL call", "where": f"{_short(site.file)}:{site.line}",
                          "function": site.function, "note": f"NPU_CHECK_ERROR({site.call})"})
            break
    cann = [s for s in evidence.raise_sites if s.kind == "cann" and s.function not in ("FuncErrorReason", "ReportCallError")]
    if cann:
        site = cann[0]
        steps.append({"layer": "L4", "kind": "CANN runtime", "where": f"{site.file}:{site.line}", "function": site.function})
    return _dedupe(steps)


def _short(path: str) -> str:
    index = path.find("torch_npu/")
    return path[index:] if index >= 0 else path


def _dedupe(steps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    seen = set()
    out = []
    for step in steps:
        key = (step["where"], step.get("function"))
        if key not in seen:
            seen.add(key)
            out.append(step)
    return out


def missing_materials(evidence: Evidence, lang: str, text: str, thorough: bool = True,
                      provided: Collection[str] = ()) -> List[MissingMaterial]:
    """The Iron Law: what the diagnosis still needs, each with the exact way to collect it. Logs are asked
    for only when the diagnosis is not already certain (`thorough`). `provided` names materials the caller
    collected with the input (`npu-graph run` bundles): versions, plog, graph_log, ranks."""
    zh = lang == "zh"
    missing: List[MissingMaterial] = []
    if not evidence.frames:
        missing.append(MissingMaterial(
            what="完整的 Python 回溯" if zh else "the full Python traceback",
            how=("重新运行并粘贴从 'Traceback (most recent call last)' 到最后一行的全部内容；vLLM 请附 worker 进程日志，而不只是 EngineCore 摘要"
                 if zh else "re-run and paste everything from 'Traceback (most recent call last)' to the last line; "
                            "for vLLM, the worker process log, not only the engine summary")))
    if "versions" not in provided and not {"cann", "torch_npu"} <= set(evidence.versions):
        missing.append(MissingMaterial(
            what="版本信息（CANN、torch、torch_npu、驱动、设备型号）" if zh else "versions (CANN, torch, torch_npu, driver, device model)",
            how="npu-graph env   # " + ("或：python -c 'import torch, torch_npu; print(torch.__version__, torch_npu.__version__)'; npu-smi info"
                                       if zh else "or: python -c 'import torch, torch_npu; print(torch.__version__, torch_npu.__version__)'; npu-smi info")))
    if not re.search(r"repro|复现|minimal|最小|capture_begin\(\)|torch\.npu\.graph\(|```", text, re.IGNORECASE):
        missing.append(MissingMaterial(
            what="最小复现脚本" if zh else "a minimal reproduction",
            how=("20 行以内：构造输入、在旁路流上预热、torch.npu.graph 捕获、replay，并注明使能方式（NPUGraph / graph() / make_graphed_callables / torch.compile / vLLM）"
                 if zh else "under 20 lines: build inputs, warm up on a side stream, capture with torch.npu.graph, replay; "
                            "say how graph mode is enabled (NPUGraph / graph() / make_graphed_callables / torch.compile / vLLM)")))
    has_runtime_code = any(m.kind in ("acl", "inner") for m in evidence.codes)
    has_plog = any(e.format == "plog" for e in evidence.log_events)
    if thorough and has_runtime_code and not has_plog and "plog" not in provided:
        pid = _pid(evidence)
        glob = f"plog-{pid}_*.log" if pid else "plog-<pid>_*.log"
        missing.append(MissingMaterial(
            what="该进程的 CANN plog" if zh else "the CANN plog of this process",
            how=f"ls ${{ASCEND_PROCESS_LOG_PATH:-$HOME/ascend/log}}/debug/plog/{glob}; npu-graph logs <that file>"))
    if thorough and "graph_log" not in provided and not any(e.message.startswith("NPUGRAPH") for e in evidence.log_events):
        missing.append(MissingMaterial(
            what="图生命周期日志" if zh else "the graph lifecycle log",
            how=("TORCH_NPU_LOGS=+aclgraph,cudagraphs（torch_npu master/26.x）或 TORCH_LOGS=cudagraphs（更早版本）重跑，"
                 "并保存 stderr；TORCH_NPU_GRAPHS_LOG_LEVEL 并不存在" if zh else
                 "re-run with TORCH_NPU_LOGS=+aclgraph,cudagraphs (torch_npu master/26.x) or TORCH_LOGS=cudagraphs (older) "
                 "and keep stderr; TORCH_NPU_GRAPHS_LOG_LEVEL does not exist")))
    if len(evidence.ranks) == 1 and "ranks" not in provided:
        missing.append(MissingMaterial(
            what="其他 rank 的日志" if zh else "the logs of the other ranks",
            how="npu-graph logs <dir with every rank's log>   # " + ("找出最先失败的 rank" if zh else "finds the rank that failed first")))
    return missing


def _pid(evidence: Evidence) -> str:
    for line in evidence.lines:
        match = re.search(r"\(PID:(\d+)", line) or re.search(r"pid=(\d+)\)", line)
        if match:
            return match.group(1)
    return ""
