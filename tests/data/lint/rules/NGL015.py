"""NGL015: outputs of a graph-compiled callable read after its next call."""
import torch

model = torch.compile(torch.nn.Linear(8, 8), mode="reduce-overhead")


@torch.compile(backend="npugraphs")
def double(x):
    return x * 2


def stale(x1, x2):
    y1 = model(x1)
    y2 = model(x2)
    return y1 + y2  # expect: NGL015


def stale_decorated(x1, x2):
    o1 = double(x1)
    o2 = double(x2)
    return o1, o2  # expect: NGL015


def kept_in_a_loop(batches):
    outputs = []
    for batch in batches:
        y = model(batch)
        outputs.append(y)  # expect: NGL015
    return outputs


def cloned(x1, x2):
    y1 = model(x1).clone()
    y2 = model(x2)
    return y1 + y2


def used_before_the_next_call(x1, x2):
    y1 = model(x1)
    total = y1.sum()
    y1 = model(x2)
    return total + y1.sum()
