"""vLLM-style attention layers: the model's forward runs the layer, which sends its attention through a
custom op; the op finds the layer again by name and runs its method (captured in full graphs)."""
import torch
from torch import nn
from vllm.forward_context import get_forward_context
from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase


def _scatter(cache, slots):
    first = torch.argmax((slots >= 0).to(torch.int32))
    cache[0] = slots[first]  # expect: NGL021


class SparseAttention(nn.Module, AttentionLayerBase):
    def forward(self, q):
        out = torch.empty_like(q)
        torch.ops.vllm.sparse_forward(q, out, self.layer_name)
        torch.ops.vllm.not_registered_here(q)  # an op the project does not register: nothing to follow
        return out

    def _run_sparse(self, q, out):
        n = int(q.sum().item())  # expect: NGL001
        self._insert(q)
        if not get_forward_context().capturing:
            torch.npu.current_stream().synchronize()  # eager only: the capture flag is false here
        out.copy_(q[:n])

    def _insert(self, q):
        _scatter(self.cache, q)

    def _run_twice(self, q):
        return q.tolist()  # two classes define _run_twice: the op's lookup by name cannot tell which runs


class OtherAttention(nn.Module):
    def _run_twice(self, q):
        return q.tolist()
