"""`npu-graph perf compare` on synthetic latency distributions with known shifts, and the
statistics under it."""
from __future__ import annotations

import json
import random

import pytest

from npu_graph_skill.perf.compare import compare_files, compare_samples
from npu_graph_skill.perf.stats import mann_whitney_u, percentile, summarize, tail_exceedance


def latencies(seed, n=200, base=1.0, sigma=0.08, spikes=0.01):
    """Lognormal jitter around `base` ms with rare 1.5-3x spikes, like real replay timings."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        value = base * rng.lognormvariate(0.0, sigma)
        if rng.random() < spikes:
            value *= rng.uniform(1.5, 3.0)
        out.append(value)
    return out


def bench_file(path, graph, eager, **env):
    data = {"schema": "npu-graph-skill/perf-bench/1", "graph_ms": graph, "eager_ms": eager,
            "env": {"backend": "npu", "device_name": "Ascend910B2", "cann": "8.2.RC1", "torch": "2.5.1",
                    "torch_npu": "2.5.1", **env},
            "config": {"warmup": 10, "iters": len(graph)}}
    path.write_text(json.dumps(data))
    return str(path)


def test_known_slowdown_is_a_regression_exit_1(run_cli, tmp_path):
    a = bench_file(tmp_path / "a.json", latencies(1), latencies(2, base=3.0))
    b = bench_file(tmp_path / "b.json", latencies(3, base=1.2), latencies(4, base=3.0))
    code, out, err = run_cli("perf", "compare", a, b, "--lang", "en")
    assert code == 1 and out.rstrip().endswith("verdict: regression")
    report = compare_files(a, b)
    graph, eager = report.modes
    assert graph.verdict == "regression" and graph.p50_delta == pytest.approx(0.2, abs=0.05)
    assert eager.verdict == "no-change"


def test_known_speedup_is_an_improvement_exit_0(run_cli, tmp_path):
    a = bench_file(tmp_path / "a.json", latencies(5), latencies(6, base=3.0))
    b = bench_file(tmp_path / "b.json", latencies(7, base=0.8), latencies(8, base=3.0))
    code, out, _ = run_cli("perf", "compare", a, b, "--json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "improvement"
    assert data["modes"][0]["mode"] == "graph" and data["modes"][0]["verdict"] == "improvement"
    assert data["modes"][0]["rank_test"]["p_value"] < 1e-6


@pytest.mark.parametrize("seed", [11, 12, 13, 14, 15])
def test_same_distribution_under_noise_is_no_change(tmp_path, seed):
    a = bench_file(tmp_path / "a.json", latencies(seed), latencies(seed + 100, base=3.0))
    b = bench_file(tmp_path / "b.json", latencies(seed + 200), latencies(seed + 300, base=3.0))
    assert compare_files(a, b).verdict == "no-change"


def test_false_alarm_rate_under_noise_is_low():
    alarms = sum(compare_samples("graph", latencies(s, n=100, sigma=0.15, spikes=0.03),
                                 latencies(s + 5000, n=100, sigma=0.15, spikes=0.03), 0.05, 0.25, 0.01).verdict
                 != "no-change" for s in range(300))
    assert alarms / 300 <= 0.03


def test_tiny_but_significant_shift_is_no_change():
    # 2% slower over 5000 samples: the rank test sees it, the 5% threshold says it does not matter
    result = compare_samples("graph", latencies(21, n=5000, sigma=0.02, spikes=0),
                             latencies(22, n=5000, base=1.02, sigma=0.02, spikes=0), 0.05, 0.25, 0.01)
    assert result.rank_test.p_value < 1e-6 and result.verdict == "no-change"


def test_tail_regression_with_unchanged_median():
    base = latencies(31, n=300, spikes=0.0)
    spiky = latencies(32, n=300, spikes=0.2)
    result = compare_samples("graph", base, spiky, 0.05, 0.25, 0.01)
    assert abs(result.p50_delta) < 0.05
    assert result.verdict == "regression" and "P99" in result.reason


def test_setup_differences_are_flagged(tmp_path):
    a = bench_file(tmp_path / "a.json", latencies(41), latencies(42))
    b = bench_file(tmp_path / "b.json", latencies(43), latencies(44), cann="8.3.RC1")
    report = compare_files(a, b, lang="zh")
    assert {"field": "env.cann", "baseline": "8.2.RC1", "candidate": "8.3.RC1"} in report.env_differences
    assert any(f.id == "CMP-NOT-LIKE-FOR-LIKE" for f in report.findings)


def test_bad_inputs_exit_2(run_cli, tmp_path):
    good = bench_file(tmp_path / "good.json", latencies(1), latencies(2))
    cases = {
        "empty.json": (b"", "empty file"),
        "binary.json": (b"\x00\x01\x02\x03", "binary file"),
        "text.json": ("时延 not json".encode("gb18030"), "not valid JSON"),
        "other.json": (b'{"tasks": 1}', "no eager_ms / graph_ms"),
        "strings.json": (b'{"graph_ms": ["1.0", "2.0"]}', "list of finite numbers"),
        "nan.json": (b'{"graph_ms": [NaN, 1.0]}', "list of finite numbers"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        code, _, err = run_cli("perf", "compare", good, str(path))
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, name
    code, _, err = run_cli("perf", "compare", good, str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in err
    code, _, err = run_cli("perf", "compare", good, str(tmp_path))
    assert code == 2 and "is a directory" in err


# --- the statistics -----------------------------------------------------------------------------

def test_percentile_and_summary_match_the_linear_rule():
    values = [4.0, 1.0, 3.0, 2.0, 5.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 90) == pytest.approx(4.6)
    assert percentile(values, 99) == pytest.approx(4.96)
    summary = summarize(values)
    assert (summary.n, summary.mean, summary.min, summary.max) == (5, 3.0, 1.0, 5.0)
    assert summary.stdev == pytest.approx(1.5811, abs=1e-4)


def test_mann_whitney_matches_the_textbook_value():
    # U = 9 for b entirely above a; normal approximation with continuity correction: p = 0.0809
    test = mann_whitney_u([1, 2, 3], [4, 5, 6])
    assert test.u == 9 and test.prob_b_greater == 1.0
    assert test.p_value == pytest.approx(0.0809, abs=1e-3)
    ties = mann_whitney_u([1, 1, 1, 1], [1, 1, 1, 1])
    assert ties.p_value == 1.0
    assert mann_whitney_u([1], [2, 3]) is None


def test_tail_exceedance_detects_more_spikes():
    test = tail_exceedance(latencies(51, n=300, spikes=0.0), latencies(52, n=300, spikes=0.2))
    assert test.share_b > test.share_a and test.p_value < 0.01
