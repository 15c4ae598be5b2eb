"""Writes that are whole or absent, and one writer at a time.

- `atomic_write`: the bytes go to a hidden temp file in the target's folder, are fsync'ed, then
  `os.replace`d over the target; a reader sees the old file or the new one, never half of one.
  A writer killed before the rename leaves only its hidden temp file, which every reader ignores
  and the next writer removes.
- `exclusive_lock`: `fcntl.flock` on a lock file. The kernel drops the lock when its holder dies,
  so a killed writer never blocks the next one.
"""
from __future__ import annotations

import contextlib
import os
import time
from typing import Iterator, List

from npu_graph_skill.core.errors import UserError

TEMP_PREFIX = "."
TEMP_SUFFIX = ".tmp"
# Testing hook: seconds to sleep between the temp write and the rename, to kill a writer there.
PAUSE_ENV = "NPU_GRAPH_KB_PAUSE_BEFORE_RENAME"


def atomic_write(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f"{TEMP_PREFIX}{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}")
    # os.open with 0o666 lets the umask decide the mode, as for any file the user creates.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        pause = os.environ.get(PAUSE_ENV)
        if pause:
            time.sleep(float(pause))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: str) -> None:
    """Make the rename itself durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def is_temp_name(name: str) -> bool:
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


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
