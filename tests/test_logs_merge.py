"""Logs of a whole cluster job: per-node summaries merged into the report that analysing every file on one machine
gives, nodes' clocks aligned from events all ranks log together, and summaries that must not be merged refused.

The job is generated in the real layouts (benchmarks/logs_corpus.py `write_cluster_job`: TORCH_NPU_LOGS G2/G3 and vLLM
worker output, CANN debug and run plogs with the HCCL communicator-init record, the vllm-ascend#2629 failure on rank 13
and HCCL / 107020 timeouts on every other rank)."""
from __future__ import annotations

import json
import pathlib

import pytest

from test_logs_analyze import _corpus



def _job(root: pathlib.Path, **options) -> dict:
    return _corpus().write_cluster_job(str(root), ranks=64, nodes=8, kb_per_rank=6, **options)


def _summaries(run_cli, job: dict, out: pathlib.Path) -> pathlib.Path:
    out.mkdir()
    for folder in job["nodes"]:
        node = pathlib.Path(folder).name
        code, _, err = run_cli("logs", folder, "--summary-out", str(out / f"{node}.json"), "--node", node, "--summary")
        assert code == 1 and f"wrote the summary {out / node}.json" in err
    return out


def _comparable(data):
    return _corpus().merge_comparable(data)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    return _job(tmp_path_factory.mktemp("job"))


def test_merged_summaries_give_the_whole_job_report(run_cli, job, tmp_path):
    summaries = _summaries(run_cli, job, tmp_path / "summaries")
    code, out, _ = run_cli("logs", *job["nodes"], "--json")
    whole = json.loads(out)
    code_merged, out, _ = run_cli("logs", "merge", *sorted(str(p) for p in summaries.glob("*.json")), "--json")
    merged = json.loads(out)
    assert code == code_merged == 1
    # the same report, finding by finding: first failure, window, consequences, groups, timeline, memory, anomalies
    assert _comparable(merged) == _comparable(whole)
    failure = merged["first_failure"]
    assert failure["rank"] == 13 and failure["where"]["node"] == "node01" and "error code is 207005" in failure["where"]["text"]
    assert len(failure["consequences"]) == 50 and {c["rank"] for c in failure["consequences"]} <= set(range(64)) - {13}
    assert [(c["rank"], c["where"]["node"]) for c in failure["also_failed"]] == [(42, "node05")]
    assert any("EL0006" in line for line in failure["window"])
    assert merged["totals"]["files"] == 192 and merged["totals"]["nodes"] == 8
    # clocks in step: estimated from the communicator init and the timeouts, nothing applied
    clocks = {c["node"]: c for c in merged["clocks"]}
    assert clocks["node00"]["method"] == "reference"
    assert all(c["method"] == "agrees" and c["offset_s"] == 0 and c["events"] >= 3 and c["uncertainty_s"] < 0.2
               for n, c in clocks.items() if n != "node00")
    # a folder of summaries is the same as listing them
    _, out, _ = run_cli("logs", "merge", str(summaries), "--json")
    assert _comparable(json.loads(out)) == _comparable(merged)


def test_a_skewed_node_clock_is_corrected_from_shared_events(run_cli, tmp_path):
    """node05's clock is 200 s behind: read as printed, its rank 42 seems to fail a minute before rank 13."""
    job = _job(tmp_path / "job", skew={5: -200.0})
    summaries = _summaries(run_cli, job, tmp_path / "summaries")
    _, out, _ = run_cli("logs", *job["nodes"], "--json")
    assert json.loads(out)["first_failure"]["rank"] == 42  # one machine, one clock assumed: the wrong rank
    code, out, _ = run_cli("logs", "merge", str(summaries), "--json")
    merged = json.loads(out)
    failure = merged["first_failure"]
    assert code == 1 and failure["rank"] == 13 and failure["time"] == "2025-08-06 23:18:20.000"
    clock = next(c for c in merged["clocks"] if c["node"] == "node05")
    assert clock["method"] == "estimated" and clock["events"] >= 3
    assert clock["offset_s"] == pytest.approx(-200.0, abs=0.1) and clock["uncertainty_s"] < 0.2
    later = failure["also_failed"][0]
    seconds = float(later["time"][-6:]) + 60 * int(later["time"][-9:-7])  # 140 s after rank 13, once corrected
    assert later["rank"] == 42 and later["time"][:16] in ("2025-08-06 23:20", "2025-08-06 23:19")
    assert abs(seconds - (20 * 60 + 40)) < 0.2
    assert any("node05" in note and "behind" in note for note in merged["notes"])
    _, text, _ = run_cli("logs", "merge", str(summaries), "--lang", "en")
    assert "Clocks" in text and "node05: -199.9" in text or "node05: -200.0" in text
    assert "rank 13" in text
    # the offset can also be given; a node without summary or a malformed offset is refused
    _, out, _ = run_cli("logs", "merge", str(summaries), "--clock-offset", "node05=-200s", "--json")
    given = json.loads(out)
    assert given["first_failure"]["rank"] == 13
    assert next(c for c in given["clocks"] if c["node"] == "node05")["method"] == "given"
    for bad, needle in ((["--clock-offset", "node05=-2min"], "NODE=SECONDS"), (["--clock-offset", "node99=1s"], "node99")):
        code, _, err = run_cli("logs", "merge", str(summaries), *bad)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_ranks_too_close_to_order_are_named(run_cli, tmp_path):
    """Two ranks on different nodes fail 10 ms apart while the shared events only pin the clocks to ~0.5 s."""
    job = _job(tmp_path / "job", also_failing_after=0.01, init_jitter=0.5, timeout_jitter=0.5)
    summaries = _summaries(run_cli, job, tmp_path / "summaries")
    _, out, _ = run_cli("logs", "merge", str(summaries), "--json")
    failure = json.loads(out)["first_failure"]
    assert failure["clock_uncertainty_s"] > 0 or failure["too_close"]
    assert [c["rank"] for c in failure["too_close"]] == [42 if failure["rank"] == 13 else 13]
    _, text, _ = run_cli("logs", "merge", str(summaries), "--lang", "en")
    assert "Too close to order" in text


