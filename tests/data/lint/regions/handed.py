"""A capture helper runs the callable it is handed: the callable is what is captured."""
import torch
import torch_npu


def step(x):
    return x * x.sum().item()  # expect: NGL001


class Runner:
    def __init__(self, graph):
        self.graph = graph

    def _capture_graph(self, graph, run_once_fn):
        with torch.npu.graph(graph):
            out = run_once_fn()
        return out

    def capture(self, graph, run_once_fn):
        return self._capture_graph(graph, run_once_fn)  # handed on once more

    def capture_one_batch_size(self, x):
        def run_once():
            return step(x)

        run_once()
        return self.capture(self.graph, run_once)

    def capture_decode(self, x):
        return self.capture(self.graph, self.decode)

    def decode(self):
        return self.graph.tolist()  # expect: NGL001


def eager(x):
    return step(x)
