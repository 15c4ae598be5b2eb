"""The QUALITY.md bad-input list against every `perf` subcommand: a one-line message and exit 2,
or a best-effort result that says what it skipped; never a traceback, never half a file."""
from __future__ import annotations

import gzip
import json
import os

import pytest

from npu_graph_skill.perf import output

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _one_line_error(code, err):
    return code == 2 and err.startswith("npu-graph: error:") and len(err.strip().splitlines()) == 1


def test_ten_megabyte_single_line_csv_is_cut_not_fatal(run_cli, tmp_path):
    folder = tmp_path / "prof"
    folder.mkdir()
    header = "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\n"
    row = "1,4294967295,1,2,k,Add,dynamic,AI_CORE,100.0\t,5.0,1.0\n"
    (folder / "kernel_details.csv").write_text(header + row + "1,4294967295,2,2," + "x" * (10 << 20) + "\n" + row)
    code, out, err = run_cli("perf", "trace", str(folder), "--json")
    assert code == 0, err
    assert json.loads(out)["kernels"]["rows"] == 2  # the over-long row has no duration: skipped


def test_ten_megabyte_single_line_json_dump_reads(run_cli, tmp_path):
    task = {"name": "k_" + "a" * 40, "pid": "1 aclGraph", "tid": "stream1", "ts": 0, "dur": 9.5, "ph": "X",
            "args": {"Model Id": 1, "Stream Id": 1, "Task Id": 0}}
    events = [dict(task, ts=i) for i in range(70000)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(events, separators=(",", ":")))
    assert path.stat().st_size > 10 << 20
    code, out, err = run_cli("perf", "graph-dump", str(path), "--json")
    assert code == 0 and json.loads(out)["tasks"] == 70000


def test_truncated_gzip_dump_is_partial_with_note(run_cli, shared_data, tmp_path):
    raw = gzip.compress((shared_data / "samples" / "aclgraph_debug" / "graph_debug.json").read_bytes())
    path = tmp_path / "dump.json.gz"
    path.write_bytes(raw[: len(raw) * 3 // 4])
    code, out, err = run_cli("perf", "graph-dump", str(path), "--json")
    data = json.loads(out)
    assert code == 0 and 0 < data["tasks"] < 82 and data["notes"]


def test_invalid_utf8_inside_json_strings_is_tolerated(tmp_path, shared_data):
    from npu_graph_skill.perf.graph_dump import analyze_graph_dump

    raw = (shared_data / "samples" / "aclgraph_debug" / "graph_debug.json").read_bytes()
    path = tmp_path / "latin.json"
    path.write_bytes(raw.replace(b"hccl_aiv_sync", b"hccl_\xff\xfe_sync", 1))
    assert analyze_graph_dump(str(path)).tasks == 82


@pytest.mark.skipif(IS_ROOT, reason="root reads files without read permission")
@pytest.mark.parametrize("command", ["graph-dump", "trace", "compare"])
def test_unreadable_file_exit_2(run_cli, tmp_path, command):
    path = tmp_path / ("trace_view.json" if command == "trace" else "x.json")
    path.write_text("[]")
    path.chmod(0)
    args = ["perf", command, str(path)] + ([str(path)] if command == "compare" else [])
    code, _, err = run_cli(*args)
    assert _one_line_error(code, err) and "permission denied" in err


@pytest.mark.parametrize("args", [
    ("perf", "graph-dump", "{missing}"),
    ("perf", "trace", "{missing}"),
    ("perf", "compare", "{missing}", "{missing}"),
    ("perf", "bench", "{missing}:build", "--backend", "perf_double:DoubleBackend"),
])
def test_missing_paths_exit_2(run_cli, tmp_path, args):
    missing = str(tmp_path / "missing.py")
    code, _, err = run_cli(*[a.replace("{missing}", missing) for a in args])
    assert _one_line_error(code, err)


def test_directory_for_a_file_exit_2(run_cli, tmp_path):
    for args in (("perf", "graph-dump", str(tmp_path)), ("perf", "compare", str(tmp_path), str(tmp_path)),
                 ("perf", "bench", f"{tmp_path}:build")):
        code, _, err = run_cli(*args)
        assert _one_line_error(code, err) and "directory" in err, args


def test_perf_without_subcommand_shows_usage(run_cli):
    code, out, err = run_cli("perf")
    assert code == 2 and "bench" in err and "graph-dump" in err


def test_ctrl_c_leaves_no_partial_file(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("previous")

    def interrupted(tmp):
        with open(tmp, "w") as handle:
            handle.write('{"half": ')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        output.write_with(str(target), interrupted)
    assert target.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_ctrl_c_in_a_command_is_exit_2(run_cli, monkeypatch, shared_data, tmp_path):
    from npu_graph_skill.perf import graph_dump

    def interrupt(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(graph_dump, "analyze_graph_dump", interrupt)
    out_file = tmp_path / "out.json"
    code, _, err = run_cli("perf", "graph-dump", str(shared_data / "samples" / "aclgraph_debug" / "graph_debug.json"),
                           "--json", str(out_file))
    assert code == 2 and "interrupted" in err and not out_file.exists()
