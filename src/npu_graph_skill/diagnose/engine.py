"""The diagnosis: ingest → evidence → phase contexts → pattern scores → first-error rule →
drill-down → the four-section report (`core.model.Diagnosis`).
"""
from __future__ import annotations

import math
import re
from typing import Any, Collection, Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.ingest import TextSource, read_text, resolve_sources
from npu_graph_skill.core.model import Candidate, Diagnosis, Evidence
from npu_graph_skill.core.render import default_lang, phase_name, pick
from npu_graph_skill.diagnose import causes, classify, locate, notices, reference
from npu_graph_skill.diagnose.evidence import FRAME_RE, extract_evidence
from npu_graph_skill.diagnose.reflow import FlowText
from npu_graph_skill.diagnose.phase import Vote, close_phases, decide, phase_votes
from npu_graph_skill.diagnose.settings import parse_env, parse_settings
from npu_graph_skill.diagnose.wording import SignatureIndex
from npu_graph_skill.diagnose.match import (
    KNOWN, EvidenceIndex, MessageHit, PatternScore, match_messages, rank_patterns,
)
from npu_graph_skill.knowledge.loader import Knowledge, load_knowledge
from npu_graph_skill.knowledge.schema import FAMILY_OF_PHASE
from npu_graph_skill.logs.formats import strip_prefixes

LARGE_INPUT = 1024 * 1024  # above this a log is first reduced to its decisive events
MAX_CANDIDATES = 5
MIN_CANDIDATE_SCORE = 0.2  # a lone supporting sign (one frame, one shared code) is not worth listing


def diagnose(text: Optional[str] = None, paths: Optional[List[str]] = None, lang: Optional[str] = None,
             source_dir: Optional[str] = None, kb_dir: Optional[str] = None,
             source_files: Optional[List[str]] = None, provided: Collection[str] = ()) -> Diagnosis:
    """Diagnose pasted `text`, or the files/directories in `paths` (`-` = stdin). `source_files`: the
    user's scripts, linted for capture-unsafe code near the failing lines (files the traceback names
    are linted too when they can be read here). `provided`: materials collected with the input that
    the missing-materials list need not ask for (see locate.missing_materials)."""
    lang = lang or default_lang()
    notes: List[str] = []
    if text is None:
        text, notes = read_inputs(paths or ["-"])
    if not text.strip():
        raise InputError("the input is empty: paste the error, the traceback or the log")
    evidence = extract_evidence(text, notes)
    diagnosis = diagnose_evidence(evidence, text, lang, load_knowledge(), source_dir=source_dir, kb_dir=kb_dir,
                                  provided=provided)
    _lint_evidence(diagnosis, evidence, source_files, lang)
    return diagnosis


def read_inputs(paths: List[str]) -> Tuple[str, List[str]]:
    """The text to diagnose. Large inputs and directories are reduced by the log analyzer first."""
    sources = resolve_sources(paths)
    notes: List[str] = []
    total = sum(s.size for s in sources)
    if len(sources) > 1 or total > LARGE_INPUT:
        reduced = _reduce_logs(sources)
        if reduced is not None:
            text, reduce_notes = reduced
            return text, reduce_notes + [n for s in sources for n in s.notes]
    parts = [read_text(source, max_bytes=8 * LARGE_INPUT) for source in sources]
    notes.extend(n for s in sources for n in s.notes)
    return "\n".join(parts), notes


def _reduce_logs(sources: List[TextSource]):
    try:
        from npu_graph_skill.logs.analyze import reduce_for_diagnosis
    except ImportError:
        return None
    return reduce_for_diagnosis(sources)


