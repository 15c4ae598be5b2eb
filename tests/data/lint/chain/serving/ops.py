"""Helpers called from deep inside the model."""


def normalize(t):
    scale = t.abs().max().item()  # expect: NGL001
    return t / scale


def unused(t):
    return t.tolist()
