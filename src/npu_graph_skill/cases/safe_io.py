"""Writes that are whole or absent (`core.files`), and one writer at a time.

- `atomic_write` (from `core.files`): a writer killed before the rename leaves only its hidden
  temp file, which every reader ignores and the next writer removes (`remove_stale_temps`).
- `exclusive_lock`: `fcntl.flock` on a lock file. The kernel drops the lock when its holder dies,
  so a killed writer never blocks the next one.
"""
from __future__ import annotations

import contextlib
import os
import time
from typing import Iterator, List

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.files import is_temp_name


def remove_stale_temps(folders: List[str]) -> List[str]:
    """Delete temp files left by killed writers. Call only while holding the lock: every writer
    writes under it, so any temp file found then belongs to a writer that is gone."""
    removed = []
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if is_temp_name(name):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))
                    removed.append(os.path.join(folder, name))
    return removed


@contextlib.contextmanager
def exclusive_lock(path: str, timeout: float = 60.0) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the duration of the block."""
    try:
        import fcntl
    except ImportError:  # not POSIX: atomic writes still hold, concurrent writers are not serialised
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise UserError(f"{path}: cannot create the knowledge-base lock ({exc.strerror or exc})") from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise UserError(f"{path}: another writer has held the knowledge base for {timeout:.0f} s; "
                                    "try again, or check for a hung `npu-graph kb` process") from None
                time.sleep(0.02)
            except OSError as exc:  # e.g. ENOLCK on a file system without locks
                raise UserError(f"{path}: cannot lock the knowledge base ({exc.strerror or exc})") from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
