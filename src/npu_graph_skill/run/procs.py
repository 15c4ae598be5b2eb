"""The job's processes: the child's process group, and anything that left the group but still carries
the run's marker variable (a launcher that calls setsid for its workers).

Read from /proc (Linux); elsewhere only the group is known, through `killpg(pgid, 0)`.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import time
from typing import Iterable, List, Optional

MARKER = "NPU_GRAPH_RUN_ID"  # set in the child's environment; inherited by everything it starts


@dataclasses.dataclass
class ProcessInfo:
    pid: int
    command: str
    in_group: bool = True


def _proc_pids() -> List[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _stat(pid: int):
    """(state, pgrp) from /proc/PID/stat, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2:].split()  # the command name may hold spaces and parentheses
    try:
        return rest[0].decode(), int(rest[2])
    except (IndexError, ValueError):
        return None


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return " ".join(handle.read().replace(b"\0", b" ").decode("utf-8", "replace").split())[:300]
    except OSError:
        return ""


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return marker in handle.read().split(b"\0")
    except OSError:
        return False


def job_processes(pgid: int, run_id: Optional[str] = None) -> List[ProcessInfo]:
    """Live (not zombie) processes of the group `pgid`, plus those carrying `MARKER=run_id`."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError, OSError):
            return []
        return [ProcessInfo(pid=pgid, command="(process group)")]
    marker = f"{MARKER}={run_id}".encode() if run_id else None
    found = []
    me = os.getpid()
    for pid in _proc_pids():
        if pid == me:
            continue
        stat = _stat(pid)
        if stat is None or stat[0] in ("Z", "X"):
            continue
        if stat[1] == pgid or (marker is not None and _has_marker(pid, marker)):
            found.append(ProcessInfo(pid=pid, command=_command(pid), in_group=stat[1] == pgid))
    return found


def signal_job(pgid: int, signum: int, others: Iterable[int] = ()) -> None:
    """Send `signum` to the whole group, and to the given pids outside it."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    for pid in others:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError, OSError):
            pass


def end_job(pgid: int, run_id: Optional[str], grace: float, first_signal: Optional[int] = None) -> List[ProcessInfo]:
    """Make sure nothing of the job is left: `first_signal` (if any), wait up to `grace` seconds, then
    SIGKILL what remains. Returns the processes that had to be killed."""
    if first_signal is not None:
        signal_job(pgid, first_signal, [p.pid for p in job_processes(pgid, run_id) if not p.in_group])
    deadline = time.monotonic() + grace
    left = job_processes(pgid, run_id)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = job_processes(pgid, run_id)
    if not left:
        return []
    signal_job(pgid, signal.SIGKILL, [p.pid for p in left if not p.in_group])
    deadline = time.monotonic() + 2.0
    while job_processes(pgid, run_id) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
