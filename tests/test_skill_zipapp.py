"""The offline zipapp: the whole tool in one file, run by an interpreter that has nothing installed
(`python -I -S`: no site-packages, no user site, no PYTHONPATH)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from npu_graph_skill import __version__
from npu_graph_skill.skill.zipapp_build import build_zipapp, collect_sources, write_zipapp

TRACEBACK = """Traceback (most recent call last):
  File "/home/user/test.py", line 26, in <module>
    g.capture_begin()
  File ".../torch_npu/npu/graphs.py", line 359, in capture_begin
RuntimeError: NPU graphs must be captured on a non-default stream. (However, after capture, it's ok to replay them on the default stream.)
"""


def interpreters():
    """This interpreter, and Python 3.9 when the machine has one (the oldest the tool supports)."""
    found = [sys.executable]
    for candidate in (os.environ.get("NPU_GRAPH_TEST_PYTHON39"), "/root/.pyenv/versions/3.9.18/bin/python3.9",
                      shutil.which("python3.9")):
        if candidate and _is_python39(candidate):
            found.append(candidate)
            break
    return found


def _is_python39(candidate: str) -> bool:
    try:
        result = subprocess.run([candidate, "-I", "-S", "-c", "import sys; print(sys.version_info[:2] == (3, 9))"],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return result.stdout.strip() == "True"


@pytest.fixture(scope="module")
def pyz(tmp_path_factory):
    path = tmp_path_factory.mktemp("pyz") / "npu-graph.pyz"
    write_zipapp(str(path))
    return path


def run_clean(python: str, pyz, *args: str, cache) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), "XDG_CACHE_HOME": str(cache), "HOME": str(cache), "LANG": "C.UTF-8"}
    return subprocess.run([python, "-I", "-S", str(pyz), *args], capture_output=True, text=True, env=env, timeout=120)


def test_the_clean_interpreter_really_has_no_pyyaml():
    result = subprocess.run([sys.executable, "-I", "-S", "-c", "import yaml"], capture_output=True, text=True)
    assert result.returncode != 0


@pytest.mark.parametrize("python", interpreters())
def test_the_zipapp_runs_with_only_the_standard_library(pyz, tmp_path, python):
    version = run_clean(python, pyz, "--version", cache=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"npu-graph-skill {__version__}"
    routed = run_clean(python, pyz, "route", "--json", "图模式比 Eager 慢", cache=tmp_path)  # reads YAML
    assert routed.returncode == 0, routed.stderr
    assert '"skill": "graph-performance-profiling"' in routed.stdout


def test_the_zipapp_lists_the_patterns(pyz, tmp_path):
    if importlib.util.find_spec("npu_graph_skill.diagnose.cli") is None:
        pytest.skip("npu-graph patterns is not built yet (npu_graph_skill.diagnose.cli)")
    result = run_clean(sys.executable, pyz, "patterns", "--json", cache=tmp_path)
    assert result.returncode == 0, result.stderr
    assert '"P-CAP-' in result.stdout


@pytest.mark.parametrize("python", interpreters())
def test_the_zipapp_diagnoses_a_traceback(pyz, tmp_path, python):
    if any(importlib.util.find_spec(m) is None for m in ("npu_graph_skill.diagnose.engine", "npu_graph_skill.diagnose.cli")):
        pytest.skip("npu-graph diagnose is not built yet (npu_graph_skill.diagnose.cli / engine)")
    error = tmp_path / "error.txt"
    error.write_text(TRACEBACK, encoding="utf-8")
    result = run_clean(python, pyz, "diagnose", str(error), "--json", cache=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert '"phase": "capture"' in result.stdout


def test_the_archive_holds_pure_python_only_and_builds_reproducibly(pyz):
    with zipfile.ZipFile(pyz) as archive:
        names = archive.namelist()
    assert "__main__.py" in names and "npu_graph_skill/cli.py" in names and "yaml/__init__.py" in names
    assert "npu_graph_skill/skill/routing.yaml" in names
    assert not [n for n in names if n.endswith((".so", ".pyd", ".pyc")) or "__pycache__" in n]
    assert pyz.read_bytes().startswith(b"#!/usr/bin/env python3\n")
    entries = collect_sources()  # the same sources always give the same bytes: reinstalling rewrites nothing
    assert build_zipapp(entries) == build_zipapp(dict(reversed(list(entries.items()))))


def test_an_unwritable_cache_falls_back_and_still_runs(pyz, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would go", encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "NPU_GRAPH_PYZ_CACHE": str(blocked / "sub"), "HOME": str(tmp_path),
           "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    result = subprocess.run([sys.executable, "-I", "-S", str(pyz), "--version"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
