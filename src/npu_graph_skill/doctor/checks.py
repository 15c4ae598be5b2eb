"""The checks, one function each, in dependency order (`CHECKS` at the bottom).

A check reads facts (files, environment, probes run in a child process), decides a status and
says why, with the evidence, a remedy and the source of the rule. Adding a check is writing one
function and listing it in `CHECKS`.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional

from npu_graph_skill.doctor import ascend, compat
from npu_graph_skill.doctor.context import CheckSpec, DoctorContext, Outcome
from npu_graph_skill.doctor.model import CRIT, FAIL, PASS, SKIP, WARN, Remedy, txt

# --- where the rules come from -------------------------------------------------------------
AT = "@9e73e708"  # Ascend/pytorch master, 2026-08-21
A_AUTOLOAD = "pytorch/pytorch torch/__init__.py:3017-3054@v2.13.0 (_import_device_backends, TORCH_DEVICE_BACKEND_AUTOLOAD)"
A_FAQ_LIBHCCL = f"Ascend/pytorch docs/zh/installation_guide/faq.md:232-250{AT} (ImportError: libhccl.so → install CANN and set its environment)"
A_FAQ_SHADOW = f"Ascend/pytorch docs/zh/installation_guide/faq.md:273-301{AT} (No module named 'torch_npu._C' inside a torch_npu source tree)"
A_SET_ENV = f"Ascend/pytorch README.md:102-107{AT} (source /usr/local/Ascend/ascend-toolkit/set_env.sh)"
A_CANN_VERSION = f"Ascend/pytorch torch_npu/utils/collect_env.py:75-89{AT} (CANN version from ascend_*_install.info)"
A_TASK_QUEUE_2 = f"Ascend/pytorch torch_npu/csrc/core/npu/NPUGraph.cpp:242-247{AT} (capture_begin: 'Do not support TASK_QUEUE_ENABLE = 2 during NPU graph capture', ERR00007)"
A_TASK_QUEUE_VALUES = f"Ascend/pytorch torch_npu/csrc/core/npu/register/OptionsManager.cpp:571-584{AT} ('TASK_QUEUE_ENABLE should be 0, 1 or 2')"
A_PIN_MEMORY = f"Ascend/pytorch torch_npu/csrc/core/npu/NPUGraph.cpp:249-258{AT} (capture_begin rejects pin_memory_expandable_segments, ERR00007)"
A_BLOCKING_OLD = "Ascend/pytorch torch_npu/csrc/framework/OpCommand.cpp:165-167@v2.8.0-7.2.0 (ASCEND_LAUNCH_BLOCKING=1: stream sync after every op, inside a capture too)"
A_BLOCKING_FIX = f"Ascend/pytorch 873b8cbc0 (2025-11-17, 'aclgraph support ASCEND_LAUNCH_BLOCKING'; first release line 7.3.0): OpCommand.cpp:173-176{AT} skips the sync while capturing"
A_BLOCKING_REPLAY = f"Ascend/pytorch torch_npu/csrc/core/npu/NPUGraph.cpp:405-407{AT} (replay() synchronizes the stream when ASCEND_LAUNCH_BLOCKING=1)"
A_NO_CACHING = f"Ascend/pytorch torch_npu/csrc/npu/Module.cpp:505-510{AT} (graph-tree checkpoint refuses PYTORCH_NO_NPU_MEMORY_CACHING)"
A_INDUCTOR_DEBUG = f"Ascend/pytorch torch_npu/_inductor/runtime/triton_heuristics.py:1869-1876{AT} (INDUCTOR_ASCEND_DUMP_FX_GRAPH / CHECK_ACCURACY raise under aclgraph capture)"
A_LOGS = f"Ascend/pytorch torch_npu/_logging/_internal.py:34-55{AT} (TORCH_NPU_LOGS replaces TORCH_LOGS; aliases aclgraph, npugraph)"
A_LOGS_FILTER = f"Ascend/pytorch torch_npu/csrc/logging/LogContext.cpp:13-62{AT} (TORCH_NPU_LOGS_FILTER, C++ lines only)"
A_GLOBAL_LOG = f"Ascend/pytorch torch_npu/csrc/core/npu/register/OptionsManager.cpp:265-279{AT} ('ASCEND_GLOBAL_LOG_LEVEL should be 0, 1, 2, 3 or 4')"
A_GRAPH_GC = f"Ascend/pytorch torch_npu/_compiler/_config.py:5, torch_npu/npu/graphs.py:903-904{AT} (TORCH_NPUGRAPH_GC: gc.collect() in graph.__enter__)"
A_NO_LOG_LEVEL = "Ascend/pytorch: no file at 9e73e708 or the v7.3.0 tags and no commit (git log --all -G 'GRAPHS?_LOG_LEVEL') has TORCH_NPU_GRAPHS_LOG_LEVEL"
A_ALIAS_HISTORY = "Ascend/pytorch torch_npu/_logging/_internal.py: 'aclgraph' registered since 8f398a7bd (2026-02-14; release line 26.0.0), 'npugraph' since 60c96a032 (2026-05-07; line 26.1.0); absent at v7.3.0"
A_ACL_LOOKUP = f"Ascend/pytorch torch_npu/csrc/core/npu/interface/AclInterface.cpp:1068-1076{AT} ('Failed to find function aclmdlRICaptureBegin', looked up in libascendcl)"
A_CAPTURE_SOC = f"Ascend/pytorch torch_npu/csrc/core/npu/interface/AclInterface.cpp:1210-1225{AT} (IsCaptureSupported: Ascend310P*, 910B*, 910_93*, 950) and NpuVariables.h:5-36{AT}"
A_GRAPH_API = f"Ascend/pytorch torch_npu/npu/__init__.py:111-143{AT}; torch_npu/npu/graphs.py:590 (NPUGraph), 873-880 (graph(npu_graph, ...)), 935 (make_graphed_callables){AT}"
A_DEFAULT_STREAM = f"Ascend/pytorch torch_npu/csrc/core/npu/NPUGraph.cpp:270-274{AT} (capture must be on a non-default stream)"
A_CUDA_GRAPHS = "pytorch/pytorch docs/source/notes/cuda.rst 'CUDA Graphs' (warm up on a side stream, torch.cuda.graph(g), copy_ into static inputs, replay); torch/cuda/graphs.py:365-439@v2.13.0"
A_NPU_SMI = "npu-smi info: health OK/Warning/Alarm/Critical, HBM usage, processes (hiascend npu-smi reference; layout as in vllm-project/vllm-ascend#12980)"

DEFAULT_SET_ENV_CMD = f"source {ascend.DEFAULT_SET_ENV}  # adjust to where CANN is installed"


def _source_command(ctx: DoctorContext) -> str:
    toolkit = ctx.data("cann").get("toolkit") or {}
    if toolkit.get("set_env"):
        return f"source {toolkit['set_env']}"
    return DEFAULT_SET_ENV_CMD


def _probe_failure(probe) -> str:
    error = (probe.data or {}).get("error")
    if error:
        return f"{error['type']}: {_first_line(error['message'])}"
    return probe.failure()


def _first_line(text: str, limit: int = 400) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


# ------------------------------------------------------------------------------------------
# Python and the accelerator backend
# ------------------------------------------------------------------------------------------

def check_python(ctx: DoctorContext) -> Outcome:
    probe = ctx.probe("info")
    if not probe.ok:
        return Outcome(CRIT, txt(f"cannot run the interpreter {ctx.python}: {probe.failure()}",
                                 f"无法运行解释器 {ctx.python}：{probe.failure()}"),
                       evidence=[" ".join(probe.command.argv)],
                       remedy=[Remedy(txt("point --python at a working interpreter (the one that runs your model)",
                                          "用 --python 指向可用的解释器（即运行模型的那个）"))])
    info = probe.data
    version = info.get("python", "")
    evidence = [f"{info.get('executable')} ({info.get('implementation')} {version}, {info.get('machine')})",
                f"platform: {info.get('platform')}"]
    if compat.version_key(version)[:2] < (3, 9):
        return Outcome(FAIL, txt(f"Python {version} is older than every torch_npu release with NPUGraph",
                                 f"Python {version} 过旧，带 NPUGraph 的 torch_npu 均不支持"),
                       evidence=evidence, anchors=[compat.SOURCE], data=info)
    return Outcome(PASS, txt(f"Python {version} ({info.get('machine')})", f"Python {version}（{info.get('machine')}）"),
                   evidence=evidence, data=info)


def check_torch(ctx: DoctorContext) -> Outcome:
    probe = ctx.probe("import", ["--modules", "torch"])
    data = probe.data or {}
    if not probe.ok or "torch_error" in data or "error" in data:
        error = data.get("torch_error") or data.get("error")
        reason = f"{error['type']}: {_first_line(error['message'])}" if error else probe.failure()
        installed = ctx.package("torch")
        return Outcome(CRIT, txt(f"torch cannot be imported (backend autoload off): {reason}",
                                 f"无法导入 torch（已关闭后端自动加载）：{reason}"),
                       evidence=[f"installed torch: {installed or 'none'}"] + (error or {}).get("traceback_tail", [])[-4:],
                       remedy=[Remedy(txt("install the PyTorch version that matches torch_npu (see the compatibility table)",
                                          "安装与 torch_npu 配套的 PyTorch 版本（见配套表）"),
                                      "pip install torch==<version>")],
                       anchors=[A_AUTOLOAD, compat.SOURCE])
    version = data.get("torch", "")
    evidence = [f"torch {version} at {os.path.dirname(data.get('torch_file') or '')}",
                "imported with TORCH_DEVICE_BACKEND_AUTOLOAD=0 so a broken backend cannot hide it"]
    out = {"version": version, "cuda": data.get("torch_cuda")}
    summary = txt(f"torch {version} imports", f"torch {version} 可正常导入")
    if ctx.backend == "npu" and ctx.package("torch-npu"):
        autoload = ctx.probe("import", ["--modules", "torch"], autoload=True)
        auto_error = (autoload.data or {}).get("torch_error")
        if auto_error or not autoload.ok:
            why = _first_line(auto_error["message"]) if auto_error else autoload.failure()
            out["autoload_error"] = why
            evidence.append(f"with autoload on (the default) `import torch` fails: {why}")
            summary = txt(f"torch {version} is fine; `import torch` fails only because torch_npu fails to load (see torch_npu)",
                          f"torch {version} 本身正常；`import torch` 失败仅因 torch_npu 加载失败（见 torch_npu 项）")
    if ctx.backend == "cuda" and not data.get("torch_cuda"):
        return Outcome(FAIL, txt(f"torch {version} is a CPU build: torch.version.cuda is None",
                                 f"torch {version} 为 CPU 版本：torch.version.cuda 为 None"),
                       evidence=evidence, data=out,
                       remedy=[Remedy(txt("install a CUDA build of torch", "安装 CUDA 版本的 torch"),
                                      "pip install torch --index-url https://download.pytorch.org/whl/cu128")])
    return Outcome(PASS, summary, evidence=evidence, anchors=[A_AUTOLOAD] if "autoload_error" in out else [], data=out)


# ------------------------------------------------------------------------------------------
# CANN, driver
# ------------------------------------------------------------------------------------------

def check_cann(ctx: DoctorContext) -> Outcome:
    toolkit = ascend.find_toolkit(ctx.environ, ctx.ascend_base)
    data = {"toolkit": toolkit.to_dict(), "version": toolkit.version}
    env_line = ", ".join(f"{v}={ctx.environ.get(v, '')}" for v in ascend.HOME_VARS if ctx.environ.get(v)) \
        or "ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME are not set"
    if not toolkit.path:
        return Outcome(FAIL, txt("no CANN toolkit found", "未找到 CANN 工具包"),
                       evidence=[env_line, "looked in: " + ", ".join(toolkit.tried)],
                       remedy=[Remedy(txt("install the CANN toolkit (and ops, NNAL) matching torch_npu, then source its set_env.sh",
                                          "安装与 torch_npu 配套的 CANN（Toolkit、ops、NNAL），再 source 其 set_env.sh"),
                                      DEFAULT_SET_ENV_CMD)],
                       anchors=[A_FAQ_LIBHCCL, compat.SOURCE], data=data)
    evidence = [f"toolkit: {toolkit.path} ({toolkit.found_by})", env_line]
    if toolkit.version:
        evidence.append(f"version {toolkit.version} from {toolkit.version_file}")
    source_cmd = f"source {toolkit.set_env}" if toolkit.set_env else DEFAULT_SET_ENV_CMD
    if toolkit.env_home and not toolkit.env_home_exists:
        return Outcome(FAIL, txt(f"ASCEND_HOME_PATH points to a missing directory: {toolkit.env_home}",
                                 f"ASCEND_HOME_PATH 指向不存在的目录：{toolkit.env_home}"),
                       evidence=evidence, remedy=[Remedy(txt("source the set_env.sh of the installed toolkit",
                                                             "source 已安装工具包的 set_env.sh"), source_cmd)],
                       anchors=[A_SET_ENV], data=data)
    if not toolkit.sourced:
        return Outcome(FAIL, txt(f"CANN {toolkit.version or '(version unknown)'} is installed but its set_env.sh was not sourced",
                                 f"已安装 CANN {toolkit.version or '（版本未知）'}，但未 source set_env.sh"),
                       evidence=evidence,
                       remedy=[Remedy(txt("source it in every shell that runs torch_npu (or add it to ~/.bashrc)",
                                          "在运行 torch_npu 的每个 shell 中 source（或写入 ~/.bashrc）"), source_cmd)],
                       anchors=[A_SET_ENV, A_FAQ_LIBHCCL], data=data)
    if not toolkit.version:
        return Outcome(WARN, txt("CANN is set up but its version could not be read", "CANN 环境已配置，但无法读取版本"),
                       evidence=evidence, anchors=[A_CANN_VERSION], data=data)
    if not toolkit.lib_on_loader_path:
        evidence.append(f"{os.path.join(toolkit.path, 'lib64')} is not on LD_LIBRARY_PATH")
        return Outcome(WARN, txt(f"CANN {toolkit.version}: lib64 is not on LD_LIBRARY_PATH; libascendcl/libhccl may not load",
                                 f"CANN {toolkit.version}：lib64 不在 LD_LIBRARY_PATH 中，libascendcl/libhccl 可能无法加载"),
                       evidence=evidence, remedy=[Remedy(txt("source set_env.sh again", "重新 source set_env.sh"), source_cmd)],
                       anchors=[A_SET_ENV], data=data)
    return Outcome(PASS, txt(f"CANN {toolkit.version} at {toolkit.path}, environment set",
                             f"CANN {toolkit.version}（{toolkit.path}），环境变量已设置"),
                   evidence=evidence, anchors=[A_CANN_VERSION], data=data)


def check_driver(ctx: DoctorContext) -> Outcome:
    driver = ascend.find_driver(ctx.ascend_base)
    smi = ascend.find_npu_smi(ctx.environ)
    data = {"driver": driver.to_dict(), "npu_smi": smi}
    evidence = [f"npu-smi: {smi or 'not found'}"]
    if not driver.path:
        return Outcome(FAIL, txt(f"no NPU driver at {os.path.join(ctx.ascend_base, 'driver')}",
                                 f"{os.path.join(ctx.ascend_base, 'driver')} 下没有 NPU 驱动"),
                       evidence=evidence,
                       remedy=[Remedy(txt("install the NPU driver and firmware; in a container, mount /usr/local/Ascend/driver and its version.info from the host",
                                          "安装 NPU 驱动与固件；容器内需从宿主机挂载 /usr/local/Ascend/driver 及 version.info"))],
                       data=data)
    if driver.version:
        evidence.insert(0, f"driver {driver.version} ({driver.version_file})")
    if driver.firmware_version:
        evidence.insert(1, f"firmware {driver.firmware_version} ({driver.firmware_file})")
    if not driver.version:
        return Outcome(WARN, txt("NPU driver directory found, but its version.info is missing or unreadable",
                                 "找到驱动目录，但 version.info 缺失或不可读"),
                       evidence=evidence, data=data,
                       remedy=[Remedy(txt("in a container, mount version.info from the host", "容器内请从宿主机挂载 version.info"))])
    in_range = ascend.firmware_in_range(driver.firmware_version, driver.firmware_range)
    if in_range is False:
        return Outcome(WARN, txt(f"firmware {driver.firmware_version} is outside the range the driver declares ({driver.firmware_range[0]}–{driver.firmware_range[1]})",
                                 f"固件 {driver.firmware_version} 不在驱动声明的兼容范围（{driver.firmware_range[0]}–{driver.firmware_range[1]}）内"),
                       evidence=evidence + [f"driver compatible_version_fw={driver.firmware_range}"], data=data,
                       remedy=[Remedy(txt("install the firmware that matches the driver", "安装与驱动配套的固件"))])
    fw = f", firmware {driver.firmware_version}" if driver.firmware_version else ""
    return Outcome(PASS, txt(f"driver {driver.version}{fw}", f"驱动 {driver.version}{fw}"), evidence=evidence, data=data)


# ------------------------------------------------------------------------------------------
# torch_npu
# ------------------------------------------------------------------------------------------

def check_torch_npu_installed(ctx: DoctorContext) -> Outcome:
    version = ctx.package("torch-npu")
    location = (ctx.info().get("locations") or {}).get("torch_npu", "")
    if not version and not location:
        torch_version = ctx.data("torch").get("version") or ctx.package("torch")
        matches = compat.releases_for_torch(torch_version)
        command = f"pip install torch-npu=={matches[0].package}" if matches else "pip install torch-npu==<version matching torch>"
        return Outcome(CRIT, txt("torch_npu is not installed", "未安装 torch_npu"),
                       evidence=[f"torch {torch_version or 'not installed'}; no torch-npu package metadata"],
                       remedy=[Remedy(txt("install the torch_npu release built for this torch", "安装与当前 torch 配套的 torch_npu"), command)],
                       anchors=[compat.SOURCE])
    return Outcome(PASS, txt(f"torch_npu {version or '(no metadata)'} installed", f"已安装 torch_npu {version or '（无元数据）'}"),
                   evidence=[f"torch-npu {version} at {location}"], data={"version": version, "location": location})


# Libraries the toolkit's set_env.sh puts on the loader path, and those the driver provides.
DRIVER_LIBS = ("libascend_hal.so", "libdrvdsmi_host.so", "libdcmi.so", "libc_sec.so", "libmmpa.so")
_MISSING_LIB = re.compile(r"(lib[\w.+-]*?\.so(?:\.[\d.]+)?): cannot open shared object file")
_UNDEFINED = re.compile(r"undefined symbol: (\S+)")


def check_torch_npu_import(ctx: DoctorContext) -> Outcome:
    probe = ctx.probe("import", ["--modules", "torch,torch_npu"])
    data = probe.data or {}
    info = ctx.info()
    version = ctx.package("torch-npu")
    shadow = bool(info.get("cwd_shadows_torch_npu"))
    if not probe.ok or "error" in data:
        return Outcome(CRIT, txt(f"importing torch_npu did not finish: {_probe_failure(probe)}",
                                 f"导入 torch_npu 未完成：{_probe_failure(probe)}"),
                       evidence=[" ".join(probe.command.argv)],
                       remedy=[Remedy(txt("run `python -c 'import torch_npu'` by hand to see the crash; check the CANN and driver findings above",
                                          "手动运行 `python -c 'import torch_npu'` 查看崩溃；并检查上方 CANN 与驱动项"))],
                       data={"importable": False})
    error = data.get("torch_npu_error")
    if error is None:
        out = {"importable": True, "version": data.get("torch_npu", version), "cann_runtime": data.get("cann_runtime", "")}
        evidence = [f"torch_npu {out['version']} from {os.path.dirname(data.get('torch_npu_file') or '')}"]
        if out["cann_runtime"]:
            evidence.append(f"CANN reported by the runtime: {out['cann_runtime']}")
        if shadow:
            return Outcome(WARN, txt("torch_npu imports here, but the current directory holds a torch_npu source tree that shadows it when you run from it",
                                     "torch_npu 可导入，但当前目录含 torch_npu 源码，从此目录运行时会遮蔽已安装的包"),
                           evidence=evidence, anchors=[A_FAQ_SHADOW], data=out)
        return Outcome(PASS, txt(f"torch_npu {out['version']} imports", f"torch_npu {out['version']} 可正常导入"),
                       evidence=evidence, data=out)
    message = error.get("message", "")
    full = " ".join([message] + error.get("chain", []))
    evidence = [f"torch_npu {version} installed, import fails:"] + [f"  {line}" for line in error.get("chain", [])[-3:]]
    out = {"importable": False, "version": version, "error": f"{error['type']}: {_first_line(message)}"}
    missing = _MISSING_LIB.search(full)
    if missing:
        lib = missing.group(1)
        out["missing_library"] = lib
        if lib.startswith(DRIVER_LIBS):
            return Outcome(CRIT, txt(f"torch_npu {version} is installed but cannot load: {lib} (NPU driver library) is missing",
                                     f"已安装 torch_npu {version}，但无法加载：缺少 {lib}（NPU 驱动库）"),
                           evidence=evidence,
                           remedy=[Remedy(txt("install the NPU driver, or mount /usr/local/Ascend/driver/lib64 into the container, then source set_env.sh",
                                              "安装 NPU 驱动，或在容器中挂载 /usr/local/Ascend/driver/lib64，再 source set_env.sh"),
                                          _source_command(ctx))],
                           anchors=[A_FAQ_LIBHCCL], data=out)
        cann_found = bool((ctx.data("cann").get("toolkit") or {}).get("path"))
        why = txt("CANN is installed but its environment is not set" if cann_found else "CANN is not installed or its environment is not set",
                  "已安装 CANN 但未配置环境变量" if cann_found else "未安装 CANN 或未配置其环境变量")
        return Outcome(CRIT, txt(f"torch_npu {version} is installed but not importable: {lib} not found — {why['en']}",
                                 f"已安装 torch_npu {version} 但无法导入：找不到 {lib} —— {why['zh']}"),
                       evidence=evidence,
                       remedy=([] if cann_found else [Remedy(txt("install the CANN toolkit (and ops, NNAL) that matches torch_npu",
                                                                  "安装与 torch_npu 配套的 CANN Toolkit（及 ops、NNAL）"))])
                       + [Remedy(txt("source the toolkit's set_env.sh in the shell that runs Python",
                                     "在运行 Python 的 shell 中 source 工具包的 set_env.sh"), _source_command(ctx))],
                       anchors=[A_FAQ_LIBHCCL, A_SET_ENV], data=out)
    if "torch_npu._C" in full and ("No module named" in full or shadow):
        return Outcome(CRIT, txt("torch_npu._C is missing: Python picks up a torch_npu source folder instead of the installed package",
                                 "缺少 torch_npu._C：Python 导入了 torch_npu 源码目录而非已安装的包"),
                       evidence=evidence, anchors=[A_FAQ_SHADOW], data=out,
                       remedy=[Remedy(txt("run from another directory than the torch_npu source tree", "换到 torch_npu 源码目录以外的目录运行"), "cd ~")])
    undefined = _UNDEFINED.search(full)
    if undefined:
        torch_version = ctx.data("torch").get("version", "")
        return Outcome(CRIT, txt(f"torch_npu {version} was built for another torch than {torch_version}: undefined symbol {undefined.group(1)[:80]}",
                                 f"torch_npu {version} 与 torch {torch_version} 不配套：未定义符号 {undefined.group(1)[:80]}"),
                       evidence=evidence, anchors=[compat.SOURCE], data=out,
                       remedy=[Remedy(txt("install the torch version the torch_npu release was built for (compatibility table)",
                                          "按配套表安装该 torch_npu 对应的 torch 版本"))])
    return Outcome(CRIT, txt(f"torch_npu {version} is installed but not importable: {out['error']}",
                             f"已安装 torch_npu {version} 但无法导入：{out['error']}"),
                   evidence=evidence + error.get("traceback_tail", [])[-3:], data=out,
                   remedy=[Remedy(txt("check the CANN and driver findings; then run `python -c 'import torch_npu'` to see the whole error",
                                      "先检查 CANN 与驱动项，再运行 `python -c 'import torch_npu'` 查看完整报错"))])


def check_versions(ctx: DoctorContext) -> Outcome:
    torch_version = ctx.data("torch").get("version") or ctx.package("torch")
    npu_version = ctx.package("torch-npu") or ctx.data("torch_npu_installed").get("version", "")
    cann_version = ctx.data("cann").get("version") or ctx.data("torch_npu_import").get("cann_runtime", "")
    python_version = ctx.info().get("python", "")
    evidence = [f"torch {torch_version}, torch_npu {npu_version}, CANN {cann_version or 'unknown'}, Python {python_version}"]
    release = compat.find_release(npu_version)
    data: Dict[str, Any] = {"torch": torch_version, "torch_npu": npu_version, "cann": cann_version,
                            "release": release._asdict() if release else None}
    expected_torch = release.torch if release else compat.base_version(npu_version)
    if compat.base_version(torch_version) != expected_torch:
        fix = compat.releases_for_torch(torch_version)
        return Outcome(FAIL, txt(f"torch {torch_version} does not match torch_npu {npu_version} (built for torch {expected_torch})",
                                 f"torch {torch_version} 与 torch_npu {npu_version} 不配套（其配套 torch 为 {expected_torch}）"),
                       evidence=evidence, anchors=[compat.SOURCE], data=data,
                       remedy=[Remedy(txt(f"install torch {expected_torch}", f"安装 torch {expected_torch}"), f"pip install torch=={expected_torch}")]
                       + ([Remedy(txt("or the torch_npu built for this torch", "或安装与此 torch 配套的 torch_npu"),
                                  f"pip install torch-npu=={fix[0].package}")] if fix else []))
    problems: List[str] = []
    zh: List[str] = []
    status = PASS
    if release is None:
        newest = compat.newest_release()
        status = WARN
        problems.append(f"torch_npu {npu_version} is not in the official table (newest there: {newest.package} with CANN {newest.cann}); its CANN pairing cannot be checked")
        zh.append(f"torch_npu {npu_version} 不在官方配套表中（表中最新：{newest.package}，配 CANN {newest.cann}），无法核对其 CANN 配套")
    else:
        evidence.append(f"table: torch-npu {release.package} = branch {release.branch}, torch {release.torch}, CANN {release.cann}")
        if cann_version and not compat.same_cann(release.cann, cann_version):
            status = WARN
            problems.append(f"CANN {cann_version} differs from the CANN {release.cann} torch_npu {release.package} was released with")
            zh.append(f"CANN {cann_version} 与 torch_npu {release.package} 配套的 CANN {release.cann} 不一致")
        elif not cann_version:
            status = WARN
            problems.append(f"CANN version unknown; torch_npu {release.package} expects CANN {release.cann}")
            zh.append(f"CANN 版本未知；torch_npu {release.package} 需配 CANN {release.cann}")
    supported = compat.python_supported(torch_version, python_version)
    if supported is False:
        status = WARN
        wanted = ", ".join(compat.PYTHON_FOR_TORCH[compat.base_version(torch_version)])
        problems.append(f"Python {python_version} is not listed for PyTorch {compat.base_version(torch_version)} (listed: {wanted})")
        zh.append(f"PyTorch {compat.base_version(torch_version)} 未列出 Python {python_version}（支持：{wanted}）")
    if status == PASS:
        return Outcome(PASS, txt(f"torch {torch_version} + torch_npu {npu_version} + CANN {cann_version} match the official table",
                                 f"torch {torch_version} + torch_npu {npu_version} + CANN {cann_version} 符合官方配套表"),
                       evidence=evidence, anchors=[compat.SOURCE], data=data)
    return Outcome(WARN, txt(f"torch {torch_version} matches torch_npu {npu_version}; " + "; ".join(problems),
                             f"torch {torch_version} 与 torch_npu {npu_version} 配套；" + "；".join(zh)),
                   evidence=evidence, anchors=[compat.SOURCE], data=data,
                   remedy=[Remedy(txt(f"use a combination from the table: {compat.SOURCE_URL}",
                                      f"请使用配套表中的组合：{compat.SOURCE_URL}"))])


# ------------------------------------------------------------------------------------------
# Devices, graph API, capture
# ------------------------------------------------------------------------------------------

VISIBLE_VARS = {"npu": ("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES"), "cuda": ("CUDA_VISIBLE_DEVICES",)}


def check_devices(ctx: DoctorContext) -> Outcome:
    probe = ctx.probe("devices", ["--backend", ctx.backend])
    visible = [f"{v}={ctx.environ[v]}" for v in VISIBLE_VARS[ctx.backend] if v in ctx.environ]
    evidence = visible or [f"{VISIBLE_VARS[ctx.backend][0]} not set (all devices visible)"]
    data = probe.data or {}
    if not probe.ok or "error" in data:
        return Outcome(CRIT, txt(f"querying devices failed: {_probe_failure(probe)}", f"查询设备失败：{_probe_failure(probe)}"),
                       evidence=evidence, data={"count": 0},
                       remedy=[Remedy(txt("check that the driver sees the devices", "确认驱动能识别设备"),
                                      "npu-smi info" if ctx.backend == "npu" else "nvidia-smi")])
    count = int(data.get("count") or 0)
    if count == 0:
        return Outcome(CRIT, txt("no device visible to torch", "torch 看不到任何设备"), evidence=evidence, data=data,
                       remedy=[Remedy(txt("check the device list and the visible-devices variable", "检查设备列表与可见设备变量"),
                                      "npu-smi info" if ctx.backend == "npu" else "nvidia-smi")])
    names = sorted({d.get("name", "?") for d in data.get("devices", [])})
    for device in data.get("devices", []):
        if "memory_free_mb" in device:
            evidence.append(f"device {device['index']}: {device.get('name')} — {device['memory_free_mb']} / {device['memory_total_mb']} MB free")
        elif "memory_error" in device:
            evidence.append(f"device {device['index']}: {device.get('name')} — memory query failed: {device['memory_error']}")
    return Outcome(PASS, txt(f"{count} device(s): {', '.join(names)}", f"{count} 个设备：{', '.join(names)}"),
                   evidence=evidence, data=data)


CORE_NPU_API = ("NPUGraph", "graph", "graph_pool_handle", "is_current_stream_capturing")
CORE_CUDA_API = ("CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing")
_CAPTURE_SOC = re.compile(r"^Ascend(310P\d|910B\d|910_93\d\d|950)")


def capture_supported_soc(name: str) -> Optional[bool]:
    """Whether torch_npu's IsCaptureSupported accepts this SoC (None when the name is not an Ascend SoC)."""
    if not name or not name.startswith("Ascend"):
        return None
    return bool(_CAPTURE_SOC.match(name))


