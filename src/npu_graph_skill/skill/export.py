"""`npu-graph skill export --zip OUT`: the bundle as one zip with `npu-graph-skill/` at its top, for
agents that import a zip (Trae, claude.ai) or for copying to a machine without the tool."""
from __future__ import annotations

import dataclasses
import io
import os
import zipfile
from typing import List, Optional

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.model import Record
from npu_graph_skill.skill.bundle import SKILL_NAME, Bundle, BundleFile
from npu_graph_skill.skill.zipapp_build import FIXED_TIME


@dataclasses.dataclass
class ExportReport(Record):
    path: str
    files: int
    bytes: int
    offline: bool
    notes: List[str]


def bundle_zip(files: List[BundleFile]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for item in sorted(files, key=lambda f: f.path):
            info = zipfile.ZipInfo(f"{SKILL_NAME}/{item.path}", date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, item.data)
    return buffer.getvalue()


def export_skill(out: str, offline: bool = False, bundle: Optional[Bundle] = None) -> ExportReport:
    from npu_graph_skill.skill.bundle import GENERATED, render_bundle
    from npu_graph_skill.skill.install import ZIPAPP_PATH, atomic_write

    if not out:
        raise UserError("export needs an output path, e.g. --zip npu-graph-skill.zip")
    target = os.path.abspath(os.path.expanduser(out))
    if os.path.isdir(target):
        raise UserError(f"{out}: is a directory; give a file name such as {os.path.join(out, SKILL_NAME + '.zip')}")
    if not os.path.isdir(os.path.dirname(target)):
        raise UserError(f"{out}: the folder {os.path.dirname(target)} does not exist")
    bundle = bundle or render_bundle()
    files = list(bundle.files)
    if offline:
        from npu_graph_skill.skill.zipapp_build import build_zipapp

        files.append(BundleFile(ZIPAPP_PATH, build_zipapp(), GENERATED))
    data = bundle_zip(files)
    try:
        atomic_write(target, data)
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    return ExportReport(path=target, files=len(files), bytes=len(data), offline=offline, notes=list(bundle.notes))
