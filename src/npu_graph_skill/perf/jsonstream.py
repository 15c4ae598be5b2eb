"""Read the events of a Chrome-trace JSON file one at a time, with bounded memory.

torch_npu's `trace_view.json` is a top-level JSON array that can reach hundreds of MB; loading it
with `json.load` costs several times its size in RAM. Here the file is read in chunks and each
array element is decoded on its own (the C scanner behind `json.JSONDecoder.raw_decode`), so memory
stays at one chunk plus one event. The `{"traceEvents": [...]}` object form that upstream PyTorch
writes is accepted too. A file cut short yields the events before the cut and leaves a note.
"""
from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from typing import Any, Iterator, List, Optional

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.ingest import describe_os_error

CHUNK_CHARS = 1 << 20
MAX_EVENT_CHARS = 64 << 20  # one event larger than this is not a trace event
_WS = re.compile(r"[ \t\r\n]*")


def _open(path: str):
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


class _Reader:
    """Decoded text of a file, read on demand, with a cursor into a sliding buffer."""

    def __init__(self, handle, name: str) -> None:
        self.handle = handle
        self.name = name
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.first = True
        # read1 returns what one underlying read gives: a cut .gz then loses at most one small piece
        self.read = getattr(handle, "read1", handle.read)

    def fill(self) -> bool:
        """Append one more chunk; False at end of file."""
        if self.eof:
            return False
        raw = self.read(CHUNK_CHARS)
        if self.first and raw:
            self.first = False
            if b"\x00" in raw[:8192]:
                raise InputError(f"{self.name}: binary file, expected JSON")
            if raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
        if not raw:
            self.eof = True
            self.buf = self.buf[self.pos:] + self.decoder.decode(b"", final=True)
            self.pos = 0
            return False
        self.buf = self.buf[self.pos:] + self.decoder.decode(raw)
        self.pos = 0
        return True

    def skip_ws(self) -> Optional[str]:
        """Move past whitespace; the next character, or None at end of file."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return None


def iter_json_events(path: str, notes: Optional[List[str]] = None, max_events: Optional[int] = None,
                     name: Optional[str] = None) -> Iterator[Any]:
    """Yield the elements of the trace's event array. Raises InputError when the file is not a JSON
    array (or `{"traceEvents": [...]}`); notes what was cut when the file ends early."""
    notes = notes if notes is not None else []
    label = name or path
    try:
        handle = _open(path)
    except OSError as exc:
        raise InputError(describe_os_error(label, exc, "a JSON file")) from None
    with handle:
        reader = _Reader(handle, label)
        try:
            yield from _events(reader, notes, max_events, label)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            notes.append(f"{label}: compressed stream ends early ({exc.__class__.__name__})")
        except OSError as exc:
            raise InputError(f"{label}: cannot read ({exc.strerror or exc})") from None


def _events(reader: _Reader, notes: List[str], max_events: Optional[int], label: str) -> Iterator[Any]:
    scan = json.JSONDecoder().scan_once  # raw_decode without its wrapper: this loop runs once per event
    head = reader.skip_ws()
    if head is None:
        raise InputError(f"{label}: empty file, expected a JSON array of trace events")
    if head == "{":
        _seek_trace_events(reader, label)
    elif head != "[":
        raise InputError(f"{label}: not a JSON trace (expected '[' or '{{' at the start, found {head!r})")
    reader.pos += 1
    count = 0
    while True:
        nxt = reader.skip_ws()
        if nxt is None:
            notes.append(f"{label}: file ends before the closing ']' (truncated?); read {count} events")
            return
        if nxt == "]":
            return
        if nxt == ",":
            reader.pos += 1
            continue
        while True:
            try:
                value, end = scan(reader.buf, reader.pos)
                break
            except (StopIteration, json.JSONDecodeError):
                if len(reader.buf) - reader.pos > MAX_EVENT_CHARS:
                    notes.append(f"{label}: an event larger than {MAX_EVENT_CHARS >> 20} MB; stopped after {count} events")
                    return
                if not reader.fill():
                    if count == 0:
                        raise InputError(f"{label}: not valid JSON near the start") from None
                    notes.append(f"{label}: file ends inside an event (truncated?); read {count} events")
                    return
        reader.pos = end
        count += 1
        yield value
        if max_events is not None and count >= max_events:
            notes.append(f"{label}: stopped after {max_events} events (--max-events)")
            return


def _seek_trace_events(reader: _Reader, label: str) -> None:
    """In the `{"traceEvents": [...]}` form, move the cursor to the array's '['."""
    key = '"traceEvents"'
    scanned = 0
    while True:
        found = reader.buf.find(key, reader.pos)
        if found >= 0:
            reader.pos = found + len(key)
            nxt = reader.skip_ws()
            if nxt == ":":
                reader.pos += 1
                if reader.skip_ws() == "[":
                    return
            raise InputError(f"{label}: 'traceEvents' is not an array")
        scanned += len(reader.buf) - reader.pos
        # keep a tail so a key split across chunks is still found
        reader.pos = max(reader.pos, len(reader.buf) - len(key))
        if scanned > MAX_EVENT_CHARS or not reader.fill():
            raise InputError(f"{label}: a JSON object without a 'traceEvents' array; expected a trace")
