"""Which lifecycle phase an input comes from when no known pattern explains it.

Every sign casts a weighted vote: a framework function in a traceback frame, a line the
framework prints while it captures or compiles, a setting (the context-sign table,
knowledge/context_signs.yaml, each sign with its source), an error code whose family belongs to
one phase, a torch_npu message of the table, the exception type, and the plain words of the
lifecycle (capture, replay, 编译 ...; the table's generic signs, twice when next to the error). A
sign counts once however often it repeats; a setting (how graph mode is configured, not where it
failed) counts only when nothing else votes. The phase with the largest sum wins, and the report
shows the votes, so the reader can check the call.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Sequence, Tuple

from npu_graph_skill.core.model import Evidence
from npu_graph_skill.diagnose.classify import PHASE_OF_CODE
from npu_graph_skill.diagnose.reflow import FlowText
from npu_graph_skill.knowledge import prefilter

CODE_WEIGHT = 0.45
MESSAGE_WEIGHT = 0.5
NEAR = 3  # lines: a phase word this close to the error counts twice
EARLIER_PROGRESS_FACTOR = 0.5
# Exception types that say the phase by themselves (Python's and torch's names).
EXCEPTION_PHASES: Sequence[Tuple["re.Pattern[str]", str, float]] = (
    (re.compile(r"(?:^|\.)(?:ImportError|ModuleNotFoundError)$"), "environment", 0.35),
    (re.compile(r"OutOfMemoryError$"), "memory", 0.35),
    (re.compile(r"BackendCompilerFailed|InternalTorchDynamoError|TorchRuntimeError|_dynamo\.exc\.\w+|Unsupported$|LoweringException"),
     "compile", 0.35),
)


@dataclasses.dataclass
class Vote:
    phase: str
    weight: float
    line: int
    why: str
    fallback: bool = False  # counts only when nothing else votes (a setting says how graph mode is set, not where it failed)

    def to_dict(self) -> Dict[str, object]:
        return {"phase": self.phase, "weight": round(self.weight, 3), "line": self.line, "why": self.why}


def phase_votes(evidence: Evidence, signs: Sequence, cues: Dict[str, List[int]], messages: Sequence,
                flow: FlowText, error_line: int) -> List[Vote]:
    """Every sign's vote, strongest first. `cues`: the lines of each generic sign (`classify.cue_lines`)."""
    votes: List[Vote] = []
    votes.extend(_frame_votes(evidence, [s for s in signs if s.kind == "frame"]))
    specific = _line_votes(flow, [s for s in signs if s.kind != "frame" and s.framework != "generic"], error_line)
    votes.extend(specific)
    # A line a framework's own sign explains ("Graph capturing finished") is not also a plain phase word.
    explained = {vote.line for vote in specific}
    votes.extend(_cue_votes([s for s in signs if s.id in cues], cues, error_line, explained))
    code = next((m for m in evidence.codes if m.code in PHASE_OF_CODE), None)
    if code:
        votes.append(Vote(PHASE_OF_CODE[code.code], CODE_WEIGHT, code.input_line, f"error code {code.code}"))
    if messages:
        hit = messages[0]
        votes.append(Vote(hit.entry.phase, MESSAGE_WEIGHT * hit.coverage, hit.line,
                          f"torch_npu message {hit.entry.id} ({hit.entry.function or hit.entry.file})"))
    for record in evidence.exceptions[-1:]:
        for regex, phase, weight in EXCEPTION_PHASES:
            if regex.search(record.type):
                votes.append(Vote(phase, weight, record.input_line, f"exception {record.type}"))
                break
    votes.sort(key=lambda v: (-v.weight, v.line))
    return votes


