"""NGL016: a manual graph's static output kept across replays."""
import torch
import torch_npu


def kept(model, batches):
    static_x = batches[0].clone()
    model(static_x)
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_y = model(static_x)
    outputs, by_index = [], {}
    for i, batch in enumerate(batches):
        static_x.copy_(batch)
        g.replay()
        outputs.append(static_y)  # expect: NGL016
        by_index[i] = static_y  # expect: NGL016
    return outputs, by_index


def cloned(model, batches):
    static_x = batches[0].clone()
    model(static_x)
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        static_y = model(static_x)
    outputs = []
    for batch in batches:
        static_x.copy_(batch)
        g.replay()
        outputs.append(static_y.clone())
    return outputs


class GraphRunner:
    def capture(self, model, x):
        model(x)
        self.graph = torch.npu.NPUGraph()
        with torch.npu.graph(self.graph):
            self.static_out = model(x)

    def run_all(self, inputs):
        results = []
        for item in inputs:
            self.graph.replay()
            results.append(self.static_out)  # expect: NGL016
        return results
