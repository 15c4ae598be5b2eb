"""NGL005: device generators created inside a capture."""
import torch
import torch_npu


def creates(x, g):
    with torch.npu.graph(g):
        a = torch.Generator(device="npu")  # expect: NGL005
        b = torch.Generator("npu:0")  # expect: NGL005
        c = torch.Generator(device=x.device)  # expect: NGL005
        d = torch.Generator()
        e = torch.Generator(device="cpu")
    return a, b, c, d, e


def created_before(x, g):
    gen = torch.Generator(device="npu")
    with torch.npu.graph(g):
        y = torch.rand(x.shape, generator=gen, device=x.device)
    return y
