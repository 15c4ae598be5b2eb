"""NGL008: capture without an eager warm-up in the same function."""
import torch
import torch_npu


def no_warmup(model, static_x):
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_y = model(static_x)  # expect: NGL008
    return g, static_y


def warmed_up(model, static_x):
    for _ in range(3):
        model(static_x)
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_y = model(static_x)
    return g, static_y


def only_torch_ops_need_no_warmup(static_x):
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_y = torch.matmul(static_x, static_x) + len(static_x.shape)
    return g, static_y


class Runner:
    def capture(self, x, s):
        self._warmup(x)
        g = torch.npu.NPUGraph()
        with torch.npu.graph(g, stream=s):
            out = self.model(x)
        return g, out

    def capture_cold(self, x, s):
        g = torch.npu.NPUGraph()
        with torch.npu.stream(s):
            g.capture_begin()
            out = self.model(x)  # expect: NGL008
            g.capture_end()
        return g, out

    def _warmup(self, x):
        self.model(x)
