"""The doctor's checks on both sides — a healthy machine and each way it breaks — with doubles
for the child processes and a fake Ascend install on disk."""
from __future__ import annotations

import dataclasses
import json

import pytest
from doctor_doubles import (FakeRunner, error, fake_ascend, fake_torch_npu, healthy_cuda_answers,
                            healthy_npu_answers, ok)

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.doctor.commands import CommandResult
from npu_graph_skill.doctor.render import render_text
from npu_graph_skill.doctor.runner import run_doctor


@pytest.fixture
def npu_machine(tmp_path):
    """(environ, answers, ascend_base) of a healthy Ascend server; tests break one thing each."""
    environ = fake_ascend(tmp_path)
    answers = healthy_npu_answers(fake_torch_npu(tmp_path))
    return environ, answers, str(tmp_path / "Ascend")


def doctor(machine, backend="npu", **env_changes):
    environ, answers, base = machine
    environ = dict(environ)
    for key, value in env_changes.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    runner = FakeRunner(answers)
    report = run_doctor(backend=backend, python="/opt/venv/bin/python", environ=environ, runner=runner,
                        ascend_base=base)
    return report, runner


def statuses(report):
    return {c.id: c.status for c in report.checks}


# --- the healthy side --------------------------------------------------------------------------

def test_healthy_npu_machine_passes_every_check_in_dependency_order(npu_machine):
    report, runner = doctor(npu_machine)
    assert statuses(report) == {
        "python": "PASS", "cann": "PASS", "driver": "PASS", "torch": "PASS", "torch_npu_installed": "PASS",
        "torch_npu_import": "PASS", "versions": "PASS", "devices": "PASS", "graph_api": "PASS",
        "capture_settings": "PASS", "log_vars": "PASS", "capture": "PASS", "device_health": "PASS"}
    assert report.exit_code == 0
    assert "Ready for graph mode" in report.verdict["en"]
    assert report.check("cann").summary["en"].startswith("CANN 9.1.0")
    assert "2.7.1.post8" in report.check("versions").summary["en"]
    assert "2 chip(s) healthy" in report.check("device_health").summary["en"]


def test_probes_run_in_child_processes_with_autoload_off(npu_machine):
    _, runner = doctor(npu_machine)
    for argv, env in zip(runner.calls, runner.envs):
        if argv[1:2] and argv[1].endswith("probe.py"):
            assert argv[0] == "/opt/venv/bin/python"
            assert env.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0" or runner.key(argv, env).endswith(":autoload")
    # the same torch import is not repeated: probes are cached
    assert runner.probes().count("import:torch") == 1


def test_json_report_is_stable_and_bilingual(npu_machine):
    report, _ = doctor(npu_machine)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["schema"] == "npu-graph-skill/doctor/1"
    assert data["backend"] == "npu" and data["counts"]["PASS"] == 13
    first = data["checks"][0]
    assert set(first) >= {"id", "title", "status", "summary", "evidence", "remedy", "anchors", "depends_on", "data"}
    assert set(first["summary"]) == {"en", "zh"}


def test_text_report_in_chinese_and_english(npu_machine):
    report, _ = doctor(npu_machine, TASK_QUEUE_ENABLE="2")
    zh = render_text(report, lang="zh")
    en = render_text(report, lang="en")
    assert "[CRIT] 破坏捕获的设置" in zh and "结论" in zh
    assert "[CRIT] Settings that break capture" in en
    assert "$ export TASK_QUEUE_ENABLE=1" in en
    assert "NPUGraph.cpp:242-247" in en  # the source of a CRIT is always shown


# --- python / torch ----------------------------------------------------------------------------

def test_interpreter_that_cannot_run_is_crit_and_dependants_skip(npu_machine):
    npu_machine[1]["info"] = CommandResult(argv=[], error="/opt/venv/bin/python: command not found")
    report, _ = doctor(npu_machine)
    assert report.check("python").status == "CRIT"
    assert report.check("torch").status == "SKIP"
    assert report.check("torch").summary["en"] == "skipped: depends on python (CRIT)"
    assert report.check("torch_npu_import").status == "SKIP"


