"""A tiny stand-in for torch, enough to run the doctor's capture probe without an accelerator.

It keeps the rules the real graph APIs enforce (pytorch torch/cuda/graphs.py, torch_npu
NPUGraph.cpp): capture must not run on the default stream, capture_end must run on the stream
that began the capture, and replay re-runs what was recorded on the tensors captured, so new
input must be copied into the captured tensor. Tensors hold one value for all their elements.

FAKE_TORCH_BREAK=stale makes replay do nothing, to show that the probe checks the results.
"""
__version__ = "2.13.0+fake"


class _Version:
    cuda = "12.8"
    git_version = "fake"


version = _Version()


class Tensor:
    def __init__(self, value, shape=(8, 8)):
        self.value = float(value)
        self.shape = shape

    def _op(self, other, fn):
        out = Tensor(0.0, self.shape)
        other_value = (lambda: other.value) if isinstance(other, Tensor) else (lambda: float(other))

        def compute():
            out.value = fn(self.value, other_value())

        compute()
        cuda._record(compute)
        return out

    def __mul__(self, other):
        return self._op(other, lambda a, b: a * b)

    def __add__(self, other):
        return self._op(other, lambda a, b: a + b)

    def copy_(self, other):
        self.value = other.value
        return self

    def float(self):
        return self

    def cpu(self):
        return Tensor(self.value, self.shape)

    def flatten(self):
        return self

    def __getitem__(self, item):
        return self

    def tolist(self):
        return [self.value]


def ones(*shape, device=None):
    return Tensor(1.0, shape)


def full(shape, value, device=None):
    return Tensor(value, tuple(shape))


def equal(a, b):
    return a.shape == b.shape and a.value == b.value


def device(kind, index=0):
    return "%s:%d" % (kind, index)


from torch import cuda  # noqa: E402,F401
