"""A model whose layers call a helper module: the host read sits three calls below the capture."""
import torch

from serving.ops import normalize


class Layer(torch.nn.Module):
    def forward(self, x):
        return normalize(x) * 2


class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer() for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
