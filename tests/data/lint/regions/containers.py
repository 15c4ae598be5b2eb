"""Layers kept in a ModuleDict and run in a loop over `.items()` under `enumerate`: the loop variable is a Block."""
import torch
import torch_npu


class Block(torch.nn.Module):
    def forward(self, x):
        return x * x.max().item()  # expect: NGL001


class Stack(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = torch.nn.ModuleDict({str(i): Block() for i in range(n)})

    def forward(self, x):
        for index, (name, block) in enumerate(self.blocks.items()):
            x = block(x)
        return x


def capture(x, g):
    stack = Stack(2)
    stack(x)
    with torch.npu.graph(g):
        y = stack(x)
    return y
