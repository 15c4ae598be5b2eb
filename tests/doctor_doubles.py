"""Test doubles for the doctor: a fake command runner and a fake Ascend install on disk.

The runner answers probes (`python probe.py NAME ...`) and commands (npu-smi, nvidia-smi) from a
table, the way the real ones answer: a JSON line after the probe mark, an exit status, stderr.
"""
from __future__ import annotations

import copy
import json
import os
import pathlib
from typing import Any, Callable, Dict, List, Optional, Union

from npu_graph_skill.doctor.commands import PROBE_MARK, CommandResult

Answer = Union[Dict[str, Any], CommandResult, Callable[[List[str], Dict[str, str]], CommandResult]]

NPU_SMI_HEALTHY = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 25.2.0                   Version: 25.2.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 96.1        40                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3390 / 65536         |
+===========================+===============+====================================================+
| 1     910B3               | OK            | 92.7        39                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          3388 / 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| No running processes found in NPU 0                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 1                                                            |
+===========================+===============+====================================================+
"""


def probe_output(data: Dict[str, Any]) -> str:
    return "some torch warning on stdout\n" + PROBE_MARK + json.dumps(data) + "\n"


def ok(data: Dict[str, Any]) -> CommandResult:
    return CommandResult(argv=[], returncode=0, stdout=probe_output(data))


def healthy_npu_answers(torch_npu_dir: str) -> Dict[str, Answer]:
    steps = [{"name": n, "ok": True, "detail": "fine"} for n in
             ("warm_up", "graph_context_manager", "replay_context_manager", "manual_capture", "replay_manual")]
    return {
        "info": {"python": "3.11.7", "implementation": "CPython", "executable": "/opt/venv/bin/python",
                 "machine": "aarch64", "platform": "Linux-5.10-aarch64", "packages":
                 {"torch": "2.7.1", "torch-npu": "2.7.1.post8", "numpy": "1.26.4"},
                 "locations": {"torch": "/opt/venv/lib/torch", "torch_npu": torch_npu_dir},
                 "cwd_shadows_torch_npu": False},
        "import:torch": {"torch": "2.7.1", "torch_cuda": None, "torch_file": "/opt/venv/lib/torch/__init__.py"},
        "import:torch:autoload": {"torch": "2.7.1", "torch_cuda": None},
        "import:torch,torch_npu": {"torch": "2.7.1", "torch_npu": "2.7.1.post8", "cann_runtime": "9.1.0",
                                   "torch_npu_file": torch_npu_dir + "/__init__.py"},
        "devices": {"available": True, "count": 2, "devices": [
            {"index": 0, "name": "Ascend910B3", "memory_free_mb": 60000, "memory_total_mb": 65536},
            {"index": 1, "name": "Ascend910B3", "memory_free_mb": 60000, "memory_total_mb": 65536}]},
        "graph_api": {"api": {n: True for n in ("NPUGraph", "graph", "make_graphed_callables", "graph_pool_handle",
                                                  "is_current_stream_capturing", "graph_task_group_begin")},
                      "graph_signature": "(self, npu_graph, pool=None, stream=None, auto_dispatch_capture=False, capture_error_mode='global')",
                      "acl_symbols": {"aclmdlRICaptureBegin": True, "aclmdlRICaptureEnd": True,
                                      "aclmdlRICaptureGetInfo": True, "aclmdlRIExecuteAsync": True},
                      "soc": "Ascend910B3"},
        "capture": {"device": "npu:0", "steps": steps},
        "npu-smi": CommandResult(argv=[], returncode=0, stdout=NPU_SMI_HEALTHY),
    }


def healthy_cuda_answers() -> Dict[str, Answer]:
    answers = healthy_npu_answers("")
    answers["info"]["packages"] = {"torch": "2.13.0", "numpy": "2.1.0"}
    answers["info"]["locations"] = {"torch": "/opt/venv/lib/torch"}
    answers["import:torch"] = {"torch": "2.13.0+cu128", "torch_cuda": "12.8"}
    answers["devices"] = {"available": True, "count": 1, "devices": [
        {"index": 0, "name": "NVIDIA H200", "memory_free_mb": 140000, "memory_total_mb": 143771}]}
    answers["graph_api"] = {"api": {n: True for n in ("CUDAGraph", "graph", "make_graphed_callables", "graph_pool_handle",
                                                        "is_current_stream_capturing")},
                            "capability": [9, 0], "device_name": "NVIDIA H200"}
    answers["capture"]["device"] = "cuda:0"
    answers["nvidia-smi"] = CommandResult(argv=[], returncode=0, stdout="0, NVIDIA H200, 570.86.15, 1200, 143771\n")
    return answers


class FakeRunner:
    """Answers by probe key — `NAME`, or `NAME:--modules value`, with `:autoload` when autoload is on —
    or by the command's basename."""

    def __init__(self, answers: Dict[str, Answer]):
        self.answers = answers
        self.calls: List[List[str]] = []
        self.envs: List[Dict[str, str]] = []

    def __call__(self, argv, timeout, env=None, cwd=None) -> CommandResult:
        self.calls.append(list(argv))
        self.envs.append(dict(env or {}))
        key = self.key(argv, env or {})
        answer = self.answers.get(key)
        if answer is None and ":" in key:
            answer = self.answers.get(key.split(":")[0])
        if answer is None:
            return CommandResult(argv=list(argv), error=f"{argv[0]}: command not found")
        if callable(answer) and not isinstance(answer, CommandResult):
            return answer(list(argv), dict(env or {}))
        if isinstance(answer, CommandResult):
            result = copy.copy(answer)
            result.argv = list(argv)
            return result
        return CommandResult(argv=list(argv), returncode=0, stdout=probe_output(answer))

    @staticmethod
    def key(argv: List[str], env: Dict[str, str]) -> str:
        if len(argv) > 2 and argv[1].endswith("probe.py"):
            name = argv[2]
            if name == "import":
                modules = argv[argv.index("--modules") + 1] if "--modules" in argv else "torch"
                name = f"import:{modules}"
                if env.get("TORCH_DEVICE_BACKEND_AUTOLOAD") != "0":
                    name += ":autoload"
            return name
        return os.path.basename(argv[0])

    def probes(self) -> List[str]:
        return [self.key(argv, env) for argv, env in zip(self.calls, self.envs)]


