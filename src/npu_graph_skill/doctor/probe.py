"""Probes the doctor runs in a child process, in the interpreter being checked.

Run as a script (`python probe.py NAME [--backend npu|cuda]`), never imported by the doctor: the
checked interpreter need not have npu-graph-skill installed, and a crash or hang here must not
take the doctor down. Standard library + torch only; Python 3.9 syntax. The answer is one JSON
line starting with MARK on stdout (torch and CANN may print their own lines around it).
"""
import os
import sys

# This folder holds the doctor's own modules (model.py, commands.py ...): keep them from
# shadowing anything torch or its dependencies import.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import json  # noqa: E402
import platform  # noqa: E402
import traceback  # noqa: E402

MARK = "@@npu-graph-probe@@"
PACKAGES = ("torch", "torch-npu", "torch_npu", "torchair", "torchvision", "numpy", "pyyaml", "triton",
            "triton-ascend", "vllm", "vllm-ascend", "sglang", "transformers", "mindie-turbo")


def emit(data):
    sys.stdout.write("\n" + MARK + json.dumps(data, default=str) + "\n")
    sys.stdout.flush()


def error_info(exc):
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(lines)
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:4000],
        "traceback_tail": text.strip().splitlines()[-12:],
        "chain": [type(e).__name__ + ": " + str(e)[:500] for e in _chain(exc)],
    }


def _chain(exc):
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return list(reversed(seen))  # the root cause first


# ------------------------------------------------------------------------------------------
def probe_info(args):
    """Interpreter and package metadata, importing nothing heavy."""
    import importlib.util

    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        metadata = None
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name) if metadata else None
        except Exception:  # noqa: BLE001 - not installed, or broken metadata
            continue
    if "torch_npu" in versions and "torch-npu" not in versions:
        versions["torch-npu"] = versions.pop("torch_npu")
    versions.pop("torch_npu", None)
    locations = {}
    for module in ("torch", "torch_npu"):
        try:
            spec = importlib.util.find_spec(module)  # finds the package without running it
        except Exception:  # noqa: BLE001
            spec = None
        if spec is not None:
            paths = list(spec.submodule_search_locations or [])
            locations[module] = paths[0] if paths else (spec.origin or "")
    shadow = os.path.isfile(os.path.join(os.getcwd(), "torch_npu", "__init__.py"))
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "machine": platform.machine(),
        "platform": platform.platform(),
        "libc": " ".join(platform.libc_ver()).strip(),
        "packages": versions,
        "locations": locations,
        "cwd_shadows_torch_npu": shadow,
    }