def test_torch_import_failure_is_crit(npu_machine):
    npu_machine[1]["import:torch"] = {"torch_error": error("ImportError", "libtorch_cpu.so: undefined symbol: foo")}
    report, _ = doctor(npu_machine)
    assert report.check("torch").status == "CRIT"
    assert "undefined symbol" in report.check("torch").summary["en"]
    assert report.check("torch_npu_import").status == "SKIP"


def test_torch_fine_while_autoload_breaks_import_torch(npu_machine):
    npu_machine[1]["import:torch:autoload"] = {"torch_error": error(
        "RuntimeError", "Failed to load the backend extension: torch_npu. You can disable extension auto-loading "
        "with TORCH_DEVICE_BACKEND_AUTOLOAD=0.")}
    report, _ = doctor(npu_machine)
    torch = report.check("torch")
    assert torch.status == "PASS"
    assert "fails only because torch_npu fails to load" in torch.summary["en"]
    assert any("Failed to load the backend extension" in e for e in torch.evidence)


# --- CANN, driver ------------------------------------------------------------------------------

def test_cann_missing_is_fail_with_install_remedy(npu_machine):
    report, _ = doctor(npu_machine, ASCEND_HOME_PATH=None, ASCEND_TOOLKIT_HOME=None)
    # the fake toolkit is still found at the default location, but not sourced
    cann = report.check("cann")
    assert cann.status == "FAIL" and "not sourced" in cann.summary["en"]
    assert cann.remedy[0].command.endswith("ascend-toolkit/set_env.sh")


def test_no_cann_anywhere(tmp_path):
    answers = healthy_npu_answers(fake_torch_npu(tmp_path))
    report = run_doctor(backend="npu", python="py", environ={"HOME": str(tmp_path)}, runner=FakeRunner(answers),
                        ascend_base=str(tmp_path / "nothing"))
    cann = report.check("cann")
    assert cann.status == "FAIL" and cann.summary["en"] == "no CANN toolkit found"
    assert any("looked in" in e for e in cann.evidence)
    assert report.check("driver").status == "FAIL"
    assert report.check("device_health").status == "SKIP"


def test_cann_version_unreadable_warns(npu_machine, tmp_path):
    info = tmp_path / "Ascend" / "ascend-toolkit" / "latest" / "x86_64-linux" / "ascend_toolkit_install.info"
    info.write_text("package_name=Ascend-cann-toolkit\n")
    report, _ = doctor(npu_machine)
    assert report.check("cann").status == "WARN"


def test_cann_lib64_not_on_loader_path_warns(npu_machine):
    report, _ = doctor(npu_machine, LD_LIBRARY_PATH="/usr/lib")
    assert report.check("cann").status == "WARN"
    assert "LD_LIBRARY_PATH" in report.check("cann").summary["en"]


def test_firmware_outside_driver_range_warns(tmp_path):
    environ = fake_ascend(tmp_path, firmware="7.8.0.1.100", fw_range="[7.0.0,7.7.99]")
    answers = healthy_npu_answers(fake_torch_npu(tmp_path))
    report = run_doctor(backend="npu", python="py", environ=environ, runner=FakeRunner(answers),
                        ascend_base=str(tmp_path / "Ascend"))
    assert report.check("driver").status == "WARN"
    assert "7.8.0.1.100" in report.check("driver").summary["en"]


# --- torch_npu ---------------------------------------------------------------------------------

def test_torch_npu_not_installed_names_the_matching_release(npu_machine):
    del npu_machine[1]["info"]["packages"]["torch-npu"]
    del npu_machine[1]["info"]["locations"]["torch_npu"]
    report, _ = doctor(npu_machine)
    installed = report.check("torch_npu_installed")
    assert installed.status == "CRIT"
    assert installed.remedy[0].command == "pip install torch-npu==2.7.1.post8"  # first row for torch 2.7.1
    assert report.check("torch_npu_import").status == "SKIP"


