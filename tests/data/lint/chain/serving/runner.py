"""The capture site: the graph body only calls the model."""
import torch
import torch_npu

from .model import Model


class Runner:
    def __init__(self):
        self.model = Model(2)
        self.graph = torch.npu.NPUGraph()

    def capture(self, static_x):
        self.model(static_x)
        with torch.npu.graph(self.graph):
            self.static_y = self.model(static_x)
        return self.static_y
