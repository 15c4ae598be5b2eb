"""A small torch_npu-like Python module for the scanner tests."""
import logging
import warnings

log = logging.getLogger("torch_npu.npugraph")


def pta_error(code):
    return "\n[ERROR] PTA " + str(code)


class NPUGraph:
    def __init__(self, auto_dispatch_capture=False):
        self.auto_dispatch_capture = auto_dispatch_capture
        log.debug("NPUGRAPH Lifecycle NPUGraph created, graph_id=%s, auto_dispatch=%s", id(self), auto_dispatch_capture)

    def capture_begin(self, pool=None, capture_error_mode="global"):
        if capture_error_mode not in ("global", "thread_local", "relaxed"):
            raise ValueError(f"Unknown capture_error_mode {capture_error_mode!r}; use global, thread_local or relaxed")
        return pool

    def update(self, cpu_update_input):
        if not self.auto_dispatch_capture:
            raise RuntimeError(
                "The current graph configuration does not support update. "
                "Capture with auto_dispatch_capture=True first.",
                pta_error("PARAM"),
            )
        msg = "Expected a list of dicts, got " + type(cpu_update_input).__name__
        if not isinstance(cpu_update_input, list):
            raise TypeError(msg)
        warnings.warn("NPUGraph.update is experimental: %s inputs" % len(cpu_update_input))


class graph:
    def __init__(self, npu_graph, pool=None, stream=None):
        if stream is None:
            raise RuntimeError("capture stream is None")
        self.npu_graph = npu_graph

    def __enter__(self):
        return self.npu_graph.capture_begin()


def make_graphed_callables(callables, sample_args, num_warmup_iters=3):
    def _check(arg):
        if not hasattr(arg, "shape"):
            raise TypeError("In the beginning, all sample_args must be Tensors; got {}".format(type(arg)))
    for arg in sample_args:
        _check(arg)
    return callables