def check_graph_api(ctx: DoctorContext) -> Outcome:
    probe = ctx.probe("graph_api", ["--backend", ctx.backend])
    data = probe.data or {}
    if not probe.ok or "error" in data:
        return Outcome(CRIT, txt(f"probing the graph API failed: {_probe_failure(probe)}", f"探测图 API 失败：{_probe_failure(probe)}"),
                       data=data)
    api = data.get("api") or {}
    core = CORE_NPU_API if ctx.backend == "npu" else CORE_CUDA_API
    missing_core = [name for name in core if not api.get(name)]
    missing_other = [name for name, present in api.items() if not present and name not in core]
    evidence = ["present: " + ", ".join(n for n, p in api.items() if p)]
    if data.get("graph_signature"):
        evidence.append(f"graph{data['graph_signature'].replace('(self, ', '(')}")
    anchors = [A_GRAPH_API] if ctx.backend == "npu" else [A_CUDA_GRAPHS]
    if missing_core:
        return Outcome(CRIT, txt(f"this build has no {', '.join(missing_core)}: graph mode is not available",
                                 f"当前版本缺少 {', '.join(missing_core)}：无法使用图模式"),
                       evidence=evidence, anchors=anchors, data=data,
                       remedy=[Remedy(txt("upgrade torch_npu to a release with NPUGraph (see the table)", "升级到带 NPUGraph 的 torch_npu（见配套表）"))]
                       if ctx.backend == "npu" else [])
    if ctx.backend == "npu":
        symbols = data.get("acl_symbols") or {}
        if "error" in symbols:
            evidence.append(f"libascendcl.so: {symbols['error']}")
        else:
            absent = [name for name, present in symbols.items() if not present]
            evidence.append("aclmdlRI* in libascendcl: " + ("all present" if not absent else "missing " + ", ".join(absent)))
            if "aclmdlRICaptureBegin" in absent or "aclmdlRICaptureGetInfo" in absent:
                return Outcome(CRIT, txt("CANN's libascendcl lacks the aclmdlRI capture functions: this CANN is too old for aclgraph",
                                         "CANN 的 libascendcl 缺少 aclmdlRI 捕获接口：CANN 版本过旧，不支持 aclgraph"),
                               evidence=evidence, anchors=anchors + [A_ACL_LOOKUP], data=data,
                               remedy=[Remedy(txt("install the CANN version the table pairs with torch_npu", "安装配套表中与 torch_npu 对应的 CANN"))])
        soc = data.get("soc", "")
        if soc:
            evidence.append(f"SoC: {soc}")
            if capture_supported_soc(soc) is False:
                return Outcome(CRIT, txt(f"{soc} does not support graph capture (torch_npu IsCaptureSupported)",
                                         f"{soc} 不支持图捕获（torch_npu IsCaptureSupported）"),
                               evidence=evidence, anchors=anchors + [A_CAPTURE_SOC], data=data)
    if missing_other:
        return Outcome(WARN, txt(f"graph API present; missing optional parts: {', '.join(missing_other)}",
                                 f"图 API 可用；缺少可选接口：{', '.join(missing_other)}"),
                       evidence=evidence, anchors=anchors, data=data)
    return Outcome(PASS, txt("graph API complete", "图 API 完整"), evidence=evidence, anchors=anchors, data=data)


