"""The archive to attach to an issue: `npu-graph-run-<time>.tar.gz` beside the folder, redacted.

Text files go through the case knowledge base's redactor (`cases.redact`: home paths, user and host
names, IP addresses, tokens, e-mail addresses) in blocks of whole lines, decoded with
`surrogateescape` so that bytes that are not UTF-8 come out exactly as they went in: redaction
replaces what identifies a person or a machine and nothing else. The folder itself is never
changed — it stays the raw record for the user's own machine, and `--no-redact` packs it as it is.
The archive is written to a temporary file and renamed into place (`core.files`).
"""
from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
from typing import Dict, Optional

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.files import write_with
from npu_graph_skill.run.bundle import folder_files
from npu_graph_skill.run.model import PackResult

BLOCK = 1 << 20
SPOOL = 8 << 20  # a redacted file larger than this is spooled to disk while it is packed
TEXT_SUFFIXES = (".log", ".txt", ".json", ".md", ".out", ".err", "")
REDACTION_NOTE = "redaction.json"


def archive_path(folder: str) -> str:
    return os.path.abspath(folder).rstrip(os.sep) + ".tar.gz"


def pack_folder(folder: str, redact: bool = True, archive: Optional[str] = None) -> PackResult:
    """Write the archive of `folder`; the redactions it made (counts per kind) are in the result and in
    `redaction.json` at the end of the archive."""
    if not os.path.isdir(folder):
        raise UserError(f"{folder}: no such directory")
    target = archive or archive_path(folder)
    redactor = None
    if redact:
        from npu_graph_skill.cases.redact import default_redactor

        redactor = default_redactor()
    top = os.path.basename(os.path.abspath(folder).rstrip(os.sep))
    files = folder_files(folder)
    counted = {"bytes": 0}

    def fill(tmp: str) -> None:
        with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
            for relative in files:
                path = os.path.join(folder, relative)
                name = f"{top}/{relative}"
                counted["bytes"] += os.path.getsize(path)
                if redactor is not None and _is_text(path):
                    _add_redacted(tar, path, name, redactor)
                else:
                    tar.add(path, arcname=name, recursive=False)
            summary = {"redacted": redactor is not None,
                       "redactions": redactor.summary() if redactor is not None else {},
                       "rules": "npu_graph_skill.cases.redact (home paths, user and host names, IP addresses, tokens, "
                                "e-mail addresses)"}
            data = (json.dumps(summary, indent=2) + "\n").encode("utf-8")
            info = tarfile.TarInfo(f"{top}/{REDACTION_NOTE}")
            info.size = len(data)
            info.mtime = int(os.path.getmtime(folder))
            tar.addfile(info, io.BytesIO(data))

    try:
        write_with(target, fill)
    except OSError as exc:
        raise UserError(f"{target}: cannot write the archive ({exc.strerror or exc})") from None
    return PackResult(archive=target, files=len(files), bytes=counted["bytes"], redacted=redactor is not None,
                      redactions=redactor.summary() if redactor is not None else {})


def _is_text(path: str) -> bool:
    if os.path.splitext(path)[1].lower() not in TEXT_SUFFIXES:
        return False
    try:
        with open(path, "rb") as handle:
            return b"\0" not in handle.read(8192)
    except OSError:
        return False


def _add_redacted(tar: tarfile.TarFile, path: str, name: str, redactor) -> None:
    with tempfile.SpooledTemporaryFile(max_size=SPOOL) as spool, open(path, "rb") as source:
        size = 0
        pending = b""
        while True:
            block = source.read(BLOCK)
            if not block:
                break
            block = pending + block
            cut = block.rfind(b"\n") + 1
            if cut == 0 and len(block) < 16 * BLOCK:
                pending = block  # a line longer than a block: wait for its end (bounded)
                continue
            if cut == 0:
                cut = len(block)
            pending = block[cut:]
            size += spool.write(_redact_bytes(block[:cut], redactor))
        if pending:
            size += spool.write(_redact_bytes(pending, redactor))
        spool.seek(0)
        info = tar.gettarinfo(path, arcname=name)
        info.size = size
        tar.addfile(info, spool)


def _redact_bytes(data: bytes, redactor) -> bytes:
    text = data.decode("utf-8", "surrogateescape")
    return redactor.text(text).encode("utf-8", "surrogateescape")


def describe_redactions(counts: Dict[str, int], lang: str) -> str:
    from npu_graph_skill.cases.redact import describe

    return describe(counts, lang)
