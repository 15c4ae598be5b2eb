"""Which logging variables the run sets for the child, decided from what its Python has installed.

Nothing is imported: the files that decide are read as text.
- torch_npu's `_logging/_internal.py` registers the names `TORCH_NPU_LOGS` accepts. Releases that
  register `aclgraph` (26.0.0 as `torch_npu.aclgraph`; 26.1.0 and master as `torch_npu.npugraph`,
  with the `npugraph` alias) get `TORCH_NPU_LOGS=+aclgraph,cudagraphs`: the C++ and Python NPUGRAPH
  DEBUG lines, and the `cudagraphs` artifact that master's Python graph code logs through
  (formats.md §1.2, §7; torch_npu_graph_facts.md (c)). The 7.x releases register no graph name and
  reject `TORCH_NPU_LOGS=aclgraph` at import ("Invalid log settings"); there `TORCH_LOGS=cudagraphs`
  reaches the Python graph-tree logger (torch_npu_graph_facts.md (c), v7.3.0 note).
- torch's `_logging/_registrations.py` says whether `cudagraphs` is an artifact this torch knows
  (an unknown name makes `import torch` fail, so it is written only when known). A CUDA build
  (`torch/version.py`, `cuda = '12.x'`) without torch_npu gets `TORCH_LOGS=cudagraphs`.
- CANN writes plogs under `ASCEND_PROCESS_LOG_PATH` (`{debug,run}/plog/plog-PID_TIME.log`, device
  logs in `debug/device-N/`, formats.md §2.1): it points into the run folder, so every rank's plog
  lands there. `ASCEND_GLOBAL_LOG_LEVEL` (0 debug … 3 error, the default) only with `--plog-level`.

A variable the user already set is never changed; the plan says so instead. Setting
`TORCH_NPU_LOGS` makes torch_npu read it instead of `TORCH_LOGS` (`_update_log_state_from_env`), so
it is not set over a user's `TORCH_LOGS` either.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Dict, List, Mapping, Optional, Tuple

from npu_graph_skill.core.model import Record

PLOG_LEVELS = {"debug": "0", "info": "1", "warning": "2", "error": "3"}
GRAPH_LOGS = "+aclgraph,cudagraphs"
_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?$")
_REGISTER_LOG = re.compile(r"""register_log\(\s*["'](\w+)["']""")
_CUDAGRAPHS_ARTIFACT = re.compile(r"""register_artifact\(\s*["']cudagraphs["']""")
_TORCH_CUDA = re.compile(r"""^cuda\s*(?::[^=\n]*)?=\s*["']([^"']+)["']""", re.MULTILINE)
_VERSION = re.compile(r"""^__version__\s*(?::[^=\n]*)?=\s*["']([^"']+)["']""", re.MULTILINE)
PROBE_TIMEOUT = 20.0
_PROBE = ("import importlib.util as u, json, os\n"
          "def where(name):\n"
          "    try:\n"
          "        spec = u.find_spec(name)\n"
          "    except Exception:\n"
          "        return None\n"
          "    return os.path.dirname(spec.origin) if spec and spec.origin else None\n"
          "print(json.dumps({'torch': where('torch'), 'torch_npu': where('torch_npu')}))\n")


@dataclasses.dataclass
class Installed(Record):
    """What the command's Python has, read from files (None: not installed or not found)."""

    python: Optional[str]
    torch: Optional[str] = None  # package folder
    torch_version: Optional[str] = None
    torch_cuda: Optional[str] = None
    cudagraphs_artifact: bool = False
    torch_npu: Optional[str] = None
    torch_npu_version: Optional[str] = None
    torch_npu_logs: List[str] = dataclasses.field(default_factory=list)  # names TORCH_NPU_LOGS accepts
    note: str = ""


@dataclasses.dataclass
class Switch(Record):
    name: str
    value: Optional[str]
    action: str  # set | kept (the user's, left alone) | skipped
    why: Dict[str, str]  # en, zh


@dataclasses.dataclass
class Plan(Record):
    env: Dict[str, str]
    switches: List[Switch]
    installed: Installed

    def to_dict(self):
        return {"switches": [s.to_dict() for s in self.switches], "installed": self.installed.to_dict()}


# --------------------------------------------------------------------------------------------
# Which Python runs the command, and what it has.
# --------------------------------------------------------------------------------------------

def command_python(argv: List[str], env: Mapping[str, str]) -> Optional[str]:
    """The interpreter the command will run: `python...` itself, the first `python...` among its arguments
    (`mpirun -np 4 python train.py`), or the `#!` line of a console script (`torchrun`, `vllm`)."""
    path = env.get("PATH", os.defpath)
    for word in argv[:8]:
        name = os.path.basename(word)
        if _PYTHON_NAME.match(name):
            return shutil.which(word, path=path) or (word if os.path.isfile(word) else None)
    found = shutil.which(argv[0], path=path) if argv else None
    if found:
        interpreter = _shebang_python(found, path)
        if interpreter:
            return interpreter
    return shutil.which("python3", path=path) or shutil.which("python", path=path)


def _shebang_python(script: str, path: str) -> Optional[str]:
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        return shutil.which(words[0], path=path) if words and _PYTHON_NAME.match(os.path.basename(words[0])) else None
    return words[0] if words and _PYTHON_NAME.match(os.path.basename(words[0])) else None


def find_installed(python: Optional[str], env: Mapping[str, str]) -> Installed:
    installed = Installed(python=python)
    if not python:
        installed.note = "no Python found for the command"
        return installed
    places, error = _package_folders(python, env)
    if error:
        installed.note = error
    installed.torch, installed.torch_npu = places.get("torch"), places.get("torch_npu")
    if installed.torch:
        version = _read(os.path.join(installed.torch, "version.py"))
        installed.torch_version = _first(_VERSION, version)
        installed.torch_cuda = _first(_TORCH_CUDA, version)
        installed.cudagraphs_artifact = bool(_CUDAGRAPHS_ARTIFACT.search(
            _read(os.path.join(installed.torch, "_logging", "_registrations.py"))))
    if installed.torch_npu:
        installed.torch_npu_version = _first(_VERSION, _read(os.path.join(installed.torch_npu, "version.py")))
        logging_files = [os.path.join(installed.torch_npu, "_logging", name) for name in ("_internal.py", "__init__.py")]
        installed.torch_npu_logs = sorted({n for f in logging_files for n in _REGISTER_LOG.findall(_read(f))})
    return installed


def _package_folders(python: str, env: Mapping[str, str]) -> Tuple[Dict[str, Optional[str]], str]:
    """Where torch and torch_npu are installed for `python`, found without importing them."""
    if os.path.realpath(python) == os.path.realpath(sys.executable) and env.get("PYTHONPATH") == os.environ.get("PYTHONPATH"):
        import importlib.util

        found = {}
        for name in ("torch", "torch_npu"):
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            found[name] = os.path.dirname(spec.origin) if spec and spec.origin else None
        return found, ""
    try:
        done = subprocess.run([python, "-I" if not env.get("PYTHONPATH") else "-s", "-c", _PROBE], env=dict(env),
                              capture_output=True, timeout=PROBE_TIMEOUT, check=False)
        return json.loads(done.stdout.decode("utf-8", "replace").strip().splitlines()[-1]), ""
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {}, f"could not ask {python} where torch is"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError:
        return ""


def _first(regex: "re.Pattern[str]", text: str) -> Optional[str]:
    match = regex.search(text)
    return match.group(1) if match else None


# --------------------------------------------------------------------------------------------
# The plan.
# --------------------------------------------------------------------------------------------

def plan_switches(environ: Mapping[str, str], installed: Installed, plog_dir: Optional[str],
                  plog_level: Optional[str] = None, log_switches: bool = True) -> Plan:
    """The child's environment: `environ` plus the switches the user has not set."""
    env = dict(environ)
    switches: List[Switch] = []

    def keep(name: str, en: str, zh: str) -> None:
        switches.append(Switch(name, env[name], "kept", {"en": en, "zh": zh}))

    def put(name: str, value: str, en: str, zh: str) -> None:
        env[name] = value
        switches.append(Switch(name, value, "set", {"en": en, "zh": zh}))

    def skip(name: str, en: str, zh: str) -> None:
        switches.append(Switch(name, None, "skipped", {"en": en, "zh": zh}))

    if log_switches:
        _torch_logs(env, installed, keep, put, skip)
    else:
        skip("TORCH_NPU_LOGS", "--no-log-switches", "--no-log-switches")
    if plog_dir is not None:
        if "ASCEND_PROCESS_LOG_PATH" in env:
            keep("ASCEND_PROCESS_LOG_PATH", "yours, left alone; the plogs this run writes there are copied into the run folder",
                 "已由你设置，不改动；本次运行写到那里的 plog 会复制进运行目录")
        else:
            put("ASCEND_PROCESS_LOG_PATH", plog_dir, "CANN plogs of every process go into the run folder",
                "所有进程的 CANN plog 写入运行目录")
    if plog_level:
        if "ASCEND_GLOBAL_LOG_LEVEL" in env:
            keep("ASCEND_GLOBAL_LOG_LEVEL", f"yours, left alone (--plog-level {plog_level} not applied)",
                 f"已由你设置，不改动（未应用 --plog-level {plog_level}）")
        else:
            put("ASCEND_GLOBAL_LOG_LEVEL", PLOG_LEVELS[plog_level], f"plog level {plog_level} (--plog-level)",
                f"plog 级别 {plog_level}（--plog-level）")
    return Plan(env=env, switches=switches, installed=installed)


def _torch_logs(env: Dict[str, str], installed: Installed, keep, put, skip) -> None:
    npu = installed.torch_npu
    version = installed.torch_npu_version or "?"
    if "TORCH_NPU_LOGS" in env:
        keep("TORCH_NPU_LOGS", "yours, left alone", "已由你设置，不改动")
        if "TORCH_LOGS" in env:
            keep("TORCH_LOGS", "yours, left alone (torch_npu reads TORCH_NPU_LOGS instead while it is set)",
                 "已由你设置，不改动（设置了 TORCH_NPU_LOGS 时 torch_npu 读它而不读 TORCH_LOGS）")
        return
    if "TORCH_LOGS" in env:
        keep("TORCH_LOGS", "yours, left alone", "已由你设置，不改动")
        if npu and "aclgraph" in installed.torch_npu_logs:
            skip("TORCH_NPU_LOGS", f"not set: torch_npu would then ignore your TORCH_LOGS; add {GRAPH_LOGS} to it yourself",
                 f"未设置：否则 torch_npu 会忽略你的 TORCH_LOGS；可自行加入 {GRAPH_LOGS}")
        return
    artifact = installed.cudagraphs_artifact
    if npu and "aclgraph" in installed.torch_npu_logs:
        value = GRAPH_LOGS if artifact else "+aclgraph"
        put("TORCH_NPU_LOGS", value, f"torch_npu {version} knows the aclgraph log: graph lifecycle lines (NPUGRAPH ...)",
            f"torch_npu {version} 支持 aclgraph 日志：图生命周期日志（NPUGRAPH ...）")
    elif npu and artifact:
        put("TORCH_LOGS", "cudagraphs", f"torch_npu {version} has no aclgraph log (7.x); its Python graph tree logs "
            "through the cudagraphs artifact", f"torch_npu {version} 没有 aclgraph 日志（7.x）；其 Python 图树日志走 cudagraphs")
    elif npu:
        skip("TORCH_NPU_LOGS", f"torch_npu {version} registers no graph log that this torch accepts",
             f"torch_npu {version} 没有本 torch 可接受的图日志开关")
    elif installed.torch and installed.torch_cuda and artifact:
        put("TORCH_LOGS", "cudagraphs", f"CUDA build of torch {installed.torch_version or '?'}: CUDA graph tree log",
            f"torch {installed.torch_version or '?'} CUDA 版：CUDA 图树日志")
    elif installed.torch:
        skip("TORCH_LOGS", "torch without torch_npu or a CUDA graph log: no graph log to switch on",
             "torch 既无 torch_npu 也无 CUDA 图日志：没有可打开的图日志")
    else:
        skip("TORCH_NPU_LOGS", "torch is not installed for " + (installed.python or "the command's Python"),
             "命令所用的 Python 未安装 torch：" + (installed.python or ""))