def test_missing_cann_library_is_crit_with_set_env_remedy(npu_machine, tmp_path):
    npu_machine[1]["import:torch,torch_npu"] = {"torch": "2.7.1", "torch_npu_error": error(
        "ImportError", "libhccl.so: cannot open shared object file: No such file or directory")}
    report, _ = doctor(npu_machine, ASCEND_HOME_PATH=None, ASCEND_TOOLKIT_HOME=None)
    check = report.check("torch_npu_import")
    assert check.status == "CRIT"
    assert "libhccl.so not found" in check.summary["en"] and "environment is not set" in check.summary["en"]
    set_env = str(tmp_path / "Ascend" / "ascend-toolkit" / "set_env.sh")
    assert check.remedy[-1].command == f"source {set_env}"
    assert check.data["missing_library"] == "libhccl.so"
    assert any("faq.md:232-250" in a for a in check.anchors)
    for dependant in ("devices", "graph_api", "capture"):
        assert report.check(dependant).status == "SKIP"
    assert report.exit_code == 1


def test_missing_driver_library_points_at_the_driver(npu_machine):
    npu_machine[1]["import:torch,torch_npu"] = {"torch_npu_error": error(
        "ImportError", "libascend_hal.so: cannot open shared object file: No such file or directory")}
    report, _ = doctor(npu_machine)
    assert "NPU driver library" in report.check("torch_npu_import").summary["en"]


def test_undefined_symbol_means_torch_mismatch(npu_machine):
    npu_machine[1]["import:torch,torch_npu"] = {"torch_npu_error": error(
        "ImportError", "torch_npu/_C.cpython-311.so: undefined symbol: _ZN3c106detail14torchCheckFail")}
    report, _ = doctor(npu_machine)
    assert "built for another torch" in report.check("torch_npu_import").summary["en"]


def test_source_tree_shadowing_torch_npu(npu_machine):
    npu_machine[1]["info"]["cwd_shadows_torch_npu"] = True
    npu_machine[1]["import:torch,torch_npu"] = {"torch_npu_error": error(
        "ModuleNotFoundError", "No module named 'torch_npu._C'")}
    report, _ = doctor(npu_machine)
    check = report.check("torch_npu_import")
    assert "source folder" in check.summary["en"] and any("faq.md:273-301" in a for a in check.anchors)


@pytest.mark.parametrize("result, words", [
    (CommandResult(argv=[], timed_out=True, seconds=120.0, returncode=-9), "timed out after 120 s"),
    (CommandResult(argv=[], returncode=-11, stderr="Fatal Python error: Segmentation fault\n"), "killed by SIGSEGV"),
])
def test_import_that_hangs_or_crashes_becomes_a_finding(npu_machine, result, words):
    npu_machine[1]["import:torch,torch_npu"] = result
    report, _ = doctor(npu_machine)
    check = report.check("torch_npu_import")
    assert check.status == "CRIT" and words in check.summary["en"]


# --- versions ----------------------------------------------------------------------------------

def test_torch_that_does_not_match_torch_npu_fails(npu_machine):
    npu_machine[1]["import:torch"] = {"torch": "2.8.0"}
    report, _ = doctor(npu_machine)
    check = report.check("versions")
    assert check.status == "FAIL"
    assert check.remedy[0].command == "pip install torch==2.7.1"
    assert any("COMPATIBILITY.en.md" in a for a in check.anchors)


def test_cann_other_than_the_release_pairing_warns(tmp_path):
    environ = fake_ascend(tmp_path, cann="8.3.RC1")
    answers = healthy_npu_answers(fake_torch_npu(tmp_path))
    report = run_doctor(backend="npu", python="py", environ=environ, runner=FakeRunner(answers),
                        ascend_base=str(tmp_path / "Ascend"))
    check = report.check("versions")
    assert check.status == "WARN" and "differs from the CANN 9.1.0" in check.summary["en"]


def test_torch_npu_newer_than_the_table_warns(npu_machine):
    npu_machine[1]["info"]["packages"].update({"torch": "2.13.0", "torch-npu": "2.13.0"})
    npu_machine[1]["import:torch"] = {"torch": "2.13.0+cpu"}
    report, _ = doctor(npu_machine)
    check = report.check("versions")
    assert check.status == "WARN" and "not in the official table" in check.summary["en"]


