"""`npu-graph perf trace` on the real torch_npu profiler sample (an eager run) and on small
profiles written here in the same formats (graph-mode runs, missing and broken files)."""
from __future__ import annotations

import json
import shutil

import pytest

from npu_graph_skill.perf import jsonstream
from npu_graph_skill.perf.trace import analyze_trace

KERNEL_HEADER = ("Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
                 "Duration(us),Wait Time(us),Block Dim\n")
STEP_HEADER = ("Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
               "Communication(Not Overlapped and Exclude Receive),Preparing\n")
API_HEADER = "Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
T0 = 1736412474730135.0


@pytest.fixture(scope="module")
def sample_dir(shared_data):
    return shared_data / "samples" / "profiler_torch_npu"


@pytest.fixture(scope="module")
def sample_report(sample_dir):
    return analyze_trace(str(sample_dir))


# --- the real sample ---------------------------------------------------------------------------

def test_real_sample_is_an_eager_run(sample_report):
    g = sample_report.graph_mode
    assert g["active"] is False
    assert g["graph_kernels"] == 0 and g["eager_kernels"] == 187  # 191 rows, 4 of them HCCL
    assert g["replays"] == 0
    assert any(f.id == "TR-GRAPH-MODE" and "eager" in f.title["en"] for f in sample_report.findings)


def test_real_sample_step_figures_match_step_trace_time(sample_report):
    (step,) = sample_report.steps
    assert step.step == "50"
    assert step.computing_us == pytest.approx(8868.24, abs=0.01)
    assert step.communication_not_overlapped_us == pytest.approx(95962.016, abs=0.01)
    assert step.free_us == pytest.approx(25032.619, abs=0.01)
    assert sample_report.verdict["bound"] == "communication"
    assert sample_report.verdict["free_share"] == pytest.approx(0.1928, abs=1e-3)


def test_real_sample_kernel_figures(sample_report):
    k = sample_report.kernels
    assert (k.rows, k.compute_kernels, k.communication_kernels) == (191, 187, 4)
    # host launch cost measured in the same profile: api_statistic node/launch Avg(us)
    assert k.short_threshold_us == pytest.approx(22.489)
    assert 0.5 < k.short_share < 0.8
    assert k.wait_us.p50 > k.duration_us.p50  # the device waits longer than it computes
    assert k.top_instances[0]["name"] == "hcom_allReduce__271_0_1"


def test_real_sample_recommendations(sample_report):
    by_id = {f.id: f for f in sample_report.findings}
    assert "TR-GRAPH-CANDIDATE" in by_id  # eager + short kernels + launch gaps
    assert "86.47 ms" in by_id["TR-COMM-WAIT"].detail["en"]  # the stalled allreduce of step 50
    assert "19 aclopCompileAndExecute" in by_id["TR-ACLOP"].detail["en"]
    assert "TR-GRAPH-FREE" not in by_id and "TR-PARTIAL-GRAPH" not in by_id


def test_real_sample_files_from_two_runs_are_noted(sample_report):
    # trace_view.json in the sample comes from another repository's test data (SOURCES.md)
    assert any("different time ranges" in n for n in sample_report.notes)
    assert sample_report.timeline.device_tasks == 276 and sample_report.timeline.device_graph_tasks == 0


def test_cli_outputs(run_cli, sample_dir, tmp_path):
    code, out, err = run_cli("perf", "trace", str(sample_dir), "--lang", "en")
    assert code == 0 and "communication-bound" in out and "eager" in out
    code, out, _ = run_cli("perf", "trace", str(sample_dir), "--json")
    data = json.loads(out)
    assert data["schema"] == "npu-graph-skill/perf-trace/1"
    assert data["graph_mode"]["active"] is False and data["steps"][0]["step"] == "50"
    code, out, _ = run_cli("perf", "trace", str(sample_dir), "--lang", "zh", "--format", "md")
    assert code == 0 and "本次运行为 eager" in out and out.startswith("# ")
    report = tmp_path / "r.json"
    page = tmp_path / "r.html"
    code, out, err = run_cli("perf", "trace", str(sample_dir), "--json", str(report), "--html", str(page))
    assert code == 0 and json.loads(report.read_text())["verdict"]["bound"] == "communication"
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") >= 2 and "<script" not in html and "src=" not in html and "href=" not in html