def diagnose_evidence(evidence: Evidence, text: str, lang: str, knowledge: Knowledge,
                      source_dir: Optional[str] = None, kb_dir: Optional[str] = None,
                      provided: Collection[str] = ()) -> Diagnosis:
    # Lines a framework prints on normal runs say where the run was, but they are not the error: the
    # matchers, the plain words of a phase and the similar-words search read the input without them.
    hidden = notices.notice_lines(evidence.lines, knowledge.signs)
    shown = notices.shown(evidence.lines, hidden) if hidden else evidence.lines
    if hidden:  # a notice's advice ("set --disable-cuda-graph", "To disable, set VLLM_...=0") is no setting of the run
        evidence.env, evidence.settings = {}, {}
        parse_env(shown, evidence.env)
        parse_settings(shown, evidence.settings)
    cues = classify.cue_lines(shown, knowledge.signs)
    contexts = classify.phase_contexts(evidence, cues, knowledge.signs)
    index = EvidenceIndex(evidence, contexts, SignatureIndex.for_knowledge(knowledge), lines=shown)
    chain = error_chain(evidence, knowledge)
    root_line = chain[0]["line"] if chain else 0
    no_error = _no_error(evidence, hidden, chain)  # notices and routine log lines only: nothing failed in it
    messages = match_messages(knowledge, index)
    root_decisive = bool(chain) and chain[0]["role"] == "decisive"
    ranked = rank_patterns(knowledge, index, root_line, messages, root_decisive=root_decisive)
    top = ranked[0] if ranked and ranked[0].score >= KNOWN else None

    flow = FlowText(evidence.lines) if hidden else index.flow  # a notice still says where the run was
    votes = phase_votes(evidence, knowledge.signs, cues, messages, flow, _error_line_number(evidence, root_line))
    caller_check = internal_check = None  # torch_npu checks that decide the fix when no pattern matched
    if top:
        pattern = top.pattern
        phase, root_layer, fix_in = pattern.phase, pattern.root_layer, _whose_code(pattern.fix_in, evidence)
        layer = pattern.layer
    else:
        pattern = None
        caller_check = _caller_check(messages)
        internal_check = _internal_check(messages)
        # a pattern the input matches in part is a sign of that pattern's phase, as strong as the match
        votes.extend(Vote(s.pattern.phase, round(s.score, 3), 0, f"it matches {s.pattern.id} in part")
                     for s in ranked[:3] if s.score >= MIN_CANDIDATE_SCORE and no_error is None)
        if no_error is not None:  # a log that only stops: the run was where its last sign of a phase says
            votes = _last_signs(votes)
        phase, _ = decide(votes)
        layer = classify.detected_layer(evidence, messages[0].entry.layer if messages else "")
        root_layer, fix_in = layer, _whose_code(FIX_IN_OF_LAYER.get(layer, "cann_driver"), evidence)
        if caller_check:  # torch_npu refused the caller's arguments: the fix is in the calling code
            root_layer, fix_in = "L1", "user_code"

    query = _query_text(evidence, hidden)  # the words that can name a cause, for the similarity searches
    # The public reports like this one: when a pattern matched, those that concluded it; else the nearest.
    # with no error in the input there is no failure to explain: its phase is where its own lines say the run was
    reports = _similar_reports(query, top.pattern.id if top else None) if top or no_error is None else []
    if no_error is not None and not top:
        candidates = []
    elif top:  # the known match first; the other causes worth checking from the same ranking as a novel input's
        others = causes.rank_causes(ranked[1:], query, _similar_reports(query, None), evidence, knowledge, lang,
                                    MAX_CANDIDATES - 1, shown={top.pattern.id})
        candidates = [causes.candidate(top.pattern, round(top.score, 3), top, evidence, lang)] + others
    else:  # say what the evidence is like, with the low scores it deserves
        if reports:
            _vote_similar_reports(reports, votes)
        candidates = causes.rank_causes(ranked, query, reports, evidence, knowledge, lang, MAX_CANDIDATES)
        votes.extend(causes.cause_votes(candidates, votes))
        phase, _ = decide(votes)
    candidates = _with_ranked_causes(candidates, knowledge, lang)
    confidence = 0.0 if no_error is not None and not top else _confidence(ranked, _printed_lines(evidence))
    error_line = "" if no_error is not None and not top else _decisive_line(evidence, chain, top, hidden)
    # Recorded cases come after the patterns: they show what fixed a similar error before.
    candidates.extend(_similar_cases(kb_dir, {
        "phase": phase, "error": error_line, "novel": top is None,
        "candidates": [{"id": c.id, "kind": "pattern"} for c in candidates[:1]],
        "evidence_summary": {"codes": [c["code"] for c in chain]}}))
    drill = locate.drill_down(evidence, messages, knowledge)
    drill.extend(_source_drill_down(source_dir, evidence, messages, lang))

    diagnosis = Diagnosis(
        lang=lang, error=error_line, phase=phase, layer=layer, root_layer=root_layer, fix_in=fix_in,
        confidence=confidence, novel=top is None, candidates=candidates,
        root_cause=_root_cause(pattern, lang, phase, messages, votes, no_error, _last_line(evidence, hidden)),
        fix=_fix(pattern, lang, evidence, caller_check, internal_check,
                 "" if pattern else causes.first_steps(candidates, knowledge, lang)),
        verification=list(pick(pattern.verification, lang)) if pattern else _generic_verification(lang),
        missing=locate.missing_materials(evidence, lang, text, thorough=confidence < 0.8, provided=provided),
        anchors=pattern.anchor_strings() if pattern else [m.entry.raise_site() for m in messages[:3]],
        drill_down=drill,
        consequences=[c for c in chain[1:] if c["role"] in ("consequence", "noisy", "later")],
        pattern_stub=None if top else pattern_stub(evidence, phase, layer, error_line),
        similar_reports=_reports_to_show(reports),
        other_phases=[] if top or phase == "unknown" else close_phases(votes, phase),
        evidence_summary={**_summary(evidence, contexts, chain), "phase_votes": [v.to_dict() for v in votes[:8]]},
        notes=list(evidence.notes) + notices.notes(hidden, lang),
    )
    if top and top.pattern.consequence:
        diagnosis.notes.append(pick({"en": "The matched pattern describes a consequence: the decisive error is earlier "
                                           "than this message; collect the full log (see missing materials).",
                                     "zh": "匹配到的模式描述的是一个结果：决定性错误发生在这条报错之前；请收集完整日志（见待补充材料）。"}, lang))
    return diagnosis


