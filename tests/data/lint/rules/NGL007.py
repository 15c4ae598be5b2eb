"""NGL007: capture_begin on the default stream."""
import torch
import torch_npu
import torch_npu.npu as npu


def on_default_stream(x):
    g = torch.npu.NPUGraph()
    g.capture_begin()  # expect: NGL007
    y = x * 2
    g.capture_end()
    return g, y


def on_a_side_stream(x):
    s = torch.npu.Stream()
    s.wait_stream(torch.npu.current_stream())
    g = torch.npu.NPUGraph()
    with torch.npu.stream(s):
        g.capture_begin()
        y = x * 2
        g.capture_end()
    return g, y


def side_stream_through_an_alias(x, s):
    g = npu.NPUGraph()
    with npu.stream(s):
        g.capture_begin(capture_error_mode="thread_local")
        y = x + 1
        g.capture_end()
    return g, y


def side_stream_set_before(x, s):
    torch.npu.set_stream(s)
    g = torch.npu.NPUGraph()
    g.capture_begin()
    y = x * 3
    g.capture_end()
    return g, y