def test_single_file_and_missing_files(sample_dir, tmp_path):
    only = analyze_trace(str(sample_dir / "kernel_details.csv"))
    assert only.kernels.rows == 191 and only.step_source.endswith("(kernel intervals)")
    part = tmp_path / "part"
    part.mkdir()
    shutil.copy(sample_dir / "kernel_details.csv", part)
    (part / "trace_view.json").write_bytes(b"")
    (part / "communication.json").write_bytes(b"")
    report = analyze_trace(str(part))
    assert "trace_view.json is empty; skipped" in report.notes
    assert "communication.json is empty; skipped" in report.notes
    assert "step_trace_time.csv" in report.missing and report.kernels.rows == 191


# --- graph-mode profiles in the real formats ---------------------------------------------------

def _write_profile(root, steps, free_us, model_for_step, replays_per_step=1):
    out = root / "host_1_20250101_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    rows, events, t = [], [], T0
    for step in steps:
        model = model_for_step(step)
        for i in range(40):
            rows.append(f"{step},{model},{i},2,kern_{i},Add,static,AI_VECTOR_CORE,{t:.3f}\t,8.0,1.0,8\n")
            events.append({"name": f"kern_{i}", "pid": 800, "tid": 2, "ts": f"{t:.3f}", "dur": 8.0, "ph": "X",
                           "args": {"Model Id": model, "Task Type": "AI_VECTOR_CORE", "Stream Id": 2, "Task Id": i}})
            t += 9.0
        if model != 4294967295:
            for _ in range(replays_per_step):
                events.append({"name": "AscendCL@aclmdlRIExecuteAsync", "pid": 900, "tid": 1, "ts": f"{t:.3f}",
                               "dur": 12.0, "ph": "X", "args": {"level": "acl", "Mode": "ACL_MODEL"}})
        t += free_us
    events += [{"ph": "M", "name": "process_name", "pid": 800, "tid": 0, "args": {"name": "Ascend Hardware"}},
               {"ph": "M", "name": "process_name", "pid": 900, "tid": 0, "args": {"name": "CANN"}}]
    (out / "kernel_details.csv").write_text(KERNEL_HEADER + "".join(rows))
    (out / "step_trace_time.csv").write_text(STEP_HEADER + "".join(
        f"{s},360.0,0,0,0,{free_us},{360.0 + free_us},0,0,5.0\n" for s in steps))
    graph_steps = sum(1 for s in steps if model_for_step(s) != 4294967295)
    (out / "api_statistic.csv").write_text(
        API_HEADER + f"acl,aclmdlRIExecuteAsync,{12.0 * graph_steps},{graph_steps},12.0,12.0,12.0,0\n")
    (out / "trace_view.json").write_text(json.dumps(events))
    return root / "host_1_20250101_ascend_pt"


def test_graph_run_with_eager_steps_and_idle_device(tmp_path):
    run = _write_profile(tmp_path, steps=[1, 2, 3, 4], free_us=600.0,
                         model_for_step=lambda s: 4294967295 if s == 4 else 7)
    report = analyze_trace(str(tmp_path))  # the parent folder of one *_ascend_pt run
    assert report.root.endswith("ASCEND_PROFILER_OUTPUT") and str(run) in report.root
    assert report.graph_mode["active"] is True and report.graph_mode["replays"] == 3
    assert report.verdict["bound"] == "host"
    by_id = {f.id: f for f in report.findings}
    assert "TR-GRAPH-FREE" in by_id
    partial = by_id["TR-PARTIAL-GRAPH"]
    assert "Step(s) 4 ran with no graph kernel" in partial.detail["en"]
    assert "case:vllm-ascend-16049" in partial.refs
    assert "TR-GRAPH-CANDIDATE" not in by_id


def test_device_bound_graph_run(tmp_path):
    _write_profile(tmp_path, steps=[1, 2], free_us=10.0, model_for_step=lambda s: 3)
    report = analyze_trace(str(tmp_path))
    assert report.verdict["bound"] == "device"
    assert report.graph_mode["active"] is True and report.kernels.graph_time_share == pytest.approx(1.0)
    assert not {"TR-GRAPH-FREE", "TR-PARTIAL-GRAPH", "TR-GRAPH-CANDIDATE"} & {f.id for f in report.findings}


# --- the streaming JSON reader ------------------------------------------------------------------

def test_stream_reader_across_chunk_boundaries(tmp_path, monkeypatch):
    events = [{"name": f"e{i}", "ts": str(i), "args": {"s": "x" * (i % 13), "n": [i, {"k": "}]"}]}} for i in range(300)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events, indent=1))
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 7)
    assert list(jsonstream.iter_json_events(str(path))) == events
    wrapped = tmp_path / "w.json"
    wrapped.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [], "traceEvents": events[:20]}))
    assert list(jsonstream.iter_json_events(str(wrapped))) == events[:20]