def probe_import(args):
    """Import torch (and torch_npu): versions, or the exact error."""
    out = {"autoload": os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD", "")}
    try:
        import torch
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a broken build counts too
        out["torch_error"] = error_info(exc)
        return out
    out["torch"] = getattr(torch, "__version__", "")
    version = getattr(torch, "version", None)
    out["torch_cuda"] = getattr(version, "cuda", None)
    out["torch_git"] = getattr(version, "git_version", None)
    out["torch_file"] = getattr(torch, "__file__", "")
    if "torch_npu" in args.modules:
        try:
            import torch_npu
        except BaseException as exc:  # noqa: BLE001
            out["torch_npu_error"] = error_info(exc)
            return out
        out["torch_npu"] = getattr(torch_npu, "__version__", "")
        out["torch_npu_file"] = getattr(torch_npu, "__file__", "")
        try:
            from torch_npu.npu.utils import get_cann_version
            out["cann_runtime"] = get_cann_version("CANN")
        except Exception as exc:  # noqa: BLE001 - CANN < 8.1.RC1 has no such query
            out["cann_runtime_error"] = str(exc)[:300]
    return out


def _accelerator(backend):
    import torch

    if backend == "npu":
        import torch_npu  # noqa: F401 - registers torch.npu

        return torch.npu
    return torch.cuda


def probe_devices(args):
    mod = _accelerator(args.backend)
    out = {"available": bool(mod.is_available()), "count": int(mod.device_count()), "devices": []}
    for index in range(out["count"]):
        entry = {"index": index}
        try:
            entry["name"] = mod.get_device_name(index)
        except Exception as exc:  # noqa: BLE001
            entry["name_error"] = str(exc)[:300]
        if index > 0:  # memory needs a context on the device: open one, not eight (npu-smi has the rest)
            out["devices"].append(entry)
            continue
        try:
            free, total = mod.mem_get_info(index)
            entry["memory_free_mb"] = int(free // (1 << 20))
            entry["memory_total_mb"] = int(total // (1 << 20))
        except Exception as exc:  # noqa: BLE001
            entry["memory_error"] = str(exc)[:300]
        out["devices"].append(entry)
    return out


NPU_GRAPH_API = ("NPUGraph", "graph", "make_graphed_callables", "graph_pool_handle",
                 "is_current_stream_capturing", "graph_task_group_begin", "graph_task_group_end",
                 "graph_task_update_begin", "graph_task_update_end", "ExternalEvent")
CUDA_GRAPH_API = ("CUDAGraph", "graph", "make_graphed_callables", "graph_pool_handle",
                  "is_current_stream_capturing")
ACL_GRAPH_SYMBOLS = ("aclmdlRICaptureBegin", "aclmdlRICaptureEnd", "aclmdlRICaptureGetInfo",
                     "aclmdlRIExecuteAsync", "aclmdlRIDestroy", "aclmdlRICaptureTaskGrpBegin",
                     "aclmdlRICaptureTaskUpdateBegin")


def probe_graph_api(args):
    import inspect

    import torch

    out = {}
    if args.backend == "npu":
        import torch_npu

        namespace = torch_npu.npu
        names = NPU_GRAPH_API
    else:
        namespace = torch.cuda
        names = CUDA_GRAPH_API
    out["api"] = {name: hasattr(namespace, name) for name in names}
    graph_cls = getattr(namespace, "graph", None)
    if graph_cls is not None:
        try:
            out["graph_signature"] = str(inspect.signature(graph_cls.__init__))
        except (TypeError, ValueError):
            pass
    if args.backend == "npu":
        out["acl_symbols"] = _acl_symbols()
        try:
            if torch.npu.device_count() > 0:
                out["soc"] = torch.npu.get_device_name(0)
        except Exception as exc:  # noqa: BLE001
            out["soc_error"] = str(exc)[:300]
    else:
        try:
            if torch.cuda.device_count() > 0:
                out["capability"] = list(torch.cuda.get_device_capability(0))
                out["device_name"] = torch.cuda.get_device_name(0)
        except Exception as exc:  # noqa: BLE001
            out["device_error"] = str(exc)[:300]
    return out


def _acl_symbols():
    """Which aclmdlRI* functions libascendcl exports: torch_npu looks them up the same way (dlsym)."""
    import ctypes

    try:
        lib = ctypes.CDLL("libascendcl.so")
    except OSError as exc:
        return {"error": str(exc)[:300]}
    return {name: hasattr(lib, name) for name in ACL_GRAPH_SYMBOLS}


def probe_capture(args):
    """Capture and replay a tiny graph the right way, twice, and check what replay computed.

    Both ways capture on a side stream after a warm-up there (the default stream is refused),
    and new input is copied into the captured tensor before replay.
    """
    import torch

    mod = _accelerator(args.backend)
    if args.backend == "npu":
        import torch_npu

        graph_cls, graph_ctx = torch_npu.npu.NPUGraph, torch_npu.npu.graph
    else:
        graph_cls, graph_ctx = torch.cuda.CUDAGraph, torch.cuda.graph
    device = torch.device(args.backend, 0)
    mod.set_device(0)
    out = {"device": str(device), "steps": []}

    def step(name, func):
        try:
            detail = func()
            out["steps"].append({"name": name, "ok": True, "detail": detail})
            return True
        except BaseException as exc:  # noqa: BLE001
            out["steps"].append({"name": name, "ok": False, "error": error_info(exc)})
            return False

    static_x = torch.ones(8, 8, device=device)
    state = {}

    def warm_up():
        side = mod.Stream()
        side.wait_stream(mod.current_stream())
        with mod.stream(side):
            for _ in range(3):
                static_x * 2 + 1
        mod.current_stream().wait_stream(side)
        mod.synchronize()
        return "3 iterations on a side stream"

    def context_manager():
        graph = graph_cls()
        flags = {}
        with graph_ctx(graph):  # the graph object is required; it picks its own side stream
            state["y"] = static_x * 2 + 1
            flags["capturing"] = bool(mod.is_current_stream_capturing())
        state["g1"] = graph
        return {"capturing_inside": flags["capturing"]}

    def replay_context_manager():
        static_x.copy_(torch.full((8, 8), 3.0, device=device))
        state["g1"].replay()
        mod.synchronize()
        got = state["y"].float().cpu()
        want = torch.full((8, 8), 7.0)
        if not torch.equal(got, want):
            raise AssertionError("replayed result %s != expected 7.0" % (got.flatten()[:4].tolist(),))
        return "y = 2x + 1 recomputed for new x (3 -> 7)"

    def manual_capture():
        graph = graph_cls()
        side = mod.Stream()
        side.wait_stream(mod.current_stream())
        with mod.stream(side):
            graph.capture_begin()
            try:
                state["z"] = static_x * 3
            finally:
                graph.capture_end()  # end on the stream that began (NPUGraph.cpp capture_end)
        mod.current_stream().wait_stream(side)
        state["g2"] = graph
        return "capture_begin/capture_end on a side stream"

    def replay_manual():
        static_x.copy_(torch.full((8, 8), 5.0, device=device))
        state["g2"].replay()  # replay on the default stream is allowed
        mod.synchronize()
        got = state["z"].float().cpu()
        if not torch.equal(got, torch.full((8, 8), 15.0)):
            raise AssertionError("replayed result %s != expected 15.0" % (got.flatten()[:4].tolist(),))
        return "z = 3x recomputed for new x (5 -> 15)"

    if step("warm_up", warm_up):
        if step("graph_context_manager", context_manager):
            step("replay_context_manager", replay_context_manager)
        if step("manual_capture", manual_capture):
            step("replay_manual", replay_manual)
    return out


PROBES = {
    "info": probe_info,
    "import": probe_import,
    "devices": probe_devices,
    "graph_api": probe_graph_api,
    "capture": probe_capture,
}


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(prog="probe")
    parser.add_argument("name", choices=sorted(PROBES))
    parser.add_argument("--backend", choices=("npu", "cuda"), default="npu")
    parser.add_argument("--modules", default="torch")
    args = parser.parse_args(argv)
    args.modules = args.modules.split(",")
    try:
        data = PROBES[args.name](args)
    except BaseException as exc:  # noqa: BLE001 - report it; the doctor decides what it means
        data = {"error": error_info(exc)}
    emit(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
