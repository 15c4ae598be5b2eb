"""NGL006: reseeding inside a capture."""
import random

import numpy as np
import torch
import torch_npu


def reseeds(x, g, gen):
    with torch.npu.graph(g):
        torch.manual_seed(0)  # expect: NGL006
        torch.npu.manual_seed(1)  # expect: NGL006
        torch.npu.manual_seed_all(1)  # expect: NGL006
        torch.npu.seed()  # expect: NGL006
        gen.manual_seed(3)  # expect: NGL006
        np.random.seed(0)
        random.seed(0)
        y = torch.rand_like(x)
    return y


def seeds_before(x, g):
    torch.npu.manual_seed(1)
    with torch.npu.graph(g):
        y = torch.rand_like(x)
    return y
