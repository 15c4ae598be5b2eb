"""What the MCP tools may read: paths under the allowed roots, within the size limits.

A model chooses the paths a tool reads, so every path is checked before any capability sees it:
symlinks are resolved first (`os.path.realpath`), the result must lie under one of the roots (the
server's working directory, `--allow DIR`, the client's roots), and a directory is walked so that
no symlink inside it leads out. Refusals are `PathRefused` (a `UserError`): one line that names
the allowed roots and how to widen them, for the model to read and act on.

Standard library only: this module is imported (and tested) without the MCP SDK.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Iterable, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from npu_graph_skill.core.errors import UserError

MB = 1024 * 1024
DEFAULT_MAX_LOG_BYTES = 512 * MB  # logs, profiler folders, graph dumps (all streamed)
DEFAULT_MAX_TEXT_BYTES = 8 * MB  # read whole into memory: pasted text, report / bench JSON
DEFAULT_TIME_LIMIT = 300.0  # seconds for one tool call that runs in a worker process
MAX_WALK_ENTRIES = 200_000  # a directory with more entries than this is refused, not walked forever


class PathRefused(UserError):
    """A path outside the allowed roots, missing, of the wrong kind, or over a size limit."""


@dataclasses.dataclass
class ServerSettings:
    """The server's safety settings, fixed at start (`npu-graph mcp --allow ... --time-limit ...`)."""

    roots: List[str]  # real paths
    time_limit: float = DEFAULT_TIME_LIMIT
    max_log_bytes: int = DEFAULT_MAX_LOG_BYTES
    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES
    client_roots: bool = True  # also allow the roots the client announces (MCP `roots/list`)

    @classmethod
    def create(cls, allow: Sequence[str] = (), cwd: Optional[str] = None, environ: Optional[dict] = None,
               **limits) -> "ServerSettings":
        """The working directory, Claude Code's project folder ($CLAUDE_PROJECT_DIR, set for the servers
        it starts: ../shared/reference/ecosystem.md §2.5) and every `--allow DIR` (which must exist)."""
        env = os.environ if environ is None else environ
        roots = [cwd or os.getcwd()]
        if env.get("CLAUDE_PROJECT_DIR", "").strip():
            roots.append(env["CLAUDE_PROJECT_DIR"].strip())
        for directory in allow:
            path = os.path.expanduser(directory)
            if not os.path.isdir(path):
                raise UserError(f"--allow {directory}: no such directory")
            roots.append(path)
        return cls(roots=unique_real_paths(roots), **limits)


def unique_real_paths(paths: Iterable[str]) -> List[str]:
    seen: List[str] = []
    for path in paths:
        real = os.path.realpath(os.path.abspath(os.path.expanduser(path)))
        if real not in seen:
            seen.append(real)
    return seen


def roots_from_uris(uris: Iterable[str]) -> List[str]:
    """`file:///home/me/proj` → `/home/me/proj`; other schemes are ignored."""
    paths = []
    for uri in uris:
        parsed = urlparse(str(uri))
        if parsed.scheme == "file" and parsed.path:
            paths.append(unquote(parsed.path))
    return unique_real_paths(paths)


def is_under(real_path: str, roots: Sequence[str]) -> bool:
    for root in roots:
        if real_path == root or real_path.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def _describe_roots(roots: Sequence[str]) -> str:
    return ", ".join(roots) if roots else "(none)"


def _outside(shown: str, absolute: str, real: str, roots: Sequence[str]) -> PathRefused:
    via = f" (it resolves to {real})" if real != absolute else ""
    return PathRefused(f"{shown}{via} is outside the allowed roots: {_describe_roots(roots)}. "
                       "Use a path under one of them, or restart the server with `npu-graph mcp --allow DIR`")


MAX_PATH_CHARS = 4096  # PATH_MAX on Linux


