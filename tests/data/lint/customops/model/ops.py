"""The layer ops: registered under a name with vLLM's helper, and with torch.library.custom_op."""
import torch
from vllm.forward_context import get_forward_context
from vllm.utils.torch_utils import direct_register_custom_op


def sparse_forward(q: torch.Tensor, out: torch.Tensor, layer_name: str) -> None:
    layer = get_forward_context().no_compile_layers[layer_name]
    layer._run_sparse(q, out)
    get_forward_context().no_compile_layers[layer_name]._run_twice(q)


def sparse_forward_fake(q: torch.Tensor, out: torch.Tensor, layer_name: str) -> None:
    return


direct_register_custom_op(
    op_name="sparse_forward",
    op_func=sparse_forward,
    mutates_args=["out"],
    fake_impl=sparse_forward_fake,
)


@torch.library.custom_op("mylib::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x / x.max().item()  # expect: NGL001


def eager_only(x):
    return torch.ops.mylib.scale(x)  # not in a captured region
