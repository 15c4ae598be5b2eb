"""Streaming scan of one log (or one byte range of a large one) into compact, mergeable results.

Why it is fast: a log of hundreds of MB is almost all DEBUG/INFO noise. The scanner reads blocks of 4 MB and runs its
passes piece by piece (256 KB, so that a piece and its folded copy stay in the CPU cache): one regex over a folded copy
(where "error", "warn" and "graph" all read "erro") tells which lines can matter and counts the `NPUGRAPH Replay` lines
in the same pass; the newlines are counted once; glog E/W lines, allocator statistics and HCCL init records get a pass
only in blocks whose first FEATURE_BYTES show such lines. Only the candidate lines are decoded and parsed with
`formats.parse_line`; a line repeated up to its numbers (an error flood) is counted without a parse after FULL_PARSES
occurrences. The census, the replay timing and the other per-file work cost in proportion to the bytes, so a thousand
small rank files read as fast per byte as one big file. Memory stays bounded by the block size: nothing keeps a whole
file, every accumulator is capped.

A scan task is picklable so that files and byte ranges of one big file run in parallel processes
(`analyze.py` merges them, `collect.py` makes them mergeable across machines).
"""
from __future__ import annotations

import dataclasses
import gzip
import io
import math
import os
import random
import re
import sys
import zlib
from collections import Counter
from typing import IO, Dict, Iterator, List, Optional, Tuple

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.ingest import decode_line, describe_os_error, strip_ansi
from npu_graph_skill.logs import families
from npu_graph_skill.logs.formats import ParsedLine, extract_codes, make_timestamp, parse_line, parse_time

BLOCK_BYTES = 4 << 20
MAX_RANK_DIGITS = 6  # a longer run where a rank goes is not a rank (and int() refuses runs over 4300 digits)
MAX_LINE_BYTES = 64 * 1024  # longer lines are cut (as core.ingest does)
MAX_TEXT = 2000  # characters of a line kept in a finding
SHORT_TEXT = 400  # ... in a lifecycle event or a per-rank occurrence (there can be thousands of them)
MAX_GROUPS = 2000  # distinct error/warning signatures per task (memory stays bounded whatever the log)
MAX_TIMELINE = 20000  # lifecycle events per task
RESERVOIR = 20000  # replay intervals kept per stream for P50/P99
SAMPLE_BYTES = 64 * 1024  # where the census looks for its lines and the year
FEATURE_BYTES = 16 * 1024  # where a block is sampled for the kinds of lines it holds (glog, allocator, replays ...)
TAIL_BYTES = 128 * 1024

# Candidate lines are found with one regex pass over a folded copy of the block: the translation lower-cases it and
# maps w,g→e a→r n,p→o, so "error", "warn" and "graph" all contain "erro" (as do a few words such as "learn" or "wrap",
# which the line filter in `_line` drops). "graph" stands for every lifecycle line: NPUGRAPH/NPUGraph, "Graph capturing
# finished", "Compiling a graph", "Capture cuda graph end", "skipping cudagraphs". The literal prefix keeps the regex as
# fast as `bytes.find`; its look-ahead drops, still in C, the `NPUGRAPH Replay` lines (counted and sampled apart, they
# can be most of a +aclgraph log) and the source paths that only say where a line was printed (NPUGraph.cpp,
# graphs.py, _graph_tree.py).
_FOLDED_LETTERS = {ord("w"): ord("e"), ord("g"): ord("e"), ord("a"): ord("r"), ord("n"): ord("o"), ord("p"): ord("o")}
FOLD = bytes(_FOLDED_LETTERS.get(c | 0x20, c | 0x20) if 65 <= c <= 90 else _FOLDED_LETTERS.get(c, c) for c in range(256))
_CANDIDATE = re.compile(rb"erro(?!h(?:\.coo| reolry|s\.oy|_tree))")
_HITS = re.compile(rb"erro(h reolry(?<=oouerroh reolry)|h\.coo|hs\.oy|h_tree|)")  # b"": a candidate line
_REPLAY_HIT = b"h reolry"
_GRAPH_WORDS = (b"NPUGRAPH", b"NPUGraph", b"aptur", b"ompil", b"skipping", b"NPUGRAPH-TREE")
# Only while no NPUGRAPH line was seen: the acl artifact's `[ACL CALL] aclmdlRI...` lines are then the lifecycle source.
FOLDED_ACL = b"aclmdlri".translate(FOLD)
_GLOG_LEVEL_SAMPLE = re.compile(rb"\n(?:\[rank\d+\]:)?[VIWEFC]\d{4} \d\d:\d\d:\d\d\.\d{6} ")
# A literal first character lets the regex engine skip to candidates; the block's first line is checked apart.
_GLOG_SEVERE = re.compile(rb"\n()[EWFC][01]\d[0-3]\d \d\d:")
_GLOG_SEVERE_RANKED = re.compile(rb"\n()\[rank\d+\]:[EWFC][01]\d[0-3]\d \d\d:")  # torch's formatter under torchrun
_RANKED_SAMPLE = re.compile(rb"\n\[rank\d+\]:[VIWEFC]\d{4} ")
FOLDED_REPLAY = b"npugraph replay".translate(FOLD)
# Replay lines timed: REPLAY_FIRST at the start of a task, then one per REPLAY_BYTES scanned, in stretches of at least
# REPLAY_BURST consecutive lines (short stretches of a log where many processes interleave would only see the short
# gaps); P50/P99 of the spacing need no more. The others are only counted.
REPLAY_FIRST = 24
REPLAY_BURST = 128
REPLAY_BYTES = 32 * 1024
PIECE_BYTES = 256 * 1024  # the passes over a block run piece by piece, in the CPU cache (see _Scanner.block)
_REPLAY_GLOG = re.compile(
    rb"(?:\[rank(\d+)\]:)?[VI](\d{4}) (\d\d):(\d\d):(\d\d)\.(\d{6}) +(\d+) [^\]\n]*\] (?:\[rank:(\d+)\] )?"
    rb"(?:\[[^\]\n]*\] )*NPUGRAPH Replay")
