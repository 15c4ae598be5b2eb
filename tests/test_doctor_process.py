"""The doctor's real processes: the command runner (timeouts, missing programs), the probe script
run in a child interpreter, the capture probe against a stand-in torch, and the two commands."""
from __future__ import annotations

import json
import os
import pathlib
import platform
import sys
import time

import pytest

from npu_graph_skill.doctor.commands import PROBE_SCRIPT, parse_probe_output, run_command
from npu_graph_skill.doctor.context import DoctorContext
from npu_graph_skill.doctor.runner import run_doctor

FAKE_TORCH = pathlib.Path(__file__).resolve().parent / "fake_torch"


def test_a_hanging_command_is_killed_at_its_timeout():
    start = time.monotonic()
    result = run_command([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1.0)
    assert result.timed_out and not result.ok
    assert time.monotonic() - start < 10
    assert result.describe_failure().startswith("timed out after")


def test_a_missing_program_is_a_result_not_an_exception(tmp_path):
    result = run_command([str(tmp_path / "npu-smi"), "info"], timeout=5)
    assert not result.ok and "command not found" in result.error


def test_a_crash_is_described_by_its_signal():
    result = run_command([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"], timeout=10)
    assert result.describe_failure() == "killed by SIGSEGV"


def test_info_probe_reads_the_interpreter_without_importing_torch():
    result = run_command([sys.executable, PROBE_SCRIPT, "info"], timeout=30)
    data = parse_probe_output(result.stdout)
    assert data["python"] == platform.python_version()
    assert data["executable"] == sys.executable
    assert "pyyaml" in data["packages"]  # a dependency of this project, so it is installed here


def test_import_probe_reports_the_exact_error(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        "raise ImportError('libtorch_cpu.so: cannot open shared object file: No such file or directory')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    result = run_command([sys.executable, PROBE_SCRIPT, "import", "--modules", "torch"], timeout=30, env=env)
    data = parse_probe_output(result.stdout)
    assert data["torch_error"]["type"] == "ImportError"
    assert "libtorch_cpu.so" in data["torch_error"]["message"]


def _fake_torch_env(**extra):
    env = dict(os.environ, PYTHONPATH=str(FAKE_TORCH), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    env.update(extra)
    return env


def test_capture_probe_captures_on_a_side_stream_and_checks_replay():
    """The stand-in torch refuses default-stream capture, as the real ones do: the probe passes."""
    result = run_command([sys.executable, PROBE_SCRIPT, "capture", "--backend", "cuda"], timeout=30, env=_fake_torch_env())
    data = parse_probe_output(result.stdout)
    assert [s["name"] for s in data["steps"]] == ["warm_up", "graph_context_manager", "replay_context_manager",
                                                  "manual_capture", "replay_manual"]
    assert all(s["ok"] for s in data["steps"]), data["steps"]
    assert data["steps"][1]["detail"] == {"capturing_inside": True}


def test_capture_probe_notices_a_replay_that_computes_nothing():
    result = run_command([sys.executable, PROBE_SCRIPT, "capture", "--backend", "cuda"], timeout=30,
                         env=_fake_torch_env(FAKE_TORCH_BREAK="stale"))
    steps = {s["name"]: s for s in parse_probe_output(result.stdout)["steps"]}
    assert steps["graph_context_manager"]["ok"] and not steps["replay_context_manager"]["ok"]
    assert "expected 7.0" in steps["replay_context_manager"]["error"]["message"]


def test_whole_cuda_doctor_against_the_stand_in_torch(tmp_path):
    """Real child processes end to end; only torch is a stand-in (and nvidia-smi is absent)."""
    env = _fake_torch_env(PATH=str(tmp_path))
    report = run_doctor(backend="cuda", python=sys.executable, environ=env, ascend_base=str(tmp_path))
    status = {c.id: c.status for c in report.checks}
    assert status["torch"] == "PASS" and status["graph_api"] == "PASS" and status["capture"] == "PASS", status
    assert status["device_health"] == "WARN"  # no nvidia-smi on PATH


# --- the commands ------------------------------------------------------------------------------

def test_doctor_json_on_this_machine(run_cli):
    code, out, err = run_cli("doctor", "--json", "--timeout", "60")
    data = json.loads(out)
    assert code == (1 if any(c["status"] in ("FAIL", "CRIT") for c in data["checks"]) else 0)
    assert data["schema"] == "npu-graph-skill/doctor/1"
    assert "Traceback" not in err


def test_doctor_text_in_chinese(run_cli):
    code, out, err = run_cli("doctor", "--lang", "zh", "--backend", "npu", "--timeout", "60")
    assert "结论" in out and "CANN 工具包" in out
    assert code in (0, 1) and "Traceback" not in err


def test_missing_interpreter_is_a_one_line_usage_error(run_cli, tmp_path):
    code, out, err = run_cli("doctor", "--python", str(tmp_path / "bin" / "python"))
    assert code == 2 and err.strip() == f"npu-graph: error: {tmp_path / 'bin' / 'python'}: no such interpreter"
    code, _, err = run_cli("env", "--python", str(tmp_path))
    assert code == 2 and "is a directory" in err


def test_bad_timeout_is_rejected(run_cli):
    with pytest.raises(SystemExit) as exc:
        run_cli("doctor", "--timeout", "0")
    assert exc.value.code == 2


def test_env_block_and_json(run_cli):
    code, out, _ = run_cli("env", "--no-import")
    assert code == 0
    for label in ("OS:", "Python:", "PyTorch:", "torch_npu:", "CANN toolkit:", "NPU driver:", "Devices:"):
        assert label in out
    code, out, _ = run_cli("env", "--json", "--no-import")
    data = json.loads(out)
    assert data["schema"] == "npu-graph-skill/env/1" and data["python_path"]


def test_env_redacts_secrets_and_keeps_graph_settings(tmp_path):
    from npu_graph_skill.doctor.envinfo import collect_env, pretty_str

    env = {"PATH": str(tmp_path), "TASK_QUEUE_ENABLE": "2", "ASCEND_RT_VISIBLE_DEVICES": "0,1",
           "HCCL_API_KEY": "s3cret", "UNRELATED": "x"}
    info = collect_env(python=sys.executable, environ=env, ascend_base=str(tmp_path), import_check=False)
    text = pretty_str(info)
    assert "TASK_QUEUE_ENABLE=2" in text and "ASCEND_RT_VISIBLE_DEVICES=0,1" in text
    assert "s3cret" not in text and "HCCL_API_KEY=<redacted>" in text and "UNRELATED" not in text
    assert "CANN toolkit:     Could not collect" in text


def test_env_reports_an_import_failure_in_one_line(tmp_path):
    from npu_graph_skill.doctor.envinfo import get_import

    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("__version__ = '2.13.0'\n")
    (tmp_path / "torch_npu").mkdir()
    (tmp_path / "torch_npu" / "__init__.py").write_text(
        "raise ImportError('libhccl.so: cannot open shared object file: No such file or directory')\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)}
    status = get_import(DoctorContext(backend="npu", python=sys.executable, environ=env))["status"]
    assert status == "FAILED: ImportError: libhccl.so: cannot open shared object file: No such file or directory"