def test_python_not_listed_for_torch_warns(npu_machine):
    npu_machine[1]["info"]["python"] = "3.9.18"  # torch 2.9.0 lists 3.10-3.13
    npu_machine[1]["info"]["packages"].update({"torch": "2.9.0", "torch-npu": "2.9.0.post6"})
    npu_machine[1]["import:torch"] = {"torch": "2.9.0"}
    report, _ = doctor(npu_machine)
    assert "Python 3.9.18 is not listed for PyTorch 2.9.0" in report.check("versions").summary["en"]


# --- devices, graph API, capture ---------------------------------------------------------------

def test_no_device_is_crit_and_capture_skips(npu_machine):
    npu_machine[1]["devices"] = {"available": False, "count": 0, "devices": []}
    report, _ = doctor(npu_machine, ASCEND_RT_VISIBLE_DEVICES="")
    assert report.check("devices").status == "CRIT"
    assert "ASCEND_RT_VISIBLE_DEVICES=" in report.check("devices").evidence
    assert report.check("capture").status == "SKIP"


def test_torch_npu_without_npugraph_is_crit(npu_machine):
    npu_machine[1]["graph_api"]["api"]["NPUGraph"] = False
    report, _ = doctor(npu_machine)
    assert report.check("graph_api").status == "CRIT" and "NPUGraph" in report.check("graph_api").summary["en"]


def test_cann_without_aclmdlri_symbols_is_crit(npu_machine):
    npu_machine[1]["graph_api"]["acl_symbols"]["aclmdlRICaptureBegin"] = False
    report, _ = doctor(npu_machine)
    check = report.check("graph_api")
    assert check.status == "CRIT" and any("AclInterface.cpp:1068-1076" in a for a in check.anchors)


@pytest.mark.parametrize("soc, status", [("Ascend910A", "CRIT"), ("Ascend310B1", "CRIT"), ("Ascend910_9391", "PASS"),
                                         ("Ascend310P3", "PASS"), ("Ascend950", "PASS")])
def test_soc_without_capture_support(npu_machine, soc, status):
    npu_machine[1]["graph_api"]["soc"] = soc
    report, _ = doctor(npu_machine)
    assert report.check("graph_api").status == status


def test_missing_optional_graph_api_warns(npu_machine):
    npu_machine[1]["graph_api"]["api"]["graph_task_group_begin"] = False
    report, _ = doctor(npu_machine)
    assert report.check("graph_api").status == "WARN"


def test_capture_failure_is_crit_with_the_error(npu_machine):
    steps = npu_machine[1]["capture"]["steps"]
    steps[1] = {"name": "graph_context_manager", "ok": False, "error": error(
        "RuntimeError", "Do not support TASK_QUEUE_ENABLE = 2 during NPU graph capture, please export TASK_QUEUE_ENABLE=1/0.")}
    del steps[2]
    report, _ = doctor(npu_machine)
    check = report.check("capture")
    assert check.status == "CRIT"
    assert "graph_context_manager" in check.summary["en"] and "TASK_QUEUE_ENABLE = 2" in check.summary["en"]
    assert "capture/replay self-test fails" in report.verdict["en"]


def test_wrong_replay_result_is_crit(npu_machine):
    npu_machine[1]["capture"]["steps"][4] = {"name": "replay_manual", "ok": False,
                                             "error": error("AssertionError", "replayed result [5.0] != expected 15.0")}
    report, _ = doctor(npu_machine)
    assert "replay_manual" in report.check("capture").summary["en"]


def test_capture_that_hangs_is_killed_and_reported(npu_machine):
    npu_machine[1]["capture"] = CommandResult(argv=[], timed_out=True, seconds=180, returncode=-9)
    report, _ = doctor(npu_machine)
    assert report.check("capture").status == "CRIT"
    assert "timed out" in report.check("capture").summary["en"]


# --- settings that break capture ---------------------------------------------------------------

def test_task_queue_2_is_crit(npu_machine):
    report, _ = doctor(npu_machine, TASK_QUEUE_ENABLE="2")
    check = report.check("capture_settings")
    assert check.status == "CRIT" and check.remedy[0].command == "export TASK_QUEUE_ENABLE=1"
    assert any("NPUGraph.cpp:242-247" in a for a in check.anchors)


