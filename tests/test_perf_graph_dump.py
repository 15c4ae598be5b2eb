"""`npu-graph perf graph-dump` on the real NPUGraph.debug_dump sample and on bad input."""
from __future__ import annotations

import gzip
import json

import pytest

from npu_graph_skill.perf.graph_dump import analyze_graph_dump, clean_kernel_name, control_handle


@pytest.fixture(scope="module")
def dump_path(shared_data):
    return shared_data / "samples" / "aclgraph_debug" / "graph_debug.json"


def test_real_dump_counts_match_the_file(dump_path):
    report = analyze_graph_dump(str(dump_path))
    assert report.tasks == 82
    assert [s.stream for s in report.streams] == ["stream161", "stream162", "stream163", "stream164", "stream165"]
    assert [s.tasks for s in report.streams] == [22, 19, 11, 19, 11]
    assert report.model_ids == [1]
    assert report.process == "1993459 aclGraph"
    assert report.kinds["event_record"] == 25 and report.kinds["event_wait"] == 15
    assert report.kinds["nop"] == 8 and report.kinds["memcpy"] == 3 and report.kinds["event_reset"] == 1


def test_real_dump_event_pairs_and_unmatched(dump_path):
    report = analyze_graph_dump(str(dump_path))
    pairs = {p.handle: p for p in report.event_pairs}
    assert len(pairs) == 6
    # EVENT_RECORD_20627656278016 on stream161 (task 0) is waited on by stream163 (task 0)
    assert (pairs["20627656278016"].record_stream, pairs["20627656278016"].wait_stream) == ("stream161", "stream163")
    assert all(p.cross_stream for p in report.event_pairs)
    assert len(report.unmatched_waits) == 9
    assert len(report.unmatched_records) == 19
    assert "20627656278240" in {w.handle for w in report.unmatched_waits}
    ids = {f.id for f in report.findings}
    assert {"GD-WAIT-EXTERNAL", "GD-COMM-IN-GRAPH", "GD-EVENT-RESET"} <= ids


def test_real_dump_collectives_are_named(dump_path):
    report = analyze_graph_dump(str(dump_path))
    names = {c["name"] for c in report.communication}
    assert {"aiv_all_gather_bfloat16_t", "aiv_reduce_scatter_bfloat16_t", "aiv_all_to_all_v_bfloat16_t"} <= names
    assert len(report.communication) == 17
    kernels = {k["name"]: k["count"] for k in report.kernels}
    assert kernels["Transpose_high_performance_5"] == 2  # hash part removed, two instances merged


def test_name_helpers():
    assert control_handle("EVENT_WAIT_20627656278240") == "20627656278240"
    assert clean_kernel_name("Transpose_be837fe498fad076d01c0ce8dfd3d014_high_performance_5") == \
        "Transpose_high_performance_5"
    assert clean_kernel_name("MatMulV2_ND_ND_FP32_FP32_false_true_all_65745") == \
        "MatMulV2_ND_ND_FP32_FP32_false_true_all_65745"


def test_cli_text_json_and_chinese(run_cli, dump_path, tmp_path):
    code, out, err = run_cli("perf", "graph-dump", str(dump_path), "--lang", "en")
    assert code == 0 and "82" in out and "stream165" in out and "Waits without a record" in out
    code, out, _ = run_cli("perf", "graph-dump", str(dump_path), "--json")
    data = json.loads(out)
    assert data["schema"] == "npu-graph-skill/perf-graph-dump/1" and data["tasks"] == 82
    code, out, _ = run_cli("perf", "graph-dump", str(dump_path), "--lang", "zh")
    assert code == 0 and "图内无对应 record 的 wait" in out
    html_path = tmp_path / "dump.html"
    code, _, _ = run_cli("perf", "graph-dump", str(dump_path), "--html", str(html_path))
    assert code == 0 and "<svg" in html_path.read_text(encoding="utf-8")


def test_aligned_dump_with_flow_events_reads_the_same(dump_path, tmp_path):
    events = json.loads(dump_path.read_text())
    events.append({"name": "PAIR_1", "cat": "event_record->wait", "ph": "s", "pid": "1 aclGraph",
                   "tid": "stream161", "ts": 1, "id": 1, "bp": "e"})
    aligned = tmp_path / "graph_debug.aligned.json"
    aligned.write_text(json.dumps(events, indent=2))
    assert analyze_graph_dump(str(aligned)).tasks == 82


def test_crlf_and_gzip_read_the_same(dump_path, tmp_path):
    crlf = tmp_path / "crlf.json"
    crlf.write_bytes(dump_path.read_bytes().replace(b"\n", b"\r\n"))
    assert analyze_graph_dump(str(crlf)).tasks == 82
    gz = tmp_path / "dump.json.gz"
    gz.write_bytes(gzip.compress(dump_path.read_bytes()))
    assert analyze_graph_dump(str(gz)).tasks == 82


def test_truncated_dump_gives_partial_result_with_note(dump_path, tmp_path):
    raw = dump_path.read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(raw[: len(raw) // 2])
    report = analyze_graph_dump(str(cut))
    assert 0 < report.tasks < 82
    assert any("truncated" in n for n in report.notes)


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"\x00\x01\x02binary", "binary"),
    (b"not json at all", "not a JSON trace"),
    (b'[{"ph": "X", "name": "aten::add", "pid": 1, "tid": 1, "ts": "1", "dur": 2}]', "perf trace"),
    (b"[]", "no tasks"),
])
def test_bad_input_is_one_line_exit_2(run_cli, tmp_path, content, message):
    path = tmp_path / "input.json"
    path.write_bytes(content)
    code, out, err = run_cli("perf", "graph-dump", str(path))
    assert code == 2
    assert err.startswith("npu-graph: error:") and message in err and len(err.strip().splitlines()) == 1


def test_missing_path_and_directory_exit_2(run_cli, tmp_path):
    code, _, err = run_cli("perf", "graph-dump", str(tmp_path / "nope.json"))
    assert code == 2 and "no such file" in err
    code, _, err = run_cli("perf", "graph-dump", str(tmp_path))
    assert code == 2 and "is a directory" in err