def _rewrite(path: pathlib.Path, edit) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _redigest(data: dict) -> None:
    from npu_graph_skill.logs.summary import digest

    data["digest"] = digest(data)


@pytest.mark.parametrize("name,damage,needle", [
    ("truncated", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "cut short"),
    ("not JSON", lambda p: p.write_bytes(b"\x00\x01binary"), "not a summary"),
    ("foreign JSON", lambda p: p.write_text('{"hello": "world"}'), "not an npu-graph logs summary"),
    ("a report", lambda p: p.write_text('{"schema": "npu-graph-skill/logs/1"}'), "that is a report"),
    ("tampered", lambda p: _rewrite(p, lambda d: d["errors"][0].update(count=d["errors"][0]["count"] + 1)),
     "digest mismatch"),
    ("other version", lambda p: _rewrite(p, lambda d: (d.update(tool="npu-graph-skill 0.0.1"), _redigest(d))),
     "npu-graph-skill 0.0.1"),
    ("other schema", lambda p: _rewrite(p, lambda d: (d.update(schema="npu-graph-skill/logs-summary/2"), _redigest(d))),
     "logs-summary/2"),
])
def test_summaries_that_must_not_merge_are_refused(run_cli, job, tmp_path, name, damage, needle):
    summaries = _summaries(run_cli, {"nodes": job["nodes"][:2]}, tmp_path / "summaries")
    victim = summaries / "node01.json"
    damage(victim)
    code, out, err = run_cli("logs", "merge", str(summaries))
    assert code == 2 and out == "" and needle in err, err
    assert err.startswith("npu-graph: error: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "node01.json" in err


def test_merge_usage_errors(run_cli, job, tmp_path):
    summaries = _summaries(run_cli, {"nodes": job["nodes"][:2]}, tmp_path / "summaries")
    twin = tmp_path / "twin.json"
    twin.write_bytes((summaries / "node00.json").read_bytes())
    for args, needle in ((["merge", str(summaries / "node00.json"), str(twin)], "both describe node 'node00'"),
                         (["merge", str(summaries), "--rank", "3"], "--rank applies to the scan"),
                         (["merge"], "needs the summaries"),
                         (["merge", str(tmp_path / "nope.json")], "no such file"),
                         ([job["nodes"][0], "--clock-offset", "node00=1s"], "applies to `npu-graph logs merge"),
                         ([job["nodes"][0], "--summary-out", str(tmp_path / "no" / "such" / "s.json")], "does not exist")):
        code, _, err = run_cli("logs", *args)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, (args, err)
    # summaries written with other options do not merge either
    run_cli("logs", job["nodes"][2], "--summary-out", str(summaries / "node02.json"), "--node", "node02",
            "--threshold", "capture_s=5")
    code, _, err = run_cli("logs", "merge", str(summaries))
    assert code == 2 and "other options" in err and "capture_s" in err


def test_summary_schema_is_documented(run_cli, job, tmp_path):
    summaries = _summaries(run_cli, {"nodes": job["nodes"][:1]}, tmp_path / "summaries")
    data = json.loads((summaries / "node00.json").read_text(encoding="utf-8"))
    assert data["schema"] == "npu-graph-skill/logs-summary/1" and data["digest"].startswith("sha256:")
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("npu-graph-skill/logs-summary/1"):]
    for key in data:
        assert f"`{key}`" in section, key
    # compact: a node's 24 files of ~6 KB each summarise to far less than the logs
    assert (summaries / "node00.json").stat().st_size < sum(
        p.stat().st_size for p in pathlib.Path(job["nodes"][0]).rglob("*.log"))
