"""Captured regions a framework creates: a capture decorator, a pragma, compile options and backends."""
import torch
from torch._dynamo import optimize
from vllm.compilation.decorators import support_torch_compile


@support_torch_compile
class DecoderModel(torch.nn.Module):
    def forward(self, x):
        return x * x.amax().item()  # expect: NGL001

    def load_weights(self, weights):
        return [w.cpu() for w in weights]


def sample(logits):  # npu-graph: captured
    return logits.argmax(-1).tolist()  # expect: NGL001


@optimize("npugraphs")
def dynamo_backend(x):
    return x.cpu()  # expect: NGL001


@torch.compile(options={"triton.cudagraphs": True})
def inductor_option(x):
    return x.nonzero()  # expect: NGL010


@torch.compile(options={"triton.cudagraphs": False})
def inductor_option_off(x):
    return x.nonzero()


class Engine:
    def __init__(self, model):
        self.model = model
        self.step = torch.compile(self.decode, backend="npugraph_ex")

    def decode(self, x):
        return x.sum().item()  # expect: NGL001

    def prefill(self, x):
        return x.sum().item()


class CudaGraphMixin:  # LMDeploy's marker: the graph runner captures the forward of models deriving from it
    pass


class DecodeModel(torch.nn.Module, CudaGraphMixin):
    def forward(self, x, lengths, attn_metadata, pixel_values=None):
        if pixel_values is not None:  # images come with prefill steps; decoding steps (the captured ones) have none
            sizes = pixel_values.shape[0] * lengths.tolist()[0]
        if attn_metadata.is_decoding:  # only decoding steps are captured: the else branch is never in the graph
            width = int(lengths.max().item())  # expect: NGL001
        else:
            width = attn_metadata.q_seqlens.tolist()
        return x[:, :width]

    def update_weights(self, weights):
        return [w.cpu() for w in weights]


class BaseLayerInfer:  # LightLLM's layer-infer base: the decode graph runs token_forward, not context_forward
    pass


class PostLayerInfer(BaseLayerInfer):
    def token_forward(self, hidden, infer_state):
        if infer_state.is_prefill:  # false in the decode graph
            hidden = hidden[infer_state.b_seq_len.cpu() - 1]
        return hidden[:, : infer_state.b_seq_len.max().item()]  # expect: NGL001

    def context_forward(self, hidden, infer_state):
        return hidden[infer_state.b_seq_len.cpu() - 1]


class GatedDeltaNetAttention:  # vLLM's GDN layer: its custom op runs _forward_core inside full graphs, in decode batches
    pass


class GDN310(GatedDeltaNetAttention):
    def _forward_core(self, mixed_qkv, attn_metadata):
        if attn_metadata.num_prefills > 0:  # 0 in the decode batches that are captured
            lengths = attn_metadata.query_start_loc.tolist()
        return conv1d_args(attn_metadata.state_indices)


def conv1d_args(t):
    return tuple(t.tolist())  # expect: NGL001


def te_graphed(layer, sample):
    import transformer_engine.pytorch as te

    return te.make_graphed_callables(graphed_step, (sample,))


def graphed_step(x):
    return x[x.isnan().logical_not()]  # expect: NGL011


class AttentionBackend:  # SGLang's backend base: decode graphs run forward_decode and init_forward_metadata_in_graph
    pass


class SparseBackend(AttentionBackend):
    def init_forward_metadata_out_graph(self, forward_batch, in_capture=False):
        self.lens = forward_batch.seq_lens.tolist()  # runs outside the capture

    def forward_decode(self, q, page_table):
        return q[:, page_table[page_table != -1]]  # expect: NGL011
