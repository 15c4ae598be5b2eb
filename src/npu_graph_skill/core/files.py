"""Files written whole or not at all.

The bytes go to a hidden temporary file in the target's folder, then `os.replace` puts it over the
target: a reader sees the old file or the new one, never half of one, and an interrupted run
(Ctrl-C, a kill) leaves the target as it was. Temporary names start with "." and hold ".tmp", so
folder readers skip them (`is_temp_name`). Every module that writes a result, a cache or a
knowledge file goes through here.
"""
from __future__ import annotations

import contextlib
import os
import time
import sys
from typing import Callable, Optional, Union

from npu_graph_skill.core.errors import UserError

# Testing hook: seconds to sleep between the temporary write and the rename, to kill a writer there.
PAUSE_ENV = "NPU_GRAPH_KB_PAUSE_BEFORE_RENAME"


def write_with(path: str, writer: Callable[[str], None], durable: bool = True, keep_suffix: bool = False) -> None:
    """Let `writer` fill a temporary path next to `path`, then rename it into place.

    `durable` syncs the data and the folder to disk first (results and knowledge; caches skip it).
    `keep_suffix` ends the temporary name with the target's suffix, for writers that choose the
    format by it (matplotlib's savefig)."""
    folder = os.path.dirname(os.path.abspath(path))
    suffix = os.path.splitext(path)[1] if keep_suffix else ""
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp{suffix}")
    # Created with 0o666 so that the umask decides the mode, as for any file the user creates.
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        writer(tmp)
        if durable:
            _fsync(tmp, os.O_RDONLY)
        pause = os.environ.get(PAUSE_ENV)
        if pause:
            time.sleep(float(pause))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync(folder, os.O_RDONLY)  # makes the rename itself durable


def atomic_write(path: str, data: Union[str, bytes], durable: bool = True) -> None:
    """Write `data` (text is UTF-8 encoded) to `path` whole or not at all."""
    payload = data.encode("utf-8") if isinstance(data, str) else data

    def fill(tmp: str) -> None:
        with open(tmp, "wb") as handle:
            handle.write(payload)

    write_with(path, fill, durable=durable)


def is_temp_name(name: str) -> bool:
    """A temporary file of `write_with` (a writer's, or one left by a writer that was killed)."""
    return name.startswith(".") and (name.endswith(".tmp") or ".tmp." in name)


def _fsync(path: str, flags: int) -> None:
    """Best effort: not every file system lets a folder (or a file opened read-only) be synced."""
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_output(text: str, output: Optional[str]) -> None:
    """A command's result: to stdout, or whole into the file `--output` names (one-line error if it cannot)."""
    if not output:
        sys.stdout.write(text)
        return
    try:
        atomic_write(output, text)
    except OSError as exc:
        raise UserError(f"{output}: cannot write ({exc.strerror or exc})") from None
