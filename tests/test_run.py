"""`npu-graph run -- CMD` and `npu-graph bundle DIR` with real child processes: a failing torch_npu run
with its plog, four ranks where rank 2 fails first, Ctrl-C reaching every process of the job, a flood
of output, a job that hangs after its error, the user's own variables, commands a shell would refuse,
a terminal, graph vs eager, and the bundle afterwards.

The children are small Python programs (tests/run_scripts.py) that print real texts from
../shared/data and write plogs the way CANN names and formats them.
"""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import tarfile
import time

import pytest

import run_scripts as rs
from npu_graph_skill import api
from npu_graph_skill.core.errors import UserError
from npu_graph_skill.run import session, switches
from npu_graph_skill.run.record import OutputRecorder
from npu_graph_skill.run.watch import first_decisive_line

pytestmark = pytest.mark.skipif(os.name != "posix", reason="npu-graph run is POSIX-only")


def npu_graph(*args, cwd, env=None, timeout=60, stdout=subprocess.PIPE):
    """The real command line, in a child of its own (a process group of its own, like a shell's job)."""
    return subprocess.run([sys.executable, "-m", "npu_graph_skill", *args], cwd=cwd, env=env, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=timeout, start_new_session=True)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "ASCEND_", "NPU_GRAPH_"))}
    env.update(NPU_GRAPH_LANG="en", NO_COLOR="1", **extra)
    return env


