"""`npu-graph env`: a paste-ready environment block for bug reports, like torch.utils.collect_env.

One record (`EnvInfo`) holds every fact; `collect_env` fills it with one small `get_<fact>`
function per fact; `pretty_str` renders it. A fact that cannot be collected is None and prints
"Could not collect" — never an exception. Commands and probes go through an injectable runner,
with argument lists and timeouts; torch is imported only in a child process.
"""
from __future__ import annotations

import dataclasses
import os
import platform
from typing import Any, Dict, List, Mapping, Optional

from npu_graph_skill.core.model import Record
from npu_graph_skill.doctor import ascend, smi
from npu_graph_skill.doctor.commands import Runner, current_python, run_command
from npu_graph_skill.doctor.context import DEFAULT_TIMEOUTS, DoctorContext

# Variables that change how torch_npu, CANN or graph mode behave (values are shown as set).
ENV_PREFIXES = ("ASCEND_", "TORCH_NPU", "TORCHINDUCTOR_", "INDUCTOR_ASCEND_", "PYTORCH_NPU_", "HCCL_", "ACL_")
ENV_NAMES = ("TASK_QUEUE_ENABLE", "PYTORCH_NO_NPU_MEMORY_CACHING", "TORCH_LOGS", "TORCH_NPUGRAPH_GC",
             "TORCH_DEVICE_BACKEND_AUTOLOAD", "TORCH_SHOW_CPP_STACKTRACES", "CUDA_VISIBLE_DEVICES",
             "PYTORCH_CUDA_ALLOC_CONF", "CUDA_LAUNCH_BLOCKING", "TORCH_COMPILE_DEBUG")
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL")
NOT_COLLECTED = "Could not collect"


@dataclasses.dataclass
class EnvInfo(Record):
    tool: str
    os: Optional[str]
    python: Optional[str]
    python_path: Optional[str]
    torch: Optional[str]
    torch_cuda: Optional[str]
    torch_npu: Optional[str]
    torch_npu_import: Optional[str]  # "ok" or the one-line error
    cann: Optional[str]
    cann_path: Optional[str]
    cann_runtime: Optional[str]
    driver: Optional[str]
    firmware: Optional[str]
    npu_smi: Optional[str]
    devices: List[str]
    packages: Dict[str, str]
    variables: Dict[str, str]
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = "npu-graph-skill/env/1"


def get_os() -> str:
    return platform.platform()


def get_interpreter(ctx: DoctorContext) -> Dict[str, Any]:
    return ctx.info()


def get_import(ctx: DoctorContext) -> Dict[str, Any]:
    probe = ctx.probe("import", ["--modules", "torch,torch_npu"])
    if not probe.ok:
        return {"status": f"FAILED: {probe.failure()}"}
    data = dict(probe.data)
    error = data.get("torch_npu_error") or data.get("torch_error") or data.get("error")
    if error:
        first_line = (error.get("message") or "").strip().split("\n", 1)[0][:300]
        data["status"] = f"FAILED: {error['type']}: {first_line}"
    else:
        data["status"] = "ok"
    return data


def get_toolkit(environ: Mapping[str, str], base: str) -> ascend.ToolkitInfo:
    return ascend.find_toolkit(environ, base)


def get_driver(base: str) -> ascend.DriverInfo:
    return ascend.find_driver(base)


def get_npu_smi(runner: Runner, environ: Mapping[str, str], timeout: float) -> Optional[smi.SmiReport]:
    tool = ascend.find_npu_smi(environ)
    if not tool:
        return None
    result = runner([tool, "info"], timeout, env=dict(environ))
    return smi.parse_npu_smi(result.stdout) if result.ok else None


def get_gpus(runner: Runner, environ: Mapping[str, str], timeout: float) -> List[smi.GpuRecord]:
    import shutil

    if not shutil.which("nvidia-smi", path=environ.get("PATH", os.defpath)):
        return []
    result = runner(list(smi.NVIDIA_SMI_QUERY), timeout, env=dict(environ))
    return smi.parse_nvidia_smi_csv(result.stdout) if result.ok else []


def get_variables(environ: Mapping[str, str]) -> Dict[str, str]:
    picked = {}
    for name in sorted(environ):
        if name.startswith(ENV_PREFIXES) or name in ENV_NAMES:
            secret = any(word in name.upper() for word in SECRET_WORDS)
            picked[name] = "<redacted>" if secret else environ[name]
    return picked


