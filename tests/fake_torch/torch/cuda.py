"""torch.cuda of the fake torch: streams, and CUDAGraph / graph with the real rules."""
import contextlib
import os


class Stream:
    def __init__(self, default=False):
        self.default = default
        self.capturing = None  # the graph capturing on this stream

    def wait_stream(self, other):
        pass


_default = Stream(default=True)
_current = [_default]


def current_stream():
    return _current[-1]


@contextlib.contextmanager
def stream(s):
    _current.append(s)
    try:
        yield
    finally:
        _current.pop()


def _record(compute):
    graph = current_stream().capturing
    if graph is not None:
        graph._ops.append(compute)


def is_available():
    return True


def device_count():
    return 1


def set_device(index):
    pass


def synchronize():
    if current_stream().capturing is not None:
        raise RuntimeError("operation not permitted when stream is capturing")


def is_current_stream_capturing():
    return current_stream().capturing is not None


def get_device_name(index=0):
    return "Fake GPU"


def mem_get_info(index=0):
    return (1 << 30, 2 << 30)


def graph_pool_handle():
    return (0, 1)


def make_graphed_callables(*args, **kwargs):
    raise NotImplementedError


class CUDAGraph:
    def __init__(self):
        self._ops = []
        self._stream = None

    def capture_begin(self, pool=None, capture_error_mode="global"):
        s = current_stream()
        if s.default:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. "
                               "(However, after capture, it's ok to replay them on the default stream.)")
        s.capturing = self
        self._stream = s

    def capture_end(self):
        if current_stream() is not self._stream:
            raise RuntimeError("Capture must end on the same stream it began on.")
        self._stream.capturing = None

    def replay(self):
        if os.environ.get("FAKE_TORCH_BREAK") == "stale":
            return
        for op in self._ops:
            op()


class graph:
    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.capture_stream = stream if stream is not None else self.__class__.default_capture_stream
        self.cuda_graph = cuda_graph

    def __enter__(self):
        synchronize()
        self._ctx = globals()["stream"](self.capture_stream)
        self._ctx.__enter__()
        self.cuda_graph.capture_begin()

    def __exit__(self, *exc):
        self.cuda_graph.capture_end()
        self._ctx.__exit__(*exc)
        return False
