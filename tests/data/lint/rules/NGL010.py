"""NGL010: operators whose output size depends on the data."""
import numpy as np
import torch
import torch_npu


def dynamic_ops(x, cond, g):
    with torch.npu.graph(g):
        a = torch.nonzero(x)  # expect: NGL010
        b = x.nonzero()  # expect: NGL010
        c = torch.unique(x)  # expect: NGL010
        d = x.unique(return_counts=True)  # expect: NGL010
        e = torch.masked_select(x, cond)  # expect: NGL010
        f = x.long().bincount()  # expect: NGL010
        h = torch.where(cond)  # expect: NGL010
    return a, b, c, d, e, f, h


def static_forms(x, cond, g):
    with torch.npu.graph(g):
        a = torch.where(cond, x, torch.zeros_like(x))
        b = np.unique(np.arange(3))
    c = torch.nonzero(x)
    return a, b, c
