from .fake_graphs import NPUGraph, graph, make_graphed_callables
