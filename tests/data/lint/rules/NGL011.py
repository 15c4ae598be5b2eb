"""NGL011: boolean-mask indexing inside a capture."""
import torch
import torch_npu


def masks(x, idx, g):
    with torch.npu.graph(g):
        a = x[x > 0]  # expect: NGL011
        valid = x != 0
        b = x[valid]  # expect: NGL011
        c = x[~valid]  # expect: NGL011
        x[torch.isnan(x)] = 0  # expect: NGL011
        d = x[:, valid & (x < 5)]  # expect: NGL011
        e = x[idx]
        f = x[0]
        h = x[1:3]
    return a, b, c, d, e, f, h


def mask_outside(x, g):
    y = x[x > 0]
    with torch.npu.graph(g):
        z = torch.where(x > 0, x, 0.0)
    return y, z