def check_capture(ctx: DoctorContext) -> Outcome:
    probe = ctx.probe("capture", ["--backend", ctx.backend])
    data = probe.data or {}
    anchors = [A_DEFAULT_STREAM, A_GRAPH_API] if ctx.backend == "npu" else [A_CUDA_GRAPHS]
    if not probe.ok or "error" in data:
        return Outcome(CRIT, txt(f"the capture/replay self-test did not finish: {_probe_failure(probe)}",
                                 f"捕获/重放自检未完成：{_probe_failure(probe)}"),
                       evidence=[" ".join(probe.command.argv)], anchors=anchors, data=data,
                       remedy=[Remedy(txt("rerun with TORCH_NPU_LOGS=+aclgraph to see where it stops",
                                          "设置 TORCH_NPU_LOGS=+aclgraph 重跑，查看停在何处"),
                                      "TORCH_NPU_LOGS=+aclgraph npu-graph doctor -v")] if ctx.backend == "npu" else [])
    steps = data.get("steps", [])
    evidence = []
    for step in steps:
        if step.get("ok"):
            detail = step.get("detail")
            evidence.append(f"ok   {step['name']}" + (f": {detail}" if detail else ""))
        else:
            error = step.get("error") or {}
            evidence.append(f"FAIL {step['name']}: {error.get('type')}: {_first_line(error.get('message', ''))}")
    failed = [s for s in steps if not s.get("ok")]
    if failed or len(steps) < 5:
        first = failed[0] if failed else {"name": "?", "error": {"type": "", "message": "steps missing"}}
        err = first.get("error") or {}
        return Outcome(CRIT, txt(f"capture/replay self-test failed at {first['name']}: {err.get('type')}: {_first_line(err.get('message', ''), 200)}",
                                 f"捕获/重放自检在 {first['name']} 失败：{err.get('type')}：{_first_line(err.get('message', ''), 200)}"),
                       evidence=evidence, anchors=anchors, data=data,
                       remedy=[Remedy(txt("diagnose the error text", "诊断该报错"), "npu-graph diagnose -  # paste the error")])
    return Outcome(PASS, txt("captured on a side stream via graph(g) and via capture_begin/capture_end; replays gave the right results",
                             "已在旁路流上通过 graph(g) 与 capture_begin/capture_end 捕获；重放结果正确"),
                   evidence=evidence, anchors=anchors, data=data)


