"""Has the live output shown a decisive error yet? (what `--hang-timeout` waits for)

The pump hands each block of whole lines to `offer`, which only keeps it in a backlog of the last
few MB. Only once the output has been quiet for a moment (QUIET) does the pump call `work` — a hang
starts with silence, and what matters is whether the output before it held a decisive error. So a
command that writes is never slowed by the looking, whatever it writes; a silent one has its last
output looked at within a few ticks. Lines holding "error", "exception" or "fatal" in any case are
judged by the log analyzer's own rules (`logs.formats.parse_line`, `logs.families`): an error, and
neither a consequence of a failure elsewhere (HCCL timeouts ...) nor a message torch_npu declares
harmless. After the first decisive error the watcher keeps nothing more. (Looking in a thread of its
own was measured slower: it competes with the pump for the interpreter lock.)
"""
from __future__ import annotations

import collections
import re
import time
from typing import Dict, Optional, Tuple

MAX_LINES_PER_BLOCK = 64  # candidate lines judged per block: a flood of one message costs no more
MAX_CACHE = 4096
BUDGET_SHARE = 0.05  # judging may take this share of the wall time since the start ...
BUDGET_FLOOR = 0.05  # ... plus this many seconds
BACKLOG_BYTES = 4 << 20  # the last output kept for a look; older blocks are dropped unseen
QUIET = 0.25  # seconds without output before the backlog is looked at
# Lines worth judging: every error layout has one of these (ERROR, RuntimeError, ...Exception, ERR00100 lines
# say [ERROR], FATAL), looked for in a lower-cased copy of the block: one translate, three finds.
_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_NEEDLES = (b"error", b"exception", b"fatal")
_DIGITS = re.compile(rb"\d+")


def first_decisive_line(block: bytes, cache: Optional[Dict[bytes, bool]] = None) -> Optional[str]:
    """The first line of `block` that the log analyzer would call a decisive error, or None."""
    from npu_graph_skill.core.ingest import decode_line, strip_ansi
    from npu_graph_skill.logs import families
    from npu_graph_skill.logs.formats import extract_codes, parse_line

    cache = {} if cache is None else cache
    folded = block.translate(_LOWER)
    judged = 0
    position = 0
    while judged < MAX_LINES_PER_BLOCK:
        hit = _next_candidate(folded, position)
        if hit < 0:
            return None
        start = block.rfind(b"\n", 0, hit) + 1
        end = block.find(b"\n", hit)
        end = len(block) if end < 0 else end
        position = end + 1
        raw = block[start:end].rsplit(b"\r", 1)[-1]  # a progress bar redrawn with \r: its last state
        key = _DIGITS.sub(b"#", raw[:400])
        verdict = cache.get(key)
        if verdict is None:
            judged += 1
            text = strip_ansi(decode_line(raw)).strip()
            parsed = parse_line(text)
            codes = extract_codes(parsed.message)
            verdict = families.is_error(parsed, codes) and families.error_role(parsed, codes) == "decisive"
            if len(cache) < MAX_CACHE:
                cache[key] = verdict
        if verdict:
            return strip_ansi(decode_line(raw)).strip()[:500]
    return None


def _next_candidate(block: bytes, position: int) -> int:
    found = [i for i in (block.find(needle, position) for needle in _NEEDLES) if i >= 0]
    return min(found) if found else -1


class DecisiveWatcher:
    """`found` is (monotonic time, line) once a decisive error was seen."""

    def __init__(self) -> None:
        self.found: Optional[Tuple[float, str]] = None
        self._backlog: "collections.deque[bytes]" = collections.deque()
        self._backlog_bytes = 0
        self._cache: Dict[bytes, bool] = {}

    @property
    def pending(self) -> bool:
        return bool(self._backlog)

    def offer(self, block: bytes) -> None:
        """Keep the block for later; never looks at it now."""
        if self.found is not None:
            return
        self._backlog.append(block)
        self._backlog_bytes += len(block)
        while self._backlog_bytes > BACKLOG_BYTES:
            self._backlog_bytes -= len(self._backlog.popleft())

    def work(self, seconds: float) -> None:
        """Look at waiting blocks, oldest first, for about `seconds` (at least one block)."""
        deadline = time.perf_counter() + seconds
        while self._backlog and self.found is None:
            block = self._backlog.popleft()
            self._backlog_bytes -= len(block)
            try:
                line = first_decisive_line(block, self._cache)
            except Exception:  # noqa: BLE001 - a line the parser chokes on must not end the watch
                line = None
            if line:
                self.found = (time.monotonic(), line)
            if time.perf_counter() >= deadline:
                break
        if self.found is not None:
            self._backlog.clear()
            self._backlog_bytes = 0
