"""NGL002: synchronize inside a capture."""
import torch
import torch_npu


def device_and_stream_syncs(x, g, s, done):
    with torch.npu.graph(g):
        y = x * 2
        torch.npu.synchronize()  # expect: NGL002
        torch_npu.npu.synchronize()  # expect: NGL002
        s.synchronize()  # expect: NGL002
        torch.npu.current_stream().synchronize()  # expect: NGL002
        done.synchronize()  # expect: NGL002
    return y


def syncs_around_the_capture_are_fine(x, g):
    torch.npu.synchronize()
    with torch.npu.graph(g):
        y = x * 2
    torch.npu.current_stream().synchronize()
    return y
