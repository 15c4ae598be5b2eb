"""The child's stdout and stderr, recorded into one file in arrival order, with bounded memory.

Each stream is cut into whole lines before it is written (so a line of stdout never splits a line of
stderr in the record); a line longer than PENDING_MAX is written in pieces. The first half of the
budget goes to the file as it comes; after that, output goes to a ring file of the other half, so
the record keeps the head and the tail of a huge output and `finish` writes a note of what fell
between. Memory stays at a few chunks whatever the child prints.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Callable, Dict, Optional

PENDING_MAX = 64 * 1024  # a partial line longer than this is written as it is (progress bars, binary noise)
COPY_BLOCK = 1 << 20


@dataclasses.dataclass
class OutputStats:
    """What the record holds and what it dropped."""

    file: str
    bytes: int = 0  # everything the child printed
    lines: int = 0
    kept_bytes: int = 0
    dropped_bytes: int = 0
    dropped_lines: int = 0
    limit_bytes: int = 0


class OutputRecorder:
    """`feed(stream, data)` from the pump; `finish()` once, after the last byte."""

    def __init__(self, path: str, max_bytes: int, on_block: Optional[Callable[[bytes], None]] = None) -> None:
        self.path = path
        self.max_bytes = max(2, int(max_bytes))
        self.head_cap = self.max_bytes // 2
        self.tail_cap = self.max_bytes - self.head_cap
        self.on_block = on_block
        self._head = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self._ring: Optional[int] = None
        self._ring_path = os.path.join(os.path.dirname(path) or ".", f".{os.path.basename(path)}.tail")
        self._pending: Dict[int, bytearray] = {}
        self.head_bytes = 0
        self.head_lines = 0
        self.ring_total = 0  # bytes sent to the ring (the ring keeps the last tail_cap of them)
        self.total_bytes = 0
        self.total_lines = 0
        self._spilling = False

    # -- the pump's side --------------------------------------------------------------------------
    def feed(self, stream: int, data: bytes) -> None:
        pending = self._pending.setdefault(stream, bytearray())
        cut = data.rfind(b"\n")
        if cut < 0:
            pending += data
            if len(pending) >= PENDING_MAX:
                self._emit(bytes(pending))
                pending.clear()
            return
        if pending:
            block = bytes(pending) + data[:cut + 1]
            pending.clear()
        else:
            block = data[:cut + 1]
        if cut + 1 < len(data):
            pending += data[cut + 1:]
        self._emit(block)

    def _emit(self, block: bytes) -> None:
        size = len(block)
        lines = block.count(b"\n")
        self.total_bytes += size
        self.total_lines += lines
        if not self._spilling:
            room = self.head_cap - self.head_bytes
            if size <= room:
                self._write_head(block, lines)
                self._offer(block)
                return
            # Fill the head up to its last whole line, then spill the rest to the ring.
            cut = block.rfind(b"\n", 0, room)
            if cut >= 0:
                first = block[:cut + 1]
                self._write_head(first, first.count(b"\n"))
                self._offer(first)
                block = block[cut + 1:]
            self._spilling = True
        self._write_ring(block)
        self._offer(block)

    def _offer(self, block: bytes) -> None:
        if self.on_block is not None and block:
            self.on_block(block)

    def _write_head(self, block: bytes, lines: int) -> None:
        _write_all(self._head, block)
        self.head_bytes += len(block)
        self.head_lines += lines

    def _write_ring(self, block: bytes) -> None:
        if self._ring is None:
            self._ring = os.open(self._ring_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        cap = self.tail_cap
        if len(block) > cap:  # only its last `cap` bytes can survive anyway
            self.ring_total += len(block) - cap
            block = block[-cap:]
        position = self.ring_total % cap
        first = block[:cap - position]
        os.pwrite(self._ring, first, position)
        if len(first) < len(block):
            os.pwrite(self._ring, block[len(first):], 0)
        self.ring_total += len(block)

    # -- the end ----------------------------------------------------------------------------------
    def finish(self) -> OutputStats:
        """Write what is pending, then the tail (after a note of what was dropped); close the files."""
        for pending in self._pending.values():
            if pending:
                self._emit(bytes(pending))
                pending.clear()
        stats = OutputStats(file=self.path, bytes=self.total_bytes, lines=self.total_lines, limit_bytes=self.max_bytes)
        try:
            if self._ring is not None:
                self._append_tail(stats)
            stats.kept_bytes = self.total_bytes - stats.dropped_bytes
        finally:
            os.close(self._head)
            if self._ring is not None:
                os.close(self._ring)
                try:
                    os.unlink(self._ring_path)
                except OSError:
                    pass
        return stats

    def _append_tail(self, stats: OutputStats) -> None:
        cap = self.tail_cap
        if self.ring_total <= cap:
            pieces = [(0, self.ring_total)]  # nothing was overwritten: the ring is the rest of the output
        else:
            start = self.ring_total % cap
            pieces = [(start, cap - start), (0, start)]  # oldest bytes first
        skip = 0
        if self.ring_total > cap:
            # The oldest bytes of the ring begin inside a line: the tail starts at the next whole line.
            first = b"".join(os.pread(self._ring, n, o) for o, n in self._ranges(pieces, 0, limit=PENDING_MAX))
            newline = first.find(b"\n")
            skip = newline + 1 if newline >= 0 else 0
        kept = min(self.ring_total, cap) - skip
        dropped = self.ring_total - kept
        if dropped:
            tail_lines = sum(os.pread(self._ring, n, o).count(b"\n") for o, n in self._ranges(pieces, skip))
            stats.dropped_bytes = dropped
            stats.dropped_lines = max(0, self.total_lines - self.head_lines - tail_lines)
            note = (f"\n[npu-graph run] {dropped:,} bytes ({stats.dropped_lines:,} lines) of output dropped here: "
                    f"the record keeps the first {_mb(self.head_cap)} and the last {_mb(self.tail_cap)} "
                    f"(--max-output-mb {_mb(self.max_bytes, unit=False)})\n")
            _write_all(self._head, note.encode("utf-8"))
        for offset, length in self._ranges(pieces, skip):
            _write_all(self._head, os.pread(self._ring, length, offset))

    @staticmethod
    def _ranges(pieces, skip: int, limit: Optional[int] = None):
        """(offset, length) blocks of at most COPY_BLOCK over the ring's pieces in order, the first `skip`
        bytes left out, at most `limit` bytes in all."""
        left = limit if limit is not None else float("inf")
        for offset, length in pieces:
            if skip:
                used = min(skip, length)
                offset, length, skip = offset + used, length - used, skip - used
            while length > 0 and left > 0:
                step = int(min(COPY_BLOCK, length, left))
                yield offset, step
                offset += step
                length -= step
                left -= step


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _mb(size: int, unit: bool = True) -> str:
    value = size / (1024 * 1024)
    if not unit:
        return f"{value:g}"
    return f"{value:.3g} MB" if value >= 0.1 else f"{size / 1024:.3g} KB"
