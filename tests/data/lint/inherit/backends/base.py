"""A framework's attention backend: forward runs inside the full graph and dispatches to helpers."""
from vllm.attention.backends.abstract import AttentionImpl


class AscendImpl(AttentionImpl):
    def forward(self, query, metadata):
        return self.forward_impl(query, metadata)

    def forward_impl(self, query, metadata):
        return query * metadata.scale
