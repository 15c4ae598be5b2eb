"""Pasted text → `Evidence`: the facts a diagnosis can rest on, each with the input line it came from.

What users paste is messy: vLLM worker prefixes on every line, chained Python tracebacks,
torch_npu's four-part exception (`func:file:line NPU function error: X, error code is N` /
`[ERROR] ... ERR00100` / `[Error]: ...` / a CANN `EE9999` block with `TraceBack` lines), plog
lines, prose around them, several workers interleaved, lines cut short. Line layouts are parsed by
`logs.formats`; this module only collects what the diagnosis needs.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional

from npu_graph_skill.core.ingest import strip_ansi
from npu_graph_skill.core.model import CodeMention, Evidence, ExceptionRecord, Frame, LogEvent, RaiseSite
from npu_graph_skill.diagnose.reflow import unwrap
from npu_graph_skill.diagnose.settings import parse_env, parse_settings
from npu_graph_skill.logs.formats import extract_codes, parse_line

# Repetitions are bounded and class runs start only where a run starts (a lookbehind), so every
# regex below costs time linear in the line: a hostile line (a 100 KB run of ':' or digits) cannot
# make one backtrack. Lines are read up to LINE_WINDOW characters (see `extract_evidence`).
LINE_WINDOW = 4096
FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]{1,1000})", line (?P<line>\d{1,9}), in (?P<func>[^\s(]+)')
EXCEPTION_RE = re.compile(
    r"^\s*(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Unsupported|Warning)|KeyboardInterrupt|Exception))"
    r"(?:: ?(?P<msg>.*))?$")
# An exception quoted inside a sentence ("报错：RuntimeError: ...", "`torch.AcceleratorError: CUDA error: ...`",
# "- Error Message: RuntimeError: ..."): its type, a colon and a message. Read only where no line starts with one.
EMBEDDED_EXCEPTION_RE = re.compile(
    r"(?<![\w.])(?P<type>(?:[A-Za-z_]\w{0,60}\.){0,6}(?:[A-Z]\w{0,60}(?:Error|Exception)|Exception)): ?(?P<msg>[^`\"“”]{3,2000})")
NPU_CHECK_RE = re.compile(
    r"(?<![\w:~<>()])(?P<func>[\w:~<>()]{1,300}):(?P<file>[^\s:]{1,300}\.(?:cpp|cc|h|hpp|ts|c)):(?P<line>\d{1,9})\s{1,8}"
    r"(?:NPU|OPS|HCCL|DIST) function error: (?P<call>.{1,500}?), error code is (?P<code>\d{1,12})")
RAISED_FROM_RE = re.compile(r"Exception raised from (?P<func>.{1,300}?) at (?P<file>[^\s:]{1,300}):(?P<line>\d{1,9})")
CANN_SITE_RE = re.compile(r"\[FUNC:(?P<func>[^\]]{0,300})\]\[FILE:(?P<file>[^\]]{0,300})\]\[LINE:(?P<line>\d{1,9})\]")
ASSERT_RE = re.compile(r'INTERNAL ASSERT FAILED at "(?P<file>[^"]{1,300})":(?P<line>\d{1,9})')
C10_WARN_RE = re.compile(r"\[W(?:\d{3,4} \d\d:\d\d:\d\d\.\d{1,9})?\s{0,4}(?P<file>[^\s:\]]{1,300}):(?P<line>\d{1,9})\] Warning: "
                         r".*?(?:\(function (?P<func>[^)]{1,300})\))?$")
TRIGGERED_RE = re.compile(r"\(Triggered internally at (?P<file>[^\s:]{1,300}):(?P<line>\d{1,9})\.?\)")
API_RE = re.compile(r"\b((?:aclmdlRI|AclmdlRI|aclrt|Aclrt|aclsk|Aclsk|aclnn|HcclComm|Hccl)[A-Za-z]\w*|rt[A-Z][A-Za-z]\w*|aclop[A-Z]\w*)\b")
# Each raise-site regex runs only on lines holding its literal (a substring test costs nothing).
RAISE_SITE_LITERALS = ((RAISED_FROM_RE, "cpp_exception", "Exception raised from"), (CANN_SITE_RE, "cann", "[FUNC:"),
                       (ASSERT_RE, "assert", "INTERNAL ASSERT FAILED"), (C10_WARN_RE, "warning", "] Warning: "),
                       (TRIGGERED_RE, "warning", "Triggered internally"))
# A bare six-digit number is taken as an ACL/runtime code only in the families graph mode meets, and
# never where the text says it is something else (a pid, a stream or task id).
BARE_CODE_RE = re.compile(r"(?<![\w.=:\[/-])((?:1|2|3|5)(?:00|07|45|48|61)\d{3})(?![\w.])")
# Runtime-internal codes (0x07xxxxxx) are sometimes printed in decimal: "error=117571619" is 0x7020023.
DECIMAL_INNER_RE = re.compile(r"\b(?:error|ret|retCode|errcode)\s*[=:]\s*(11[7-9]\d{6}|12\d{7}|13[0-4]\d{6})\b", re.IGNORECASE)
INNER_RANGE = (0x07000000, 0x07FFFFFF)
NOT_A_CODE_BEFORE = re.compile(r"(pid|PID|stream_id|task_id|serial number|seq_num|id|size|count)[=: ]*$", re.IGNORECASE)
VERSION_RES = {
    "cann": re.compile(r"\bCANN\b[^\d\n]{0,20}?(\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?:[.\-][\w.\-]{0,40})?)"),
    "torch_npu": re.compile(r"\btorch[_-]npu\b[^\d\n]{0,12}?(\d+\.\d+(?:\.\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?)"),
    "torch": re.compile(r"\b(?:torch|PyTorch)(?![_-]npu)\b[ =:v-]{1,4}(\d+\.\d+(?:\.\d+)?(?:\+\w+)?)"),
    "vllm_ascend": re.compile(r"\bvllm[-_]ascend\b[^\d\n]{0,20}?v?(\d+\.\d+(?:\.\d+)?(?:rc\d+)?)"),
    "vllm": re.compile(r"\bvllm(?![-_]ascend)\b[ =:v]{1,4}(\d+\.\d+(?:\.\d+)?(?:rc\d+)?)", re.IGNORECASE),
    "python": re.compile(r"\b(?:Python|python)\s?(3\.\d{1,2})\b"),
    "driver": re.compile(r"\b(?:driver|npu_driver|HDK)\b[^\d\n]{0,12}?(\d{1,4}\.\d{1,4}\.(?:rc)?\d[\w.]{0,40})", re.IGNORECASE),
}
HARDWARE_RE = re.compile(r"\b(Ascend\s?(?:910|310|950)[A-Z]?\d?|910[BC]\d?|310[PB]\d?|Atlas\s?\d{3}[A-Z]?\s?(?:A[23])?|A[23](?=\s|$|,)|950(?:DT|PR))\b")
EVENT_FORMATS = ("plog", "pta_error", "cann_ecode", "exception", "npu_g1", "npu_g2", "npu_g3", "torch_py", "c10_warn", "vllm")
# The end of a tqdm bar ("43/50 [00:58<00:04,  1.43it/s]") with more text right after it.
TQDM_GLUED_RE = re.compile(r"(?<=it/s\]|s/it\])(?=\S)")
MARKERS = ("NPUGRAPH", "Capturing ACL graphs", "capture_begin", "capture_end", "aclmdlRI", "Graph capturing finished")


def split_lines(text: str) -> List[str]:
    """Physical lines; `\\n` written literally inside a Python tuple repr (`str()` of a two-argument
    RuntimeError) is a real line break of the message, and a log line glued to a progress bar (tqdm
    redraws its bar with a carriage return, which a copy drops) starts a line of its own."""
    lines: List[str] = []
    for line in unwrap(strip_ansi(text).splitlines()):
        if "\\n" in line and ("[ERROR]" in line or "ERR0" in line or "Traceback" in line):
            lines.extend(line.split("\\n"))
        elif ("it/s]" in line or "s/it]" in line) and TQDM_GLUED_RE.search(line):
            lines.extend(TQDM_GLUED_RE.split(line))
        else:
            lines.append(line)
    return lines


def extract_evidence(text: str, notes: Optional[List[str]] = None) -> Evidence:
    evidence = Evidence(lines=[], notes=list(notes or []))
    seen_codes: Dict[str, int] = {}
    cut = 0
    for number, raw in enumerate(split_lines(text), start=1):
        if len(raw) > LINE_WINDOW:  # a joined log or a minified JSON: its head is what a diagnosis can use
            raw = raw[:LINE_WINDOW]
            cut += 1
        parsed = parse_line(raw)
        body = _body(raw, parsed)
        evidence.lines.append(body)
        _frames(evidence, body, number)
        _exception(evidence, body, number)
        _raise_sites(evidence, body, number)
        _codes(evidence, body, number, seen_codes)
        _apis(evidence, body, number)
        _log_event(evidence, parsed, number)
        if parsed.level in ("INFO", "DEBUG"):
            evidence.routine.append(number)
    parse_env(evidence.lines, evidence.env)
    parse_settings(evidence.lines, evidence.settings)
    _code_lines_of_frames(evidence)
    _versions_and_hardware(evidence)
    if cut:
        evidence.notes.append(f"{cut} line(s) longer than {LINE_WINDOW} characters: read their first {LINE_WINDOW}")
    return evidence


def _body(raw: str, parsed) -> str:
    """The line without worker/grep prefixes: what a pattern's message regex looks at."""
    prefix = parsed.prefix or ""
    return raw[len(prefix):] if prefix and raw.startswith(prefix) else raw