# ------------------------------------------------------------------------------------------
# Environment variables: settings that break capture, logging
# ------------------------------------------------------------------------------------------

def _release_line(ctx: DoctorContext) -> Optional[tuple]:
    """The installed torch_npu's release line as numbers, (7, 3, 0) / (26, 1, 0); None when unknown.

    A version newer than every row of the table is counted as the newest line.
    """
    version = ctx.package("torch-npu")
    release = compat.find_release(version)
    if release:
        return compat.version_key(release.line)
    if version and compat.version_key(compat.base_version(version)) > compat.version_key(compat.newest_release().torch):
        return compat.version_key(compat.newest_release().line)
    return None


def check_capture_settings(ctx: DoctorContext) -> Outcome:
    env = ctx.environ
    crit, fail, warn = [], [], []
    anchors: List[str] = []
    remedy: List[Remedy] = []
    evidence = [f"{name}={env[name]}" for name in ("TASK_QUEUE_ENABLE", "ASCEND_LAUNCH_BLOCKING", "PYTORCH_NPU_ALLOC_CONF",
                                                   "PYTORCH_NO_NPU_MEMORY_CACHING", "INDUCTOR_ASCEND_DUMP_FX_GRAPH",
                                                   "INDUCTOR_ASCEND_CHECK_ACCURACY") if name in env]
    queue = env.get("TASK_QUEUE_ENABLE", "").strip()
    if queue == "2":
        crit.append(txt("TASK_QUEUE_ENABLE=2 is rejected by capture_begin", "TASK_QUEUE_ENABLE=2 会被 capture_begin 拒绝"))
        anchors.append(A_TASK_QUEUE_2)
        remedy.append(Remedy(txt("use task queue level 1 for graph mode", "图模式下使用 1 级任务队列"), "export TASK_QUEUE_ENABLE=1"))
    elif queue and queue not in ("0", "1"):
        fail.append(txt(f"TASK_QUEUE_ENABLE={queue} is rejected at start-up (0, 1 or 2)", f"TASK_QUEUE_ENABLE={queue} 启动即报错（只能为 0、1、2）"))
        anchors.append(A_TASK_QUEUE_VALUES)
        remedy.append(Remedy(txt("set it to 1", "设为 1"), "export TASK_QUEUE_ENABLE=1"))
    alloc = env.get("PYTORCH_NPU_ALLOC_CONF", "")
    if re.search(r"pin_memory_expandable_segments\s*:\s*True", alloc):
        crit.append(txt("PYTORCH_NPU_ALLOC_CONF has pin_memory_expandable_segments:True, which capture_begin rejects",
                        "PYTORCH_NPU_ALLOC_CONF 含 pin_memory_expandable_segments:True，capture_begin 会拒绝"))
        anchors.append(A_PIN_MEMORY)
        kept = ",".join(p for p in alloc.split(",") if not p.strip().startswith("pin_memory_expandable_segments"))
        remedy.append(Remedy(txt("drop that option (expandable_segments:True is fine)", "去掉该选项（expandable_segments:True 可以保留）"),
                             f"export PYTORCH_NPU_ALLOC_CONF={kept}" if kept else "unset PYTORCH_NPU_ALLOC_CONF"))
    if env.get("ASCEND_LAUNCH_BLOCKING", "").strip() == "1":
        line = _release_line(ctx)
        if line is not None and line >= (7, 3, 0):
            warn.append(txt("ASCEND_LAUNCH_BLOCKING=1: capture works on this torch_npu, but every replay synchronizes and the task queue is off, so graph mode gains nothing; use it only to debug",
                            "ASCEND_LAUNCH_BLOCKING=1：此版本可捕获，但每次重放都会同步且任务队列关闭，图模式失去收益；仅用于调试"))
            anchors += [A_BLOCKING_FIX, A_BLOCKING_REPLAY]
        else:
            crit.append(txt("ASCEND_LAUNCH_BLOCKING=1 synchronizes after every op, inside a capture too, on torch_npu releases before the 7.3.0 line: capture fails",
                            "ASCEND_LAUNCH_BLOCKING=1 在 7.3.0 之前的 torch_npu 中每个算子后都会同步（捕获中亦然）：捕获失败"))
            anchors += [A_BLOCKING_OLD, A_BLOCKING_FIX]
        remedy.append(Remedy(txt("unset it for graph mode", "图模式下取消该设置"), "unset ASCEND_LAUNCH_BLOCKING"))
    if env.get("PYTORCH_NO_NPU_MEMORY_CACHING", "").strip() == "1":
        warn.append(txt("PYTORCH_NO_NPU_MEMORY_CACHING=1: the compiled graph tree (torch.compile reduce-overhead) refuses to checkpoint its pool",
                        "PYTORCH_NO_NPU_MEMORY_CACHING=1：编译图树（torch.compile reduce-overhead）无法做内存池检查点"))
        anchors.append(A_NO_CACHING)
        remedy.append(Remedy(txt("unset it for graph mode", "图模式下取消该设置"), "unset PYTORCH_NO_NPU_MEMORY_CACHING"))
    for name in ("INDUCTOR_ASCEND_DUMP_FX_GRAPH", "INDUCTOR_ASCEND_CHECK_ACCURACY"):
        if env.get(name, "").strip() not in ("", "0"):
            fail.append(txt(f"{name} is set: Inductor kernels raise when they run under aclgraph capture",
                            f"已设置 {name}：Inductor 内核在 aclgraph 捕获中运行时会报错"))
            anchors.append(A_INDUCTOR_DEBUG)
            remedy.append(Remedy(txt(f"unset {name}", f"取消 {name}"), f"unset {name}"))
    anchors = list(dict.fromkeys(anchors))
    for status, items in ((CRIT, crit), (FAIL, fail), (WARN, warn)):
        if items:
            allitems = crit + fail + warn
            return Outcome(status, txt("; ".join(i["en"] for i in allitems), "；".join(i["zh"] for i in allitems)),
                           evidence=evidence, remedy=remedy, anchors=anchors)
    return Outcome(PASS, txt("no setting that breaks capture (TASK_QUEUE_ENABLE, ASCEND_LAUNCH_BLOCKING, PYTORCH_NPU_ALLOC_CONF)",
                             "无破坏捕获的设置（TASK_QUEUE_ENABLE、ASCEND_LAUNCH_BLOCKING、PYTORCH_NPU_ALLOC_CONF）"),
                   evidence=evidence)


