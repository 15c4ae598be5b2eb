"""`npu-graph perf bench` end to end on the accelerator double (tests/perf_double.py): the same
code path as on an NPU or GPU, with a simulated clock so the figures are known in advance."""
from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

import perf_double
from npu_graph_skill.perf.bench import parse_target_args, run_bench

HERE = pathlib.Path(__file__).parent
DOUBLE = "perf_double:DoubleBackend"
EAGER_MS = perf_double.OPS_PER_STEP * (perf_double.LAUNCH_MS + perf_double.KERNEL_MS)
GRAPH_MS = (perf_double.LAUNCH_MS + perf_double.KERNEL_MS  # copy_ of the new input
            + perf_double.REPLAY_MS + perf_double.OPS_PER_STEP * perf_double.KERNEL_MS)


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def test_bench_end_to_end_json(run_cli, tmp_path):
    out = tmp_path / "run.json"
    code, text, err = run_cli("perf", "bench", "perf_double:make_step", "--backend", DOUBLE,
                              "--warmup", "4", "--iters", "25", "--json", str(out), "--lang", "en")
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["schema"] == "npu-graph-skill/perf-bench/1"
    assert len(data["eager_ms"]) == 25 and len(data["graph_ms"]) == 25
    assert data["eager_ms"][0] == pytest.approx(EAGER_MS) and data["graph_ms"][0] == pytest.approx(GRAPH_MS)
    assert data["speedup_p50"] == pytest.approx(EAGER_MS / GRAPH_MS)
    assert data["config"]["warmup"] == 4 and data["config"]["iters"] == 25
    assert data["env"]["backend"] == "double" and data["env"]["device_name"] == "simulated device"
    assert "python" in data["env"]
    assert data["outputs_max_abs_diff"] == 0
    assert "3.33x" in text and "Graph replay is 3.33x eager" in text  # the summary goes to stdout too


def test_capture_once_and_refresh_inputs_every_replay():
    report = run_bench("perf_double:make_step", backend=DOUBLE, warmup=3, iters=20)
    assert perf_double.Device.captures == 1
    assert perf_double.Device.replays == 3 + 20  # warm-up replays + timed replays
    assert perf_double.Device.copies == 3 + 20  # one copy_ of the input before every replay
    assert report.graph.p50 == pytest.approx(GRAPH_MS) and report.eager.p99 == pytest.approx(EAGER_MS)


def test_capture_failure_is_reported_and_exits_1(run_cli):
    code, out, err = run_cli("perf", "bench", "perf_double:make_syncing_step", "--backend", DOUBLE, "--iters", "5",
                             "--json")
    assert code == 1
    data = json.loads(out)
    assert "operation not permitted when stream is capturing" in data["graph_error"]
    assert len(data["eager_ms"]) == 5 and data["graph_ms"] == []
    assert data["findings"][0]["id"] == "BN-CAPTURE-FAILED"


def test_frozen_python_state_is_caught_as_output_mismatch(run_cli):
    code, out, _ = run_cli("perf", "bench", "perf_double:make_stateful_step", "--backend", DOUBLE, "--iters", "5",
                           "--lang", "zh")
    assert code == 1 and "图输出与 eager 不一致" in out


def test_html_report_is_self_contained(run_cli, tmp_path):
    page = tmp_path / "bench.html"
    code, _, _ = run_cli("perf", "bench", "perf_double:make_step", "--backend", DOUBLE, "--iters", "30",
                         "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert code == 0 and html.count("<svg") == 2 and "graph" in html and "eager" in html
    assert "<script" not in html and "src=" not in html and "href=" not in html


def test_plot_needs_matplotlib_or_writes_png(run_cli, tmp_path):
    png = tmp_path / "bench.png"
    code, _, err = run_cli("perf", "bench", "perf_double:make_step", "--backend", DOUBLE, "--iters", "10",
                           "--plot", str(png))
    if importlib.util.find_spec("matplotlib") is None:
        assert code == 2 and "npu-graph-skill[plot]" in err and not png.exists()
    else:
        assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(importlib.util.find_spec("torch_npu") is not None, reason="an NPU stack is installed here")
def test_no_accelerator_is_a_clear_error(run_cli):
    code, out, err = run_cli("perf", "bench", str(HERE.parent / "examples" / "perf_target.py") + ":build",
                             "--backend", "npu")
    assert code == 2 and err.startswith("npu-graph: error: no accelerator") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("target, message", [
    ("no_colon", "expected module:function"),
    ("missing/file.py:build", "no such file"),
    ("perf_double:nothing_here", "cannot load target"),
    ("perf_double:not_a_factory", "must return (callable, example_inputs)"),
])
def test_bad_targets_exit_2(run_cli, target, message):
    code, out, err = run_cli("perf", "bench", target, "--backend", DOUBLE)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("backend", ["cuda", "npu"])
def test_torch_backend_runs_against_torch_api_names(monkeypatch, backend):
    """The real TorchBackend over a stand-in torch (and torch_npu) module: the calls it makes are torch's."""
    import sys
    import types

    perf_double.Device.reset()
    monkeypatch.setitem(sys.modules, "torch", perf_double.fake_torch())
    fake_npu = types.ModuleType("torch_npu")
    fake_npu.__version__ = "0.0+fake"
    monkeypatch.setitem(sys.modules, "torch_npu", fake_npu)
    report = run_bench("perf_double:make_step", backend=backend, warmup=2, iters=5)
    assert report.env["backend"] == backend and report.env["device"] == f"{backend}:0"
    assert report.env["device_name"] == "fake accelerator"
    if backend == "cuda":
        assert report.env["cuda"] == "0.0"
    else:
        assert report.env["torch_npu"] == "0.0+fake" and "cann" in report.env
    assert report.speedup_p50 == pytest.approx(EAGER_MS / GRAPH_MS)
    assert report.memory["capture_pool_mb"] == 0.0 and report.memory["graph_peak_mb"] == 3.0
    assert report.outputs_max_abs_diff == 0.0


def test_target_args_are_typed():
    assert parse_target_args(["batch=8", "scale=0.5", "name=mlp", "fast=true"]) == \
        {"batch": 8, "scale": 0.5, "name": "mlp", "fast": True}
    report = run_bench("perf_double:make_step", backend=DOUBLE, warmup=1, iters=3, target_args={"ops": 4})
    assert report.eager.p50 == pytest.approx(4 * (perf_double.LAUNCH_MS + perf_double.KERNEL_MS))


def test_json_to_unwritable_place_is_exit_2(run_cli, tmp_path):
    code, _, err = run_cli("perf", "bench", "perf_double:make_step", "--backend", DOUBLE, "--iters", "2",
                           "--json", str(tmp_path / "no" / "such" / "dir.json"))
    assert code == 2 and "does not exist" in err
