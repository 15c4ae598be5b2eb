"""NGL020: a forked side stream never joined back before the capture ends."""
import torch
import torch_npu


def not_joined(x, g, side):
    with torch.npu.graph(g):
        side.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(side):  # expect: NGL020
            z = x + 1
        y = x * 2
    return y, z


def joined_through_an_event(x, g, side, done):
    with torch.npu.graph(g):
        side.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(side):
            z = x + 1
            done.record()
        torch.npu.current_stream().wait_event(done)
        y = x * 2
    return y, z
