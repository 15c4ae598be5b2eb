"""Which finding family a parsed line feeds — E (errors), T (timeline), M (memory) — and, for errors,
the role the line plays: the decisive failure, a consequence of a failure elsewhere, a benign
message, or context (traceback frames under a logger header).

The texts matched here are quoted in shared/reference/formats.md (§ numbers below) or in the
torch_npu / vLLM / SGLang sources cited next to each rule. Finding ids and their descriptions live
in `knowledge/log_findings.yaml`.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from npu_graph_skill.logs.formats import CodeHit, ParsedLine

ERROR_LEVELS = ("ERROR", "CRITICAL")

# -------------------------------------------------------------------------------------------
# Roles of error lines.
# -------------------------------------------------------------------------------------------

# Messages torch_npu itself declares harmless: the allocator retry (formats.md §1.5 memory, Ascend/pytorch#108).
_BENIGN = ("This error log can be ignored", "Get a block from the existing pool failed")

# What the other ranks report when one rank fails: HCCL link/notify waits and task/stream timeouts
# (formats.md §2.6 HCCL lines, the MC device-log sample's TaskException NOTIFY WAIT, the APP `dispatch timeout`
# line; codes 107019/107020/507046 ACL_ERROR_RT_{WAIT,TASK,STREAM_SYNC}_TIMEOUT, rt_error_codes.h;
# EI0002 notify wait timeout, EI0006 socket timeout, CANN error_code.json).
_CONSEQUENCE_TEXT = (
    "socket timeout", "get socket timeout", "socket establish timeout", "Some NPUs get socket timeout",
    "links establish completed failed", "p2p timeout", "Wait Enable P2P Failed", "NOTIFY WAIT", "notify wait",
    "Notify register", "dispatch timeout", "Heartbeat", "Stream synchronize timeout", "Getting socket times out",
    "Watchdog caught collective operation timeout", "HCCL error in", "call hccl api failed",
    "LINK_ERROR_INFO", "comm error", "dest_ip(user_rank)", "time out |",
)
_CONSEQUENCE_CODES = {"107019", "107020", "507046", "EI0002", "EI0006", "ERR02200"}

_TRACEBACK_LINE = re.compile(r"\s*(?:File \"|Traceback \(most recent call last\)|TraceBack \(most recent call last\)|\^+\s*$|~+)")
_ERRORISH = re.compile(r"(?i)error|fail|exception|timeout|timed out|invalid|abort|not support|out of memory|insufficient")
_CODE_LINE = re.compile(r" {3,4}(?! )")  # the source line under `  File "...", line N` (vLLM keeps one space of 4)
_LEADING_TAGS = re.compile(r"^(?:\[[^\]]*\])+")  # "[TaskException]", "[Wait][LinkEstablish]", "[INIT][DEFAULT]"
_FRAME_CODE = re.compile(r"\s{2,}\S")  # an indented line under a logger header: traceback code or a wrapped hint


def error_role(parsed: ParsedLine, codes: List[CodeHit]) -> str:
    """decisive | consequence | benign | context."""
    message = parsed.message
    if parsed.format == "vllm" and (_TRACEBACK_LINE.match(message) or _CODE_LINE.match(message) or
                                    (_FRAME_CODE.match(message) and not _ERRORISH.search(message))):
        return "context"
    for text in _BENIGN:
        if text in message:
            return "benign"
    for hit in codes:
        if hit.code in _CONSEQUENCE_CODES:
            return "consequence"
    for text in _CONSEQUENCE_TEXT:
        if text in message:
            return "consequence"
    if parsed.format == "plog" and not codes and not _ERRORISH.search(_LEADING_TAGS.sub("", message)):
        # a row of a multi-line plog payload (tables, TaskException details: formats.md §2.2), not an error of its own
        return "context"
    return "decisive"


def is_error(parsed: ParsedLine, codes: List[CodeHit]) -> bool:
    """An error-level line of any layout, a Python exception, or a bare line that carries an error code."""
    if parsed.level in ERROR_LEVELS:
        return True
    if parsed.format in ("exception", "cann_ecode", "pta_error"):
        return parsed.level != "WARNING"
    if parsed.format == "text" and codes:
        return any(hit.kind in ("acl", "ecode", "pta") for hit in codes) and bool(_ERRORISH.search(parsed.message))
    return False


def is_warning(parsed: ParsedLine) -> bool:
    """A WARNING line that says something: a logger header whose message is only a colour code (a banner's
    first line, vLLM-Ascend's FULL-graph warning) is not a finding of its own."""
    return parsed.level == "WARNING" and bool(parsed.message.strip())


# -------------------------------------------------------------------------------------------
# Signatures: one group per distinct message, whatever its numbers, pointers and paths.
# -------------------------------------------------------------------------------------------

# Pointers and handles (0x...), then any run starting with a digit through dots, colons and dashes: counters, sizes,
# ids, ranks and embedded timestamps (2026-06-30-12:05:19.360.581) all become one `#`.
_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d[\d.:\-]*")


def signature(parsed: ParsedLine, codes: List[CodeHit]) -> str:
    """`module|normalised message|codes`: numbers and pointers become `#`, codes are kept apart."""
    message = parsed.message[:240]
    normal = " ".join(_VOLATILE.sub("#", message).split())
    code_part = ",".join(hit.code for hit in codes if hit.kind in ("acl", "ecode", "pta", "inner", "hccl"))
    module = parsed.module if parsed.format in ("plog", "npu_g1", "npu_g2", "npu_g3", "torch_py") else parsed.format
    return f"{module}|{normal}|{code_part}"


# -------------------------------------------------------------------------------------------
# Timeline (T): graph lifecycle markers, by the layer that printed them.
# -------------------------------------------------------------------------------------------

# (needle at the start of the message, tag, source family). formats.md §1.5: C++ NPUGraph.cpp/Graph.cpp texts,
# Python graphs.py texts, the acl artifact's `[ACL CALL]` lines (AclInterface.cpp).
_TIMELINE_PREFIXES: Tuple[Tuple[str, str, str], ...] = (
    ("NPUGRAPH Capture begin done", "", ""),  # the second half of "Capture begin": not a new capture
    ("NPUGRAPH Capture beginAllocateToPool", "", ""),
    ("NPUGRAPH Capture begin", "capture_begin", "cpp"),
    ("NPUGRAPH Capture end done", "capture_end", "cpp"),
    ("NPUGRAPH Capture device=", "capture_begin", "py"),
    ("NPUGraph: capture completed", "capture_end", "py"),
    ("NPUGRAPH Replay", "replay", "npugraph"),
    ("NPUGRAPH TaskGroup update begin", "update_begin", "cpp"),
    ("NPUGRAPH TaskGroup update end", "update_end", "cpp"),
    ("NPUGraph: updating graph", "update", "py"),
    ("NPUGRAPH-TREE ACLGraph update", "update", "tree"),
    ("NPUGRAPH-TREE Node Record node=", "record", "tree"),
    ("[ACL CALL] aclmdlRICaptureBegin(", "capture_begin", "acl"),
    ("[ACL CALL] aclmdlRICaptureEnd(", "capture_end", "acl"),
    ("[ACL CALL] aclmdlRIExecuteAsync(", "replay", "acl"),
    ("[ACL CALL] aclmdlRICaptureTaskUpdateBegin(", "update_begin", "acl"),
    ("[ACL CALL] aclmdlRICaptureTaskUpdateEnd(", "update_end", "acl"),
)

# Durations printed by frameworks:
#   vLLM vllm/compilation/backends.py "Compiling a graph for dynamic shape takes %.2f s" / "... for shape %s takes %.2f s",
#   vllm/compilation/monitor.py "torch.compile takes %.2f s in total",
#   vllm(-ascend) model runner "Graph capturing finished in %.0f secs, took %.2f GiB" (formats.md §5),
#   SGLang model_runner "Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f GB. avail mem=%.2f GB."
#   and its later spelling "Capture ... graph end. elapsed=%.2f s".
_COMPILE_RE = re.compile(r"Compiling a graph for (?:dynamic shape|shape .*?) takes ([\d.]+) s|torch\.compile takes ([\d.]+) s in total")
_CAPTURE_SUMMARY_RE = re.compile(
    r"Graph capturing finished in ([\d.]+) secs?(?:, took (-?[\d.]+) GiB)?"
    r"|Capture (?:[\w ]+ )?graph end\. (?:Time elapsed: |elapsed=)([\d.]+) s"
    r"(?:.*?mem usage=([\d.]+) GB)?(?:.*?avail mem=([\d.]+) GB)?", re.IGNORECASE)
_AVAIL_RE = re.compile(r"avail mem=([\d.]+) GB")
# Graph mode silently off: torch/torch_npu graph trees (`skipping cudagraphs due to ...`, TN torch_npu/utils/_graph_tree.py,
# messages.csv), torch_npu's npugraphs backend (`NPUGraph: skipped — ...`).
_FALLBACK_RE = re.compile(r"skipping (?:npu|cuda|acl)a?graphs? due to|NPUGraph: skipped")


def timeline_event(parsed: ParsedLine) -> Optional[Tuple[str, str, float, float]]:
    """(tag, family, value, extra) for a lifecycle line, or None. value/extra carry seconds/GiB for summaries."""
    message = parsed.message
    if message.startswith("NPUGRAPH") or message.startswith("NPUGraph") or message.startswith("[ACL CALL] aclmdlRI"):
        for needle, tag, family in _TIMELINE_PREFIXES:
            if message.startswith(needle):
                return (tag, family, 0.0, 0.0) if tag else None
    if "ompil" in message:
        match = _COMPILE_RE.search(message)
        if match:
            seconds = float(match.group(1) or match.group(2))
            return ("compile_total" if match.group(2) else "compile", "framework", seconds, 0.0)
    if "aptur" in message:
        match = _CAPTURE_SUMMARY_RE.search(message)
        if match:
            if match.group(1) is not None:
                return ("capture_summary", "vllm", float(match.group(1)), float(match.group(2) or "nan"))
            return ("capture_summary", "sglang", float(match.group(3)), float(match.group(4) or "nan"))
    if "skipping" in message or "skipped" in message:
        if _FALLBACK_RE.search(message):
            return ("fallback", "graph_tree", 0.0, 0.0)
    return None


def avail_after_capture(message: str) -> Optional[float]:
    match = _AVAIL_RE.search(message)
    return float(match.group(1)) if match else None


# -------------------------------------------------------------------------------------------
# Memory (M).
# -------------------------------------------------------------------------------------------

# torch_npu OOM texts (formats.md §3.3, TN NPUCachingAllocator.cpp), CANN EL0004 / 207001 / 207018 (§2.5),
# and `isCannOOM` (TN NPUException.cpp: 'EL0004' or 'Failed to allocate').
_OOM_TEXT = ("out of memory", "OutOfMemoryError", "Failed to allocate", "Memory_Allocation_Failure")
_OOM_CODES = {"EL0004", "207001", "207018"}


def is_oom(parsed: ParsedLine, codes: List[CodeHit]) -> bool:
    message = parsed.message
    for text in _OOM_TEXT:
        if text in message:
            return True
    return any(hit.code in _OOM_CODES for hit in codes)


def is_allocator_retry(message: str) -> bool:
    return "Get a block from the existing pool failed" in message
