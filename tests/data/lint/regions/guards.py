"""Capture guards: the branch a capture check rules out is not in the region, the branch it selects is."""
import torch
import torch_npu
from torch._dynamo import optimize


def lengths_for_kernel(lengths):
    if not torch.npu.is_current_stream_capturing():
        assert lengths.max().item() < 4096  # eager only: a bounds check the capture skips
    capturing = torch.cuda.is_current_stream_capturing()
    width = lengths.size(0) if capturing else lengths.max().item()
    if torch.npu.is_current_stream_capturing():
        return lengths.cumsum(0), width
    return lengths.cumsum(0).tolist(), width  # after the early return: eager only


def scale_for_kernel(scale):
    if scale.numel() == 1 and not torch.npu.is_current_stream_capturing():
        return scale.item()
    if scale.dim() == 0 or torch.npu.is_current_stream_capturing():
        out = scale * 2
    else:
        out = scale.tolist()  # the test holds whenever the capture runs: never reached
    return out, scale.cpu()  # expect: NGL001


def uniform_lengths(seq_lens, forward_context):
    # `or` stops at the capture flag while capturing: the tensor test after it is never evaluated then
    if forward_context.capturing or (seq_lens.numel() > 0 and torch.all(seq_lens == seq_lens[0])):
        return seq_lens
    return seq_lens.cpu()  # eager mixed batches only


def host_lengths(metadata, forward_context):
    if metadata.query_lens_cpu is None:
        if forward_context.capturing:  # the framework's capture flag (vLLM-Ascend sets it around its capture)
            raise RuntimeError("host query lengths are needed during capture")
        metadata.query_lens_cpu = metadata.query_start_loc.cpu()  # eager fallback only
    return metadata.query_lens_cpu


def step(lengths, scale, metadata, forward_context, g):
    with torch.npu.graph(g):
        lengths_for_kernel(lengths)
        scale_for_kernel(scale)
        host_lengths(metadata, forward_context)
        uniform_lengths(lengths, forward_context)


@optimize("npugraphs")
def compiled(x):
    if not torch.compiler.is_compiling():
        print(x.sum().item())  # traced code never reaches this branch
    return x * 2


def eager_capture(x, g):
    with torch.npu.graph(g):
        if not torch.compiler.is_compiling():  # an eager capture is not compiling: this branch is captured
            y = x.sum().item()  # expect: NGL001