def _frames(evidence: Evidence, body: str, number: int) -> None:
    match = FRAME_RE.match(body)
    if match:
        evidence.frames.append(Frame(file=match["file"], line=int(match["line"]), function=match["func"], input_line=number))


def _code_lines_of_frames(evidence: Evidence) -> None:
    """A traceback prints the source line under each frame; keep it (matchers look at `.item()` calls)."""
    for frame in evidence.frames:
        nxt = evidence.line(frame.input_line + 1).strip()
        if nxt and not FRAME_RE.match(nxt) and not EXCEPTION_RE.match(nxt):
            frame.code = nxt[:300]


def _exception(evidence: Evidence, body: str, number: int) -> None:
    stripped = body.strip()
    if FRAME_RE.match(stripped) or len(stripped) < 6:
        return
    match = EXCEPTION_RE.match(stripped)
    if match and not stripped.startswith(("During handling", "The above exception")):
        evidence.exceptions.append(ExceptionRecord(type=match["type"], message=(match["msg"] or "")[:2000], input_line=number))
        return
    if ("Error" in stripped or "Exception" in stripped) and ": " in stripped:
        quoted = EMBEDDED_EXCEPTION_RE.search(stripped)
        if quoted:
            evidence.exceptions.append(ExceptionRecord(type=quoted["type"], message=quoted["msg"].strip()[:2000],
                                                       input_line=number))


