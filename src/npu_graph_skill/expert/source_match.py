"""Match a pasted message against the indexed sites.

Users paste a concrete message: variable parts filled in (`... aclop is Fill. ...`), wrapped in
a traceback, an exception type, a PTA suffix (`[ERROR] ... ERR00007 ...`) or a tuple repr, and
sometimes cut short. A site is a list of literal pieces with placeholders between them.

Two stages keep it fast over ~10k sites:
1. every site: find its literal pieces, in order, in the normalised message (`str.find`);
2. the best 40 of stage 1 and the 40 with the most shared words: align the message with the
   site's literal text (difflib), which also credits truncated and slightly reworded messages.
The score combines the share of the message the site explains and the share of the site's
literal text found in the message, plus a bonus when the message names the site's file and line (NPU_CHECK_ERROR
messages and `Exception raised from ... at file:line` do).
"""
from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Iterable, List, Optional, Sequence, Set, Tuple

from npu_graph_skill.expert.source_model import Site, normalize

NOISE_LINE_RES = [
    re.compile(r"^\s*Traceback \(most recent call last\)"),
    re.compile(r"^\s*File \".*\", line \d+"),
    re.compile(r"^\s*frame #\d+"),
    re.compile(r"^\s*\[(?:ERROR|WARN|INFO)\] \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d \(PID:"),  # PTA suffix line
    re.compile(r"^[~^\s]+$"),  # Python 3.11 caret lines
    re.compile(r"^\s*During handling of the above exception"),
    re.compile(r"^\s*The above exception was the direct cause"),
]
EXC_PREFIX_RE = re.compile(r"^\s*(?:[\w.]+(?:Error|Exception|Warning|Interrupt)|[\w.]*OutOfMemoryError)\s*:\s*")
PTA_SUFFIX_RE = re.compile(r"\[(?:ERROR|WARN)\] \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d \(PID:[^)]*\) ERR\d{5} [A-Z]+ [\w ]+")
# (starts only where a path can start, and bounded: a megabyte-long word must not make it quadratic)
LOCATION_RE = re.compile(r"(?<![\w./\\-])([\w./\\-]{1,300}?\.(?:cpp|cc|cxx|c|h|hpp|py))\"?\s*(?::|, line )\s*(\d+)")
WORD_RE = re.compile(r"[a-z_][a-z0-9_]{2,}")
STAGE2 = 40
MAX_LINE_CHARS = 4000
MAX_LINES = 2000
MAX_ALIGNED = 8000  # difflib is quadratic: align against the first 8000 characters only
MAX_HINT_TEXT = 200_000


@dataclasses.dataclass
class Scored:
    path: str
    site: Site
    score: float
    quality: str  # full | fragment | partial | weak
    site_coverage: float
    message_coverage: float
    location: str = ""  # "line" | "file" | ""


