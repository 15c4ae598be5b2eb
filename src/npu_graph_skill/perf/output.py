"""Write a result file whole or not at all: a temporary file next to the target, then a rename,
so an interrupted run (Ctrl-C) never leaves half a JSON or HTML file behind."""
from __future__ import annotations

import os
from typing import Callable, Union

from npu_graph_skill.core import files
from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.files import atomic_write


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
    check_writable(path)
    atomic_write(path, data)


def write_with(path: str, writer: Callable[[str], None]) -> None:
    """Let `writer` fill a temporary path (same folder, same suffix), then move it into place."""
    check_writable(path)
    files.write_with(path, writer, keep_suffix=True)
