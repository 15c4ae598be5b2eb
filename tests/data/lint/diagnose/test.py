"""A script in the shape of the seed-default-stream case: capture_begin() on line 26, on the default stream."""
import torch
import torch_npu


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.linear(x))


model = Net().npu()
static_x = torch.randn(8, 16, device="npu")

# warm up eagerly at the captured shape
for _ in range(3):
    model(static_x)
torch.npu.synchronize()

g = torch.npu.NPUGraph()

# the capture starts on whatever stream is current: the default one
g.capture_begin()
static_y = model(static_x)
g.capture_end()

static_x.copy_(torch.randn(8, 16, device="npu"))
g.replay()
print(static_y.sum().item())