def test_invalid_task_queue_value_fails(npu_machine):
    report, _ = doctor(npu_machine, TASK_QUEUE_ENABLE="3")
    assert report.check("capture_settings").status == "FAIL"


def test_pin_memory_expandable_segments_is_crit(npu_machine):
    report, _ = doctor(npu_machine, PYTORCH_NPU_ALLOC_CONF="expandable_segments:True,pin_memory_expandable_segments:True")
    check = report.check("capture_settings")
    assert check.status == "CRIT"
    assert check.remedy[0].command == "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"
    assert any("NPUGraph.cpp:249-258" in a for a in check.anchors)


def test_expandable_segments_alone_is_fine(npu_machine):
    report, _ = doctor(npu_machine, PYTORCH_NPU_ALLOC_CONF="expandable_segments:True")
    assert report.check("capture_settings").status == "PASS"


def test_launch_blocking_is_crit_before_the_7_3_0_line(npu_machine):
    npu_machine[1]["info"]["packages"].update({"torch": "2.8.0", "torch-npu": "2.8.0"})  # v2.8.0-7.2.0
    report, _ = doctor(npu_machine, ASCEND_LAUNCH_BLOCKING="1")
    check = report.check("capture_settings")
    assert check.status == "CRIT" and any("OpCommand.cpp:165-167@v2.8.0-7.2.0" in a for a in check.anchors)


def test_launch_blocking_only_warns_where_capture_skips_the_sync(npu_machine):
    report, _ = doctor(npu_machine, ASCEND_LAUNCH_BLOCKING="1")  # 2.7.1.post8 = v2.7.1-26.1.0
    check = report.check("capture_settings")
    assert check.status == "WARN" and "every replay synchronizes" in check.summary["en"]


# --- logging variables -------------------------------------------------------------------------

def test_nonexistent_graphs_log_level_variable_warns(npu_machine):
    report, _ = doctor(npu_machine, TORCH_NPU_GRAPHS_LOG_LEVEL="DEBUG")
    check = report.check("log_vars")
    assert check.status == "WARN" and "does not exist" in check.summary["en"]
    assert any(r.command == "export TORCH_NPU_LOGS=+aclgraph,cudagraphs" for r in check.remedy)


def test_aclgraph_alias_missing_from_old_torch_npu(npu_machine, tmp_path):
    npu_machine[1]["info"]["locations"]["torch_npu"] = fake_torch_npu(tmp_path / "old", aliases=())
    report, _ = doctor(npu_machine, TORCH_NPU_LOGS="+aclgraph")
    check = report.check("log_vars")
    assert check.status == "WARN" and "Invalid log settings" in check.summary["en"]
    assert any(r.command == "export TORCH_NPU_LOGS=cudagraphs" for r in check.remedy)


def test_torch_logs_ignored_when_torch_npu_logs_set(npu_machine):
    report, _ = doctor(npu_machine, TORCH_NPU_LOGS="+aclgraph", TORCH_LOGS="+dynamo")
    assert "TORCH_LOGS is ignored" in report.check("log_vars").summary["en"]


def test_global_log_level_out_of_range_fails(npu_machine):
    report, _ = doctor(npu_machine, ASCEND_GLOBAL_LOG_LEVEL="debug")
    assert report.check("log_vars").status == "FAIL"


# --- npu-smi -----------------------------------------------------------------------------------

def test_unhealthy_chip_fails(npu_machine):
    npu_machine[1]["npu-smi"] = CommandResult(argv=[], returncode=0, stdout=npu_machine[1]["npu-smi"].stdout.replace(
        "| 1     910B3               | OK ", "| 1     910B3               | Alarm"))
    report, _ = doctor(npu_machine)
    assert report.check("device_health").status == "FAIL"
    assert "health Alarm" in report.check("device_health").summary["en"]


