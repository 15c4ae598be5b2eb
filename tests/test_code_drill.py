"""The diagnosis drill-down through the user's own tree, and an interrupted index build."""
from __future__ import annotations

import pathlib
import shutil

import pytest

from npu_graph_skill.core.model import Frame, RaiseSite
from npu_graph_skill.expert import source_index
from npu_graph_skill.expert.code import drill_down

TREE = pathlib.Path(__file__).parent / "data" / "code_tree"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "cache"))
    source_index._MEMO.clear()
    yield
    source_index._MEMO.clear()


def test_drill_down_goes_from_python_frame_to_the_cpp_check(tmp_path):
    frames = [Frame(file="/home/me/train.py", line=7, function="<module>"),  # not in the tree: left out
              Frame(file="/opt/py/lib/python3.9/site-packages/torch_npu/npu/fake_graphs.py", line=42, function="__enter__")]
    sites = [RaiseSite(file="/build/torch_npu/csrc/core/npu/FakeGraph.cpp", line=36, function="capture_begin",
                       kind="cpp_exception")]
    message = "Fake graphs must be captured on a non-default stream. (However, after capture, it's ok to replay them on the default stream.)"
    steps = drill_down(frames, sites, message, source_dir=str(TREE))
    assert [(s["layer"], s["where"], s["function"], s["start"], s["end"]) for s in steps] == [
        ("L1", "torch_npu/npu/fake_graphs.py:42", "graph.__enter__", 41, 42),
        ("L2", "torch_npu/csrc/core/npu/FakeGraph.cpp:36", "c10_npu::FakeGraph::capture_begin", 35, 45),
    ]  # the message's own site is the same line as the raise site: listed once
    assert steps[1]["kind"] == "raise site in your tree"
    assert ">36 |   TORCH_CHECK(" in steps[1]["excerpt"]
    assert steps[1]["note"] == "c10_npu::FakeGraph::capture_begin 35-45 at code_tree (no version)"


def test_drill_down_by_message_alone_and_version_mismatch_note():
    steps = drill_down([], [], "Replay failed on device 0, see the log above", source_dir=str(TREE))
    assert [(s["step"], s["line"]) for s in steps] == [("message_site", 56)]
    assert "TORCH_CHECK (full match" in steps[0]["note"]
    frames = [{"file": "torch_npu/npu/fake_graphs.py", "line": 19, "function": "replay"}]  # dicts work too
    steps = drill_down(frames, [], "", source_dir=str(TREE))
    assert "line 19 is in capture_begin here, not replay" in steps[0]["note"]


def test_drill_down_without_a_source_is_empty(monkeypatch):
    monkeypatch.delenv("NPU_GRAPH_SOURCE", raising=False)
    assert drill_down([Frame(file="x.py", line=1, function="f")], [], "boom") == []


def test_interrupted_index_build_leaves_no_cache_file(tmp_path, monkeypatch):
    from npu_graph_skill.expert.source_index import load_index
    from npu_graph_skill.expert.source_tree import open_source_tree

    tree_dir = tmp_path / "src"
    shutil.copytree(TREE, tree_dir)
    calls = []

    def interrupted(path, lang):
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return {"lang": lang, "functions": [], "sites": []}

    monkeypatch.setattr(source_index, "scan_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load_index(open_source_tree(str(tree_dir)))
    cache = tmp_path / "cache"
    assert not list(cache.glob("**/*.json")) and not list(cache.glob("**/*.tmp"))


def test_ctrl_c_in_the_cli_is_one_line_and_exit_2(run_cli, monkeypatch):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(source_index, "load_index", interrupted)
    monkeypatch.setattr("npu_graph_skill.expert.code.load_index", interrupted)
    code, _out, err = run_cli("code", "index", "--source", str(TREE))
    assert code == 2 and err.strip() == "npu-graph: interrupted"
