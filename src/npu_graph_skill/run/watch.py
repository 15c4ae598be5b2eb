"""Has the live output shown a decisive error yet? (what `--hang-timeout` waits for)

The pump hands each block of whole lines to `offer`, which never waits: the block goes into a small
queue read by a thread of its own, and when the thread falls behind, blocks are skipped and counted
(the recorded file still has them; the diagnosis at the end reads the file). Only the first decisive
error matters, so after it the watcher takes nothing more. A line is judged by the log analyzer's
own rules (`logs.formats.parse_line`, `logs.families`): an error, and neither a consequence of a
failure elsewhere (HCCL timeouts ...) nor a message torch_npu declares harmless.
"""
from __future__ import annotations

import queue
import re
import threading
import time
from typing import Dict, Optional, Tuple

QUEUE_BLOCKS = 64  # blocks waiting for the thread (a block is at most one read of 64 KB)
MAX_LINES_PER_BLOCK = 64  # candidate lines judged per block: a flood of one message costs no more
MAX_CACHE = 4096
# Lines worth judging: every error layout has one of these (ERROR, RuntimeError, ...Exception, ERR00100, FATAL).
_CANDIDATE = re.compile(rb"rror|RROR|xception|FATAL|ERR\d")
_DIGITS = re.compile(rb"\d+")


def first_decisive_line(block: bytes, cache: Optional[Dict[bytes, bool]] = None) -> Optional[str]:
    """The first line of `block` that the log analyzer would call a decisive error, or None."""
    from npu_graph_skill.core.ingest import decode_line, strip_ansi
    from npu_graph_skill.logs import families
    from npu_graph_skill.logs.formats import extract_codes, parse_line

    cache = {} if cache is None else cache
    judged = 0
    position = 0
    while judged < MAX_LINES_PER_BLOCK:
        match = _CANDIDATE.search(block, position)
        if not match:
            return None
        start = block.rfind(b"\n", 0, match.start()) + 1
        end = block.find(b"\n", match.end())
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


class DecisiveWatcher:
    """Judges blocks in a thread of its own; `found` is (monotonic time, line) once a decisive error was seen."""

    def __init__(self) -> None:
        self.found: Optional[Tuple[float, str]] = None
        self.skipped_bytes = 0
        self._queue: "queue.Queue[Optional[bytes]]" = queue.Queue(maxsize=QUEUE_BLOCKS)
        self._cache: Dict[bytes, bool] = {}
        self._thread = threading.Thread(target=self._loop, name="npu-graph-run-watch", daemon=True)
        self._thread.start()

    def offer(self, block: bytes) -> None:
        """Never blocks the caller."""
        if self.found is not None:
            return
        try:
            self._queue.put_nowait(block)
        except queue.Full:
            self.skipped_bytes += len(block)

    def stop(self, timeout: float = 2.0) -> None:
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            pass
        self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            block = self._queue.get()
            if block is None:
                return
            if self.found is not None:
                continue
            try:
                line = first_decisive_line(block, self._cache)
            except Exception:  # noqa: BLE001 - a line the parser chokes on must not end the watch
                line = None
            if line:
                self.found = (time.monotonic(), line)
