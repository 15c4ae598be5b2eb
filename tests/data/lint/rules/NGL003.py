"""NGL003: print of a value inside a capture (strings alone are fine)."""
import torch
import torch_npu


def prints(x, g, step):
    with torch.npu.graph(g):
        y = x * 2
        print(y)  # expect: NGL003
        print("loss", y.sum())  # expect: NGL003
        print(f"y={y}")  # expect: NGL003
        print("capturing the decode step")
        print(f"constant text only")
        print()
    print(y)
    return y