def test_device_memory_held_by_another_process_warns(npu_machine):
    text = npu_machine[1]["npu-smi"].stdout.replace("3390 / 65536", "63000 / 65536").replace(
        "| No running processes found in NPU 0                                                            |",
        "| 0       0                 | 4242          | python                   | 59000                   |")
    npu_machine[1]["npu-smi"] = CommandResult(argv=[], returncode=0, stdout=text)
    report, _ = doctor(npu_machine)
    check = report.check("device_health")
    assert check.status == "WARN" and "over 90% memory" in check.summary["en"]
    assert any("pid 4242 python holds 59000 MB" in e for e in check.evidence)


def test_npu_smi_failure_fails(npu_machine):
    npu_machine[1]["npu-smi"] = CommandResult(argv=[], returncode=255, stdout="dcmi module initialize failed. ret is -8005\n")
    report, _ = doctor(npu_machine)
    check = report.check("device_health")
    assert check.status == "FAIL" and "-8005" in check.summary["en"]


def test_npu_smi_absent_warns(npu_machine):
    report, _ = doctor(npu_machine, PATH="/usr/bin:/bin")
    if report.check("device_health").status != "WARN":  # a real npu-smi on this machine
        pytest.skip("npu-smi installed here")
    assert "npu-smi not found" in report.check("device_health").summary["en"]


# --- backends ----------------------------------------------------------------------------------

def test_healthy_cuda_machine(tmp_path):
    runner = FakeRunner(healthy_cuda_answers())
    report = run_doctor(backend="cuda", python="py", environ={"PATH": "/usr/bin"}, runner=runner,
                        ascend_base=str(tmp_path))
    assert [c.id for c in report.checks] == ["python", "torch", "devices", "graph_api", "log_vars", "capture",
                                             "device_health"]
    assert all(c.status == "PASS" for c in report.checks), statuses(report)
    assert "--backend" in runner.calls[-2] and "cuda" in runner.calls[-2]  # the capture probe ran for cuda


def test_cuda_backend_with_a_cpu_torch_fails(tmp_path):
    answers = healthy_cuda_answers()
    answers["import:torch"] = {"torch": "2.13.0+cpu", "torch_cuda": None}
    report = run_doctor(backend="cuda", python="py", environ={}, runner=FakeRunner(answers), ascend_base=str(tmp_path))
    assert report.check("torch").status == "FAIL" and "CPU build" in report.check("torch").summary["en"]
    assert report.check("capture").status == "SKIP"


def test_auto_picks_npu_then_cuda_then_none(tmp_path, npu_machine):
    report, _ = doctor(npu_machine, backend="auto")
    assert report.backend == "npu" and "torch-npu 2.7.1.post8" in report.notes[0]["en"]
    cuda = run_doctor(python="py", environ={}, runner=FakeRunner(healthy_cuda_answers()), ascend_base=str(tmp_path))
    assert cuda.backend == "cuda"
    answers = healthy_cuda_answers()
    answers["import:torch"] = {"torch": "2.13.0+cpu", "torch_cuda": None}
    none = run_doctor(python="py", environ={}, runner=FakeRunner(answers), ascend_base=str(tmp_path))
    assert none.backend == "none" and none.check("backend").status == "FAIL" and none.exit_code == 1


def test_bad_backend_is_a_user_error():
    with pytest.raises(UserError):
        run_doctor(backend="tpu", runner=FakeRunner({}))


def test_a_bug_in_one_check_does_not_stop_the_others(npu_machine, monkeypatch):
    from npu_graph_skill.doctor import checks

    def broken(ctx):
        raise KeyError("surprise")

    specs = tuple(dataclasses.replace(s, func=broken) if s.id == "log_vars" else s for s in checks.CHECKS)
    monkeypatch.setattr(checks, "CHECKS", specs)
    report, _ = doctor(npu_machine)
    assert report.check("log_vars").status == "FAIL" and "KeyError" in report.check("log_vars").summary["en"]
    assert report.check("capture").status == "PASS"


def test_probe_answer_parsing_tolerates_noise():
    from npu_graph_skill.doctor.commands import parse_probe_output

    assert parse_probe_output(ok({"a": 1}).stdout) == {"a": 1}
    assert parse_probe_output("no mark here\n") is None
    assert parse_probe_output("@@npu-graph-probe@@{not json\n") is None
