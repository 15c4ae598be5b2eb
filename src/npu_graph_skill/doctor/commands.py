"""Running commands and probes: argument lists, a timeout, never a shell.

Everything that imports torch or touches a device runs in a child process through a
`CommandRunner`, so a crash, a hang or a broken import becomes a finding. Tests hand in their own
runner (any callable with the same signature) and never start a process.
"""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional

PROBE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
PROBE_MARK = "@@npu-graph-probe@@"  # the line that carries the probe's JSON (torch may print too)


@dataclasses.dataclass
class CommandResult:
    argv: List[str]
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str = ""  # could not start: not found, permission denied
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.error

    def describe_failure(self) -> str:
        """One line: why the command did not succeed."""
        if self.error:
            return self.error
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s (killed)"
        code = self.returncode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"killed by {name}"
        return f"exited with status {code}"


Runner = Callable[..., CommandResult]  # (argv, timeout, env=None, cwd=None) -> CommandResult


def run_command(argv: List[str], timeout: float, env: Optional[Dict[str, str]] = None,
                cwd: Optional[str] = None) -> CommandResult:
    """Run `argv` with a timeout; the whole process group is killed when time is up."""
    import time

    start = time.monotonic()
    result = CommandResult(argv=list(argv))
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd=cwd, start_new_session=True,
        )
    except FileNotFoundError:
        result.error = f"{argv[0]}: command not found"
        return result
    except PermissionError:
        result.error = f"{argv[0]}: permission denied"
        return result
    except OSError as exc:
        result.error = f"{argv[0]}: cannot run ({exc.strerror or exc})"
        return result
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        result.timed_out = True
    except BaseException:  # Ctrl-C: leave no child behind
        _kill_group(proc)
        proc.wait()
        raise
    result.returncode = proc.returncode
    result.stdout = out.decode("utf-8", "replace")
    result.stderr = err.decode("utf-8", "replace")
    result.seconds = time.monotonic() - start
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        proc.kill()


@dataclasses.dataclass
class ProbeResult:
    """A probe's JSON answer, or why there is none."""

    name: str
    data: Optional[Dict[str, Any]]
    command: CommandResult

    @property
    def ok(self) -> bool:
        return self.data is not None

    def failure(self) -> str:
        """Why the probe gave no answer, with the last lines of its stderr."""
        reason = self.command.describe_failure() if not self.command.ok else "printed no result"
        tail = last_lines(self.command.stderr, 3)
        return f"{reason}: {tail}" if tail else reason


def last_lines(text: str, count: int) -> str:
    lines = [line.rstrip() for line in (text or "").splitlines() if line.strip()]
    return " | ".join(lines[-count:])


def run_probe(runner: Runner, python: str, name: str, args: List[str], timeout: float,
              env: Dict[str, str]) -> ProbeResult:
    """`python probe.py NAME ARGS` in a child process; its JSON line, if it printed one."""
    argv = [python, PROBE_SCRIPT, name] + list(args)
    command = runner(argv, timeout, env=env)
    return ProbeResult(name=name, data=parse_probe_output(command.stdout), command=command)


def parse_probe_output(stdout: str) -> Optional[Dict[str, Any]]:
    for line in reversed((stdout or "").splitlines()):
        if line.startswith(PROBE_MARK):
            try:
                data = json.loads(line[len(PROBE_MARK):])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def current_python() -> str:
    return sys.executable or "python3"
