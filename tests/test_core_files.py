"""core.files: the one atomic write every module uses."""
from __future__ import annotations

import os

import pytest

from npu_graph_skill.core import files


def test_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    files.atomic_write(str(target), "新的 report")
    assert target.read_text(encoding="utf-8") == "新的 report"
    assert os.listdir(tmp_path) == ["report.json"]


def test_interrupted_writer_keeps_the_old_file(tmp_path):
    target = tmp_path / "history.md"
    target.write_text("old")

    def writer(tmp):
        with open(tmp, "w") as handle:
            handle.write("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        files.write_with(str(target), writer)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["history.md"]


def test_temp_name_keeps_suffix_for_format_sniffing_writers(tmp_path):
    seen = []
    files.write_with(str(tmp_path / "chart.png"), lambda tmp: (seen.append(tmp), open(tmp, "wb").close()), keep_suffix=True)
    name = os.path.basename(seen[0])
    assert name.endswith(".png") and files.is_temp_name(name)
    assert not files.is_temp_name("chart.png") and not files.is_temp_name(".gitignore")


def test_mode_follows_umask(tmp_path):
    old = os.umask(0o027)
    try:
        files.atomic_write(str(tmp_path / "a"), b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o640
