"""Which lifecycle phase the evidence talks about, and on which layer the error surfaced.

Phase contexts are signs in the text (a capture_begin frame, "Capturing ACL graphs", an
aclmdlRIExecuteAsync call ...). Patterns use them as weak matchers; when no pattern fits they
decide the phase on their own.
"""
from __future__ import annotations

import re
from typing import Dict, List

from npu_graph_skill.core.model import Evidence

CONTEXT_SIGNS: Dict[str, "re.Pattern[str]"] = {
    "capture": re.compile(
        r"capture_begin|capture_end|CaptureBegin|CaptureEnd|\bcapture_model\b|_capture_\w|Capturing (?:ACL|CUDA|NPU) graphs"
        r"|graph[s]? captur|captur\w{0,20} (?:the |an? )?(?:ACL|NPU|CUDA)? ?graph|during NPU graph capture|stream is captur|capture mode"
        r"|torch\.(?:npu|cuda)\.graph\(|graphs\.py\", line \d+, in __enter__|aclmdlRICapture|捕获|入图", re.IGNORECASE),
    "replay": re.compile(r"\breplay|ExecuteAsync|NPUGraph::replay|重放", re.IGNORECASE),
    "update": re.compile(r"\.update\(|update_capture_record|graph_task_update|TaskUpdate|update_\w{0,40}params|task_group|参数更新", re.IGNORECASE),
    "compile": re.compile(r"torch\._dynamo|torch\._inductor|compile_fx|torch\.compile|FakeTensor|\bnpugraphs\b|npugraph_ex"
                          r"|torchair|cudagraph_mode|CompilationMode|编译", re.IGNORECASE),
    "memory": re.compile(r"out of memory|OutOfMemory|\bOOM\b|memory pool|mempool|graph_pool_handle|显存|内存", re.IGNORECASE),
    "environment": re.compile(r"ImportError|cannot open shared object|set_env\.sh|Failed to find function|undefined symbol"
                              r"|ModuleNotFoundError|version mismatch|npu-smi", re.IGNORECASE),
}

# Codes whose family tells the phase when nothing else does (shared/reference/error_codes.md §4).
PHASE_OF_CODE = {
    **{str(c): "capture" for c in (107024, 107025, 107027, 107028, 107029, 107030, 107031, 107032, 107033, 107036,
                                   107038, 107041, 207005, 207008, 507903, 507009)},
    **{str(c): "replay" for c in (507011, 107026, 107003, 107004, 507015, 507035, 507014, 507018, 507048, 107020)},
    **{str(c): "memory" for c in (207001, 207018)},
    **{str(c): "update" for c in (207019, 107040)},
    "EL0004": "memory", "EE1016": "capture", "EE1009": "replay", "ERR00008": "environment",
}


def phase_contexts(evidence: Evidence) -> Dict[str, List[int]]:
    """phase → input lines that show signs of it."""
    found: Dict[str, List[int]] = {}
    for number, line in enumerate(evidence.lines, start=1):
        for phase, regex in CONTEXT_SIGNS.items():
            if regex.search(line):
                found.setdefault(phase, []).append(number)
    for frame in evidence.frames:
        name = frame.function
        if name in ("capture_begin", "capture_end", "__enter__", "__exit__") and "graph" in frame.file:
            found.setdefault("capture", []).append(frame.input_line)
        elif name == "replay":
            found.setdefault("replay", []).append(frame.input_line)
        elif name in ("update", "update_capture_record"):
            found.setdefault("update", []).append(frame.input_line)
    return found


def phase_from_signs(evidence: Evidence, contexts: Dict[str, List[int]]) -> str:
    """The phase the evidence points to when no known pattern fits: codes first, then the signs."""
    for mention in evidence.codes:
        phase = PHASE_OF_CODE.get(mention.code)
        if phase:
            return phase
    if not contexts:
        return "unknown"
    # the phase whose signs are nearest the first exception (or the end of the text) wins ties
    anchor = evidence.exceptions[0].input_line if evidence.exceptions else len(evidence.lines)
    ranked = sorted(contexts.items(), key=lambda kv: (-len(kv[1]), min(abs(n - anchor) for n in kv[1])))
    return ranked[0][0]


def detected_layer(evidence: Evidence, message_layer: str = "") -> str:
    """Where the error surfaced (not where its cause lies)."""
    if any(site.kind == "npu_check" for site in evidence.raise_sites) or any(
            m.kind in ("acl", "ecode", "inner") for m in evidence.codes):
        return "L4"
    if message_layer:
        return message_layer
    if any(site.kind in ("cpp_exception", "assert") for site in evidence.raise_sites):
        return "L2"
    if any("op_plugin" in site.file or "OpApi" in site.file for site in evidence.raise_sites):
        return "L3"
    return "L1"