LOG_VARS = {
    "npu": ("TORCH_NPU_LOGS", "TORCH_NPU_LOGS_FILTER", "TORCH_LOGS", "ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_PROCESS_LOG_PATH",
            "ASCEND_SLOG_PRINT_TO_STDOUT", "TORCH_NPUGRAPH_GC", "TORCH_NPU_COMPACT_ERROR_OUTPUT", "TORCH_SHOW_CPP_STACKTRACES"),
    "cuda": ("TORCH_LOGS", "CUDA_LAUNCH_BLOCKING", "TORCH_SHOW_CPP_STACKTRACES"),
}


def installed_log_aliases(torch_npu_dir: str) -> Optional[List[str]]:
    """The graph log aliases the installed torch_npu registers (read from its source, not imported)."""
    path = os.path.join(torch_npu_dir, "_logging", "_internal.py")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(200_000)
    except OSError:
        return None
    return [alias for alias in ("aclgraph", "npugraph") if re.search(r'register_log\(\s*"%s"' % alias, text)]


def check_log_vars(ctx: DoctorContext) -> Outcome:
    env = ctx.environ
    evidence = [f"{name}={env[name]}" for name in LOG_VARS[ctx.backend] if name in env] or \
        [txt("no logging variable set", "未设置日志变量")["en"]]
    if ctx.backend == "cuda":
        return Outcome(PASS, txt("for capture debugging: TORCH_LOGS=cudagraphs (graph trees), TORCH_SHOW_CPP_STACKTRACES=1",
                                 "调试捕获：TORCH_LOGS=cudagraphs（graph tree）、TORCH_SHOW_CPP_STACKTRACES=1"),
                       evidence=evidence, remedy=[Remedy(txt("verbose graph logs", "详细图日志"), "export TORCH_LOGS=cudagraphs")])
    warn = []
    anchors = [A_LOGS, A_LOGS_FILTER]
    if "TORCH_NPU_GRAPHS_LOG_LEVEL" in env:
        warn.append(txt("TORCH_NPU_GRAPHS_LOG_LEVEL does not exist in torch_npu and has no effect",
                        "torch_npu 中不存在 TORCH_NPU_GRAPHS_LOG_LEVEL，设置无效"))
        evidence.append(f"TORCH_NPU_GRAPHS_LOG_LEVEL={env['TORCH_NPU_GRAPHS_LOG_LEVEL']}")
        anchors.append(A_NO_LOG_LEVEL)
    if env.get("TORCH_NPU_LOGS") is not None and env.get("TORCH_LOGS"):
        warn.append(txt("TORCH_LOGS is ignored while TORCH_NPU_LOGS is set; put upstream names (cudagraphs, +inductor) into TORCH_NPU_LOGS",
                        "设置 TORCH_NPU_LOGS 后 TORCH_LOGS 被忽略；请把上游名称（cudagraphs、+inductor）写进 TORCH_NPU_LOGS"))
    location = (ctx.info().get("locations") or {}).get("torch_npu", "")
    aliases = installed_log_aliases(location) if location else None
    wanted = [a for a in ("aclgraph", "npugraph") if re.search(r"(^|,)\s*[+-]?%s\b" % a, env.get("TORCH_NPU_LOGS", ""))]
    if aliases is not None:
        evidence.append(f"graph log aliases in this torch_npu: {', '.join(aliases) or 'none'}")
        unknown = [a for a in wanted if a not in aliases]
        if unknown:
            warn.append(txt(f"this torch_npu has no '{unknown[0]}' log alias: torch rejects TORCH_NPU_LOGS with 'Invalid log settings'; use TORCH_NPU_LOGS=+{aliases[0] if aliases else 'cudagraphs'}".replace("+cudagraphs", "cudagraphs"),
                            f"此 torch_npu 无 '{unknown[0]}' 日志别名：torch 会以 'Invalid log settings' 拒绝；请改用 TORCH_NPU_LOGS={'+' + aliases[0] if aliases else 'cudagraphs'}"))
            anchors.append(A_ALIAS_HISTORY)
    level = env.get("ASCEND_GLOBAL_LOG_LEVEL", "").strip()
    if level and level not in ("0", "1", "2", "3", "4"):
        return Outcome(FAIL, txt(f"ASCEND_GLOBAL_LOG_LEVEL={level} makes torch_npu raise (allowed: 0-4)",
                                 f"ASCEND_GLOBAL_LOG_LEVEL={level} 会使 torch_npu 报错（只能为 0-4）"),
                       evidence=evidence, anchors=[A_GLOBAL_LOG],
                       remedy=[Remedy(txt("use 1 (info) while debugging, 3 (error) otherwise", "调试用 1（info），平时用 3（error）"),
                                      "export ASCEND_GLOBAL_LOG_LEVEL=3")])
    graph_alias = "aclgraph" if aliases is None or "aclgraph" in aliases else None
    logs_value = f"+{graph_alias},cudagraphs" if graph_alias else "cudagraphs"
    hints = [Remedy(txt("graph lifecycle logs (Python and C++ NPUGRAPH lines) for capture debugging",
                        "用于调试捕获的图生命周期日志（Python 与 C++ NPUGRAPH 行）"), f"export TORCH_NPU_LOGS={logs_value}"),
             Remedy(txt("keep only C++ lines containing a keyword", "只保留含关键字的 C++ 日志行"), "export TORCH_NPU_LOGS_FILTER=+NPUGRAPH"),
             Remedy(txt("CANN plog at info level, written to a directory you choose", "CANN plog 设为 info 级，并写到指定目录"),
                    "export ASCEND_GLOBAL_LOG_LEVEL=1 ASCEND_PROCESS_LOG_PATH=$PWD/plog"),
             Remedy(txt("only if host memory grows across captures: gc.collect() before each capture (slows capture)",
                        "仅当多次捕获间主机内存增长时：每次捕获前 gc.collect()（会变慢）"), "export TORCH_NPUGRAPH_GC=1")]
    anchors += [A_GLOBAL_LOG, A_GRAPH_GC]
    if warn:
        return Outcome(WARN, txt("; ".join(w["en"] for w in warn), "；".join(w["zh"] for w in warn)),
                       evidence=evidence, remedy=hints, anchors=anchors)
    return Outcome(PASS, txt(f"logging variables are valid; for capture debugging set TORCH_NPU_LOGS={logs_value}",
                             f"日志变量有效；调试捕获可设置 TORCH_NPU_LOGS={logs_value}"),
                   evidence=evidence, remedy=hints, anchors=anchors)


