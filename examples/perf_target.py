"""A small benchmark target for `npu-graph perf bench`: an inference step of a narrow, deep MLP.

Many small layers make many short kernels, the case where graph replay pays off (the host
launches one graph instead of each kernel). Works on any torch device:

    npu-graph perf bench examples/perf_target.py:build --backend npu
    npu-graph perf bench examples/perf_target.py:build --backend cuda --arg batch=64 --arg depth=4

`build` returns (step, example_inputs); the bench calls step(*example_inputs).
"""


def build(device="cpu", batch=8, width=512, depth=16, dtype="float32"):
    import torch

    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.LayerNorm(width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(device=device, dtype=getattr(torch, dtype)).eval()
    x = torch.randn(batch, width, device=device, dtype=getattr(torch, dtype))

    def step(inp):
        with torch.no_grad():
            return model(inp)

    return step, (x,)
