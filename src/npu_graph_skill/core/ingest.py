"""Open what a user hands us — a file, a `.gz`, stdin, a directory of logs — as lines of text.

Bytes are decoded line by line (UTF-8, then GB18030, then Latin-1), so a log that mixes encodings
or carries a broken byte still reads; ANSI colour is stripped; over-long lines are cut so memory
stays bounded. Problems become an `InputError` with one line of explanation, or a note on the
`TextSource` when a best-effort read was possible (a truncated `.gz`).
"""
from __future__ import annotations

import dataclasses
import gzip
import io
import os
import re
import sys
import zlib
from typing import IO, Iterator, List, Optional

from npu_graph_skill.core.errors import InputError

MAX_LINE_BYTES = 64 * 1024
SNIFF_BYTES = 8192
# Bounded: a pasted text full of stray ESC characters must not make each one scan to the end.
ANSI_RE = re.compile(r"\x1b\[[0-9;?]{0,32}[ -/]{0,8}[@-~]|\x1b\][^\x07\n]{0,512}\x07")
# Files in a log directory worth reading; everything else (binaries, profiler dbs) is skipped.
LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".gz", ".json", ".csv", "")


@dataclasses.dataclass
class TextSource:
    """One input: a path, or `-` for stdin."""

    name: str
    path: Optional[str] = None  # None = stdin
    notes: List[str] = dataclasses.field(default_factory=list)

    @property
    def is_stdin(self) -> bool:
        return self.path is None

    @property
    def size(self) -> int:
        try:
            return os.path.getsize(self.path) if self.path else 0
        except OSError:
            return 0


def strip_ansi(text: str) -> str:
    return ANSI_RE.sub("", text) if "\x1b" in text else text


def decode_line(raw: bytes) -> str:
    """UTF-8 first; GB18030 for Chinese logs written by a GBK/GB18030 terminal; Latin-1 never fails."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("gb18030")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def describe_os_error(path: str, exc: OSError, expected: str = "a file") -> str:
    """The one line a user sees when `path` cannot be opened or read."""
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file or directory"
    if isinstance(exc, PermissionError):
        return f"{path}: permission denied"
    if isinstance(exc, IsADirectoryError):
        return f"{path}: is a directory, expected {expected}"
    return f"{path}: cannot read ({exc.strerror or exc})"


def resolve_sources(paths: List[str], allow_dirs: bool = True) -> List[TextSource]:
    """Expand the given paths (`-` = stdin) into readable sources; a directory gives its log files."""
    sources: List[TextSource] = []
    for path in paths or ["-"]:
        if path == "-":
            sources.append(TextSource(name="<stdin>"))
            continue
        if os.path.isdir(path):
            if not allow_dirs:
                raise InputError(f"{path}: is a directory, expected a file")
            found = list(_walk_log_files(path))
            if not found:
                raise InputError(f"{path}: directory holds no log files")
            sources.extend(found)
            continue
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file or directory")
        if not os.access(path, os.R_OK):
            raise InputError(f"{path}: permission denied")
        sources.append(TextSource(name=path, path=path))
    return sources


def _walk_log_files(root: str) -> Iterator[TextSource]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            if filename.startswith("."):
                continue
            suffix = os.path.splitext(filename)[1].lower()
            if suffix not in LOG_SUFFIXES:
                continue
            full = os.path.join(dirpath, filename)
            if os.access(full, os.R_OK) and not _looks_binary_file(full):
                yield TextSource(name=full, path=full)


def _looks_binary(head: bytes) -> bool:
    return b"\x00" in head


def _looks_binary_file(path: str) -> bool:
    try:
        with _open_binary(path) as handle:
            return _looks_binary(handle.read(SNIFF_BYTES))
    except (OSError, EOFError, zlib.error):
        return False


def _open_binary(path: str) -> IO[bytes]:
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _raw_lines(handle: IO[bytes], max_line: int) -> Iterator[bytes]:
    """Lines as bytes, each cut at `max_line` bytes (the rest of an over-long line is skipped)."""
    readline = handle.readline
    while True:
        chunk = readline(max_line)
        if not chunk:
            return
        if chunk.endswith(b"\n") or len(chunk) < max_line:
            yield chunk
            continue
        yield chunk  # first part of an over-long line; drop the remainder
        while True:
            rest = readline(max_line)
            if not rest or rest.endswith(b"\n"):
                break


def iter_lines(source: TextSource, max_line: int = MAX_LINE_BYTES, ansi: bool = False) -> Iterator[str]:
    """Decoded lines without their line ending. Raises InputError on an unreadable or binary input."""
    if source.is_stdin:
        handle: IO[bytes] = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else io.BytesIO(sys.stdin.read().encode())
        yield from _decode_stream(source, handle, max_line, ansi)
        return
    path = source.path or ""
    try:
        handle = _open_binary(path)
    except OSError as exc:
        raise InputError(describe_os_error(path, exc)) from None
    with handle:
        yield from _decode_stream(source, handle, max_line, ansi)


def _decode_stream(source: TextSource, handle: IO[bytes], max_line: int, ansi: bool) -> Iterator[str]:
    first = True
    count = 0
    try:
        for raw in _raw_lines(handle, max_line):
            if first:
                first = False
                if _looks_binary(raw[:SNIFF_BYTES]):
                    raise InputError(f"{source.name}: binary file, expected text (a log or an error message)")
            count += 1
            text = decode_line(raw).rstrip("\r\n")
            yield text if ansi else strip_ansi(text)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        note = f"{source.name}: compressed stream ends early ({exc.__class__.__name__}); read {count} lines before it"
        if count == 0:
            raise InputError(note) from None
        source.notes.append(note)
    except OSError as exc:
        raise InputError(describe_os_error(source.name, exc)) from None


def read_text(source: TextSource, max_bytes: Optional[int] = None) -> str:
    """The whole input as one string (for short inputs such as a pasted traceback)."""
    parts: List[str] = []
    total = 0
    for line in iter_lines(source):
        parts.append(line)
        total += len(line) + 1
        if max_bytes is not None and total > max_bytes:
            source.notes.append(f"{source.name}: read the first {max_bytes} bytes only")
            break
    return "\n".join(parts)