def message_core(text: str) -> str:
    """The message without traceback frames, exception type and PTA suffix lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: List[str] = []
    skip_code = False
    for line in lines:
        if skip_code and line.startswith("    ") and line.strip():
            skip_code = False
            continue
        skip_code = False
        if any(r.match(line) for r in NOISE_LINE_RES):
            skip_code = line.lstrip().startswith("File ")
            continue
        kept.append(EXC_PREFIX_RE.sub("", line))
    core = "\n".join(kept).strip()
    return PTA_SUFFIX_RE.sub(" ", core)


def location_hints(text: str) -> List[Tuple[str, int]]:
    """(file basename, line) pairs named in the message."""
    hints = []
    for m in LOCATION_RE.finditer(text):
        hints.append((m.group(1).replace("\\", "/").rsplit("/", 1)[-1], int(m.group(2))))
    return hints


def normalize_lines(text: str) -> Tuple[str, List[Tuple[int, int]]]:
    """`normalize(text)` and the [start, end) of each input line in it. Lines are cut at
    MAX_LINE_CHARS: a megabyte-long pasted line is noise, not a message."""
    core = ""
    bounds: List[Tuple[int, int]] = []
    for raw in text.split("\n")[:MAX_LINES]:
        line = normalize(raw[:MAX_LINE_CHARS])
        if not line:
            continue
        if core and not (_is_punct(core[-1]) or _is_punct(line[0])):
            core += " "
        bounds.append((len(core), len(core) + len(line)))
        core += line
    return core, bounds


def _is_punct(ch: str) -> bool:
    return not (ch.isalnum() or ch == "_" or ch.isspace())


def _touched(bounds: List[Tuple[int, int]], spans: List[Tuple[int, int]]) -> int:
    """Total length of the lines that the spans fall in (at least 1)."""
    total = 0
    for start, end in bounds:
        if any(a < end and b > start for a, b in spans):
            total += end - start
    return max(1, total, sum(b - a for a, b in spans))


def _words(text: str) -> Set[str]:
    return set(WORD_RE.findall(text))


class SiteMatcher:
    """Site texts prepared once per index (normalised pieces, word sets)."""

    def __init__(self, sites: Sequence[Tuple[str, Site]]) -> None:
        self.sites = [(path, site) for path, site in sites if site.literal_keys()]
        self._words: Optional[List[Set[str]]] = None

    def words(self) -> List[Set[str]]:
        if self._words is None:
            self._words = [_words(" ".join(site.literal_keys())) for _path, site in self.sites]
        return self._words

    def match(self, message: str, limit: int = 5, paths: Optional[Iterable[str]] = None,
              min_score: float = 0.3, align: bool = True) -> List[Scored]:
        """The best sites for `message`; `align=False` keeps to stage 1 (exact pieces only)."""
        core, bounds = normalize_lines(message_core(message))
        if len(core) < 3:
            return []
        hints = location_hints(message[:MAX_HINT_TEXT])
        allowed = set(paths) if paths is not None else None
        stage1: List[Tuple[float, int, int, bool, List[Tuple[int, int]]]] = []
        for number, (path, site) in enumerate(self.sites):
            if allowed is not None and path not in allowed:
                continue
            keys = site.keys or site.literal_keys()
            pos = 0
            spans: List[Tuple[int, int]] = []
            complete = True
            for key in keys:
                found = core.find(key, pos)
                if found < 0:
                    complete = False
                    continue
                spans.append((found, found + len(key)))
                pos = found + len(key)
            if spans:
                matched = sum(b - a for a, b in spans)
                stage1.append((matched / sum(len(k) for k in keys), number, matched, complete, spans))
        stage1.sort(key=lambda t: (-(t[0] * min(1.0, t[2] / max(1, _touched(bounds, t[4])))), -t[0]))
        candidates = {n: (m, c, spans) for _cov, n, m, c, spans in stage1[:STAGE2]}
        aligned_core = core[:MAX_ALIGNED]
        message_words = _words(aligned_core) if align else set()
        if message_words:
            overlaps = []
            words = self.words()
            for number, (path, _site) in enumerate(self.sites):
                if allowed is not None and path not in allowed:
                    continue
                shared = len(words[number] & message_words)
                if shared:
                    overlaps.append((shared / (len(words[number]) + 2), number))
            overlaps.sort(reverse=True)
            for share, number in overlaps[:STAGE2]:
                if share >= 0.2:
                    candidates.setdefault(number, (0, False, []))
        results = []
        for number, (matched, complete, spans) in candidates.items():
            path, site = self.sites[number]
            keys = site.keys or site.literal_keys()
            total = sum(len(k) for k in keys)
            longest = 0
            if not complete and align:
                aligned, longest, aligned_spans = self._aligned(keys, aligned_core)
                if aligned > matched:
                    matched, spans = aligned, aligned_spans
            if not spans:
                continue
            # What the site explains is measured against the lines it touched, so a log or a
            # traceback around the message does not dilute it, while a short generic literal
            # inside a long line still does not win.
            touched = _touched(bounds, spans)
            site_cov = min(1.0, matched / total)
            msg_cov = min(1.0, matched / touched)
            score = (msg_cov ** 0.7) * (site_cov ** 0.3)
            if not complete:
                score *= 0.9  # a site whose every literal piece is in the message ranks first
            location = ""
            basename = path.rsplit("/", 1)[-1]
            for hint_file, hint_line in hints:
                if hint_file == basename:
                    if site.line <= hint_line <= max(site.end_line, site.line) or hint_line == site.message_line:
                        location = "line"
                        break
                    location = location or "file"
            score += {"line": 0.2, "file": 0.05}.get(location, 0.0)
            if score < min_score or matched < 8:
                continue
            if complete:
                quality = "full"
            elif longest >= 0.85 * touched:
                quality = "fragment"  # the message is one (cut-short) stretch of this site's text
            else:
                quality = "partial" if max(site_cov, msg_cov) >= 0.5 else "weak"
            results.append(Scored(path, site, round(min(score, 1.0), 3), quality, round(site_cov, 3),
                                  round(msg_cov, 3), location))
        results.sort(key=lambda r: (-r.score, r.path.startswith("test"), r.path, r.site.line))
        if results and results[0].quality in ("full", "fragment"):
            # a clear winner: leave out the also-rans that only share a few words
            results = [r for r in results if r.score >= 0.6 * results[0].score]
        return results[:limit]

    @staticmethod
    def _aligned(keys: List[str], core: str) -> Tuple[int, int, List[Tuple[int, int]]]:
        """(characters of the site's literal text aligned with the message in blocks of 4+, the
        longest single block, the blocks' spans in the message)."""
        total = 0
        longest = 0
        spans: List[Tuple[int, int]] = []
        for key in keys:
            matcher = difflib.SequenceMatcher(None, core, key, autojunk=False)
            for block in matcher.get_matching_blocks():
                if block.size >= 4:
                    total += block.size
                    longest = max(longest, block.size)
                    spans.append((block.a, block.a + block.size))
        return total, longest, spans


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, normalize(a), normalize(b), autojunk=False).ratio()