_RAW_CODES = re.compile(rb"(?:code is |result = |Code=|errNo\[|ErrorNo: |ERR)(?:0x)?[0-9a-fA-F]+")
_MIXED_RANKS = object()
# Who printed a line: plog `MODULE(pid,`, vLLM `pid=`, TORCH_NPU_LOGS / torch `[rank:R]` `[rankR]`, pta_error `RankID:`,
# `PID:`, worker `TPn`. Part of the repeat key (see _Scanner._line).
_IDENTITY = re.compile(rb"\((\d+),|pid=\d+|\[rank:?\d+\]|RankID:-?\d+|TP ?\d+|PID: ?\d+")
FULL_PARSES = 4  # occurrences of one line (up to its numbers, per pid / rank) parsed in full before the rest are counted
MAX_REPEAT_KEYS = 20000
_ECODE_START = re.compile(rb"[^\n]{0,200}?\b[EW][0-9A-Z]\d{4}(?::|\[PID)")
_GLOG_SEVERE_FIRST = re.compile(rb"(?:\[rank\d+\]:)?[EWFC]\d{4} \d\d:\d\d:\d\d\.\d{6} ")
_ECODE_LINE = re.compile(rb"\n[^\n]{0,200}?(?:\b[EW][0-9A-Z]\d{4}(?::|\[PID)|\[PID: ?\d+\] \d{4}-)")
# Peaks happen at a malloc (free lines only lower `allocated`; `cached` grows only on malloc): malloc lines suffice.
# HCCL status record of a communicator init (formats.md §2.6, plog run log): `[status:init] [hcom.cc:196]
# [hccl-<pid>-<n>-<time>-<group>][3]hcom init by file success, ... rankNum[8], rank[0], ...`. Every rank of a group
# finishes it together, so its time on each node tells that node's clock offset.
_COMM_INIT = re.compile(rb"\[status:init\][^\n]*?\[hccl-\d+-\d+-\d+-([^\]\s]+)\][^\n]*?\brank\[(\d+)\]")
WORLD_GROUP = "hccl_world_group"
_ALLOC_STATS = re.compile(rb"CachingAllocator malloc: malloc = \d+, cached = (\d+), allocated = (\d+)")
CENSUS_LINES = 200  # lines of a file (or range) looked at by the census: one per CENSUS_BYTES, 12 to 200
CENSUS_BYTES = 32 * 1024
# Where a line says its rank (G1/G2 `[rank:R]`, torch's `[rankR]:`, pta_error `RankID:R`, vLLM `Worker_TPn`, torchrun
# `[defaultN]:`): lines of one shape but another rank may print another pid, so they are parsed apart.
_CENSUS_RANK = re.compile(rb"\[rank:?\d+\]|RankID:-?\d+|TP ?\d+|\[default\d+\]")
# A time printed with its year (plog, pta_error, CANN E-code blocks, TORCH_NPU_LOGS G1/G2, SGLang); vLLM and glog omit it.
_YEAR_SAMPLE = re.compile(rb"((?:19|20)\d\d)-[01]\d-[0-3]\d[- ][0-2]\d:[0-5]\d:[0-5]\d")
_YEAR_FORMATS = ("plog", "pta_error", "npu_g1", "npu_g2", "cann_ecode")


@dataclasses.dataclass
class ScanTask:
    """One file, or the byte range [start, end) of one, to scan. Lines belong to the range they start in."""

    index: int
    name: str
    path: Optional[str]  # None = stdin
    start: int = 0
    end: Optional[int] = None
    year: int = 0
    rank: Optional[int] = None  # from the path
    context: int = 30
    since: Optional[str] = None  # as the user wrote it; a time without a year takes the log's year
    until: Optional[str] = None
    only_rank: Optional[int] = None
    windows: int = 3
    block_bytes: int = BLOCK_BYTES
    size: int = 0  # the file's size when the task was planned (compressed size for .gz; 0 for stdin)


@dataclasses.dataclass
class Event:
    """A kept line: an error/warning occurrence or a lifecycle/memory marker."""

    source: int
    line: int  # 1-based within the task; analyze.py adds the lines of earlier ranges
    offset: int
    ts: Optional[float]
    rank: Optional[int]
    pid: str
    level: str
    format: str
    module: str
    time: str
    text: str  # the line as printed, prefixes included
    message: str
    codes: List[str] = dataclasses.field(default_factory=list)
    role: str = ""
    tag: str = ""
    family: str = ""
    value: float = 0.0
    extra: float = 0.0


@dataclasses.dataclass
class ErrorAcc:
    """Occurrences of one signature within a task."""

    signature: str
    kind: str  # error | warning
    role: str
    first: Event
    count: int = 0
    last_ts: Optional[float] = None
    last_line: int = 0
    # rank -> its first occurrence: (ts, line, offset, source, text)
    per_rank: Dict[Optional[int], Tuple[Optional[float], int, int, int, str]] = dataclasses.field(default_factory=dict)
    last_by_rank: Dict[Optional[int], float] = dataclasses.field(default_factory=dict)  # rank -> time of its last occurrence


@dataclasses.dataclass
class ReplayAcc:
    """Replays of one process: count, span and a reservoir of the gaps between consecutive replays."""

    family: str
    rank: Optional[int]
    count: int = 0
    first_ts: Optional[float] = None
    last_ts: Optional[float] = None
    intervals: List[float] = dataclasses.field(default_factory=list)
    seen_intervals: int = 0
    idle: int = 0


@dataclasses.dataclass
class Window:
    """The lines around one error occurrence, verbatim."""

    offset: int
    line: int
    before: List[str]
    text: str
    after: List[str]


