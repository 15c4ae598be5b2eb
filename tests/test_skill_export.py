"""`npu-graph skill export --zip`: the bundle in one zip with npu-graph-skill/ at its top."""
from __future__ import annotations

import json
import zipfile

import pytest

from npu_graph_skill.skill import bundle as bundle_module
from npu_graph_skill.skill.routing import SUB_SKILLS
from npu_graph_skill.skill.validate import validate_tree
from skill_fakes import fake_sources


@pytest.fixture(autouse=True)
def fake_knowledge(monkeypatch):
    monkeypatch.setattr(bundle_module, "load_sources", fake_sources)


def test_export_writes_a_zip_that_unpacks_into_a_valid_skill(run_cli, tmp_path):
    out = tmp_path / "npu-graph-skill.zip"
    code, stdout, _ = run_cli("skill", "export", "--zip", str(out), "--json")
    report = json.loads(stdout)
    assert code == 0 and report["path"] == str(out) and report["offline"] is False
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        assert all(name.startswith("npu-graph-skill/") for name in names)
        assert {f"npu-graph-skill/{s}/SKILL.md" for s in SUB_SKILLS} <= set(names)
        assert "npu-graph-skill/scripts/npu-graph.pyz" not in names
        archive.extractall(tmp_path / "unpacked")
    assert validate_tree(str(tmp_path / "unpacked")).ok


def test_export_offline_includes_the_zipapp(run_cli, tmp_path):
    out = tmp_path / "offline.zip"
    code, _, _ = run_cli("skill", "export", "--zip", str(out), "--offline")
    assert code == 0
    with zipfile.ZipFile(out) as archive:
        assert archive.read("npu-graph-skill/scripts/npu-graph.pyz").startswith(b"#!/usr/bin/env python3\n")


@pytest.mark.parametrize("target, message", [("missing-dir/x.zip", "does not exist"), (".", "is a directory")])
def test_export_to_a_bad_place_is_one_line_and_exit_2(run_cli, tmp_path, target, message):
    code, _, err = run_cli("skill", "export", "--zip", str(tmp_path / target))
    assert code == 2 and message in err and err.count("\n") == 1


def test_export_without_zip_is_a_usage_error(run_cli):
    with pytest.raises(SystemExit) as exited:
        run_cli("skill", "export")
    assert exited.value.code == 2