# --------------------------------------------------------------------------------------------
# The first-error rule
# --------------------------------------------------------------------------------------------

def error_chain(evidence: Evidence, knowledge: Knowledge) -> List[Dict[str, Any]]:
    """Distinct error codes in input order, each with its role. The first decisive one is the root;
    what follows is labelled a consequence (by its role) or a later error."""
    chain: List[Dict[str, Any]] = []
    seen = set()
    public_lines = {m.input_line for m in evidence.codes if m.kind != "inner"}
    for mention in evidence.codes:
        # An internal code next to a public one is the same error in the runtime's own numbering.
        if mention.code in seen or (mention.kind == "inner" and mention.input_line in public_lines):
            continue
        seen.add(mention.code)
        role = knowledge.role_of(mention.code)
        if role == "wrapper":
            continue
        chain.append({"code": mention.code, "line": mention.input_line, "role": role,
                      "text": evidence.line(mention.input_line).strip()[:300]})
    root = next((c for c in chain if c["role"] in ("decisive", "noisy")), chain[0] if chain else None)
    if root is None:
        return []
    ordered = [root] + [c for c in chain if c is not root]
    for entry in ordered[1:]:
        if entry["role"] == "decisive":
            entry["role"] = "later"
    for entry in ordered:
        code_entry = knowledge.codes_for(entry["code"])
        entry["name"] = code_entry[0].name if code_entry else ""
    return ordered


# Where the fix goes when no pattern says: the layer where the root cause lies (L3: op-plugin / aclnn kernels).
FIX_IN_OF_LAYER = {"L1": "user_code", "L2": "torch_npu", "L3": "op_plugin", "L4": "cann_driver"}

# A framework by name (its package name as people write it: TensorRT-LLM, llama.cpp), or by a setting or
# module only a serving framework has.
FRAMEWORK_NAME = re.compile(
    r"\b(?:" + "|".join(name.replace("_", "[-_. ]?") for name in locate.FRAMEWORK_PACKAGES)
    + r"|cudagraph_mode|FULL_DECODE_ONLY|FULL_AND_PIECEWISE|enforce[-_]eager|compilation[-_]config"
    r"|cudagraph_capture_sizes|cuda[-_]graph[-_](?:max[-_])?bs|disable[-_]cuda[-_]graph|model_runner|graph_runner"
    r"|speculative[-_]config)", re.IGNORECASE)
# A script of the user's own: graph-mode calls of torch / torch_npu, or Python source lines.
USER_SCRIPT = re.compile(
    r"torch\.(?:npu|cuda)\.(?:graph|NPUGraph|CUDAGraph)\(|\b(?:NPUGraph|CUDAGraph)\(\)|make_graphed_callables|capture_begin\("
    r"|^\s*(?:import torch|from torch|def \w+\(|with torch\.|class \w+\(|model\s*=|g\s*=)")


def _whose_code(fix_in: str, evidence: Evidence) -> str:
    """`user_code` means the code that drives graph mode: a serving framework's when it drives it here."""
    return "framework" if fix_in == "user_code" and _framework_drives_graphs(evidence) else fix_in


def _framework_drives_graphs(evidence: Evidence) -> bool:
    """Whose code drives graph mode in this input, a serving framework's or a script of the user's: the
    innermost frame outside torch and Python when there is one; else a framework named, or no script of the
    user's shown. Graph mode is mostly met through a serving framework: of the 136 dev reports with no
    traceback, no script and no framework named whose fix is known, 103 were fixed in a framework and 2 in
    the reporter's code."""
    frame = locate.user_frame(evidence)
    if frame:
        return locate.framework_frame(frame)
    if any(FRAMEWORK_NAME.search(line) for line in evidence.lines):
        return True
    return not any(USER_SCRIPT.search(line) for line in evidence.lines)


