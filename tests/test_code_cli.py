"""`npu-graph code ...` as a user runs it: output, JSON, exit codes, bad input. The tree is the
small torch_npu-like tree in tests/data/code_tree (C++ and Python)."""
from __future__ import annotations

import json
import pathlib

import pytest

from npu_graph_skill.expert import source_index

TREE = pathlib.Path(__file__).parent / "data" / "code_tree"
KB = pathlib.Path(__file__).parent / "data" / "code_kb"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NPU_GRAPH_SOURCE", str(TREE))
    monkeypatch.setenv("NPU_GRAPH_LANG", "en")
    source_index._MEMO.clear()
    yield
    source_index._MEMO.clear()


def test_locate_lists_every_definition_in_cpp_and_python(run_cli):
    code, out, err = run_cli("code", "locate", "capture_begin")
    assert code == 0, err
    assert "torch_npu/csrc/core/npu/FakeGraph.cpp:35-45  [cpp method]  c10_npu::FakeGraph::capture_begin" in out
    assert "torch_npu/npu/fake_graphs.py:17-20  [python method]  NPUGraph.capture_begin" in out
    assert "void FakeGraph::capture_begin(MempoolId_t pool, int mode)" in out


def test_locate_qualified_file_scoped_and_package_paths(run_cli):
    code, out, _ = run_cli("code", "locate", "FakeGraph::capture_begin", "--json")
    data = json.loads(out)
    assert code == 0 and data["schema"] == "npu-graph-skill/code-locate/1"
    assert [(d["file"], d["start"], d["end"]) for d in data["definitions"]] == [
        ("torch_npu/csrc/core/npu/FakeGraph.cpp", 35, 45)]
    _, out, _ = run_cli("code", "locate", "fake_graphs.py:capture_begin", "--json")
    assert [d["language"] for d in json.loads(out)["definitions"]] == ["python"]
    _, out, _ = run_cli("code", "locate", "torch.npu.make_graphed_callables", "--json")
    assert [(d["file"], d["start"]) for d in json.loads(out)["definitions"]] == [("torch_npu/npu/fake_graphs.py", 45)]
    _, out, _ = run_cli("code", "locate", "torch_npu.npu.fake_graphs.NPUGraph.update", "--json")
    assert json.loads(out)["definitions"][0]["anchor"] == "Ascend/pytorch torch_npu/npu/fake_graphs.py:22-32@code_tree (no version)"


def test_locate_unknown_symbol_exits_1_with_suggestions(run_cli):
    code, out, _ = run_cli("code", "locate", "capture_begn")
    assert code == 1
    assert "no definition of capture_begn" in out and "capture_begin" in out


def test_raise_site_finds_a_split_literal_from_a_pasted_traceback(run_cli, tmp_path):
    pasted = tmp_path / "error.txt"
    pasted.write_bytes(
        b"Traceback (most recent call last):\r\n"
        b'  File "/usr/lib/python3.9/site-packages/torch_npu/npu/fake_graphs.py", line 42, in __enter__\r\n'
        b"    return self.npu_graph.capture_begin()\r\n"
        b"RuntimeError: Fake graphs must be captured on a non-default stream. (However, after capture, "
        b"it's ok to replay them on the default stream.)\r\n"
        b"[ERROR] 2026-08-21-10:00:00 (PID:1, Device:0, RankID:0) ERR00100 PTA call acl api failed\r\n")
    code, out, err = run_cli("code", "raise-site", "--file", str(pasted), "--json")
    assert code == 0, err
    best = json.loads(out)["matches"][0]
    assert (best["file"], best["line"], best["end_line"], best["quality"]) == ("torch_npu/csrc/core/npu/FakeGraph.cpp", 36, 40, "full")
    assert (best["function"], best["function_start"], best["function_end"]) == ("c10_npu::FakeGraph::capture_begin", 35, 45)