def _checked_text(path: str, what: str) -> str:
    """The stripped path, or PathRefused for one no file system accepts (a model may send anything)."""
    if not isinstance(path, str) or not path.strip():
        raise PathRefused(f"empty path: give a {what} path")
    path = path.strip()
    if len(path) > MAX_PATH_CHARS:
        raise PathRefused(f"a path of {len(path)} characters, over the {MAX_PATH_CHARS} a file system accepts: give a real {what} path")
    if "\x00" in path:
        raise PathRefused(f"{path[:80]!r}: a path cannot contain a NUL character")
    try:
        os.fsencode(path)
    except UnicodeError:
        raise PathRefused(f"{path[:80]!r}: not a valid file name in this system's encoding") from None
    return path


def _human(size: int) -> str:
    return f"{size / MB:.1f} MB" if size >= MB else f"{size} bytes"


def check_input(path: str, roots: Sequence[str], max_bytes: Optional[int], kind: str = "any",
                limit_hint: str = "") -> Tuple[str, int]:
    """(the absolute path to hand to a capability, its size in bytes), or PathRefused.

    kind: "file", "dir" or "any". A directory is walked (symlinked folders followed once) and
    every entry must resolve under the roots; its regular files count toward `max_bytes`.
    """
    if isinstance(path, str) and path.strip() == "-":
        raise PathRefused("'-' (stdin) is the MCP channel here: pass the text itself, or a file path")
    absolute = os.path.abspath(os.path.expanduser(_checked_text(path, "file or directory")))
    real = os.path.realpath(absolute)
    if not is_under(real, roots):
        raise _outside(path, absolute, real, roots)
    if not os.path.exists(real):
        raise PathRefused(f"{path}: no such file or directory")
    is_dir = os.path.isdir(real)
    if kind == "file" and is_dir:
        raise PathRefused(f"{path}: is a directory, expected a file")
    if kind == "dir" and not is_dir:
        raise PathRefused(f"{path}: is a file, expected a directory")
    if is_dir:
        size, escape = walk_tree(real, roots)
        if escape:
            raise _outside(f"{escape[0]} (inside {path})", escape[0], escape[1], roots)
    else:
        try:
            size = os.path.getsize(real)
        except OSError as exc:
            raise PathRefused(f"{path}: cannot read ({exc.strerror or exc})") from None
    if max_bytes is not None and size > max_bytes:
        raise PathRefused(f"{path}: {_human(size)}, over the {_human(max_bytes)} limit for this tool; "
                          f"give a smaller input (one rank's folder, one file){limit_hint}")
    return absolute, size


def check_output_dir(path: str, roots: Sequence[str]) -> str:
    """A folder a tool may write into (it need not exist yet): its resolved path must be under the roots."""
    absolute = os.path.abspath(os.path.expanduser(_checked_text(path, "directory")))
    real = os.path.realpath(absolute)
    if not is_under(real, roots):
        raise _outside(path, absolute, real, roots)
    if os.path.exists(real) and not os.path.isdir(real):
        raise PathRefused(f"{path}: is a file, expected a directory")
    return absolute


def walk_tree(top: str, roots: Sequence[str]) -> Tuple[int, Optional[Tuple[str, str]]]:
    """(total bytes of regular files, first (entry, resolved path) that leads outside the roots or None).

    Symlinked folders are walked too (once each, by real path), since a capability may follow them.
    """
    total = 0
    entries = 0
    seen = {top}
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            children = list(os.scandir(directory))
        except OSError:
            continue  # unreadable folder: the capability reports it (or skips it) itself
        for entry in children:
            entries += 1
            if entries > MAX_WALK_ENTRIES:
                raise PathRefused(f"{top}: more than {MAX_WALK_ENTRIES:,} entries; give a smaller folder")
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if not is_under(target, roots):
                        return total, (entry.path, target)
                    if os.path.isdir(target):
                        if target not in seen:
                            seen.add(target)
                            stack.append(target)
                        continue
                    total += os.path.getsize(target) if os.path.isfile(target) else 0
                elif entry.is_dir(follow_symlinks=False):
                    real = os.path.realpath(entry.path)
                    if real not in seen:
                        seen.add(real)
                        stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total, None