def _decisive_line(evidence: Evidence, chain: List[Dict[str, Any]], top: Optional[PatternScore],
                   hidden: Collection[int] = ()) -> str:
    if top:
        hit_lines = [evidence.line(line).strip() for description, line, weight in top.hits
                     if line and weight > 0 and description.startswith(("message:", "code:"))]
        # a hit on the launch command (an option the pattern weighs) is not the error the user saw
        shown = next((line for line in hit_lines if not NOT_A_MESSAGE.match(line)), None)
        if shown:
            return shown[:500]
    if chain:
        return chain[0]["text"]
    if evidence.exceptions:
        last = evidence.exceptions[-1]
        return f"{last.type}: {last.message}"[:500]
    for event in evidence.log_events:  # a logged error, not the traceback lines it was logged with
        message = event.message
        if (event.level in ("ERROR", "CRITICAL") and not message.startswith("  ") and not NOT_A_MESSAGE.match(message)
                and event.input_line not in hidden):
            return message[:500]
    lines = [line.strip() for number, line in enumerate(evidence.lines, start=1)
             if line.strip() and number not in hidden]
    said = [line for line in lines if not NOT_A_MESSAGE.match(line)] or lines
    # the user's own words for what went wrong, before a launch command or a version list
    return next((line for line in said if ERROR_WORDS.search(line)), said[0] if said else "")[:500]


# Lines that say nothing as "the error": a traceback header or frame, a source line or caret under a
# frame, a launch command or one of its continued options, an export, a version or setting line.
NOT_A_MESSAGE = re.compile(
    r"(?:Traceback \(most recent call last\)|File \"|[~^]{3,300}|export |--?[\w-]{1,60}(?:[ =]|$)"
    r"|python\d?(?:\.\d{1,2})?\s{1,4}(?:-m\s|\S{1,200}\.py\b)|torchrun\s|vllm\s{1,4}serve\b|sglang\s{1,4}serve\b"
    r"|(?:bash|sh|source)\s{1,4}\S{1,200}\.(?:sh|bash)\b|\$\s|#|docker\s{1,4}(?:run|exec)\b)"
    r"|.{0,300}\\$|[\w.-][\w .-]{0,39}:\s{0,4}v?\d{1,4}(?:\.\w{1,10}){0,4}\s{0,4}$", re.IGNORECASE)