def test_raise_site_with_concrete_values_where_the_source_has_variables(run_cli):
    code, out, _ = run_cli("code", "raise-site", "External stream is not supported in FakeGraph::capture_begin. "
                           "This path requires a torch_npu-managed stream.", "--json")
    matches = json.loads(out)["matches"]
    # the caller that passes the text first, then the helper's check that raises it
    assert [(m["line"], m["quality"]) for m in matches[:2]] == [(41, "full"), (13, "full")]
    assert matches[0]["via"] == "torch_npu/csrc/core/npu/FakeGraph.cpp:13"
    code, out, _ = run_cli("code", "raise-site", "RuntimeError: Replay failed on device 3, see the log above", "--json")
    assert json.loads(out)["matches"][0]["line"] == 56
    code, out, _ = run_cli("code", "raise-site", "Unknown capture_error_mode 'bogus'; use global, thread_local or relaxed",
                           "--kind", "raise", "--json")
    assert json.loads(out)["matches"][0]["file"] == "torch_npu/npu/fake_graphs.py"


def test_raise_site_finds_a_cut_short_message_and_the_npu_check_by_its_location(run_cli):
    code, out, _ = run_cli("code", "raise-site", "Fake graphs must be captured on a non-default", "--json")
    best = json.loads(out)["matches"][0]
    assert (best["line"], best["quality"]) == (36, "fragment")
    message = ("capture_begin:/build/torch_npu/csrc/core/npu/FakeGraph.cpp:42 NPU function error: "
               "c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, mode), error code is 107027")
    code, out, _ = run_cli("code", "raise-site", message, "--json")
    best = json.loads(out)["matches"][0]
    assert (best["line"], best["kind"], best["location"]) == (42, "npu_check", "line")


def test_raise_site_text_output_shows_the_code(run_cli):
    code, out, _ = run_cli("code", "raise-site", "Called FakeGraph::replay without a preceding successful capture.")
    assert code == 0
    assert "torch_npu/csrc/core/npu/FakeGraph.cpp:52  TORCH_CHECK  in c10_npu::FakeGraph::replay (48-57)" in out
    assert '>52 |   TORCH_CHECK(has_graph_, "Called FakeGraph::replay without' in out


def test_raise_site_nothing_found_exits_1(run_cli):
    code, out, _ = run_cli("code", "raise-site", "zebra quantum marmalade")
    assert code == 1 and "no site in this tree" in out


def test_raise_site_bad_inputs_exit_2_with_one_line(run_cli, tmp_path):
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01\x02")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for args, words in [
        (("code", "raise-site"), "give the message"),
        (("code", "raise-site", "   "), "the message is empty"),
        (("code", "raise-site", "--file", str(binary)), "binary file"),
        (("code", "raise-site", "--file", str(empty)), "empty"),
        (("code", "raise-site", "--file", str(tmp_path / "missing.txt")), "no such file"),
        (("code", "raise-site", "--file", str(tmp_path)), "is a directory"),
        (("code", "raise-site", "x", "--source", str(tmp_path / "nope")), "no such directory"),
    ]:
        code, out, err = run_cli(*args)
        assert code == 2, (args, out, err)
        assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_raise_site_reads_gb18030_and_long_lines(run_cli, tmp_path):
    pasted = tmp_path / "zh.txt"
    pasted.write_bytes("报错：".encode("gb18030") + b"Called FakeGraph::replay without a preceding successful capture.\n"
                       + b"x" * 5_000_000 + b"\n")
    code, out, _ = run_cli("code", "raise-site", "--file", str(pasted), "--json")
    assert code == 0 and json.loads(out)["matches"][0]["line"] == 52