def test_stream_reader_truncated_and_bounded(tmp_path):
    events = [{"name": f"e{i}", "ph": "X", "ts": "1", "dur": 1} for i in range(100)]
    raw = json.dumps(events)
    path = tmp_path / "t.json"
    path.write_text(raw[: len(raw) * 2 // 3])
    notes = []
    got = list(jsonstream.iter_json_events(str(path), notes))
    assert 0 < len(got) < 100 and "truncated" in notes[0]
    notes = []
    path.write_text(raw)
    assert len(list(jsonstream.iter_json_events(str(path), notes, max_events=10))) == 10 and notes


def test_truncated_trace_view_still_analysed(tmp_path, sample_dir):
    raw = (sample_dir / "trace_view.json").read_bytes()
    (tmp_path / "trace_view.json").write_bytes(raw[: len(raw) // 2])
    report = analyze_trace(str(tmp_path))
    assert report.timeline.events > 100 and any("truncated" in n for n in report.notes)


# --- bad input ----------------------------------------------------------------------------------

def test_bad_inputs_exit_2_with_one_line(run_cli, tmp_path):
    cases = []
    cases.append((tmp_path / "missing", "no such file"))
    empty = tmp_path / "empty"
    empty.mkdir()
    cases.append((empty, "no torch_npu profiler output"))
    binary = tmp_path / "bin"
    binary.mkdir()
    (binary / "trace_view.json").write_bytes(b"\x00\x01\x02" * 100)
    cases.append((binary, "binary"))
    two = tmp_path / "two"
    for name in ("a_ascend_pt", "b_ascend_pt"):
        (two / name / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    cases.append((two, "holds 2 profiler runs"))
    db = tmp_path / "db"
    (db / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (db / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db").write_bytes(b"SQLite format 3\x00")
    cases.append((db, "database export"))
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    cases.append((other, "not a profiler output file"))
    for path, message in cases:
        code, out, err = run_cli("perf", "trace", str(path))
        assert code == 2, (path, err)
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_gb18030_and_crlf_csv(tmp_path, sample_dir):
    raw = (sample_dir / "op_statistic.csv").read_text(encoding="utf-8")
    raw = raw.replace("ForeachAddList", "自定义算子", 1).replace("\n", "\r\n")
    (tmp_path / "op_statistic.csv").write_bytes(raw.encode("gb18030"))
    report = analyze_trace(str(tmp_path))
    assert report.top_operators[0]["op_type"] == "自定义算子"
    assert report.top_operators[0]["total_us"] == pytest.approx(1954.719)


def test_msprof_op_summary_is_read_through_column_aliases(shared_data):
    report = analyze_trace(str(shared_data / "samples" / "msprof" / "op_summary_1.csv"))
    k = report.kernels
    assert (k.rows, k.compute_kernels, k.communication_kernels) == (21, 17, 4)
    assert report.graph_mode["active"] is False
    assert k.top_instances[0]["name"] == "FlashAttentionScore" and k.top_instances[0]["duration_us"] == pytest.approx(7120.0, abs=0.1)
    assert k.short_threshold_source.startswith("default")  # no api_statistic / trace_view next to it


def test_collective_stalling_inside_a_graph_points_to_the_case(tmp_path):
    run = _write_profile(tmp_path, steps=[1, 2], free_us=10.0, model_for_step=lambda s: 5)
    out = run / "ASCEND_PROFILER_OUTPUT"
    (out / "step_trace_time.csv").write_text(STEP_HEADER + "1,360.0,5000.0,0,5000.0,10.0,5370.0,0,5000.0,5.0\n")
    comm = {"step1": {"p2p": {}, "collective": {"hcom_allReduce__1_0_1@123": {
        "Communication Time Info": {"Elapse Time(ms)": 5.0, "Transit Time(ms)": 0.05, "Wait Time(ms)": 4.9,
                                    "Synchronization Time(ms)": 4.8, "Idle Time(ms)": 0.05},
        "Communication Bandwidth Info": {}}, "Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 5.0}}}}}
    (out / "communication.json").write_text(json.dumps(comm))
    report = analyze_trace(str(run))
    assert report.verdict["bound"] == "communication" and report.graph_mode["active"] is True
    assert [c["op"] for c in report.communication] == ["hcom_allReduce__1_0_1"]  # the per-step total is not an op
    finding = {f.id: f for f in report.findings}["TR-COMM-WAIT"]
    assert "4.90 ms waiting for peers" in finding.detail["en"]
    assert "case:vllm-ascend-13688" in finding.refs