@dataclasses.dataclass
class TaskResult:
    index: int
    start: int
    lines: int = 0
    bytes_read: int = 0
    candidates: int = 0
    notes: List[str] = dataclasses.field(default_factory=list)
    errors: Dict[str, ErrorAcc] = dataclasses.field(default_factory=dict)
    dropped_signatures: int = 0
    timeline: List[Event] = dataclasses.field(default_factory=list)
    replays: Dict[tuple, ReplayAcc] = dataclasses.field(default_factory=dict)  # (rank, pid) or (family, rank, pid)
    alloc_peak: Optional[Tuple[int, int]] = None  # (peak cached = reserved, peak allocated) bytes
    alloc_lines: int = 0
    windows: Dict[int, Window] = dataclasses.field(default_factory=dict)  # offset -> window
    layouts: Counter = dataclasses.field(default_factory=Counter)  # formats of the candidate lines
    census: Counter = dataclasses.field(default_factory=Counter)  # formats of the first 200 lines
    first_ts: Optional[float] = None
    last_ts: Optional[float] = None
    years: Counter = dataclasses.field(default_factory=Counter)
    pid_ranks: Dict[str, int] = dataclasses.field(default_factory=dict)  # pid → rank, learnt from lines that print both
    replays_unsampled: int = 0  # replay lines counted but not timed
    oom_floods: int = 0  # out-of-memory lines counted without a parse (their first occurrences are timeline events)
    # events every rank logs at nearly the same moment (clock hints for `logs merge`): key → rank → first time
    clock_hints: Dict[str, Dict[Optional[int], float]] = dataclasses.field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Reading blocks that end at a line boundary.
# --------------------------------------------------------------------------------------------

def _open(task: ScanTask) -> IO[bytes]:
    if task.path is None:
        stream = getattr(sys.stdin, "buffer", None)
        return stream if stream is not None else io.BytesIO(sys.stdin.read().encode("utf-8", "replace"))
    try:
        if task.path.endswith(".gz"):
            return _SalvagingGzip(gzip.open(task.path, "rb"))
        return open(task.path, "rb")
    except OSError as exc:
        raise InputError(describe_os_error(task.name, exc)) from None


class _SalvagingGzip:
    """A gzip reader that, when the stream ends early, first returns what it could decompress and raises
    EOFError on the next read — so a truncated .gz yields its readable part."""

    PIECE = 16 * 1024  # what a truncated stream can lose at most

    def __init__(self, handle: IO[bytes]):
        self.handle = handle
        self.broken: Optional[BaseException] = None

    def read(self, size: int = -1) -> bytes:
        if self.broken is not None:
            raise self.broken
        pieces = []
        want = size if size and size > 0 else 1 << 62
        try:
            while want > 0:
                piece = self.handle.read(min(self.PIECE, want))
                if not piece:
                    break
                pieces.append(piece)
                want -= len(piece)
        except (EOFError, zlib.error, OSError) as exc:
            if not pieces:
                raise
            self.broken = exc
        return b"".join(pieces)

    def readline(self, size: int = -1) -> bytes:
        if self.broken is not None:
            return b""  # the block under way ends here; the next read() reports the break
        try:
            return self.handle.readline(size)
        except (EOFError, zlib.error, OSError) as exc:
            self.broken = exc
            return b""

    def close(self) -> None:
        self.handle.close()


def _align(handle: IO[bytes], start: int) -> int:
    """Offset of the first line that starts at or after `start` (the line under way belongs to the range before)."""
    handle.seek(start - 1)
    pos = start
    if handle.read(1) != b"\n":
        while True:
            rest = handle.readline(MAX_LINE_BYTES)
            pos += len(rest)
            if not rest or rest.endswith(b"\n"):
                break
    return pos


def _blocks(handle: IO[bytes], task: ScanTask, result: TaskResult) -> Iterator[Tuple[bytes, int, int]]:
    """(block, file offset of its first byte, bytes of it to scan), from where the handle stands (a range is aligned
    by `scan_task`). A block is `block_bytes` read at once and scanned up to the end of its last whole line; the line
    it cuts follows as a small block of its own (so the big one is never copied); a line longer than a block
    arrives in pieces, which keeps memory bounded."""
    pos = handle.tell() if task.start > 0 else 0
    end = task.end
    size = task.block_bytes
    last = b"\n"
    while end is None or pos < end:
        chunk = handle.read(size if end is None else min(size, end - pos))
        if not chunk:
            return
        result.bytes_read += len(chunk)
        last = chunk
        if not chunk.endswith(b"\n"):
            rest = handle.readline(size)
            result.bytes_read += len(rest)
            cut = chunk.rfind(b"\n") + 1
            if cut:
                yield chunk, pos, cut
                chunk = chunk[cut:] + rest
                pos += cut
            else:
                chunk += rest
            last = chunk
        yield chunk, pos, len(chunk)
        pos += len(chunk)
    while not last.endswith(b"\n"):  # the range ended inside an over-long line: it is ours to the end
        last = handle.readline(size)
        if not last:
            return
        result.bytes_read += len(last)
        yield last, pos, len(last)
        pos += len(last)


# --------------------------------------------------------------------------------------------
# The scan.
# --------------------------------------------------------------------------------------------

