"""NGL012: pinned host memory allocated inside a capture."""
import torch
import torch_npu


def pins(x, host, g):
    with torch.npu.graph(g):
        a = host.pin_memory()  # expect: NGL012
        b = torch.empty(4, pin_memory=True)  # expect: NGL012
        c = torch.zeros(4, dtype=torch.int32, pin_memory=False)
        x.copy_(a, non_blocking=True)
    return a, b, c


def pins_before(x, host, g):
    staged = host.pin_memory()
    with torch.npu.graph(g):
        x.copy_(staged, non_blocking=True)
    return x
