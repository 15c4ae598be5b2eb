"""NGL017: event queries and timing inside a capture."""
import torch
import torch_npu


def queries(x, g, start, end, session):
    with torch.npu.graph(g):
        y = x * 2
        end.record()
        ready = end.query()  # expect: NGL017
        ms = start.elapsed_time(end)  # expect: NGL017
        rows = session.query()
    return y, ready, ms, rows


def timing_around_replay(g, start, end):
    start.record()
    g.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)
