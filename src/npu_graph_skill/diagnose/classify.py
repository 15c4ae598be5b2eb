"""Which lifecycle phase the evidence talks about, and on which layer the error surfaced.

Phase contexts are the plain words of each phase in the text (the generic signs of
knowledge/context_signs.yaml: capture, replay, 编译 ...) and the graph API's own frames. Patterns
use them as weak `context` matchers; `diagnose.phase` weighs them with the other signs.
"""
from __future__ import annotations

from typing import Dict, List, Sequence

from npu_graph_skill.core.model import Evidence
from npu_graph_skill.knowledge import prefilter

MAX_CUE_LINES = 50

# Codes whose family tells the phase when nothing else does (shared/reference/error_codes.md §4).
PHASE_OF_CODE = {
    **{str(c): "capture" for c in (107024, 107025, 107027, 107028, 107029, 107030, 107031, 107032, 107033, 107036,
                                   107038, 107041, 207005, 207008, 507903, 507009)},
    **{str(c): "replay" for c in (507011, 107026, 107003, 107004, 507015, 507035, 507014, 507018, 507048, 107020)},
    **{str(c): "memory" for c in (207001, 207018)},
    **{str(c): "update" for c in (207019, 107040)},
    "EL0004": "memory", "EE1016": "capture", "EE1009": "replay", "ERR00008": "environment",
}


def cue_lines(lines: Sequence[str], signs: Sequence) -> Dict[str, List[int]]:
    """sign id → the input lines where a generic sign (the plain words of a phase) occurs."""
    found: Dict[str, List[int]] = {}
    lower = "\n".join(lines).lower()
    for sign in signs:
        if sign.framework != "generic" or not prefilter.may_match(prefilter.literals(sign.regex), lower):
            continue
        regex = sign.compiled()["regex"]
        hits = [number for number, line in enumerate(lines, start=1) if regex.search(line)]
        if hits:
            found[sign.id] = hits[:MAX_CUE_LINES]
    return found


def phase_contexts(evidence: Evidence, cues: Dict[str, List[int]], signs: Sequence) -> Dict[str, List[int]]:
    """phase → input lines that show signs of it (the context a pattern's `context` matcher asks for)."""
    phase_of = {sign.id: sign.phase for sign in signs}
    found: Dict[str, List[int]] = {}
    for sign_id, lines in cues.items():
        found.setdefault(phase_of[sign_id], []).extend(lines)
    for frame in evidence.frames:
        name = frame.function
        if name in ("capture_begin", "capture_end", "__enter__", "__exit__") and "graph" in frame.file:
            found.setdefault("capture", []).append(frame.input_line)
        elif name == "replay":
            found.setdefault("replay", []).append(frame.input_line)
        elif name in ("update", "update_capture_record"):
            found.setdefault("update", []).append(frame.input_line)
    return {phase: sorted(set(lines)) for phase, lines in found.items()}


def detected_layer(evidence: Evidence, message_layer: str = "") -> str:
    """Where the error surfaced (not where its cause lies)."""
    if any(site.kind == "npu_check" for site in evidence.raise_sites) or any(
            m.kind in ("acl", "ecode", "inner") for m in evidence.codes):
        return "L4"
    if message_layer:
        return message_layer
    if any("op_plugin" in site.file or "OpApi" in site.file for site in evidence.raise_sites):
        return "L3"  # a C++ check raised in op-plugin's kernels is the operator layer's, not torch_npu's core
    if any(site.kind in ("cpp_exception", "assert") for site in evidence.raise_sites):
        return "L2"
    return "L1"
