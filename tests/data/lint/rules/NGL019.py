"""NGL019: a side stream used in a capture without the fork."""
import torch
import torch_npu


def not_forked(x, g, side):
    with torch.npu.graph(g):
        with torch.npu.stream(side):  # expect: NGL019
            z = x + 1
        torch.npu.current_stream().wait_stream(side)
    return z


def forked_and_joined(x, g, side):
    with torch.npu.graph(g):
        side.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(side):
            z = x + 1
        torch.npu.current_stream().wait_stream(side)
    return z


def the_capture_stream_itself(x, g, s):
    with torch.npu.graph(g, stream=s):
        with torch.npu.stream(s):
            z = x + 1
    return z
