"""NGL018: a wait inside the capture on an event recorded before it."""
import torch
import torch_npu


def crosses(x, g, ready, s):
    ready.record()
    done = s.record_event()
    with torch.npu.graph(g):
        ready.wait()  # expect: NGL018
        torch.npu.current_stream().wait_event(done)  # expect: NGL018
        y = x * 2
    return y


def recorded_inside(x, g, ready):
    with torch.npu.graph(g):
        ready.record()
        ready.wait()
        y = x * 2
    return y


def external_event_for_updates(x, g):
    event = torch.npu.ExternalEvent()
    event.record()
    with torch.npu.graph(g):
        event.wait()
        y = x + 1
    return y