# ------------------------------------------------------------------------------------------
# Device health and memory (npu-smi / nvidia-smi)
# ------------------------------------------------------------------------------------------

def check_device_health(ctx: DoctorContext) -> Outcome:
    from npu_graph_skill.doctor import smi

    timeout = ctx.timeouts.get("smi", 30.0)
    if ctx.backend == "cuda":
        result = ctx.runner(list(smi.NVIDIA_SMI_QUERY), timeout, env=ctx.child_env())
        if not result.ok:
            return Outcome(WARN, txt(f"nvidia-smi gave no answer: {result.describe_failure()}", f"nvidia-smi 无输出：{result.describe_failure()}"))
        gpus = smi.parse_nvidia_smi_csv(result.stdout)
        evidence = [f"GPU {g.index} {g.name}: driver {g.driver}, {g.memory_used_mb} / {g.memory_total_mb} MiB used" for g in gpus]
        busy = [g for g in gpus if g.memory_total_mb and g.memory_used_mb is not None and g.memory_used_mb > 0.9 * g.memory_total_mb]
        data = {"gpus": [g.to_dict() for g in gpus]}
        if busy:
            return Outcome(WARN, txt(f"{len(busy)} GPU(s) over 90% memory used by other processes", f"{len(busy)} 块 GPU 显存占用超过 90%"),
                           evidence=evidence, data=data)
        return Outcome(PASS, txt(f"{len(gpus)} GPU(s), driver {gpus[0].driver if gpus else '?'}", f"{len(gpus)} 块 GPU，驱动 {gpus[0].driver if gpus else '?'}"),
                       evidence=evidence, data=data)
    tool = ctx.data("driver").get("npu_smi") or ascend.find_npu_smi(ctx.environ)
    if not tool:
        return Outcome(WARN, txt("npu-smi not found: device health and memory cannot be read", "未找到 npu-smi：无法读取设备健康与内存"),
                       remedy=[Remedy(txt("in a container, mount /usr/local/bin/npu-smi and /usr/local/dcmi from the host",
                                          "容器内请从宿主机挂载 /usr/local/bin/npu-smi 与 /usr/local/dcmi"))], anchors=[A_NPU_SMI])
    result = ctx.runner([tool, "info"], timeout, env=ctx.child_env())
    if not result.ok:
        tail = _first_line(result.stdout + "\n" + result.stderr)
        return Outcome(FAIL, txt(f"`npu-smi info` failed: {result.describe_failure()} {tail}".strip(),
                                 f"`npu-smi info` 失败：{result.describe_failure()} {tail}".strip()),
                       evidence=[tail] if tail else [], anchors=[A_NPU_SMI],
                       remedy=[Remedy(txt("the driver cannot talk to the devices: check the driver installation and dmesg",
                                          "驱动无法访问设备：检查驱动安装与 dmesg"), "npu-smi info")])
    report = smi.parse_npu_smi(result.stdout)
    data = report.to_dict()
    if not report.devices:
        return Outcome(WARN, txt("npu-smi printed no device rows this parser understands", "npu-smi 输出中没有可解析的设备行"),
                       evidence=[_first_line(result.stdout)], data=data, anchors=[A_NPU_SMI])
    evidence = []
    for device in report.devices:
        memory = f"{device.memory_used_mb} / {device.memory_total_mb} MB" if device.memory_total_mb else "memory ?"
        evidence.append(f"{device.label} {device.name}: health {device.health}, {memory}")
    for process in report.processes:
        evidence.append(f"NPU {process.npu} chip {process.chip}: pid {process.pid} {process.name} holds {process.memory_mb} MB")
    bad = [d for d in report.devices if d.health in ("Alarm", "Critical")]
    warned = [d for d in report.devices if d.health in ("Warning", "UNKNOWN")]
    full = [d for d in report.devices if d.memory_total_mb and d.memory_used_mb is not None
            and d.memory_used_mb > 0.9 * d.memory_total_mb]
    remedy = [Remedy(txt("read the health error codes", "查看健康状态错误码"), "npu-smi info -t health -i <NPU id>")]
    if bad:
        return Outcome(FAIL, txt(f"{len(bad)} device(s) report health {bad[0].health}", f"{len(bad)} 个设备健康状态为 {bad[0].health}"),
                       evidence=evidence, remedy=remedy, data=data, anchors=[A_NPU_SMI])
    if warned or full:
        parts_en, parts_zh = [], []
        if warned:
            parts_en.append(f"{len(warned)} device(s) report health {warned[0].health}")
            parts_zh.append(f"{len(warned)} 个设备健康状态为 {warned[0].health}")
        if full:
            parts_en.append(f"{len(full)} device(s) have over 90% memory in use (other processes?)")
            parts_zh.append(f"{len(full)} 个设备内存占用超过 90%（是否有其他进程？）")
        return Outcome(WARN, txt("; ".join(parts_en), "；".join(parts_zh)), evidence=evidence, remedy=remedy, data=data,
                       anchors=[A_NPU_SMI])
    return Outcome(PASS, txt(f"{len(report.devices)} chip(s) healthy (npu-smi {report.version})",
                             f"{len(report.devices)} 个芯片状态正常（npu-smi {report.version}）"),
                   evidence=evidence, data=data, anchors=[A_NPU_SMI])