def _raise_sites(evidence: Evidence, body: str, number: int) -> None:
    if " function error: " in body:
        for match in NPU_CHECK_RE.finditer(body):
            evidence.raise_sites.append(RaiseSite(file=match["file"], line=int(match["line"]), function=match["func"],
                                                  kind="npu_check", call=match["call"], input_line=number))
    for regex, kind, literal in RAISE_SITE_LITERALS:
        if literal not in body:
            continue
        for match in regex.finditer(body):
            groups = match.groupdict()
            evidence.raise_sites.append(RaiseSite(file=groups["file"], line=int(groups["line"]),
                                                  function=(groups.get("func") or "").strip(), kind=kind, input_line=number))


def _codes(evidence: Evidence, body: str, number: int, seen: Dict[str, int]) -> None:
    found = [(hit.code, hit.kind, hit.context) for hit in extract_codes(body)]
    known = {code for code, _, _ in found}
    for match in BARE_CODE_RE.finditer(body):
        code = match.group(1)
        if code in known or NOT_A_CODE_BEFORE.search(body, max(0, match.start() - 64), match.start()):
            continue
        found.append((code, "acl", "mentioned"))
    for match in DECIMAL_INNER_RE.finditer(body):
        value = int(match.group(1))
        if INNER_RANGE[0] <= value <= INNER_RANGE[1]:
            found.append(("0x%x" % value, "inner", "decimal"))
    for code, kind, context in found:
        evidence.codes.append(CodeMention(code=code, kind=kind, input_line=number, context=context))
        seen.setdefault(code, number)


def _apis(evidence: Evidence, body: str, number: int) -> None:
    for match in API_RE.finditer(body):
        evidence.apis.setdefault(match.group(1), number)


def _log_event(evidence: Evidence, parsed, number: int) -> None:
    if parsed.rank is not None and parsed.rank not in evidence.ranks:
        evidence.ranks.append(parsed.rank)
    important = parsed.level in ("ERROR", "CRITICAL", "WARNING") or any(m in parsed.message for m in MARKERS)
    if parsed.format in EVENT_FORMATS and important:
        evidence.log_events.append(LogEvent(input_line=number, format=parsed.format, level=parsed.level, time=parsed.time,
                                            module=parsed.module, pid=parsed.pid, rank=parsed.rank,
                                            message=parsed.message[:500]))


def _versions_and_hardware(evidence: Evidence) -> None:
    text = "\n".join(evidence.lines)
    for name, regex in VERSION_RES.items():
        match = regex.search(text)
        if match:
            evidence.versions[name] = match.group(1).rstrip(".,;)")
    if "python" not in evidence.versions:
        match = re.search(r"python(3\.\d{1,2})/site-packages", text)
        if match:
            evidence.versions["python"] = match.group(1)
    for match in HARDWARE_RE.finditer(text):
        name = re.sub(r"\s+", " ", match.group(1)).strip()
        if name not in evidence.hardware:
            evidence.hardware.append(name)
