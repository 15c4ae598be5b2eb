"""NGL001: host reads of device values inside captured regions, in every spelling of a capture."""
import numpy as np
import torch
import torch_npu
import torch_npu.npu as tnpu
from torch.cuda import graph as cuda_graph


def with_torch_npu_graph(x, g):
    with torch.npu.graph(g):
        a = x.sum().item()  # expect: NGL001
        b = x.tolist()  # expect: NGL001
        c = x.cpu()  # expect: NGL001
    return a, b, c


def with_an_import_alias(x, g):
    with tnpu.graph(g):
        return x.max().item()  # expect: NGL001


def with_cuda_spellings(x, g):
    with cuda_graph(g):
        y = x.numpy()  # expect: NGL001
    with torch.cuda.graph(g, stream=torch.cuda.Stream()):
        z = x.cpu()  # expect: NGL001
    return y, z


def between_capture_begin_and_end(x, g, s):
    with torch.npu.stream(s):
        g.capture_begin()
        n = x.sum().item()  # expect: NGL001
        g.capture_end()
        after = x.sum().item()
    return n, after


@torch.compile(mode="reduce-overhead")
def compiled_with_graphs(x):
    return x.sum().item()  # expect: NGL001


@torch.compile
def compiled_without_graphs(x):
    return x.sum().item()


@torch.compile(mode="max-autotune-no-cudagraphs")
def compiled_no_cudagraphs(x):
    return x.sum().item()


class Block(torch.nn.Module):
    def forward(self, x):
        return x * x.mean().item()  # expect: NGL001


def graphed(x):
    block = Block()
    return torch.npu.make_graphed_callables(block, (x,))


def reads_outside_the_capture_are_fine(x, g):
    n = x.sum().item()
    with torch.npu.graph(g):
        y = x * n
    return y.cpu(), np.unique(np.array([1, 2]))


class HostCopies:
    """Host tensors by the frameworks' naming, and tensors built from Python lists: nothing is read from the device."""

    def __init__(self, meta):
        self.meta = meta

    def forward_decode(self, x, g):
        with torch.npu.graph(g):
            lens = self.meta.seq_lens_cpu_int.cpu().int().tolist()
            starts = self.meta.query_start_loc_cpu.tolist()
            cumulative = torch.tensor([1] * len(lens), dtype=torch.int32).cumsum(dim=0).tolist()
            on_device = torch.arange(4, device=x.device).tolist()  # expect: NGL001
            cpu_bound = x.cpu()  # expect: NGL001
            first = self.meta.seq_lens_gpu[0].item()  # expect: NGL001
        return lens, starts, cumulative, on_device, cpu_bound, first


def read_lengths(lens, steps):
    total = 0
    for i in range(steps):
        total += lens[i].item()  # a parameter every caller binds to a host copy
    return total


def read_device_lengths(lens):
    return lens[0].item()  # expect: NGL001


class Backend:
    def __init__(self, meta):
        self.meta = meta

    def forward_decode(self, x, g):
        with torch.npu.graph(g):
            a = read_lengths(self.meta.seq_lens_cpu, 4)
            b = read_lengths(lens=torch.ones(4, dtype=torch.int32), steps=4)
            c = read_device_lengths(self.meta.seq_lens_cpu)
            d = read_device_lengths(x)  # one caller passes a device tensor: the read is flagged
        return a, b, c, d


def mixed_with_a_host_copy(x, seq_lens_cpu, g):
    with torch.npu.graph(g):
        return torch.cat([seq_lens_cpu, x]).sum().item()  # expect: NGL001


def host_copy_moved_back(x, g, meta):
    with torch.npu.graph(g):
        return meta.seq_lens_cpu.to(x.device).sum().item()  # expect: NGL001
