"""Pasted text as it was printed, not as a terminal or a mail client wrapped it.

A message the knowledge knows is missed when the paste breaks it over two lines: a terminal cuts
lines at its width (in the middle of a word), an issue form or a mail client wraps at spaces.

- `unwrap` rejoins the lines of a paste that is evidently wrapped: a terminal wrap leaves the lines
  it cut exactly as wide as the widest; a word wrap leaves lines that are full (the next line's
  first word would not have fitted). Lines that start a new record (a frame, a traceback, a
  timestamp, a worker prefix, a log level) are never joined to the line above.
- `FlowText.search` finds a regex that still spans a line break after that: per line first
  (the common case), then over two or three consecutive lines joined with and without a space,
  only where the regex's literal text occurs with whitespace and line breaks ignored.
"""
from __future__ import annotations

import bisect
import re
from typing import List, Optional, Sequence

from npu_graph_skill.knowledge.prefilter import may_match
from npu_graph_skill.logs.formats import strip_prefixes

MIN_WIDTH = 50  # narrower "widths" are short lines by nature, not a wrap
MIN_PIECE = 20  # a shorter line before a long word is taken as written, not as wrapped
MAX_CANDIDATE_LINES = 200  # a literal found this often: scan every line instead
SPAN_CANDIDATES = 20  # lines tried for a match across a break, per literal
RECORD_START = re.compile(
    r"""^\s*(?:File\ "|Traceback\ |During\ handling|The\ above\ exception|\[(?:rank|default)\d|\((?:\w[\w .:-]{0,60}?)\ pid=\d
    |\[(?:ERROR|WARNING|INFO|DEBUG|EVENT|TRACE|Error|W\d{4}|E\d{4})|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s
    |[EWIFC]\d{4}\ \d\d:|\d{4}-\d\d-\d\d|\d\d-\d\d\ \d\d:|[A-Z][A-Z0-9]\d{4}[:\[]|\$\ |\#|```|\|
    |(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning):|[A-Z][A-Z0-9_]{2,}=|export\ |[-*+]\ )""", re.VERBOSE)
COMPLETE_FRAME = re.compile(r'^\s*File "[^"]+", line \d+, in \S+\s*$')
_SPACE = re.compile(r"\s+")


def unwrap(lines: List[str]) -> List[str]:
    """The logical lines of a wrapped paste; an unwrapped paste comes back unchanged."""
    width, hard = _wrap_width(lines)
    if not width:
        return lines
    out: List[str] = []
    previous = ""
    for line in lines:
        if previous and _joins(previous, line, width, hard):
            # A terminal cut at the full width may be inside a word; one column short, it dropped a space.
            out[-1] = out[-1] + line if hard and len(previous) == width else out[-1].rstrip() + " " + line.lstrip()
        else:
            out.append(line)
        previous = line
    return out


def starts_record(line: str) -> bool:
    """A line a program printed as a new line: prefixed (worker, rank, grep), or a frame, a header,
    a log level, a timestamp, an exception, a setting, a list item."""
    prefix, body = strip_prefixes(line)
    return bool(prefix) or bool(RECORD_START.match(body))


def _joins(previous: str, line: str, width: int, hard: bool) -> bool:
    """Is `line` the rest of `previous`, cut by the wrap?"""
    if not line.strip() or starts_record(line) or COMPLETE_FRAME.match(previous):
        return False
    if hard:
        return len(previous) in (width, width - 1)  # a terminal copy may drop the space it wrapped at
    # A word wrap breaks where the next word would not fit, and drops the space it broke at.
    first_word = line.split(None, 1)[0]
    return (not line[0].isspace() and len(previous) >= MIN_PIECE
            and len(previous.rstrip()) + 1 + len(first_word) > width and not previous.rstrip().endswith("```"))


def _wrap_width(lines: Sequence[str]):
    """(width, hard) when the paste looks wrapped, else (0, False)."""
    lengths = [len(line) for line in lines if line.strip()]
    if len(lengths) < 4 or max(lengths) < MIN_WIDTH:
        return 0, False
    widest = max(lengths)
    pairs = list(zip(lines, lines[1:]))
    # A terminal: the lines it cut are all exactly as wide as the widest, and nothing is wider.
    long_lines = sum(1 for n in lengths if n >= widest - 15)
    at_width = sum(1 for n in lengths if n == widest)
    if at_width >= 2 and at_width >= 0.6 * long_lines and any(_joins(a, b, widest, True) for a, b in pairs):
        return widest, True
    # A word wrap: most lines followed by plain text are full (the next word would not have fit).
    plain = [(a, b) for a, b in pairs if b.strip() and not b[0].isspace() and not starts_record(b)]
    full = sum(1 for a, b in plain if _joins(a, b, widest, False))
    if full >= 2 and full >= 0.5 * len(plain):
        return widest, False
    return 0, False


def squeeze(text: str) -> str:
    """Lower case without any whitespace: a literal found here survives any wrap or re-spacing."""
    return _SPACE.sub("", text.lower())


class FlowText:
    """The evidence lines, searchable per line and across line breaks."""

    def __init__(self, lines: List[str]) -> None:
        self.lines = lines
        parts = [squeeze(line) for line in lines]
        self.starts: List[int] = []
        offset = 0
        for part in parts:
            self.starts.append(offset)
            offset += len(part)
        self.squeezed = "".join(parts)

    def contains(self, literal: str) -> bool:
        return squeeze(literal) in self.squeezed

    def may_match(self, literals: Optional[List[str]]) -> bool:
        """False only when none of the texts one of which every match holds occurs (see `prefilter`)."""
        return may_match(None if literals is None else [squeeze(literal) for literal in literals], self.squeezed)

    def lines_with(self, literal: str, limit: int = 20) -> List[int]:
        """1-based lines where the squeezed literal begins."""
        needle, found, start = squeeze(literal), [], 0
        if not needle:
            return found
        while len(found) < limit:
            at = self.squeezed.find(needle, start)
            if at < 0:
                break
            found.append(bisect.bisect_right(self.starts, at))
            start = at + 1
        return found

    def search(self, regex: "re.Pattern[str]", literals: Optional[List[str]]) -> int:
        """The first line where `regex` matches (a match spanning a break counts at its first line), or 0.
        Every match holds one of `literals` (see `prefilter`), so only the lines where one begins are tried."""
        found = [self.lines_with(literal, limit=MAX_CANDIDATE_LINES) for literal in literals or ()]
        if not literals or any(len(lines) >= MAX_CANDIDATE_LINES for lines in found):
            candidates = range(1, len(self.lines) + 1)  # no literal, or too common to be worth it
        else:
            candidates = sorted({n for lines in found for n in lines})
        for number in candidates:
            if regex.search(self.lines[number - 1]):
                return number
        if not literals:
            return 0
        tried = set()
        for number in sorted({n for lines in found for n in lines[:SPAN_CANDIDATES]}):
            for first in (number - 2, number - 1, number):  # a match over up to 3 lines may begin 2 lines up
                if first not in tried:
                    tried.add(first)
                    if self._spans(regex, first):
                        return first
        return 0

    def _spans(self, regex: "re.Pattern[str]", first: int) -> bool:
        if first < 1 or first >= len(self.lines):
            return False
        window = self.lines[first - 1:first + 2]
        head = window[0]
        for count in (2, 3):
            if count > len(window):
                break
            for sep in ("", " "):
                text = head.rstrip() if sep else head
                joined = text + sep + sep.join(part.strip() if sep else part for part in window[1:count])
                match = regex.search(joined)
                if match and match.start() < len(text) < match.end():
                    return True
        return False
