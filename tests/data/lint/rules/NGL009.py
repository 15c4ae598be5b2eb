"""NGL009: Python control flow on tensor values inside a capture."""
import torch
import torch_npu


def branches(x, mask, a, b, g):
    with torch.npu.graph(g):
        if (x > 0).any():  # expect: NGL009
            x = x * 2
        while x.sum() > 10:  # expect: NGL009
            x = x / 2
        y = a if torch.all(mask) else b  # expect: NGL009
        assert torch.equal(a, b)  # expect: NGL009
    return x, y


def host_side_conditions_are_fine(x, flag, items, g):
    with torch.npu.graph(g):
        if x.shape[0] > 1:
            x = x * 2
        if flag and len(items) > 2:
            x = x + 1
        if torch.npu.is_current_stream_capturing():
            x = x - 1
    if (x > 0).any():
        x = x * 3
    return x
