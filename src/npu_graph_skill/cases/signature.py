"""What makes two recorded failures "the same case": the pattern plus the decisive message with its
variable parts masked.

The same error met twice differs in timestamps, pids, ranks, sizes, addresses, paths and line
numbers (another torch_npu build), never in its error codes: `error code is 107030` and `EE1016`
are kept, every other number is masked. One scan yields both the normalised text (for the
signature) and a regex with the variable parts generalised (for a pattern proposal).
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Dict, Iterable, List, Tuple

MAX_MESSAGE = 240
NEW = "NEW"  # the pattern of a case that matched no known pattern
PATTERN_ID_RE = re.compile(r"^(?:NEW|P-[A-Z]{2,4}-[A-Z0-9]+(?:-[0-9a-f]{4,12})?)$")

# The message starts at the exception (`RuntimeError: ...`) or at a CANN E-code (`EE9999: ...`);
# what precedes it is a log prefix (`(Worker_TP0 pid=496) ERROR 07-27 06:46:08 [x.py:962]`).
_MESSAGE_START = re.compile(r"\b(?:(?:[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt)|E[A-Z0-9]\d{4}):\s|ERR\d{5}\b)")
_LOG_PREFIX = re.compile(r"^\s*(?:\([^)]{0,80}\)\s*)?(?:\[?[A-Z]{4,8}\]?\s+)?(?:\d[\d\-/: .,T]{6,30}\s{1,30})?(?:\[[^\]]{0,80}\]\s*)?")

# Variable parts, tried in this order at each position (the first alternative that fits wins).
_CODE_CONTEXT = (r"(?:error\s*code(?:\s+is)?|errcode|err_code|error_code|ret(?:code|urn\s+code)?|result|code)"
                 r"\s*(?:[:=]\s*)?(?:0x[0-9A-Fa-f]+|\d{3,})")
_VARIABLE_PARTS: List[Tuple[str, str, str]] = [
    # (name, regex, generalised regex for a proposal); "keep" parts stay literal
    ("keep", r"(?i:" + _CODE_CONTEXT + r")|\bE[A-Z0-9]\d{4}\b|\bERR\d{5}\b", ""),
    ("ts", r"\d{2,4}[-/]\d{2}(?:[-/]\d{2})?(?:[ T-]\d{2}:\d{2}:\d{2}(?:[.,:]\d+)*)?|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)*",
     r"[\d:.,/ T-]+"),
    ("uuid", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", r"[0-9a-fA-F-]+"),
    ("hex", r"\b0x[0-9A-Fa-f]+\b|\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b", r"(?:0x)?[0-9A-Fa-f]+"),
    # a path starts where a run of name characters starts (the lookbehind keeps a long run linear)
    ("path", r"(?:(?<![\w])[A-Za-z]:|~|\.{1,2}|(?<![\w.+-])[\w.+-]+)?(?:[/\\][\w.+-]+)+", ""),
    ("num", r"\d+(?:\.\d+)*", r"\d+(?:\.\d+)*"),
    ("space", r"\s+", r"\s+"),
]
_SCANNER = re.compile("|".join(f"(?P<{name}>{regex})" for name, regex, _ in _VARIABLE_PARTS))
_GENERAL = {name: general for name, _, general in _VARIABLE_PARTS}
_PLACEHOLDER = {"ts": "<ts>", "uuid": "<id>", "hex": "<hex>", "num": "<n>"}


def decisive_part(text: str) -> str:
    """The message without its log prefix: from the exception type or E-code on, else the whole line."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    found = _MESSAGE_START.search(line)
    if found:
        return line[found.start():].strip()
    return _LOG_PREFIX.sub("", line, count=1).strip() or line


_ERROR_HINT = re.compile(r"(?i)error code|runtime result|\bfailed\b|\berror\b")
MAX_ERROR_LINES = 40