# ------------------------------------------------------------------------------------------
# The order: a check runs only when every check it depends on passed (PASS or WARN).
# ------------------------------------------------------------------------------------------
NPU, CUDA, BOTH = ("npu",), ("cuda",), ("npu", "cuda")

CHECKS = (
    CheckSpec("python", txt("Python", "Python"), check_python),
    CheckSpec("cann", txt("CANN toolkit", "CANN 工具包"), check_cann, backends=NPU),
    CheckSpec("driver", txt("NPU driver / firmware", "NPU 驱动 / 固件"), check_driver, backends=NPU),
    CheckSpec("torch", txt("PyTorch", "PyTorch"), check_torch, ("python",)),
    CheckSpec("torch_npu_installed", txt("torch_npu installed", "torch_npu 安装"), check_torch_npu_installed, ("python",), NPU),
    CheckSpec("torch_npu_import", txt("torch_npu import", "torch_npu 导入"), check_torch_npu_import,
              ("torch", "torch_npu_installed"), NPU),
    CheckSpec("versions", txt("Version compatibility", "版本配套"), check_versions, ("torch", "torch_npu_installed"), NPU),
    CheckSpec("devices", txt("Devices", "设备"), check_devices, ("torch_npu_import",), NPU),
    CheckSpec("devices", txt("Devices", "设备"), check_devices, ("torch",), CUDA),
    CheckSpec("graph_api", txt("Graph API", "图模式 API"), check_graph_api, ("torch_npu_import",), NPU),
    CheckSpec("graph_api", txt("Graph API", "图模式 API"), check_graph_api, ("torch",), CUDA),
    CheckSpec("capture_settings", txt("Settings that break capture", "破坏捕获的设置"), check_capture_settings, (), NPU),
    CheckSpec("log_vars", txt("Logging variables", "日志变量"), check_log_vars),
    CheckSpec("capture", txt("Capture / replay self-test", "捕获 / 重放自检"), check_capture, ("devices", "graph_api")),
    CheckSpec("device_health", txt("Device health / memory (npu-smi)", "设备健康 / 内存（npu-smi）"), check_device_health,
              ("driver",), NPU),
    CheckSpec("device_health", txt("Device health / memory (nvidia-smi)", "设备健康 / 内存（nvidia-smi）"), check_device_health,
              ("devices",), CUDA),
)


def checks_for(backend: str) -> List[CheckSpec]:
    return [spec for spec in CHECKS if backend in spec.backends]


__all__ = ["CHECKS", "checks_for", "SKIP"]