def fake_ascend(root: pathlib.Path, cann: str = "9.1.0", driver: str = "25.2.0", firmware: str = "7.7.0.6.236",
                fw_range: str = "[7.0.0,7.7.99]") -> Dict[str, str]:
    """A CANN toolkit, driver and firmware laid out like a real install; returns a sourced environment."""
    base = root / "Ascend"
    latest = base / "ascend-toolkit" / "latest"
    (latest / "x86_64-linux").mkdir(parents=True)
    (latest / "lib64").mkdir()
    (latest / "x86_64-linux" / "ascend_toolkit_install.info").write_text(
        f"package_name=Ascend-cann-toolkit\nversion={cann}\ninnerversion=V100R001C23\narch=x86_64\n")
    (base / "ascend-toolkit" / "set_env.sh").write_text("export ASCEND_TOOLKIT_HOME=...\n")
    (base / "driver").mkdir()
    (base / "driver" / "version.info").write_text(
        f"Version={driver}\nascendhal_version=7.35.23\nInnerversion=V100R001C23SPC002B212\n"
        f"compatible_version_fw={fw_range}\npackage_version={driver}\n")
    (base / "firmware").mkdir()
    (base / "firmware" / "version.info").write_text(f"Version={firmware}\n")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "npu-smi"
    smi.write_text("#!/bin/sh\nexit 0\n")
    smi.chmod(0o755)
    return {"ASCEND_HOME_PATH": str(latest), "ASCEND_TOOLKIT_HOME": str(latest), "HOME": str(root / "home"),
            "LD_LIBRARY_PATH": f"{latest}/lib64:/usr/lib", "PATH": f"{bin_dir}:/usr/bin:/bin"}


def fake_torch_npu(root: pathlib.Path, aliases=("aclgraph", "npugraph")) -> str:
    """An installed torch_npu's `_logging/_internal.py`, registering the given log aliases."""
    pkg = root / "site" / "torch_npu"
    (pkg / "_logging").mkdir(parents=True)
    lines = [f'    torch._logging._internal.register_log("{a}", "torch_npu.npugraph")' for a in aliases]
    (pkg / "_logging" / "_internal.py").write_text("def _add_logging_module():\n" + "\n".join(lines or ["    pass"]) + "\n")
    return str(pkg)


def error(type_: str, message: str, chain: Optional[List[str]] = None) -> Dict[str, Any]:
    return {"type": type_, "message": message, "traceback_tail": [f"{type_}: {message}"],
            "chain": chain or [f"{type_}: {message}"]}
