"""A real failure hidden in a large noisy log is diagnosed the same as its bare text: `npu-graph diagnose`
reduces big inputs with `logs.analyze.reduce_for_diagnosis` (diagnose/engine.py) before reading them."""
from __future__ import annotations

import pytest

from test_logs_analyze import _corpus

# Cases whose error text is a log excerpt (worker prefixes, plog lines, torch_npu + CANN blocks).
CASES = ["vllm-ascend-2629", "vllm-ascend-13792", "mooncake-2201", "vllm-ascend-9691"]


@pytest.mark.parametrize("case_id", CASES)
def test_hidden_failure_diagnosed_like_the_bare_text(tmp_path, shared_cases, case_id):
    from npu_graph_skill import api

    case = next(c for c in shared_cases if c["id"] == case_id)
    text = case["error_text"]
    path = tmp_path / "serve.log"
    _corpus().write_mixed_log(str(path), 1.3, seed=2, failure_text=text.replace("{", "{{").replace("}", "}}"),
                              failure_at=0.5)
    assert path.stat().st_size > 1024 * 1024  # large enough for the engine to reduce it first
    bare = api.diagnose(text=text, lang="en")
    hidden = api.diagnose(paths=[str(path)], lang="en")
    assert (hidden.phase, hidden.layer, hidden.root_layer) == (bare.phase, bare.layer, bare.root_layer)
    assert [c.id for c in hidden.candidates[:1]] == [c.id for c in bare.candidates[:1]]
    assert any(note.startswith("read ") and "kept" in note for note in hidden.notes)
