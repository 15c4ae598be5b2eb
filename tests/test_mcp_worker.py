"""The worker process that runs file-reading MCP tools: a real deadline that kills the whole process
group, replies that stray prints cannot corrupt, crashes turned into one line. Standard library only."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from npu_graph_skill.mcp import worker
from npu_graph_skill.mcp.worker import WorkerError, run_in_worker

ERROR = ("RuntimeError: capture_begin:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:156 NPU function error: "
         "c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, capture_mode), error code is 207005")


def _fake_python(tmp_path, body: str) -> str:
    """An executable standing in for the interpreter, to make the child hang or die on purpose."""
    script = tmp_path / "fake-python"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (dead, not yet reaped by its adopter) counts as gone
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def test_a_real_call_returns_the_capability_json():
    reply = run_in_worker("diagnose", {"text": ERROR, "lang": "en"}, time_limit=60)
    assert reply["ok"] is True
    assert reply["result"]["phase"] == "capture" and reply["result"]["schema"].startswith("npu-graph-skill/diagnosis")


def test_a_user_error_comes_back_as_its_one_line_message():
    reply = run_in_worker("diagnose", {"text": "   \n"}, time_limit=60)
    assert reply == {"ok": False, "kind": "input", "message": reply["message"]}
    assert "empty" in reply["message"]


def test_the_time_limit_kills_the_child_and_everything_it_started(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    python = _fake_python(tmp_path, f"sleep 60 & echo $! > {pid_file}; wait")
    started = time.monotonic()
    with pytest.raises(WorkerError, match="--time-limit"):
        run_in_worker("diagnose", {"text": ERROR}, time_limit=1, python=python)
    assert time.monotonic() - started < 30
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the worker's own children must die with it"


def test_a_child_that_dies_gives_its_last_words(tmp_path):
    python = _fake_python(tmp_path, "echo 'Segmentation fault (core dumped)' >&2; exit 139")
    with pytest.raises(WorkerError, match="Segmentation fault"):
        run_in_worker("diagnose", {"text": ERROR}, time_limit=30, python=python)


def test_only_the_listed_api_functions_can_be_run():
    with pytest.raises(ValueError):
        run_in_worker("install_skill", {}, time_limit=5)
    assert worker.call("export_skill", {"out": "/tmp/x.zip"})["ok"] is False


def test_prints_of_a_capability_go_to_stderr_not_into_the_reply():
    code = ("import npu_graph_skill.api as api\n"
            "def noisy(**kwargs):\n"
            "    print('progress 50%')\n"
            "    os.system('echo from-a-subprocess')\n"
            "    return {'phase': 'capture'}\n"
            "import os\napi.diagnose = noisy\n"
            "from npu_graph_skill.mcp import worker\nraise SystemExit(worker.main())\n")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps({"function": "diagnose", "kwargs": {}}).encode(),
                          capture_output=True, timeout=60)
    assert json.loads(done.stdout) == {"ok": True, "result": {"phase": "capture"}}
    assert b"progress 50%" in done.stderr and b"from-a-subprocess" in done.stderr


def test_a_missing_capability_module_is_reported_as_not_installed(monkeypatch):
    import npu_graph_skill.api as api

    def missing(**_):
        raise ModuleNotFoundError("No module named 'npu_graph_skill.logs.analyze'", name="npu_graph_skill.logs.analyze")

    monkeypatch.setattr(api, "analyze_logs", missing)
    assert worker.call("analyze_logs", {"paths": ["x"]}) == {
        "ok": False, "kind": "missing", "message": "module npu_graph_skill.logs.analyze is missing"}


def test_an_unexpected_exception_is_one_line_with_its_class(monkeypatch, capsys):
    import npu_graph_skill.api as api

    monkeypatch.setattr(api, "perf_trace", lambda **_: {}["no-such-key"])
    reply = worker.call("perf_trace", {})
    assert reply["kind"] == "internal" and reply["message"].startswith("KeyError")
    assert "Traceback" in capsys.readouterr().err  # the details go to the server's log


def test_a_worker_whose_server_is_gone_still_stops_after_the_limit():
    """The server kills a late worker; if the server itself died, the worker's own alarm does it."""
    code = ("import time, npu_graph_skill.api as api\n"
            "api.diagnose = lambda **kwargs: time.sleep(30)\n"
            "from npu_graph_skill.mcp import worker\nraise SystemExit(worker.main())\n")
    request = json.dumps({"function": "diagnose", "kwargs": {}, "time_limit": 0.5}).encode()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], input=request, capture_output=True, timeout=60)
    assert done.returncode != 0 and done.stdout == b""
    assert time.monotonic() - started < 10