def only_folder(cwd: pathlib.Path) -> pathlib.Path:
    folders = [p for p in cwd.iterdir() if p.is_dir() and p.name.startswith("npu-graph-run-")]
    assert len(folders) == 1, folders
    return folders[0]


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (orphans are reaped by init, whenever it gets to it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def quiet_fds(tmp_path):
    """In-process runs write the child's output here instead of the test's own stdout/stderr."""
    out = os.open(tmp_path / "passed-out.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = os.open(tmp_path / "passed-err.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    return out, err


# --- a failing run -------------------------------------------------------------------------------

def test_a_failing_run_is_diagnosed_with_its_plog_and_packed(tmp_path, shared_data):
    worker = rs.write(tmp_path, "worker.py", rs.WORKER)
    spec = rs.spec(tmp_path, "capture.json", **rs.specs_capture_copy(shared_data))
    done = npu_graph("run", "--", sys.executable, worker, spec, cwd=tmp_path, env=clean_env())
    err = done.stderr.decode()
    assert done.returncode == 1, err
    # the child's own lines pass through unchanged, then the report, then what was written
    assert "NPU function error: aclrtMemcpy, error code is 107030" in err
    assert "[1] Overview" in err and "P-CAP-002" in err and "npu-graph run: wrote" in err
    folder = only_folder(tmp_path)
    record = (folder / "output.log").read_text()
    assert "error code is 107030" in record and "NPUGRAPH Capture begin" in record
    plogs = list((folder / "ascend_log" / "debug" / "plog").glob("plog-*_*.log"))
    assert len(plogs) == 1 and "rtMemcpy:ErrCode=107030" in plogs[0].read_text()
    diagnosis = json.loads((folder / "diagnosis.json").read_text())
    assert diagnosis["phase"] == "capture" and diagnosis["candidates"][0]["id"] == "P-CAP-002"
    assert not any("plog" in m["what"] for m in diagnosis["missing"])  # the bundle has it
    assert not any("version" in m["what"] for m in diagnosis["missing"])  # env.txt has them
    assert (folder / "diagnosis.md").read_text().startswith("# NPU graph-mode diagnosis")
    assert "npu-graph env" in (folder / "env.txt").read_text()
    assert "ASCEND_PROCESS_LOG_PATH=" in (folder / "command.txt").read_text()
    manifest = json.loads((folder / "run.json").read_text())
    assert manifest["status"] == "failed" and manifest["exit_status"] == 1 and manifest["diagnosis"] == "diagnosis.json"
    assert {s["name"]: s["action"] for s in manifest["switches"]}["ASCEND_PROCESS_LOG_PATH"] == "set"
    archive = pathlib.Path(str(folder) + ".tar.gz")
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        assert f"{folder.name}/output.log" in names and f"{folder.name}/redaction.json" in names
        assert any(n.startswith(f"{folder.name}/ascend_log/debug/plog/plog-") for n in names)


def test_four_ranks_rank_two_fails_first(tmp_path, shared_data):
    worker = rs.write(tmp_path, "worker.py", rs.WORKER)
    launcher = rs.write(tmp_path, "launcher.py", rs.LAUNCHER)
    timeouts = rs.plog_template(rs.sample_plog(shared_data, "plog-114654_20250619092834191.log"))
    specs = []
    for rank in range(4):
        if rank == 2:
            fields = rs.specs_capture_copy(shared_data)
        else:  # the others wait for rank 2, then report the link timeouts HCCL gives them
            fields = {"stderr": [rs.capture_begin_line()], "plog": timeouts, "delay": 0.4}
        specs.append(rs.spec(tmp_path, f"rank{rank}.json", **fields))
    done = npu_graph("run", "--json", "--", sys.executable, launcher, worker, *specs, cwd=tmp_path, env=clean_env())
    assert done.returncode == 1, done.stderr.decode()
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert result["schema"] == "npu-graph-skill/run/1" and result["exit_status"] == 1
    assert len(result["plogs"]) == 4
    failure = result["first_failure"]
    assert failure["rank"] == 2 and "107030" in failure["text"]
    assert failure["consequence_ranks"] == [0, 1, 3]
    assert result["diagnosis"]["phase"] == "capture"
    assert "First failure across ranks: rank 2" not in done.stderr.decode()  # --json: the report is the JSON


def test_sigint_reaches_every_process_of_the_job_and_none_is_left(tmp_path):
    script = rs.write(tmp_path, "signalled.py", rs.SIGNALLED)
    log, ready = tmp_path / "got.txt", tmp_path / "ready.txt"
    wrapper = subprocess.Popen([sys.executable, "-m", "npu_graph_skill", "run", "--kill-after", "0.5", "--json", "--",
                                sys.executable, script, str(log), str(ready), "1"], cwd=tmp_path, env=clean_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not ready.exists() or len(ready.read_text().split()) < 4):
        time.sleep(0.05)
    pids = [int(p) for p in ready.read_text().split()]
    assert len(pids) == 4, "the launcher and its 3 workers did not start"
    wrapper.send_signal(signal.SIGINT)  # what a Ctrl-C on the terminal does to the wrapper
    out, err = wrapper.communicate(timeout=30)
    assert wrapper.returncode == 130, err.decode()  # the launcher's own status
    got = {int(line.split()[0]) for line in log.read_text().split("\n") if line}
    stubborn = set(pids) - got
    assert len(got) == 3 and len(stubborn) == 1  # the launcher and two workers handled it; one ignores SIGINT
    assert not [pid for pid in pids if alive(pid)]
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["ended_by"] == "interrupted" and result["forwarded"] == ["SIGINT"]
    assert [p["pid"] for p in result["killed"]] == sorted(stubborn)
    assert "forwarded SIGINT to the job" in err.decode()


def test_a_flood_of_output_passes_through_and_is_recorded_head_and_tail(tmp_path):
    child = rs.write(tmp_path, "flood.py", "import sys\nw = sys.stdout.write\n"
                                          "for i in range(40000):\n    w('line %06d ' % i + 'x' * 60 + '\\n')\n")
    expected = b"".join(b"line %06d " % i + b"x" * 60 + b"\n" for i in range(40000))
    with open(tmp_path / "passed.txt", "wb") as passed:
        done = npu_graph("run", "--keep", "--max-output-mb", "0.5", "--", sys.executable, child, cwd=tmp_path,
                         env=clean_env(), stdout=passed)
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "passed.txt").read_bytes() == expected  # every byte reached our stdout, unchanged
    folder = only_folder(tmp_path)
    record = (folder / "output.log").read_bytes()
    limit = int(0.5 * 1024 * 1024)
    assert record.startswith(b"line 000000 ") and record.endswith(b"line 039999 " + b"x" * 60 + b"\n")
    assert limit - 200 <= len(record) <= limit + 300
    note = [line for line in record.split(b"\n") if line.startswith(b"[npu-graph run]")]
    assert len(note) == 1 and b"of output dropped here" in note[0]
    output = json.loads((folder / "run.json").read_text())["output"]
    assert output["bytes"] == len(expected) and output["lines"] == 40000
    kept_lines = record.count(b"\n") - 2  # the note adds a line and a blank line before it
    assert output["dropped_lines"] + kept_lines == 40000
    assert "dropped between the head and the tail" in done.stderr.decode()


def test_a_job_that_hangs_after_a_decisive_error_is_stopped_and_diagnosed(tmp_path, shared_data):
    worker = rs.write(tmp_path, "worker.py", rs.WORKER)
    fields = rs.specs_capture_copy(shared_data)
    spec = rs.spec(tmp_path, "hang.json", stdout=["step 1"], stderr=fields["stderr"], plog=fields["plog"], hang=120)
    started = time.monotonic()
    done = npu_graph("run", "--json", "--hang-timeout", "1", "--kill-after", "1", "--", sys.executable, worker, spec,
                     cwd=tmp_path, env=clean_env())
    assert time.monotonic() - started < 20
    assert done.returncode == 128 + signal.SIGTERM
    result = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert result["ended_by"] == "hang" and "107030" in result["decisive_live"]
    assert result["diagnosis"]["candidates"][0]["id"] == "P-CAP-002"
    assert "no output for 1 s after a decisive error" in done.stderr.decode()


def test_no_hang_is_declared_without_a_decisive_error(tmp_path, shared_data):
    """A quiet job whose output holds only consequences (HCCL timeouts) and benign errors runs to its end."""
    worker = rs.write(tmp_path, "worker.py", rs.WORKER)
    quiet = ["torch_npu.memory: [ERROR] [269128] Get a block from the existing pool failed. Try to free cached blocks "
             "and reallocate. This error log can be ignored."]  # formats.md §1.3, Ascend/pytorch#108
    quiet += rs.sample_plog(shared_data, "plog-114654_20250619092834191.log")[:1]
    spec = rs.spec(tmp_path, "quiet.json", stderr=quiet, hang=1.5, exit=0)
    out, err = quiet_fds(tmp_path)
    result = api.run_command([sys.executable, worker, spec], directory=str(tmp_path), hang_timeout=0.5, kill_after=1,
                             stdout_fd=out, stderr_fd=err, collect_env=False, environ=clean_env())
    assert result.ended_by == "exit" and result.exit_status == 0 and result.duration_s >= 1.5


# --- the environment ----------------------------------------------------------------------------

def fake_site(root: pathlib.Path, npu_aliases=("aclgraph", "npugraph"), cuda=None, artifact=True,
              npu_version="2.7.1") -> str:
    """An installed torch (+ torch_npu unless npu_aliases is None), as files only: the registrations as
    torch_npu/_logging/_internal.py and torch/_logging/_registrations.py write them."""
    site = root / "site"
    torch = site / "torch"
    (torch / "_logging").mkdir(parents=True)
    (torch / "__init__.py").write_text("raise ImportError('a file-only double: never imported')\n")
    (torch / "version.py").write_text(f"__version__ = '2.7.1'\ncuda: Optional[str] = {cuda!r}\n")
    registrations = 'register_artifact(\n    "cudagraphs",\n    "Logs information from wrapping inductor code",\n)\n'
    (torch / "_logging" / "_registrations.py").write_text(registrations if artifact else "register_artifact('graph')\n")
    if npu_aliases is not None:
        npu = site / "torch_npu"
        (npu / "_logging").mkdir(parents=True)
        (npu / "__init__.py").write_text("raise ImportError('a file-only double')\n")
        (npu / "version.py").write_text(f"__version__ = '{npu_version}'\n")
        lines = [f'    torch._logging._internal.register_log("{a}", "torch_npu.npugraph")'
                 for a in ("memory", "dispatch", *npu_aliases)]
        (npu / "_logging" / "_internal.py").write_text("def _add_logging_module():\n" + "\n".join(lines) + "\n")
    return str(site)


@pytest.mark.parametrize("kind, user, expected", [
    ("26.x", {}, {"TORCH_NPU_LOGS": ("set", "+aclgraph,cudagraphs")}),
    ("7.x", {}, {"TORCH_LOGS": ("set", "cudagraphs")}),
    ("cuda", {}, {"TORCH_LOGS": ("set", "cudagraphs")}),
    ("cpu-old", {}, {"TORCH_LOGS": ("skipped", None)}),
    ("26.x", {"TORCH_LOGS": "+dynamo"}, {"TORCH_LOGS": ("kept", "+dynamo"), "TORCH_NPU_LOGS": ("skipped", None)}),
    ("26.x", {"TORCH_NPU_LOGS": "memory"}, {"TORCH_NPU_LOGS": ("kept", "memory")}),
])
def test_switches_follow_what_the_installed_torch_npu_knows(tmp_path, kind, user, expected):
    site = {"26.x": lambda: fake_site(tmp_path), "7.x": lambda: fake_site(tmp_path, npu_aliases=(), npu_version="2.7.1.post1"),
            "cuda": lambda: fake_site(tmp_path, npu_aliases=None, cuda="12.1"),
            "cpu-old": lambda: fake_site(tmp_path, npu_aliases=None, artifact=False)}[kind]()
    env = clean_env(PYTHONPATH=site, **user)
    installed = switches.find_installed(sys.executable, env)  # asks that Python where they are, imports nothing
    plan = switches.plan_switches(env, installed, str(tmp_path / "plog"))
    got = {s.name: (s.action, s.value) for s in plan.switches}
    for name, want in expected.items():
        assert got[name] == want, plan.to_dict()
    for name, (action, value) in got.items():
        if action == "set":
            assert plan.env[name] == value
        else:
            assert plan.env.get(name) == user.get(name)  # never touched


def test_the_users_own_variables_reach_the_child_untouched(tmp_path):
    site = fake_site(tmp_path)
    user_logs = tmp_path / "my-ascend-log"
    child = rs.write(tmp_path, "show.py", (
        "import os, sys\n"
        "for name in ('TORCH_NPU_LOGS', 'ASCEND_PROCESS_LOG_PATH', 'ASCEND_GLOBAL_LOG_LEVEL'):\n"
        "    print(name, os.environ.get(name))\n"
        "plog = os.path.join(os.environ['ASCEND_PROCESS_LOG_PATH'], 'debug', 'plog')\n"
        "os.makedirs(plog, exist_ok=True)\n"
        "open(os.path.join(plog, 'plog-%d_20260101000000000.log' % os.getpid()), 'w').write(\n"
        "    '[ERROR] RUNTIME(%d,python):2026-01-01-00:00:00.000.000 [api_c.cc:1]%d rtX:ErrCode=107030\\n' % (os.getpid(), os.getpid()))\n"
        "sys.exit(3)\n"))
    env = clean_env(PYTHONPATH=site, TORCH_NPU_LOGS="memory", ASCEND_PROCESS_LOG_PATH=str(user_logs))
    out, err = quiet_fds(tmp_path)
    result = api.run_command([sys.executable, child], directory=str(tmp_path), plog_level="info", stdout_fd=out,
                             stderr_fd=err, collect_env=False, pack=False, environ=env)
    shown = (tmp_path / "passed-out.txt").read_text()
    assert f"TORCH_NPU_LOGS memory\nASCEND_PROCESS_LOG_PATH {user_logs}\nASCEND_GLOBAL_LOG_LEVEL 1\n" == shown
    actions = {s["name"]: s["action"] for s in result.switches}
    assert actions == {"TORCH_NPU_LOGS": "kept", "ASCEND_PROCESS_LOG_PATH": "kept", "ASCEND_GLOBAL_LOG_LEVEL": "set"}
    assert result.exit_status == 3
    assert len(result.plogs) == 1 and result.plogs[0].startswith("ascend_log/debug/plog/plog-")  # copied in
    assert any(user_logs.rglob("plog-*.log"))  # and left where CANN wrote it

    # Without the user's values the run sets what this torch_npu knows.
    out, err = quiet_fds(tmp_path)
    result = api.run_command([sys.executable, child], directory=str(tmp_path), stdout_fd=out, stderr_fd=err,
                             collect_env=False, pack=False, environ=clean_env(PYTHONPATH=site))
    shown = (tmp_path / "passed-out.txt").read_text().splitlines()
    assert shown[0] == "TORCH_NPU_LOGS +aclgraph,cudagraphs"
    assert shown[1] == f"ASCEND_PROCESS_LOG_PATH {result.folder}/ascend_log"
    assert shown[2] == "ASCEND_GLOBAL_LOG_LEVEL None"


# --- what a shell would say --------------------------------------------------------------------

def test_commands_that_cannot_start_exit_like_a_shell(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("run", "--", "no-such-command-npu-graph")
    assert code == 127 and err.strip() == "npu-graph: error: no-such-command-npu-graph: command not found"
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    code, out, err = run_cli("run", "--", str(script))
    assert code == 126 and err.strip().endswith("not-executable.sh: Permission denied") and len(err.splitlines()) == 1
    code, out, err = run_cli("run", "--", str(tmp_path))
    assert code == 126 and "Is a directory" in err
    code, out, err = run_cli("run", "--", "./missing.py")
    assert code == 127 and "No such file or directory" in err
    code, out, err = run_cli("run")
    assert code == 2 and "no command" in err
    assert not list(tmp_path.glob("npu-graph-run-*"))  # nothing was created for a command that never ran


def test_a_passing_command_leaves_nothing_unless_kept(tmp_path):
    out, err = quiet_fds(tmp_path)
    result = api.run_command([sys.executable, "-c", "print('fine')"], directory=str(tmp_path), stdout_fd=out,
                             stderr_fd=err, collect_env=False, environ=clean_env())
    assert result.status == "passed" and result.exit_status == 0 and result.folder is None
    assert not list(tmp_path.glob("npu-graph-run-*"))
    result = api.run_command([sys.executable, "-c", "print('fine')"], directory=str(tmp_path), keep=True,
                             stdout_fd=out, stderr_fd=err, collect_env=False, environ=clean_env())
    assert os.path.isdir(result.folder) and os.path.isfile(result.archive) and result.diagnosis is None
    assert (pathlib.Path(result.folder) / "output.log").read_text() == "fine\n"


def test_a_command_killed_by_a_signal_exits_128_plus_it(tmp_path):
    out, err = quiet_fds(tmp_path)
    result = api.run_command([sys.executable, "-c", "import os, signal; print('Segmentation fault ahead'); "
                              "os.kill(os.getpid(), signal.SIGSEGV)"], directory=str(tmp_path), stdout_fd=out,
                             stderr_fd=err, collect_env=False, pack=False, environ=clean_env())
    assert result.exit_status == 128 + signal.SIGSEGV and result.signal == "SIGSEGV" and result.ended_by == "signal"
    assert result.status == "failed" and os.path.isdir(result.folder)


def test_a_terminal_stays_a_terminal(tmp_path):
    """On a terminal the child gets a pseudo-terminal in raw mode: it sees a tty of the same width, and its
    bytes (colours, \\r) are recorded exactly as written."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    child = rs.write(tmp_path, "show_terminal.py", "import os, sys\n"
                                         "print('tty', sys.stdout.isatty(), sys.stderr.isatty(), os.get_terminal_size().columns)\n"
                                         "sys.stdout.write('\\x1b[31mred\\x1b[0m 50%\\r100%\\n')\n")
    pid, fd = pty.fork()
    if pid == 0:  # the wrapper, on a terminal of 123 columns
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "npu_graph_skill", "run", "--keep", "-q", "--", sys.executable,
                                   child], clean_env())
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 123, 0, 0))
    seen = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        seen += data
    _, status = os.waitpid(pid, 0)
    assert status == 0, seen
    assert b"tty True True 123" in seen and b"\x1b[31mred\x1b[0m 50%\r100%" in seen
    record = (only_folder(tmp_path) / "output.log").read_bytes()
    assert record == b"tty True True 123\n\x1b[31mred\x1b[0m 50%\r100%\n"  # no \r\n: the child's bytes as written


# --- graph vs eager ----------------------------------------------------------------------------

def test_graph_vs_eager_says_whether_the_failure_is_graph_specific(tmp_path, shared_data):
    error = rs.case_text(shared_data, "seed-default-stream")
    child = rs.write(tmp_path, "model.py", "import os, sys\n"
                                           f"ERROR = {error!r}\n"
                                           "if os.environ.get('GRAPH_OFF') == '1' and sys.argv[1:] != ['always']:\n"
                                           "    print('eager ok'); sys.exit(0)\n"
                                           "sys.stderr.write(ERROR); sys.exit(1)\n")
    out, err = quiet_fds(tmp_path)
    common = dict(directory=str(tmp_path), stdout_fd=out, stderr_fd=err, collect_env=False, pack=False,
                  environ=clean_env())
    result = api.run_command([sys.executable, child], eager_env="GRAPH_OFF=1", **common)
    assert result.eager["verdict"] == "graph_specific" and result.eager["exit_status"] == 0
    assert result.eager["env"] == {"GRAPH_OFF": "1"} and os.path.isfile(os.path.join(result.folder, "eager", "output.log"))
    assert result.diagnosis["candidates"][0]["id"] == "P-CAP-003"
    result = api.run_command([sys.executable, child, "always"], eager_cmd=f"env GRAPH_OFF=1 {sys.executable} {child} always",
                             **common)
    assert result.eager["verdict"] == "not_graph_specific" and result.eager["exit_status"] == 1
    assert "not graph-specific" in result.eager["summary"]["en"]
    with pytest.raises(UserError, match="NAME=VALUE"):
        api.run_command([sys.executable, child], eager_env="--enforce-eager", **common)


# --- the bundle afterwards -------------------------------------------------------------------

def test_bundle_diagnoses_a_folder_again_and_packs_it(tmp_path, shared_data, run_cli):
    worker = rs.write(tmp_path, "worker.py", rs.WORKER)
    fields = rs.specs_capture_copy(shared_data)
    fields["stderr"].append('  File "/home/alice/serve.py", line 3, in <module>')
    spec = rs.spec(tmp_path, "capture.json", **fields)
    out, err = quiet_fds(tmp_path)
    result = api.run_command([sys.executable, worker, spec], directory=str(tmp_path), stdout_fd=out, stderr_fd=err,
                             collect_env=False, pack=False, environ=clean_env(), lang="en")
    folder = result.folder
    os.remove(os.path.join(folder, "diagnosis.json"))
    code, text, _ = run_cli("bundle", folder, "--lang", "zh")
    assert code == 0 and "问题概况" in text and "P-CAP-002" in text
    assert json.loads(pathlib.Path(folder, "diagnosis.json").read_text())["lang"] == "zh"
    code, text, _ = run_cli("bundle", folder, "--json")
    report = json.loads(text)
    assert report["schema"] == "npu-graph-skill/bundle/1" and report["diagnosis"]["phase"] == "capture"
    assert "output.log" in report["inputs"]
    code, text, _ = run_cli("bundle", folder, "--pack")
    assert code == 0 and "home paths" in text
    with tarfile.open(folder + ".tar.gz") as tar:
        name = os.path.basename(folder)
        member = tar.extractfile(f"{name}/output.log").read()
    assert b"/home/alice" not in member and b'File "~/serve.py"' in member
    assert b"/home/alice" in pathlib.Path(folder, "output.log").read_bytes()  # the folder stays the raw record
    code, text, _ = run_cli("bundle", folder, "--pack", "--no-redact")
    with tarfile.open(folder + ".tar.gz") as tar:
        assert b"/home/alice/serve.py" in tar.extractfile(f"{name}/output.log").read()
    code, _, err_text = run_cli("bundle", str(tmp_path))
    assert code == 2 and "not a run folder" in err_text and len(err_text.strip().splitlines()) == 1


def test_record_saves_the_failure_as_a_case(tmp_path, shared_data, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    child = rs.write(tmp_path, "fails.py", "import sys\n"
                                           f"sys.stderr.write({rs.case_text(shared_data, 'seed-default-stream')!r})\n"
                                           "sys.exit(1)\n")
    kb = tmp_path / "kb"
    code, _, err = run_cli("run", "-q", "--record", "--yes", "--kb", str(kb), "--", sys.executable, child)
    assert code == 1, err
    cases = list((kb / "cases").glob("C-*.yaml"))
    assert len(cases) == 1 and "non-default stream" in cases[0].read_text()
    assert "Recorded new case" in err


def test_redaction_changes_only_what_identifies_someone(tmp_path):
    from npu_graph_skill.run.pack import pack_folder

    folder = tmp_path / "npu-graph-run-20260101-000000"
    folder.mkdir()
    raw = (b"File \"/home/alice/train.py\", line 3\nHF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456\n"
           b"CANN 8.0.0.1 on 10.1.2.3\n\xff\xfe not utf-8 \xe4\xb8\n" + b"step\n" * 1000)
    (folder / "output.log").write_bytes(raw)
    (folder / "run.json").write_text('{"schema": "npu-graph-skill/run/1"}')
    packed = pack_folder(str(folder))
    with tarfile.open(packed.archive) as tar:
        text = tar.extractfile(f"{folder.name}/output.log").read()
    assert text == (b"File \"~/train.py\", line 3\nHF_TOKEN=<token>\nCANN 8.0.0.1 on <ip>\n\xff\xfe not utf-8 \xe4\xb8\n"
                    + b"step\n" * 1000)
    assert packed.redactions == {"home_path": 1, "ip": 1, "token": 1}
    assert (folder / "output.log").read_bytes() == raw


def test_non_posix_systems_are_told_it_is_unsupported(monkeypatch):
    monkeypatch.setattr(session.os, "name", "nt")
    with pytest.raises(UserError, match="needs a POSIX system"):
        session.require_posix()


# --- the parts ----------------------------------------------------------------------------------

def test_the_record_keeps_whole_lines_of_each_stream(tmp_path):
    recorder = OutputRecorder(str(tmp_path / "output.log"), 10_000)
    recorder.feed(1, b"progress 10%")  # no newline yet
    recorder.feed(2, b"Traceback (most recent call last):\n  File")
    recorder.feed(1, b" 20%\n")
    recorder.feed(2, b' "x.py", line 1\n')
    stats = recorder.finish()
    assert (tmp_path / "output.log").read_bytes() == (b"Traceback (most recent call last):\nprogress 10% 20%\n"
                                                      b'  File "x.py", line 1\n')
    assert stats.lines == 3 and stats.dropped_bytes == 0


def test_the_watch_knows_a_decisive_error_from_a_consequence(shared_data):
    decisive = rs.case_text(shared_data, "vllm-ascend-12983").encode()
    timeout = rs.sample_plog(shared_data, "plog-114654_20250619092834191.log")[0].encode()
    benign = (b"torch_npu.memory: [ERROR] [269128] Get a block from the existing pool failed. Try to free cached blocks "
              b"and reallocate. This error log can be ignored.")
    assert "error code is 107030" in first_decisive_line(b"step 1\n" + decisive)
    assert first_decisive_line(timeout + b"\n" + benign + b"\nINFO error rate 0.1 ok\n") is None
