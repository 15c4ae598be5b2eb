"""NGL004: synchronous host/device copies inside a capture."""
import torch
import torch_npu


def copies(x, lengths, g):
    with torch.npu.graph(g):
        a = x.to("cpu")  # expect: NGL004
        b = x.to(device="cpu")  # expect: NGL004
        c = x.to(torch.device("cpu"))  # expect: NGL004
        d = torch.tensor(lengths, device="npu")  # expect: NGL004
        e = torch.as_tensor(lengths, device=x.device)  # expect: NGL004
    return a, b, c, d, e


def not_copies(x, lengths, g):
    with torch.npu.graph(g):
        a = x.to(torch.float16)
        b = x.to(x.device)
        c = torch.tensor([1, 2], device="cpu")
        d = torch.tensor(1.0)
    e = torch.tensor(lengths, device="npu")
    return a, b, c, d, e
