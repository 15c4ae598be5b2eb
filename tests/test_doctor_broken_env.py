"""The doctor on a real broken environment: torch 2.13.0 (CPU wheel) + torch-npu 2.13.0, no CANN.

There `import torch` itself fails ("Failed to load the backend extension: torch_npu ...", the
cause being libhccl.so). `.ci/run` builds that venv in `.ci/broken-env`; point
NPU_GRAPH_BROKEN_PYTHON at another such interpreter to use it instead.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


def _broken_python() -> str:
    explicit = os.environ.get("NPU_GRAPH_BROKEN_PYTHON")
    if explicit:
        return explicit
    built = REPO / ".ci" / "broken-env"
    return str(built / "bin" / "python") if (built / ".complete").exists() else ""


BROKEN = _broken_python()
pytestmark = pytest.mark.skipif(
    not BROKEN, reason="no broken torch_npu venv: run .ci/run (it builds .ci/broken-env) or set NPU_GRAPH_BROKEN_PYTHON")


def _clean_env():
    """The environment of a shell where CANN was never sourced."""
    drop = ("ASCEND_", "LD_LIBRARY_PATH", "TORCH_DEVICE_BACKEND_AUTOLOAD", "TASK_QUEUE_ENABLE", "PYTORCH_NPU_ALLOC_CONF")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["NPU_GRAPH_LANG"] = "en"
    return env


def _doctor(*args):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "npu_graph_skill", "doctor", "--python", BROKEN, *args],
                          capture_output=True, text=True, env=_clean_env(), timeout=120)
    return proc, time.monotonic() - start


def test_plain_import_torch_really_fails_there():
    proc = subprocess.run([BROKEN, "-c", "import torch"], capture_output=True, text=True, env=_clean_env(), timeout=120)
    assert proc.returncode != 0
    assert "Failed to load the backend extension: torch_npu" in proc.stderr
    assert "libhccl.so" in proc.stderr


def test_doctor_names_the_missing_library_and_skips_what_depends_on_it():
    proc, seconds = _doctor("--json")
    assert seconds < 30, f"took {seconds:.1f} s"
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    checks = {c["id"]: c for c in report["checks"]}
    assert report["backend"] == "npu"
    assert checks["torch"]["status"] == "PASS"  # autoload disabled: torch itself is fine
    assert checks["torch"]["data"]["version"].startswith("2.13.0")
    assert "Failed to load the backend extension" in checks["torch"]["data"]["autoload_error"]
    assert checks["torch_npu_installed"]["status"] == "PASS"
    assert checks["torch_npu_installed"]["data"]["version"] == "2.13.0"
    imp = checks["torch_npu_import"]
    assert imp["status"] == "CRIT"
    assert imp["data"]["missing_library"] == "libhccl.so"
    assert "torch_npu 2.13.0 is installed but not importable: libhccl.so not found" in imp["summary"]["en"]
    assert any(r["command"].startswith("source ") and r["command"].split()[1].endswith("set_env.sh")
               for r in imp["remedy"])
    for later in ("devices", "graph_api", "capture"):
        assert checks[later]["status"] == "SKIP", later


def test_doctor_text_report_there():
    proc, _ = _doctor("--lang", "zh")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "[CRIT] torch_npu 导入" in proc.stdout and "libhccl.so" in proc.stdout
    assert "$ source " in proc.stdout


def test_env_block_there():
    proc = subprocess.run([sys.executable, "-m", "npu_graph_skill", "env", "--python", BROKEN],
                          capture_output=True, text=True, env=_clean_env(), timeout=120)
    assert proc.returncode == 0
    assert "torch_npu:        2.13.0" in proc.stdout
    assert "torch_npu import: FAILED: ImportError: libhccl.so" in proc.stdout
