"""Suppression comments: by rule id, bare, for another rule (no effect), for the whole file elsewhere."""
import torch
import torch_npu


def step(x, g):
    with torch.npu.graph(g):
        a = x.sum().item()  # npu-graph: ignore[NGL001]
        b = x.tolist()  # npu-graph: ignore
        c = x.cpu()  # npu-graph: ignore[NGL003]  (expect: NGL001 — another rule's id does not silence it)
        d = x.numpy()  # npu-graph: ignore[ngl002, NGL001]
        print(a, b)  # npu-graph: ignore[NGL003]
    return a, b, c, d
