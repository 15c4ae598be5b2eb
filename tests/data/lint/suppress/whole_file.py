# npu-graph: ignore-file[NGL001]
import torch
import torch_npu


def step(x, g):
    with torch.npu.graph(g):
        a = x.sum().item()
        torch.npu.synchronize()
    return a