def _cue_votes(signs: Sequence, cues: Dict[str, List[int]], error_line: int, explained: set) -> List[Vote]:
    """The plain words of a phase vote once, and once more where they stand next to the error."""
    votes: List[Vote] = []
    for sign in signs:
        lines = [n for n in cues[sign.id] if n not in explained]
        if not lines:
            continue
        votes.append(Vote(sign.phase, sign.weight, lines[0], f"{sign.id} words of the {sign.phase} phase"))
        near = [n for n in lines if error_line and abs(n - error_line) <= NEAR]
        if near:
            votes.append(Vote(sign.phase, sign.weight, near[0], f"{sign.id} words of the {sign.phase} phase next to the error"))
    return votes


def _frame_votes(evidence: Evidence, signs: Sequence) -> List[Vote]:
    votes: List[Vote] = []
    if not evidence.frames:
        return votes  # nothing to compare: do not compile the signs' regexes (start-up)
    names = {frame.function for frame in evidence.frames}
    for sign in signs:
        if sign.function and sign.function not in names:
            continue
        compiled = sign.compiled()
        for frame in evidence.frames:
            if sign.function and frame.function != sign.function:
                continue
            if sign.function_regex and not compiled["function_regex"].fullmatch(frame.function):
                continue
            if sign.file and not compiled["file"].search(frame.file):
                continue
            votes.append(Vote(sign.phase, sign.weight, frame.input_line,
                              f"{sign.id} frame {frame.function} ({sign.framework})"))
            break  # a sign counts once, however deep the recursion
    return votes


def _line_votes(flow: FlowText, signs: Sequence, error_line: int) -> List[Vote]:
    votes: List[Vote] = []
    for sign in signs:
        literals = prefilter.literals(sign.regex)
        if not sign.weight or not flow.may_match(literals):  # a notice of weight 0 says nothing of the phase
            continue
        line = flow.search(sign.compiled()["regex"], literals)
        if not line:
            continue
        if sign.when == "after" and error_line and error_line < line:
            continue  # "capture finished" says nothing about an error printed before it
        votes.append(Vote(sign.phase, sign.weight, line, f"{sign.id} {sign.kind} ({sign.framework})",
                          fallback=sign.kind == "setting"))
    # Progress lines tell where the run was: the last one before the error is where it failed.
    progress = [v for v in votes if not v.fallback and (not error_line or v.line <= error_line)]
    if len({v.phase for v in progress}) > 1:
        last = max(progress, key=lambda v: v.line)
        for vote in progress:
            if vote.phase != last.phase:
                vote.weight *= EARLIER_PROGRESS_FACTOR
    return votes


def _counted(votes: Sequence[Vote]) -> List[Vote]:
    """Fallback votes (settings) count only when no other sign voted."""
    return [v for v in votes if not v.fallback] or list(votes)


def _sums(counted: Sequence[Vote]) -> Dict[str, float]:
    totals: Dict[str, float] = {}
    for vote in counted:
        totals[vote.phase] = totals.get(vote.phase, 0.0) + vote.weight
    return totals


def phase_totals(votes: Sequence[Vote]) -> Dict[str, float]:
    """Each phase's sum of the votes that count."""
    return _sums(_counted(votes))


def close_phases(votes: Sequence[Vote], phase: str, share: float = 0.5) -> List[str]:
    """Other phases whose votes reach `share` of the decided phase's, most votes first (at most two):
    what a report says is also possible when it decided on thin evidence."""
    totals = phase_totals(votes)
    best = totals.get(phase, 0.0)
    if best <= 0:
        return []
    return [p for p in sorted(totals, key=lambda p: -totals[p]) if p != phase and totals[p] >= share * best][:2]


def decide(votes: Sequence[Vote]) -> Tuple[str, float]:
    """(the phase with the largest sum of votes, its share of all votes); ("unknown", 0) with none.
    Fallback votes count only when no other sign voted."""
    counted = _counted(votes)
    totals = _sums(counted)
    if not totals:
        return "unknown", 0.0
    phase = max(totals, key=lambda p: (totals[p], -min(v.line for v in counted if v.phase == p)))
    return phase, round(totals[phase] / (sum(totals.values()) or 1.0), 3)  # votes of weight 0 share nothing