def test_show_range_line_with_context_and_symbol(run_cli):
    code, out, _ = run_cli("code", "show", "FakeGraph.cpp:36-40")
    assert code == 0
    assert "torch_npu/csrc/core/npu/FakeGraph.cpp:36-40  (in c10_npu::FakeGraph::capture_begin 35-45)" in out
    assert '>38 |       "Fake graphs must be captured on a non-default stream. "' in out
    _, out, _ = run_cli("code", "show", "fake_graphs.py:38", "--context", "1", "--json")
    excerpt = json.loads(out)["excerpts"][0]
    assert [row["line"] for row in excerpt["lines"]] == [37, 38, 39] and excerpt["focus"] == [38]
    _, out, _ = run_cli("code", "show", "make_graphed_callables")
    assert "def make_graphed_callables(callables, sample_args, num_warmup_iters=3):" in out


def test_show_bad_specs_exit_2(run_cli):
    for spec, words in [("Nope.cpp:3", "no file"), ("__init__.py:1", "ambiguous"), ("FakeGraph.cpp:40-30", "ends before"),
                        ("FakeGraph.cpp:9999", "does not exist"), ("not_a_symbol_anywhere", "neither")]:
        code, _out, err = run_cli("code", "show", spec)
        assert code == 2 and words in err, (spec, err)


def test_index_reports_counts_time_and_cache(run_cli, tmp_path):
    code, out, _ = run_cli("code", "index", "--json")
    data = json.loads(out)
    assert code == 0 and data["counts"]["files"] == 6 and data["stats"]["scanned_files"] == 6
    assert data["tree"]["kind"] == "directory" and data["stats"]["cache_path"].startswith(str(tmp_path))
    source_index._MEMO.clear()
    code, out, _ = run_cli("code", "index", "--lang", "zh")
    assert "复用缓存" in out and "6" in out


def test_verify_anchors_reports_each_kind_of_drift(run_cli):
    code, out, _ = run_cli("code", "verify-anchors", "--kb", str(KB), "--json")
    data = json.loads(out)
    assert code == 1
    status = {(c["origin"], c["anchor"].split(":")[-1].split("@")[0]): c["status"] for c in data["checks"]}
    assert status[("message M-T01", "36")] == "ok"
    assert status[("message M-T02", "50")] == "moved"
    assert status[("message M-T03", "52")] == "changed"
    assert status[("message M-T04", "38")] == "ok"
    assert status[("message M-T05", "41")] == "ok"  # the text is passed to a helper that raises it
    assert status[("message M-T06", "10")] == "skipped"
    assert status[("message M-T07", "10")] == "missing_file"
    assert status[("concept fake-capture", "36-40")] == "ok"
    assert status[("concept fake-capture", "59-61")] == "vanished"
    assert status[("pattern P-CAP-901", "35-45")] == "unverified"  # no history to compare with
    moved = [c for c in data["checks"] if c["origin"] == "message M-T02"][0]
    assert moved["current"] == "torch_npu/csrc/core/npu/FakeGraph.cpp:52"
    assert data["summary"]["total"] == 11


def test_verify_anchors_text_in_chinese(run_cli):
    code, out, _ = run_cli("code", "verify-anchors", "--kb", str(KB), "--lang", "zh")
    assert code == 1
    assert "该报错信息现位于第 52 行（锚点为 50）" in out and "发生漂移" in out


def test_verify_anchors_bad_inputs(run_cli, tmp_path):
    code, _out, err = run_cli("code", "verify-anchors", "--messages", str(tmp_path / "none.csv"))
    assert code == 2 and "no such file" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    code, _out, err = run_cli("code", "verify-anchors", "--messages", str(bad))
    assert code == 2 and "not a messages table" in err


def test_code_without_action_prints_help_and_exits_2(run_cli):
    code, out, _ = run_cli("code")
    assert code == 2 and "verify-anchors" in out and "examples:" in out


def test_no_source_configured_is_a_one_line_error(run_cli, monkeypatch):
    monkeypatch.delenv("NPU_GRAPH_SOURCE")
    code, _out, err = run_cli("code", "locate", "x")
    assert code == 2 and "pass --source DIR" in err and "NPU_GRAPH_SOURCE" in err
