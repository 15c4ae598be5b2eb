"""NGL021: indexing with a 0-dim integer tensor inside a capture."""
import torch
import torch_npu


def first_valid(slots, updates, g):
    with torch.npu.graph(g):
        valid = slots >= 0
        first = torch.argmax(valid.to(torch.int32))
        a = slots[first]  # expect: NGL021
        b = updates[valid.int().argmax()]  # expect: NGL021
        c = updates[first, :]  # expect: NGL021
        keep = torch.argmax(valid.to(torch.int32)).reshape(1)
        d = torch.index_select(updates, 0, keep)
        per_row = slots.argmax(dim=-1)
        e = updates[per_row]
        f = updates[torch.argmax(updates, 1)]
    return a, b, c, d, e, f


def outside(slots):
    first = torch.argmax(slots)
    return slots[first]
