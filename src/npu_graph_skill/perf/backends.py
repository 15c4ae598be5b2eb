"""The accelerator behind `perf bench`, behind one small interface.

torch_npu mirrors torch.cuda (`torch.npu.Stream`, `torch.npu.graph`, `torch.npu.NPUGraph`,
`torch.npu.Event(enable_timing=True)`, `torch.npu.synchronize`, memory statistics; Ascend/pytorch
torch_npu/npu/__init__.py, graphs.py), so one `TorchBackend` serves both `npu` and `cuda`. Any
object with the same methods can stand in (`--backend module:attr`), which is how the tests drive
the whole benchmark without an accelerator.

torch is imported only when a backend is opened, never at module import.
"""
from __future__ import annotations

import importlib
import os
import platform
import sys
from typing import Any, Dict, Optional

from npu_graph_skill.core.errors import UserError

NO_ACCELERATOR = ("no accelerator: torch_npu with a visible NPU or torch with CUDA is needed for `perf bench` "
                  "(on this machine: {why})")


class BackendError(UserError):
    """The requested accelerator cannot be used here."""


class TorchBackend:
    """`torch.npu` or `torch.cuda` through the same calls."""

    def __init__(self, kind: str, device_index: int = 0) -> None:
        self.name = kind
        try:
            import torch  # noqa: F401 - heavy, only here
        except Exception as exc:  # noqa: BLE001 - ImportError, or a broken install raising anything
            raise BackendError(NO_ACCELERATOR.format(why=f"torch cannot be imported: {_one_line(exc)}")) from None
        self.torch = torch
        if kind == "npu":
            try:
                import torch_npu  # noqa: F401 - registers torch.npu
            except Exception as exc:  # noqa: BLE001 - missing CANN libraries raise OSError/RuntimeError
                raise BackendError(NO_ACCELERATOR.format(why=f"torch_npu cannot be imported: {_one_line(exc)}")) from None
            self.mod = torch.npu
            self.graph_class = getattr(torch.npu, "NPUGraph")
        elif kind == "cuda":
            self.mod = torch.cuda
            self.graph_class = torch.cuda.CUDAGraph
        else:
            raise BackendError(f"unknown backend {kind!r} (use npu, cuda, auto or module:attr)")
        if not _safe(self.mod.is_available):
            raise BackendError(NO_ACCELERATOR.format(why=f"torch.{kind}.is_available() is False"))
        self.device = f"{kind}:{device_index}"
        try:
            self.mod.set_device(device_index)
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"cannot use {self.device}: {_one_line(exc)}") from None

    # streams, events, graphs -------------------------------------------------------------------
    def Stream(self) -> Any:  # noqa: N802 - mirrors torch
        return self.mod.Stream()

    def stream(self, stream: Any) -> Any:
        return self.mod.stream(stream)

    def current_stream(self) -> Any:
        return self.mod.current_stream()

    def Event(self) -> Any:  # noqa: N802
        return self.mod.Event(enable_timing=True)

    def Graph(self) -> Any:  # noqa: N802
        return self.graph_class()

    def graph(self, graph: Any, stream: Any = None) -> Any:
        return self.mod.graph(graph, stream=stream)

    def synchronize(self) -> None:
        self.mod.synchronize()

    # tensors -----------------------------------------------------------------------------------
    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, self.torch.Tensor)

    def clone(self, value: Any) -> Any:
        return value.clone() if self.is_tensor(value) else value

    def max_abs_diff(self, a: Any, b: Any) -> Optional[float]:
        """Largest absolute difference between two outputs (tensors, or tuples/lists/dicts of them)."""
        torch = self.torch
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if a.shape != b.shape:
                return float("inf")
            if a.numel() == 0:
                return 0.0
            return float((a.detach().float() - b.detach().float()).abs().max().item())
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
            diffs = [self.max_abs_diff(x, y) for x, y in zip(a, b)]
            diffs = [d for d in diffs if d is not None]
            return max(diffs) if diffs else None
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            return self.max_abs_diff([a[k] for k in sorted(a)], [b[k] for k in sorted(b)])
        return None

    # memory and environment --------------------------------------------------------------------
    def reset_peak_memory(self) -> None:
        self.mod.reset_peak_memory_stats()

    def empty_cache(self) -> None:
        self.mod.empty_cache()

    def memory(self) -> Dict[str, float]:
        mb = 1024.0 * 1024.0
        return {"allocated_mb": self.mod.memory_allocated() / mb, "reserved_mb": self.mod.memory_reserved() / mb,
                "peak_allocated_mb": self.mod.max_memory_allocated() / mb}

    def env(self) -> Dict[str, Any]:
        info: Dict[str, Any] = {"backend": self.name, "device": self.device,
                                "device_name": _safe(lambda: self.mod.get_device_name()),
                                "device_count": _safe(lambda: self.mod.device_count()),
                                "torch": self.torch.__version__}
        if self.name == "npu":
            info["torch_npu"] = _safe(lambda: importlib.import_module("torch_npu").__version__)
            info["cann"] = cann_version()
        else:
            info["cuda"] = _safe(lambda: self.torch.version.cuda)
        return info


def _one_line(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{exc.__class__.__name__}: {first}" if first else exc.__class__.__name__


def _safe(call: Any) -> Any:
    try:
        return call()
    except Exception:  # noqa: BLE001 - an environment probe must never break the run
        return None


def cann_version() -> Optional[str]:
    """The CANN toolkit version, found the way `npu-graph doctor` finds it (doctor/ascend.py)."""
    from npu_graph_skill.doctor.ascend import find_toolkit

    return _safe(lambda: find_toolkit(os.environ).version) or None


# Settings that change graph-mode timing; recorded with every benchmark.
ENV_VARS = ("TASK_QUEUE_ENABLE", "ASCEND_LAUNCH_BLOCKING", "PYTORCH_NPU_ALLOC_CONF", "ASCEND_RT_VISIBLE_DEVICES",
            "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_LAUNCH_BLOCKING", "HCCL_OP_EXPANSION_MODE")


def host_env() -> Dict[str, Any]:
    return {"python": sys.version.split()[0], "platform": platform.platform(), "machine": platform.machine(),
            "env": {k: os.environ[k] for k in ENV_VARS if k in os.environ}}


def ensure_cwd_importable() -> None:
    """Like `python -m`: modules next to the user (their target, a custom backend) resolve."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def open_backend(name: str = "auto", device_index: int = 0) -> Any:
    """`npu`, `cuda`, `auto` (npu, then cuda) or `module:attr` (a backend object or class)."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        ensure_cwd_importable()
        try:
            target = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise BackendError(f"cannot load backend {name!r}: {exc.__class__.__name__}: {exc}") from None
        return target() if isinstance(target, type) else target
    if name != "auto":
        return TorchBackend(name, device_index)
    reasons = []
    for kind in ("npu", "cuda"):
        try:
            return TorchBackend(kind, device_index)
        except BackendError as exc:
            reasons.append(f"{kind}: {str(exc).split('(on this machine: ', 1)[-1].rstrip(')')}")
    raise BackendError(NO_ACCELERATOR.format(why="; ".join(reasons)))
