"""A test double of an accelerator for `perf bench`: streams, timing events, graph capture and
replay over tensors that hold plain Python lists, on a simulated clock.

The clock makes the benchmark deterministic: every eagerly launched op costs LAUNCH_MS of host
launch plus its KERNEL_MS; inside a capture ops are only recorded; a replay costs one REPLAY_MS
launch plus the recorded kernels. So a step of N ops takes N * (LAUNCH_MS + KERNEL_MS) eagerly and
COPY + REPLAY_MS + N * KERNEL_MS as a graph, and a test can check the reported numbers exactly.
Capture semantics follow the real thing where it matters: ops recorded in capture read the
static input tensors at replay time, and host reads (`item()`) are refused while capturing.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, List, Optional

LAUNCH_MS = 0.05
KERNEL_MS = 0.01
REPLAY_MS = 0.02
OPS_PER_STEP = 10


class Device:
    """Global state of the simulated device."""

    now_ms = 0.0
    capturing: Optional["DoubleGraph"] = None
    copies = 0
    replays = 0
    captures = 0

    @classmethod
    def reset(cls) -> None:
        cls.now_ms = 0.0
        cls.capturing = None
        cls.copies = cls.replays = cls.captures = 0


class DoubleTensor:
    def __init__(self, values: List[float]) -> None:
        self.values = list(values)

    def _launch(self, kernel: Callable[[], None]) -> None:
        if Device.capturing is not None:
            Device.capturing.tasks.append(kernel)
            return
        Device.now_ms += LAUNCH_MS + KERNEL_MS
        kernel()

    def _unary(self, fn: Callable[[float], float]) -> "DoubleTensor":
        out = DoubleTensor([0.0] * len(self.values))

        def kernel() -> None:
            out.values = [fn(v) for v in self.values]

        self._launch(kernel)
        return out

    def mul(self, k: float) -> "DoubleTensor":
        return self._unary(lambda v: v * k)

    def add(self, k: float) -> "DoubleTensor":
        return self._unary(lambda v: v + k)

    def copy_(self, other: "DoubleTensor") -> "DoubleTensor":
        def kernel() -> None:
            self.values = list(other.values)

        Device.copies += 1
        self._launch(kernel)
        return self

    def item(self) -> float:
        if Device.capturing is not None:
            raise RuntimeError("operation not permitted when stream is capturing")
        return self.values[0]

    def clone(self) -> "DoubleTensor":
        return DoubleTensor(self.values)

    # the few tensor methods TorchBackend.max_abs_diff uses (host-side, after the run)
    @property
    def shape(self) -> tuple:
        return (len(self.values),)

    def numel(self) -> int:
        return len(self.values)

    def detach(self) -> "DoubleTensor":
        return self

    def float(self) -> "DoubleTensor":
        return self

    def __sub__(self, other: "DoubleTensor") -> "DoubleTensor":
        return DoubleTensor([a - b for a, b in zip(self.values, other.values)])

    def abs(self) -> "DoubleTensor":
        return DoubleTensor([abs(v) for v in self.values])

    def max(self) -> "DoubleTensor":
        return DoubleTensor([max(self.values)])


class DoubleEvent:
    def __init__(self) -> None:
        self.t = None

    def record(self) -> None:
        self.t = Device.now_ms

    def elapsed_time(self, end: "DoubleEvent") -> float:
        return end.t - self.t


class DoubleStream:
    def wait_stream(self, other: "DoubleStream") -> None:
        pass


class DoubleGraph:
    def __init__(self) -> None:
        self.tasks: List[Callable[[], None]] = []

    def replay(self) -> None:
        Device.replays += 1
        Device.now_ms += REPLAY_MS
        for task in self.tasks:
            Device.now_ms += KERNEL_MS
            task()


@contextlib.contextmanager
def capture(graph: DoubleGraph, **_: Any) -> Any:
    Device.captures += 1
    Device.capturing = graph
    try:
        yield graph
    finally:
        Device.capturing = None


class DoubleBackend:
    name = "double"
    device = "double:0"

    def __init__(self) -> None:
        Device.reset()

    def Stream(self) -> DoubleStream:  # noqa: N802 - mirrors torch
        return DoubleStream()

    def stream(self, stream: DoubleStream) -> Any:
        return contextlib.nullcontext()

    def current_stream(self) -> DoubleStream:
        return DoubleStream()

    def Event(self) -> DoubleEvent:  # noqa: N802
        return DoubleEvent()

    def Graph(self) -> DoubleGraph:  # noqa: N802
        return DoubleGraph()

    def graph(self, graph: DoubleGraph, stream: Any = None) -> Any:
        return capture(graph)

    def synchronize(self) -> None:
        pass

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, DoubleTensor)

    def clone(self, value: Any) -> Any:
        return value.clone() if isinstance(value, DoubleTensor) else value

    def max_abs_diff(self, a: Any, b: Any) -> Optional[float]:
        if isinstance(a, DoubleTensor) and isinstance(b, DoubleTensor):
            return max(abs(x - y) for x, y in zip(a.values, b.values))
        return None

    def reset_peak_memory(self) -> None:
        pass

    def empty_cache(self) -> None:
        pass

    def memory(self) -> dict:
        return {"allocated_mb": 1.0, "reserved_mb": 2.0, "peak_allocated_mb": 1.5}

    def env(self) -> dict:
        return {"backend": self.name, "device": self.device, "device_name": "simulated device", "torch": None}


def fake_torch():
    """A stand-in `torch` module whose `torch.cuda` (and `torch.npu`) is this double, so that the
    real TorchBackend runs unchanged against it: the names it calls are torch's names."""
    import types

    accel = types.SimpleNamespace(
        is_available=lambda: True, set_device=lambda index: None, Stream=DoubleStream,
        stream=lambda s: contextlib.nullcontext(), current_stream=lambda: DoubleStream(),
        Event=lambda enable_timing=False: DoubleEvent(), CUDAGraph=DoubleGraph, NPUGraph=DoubleGraph,
        graph=lambda g, pool=None, stream=None, capture_error_mode="global": capture(g),
        synchronize=lambda: None, reset_peak_memory_stats=lambda: None, empty_cache=lambda: None,
        memory_allocated=lambda: 1 << 20, memory_reserved=lambda: 2 << 20, max_memory_allocated=lambda: 3 << 20,
        get_device_name=lambda: "fake accelerator", device_count=lambda: 1)
    module = types.ModuleType("torch")
    module.cuda = accel
    module.npu = accel
    module.Tensor = DoubleTensor
    module.__version__ = "0.0+fake"
    module.version = types.SimpleNamespace(cuda="0.0")
    return module


# --- targets ----------------------------------------------------------------------------------

def make_step(device: str = "cpu", ops: int = OPS_PER_STEP):
    """A step of `ops` elementwise ops: ((x * 2) + 1) * 2 + 1 ..."""
    def step(x: DoubleTensor) -> DoubleTensor:
        for i in range(ops):
            x = x.mul(2.0) if i % 2 == 0 else x.add(1.0)
        return x

    return step, (DoubleTensor([1.0, 2.0, 3.0]),)


def make_syncing_step(device: str = "cpu"):
    """Reads a value on the host in the middle of the step: legal eagerly, refused in capture."""
    def step(x: DoubleTensor) -> DoubleTensor:
        y = x.mul(2.0)
        return y.add(y.item())

    return step, (DoubleTensor([1.0, 2.0]),)


_calls = {"n": 0}


def make_stateful_step(device: str = "cpu"):
    """Adds a Python counter: the graph freezes the value seen at capture, eager does not."""
    _calls["n"] = 0

    def step(x: DoubleTensor) -> DoubleTensor:
        _calls["n"] += 1
        return x.add(float(_calls["n"]))

    return step, (DoubleTensor([0.0]),)


def not_a_factory(device: str = "cpu"):
    return 42
