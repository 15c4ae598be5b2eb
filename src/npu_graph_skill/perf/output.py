"""Write a result file whole or not at all: a temporary file next to the target, then a rename,
so an interrupted run (Ctrl-C) never leaves half a JSON or HTML file behind."""
from __future__ import annotations

import os
import tempfile
from typing import Callable, Union

from npu_graph_skill.core.errors import UserError


def check_writable(path: str) -> str:
    """Fail before the work when the result could not be written (missing folder, no permission)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UserError(f"{path}: is a directory, expected a file name to write")
    if not os.path.isdir(folder):
        raise UserError(f"{path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UserError(f"{path}: permission denied (cannot write in {folder})")
    return folder


def write_atomic(path: str, data: Union[str, bytes]) -> None:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    write_with(path, lambda tmp: _write_bytes(tmp, payload))


def _write_bytes(tmp: str, payload: bytes) -> None:
    with open(tmp, "wb") as handle:
        handle.write(payload)


def write_with(path: str, writer: Callable[[str], None]) -> None:
    """Let `writer` fill a temporary path (same folder, same suffix), then move it into place."""
    folder = check_writable(path)
    suffix = os.path.splitext(path)[1]
    fd, tmp = tempfile.mkstemp(prefix=".npu-graph-", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        writer(tmp)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
