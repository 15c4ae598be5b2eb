"""What the source scanners produce: function definitions and message sites, and the text
normalisation that lets a pasted message be compared with a site's literal pieces.

A site's message is a list of *pieces*: a `str` is literal text as the user will see it
(adjacent literals joined, escapes decoded); a one-element list `[expr]` is a variable part
(a placeholder), keeping the expression that fills it for display.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.model import Record

# A width never starts with 0 (that is the flag), so flags and width cannot share a digit.
PRINTF_RE = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:[1-9]\d*|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|j|t|q|I64|I32)?[diouxXeEfFgGaAcspn]")
FORMAT_FIELD_RE = re.compile(r"\{[^{}]*\}")
# Placeholders written in the messages table and in docs: `<opName>`, `<value>`.
# (not after a word character: `numeric_limits<uint64_t>` and `data_ptr<bool>()` are code, not placeholders)
EXAMPLE_PLACEHOLDER_RE = re.compile(r"(?<!\w)<[^<>\n]{1,60}>")
MIN_PIECE = 3  # literal pieces shorter than this ('. ', ': ') are too common to count


def placeholder(expr: str) -> List[str]:
    expr = re.sub(r"\s+", " ", str(expr)).strip()
    return [expr if len(expr) <= 60 else expr[:57] + "..."]


def is_placeholder(piece: Any) -> bool:
    return isinstance(piece, list)


def printf_pieces(text: str) -> list:
    """A printf format → pieces, each conversion (`%s`, `%lu`, `%p`) a placeholder; `%%` is `%`."""
    pieces: list = []
    last = 0
    for m in re.finditer(r"%%|" + PRINTF_RE.pattern, text):
        if m.group(0) == "%%":
            continue
        pieces.append(text[last:m.start()].replace("%%", "%"))
        pieces.append([m.group(0)])
        last = m.end()
    pieces.append(text[last:].replace("%%", "%"))
    return [p for p in pieces if p != ""]


def format_pieces(text: str) -> list:
    """A str.format template → pieces, each `{field}` a placeholder; `{{`/`}}` are braces."""
    pieces: list = []
    last = 0
    protected = text.replace("{{", "\x01").replace("}}", "\x02")
    for m in FORMAT_FIELD_RE.finditer(protected):
        pieces.append(protected[last:m.start()])
        pieces.append([m.group(0)])
        last = m.end()
    pieces.append(protected[last:])
    return [p.replace("\x01", "{").replace("\x02", "}") if isinstance(p, str) else p for p in pieces if p != ""]


def example_pieces(example: str) -> list:
    """A documented example message (`... aclop is <opName>. ...`) → pieces."""
    pieces: list = []
    last = 0
    for m in EXAMPLE_PLACEHOLDER_RE.finditer(example):
        pieces.append(example[last:m.start()])
        pieces.append([m.group(0)[1:-1]])
        last = m.end()
    pieces.append(example[last:])
    return [p for p in pieces if p != ""]


def merge_pieces(pieces: list) -> list:
    """Join neighbouring literal pieces and neighbouring placeholders; drop empty literals."""
    out: list = []
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += piece
                continue
        elif out and is_placeholder(out[-1]):
            continue
        out.append(piece)
    return out


def render_pieces(pieces: list) -> str:
    """Pieces → one display string, placeholders as `<expr>`."""
    return "".join(p if isinstance(p, str) else "<" + (p[0] if p else "") + ">" for p in pieces)


_PUNCT_SPACE_RE = re.compile(r"\s*([^\w\s])\s*")
_ESCAPED_RE = re.compile(r"\\[nrt]")


def normalize(text: str) -> str:
    """Lower case, whitespace collapsed and dropped around punctuation, `\\n` escapes (from a
    `str(RuntimeError(msg, code))` tuple repr) read as whitespace. Applied to both sides."""
    text = _ESCAPED_RE.sub(" ", text.replace("\\'", "'").replace('\\"', '"'))
    text = _PUNCT_SPACE_RE.sub(r"\1", " ".join(text.split()))
    return text.lower()


def literal_keys(pieces: list) -> List[str]:
    """The normalised literal pieces worth searching for, in order."""
    keys = []
    for piece in pieces:
        if isinstance(piece, str):
            key = normalize(piece)
            if len(key) >= MIN_PIECE:
                keys.append(key)
    return keys


@dataclasses.dataclass
class FunctionDef(Record):
    """A function, method or macro-defined block (`TORCH_LIBRARY_IMPL(...) {`) with its lines."""

    qualname: str  # c10_npu::NPUGraph::capture_begin, NPUGraph.capture_begin
    name: str
    start: int
    end: int
    signature: str
    kind: str = "function"  # function | method | macro | class

    def row(self) -> list:
        return [self.qualname, self.name, self.start, self.end, self.signature, self.kind]

    @classmethod
    def from_row(cls, row: list) -> "FunctionDef":
        return cls(*row)


@dataclasses.dataclass
class Site(Record):
    """A place that raises, warns or logs a message."""

    line: int  # the statement: `raise`, `TORCH_CHECK(`
    end_line: int
    message_line: int  # where the first literal starts
    kind: str  # raise | check | assert | throw | npu_check | warn | log
    call: str  # RuntimeError, TORCH_CHECK, logger.warning, NPU_CHECK_ERROR ...
    pieces: list
    error_code: str = ""  # PTA_ERROR(ErrCode::NOT_SUPPORT), pta_error(ErrCode.PARAM)
    condition: str = ""  # TORCH_CHECK's condition, NPU_CHECK_ERROR's call
    function: str = ""  # enclosing function's qualname
    forward: str = ""  # "p0,p1,..": the enclosing function's parameters when the message uses them (helpers)
    keys: Optional[List[str]] = None  # normalised literal pieces (derived)
    via: str = ""  # for a caller's site: the helper's site that raises (path:line)

    @property
    def message(self) -> str:
        return render_pieces(self.pieces)

    def literal_keys(self) -> List[str]:
        if self.keys is None:
            self.keys = literal_keys(self.pieces)
        return self.keys

    def row(self) -> list:
        return [self.line, self.end_line, self.message_line, self.kind, self.call, self.pieces,
                self.error_code, self.condition, self.function, self.forward]

    @classmethod
    def from_row(cls, row: list) -> "Site":
        return cls(*row)


# Calls worth remembering: helpers that raise with a message their caller passes in.
HELPER_CALL_RE = re.compile(r"(?i)assert|check|error|warn|raise|fail|throw|abort|report|support")


def mark_forwarding(sites: List[Site], params: Dict[str, List[str]]) -> None:
    """Flag sites whose message shows a parameter of the enclosing function: its callers fill it
    (`checkNotExternalStream(stream, "graph_task_group_begin")`)."""
    for site in sites:
        names = params.get(site.function) if site.function else None
        if names and any(is_placeholder(p) and p[0] in names for p in site.pieces):
            site.forward = ",".join(names)


def fill_parameters(pieces: list, names: List[str], literals: List[Optional[str]]) -> list:
    """A helper's message pieces with the parameters a caller passed as literals filled in."""
    out = []
    for piece in pieces:
        if is_placeholder(piece) and piece[0] in names:
            position = names.index(piece[0])
            if position < len(literals) and literals[position] is not None:
                out.append(literals[position])
                continue
        out.append(piece)
    return merge_pieces(out)


def file_entry(lang: str, functions: List[FunctionDef], sites: List[Site], error: str = "",
               calls: Optional[List[list]] = None) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"lang": lang, "functions": [f.row() for f in functions], "sites": [s.row() for s in sites]}
    if calls:
        entry["calls"] = calls  # [callee, line, [literal argument or None, ...]]
    if error:
        entry["error"] = error
    return entry
