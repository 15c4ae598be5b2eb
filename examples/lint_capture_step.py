"""A decode step captured with torch.npu.graph, with the mistakes `npu-graph lint` is for.

    npu-graph lint examples/lint_capture_step.py
"""
import os

import torch
import torch_npu

os.environ["TASK_QUEUE_ENABLE"] = "2"  # faster eager launches, but capture_begin refuses it


def sample(logits, top_k):
    if (logits < -1e4).all():  # a Python branch on tensor values
        return logits.argmax(-1)
    probs = torch.softmax(logits, dim=-1)
    return probs.topk(top_k).indices.tolist()  # a host read two calls below the capture


def decode(model, tokens, top_k):
    logits = model(tokens)
    return sample(logits, top_k)


def capture(model, static_tokens, top_k):
    for _ in range(3):
        decode(model, static_tokens, top_k)  # warm-up at the captured shape
    graph = torch.npu.NPUGraph()
    with torch.npu.graph(graph):
        static_next = decode(model, static_tokens, top_k)
        print(static_next)  # runs once, at capture time, and syncs
    return graph, static_next