class _Scanner:
    def __init__(self, task: ScanTask):
        self.task = task
        self.result = TaskResult(index=task.index, start=task.start)
        self.year = task.year
        self.last_ts: Optional[float] = None
        self.lines_before = 0  # newlines before the current block (within the task)
        self.seen_npugraph = False
        self.pending: List[Tuple[Window, int]] = []  # windows still waiting for `after` lines
        self.prev_tail = b""
        self.rng = random.Random(task.index * 7919 + task.start)
        self.decisive_windows = 0
        self.other_windows = 0
        self.days: Dict[Tuple[int, bytes], float] = {}
        self.repeats: Dict[bytes, list] = {}  # line up to its numbers -> [error group or None, full parses, layout]
        self.repeat_ok = task.since is None and task.until is None and task.only_rank is None
        self.mid_line = False
        self.cut_lines = 0
        self.since: Optional[float] = None
        self.until: Optional[float] = None
        self.replay_cut = False
        self.glog: Optional[tuple] = None  # the regexes of glog E/W/F/C lines, once glog-layout lines were seen
        self.alloc_seen = False
        self.oom = False  # the line just parsed was an out-of-memory error
        self.acl_seen = False  # `[ACL CALL] aclmdlRI...` lines were seen
        self.first_severe = False  # the block's first line is a glog E/W/F/C line (no newline before it)
        self.line_no = 1  # number of the line at the cursor of the piece being read
        self.size = 0  # bytes of the current block that are scanned
        span = (task.end - task.start) if task.end is not None else (
            0 if task.path is None or task.path.endswith(".gz") else task.size or _file_size(task.path))
        # the census and the replay timing cost in proportion to the bytes, so that small files cost what big ones do
        self.census_lines = max(12, min(CENSUS_LINES, span // CENSUS_BYTES)) if span else CENSUS_LINES
        self.replay_budget = float(REPLAY_FIRST)
        self.replays_timed = 0
        self.floods: Dict[int, list] = {}  # id(group) -> [group, rank, start, end]: its last uncounted occurrence

    # -- per block ----------------------------------------------------------------------------
    def block(self, block: bytes, offset: int, size: Optional[int] = None) -> None:
        """Scan one block. Which line kinds it holds is decided on its first FEATURE_BYTES; the passes then run piece
        by piece (PIECE_BYTES, cut at line ends) so that the block, its folded copy and every later pass over a piece
        stay in the CPU cache — about a fifth faster than passes over the whole block."""
        if self.pending:
            self._fill_pending(block)
        if self.lines_before == 0:
            self._census(block)
        # What the block holds is decided on its first FEATURE_BYTES; a kind once seen stays on for the task.
        sample = block[:FEATURE_BYTES]
        if not self.acl_seen and b"aclmdlRI" in sample:
            self.acl_seen = True
        if not self.seen_npugraph and b"NPUGRAPH" in sample:
            self.seen_npugraph = True  # the acl artifact's lines are then not needed for the lifecycle
        if self.glog is None and _GLOG_LEVEL_SAMPLE.search(sample):
            self.glog = (_GLOG_SEVERE,)
        if self.glog is not None and len(self.glog) == 1 and _RANKED_SAMPLE.search(sample):
            self.glog = (_GLOG_SEVERE, _GLOG_SEVERE_RANKED)
        glog = self.glog
        if glog is not None and not self.mid_line and _GLOG_SEVERE_FIRST.match(block):
            self.first_severe = True  # the first line has no newline before it for the regex to start from
        if not self.alloc_seen and b"CachingAllocator" in sample:
            self.alloc_seen = True
        alloc = self.alloc_seen
        inits = b"status:init" in sample
        spans: Dict[int, int] = {}
        if self.mid_line:  # the block continues a line longer than a block: that piece was cut, not scanned
            spans[0] = -1
        size = self.size = len(block) if size is None else size  # block[size:] starts a line the next block completes
        self.mid_line = block[size - 1:size] != b"\n"
        self.line_no = self.lines_before + 1
        start = 0
        while start < size:
            end = start + PIECE_BYTES
            if end >= size:
                end = size
            else:
                cut = block.find(b"\n", end)
                end = size if cut < 0 else cut + 1
            self._piece(block, offset, start, end, spans, glog, alloc, inits)
            start = end
        self.lines_before = self.line_no - 1
        self.result.lines = self.lines_before
        self.prev_tail = block[size - TAIL_BYTES:size] if size >= TAIL_BYTES else (self.prev_tail + block[:size])[-TAIL_BYTES:]

    def _piece(self, block: bytes, offset: int, lo: int, hi: int, spans: Dict[int, int], glog, alloc: bool,
               inits: bool) -> None:
        """Find the candidate lines of block[lo:hi] and read them, in order, counting lines as it goes."""
        rfind = block.rfind
        bfind = block.find
        folded = block[lo:hi].translate(FOLD)
        # One regex pass over the folded piece finds what follows each "erro": `NPUGRAPH Replay` lines are counted
        # from it, and the piece is searched for its candidate lines only when one of them is not a replay line or
        # a source path (most pieces of a big log have none).
        hits = _HITS.findall(folded)
        if not hits:
            found = None
        else:
            replays = hits.count(_REPLAY_HIT)
            if replays:
                self._replays(block, folded, lo, hi, spans, replays)
            found = _CANDIDATE.search(folded) if b"" in hits else None
        error_spans: List[int] = []
        search = _CANDIDATE.search
        while found is not None:
            hit = found.start() + lo
            start = rfind(b"\n", lo, hit) + 1 or lo
            end = bfind(b"\n", hit, hi)
            if end < 0:
                end = hi
            if start not in spans:
                spans[start] = end
                if bfind(b"rror", start, end) >= 0 or bfind(b"RROR", start, end) >= 0:
                    error_spans.append(end)
            found = search(folded, end + 1 - lo)
        if self.acl_seen and not self.seen_npugraph:
            self._acl_lines(block, folded, lo, hi, spans)
        if error_spans:
            self._error_blocks(block, error_spans, spans)
        if glog is not None:
            if lo == 0 and self.first_severe:
                end = bfind(b"\n", 0, hi)
                spans[0] = hi if end < 0 else end
                self.first_severe = False
            for pattern in glog:
                for match in pattern.finditer(block, max(0, lo - 1), hi):
                    start = match.start(1)
                    if start not in spans:
                        end = bfind(b"\n", start, hi)
                        spans[start] = hi if end < 0 else end
        if alloc:
            self._allocator_stats(block, lo, hi)
        if inits:
            self._comm_init(block, lo, hi)
        count = block.count
        line_no = self.line_no
        cursor = lo
        candidates = 0
        for start in sorted(s for s in spans if lo <= s < hi):
            end = spans.pop(start)
            if end < 0:
                continue
            candidates += 1
            line_no += count(b"\n", cursor, start)
            cursor = start
            if end - start > MAX_LINE_BYTES:
                self.cut_lines += 1
                if self.cut_lines == 1:
                    self.result.notes.append(f"{self.task.name}:{line_no}: line longer than {MAX_LINE_BYTES // 1024} KB; "
                                             f"only its first {MAX_LINE_BYTES // 1024} KB were read")
            self._line(block, start, min(end, start + MAX_LINE_BYTES), offset, line_no)
        self.line_no = line_no + count(b"\n", cursor, hi)
        self.result.candidates += candidates
        if self.floods:
            self._flood_times(block)

    def _acl_lines(self, block: bytes, folded: bytes, lo: int, hi: int, spans: Dict[int, int]) -> None:
        """`[ACL CALL] aclmdlRI...` lines: the lifecycle source while no NPUGRAPH line was seen."""
        find = folded.find
        hit = find(FOLDED_ACL)
        while hit >= 0:
            at = hit + lo
            start = block.rfind(b"\n", lo, at) + 1 or lo
            end = block.find(b"\n", at, hi)
            if end < 0:
                end = hi
            spans.setdefault(start, end)
            if not self.seen_npugraph and block.find(b"NPUGRAPH", start, end) >= 0:
                self.seen_npugraph = True
            hit = find(FOLDED_ACL, end + 1 - lo)

    def _error_blocks(self, block: bytes, error_ends: List[int], spans: Dict[int, int]) -> None:
        """CANN E-code lines of an error block carry no error word (`EL0004: [PID: 553] ... Failed to allocate memory.`):
        look for them in the few lines after each error line (formats.md §3.1, §3.2)."""
        size = self.size
        scanned = -1
        for end in error_ends[:200]:
            if end < scanned:  # inside the stretch already searched after an earlier error line
                continue
            scanned = min(size, end + 4096)
            for match in _ECODE_LINE.finditer(block, end, scanned):
                start = match.start() + 1
                stop = block.find(b"\n", start)
                spans.setdefault(start, size if stop < 0 else stop)

    def _census(self, block: bytes) -> None:
        """Layouts of the first CENSUS_LINES lines, so the report can say what a file holds even when it is all noise;
        the pid → rank pairs they print; the year the log prints. One line per shape (its first 140 bytes without
        digits and a-f, which vary with numbers and pointers) and rank marker is parsed, the others of that shape are
        only counted: a file then costs ~10-30 parses here, not 200, which keeps a thousand small rank files as fast
        per byte as one big file."""
        census = self.result.census
        pid_ranks = self.result.pid_ranks
        year_seen = False
        shapes: Dict[tuple, str] = {}
        lines = self.census_lines
        for raw in block[:_lines_forward(block, 0, lines, SAMPLE_BYTES)].split(b"\n")[:lines]:
            if not raw.strip():
                continue
            marker = _CENSUS_RANK.search(raw, 0, 160)
            key = (raw[:140].translate(None, b"0123456789abcdef"), marker.group() if marker is not None else None)
            layout = shapes.get(key)
            if layout is None:
                parsed = parse_line(decode_line(raw).rstrip("\r"), self.year)
                layout = shapes[key] = parsed.format
                if parsed.pid and parsed.rank is not None:
                    pid_ranks.setdefault(parsed.pid, parsed.rank)
                if not year_seen and parsed.format in _YEAR_FORMATS and parsed.time[:4].isdigit():
                    year_seen = True  # yearless layouts (vLLM, glog, c10) take the year the log itself prints
                    self.year = int(parsed.time[:4])
            census[layout] += 1
        if not year_seen:  # the census may be short: the first dated line of the sample tells the year
            dated = _YEAR_SAMPLE.search(block, 0, SAMPLE_BYTES)
            if dated is not None:
                self.year = int(dated.group(1))
        task = self.task
        self.since = parse_time(task.since, self.year) if task.since else None
        self.until = parse_time(task.until, self.year) if task.until else None

    def _comm_init(self, block: bytes, lo: int, hi: int) -> None:
        """Communicator-init records (see _COMM_INIT) → clock hints; in the world group the rank printed is the global
        one, which also tells the rank of the plog's pid."""
        find = block.find
        hit = find(b"[status:init]", lo, hi)
        while hit >= 0:
            start = block.rfind(b"\n", lo, hit) + 1 or lo
            end = find(b"\n", hit, hi)
            if end < 0:
                end = hi
            found = _COMM_INIT.search(block, start, min(end, start + 1024))  # the record's fields come first
            if found is not None:
                parsed = parse_line(decode_line(block[start:end]).rstrip("\r"), self.year)
                ts = parsed.timestamp
                if ts is not None and (self.since is None or ts >= self.since) and (self.until is None or ts <= self.until):
                    group = found.group(1).decode("ascii", "replace")
                    rank = int(found.group(2))
                    if group == WORLD_GROUP and parsed.pid:
                        self.result.pid_ranks.setdefault(parsed.pid, rank)
                    hints = self.result.clock_hints.setdefault("init:" + group, {})
                    if rank not in hints or ts < hints[rank]:
                        hints[rank] = ts
            hit = find(b"[status:init]", end, hi)

    def _allocator_stats(self, block: bytes, lo: int, hi: int) -> None:
        """Peak reserved (cached) and allocated bytes from `PTA CachingAllocator malloc/free` lines (§1.5 memory).
        `findall` + `map(int, ...)` keep the per-line work in C: these lines can be a third of a +memory log."""
        found = _ALLOC_STATS.findall(block, lo, hi)
        if not found:
            return
        cached, allocated = zip(*found)
        peak_c = max(map(int, cached))
        peak_a = max(map(int, allocated))
        result = self.result
        result.alloc_lines += len(found)
        current = result.alloc_peak
        result.alloc_peak = (peak_c, peak_a) if current is None else (max(current[0], peak_c), max(current[1], peak_a))

    # -- per candidate line ------------------------------------------------------------------
    def _line(self, block: bytes, start: int, end: int, offset: int, line_no: int) -> None:
        raw = block[start:end]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw:
            return
        if b"NPUGRAPH Replay" in raw or b"aclmdlRIExecuteAsync(" in raw:
            if self._fast_replay(raw):
                return
        elif b"rror" not in raw and b"RROR" not in raw and b"arn" not in raw and b"ARN" not in raw:
            for word in _GRAPH_WORDS:  # found by "graph" only: worth a parse only if it names a lifecycle step
                if word in raw:
                    break
            else:
                if b"aclmdlRI" not in raw and not _GLOG_SEVERE_FIRST.match(raw) and b"[PID" not in raw and not _ECODE_START.match(raw):
                    return
        key = None
        if self.repeat_ok:
            # A line seen FULL_PARSES times already, up to its numbers, is counted without a parse: floods of one
            # error (an HCCL timeout per step, a warning per op) then cost ~2 µs a line instead of ~30.
            # The key keeps the digits that say who printed the line (pid, rank): each rank's first occurrences are
            # read in full, however many ranks one file holds.
            key = raw.translate(None, b"0123456789")
            if b"code" in raw or b"Code" in raw or b"result" in raw or b"errNo" in raw or b"ErrorNo" in raw or b"ERR0" in raw:
                key += b"\x00" + b",".join(_RAW_CODES.findall(raw))  # 107030 and 507035 stay apart
            who = _IDENTITY.search(raw, 0, 160)
            if who is not None:
                key += b"\x01" + who.group()
            entry = self.repeats.get(key)
            if entry is not None:
                if entry[1] >= FULL_PARSES:
                    acc = entry[0]
                    self.result.layouts[entry[2]] += 1
                    if acc is not None:
                        acc.count += 1
                        acc.last_line = line_no
                        # its time is read once per piece, from the last such line (_flood_times)
                        self.floods[id(acc)] = [acc, entry[3], start, end]
                        if entry[4]:
                            self.result.oom_floods += 1
                    return
                entry[1] += 1
        self.oom = False
        outcome = self._full_line(raw, block, start, end, offset, line_no)
        if key is not None and outcome is not None:
            entry = self.repeats.get(key)
            if entry is None:
                if len(self.repeats) < MAX_REPEAT_KEYS:
                    self.repeats[key] = [outcome[0], 1, outcome[1], outcome[2], self.oom]
            elif entry[3] != outcome[2]:
                entry[3] = _MIXED_RANKS  # lines equal up to their numbers come from several ranks

    def _flood_times(self, block: bytes) -> None:
        """The time of the last counted-only occurrence of each flooded group in this piece: its last time, overall
        and for its rank (one parse per group and piece instead of one per line)."""
        result = self.result
        for acc, rank, start, end in self.floods.values():
            raw = block[start:end]
            parsed = parse_line(strip_ansi(decode_line(raw.rstrip(b"\r"))), self.year)
            ts = parsed.timestamp
            if ts is None:
                continue
            if acc.last_ts is None or ts > acc.last_ts:
                acc.last_ts = ts
            if rank is not _MIXED_RANKS:
                have = acc.last_by_rank.get(rank)
                if have is None or ts > have:
                    acc.last_by_rank[rank] = ts
            if result.first_ts is None or ts < result.first_ts:
                result.first_ts = ts
            if result.last_ts is None or ts > result.last_ts:
                result.last_ts = ts
        self.floods = {}

    def _full_line(self, raw: bytes, block: bytes, start: int, end: int, offset: int, line_no: int):
        """Parse and classify one line. Returns (its error group or None, its layout) when later lines equal to it up
        to their numbers may be counted without a parse, None when they may not (lifecycle lines, filtered lines)."""
        text = strip_ansi(decode_line(raw))
        parsed = parse_line(text, self.year)
        self._observe_time(parsed)
        task = self.task
        ts = parsed.timestamp if parsed.timestamp is not None else self.last_ts
        rank = parsed.rank if parsed.rank is not None else task.rank
        if rank is None and parsed.pid:
            rank = self.result.pid_ranks.get(parsed.pid)  # a plog line of a process whose rank other lines told us
        if task.only_rank is not None and rank != task.only_rank:
            return None
        if ts is not None and ((self.since is not None and ts < self.since) or (self.until is not None and ts > self.until)):
            return None
        result = self.result
        result.layouts[parsed.format] += 1
        if parsed.pid and parsed.rank is not None and parsed.pid not in result.pid_ranks:
            result.pid_ranks[parsed.pid] = parsed.rank
        codes = extract_codes(parsed.message) if parsed.format != "text" or "rror" in text or "esult" in text or "Code" in text else []
        timeline = families.timeline_event(parsed)
        if timeline is not None:
            tag, family, value, extra = timeline
            if tag == "replay":
                self._replay(family, rank, parsed.pid, ts)
            elif len(result.timeline) < MAX_TIMELINE:
                event = self._event(parsed, text[:SHORT_TEXT], offset + start, line_no, ts, rank, codes,
                                    tag=tag, family=family, value=value, extra=extra)
                event.message = event.message[:SHORT_TEXT]
                result.timeline.append(event)
            if parsed.level not in families.ERROR_LEVELS and parsed.level != "WARNING":
                return None
        if families.is_error(parsed, codes):
            kind = "error"
        elif families.is_warning(parsed):
            kind = "warning"
        else:
            return (None, parsed.format, rank) if timeline is None else None
        role = families.error_role(parsed, codes)
        if role == "context":
            return (None, parsed.format, rank) if timeline is None else None
        event = self._event(parsed, text, offset + start, line_no, ts, rank, codes, role=role)
        if kind == "error" and families.is_oom(parsed, codes) and len(result.timeline) < MAX_TIMELINE:
            self.oom = True
            result.timeline.append(dataclasses.replace(event, tag="oom", family="memory"))
        acc = self._group(event, kind, parsed, codes, block, start, end)
        return (acc, parsed.format, rank) if acc is not None and timeline is None else None

    def _observe_time(self, parsed: ParsedLine) -> None:
        if parsed.timestamp is None:
            return
        self.last_ts = parsed.timestamp
        result = self.result
        if result.first_ts is None or parsed.timestamp < result.first_ts:
            result.first_ts = parsed.timestamp
        if result.last_ts is None or parsed.timestamp > result.last_ts:
            result.last_ts = parsed.timestamp
        if parsed.format in _YEAR_FORMATS and parsed.time[:4].isdigit():
            year = int(parsed.time[:4])
            result.years[year] += 1
            self.year = year

    def _fast_replay(self, raw: bytes) -> bool:
        """Replay lines come by the hundred thousand: read their glog head by position (§1.3 G3 / §1.4 layouts:
        `V0821 14:02:11.123456 4242 file:line] [rank:0] NPUGRAPH Replay ...`), without a full parse."""
        head = 0
        if raw.startswith(b"[rank"):
            head = raw.find(b"]:") + 2
            if head < 2:
                return False
        if len(raw) < head + 23 or raw[head + 5] != 32 or raw[head + 8] != 58 or raw[head + 14] != 46 or raw[head + 21] != 32:
            return False
        try:
            day = self._day(raw[head + 1:head + 5])
            ts = (day + int(raw[head + 6:head + 8]) * 3600 + int(raw[head + 9:head + 11]) * 60 + int(raw[head + 12:head + 14])
                  + int(raw[head + 15:head + 21]) * 1e-6)
        except (ValueError, TypeError):
            return False
        pid_end = raw.find(b" ", head + 22)
        pid = raw[head + 22:pid_end].decode("ascii", "replace")
        self.last_ts = ts
        result = self.result
        if result.first_ts is None or ts < result.first_ts:
            result.first_ts = ts
        if result.last_ts is None or ts > result.last_ts:
            result.last_ts = ts
        task = self.task
        rank = task.rank
        mark = raw.find(b"[rank:", pid_end)
        if mark >= 0:
            close = raw.find(b"]", mark)
            rank = _rank_number(raw[mark + 6:close], rank)
        elif head:
            rank = _rank_number(raw[5:head - 2], rank)
        if task.only_rank is not None and rank != task.only_rank:
            return True
        if (self.since is not None and ts < self.since) or (self.until is not None and ts > self.until):
            return True
        if rank is not None and pid not in self.result.pid_ranks:
            self.result.pid_ranks[pid] = rank
        self._replay("npugraph" if b"NPUGRAPH Replay" in raw else "acl", rank, pid, ts)
        return True

    def _replays(self, block: bytes, folded: bytes, lo: int, hi: int, spans: Dict[int, int], total: int) -> None:
        """`NPUGRAPH Replay` lines come by the hundred thousand in a +aclgraph log: `total` were counted in this piece;
        the first ones the budget allows (see REPLAY_BYTES) are timed by the position of their glog head (§1.3 G3 /
        §1.4 layouts); a replay line of another layout among them is left to the full parse."""
        self.replay_budget += (hi - lo) / REPLAY_BYTES
        budget = int(self.replay_budget)
        if budget < (REPLAY_FIRST if self.replays_timed == 0 else REPLAY_BURST):
            self._timed_replays([], total)
            return
        heads = []
        match = _REPLAY_GLOG.match
        find = folded.find
        hit = find(FOLDED_REPLAY)
        while hit >= 0 and len(heads) < budget:
            at = hit + lo
            start = block.rfind(b"\n", lo, at) + 1 or lo
            end = block.find(b"\n", at, hi)
            if end < 0:
                end = hi
            found = match(block, start, end)
            if found is not None:
                heads.append(found.groups())
                spans[start] = -1
            else:
                spans[start] = end
                total -= 1
            hit = find(FOLDED_REPLAY, end + 1 - lo)
        self.seen_npugraph = True
        self.replay_budget -= len(heads)
        self.replays_timed += len(heads)
        self._timed_replays(heads, total)

    def _timed_replays(self, heads: List[tuple], total: int) -> None:
        """`total` replay lines in this block, of which `heads` (the first ones) are timed."""
        if self.replay_cut:  # the previous block was sampled: its last replay is not the one before this block's first
            for acc in self.result.replays.values():
                acc.last_ts = None
        self.replay_cut = len(heads) < total
        self.result.replays_unsampled += max(0, total - len(heads))
        self.result.layouts["npu_g3"] += total - len(heads)  # the timed ones are counted by _replay_heads
        if heads:
            self._replay_heads(heads)

    def _replay_heads(self, heads: List[tuple]) -> None:
        """(py rank, MMDD, HH, MM, SS, micro, pid, C++ rank) of glog-layout replay lines → replay accumulators.
        The accumulator update of `_replay` is inlined: this loop runs once per replay line."""
        task = self.task
        result = self.result
        replays = result.replays
        pid_ranks = result.pid_ranks
        day = self._day
        since, until, only = self.since, self.until, task.only_rank
        ts = None
        for py_rank, mmdd, hh, mi, ss, us, pid_b, c_rank in heads:
            try:
                ts = day(mmdd) + int(hh) * 3600 + int(mi) * 60 + int(ss) + int(us) * 1e-6
            except ValueError:
                continue
            rank_b = c_rank or py_rank
            rank = _rank_number(rank_b, task.rank) if rank_b else task.rank
            if only is not None and rank != only:
                continue
            if (since is not None and ts < since) or (until is not None and ts > until):
                continue
            key = (rank, pid_b)
            acc = replays.get(key)
            if acc is None:
                pid = pid_b.decode("ascii")
                if rank is not None:
                    pid_ranks.setdefault(pid, rank)
                acc = replays[key] = ReplayAcc(family="npugraph", rank=rank)
                acc.first_ts = ts
            acc.count += 1
            previous = acc.last_ts
            acc.last_ts = ts
            if previous is not None and ts >= previous:
                acc.seen_intervals += 1
                gap = round(ts - previous, 6)  # the logs print µs at best; rounding keeps summaries small
                if len(acc.intervals) < RESERVOIR:
                    acc.intervals.append(gap)
                else:
                    slot = self.rng.randrange(acc.seen_intervals)
                    if slot < RESERVOIR:
                        acc.intervals[slot] = gap
        if ts is not None:
            self.last_ts = ts
            if result.first_ts is None or ts < result.first_ts:
                result.first_ts = ts
            if result.last_ts is None or ts > result.last_ts:
                result.last_ts = ts
        result.layouts["npu_g3"] += len(heads)

    def _replay(self, family: str, rank: Optional[int], pid: str, ts: Optional[float]) -> None:
        key = (family, rank, pid)
        acc = self.result.replays.get(key)
        if acc is None:
            acc = self.result.replays[key] = ReplayAcc(family=family, rank=rank)
        acc.count += 1
        if ts is None:
            return
        if acc.last_ts is not None:
            gap = round(ts - acc.last_ts, 6)
            if gap >= 0:
                acc.seen_intervals += 1
                if len(acc.intervals) < RESERVOIR:
                    acc.intervals.append(gap)
                else:  # reservoir sampling keeps P50/P99 honest in bounded memory
                    slot = self.rng.randrange(acc.seen_intervals)
                    if slot < RESERVOIR:
                        acc.intervals[slot] = gap
        if acc.first_ts is None:
            acc.first_ts = ts
        acc.last_ts = ts

    def _day(self, mmdd: bytes) -> float:
        """Seconds at midnight of a glog `MMDD` in the current year (cached: a log spans few days)."""
        key = (self.year, mmdd)
        value = self.days.get(key)
        if value is None:
            stamp = make_timestamp(self.year, int(mmdd[:2]), int(mmdd[2:]), 0, 0, 0)
            if stamp is None:
                raise ValueError(mmdd)
            value = self.days[key] = stamp
        return value

    def _event(self, parsed: ParsedLine, text: str, offset: int, line_no: int, ts: Optional[float], rank: Optional[int],
               codes, **extra) -> Event:
        return Event(source=self.task.index, line=line_no, offset=offset, ts=ts, rank=rank, pid=parsed.pid,
                     level=parsed.level, format=parsed.format, module=parsed.module, time=parsed.time,
                     text=text[:MAX_TEXT], message=parsed.message[:MAX_TEXT], codes=[c.code for c in codes], **extra)

    def _group(self, event: Event, kind: str, parsed: ParsedLine, codes, block: bytes, start: int,
               end: int) -> Optional[ErrorAcc]:
        result = self.result
        sig = kind[0] + "|" + families.signature(parsed, codes)
        acc = result.errors.get(sig)
        if acc is None:
            if len(result.errors) >= MAX_GROUPS:
                result.dropped_signatures += 1
                return None
            acc = result.errors[sig] = ErrorAcc(signature=sig, kind=kind, role=event.role, first=event)
        acc.count += 1
        acc.last_ts = event.ts
        acc.last_line = event.line
        if event.rank not in acc.per_rank:
            acc.per_rank[event.rank] = (event.ts, event.line, event.offset, event.source, event.text[:SHORT_TEXT])
        if event.ts is not None:
            have = acc.last_by_rank.get(event.rank)
            if have is None or event.ts > have:
                acc.last_by_rank[event.rank] = event.ts
        if kind == "error":
            if event.role == "decisive" and self.decisive_windows < self.task.windows:
                self.decisive_windows += 1
                self._window(event, block, start, end)
            elif event.role == "consequence" and self.other_windows < 2:
                self.other_windows += 1
                self._window(event, block, start, end)
        return acc

    # -- context windows ---------------------------------------------------------------------
    def _window(self, event: Event, block: bytes, start: int, end: int) -> None:
        context = self.task.context
        before: List[str] = []
        after: List[str] = []
        stop = end + 1 + TAIL_BYTES
        if context:
            floor = max(0, start - TAIL_BYTES)
            first = _lines_back(block, start, context, floor)
            head = block[first:start]
            if start < TAIL_BYTES and head.count(b"\n") < context + 1:
                head = self.prev_tail + block[:start]  # the window starts in the previous block
            before = [_text(raw) for raw in head.split(b"\n")[:-1][-context:]]
            after = [_text(raw) for raw in block[end + 1:_lines_forward(block, end + 1, context, stop)].split(b"\n")[:-1]]
        window = Window(offset=event.offset, line=event.line, before=before, text=event.text, after=after)
        self.result.windows[event.offset] = window
        if len(after) < context and stop >= self.size:
            self.pending.append((window, context - len(after)))

    def _fill_pending(self, block: bytes) -> None:
        """Give the windows opened near the end of the previous block their `after` lines."""
        need = max(n for _, n in self.pending)
        lines = block[:_lines_forward(block, 0, need, TAIL_BYTES)].split(b"\n")[:-1]
        still = []
        for window, need in self.pending:
            got = lines[:need]
            window.after.extend(_text(raw) for raw in got)
            if len(got) < need and len(block) <= TAIL_BYTES:
                still.append((window, need - len(got)))
        self.pending = still


def _lines_back(data: bytes, start: int, count: int, floor: int) -> int:
    """Where the `count` lines before the line at `start` begin (not before `floor`; the one at `floor` may be cut)."""
    pos = start - 1  # the newline that ends the line before
    for _ in range(count):
        found = data.rfind(b"\n", floor, pos)
        if found < 0:
            return floor
        pos = found
    return pos + 1


def _lines_forward(data: bytes, start: int, count: int, limit: int) -> int:
    """The end (after its newline) of the `count`-th whole line from `start`, or of the last whole one before `limit`."""
    pos = start
    for _ in range(count):
        found = data.find(b"\n", pos, limit)
        if found < 0:
            break
        pos = found + 1
    return pos


def _text(raw: bytes) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raw = raw[:MAX_LINE_BYTES]
    return strip_ansi(decode_line(raw)).rstrip("\r")[:MAX_TEXT]


def scan_task(task: ScanTask) -> TaskResult:
    """Scan one file or range. Raises InputError for an unreadable or binary input; a truncated .gz keeps
    what was read and says so in `notes`."""
    scanner = _Scanner(task)
    result = scanner.result
    handle = _open(task)
    first = task.start == 0
    if task.start > 0:
        # the lines just before a range are the `before` context of its first windows
        aligned = _align(handle, task.start)
        handle.seek(max(0, aligned - TAIL_BYTES))
        head = handle.read(aligned - max(0, aligned - TAIL_BYTES))
        scanner.prev_tail = head[head.find(b"\n") + 1:] if aligned > TAIL_BYTES else head
    try:
        for block, offset, size in _blocks(handle, task, result):
            if first:
                first = False
                if b"\x00" in block[:8192]:
                    raise InputError(f"{task.name}: binary file, expected text (a log)")
            scanner.block(block, offset, size)
        if scanner.pending and task.end is not None:
            # the last windows of a range look past its end for their `after` lines
            extra = handle.read(TAIL_BYTES)
            if extra:
                scanner._fill_pending(extra)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        note = f"{task.name}: compressed stream ends early ({exc.__class__.__name__}); read {result.lines} lines before it"
        if result.lines == 0 and not result.candidates:
            raise InputError(note) from None
        result.notes.append(note)
    except OSError as exc:
        raise InputError(describe_os_error(task.name, exc)) from None
    finally:
        if task.path is not None:
            handle.close()
    return result


def percentile(values: List[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, int(math.ceil(q / 100.0 * len(ordered))))
    return ordered[min(rank, len(ordered)) - 1]


def _file_size(path: Optional[str]) -> int:
    try:
        return os.path.getsize(path) if path and not path.endswith(".gz") else 0
    except OSError:
        return 0


def _rank_number(digits: bytes, default: Optional[int]) -> Optional[int]:
    """The rank a line prints (ASCII digits), or `default` when what stands there is not a rank."""
    return int(digits) if 0 < len(digits) <= MAX_RANK_DIGITS and digits.isdigit() else default
