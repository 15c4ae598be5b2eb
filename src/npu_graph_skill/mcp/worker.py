"""Run one api function in a child process with a time limit.

The MCP server hands the tools that read files or probe the machine to a fresh
`python -m npu_graph_skill.mcp.worker`: the call gets a real deadline (the child and everything it
started are killed at the limit, which a thread cannot offer), a crash or a runaway allocation
cannot take the server down, and nothing the capability prints can reach the protocol channel.

Request on the child's stdin, reply on its stdout, both one JSON object:
    {"function": "diagnose", "kwargs": {...}, "time_limit": 300}
    {"ok": true, "result": {...}}  |  {"ok": false, "kind": "input|missing|internal", "message": "..."}

Standard library only.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any, Dict, Optional

# The api functions a worker may run (the request names one; nothing else is callable).
FUNCTIONS = ("diagnose", "analyze_logs", "merge_log_summaries", "run_doctor", "locate_symbol", "find_raise_site",
             "perf_trace", "perf_compare", "analyze_graph_dump", "lint", "diagnose_bundle")
STDERR_TAIL = 64 * 1024


class WorkerError(Exception):
    """The call did not produce a reply: over the time limit, or the child died."""


def run_in_worker(function: str, kwargs: Dict[str, Any], time_limit: float,
                  python: Optional[str] = None) -> Dict[str, Any]:
    """The child's reply (see the module docstring). Raises WorkerError on timeout or crash."""
    if function not in FUNCTIONS:
        raise ValueError(f"not a worker function: {function}")
    payload = json.dumps({"function": function, "kwargs": kwargs, "time_limit": time_limit}).encode("utf-8")
    process = subprocess.Popen(
        [python or sys.executable, "-m", "npu_graph_skill.mcp.worker"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_child_env(), start_new_session=True,  # its own process group: killed as a whole
    )
    try:
        out, err = process.communicate(payload, timeout=time_limit)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        process.communicate()
        raise WorkerError(f"stopped after {time_limit:g} s (the server's time limit per call); give a smaller "
                          "input or narrower options, or restart the server with `npu-graph mcp --time-limit S`") from None
    finally:
        if process.poll() is None:  # cancelled or interrupted while waiting
            _kill_group(process)
            process.wait()
    _forward(err)
    try:
        reply = json.loads(out.decode("utf-8")) if out.strip() else None
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {process.returncode}"]
        raise WorkerError(f"the worker process died without a reply ({last[0][:300]})")
    return reply


def _child_env() -> Dict[str, str]:
    """The server's environment, with this package importable even when it is not installed."""
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    return env


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            process.kill()
        except OSError:
            pass


def _forward(err: bytes) -> None:
    """The child's stderr (warnings, logs) goes to the server's stderr, the client's log, never stdout."""
    if err:
        try:
            sys.stderr.write(err[-STDERR_TAIL:].decode("utf-8", "replace"))
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


# --------------------------------------------------------------------------------------------
# The child.
# --------------------------------------------------------------------------------------------

def call(function: str, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """Run `api.<function>(**kwargs)` and shape the outcome as a reply."""
    from npu_graph_skill.core.errors import UserError

    if function not in FUNCTIONS:
        return {"ok": False, "kind": "internal", "message": f"not a worker function: {function}"}
    try:
        from npu_graph_skill import api

        value = getattr(api, function)(**kwargs)
        return {"ok": True, "result": plain(value)}
    except UserError as exc:
        return {"ok": False, "kind": "input", "message": str(exc)}
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("npu_graph_skill"):
            return {"ok": False, "kind": "missing", "message": f"module {exc.name} is missing"}
        return {"ok": False, "kind": "internal", "message": f"ModuleNotFoundError: {exc}"}
    except MemoryError:
        return {"ok": False, "kind": "input", "message": "ran out of memory; give a smaller input"}
    except Exception as exc:  # noqa: BLE001 - reported to the model as one line, never a traceback on stdout
        import traceback

        traceback.print_exc(file=sys.stderr)
        return {"ok": False, "kind": "internal", "message": f"{exc.__class__.__name__}: {exc}"}


def plain(value: Any) -> Any:
    from npu_graph_skill.core.model import to_plain

    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return to_plain(value)


def _backstop(time_limit: Any) -> None:
    """If the server dies while waiting (and so can no longer kill us), SIGALRM ends the call soon after
    the limit anyway: its default action terminates the process."""
    if isinstance(time_limit, (int, float)) and time_limit > 0 and hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, time_limit + min(5.0, time_limit))


def main() -> int:
    reply_channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything printed by a capability lands on stderr, never inside the reply
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        _backstop(request.get("time_limit"))
        reply = call(str(request["function"]), dict(request.get("kwargs") or {}))
    except (ValueError, KeyError, TypeError) as exc:
        reply = {"ok": False, "kind": "internal", "message": f"bad worker request: {exc}"}
    except KeyboardInterrupt:
        return 130
    reply_channel.write(json.dumps(reply, default=str))
    reply_channel.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