def collect_env(python: Optional[str] = None, environ: Optional[Mapping[str, str]] = None,
                runner: Optional[Runner] = None, timeout: Optional[float] = None,
                ascend_base: Optional[str] = None, import_check: bool = True, **_ignored) -> EnvInfo:
    """Collect the facts. `import_check=False` skips importing torch_npu (the slowest fact)."""
    from npu_graph_skill import __version__

    env = dict(os.environ if environ is None else environ)
    limits = dict(DEFAULT_TIMEOUTS)
    if timeout:
        limits = {key: float(timeout) for key in limits}
    ctx = DoctorContext(backend="npu", python=python or current_python(), environ=env,
                        runner=runner or run_command, timeouts=limits,
                        ascend_base=ascend_base or ascend.DEFAULT_BASE)
    notes: List[str] = []
    info = get_interpreter(ctx)
    if not info:
        notes.append(f"could not run {ctx.python}: {ctx.probe('info').failure()}")
    packages = dict(info.get("packages") or {})
    imported: Dict[str, Any] = get_import(ctx) if import_check and packages.get("torch") else {}
    toolkit = get_toolkit(env, ctx.ascend_base)
    driver = get_driver(ctx.ascend_base)
    npu = get_npu_smi(ctx.runner, env, limits["smi"])
    devices = [f"{d.label}: {d.name} health={d.health} memory={d.memory_used_mb}/{d.memory_total_mb} MB"
               for d in (npu.devices if npu else [])]
    if not devices:
        devices = [f"GPU {g.index}: {g.name} driver={g.driver} memory={g.memory_used_mb}/{g.memory_total_mb} MiB"
                   for g in get_gpus(ctx.runner, env, limits["smi"])]
    if toolkit.path and not toolkit.sourced:
        notes.append("CANN found but set_env.sh not sourced in this shell")
    return EnvInfo(
        tool=f"npu-graph-skill {__version__}",
        os=get_os(),
        python=(f"{info['python']} ({info.get('implementation')}, {info.get('machine')})" if info else None),
        python_path=info.get("executable") or ctx.python,
        torch=packages.pop("torch", None),
        torch_cuda=imported.get("torch_cuda"),
        torch_npu=packages.pop("torch-npu", None),
        torch_npu_import=imported.get("status") if imported else None,
        cann=toolkit.version or None,
        cann_path=toolkit.path or None,
        cann_runtime=imported.get("cann_runtime") or None,
        driver=driver.version or None,
        firmware=driver.firmware_version or None,
        npu_smi=(npu.version or "found") if npu else None,
        devices=devices,
        packages=packages,
        variables=get_variables(env),
        notes=notes,
    )


def pretty_str(info: EnvInfo) -> str:
    def show(value: Any) -> str:
        return NOT_COLLECTED if value in (None, "") else str(value)

    rows = [
        ("OS", info.os),
        ("Python", f"{show(info.python)}  {info.python_path or ''}".rstrip()),
        ("PyTorch", info.torch if info.torch else "not installed"),
        ("PyTorch CUDA", info.torch_cuda if info.torch_cuda else "None (no CUDA build, or not imported)"),
        ("torch_npu", info.torch_npu if info.torch_npu else "not installed"),
        ("torch_npu import", show(info.torch_npu_import)),
        ("CANN toolkit", f"{info.cann} ({info.cann_path})" if info.cann else
         (f"version unknown ({info.cann_path})" if info.cann_path else NOT_COLLECTED)),
        ("CANN (runtime)", show(info.cann_runtime)),
        ("NPU driver", show(info.driver)),
        ("NPU firmware", show(info.firmware)),
        ("npu-smi", show(info.npu_smi)),
    ]
    width = max(len(name) for name, _ in rows) + 1
    lines = [f"npu-graph env ({info.tool})", ""]
    lines += [f"{name + ':':<{width}} {value}" for name, value in rows]
    lines.append(f"{'Devices:':<{width}} " + (NOT_COLLECTED if not info.devices else str(len(info.devices))))
    lines += [f"  {device}" for device in info.devices]
    lines.append("Packages:" if info.packages else "Packages: none of interest")
    lines += [f"  {name}=={version}" for name, version in sorted(info.packages.items())]
    lines.append("Variables:" if info.variables else "Variables: none of interest set")
    lines += [f"  {name}={value}" for name, value in info.variables.items()]
    for note in info.notes:
        lines.append(f"Note: {note}")
    return "\n".join(lines)