def error_lines(text: str) -> List[str]:
    """The lines of a pasted text that carry an error (exception, E-code, `error code is`, failed),
    for matching when a caller hands over a whole traceback instead of its decisive line."""
    lines = [line for line in (text or "").splitlines() if line.strip()]
    found = [line for line in lines if _MESSAGE_START.search(line) or _ERROR_HINT.search(line)]
    return (found or lines[:1])[:MAX_ERROR_LINES]


def _scan(text: str, keep: Iterable[str] = ()) -> List[Tuple[str, str]]:
    """(kind, text) pieces: "lit" for literal text, else the name of the variable part."""
    keep_set = {k for k in keep if k}
    pieces: List[Tuple[str, str]] = []
    pos = 0
    for m in _SCANNER.finditer(text):
        if m.start() > pos:
            pieces.append(("lit", text[pos:m.start()]))
        kind = m.lastgroup or "lit"
        value = m.group(0)
        if kind in ("num", "hex") and value in keep_set:
            kind = "keep"
        pieces.append((kind, value))
        pos = m.end()
    if pos < len(text):
        pieces.append(("lit", text[pos:]))
    return pieces


def normalize_message(text: str, keep: Iterable[str] = ()) -> str:
    """`RuntimeError: ... /home/a/x.py:26 ... pid=496 error code is 107030` →
    `RuntimeError: ... x.py:<n> ... pid=<n> error code is 107030` (`keep`: codes to leave as they are)."""
    out: List[str] = []
    for kind, value in _scan(decisive_part(text), keep):
        if kind in ("lit", "keep"):
            out.append(value)
        elif kind == "space":
            out.append(" ")
        elif kind == "path":
            out.append(_basename(value))
        else:
            out.append(_PLACEHOLDER[kind])
    return "".join(out).strip()[:MAX_MESSAGE]


def message_regex(text: str, keep: Iterable[str] = (), max_chars: int = 200) -> str:
    """An escaped regex of the decisive message with its variable parts generalised; it matches
    the message it came from and the same error with other numbers, paths and times."""
    parts: List[str] = []
    used = 0
    for kind, value in _scan(decisive_part(text), keep):
        if used >= max_chars:
            break
        used += len(value)
        if kind in ("lit", "keep"):
            parts.append(re.sub(r"(?:\\ )+", r"\\s+", re.escape(value)))
        elif kind == "path":
            parts.append(r"(?:\S*[/\\])?" + re.escape(_basename(value)))
        else:
            parts.append(_GENERAL[kind])
    return "".join(parts).rstrip()


def signature(pattern: str, message: str, keep: Iterable[str] = ()) -> dict:
    """{pattern, message (normalised), hash}: equal signatures mean the same case."""
    normalized = normalize_message(message, keep)
    digest = hashlib.sha1(f"{pattern}\n{normalized}".encode("utf-8")).hexdigest()[:12]
    return {"pattern": pattern, "message": normalized, "hash": digest}


def _basename(path: str) -> str:
    return re.split(r"[/\\]", path)[-1]


# --------------------------------------------------------------------------------------------
# The signature of a diagnosis report (what `record` stores and `similar_cases` looks up).
# --------------------------------------------------------------------------------------------

def matched_pattern(report: Dict[str, Any]) -> str:
    """The known pattern the diagnosis settled on (its best candidate of kind pattern), or NEW."""
    if report.get("novel"):
        return NEW
    for cand in report.get("candidates") or []:
        if isinstance(cand, dict) and cand.get("kind", "pattern") == "pattern" and cand.get("id"):
            cid = str(cand["id"])
            return cid if PATTERN_ID_RE.match(cid) else NEW
    return NEW


def report_codes(summary: Dict[str, Any]) -> List[str]:
    out: List[str] = []
    for item in summary.get("codes") or []:
        code = item.get("code") if isinstance(item, dict) else item
        if code not in (None, "") and str(code) not in out:
            out.append(str(code))
    return out


def report_signature(report: Dict[str, Any]) -> dict:
    summary = report.get("evidence_summary") if isinstance(report.get("evidence_summary"), dict) else {}
    return signature(matched_pattern(report), str(report.get("error") or ""), report_codes(summary))