ERROR_WORDS = re.compile(
    r"error|exception|fail|(?<!de)fault|abort|crash|killed|\bhang|timed? ?out|illegal|invalid|not (?:supported|permitted)"
    r"|out of memory|\bOOM\b|garbled|wrong|报错|错误|失败|异常|卡住|挂死|乱码", re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# Report sections
# --------------------------------------------------------------------------------------------

PROSE_ONLY_CAP = 0.7  # a cause recognised only in the user's own words, not in anything a program printed


RANKED_CAUSE_SHARE = 0.5  # a cause the top symptom pattern ranks, listed at half its score


def _with_ranked_causes(candidates: List[Candidate], knowledge: Knowledge, lang: str) -> List[Candidate]:
    """A symptom pattern names the causes that produce it: list them beside it, at half its score,
    so the report says what to check next even where no sign of the cause itself was found."""
    if not candidates:
        return candidates
    top = knowledge.pattern(candidates[0].id)
    shown = {c.id: c for c in candidates}
    share = round(candidates[0].score * RANKED_CAUSE_SHARE, 3)
    extra = []
    for cause_id in (top.ranked_causes() if top else []):
        cause = knowledge.pattern(cause_id)
        listed = shown.get(cause_id)
        if listed is not None and listed is not candidates[0] and listed.score < share:
            # found on its own, more weakly than the symptom names it: the symptom's share decides its place
            listed.score = share
            listed.matched.insert(0, causes.BY_SYMPTOM.format(top.id))
        elif cause and listed is None:
            extra.append(Candidate(id=cause_id, title=pick(cause.title, lang), phase=cause.phase, kind="pattern",
                                   score=share, matched=[causes.BY_SYMPTOM.format(top.id)]))
    merged = candidates[:1] + sorted(candidates[1:] + extra, key=lambda c: -c.score)
    return merged[:MAX_CANDIDATES]


def _confidence(ranked: List[PatternScore], printed: set) -> float:
    """Grows with the top score, shrinks when the runner-up is close; capped when the top pattern
    rests only on the user's description (no error line, code, frame or log line among its hits)."""
    if not ranked or ranked[0].score < KNOWN:
        best = ranked[0].score if ranked else 0.0
        return round(min(0.3, 0.3 * best / KNOWN), 2)
    top = ranked[0].score
    base = 1 - math.exp(-2.0 * top)
    runner_up = ranked[1].score if len(ranked) > 1 else 0.0
    margin = min(1.0, max(0.0, top - runner_up) / 0.4)
    confidence = min(0.98, base * (0.75 + 0.25 * margin))
    hits = [(line, weight) for description, line, weight in ranked[0].hits if weight > 0 and not description.startswith("context:")]
    if not any(line in printed or not line for line, _ in hits):
        confidence = min(confidence, PROSE_ONLY_CAP)
    return round(confidence, 2)


def _printed_lines(evidence: Evidence) -> set:
    """Input lines a program printed: exceptions, frames, codes, raise sites, API calls, log lines."""
    lines = {e.input_line for e in evidence.exceptions}
    lines |= {f.input_line for f in evidence.frames}
    lines |= {c.input_line for c in evidence.codes}
    lines |= {r.input_line for r in evidence.raise_sites}
    lines |= set(evidence.apis.values())
    lines |= {e.input_line for e in evidence.log_events}
    return lines


def _root_cause(pattern, lang: str, phase: str, messages: List[MessageHit], votes: List[Vote],
                no_error: Optional[List[Any]] = None, last: Tuple[int, str] = (0, "")) -> Dict[str, str]:
    if pattern:
        return {"direct": pick(pattern.root_cause, lang), "trigger": pick(pattern.trigger, lang),
                "scope": pick(pattern.scope, lang) if pattern.scope else _generic_scope(phase, lang)}
    trigger = _phase_reasons(phase, votes, lang)
    if no_error is not None:
        return {"direct": _no_error_text(no_error, last, phase, lang), "trigger": trigger,
                "scope": _generic_scope(phase, lang)}
    if messages:
        entry = messages[0].entry
        direct = (f"torch_npu raised this at {entry.raise_site()} ({entry.function}): {entry.condition}" if lang == "en"
                  else f"torch_npu 在 {entry.raise_site()}（{entry.function}）处抛出：{entry.condition}")
        return {"direct": direct, "trigger": trigger, "scope": _generic_scope(phase, lang)}
    return {"direct": pick({"en": "No known pattern matches; see the candidates, the drill-down and the missing materials.",
                            "zh": "没有匹配的已知模式；请参考候选、调用链下钻与待补充材料。"}, lang),
            "trigger": trigger, "scope": _generic_scope(phase, lang)}


def _phase_reasons(phase: str, votes: List[Vote], lang: str) -> str:
    """Why the report names this phase: the strongest signs that voted for it."""
    reasons = [f"{v.why} (line {v.line})" if v.line else v.why for v in votes if v.phase == phase][:4]
    if phase == "unknown" or not reasons:
        return ""
    if lang == "zh":
        return f"阶段判断依据（{phase}）：" + "；".join(reasons)
    return f"The phase ({phase}) rests on: " + "; ".join(reasons)


def _no_error(evidence: Evidence, hidden: Dict[int, Any], chain: List[Dict[str, Any]]) -> Optional[List[Any]]:
    """The notices among the input's lines when it shows no error at all, else None. No error: no exception,
    error code, logged error or warning, nor line with the words of a failure, and every other line is a
    notice or a line the framework logged at INFO / DEBUG level (a log of a run that may only have stopped)."""
    if chain or evidence.exceptions:
        return None
    if any(e.level in ("ERROR", "CRITICAL") and e.input_line not in hidden for e in evidence.log_events):
        return None
    rest = [number for number, line in enumerate(evidence.lines, start=1) if number not in hidden and line.strip()]
    if any(ERROR_WORDS.search(evidence.lines[number - 1]) for number in rest):
        return None
    routine = set(evidence.routine)
    if (not hidden and not routine) or any(number not in routine for number in rest):
        return None  # the user's own words, or lines of no known level: what they describe is not known to be fine
    return [sign for _, sign in notices.found(hidden)]


def _last_signs(votes: List[Vote]) -> List[Vote]:
    """The votes of the input's last line that votes (all of them when none has a line)."""
    last = max((v.line for v in votes if not v.fallback), default=0)
    return [v for v in votes if v.line == last and not v.fallback] if last else votes


def _last_line(evidence: Evidence, hidden: Dict[int, Any]) -> Tuple[int, str]:
    """The last logged line that is not a notice: where a log that shows no error stops."""
    for number in range(len(evidence.lines), 0, -1):
        body = strip_prefixes(evidence.lines[number - 1])[1].strip()
        if body and number not in hidden:
            return number, body[:200]
    return 0, ""


def _no_error_text(notices_found: List[Any], last: Tuple[int, str], phase: str, lang: str) -> str:
    """What a report says of an input that shows no error."""
    told = " ".join(pick(sign.meaning, lang) for sign in notices_found)
    number, body = last
    if not number:  # notices alone
        return (f"The input shows no error: the lines it holds are notices the framework prints routinely. {told} "
                "Paste the error or traceback that followed them, or say what went wrong." if lang == "en" else
                f"输入中没有错误：其中的这些行是框架例行打印的提示。{told}"
                "请贴出其后出现的报错或 traceback，或说明出了什么问题。")
    where = "" if phase == "unknown" else phase
    if lang == "zh":
        stop = f"如果运行停在这里，它卡在「{phase_name(where, lang)}」：" if where else "如果运行停在这里（卡住）："
        return (f"输入中没有错误：这些行是框架正常运行时以 INFO / DEBUG 级别记录的日志。{told}最后一行是第 {number} 行"
                f"（{body}）。{stop}请贴出其后的输出或卡住进程的调用栈（py-spy dump --pid <PID>），或说明出了什么问题。")
    stop = f"If the run stopped there, it hangs in the {where} phase: " if where else "If the run stopped there (a hang), "
    return (f"The input shows no error: its lines are what the framework logs at INFO / DEBUG level on a normal run. "
            f"{told + ' ' if told else ''}The last is line {number} ({body}). {stop}paste what it printed after it or "
            "the stack of the stuck process (py-spy dump --pid <PID>), or say what went wrong.")


def _error_line_number(evidence: Evidence, root_line: int) -> int:
    """The input line of the first error: the first decisive code, else the last exception, else an ERROR line."""
    if root_line:
        return root_line
    if evidence.exceptions:
        return evidence.exceptions[-1].input_line
    return next((e.input_line for e in evidence.log_events if e.level in ("ERROR", "CRITICAL")), 0)


REPORT_WEIGHT = 1.0  # the similar reports' phases together, against all the input's signs together


def _similar_reports(query: str, pattern: Optional[str]) -> list:
    """The nearest public reports of the reference index (diagnose/reference.py), or with `pattern`
    the nearest of those that concluded it; none on any failure."""
    try:
        return reference.similar_reports(query, pattern=pattern)
    except Exception:  # noqa: BLE001 - the comparison is a help, never a reason to fail a diagnosis
        return []


def _vote_similar_reports(reports: list, votes: List[Vote]) -> None:
    """The phases the similar reports concluded vote beside the input's signs: on reports the engine
    had never seen, signs and reports together named the phase more often than the signs alone
    (reference.py). Together they weigh as much as every sign together, so the input's own signs
    still decide when the reports disagree."""
    signs_weight = sum(v.weight for v in votes if not v.fallback) or 1.0
    if not any(not v.fallback for v in votes):
        votes.clear()  # settings vote only when nothing else does, and the reports do
    for name, share in reference.concluded(reports, "phase"):
        cited = [r.id for r in reports if r.phase == name]
        votes.append(Vote(name, round(REPORT_WEIGHT * signs_weight * share, 3), 0,
                          f"{len(cited)} of {len(reports)} similar public reports concluded {name} ({', '.join(cited[:3])})"))
    votes.sort(key=lambda v: (-v.weight, v.line))


SHOWN_REPORTS = 3


def _reports_to_show(reports: list) -> List[Dict[str, Any]]:
    """The public threads worth reading next, most similar first; threads that reached a conclusion
    come before those that did not: what fixed them is the point."""
    ordered = sorted(reports, key=lambda r: not r.concluded)  # stable: similarity order within each group
    return [r.to_brief() for r in ordered[:SHOWN_REPORTS]]


def _query_text(evidence: Evidence, hidden: Collection[int] = ()) -> str:
    """The input's words that can name a cause: exception messages, error lines and prose, not log noise
    (nor the notices in `hidden`)."""
    parts = [f"{e.type} {e.message}" for e in evidence.exceptions[-3:]]
    parts += [e.message for e in evidence.log_events if e.level in ("ERROR", "CRITICAL") and e.input_line not in hidden][:5]
    # a worker / rank / log-level prefix on every line is the log's layout, not words of the fault (nor is its
    # level: leaving INFO lines out made the words depend on whether the paste kept its prefixes)
    bodies = (strip_prefixes(line)[1].strip() for number, line in enumerate(evidence.lines, start=1)
              if number not in hidden)
    parts += [body for body in bodies if body and not FRAME_RE.match(body)][:40]
    # each text once and no frame: an error line is also a log event, and counting it twice would make
    # the words of a log weigh differently from the same words pasted without their log layout
    kept = (part for part in dict.fromkeys(p.strip() for p in parts) if part and not FRAME_RE.match(part))
    return "\n".join(kept)[:reference.TEXT_CHARS]  # as much of the input as of each report of the index


def _generic_scope(phase: str, lang: str) -> str:
    texts = {
        "capture": {"en": "The graph being captured is unusable; eager execution is unaffected.",
                    "zh": "正在捕获的图不可用；eager 执行不受影响。"},
        "replay": {"en": "Replays of this graph fail; the process may need a restart.",
                   "zh": "该图的重放失败；进程可能需要重启。"},
        "memory": {"en": "Memory of the graph pools or the device.", "zh": "涉及图内存池或设备内存。"},
        "update": {"en": "Parameter updates between replays fail; static replays are unaffected.",
                   "zh": "重放之间的参数更新失败；不带更新的重放不受影响。"},
        "compile": {"en": "Graph mode is not used for the compiled function.", "zh": "编译后的函数没有使用图模式。"},
        "environment": {"en": "Every graph-mode run on this environment.", "zh": "该环境上所有图模式运行。"},
    }
    return pick(texts.get(phase, {"en": "Unknown.", "zh": "未知。"}), lang)


# torch_npu's error codes for a check of the caller's arguments or of what the caller may do here
# (pta_error_codes.csv: ERR00001 invalid parameter, ERR00002 invalid type, ERR00003 invalid value,
# ERR00007 feature not supported; NPUException.h:62-68@9e73e708)
CALLER_CHECK_CODES = ("ERR00001", "ERR00002", "ERR00003", "ERR00007")


def _caller_check(messages: List[MessageHit]):
    """The table entry of a torch_npu check that refused the caller's arguments, when that is what the input
    shows first; None otherwise."""
    if not messages:
        return None
    entry = messages[0].entry
    return entry if entry.kind == "error" and (entry.error_code or "").startswith(CALLER_CHECK_CODES) else None


def _internal_check(messages: List[MessageHit]):
    """The table entry of one of torch_npu's own consistency checks (TORCH_INTERNAL_ASSERT, which asks for a
    bug report; ERR00005 internal error; the graph tree's `check ... fail` invariants), when that is what the
    input shows first; None otherwise."""
    if not messages:
        return None
    entry = messages[0].entry
    internal = ("INTERNAL ASSERT FAILED" in entry.example or (entry.error_code or "").startswith("ERR00005")
                or (entry.example.startswith("check ") and entry.example.endswith(" fail")))
    return entry if entry.kind == "error" and internal else None


def _fix(pattern, lang: str, evidence: Evidence, caller_check=None, internal_check=None,
         first_steps: str = "") -> Dict[str, Any]:
    locations: List[str] = []
    frame = locate.user_frame(evidence)
    if frame:
        locations.append(f"{frame.file}:{frame.line} ({frame.function})")
    if pattern:
        locations.extend(pattern.fix_locations)
        return {"short_term": pick(pattern.fix_short, lang), "long_term": pick(pattern.fix_long, lang),
                "locations": locations}
    if caller_check is not None:
        code = caller_check.error_code.split()[0]
        locations.append(caller_check.raise_site())
        return {"short_term": pick({
                    "en": f"Change the calling code so that torch_npu's check passes. It refused this ({code}): "
                          f"{caller_check.condition}. The check is {caller_check.function} at {caller_check.raise_site()}.",
                    "zh": f"修改调用方代码，使 torch_npu 的检查通过。被拒绝的原因（{code}）：{caller_check.condition}。"
                          f"检查位于 {caller_check.raise_site()} 的 {caller_check.function}。"}, lang),
                "long_term": pick({
                    "en": "Keep the call within what torch_npu graph mode supports (the check states it); if the check "
                          "is wrong for your case, report it to Ascend/pytorch with this message and the torch_npu version.",
                    "zh": "让调用保持在 torch_npu 图模式支持的范围内（检查条件即为边界）；若该检查对你的用法不合理，"
                          "请附上此报错与 torch_npu 版本向 Ascend/pytorch 反馈。"}, lang),
                "locations": locations}
    if internal_check is not None:
        locations.append(internal_check.raise_site())
        return {"short_term": pick({
                    "en": f"torch_npu's own consistency check failed ({internal_check.function} at "
                          f"{internal_check.raise_site()}: {internal_check.condition}). This is not a check of your "
                          "arguments: run this part eagerly for now, and try the newest torch_npu that matches your CANN.",
                    "zh": f"torch_npu 自身的一致性检查失败（{internal_check.raise_site()} 的 {internal_check.function}："
                          f"{internal_check.condition}）。这不是对你参数的检查：先让这部分以 eager 运行，并试用与 CANN "
                          "匹配的最新 torch_npu。"}, lang),
                "long_term": pick({
                    "en": "Report it to Ascend/pytorch with the full traceback, the torch_npu and CANN versions "
                          "(`npu-graph env`) and TORCH_NPU_LOGS=+aclgraph output (`npu-graph run -- CMD` bundles them).",
                    "zh": "附上完整堆栈、torch_npu 与 CANN 版本（`npu-graph env`）以及 TORCH_NPU_LOGS=+aclgraph 输出"
                          "（`npu-graph run -- CMD` 会打包它们）向 Ascend/pytorch 报告。"}, lang),
                "locations": locations}
    collect = pick({"en": "Collect the missing materials below and re-run the diagnosis; try `npu-graph doctor` to rule out the environment.",
                    "zh": "按下方待补充材料收集信息后重新诊断；运行 `npu-graph doctor` 排除环境问题。"}, lang)
    return {"short_term": f"{first_steps} {collect}" if first_steps else collect,
            "long_term": pick({"en": "If this is a new failure mode, record it (`npu-graph kb record`) and promote the pattern stub.",
                               "zh": "若是新的失败模式，请记录（`npu-graph kb record`）并把模式草稿提升为正式模式。"}, lang),
            "locations": locations}


def _generic_verification(lang: str) -> List[str]:
    if lang == "zh":
        return ["修复后在相同输入上重新捕获并重放，与 eager 结果比对（torch.allclose）。",
                "TORCH_NPU_LOGS=+aclgraph 下确认出现 `NPUGRAPH Capture end done`，plog 中无 ERROR。"]
    return ["After the fix, capture and replay on the same input and compare with eager (torch.allclose).",
            "With TORCH_NPU_LOGS=+aclgraph, check `NPUGRAPH Capture end done` appears and the plog has no ERROR."]


def pattern_stub(evidence: Evidence, phase: str, layer: str, error_line: str) -> Dict[str, Any]:
    """A starting point for a new pattern in the knowledge format, with matchers from the evidence."""
    family = FAMILY_OF_PHASE.get(phase, "CAP")
    matchers: List[Dict[str, Any]] = []
    if error_line:
        matchers.append({"type": "message", "regex": generalize(error_line), "weight": 0.8})
    for code in dict.fromkeys(m.code for m in evidence.codes if m.kind in ("acl", "ecode", "inner")):
        matchers.append({"type": "code", "code": code, "weight": 0.3})
    for api in list(evidence.apis)[:3]:
        matchers.append({"type": "api", "name": api, "weight": 0.15})
    return {"id": f"P-{family}-NEW", "phase": phase if phase != "unknown" else "capture", "layer": layer,
            "root_layer": layer, "fix_in": "user_code",
            "title": {"en": "TODO", "zh": "TODO"}, "root_cause": {"en": "TODO", "zh": "TODO"},
            "matchers": matchers[:8], "examples": [{"text": error_line[:300], "source": "TODO: where this came from"}]}


def generalize(line: str) -> str:
    """A literal line → a regex that still matches when numbers, addresses, paths and pids change."""
    parts = re.split(r"(0x[0-9a-fA-F]+|\d+)", line.strip()[:200])
    return "".join(
        (r"0x[0-9a-fA-F]+" if part[:2].lower() == "0x" else r"\d+") if index % 2 else re.escape(part)
        for index, part in enumerate(parts))


def _summary(evidence: Evidence, contexts: Dict[str, List[int]], chain: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        "lines": len(evidence.lines),
        "exceptions": [f"{e.type}: {e.message[:200]}" for e in evidence.exceptions[:5]],
        "codes": [c["code"] for c in chain],
        "error_chain": chain,
        "apis": list(evidence.apis)[:10],
        "raise_sites": [f"{s.file}:{s.line} {s.function}".strip() for s in evidence.raise_sites[:5]],
        "versions": evidence.versions,
        "hardware": evidence.hardware,
        "env": evidence.env,
        "settings": evidence.settings,
        "ranks": evidence.ranks,
        "phase_signs": {k: len(v) for k, v in contexts.items()},
    }


def _similar_cases(kb_dir: Optional[str], query: Dict[str, Any]) -> List[Candidate]:
    """Recorded cases like this one, as candidates of kind "case" (the case base may be absent)."""
    try:
        from npu_graph_skill.cases.location import has_cases
    except ImportError:
        return []
    try:
        if not has_cases(kb_dir):
            return []  # nothing recorded: do not pay for importing the search
        from npu_graph_skill.cases.search import similar_cases

        return [match.to_candidate() for match in similar_cases(query, kb_dir=kb_dir, limit=3)]
    except Exception:  # noqa: BLE001 - a broken case base must never break a diagnosis
        return []


def _lint_evidence(diagnosis: Diagnosis, evidence: Evidence, source_files: Optional[List[str]], lang: str) -> None:
    """Lint findings at or near the failing lines of the user's script become evidence and notes."""
    try:
        from npu_graph_skill.lint.near import describe, lint_near_failure
    except ImportError:
        return
    from npu_graph_skill.core.errors import UserError

    try:
        findings, notes = lint_near_failure(evidence.frames, source_files, lang)
    except UserError:
        raise  # a --source-file that does not exist is bad usage
    except Exception:  # noqa: BLE001 - a lint problem must never break a diagnosis
        return
    if findings:
        diagnosis.evidence_summary["lint"] = findings
        top = diagnosis.candidates[0].id if diagnosis.candidates else ""
        diagnosis.notes.extend(describe(f, lang, top) for f in findings[:5])
    diagnosis.notes.extend(notes)


def _source_drill_down(source_dir: Optional[str], evidence: Evidence, messages: List[MessageHit],
                       lang: str) -> List[Dict[str, Any]]:
    """With a torch_npu source tree configured, the raise site and function range in the user's version."""
    import os

    source_dir = source_dir or os.environ.get("NPU_GRAPH_SOURCE")
    if not source_dir:
        return []
    try:
        from npu_graph_skill.expert.code import drill_down
    except ImportError:
        return []
    # The user's own words first: concrete values match the source's literals as well as placeholders do.
    message = (evidence.exceptions[-1].message if evidence.exceptions else
               messages[0].entry.example if messages else "")
    try:
        return list(drill_down(evidence.frames, evidence.raise_sites, message, source_dir, lang=lang) or [])
    except Exception:  # noqa: BLE001 - an unreadable source tree leaves the drill-down as it is
        return []
