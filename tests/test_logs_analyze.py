"""The log analyzer end to end at the library level: errors, first failure across ranks, timeline,
memory, anomalies, filters, inputs (directories, .gz, ranges scanned in parallel) and the reduction
the diagnosis reads."""
from __future__ import annotations

import gzip
import pathlib

import pytest

from npu_graph_skill.core.ingest import resolve_sources
from npu_graph_skill.logs import analyze as analyze_mod
from npu_graph_skill.logs import scan as scan_mod
from npu_graph_skill.logs.analyze import analyze_logs, reduce_for_diagnosis
from npu_graph_skill.logs.findings import load_findings
from conftest import load_benchmark

REPO = pathlib.Path(__file__).resolve().parents[1]

# The failing rank: vLLM-Ascend worker output around a torch_npu capture failure (the error block is the
# text of https://github.com/vllm-project/vllm-ascend/issues/13792), after TORCH_NPU_LOGS lines.
RANK1 = """\
[rank:1]:[29931] [2025-08-06 23:09:00:100] torch_npu.memory: [DEBUG] [29931] Allocating memory: size=64, device=1
[rank:1]:[29931] [2025-08-06 23:09:00:101] torch_npu.memory: [DEBUG] [29931] PTA CachingAllocator malloc: malloc = 512, cached = 2097152, allocated = 1024
V0806 23:09:01.000000 29931 torch_npu/csrc/core/npu/NPUGraph.cpp:212] [rank:1] NPUGRAPH Capture begin
V0806 23:09:13.500000 29931 torch_npu/csrc/core/npu/NPUGraph.cpp:250] [rank:1] NPUGRAPH Capture end done: model_ri=0x5645f200, has_graph_exec=1
(Worker_TP1 pid=29931) INFO 08-06 23:09:40 [backends.py:218] Compiling a graph for dynamic shape takes 41.20 s
(Worker_TP1 pid=29931) INFO 08-06 23:09:50 [model_runner_v1.py:3607] Graph capturing finished in 22 secs, took 0.26 GiB
V0806 23:09:59.000000 29931 torch_npu/csrc/core/npu/NPUGraph.cpp:212] [rank:1] NPUGRAPH Capture begin
(Worker_TP1 pid=29931) ERROR 08-06 23:10:00 [multiproc_executor.py:1018] RuntimeError: NPUModelRunner init failed, error is NPUModelRunner failed, error is capture_end:../torch_npu/csrc/core/npu/NPUGraph.cpp:240 NPU function error: c10_npu::acl::AclmdlRICaptureEnd(capture_stream_, &model_ri), error code is 107025
(Worker_TP1 pid=29931) ERROR 08-06 23:10:00 [multiproc_executor.py:1018] [ERROR] 2025-08-06-23:10:00 (PID:29931, Device:1, RankID:-1) ERR00100 PTA call acl api failed.
(Worker_TP1 pid=29931) ERROR 08-06 23:10:00 [multiproc_executor.py:1018] EE9999: Inner Error!
(Worker_TP1 pid=29931) ERROR 08-06 23:10:00 [multiproc_executor.py:1018] EE9999[PID: 29931] 2025-08-06-23:10:00.333.923 (EE9999): rtStreamEndCapture execution failed, reason=capture model contains a stream that was not joined to the original stream[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:65]
"""

# Another rank: its collectives time out two minutes later (HCCL lines as in formats.md §2.6, 107020).
RANK0 = """\
[rank:0]:[29930] [2025-08-06 23:09:00:100] torch_npu.memory: [DEBUG] [29930] Allocating memory: size=64, device=0
[rank0]:[W806 23:09:58.000000000 compiler_depend.ts:187] Warning: Waiting for pending NCCL work to finish before starting graph capture. (function operator())
[ERROR] HCCL(29930,python3):2025-08-06-23:12:10.062.662 [hccl_socket_manager.cc:778] [29935][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[0] timeout[130]
[ERROR] RUNTIME(29930,python3):2025-08-06-23:12:10.100.000 [stream.cc:1102]29930 SynchronizeImpl:Stream synchronize timeout, runtime result = 107020
"""


def _write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def two_ranks(tmp_path):
    _write(tmp_path / "logs" / "rank0.log", RANK0)
    _write(tmp_path / "logs" / "rank1.log", RANK1)
    return tmp_path / "logs"


def _corpus():
    return load_benchmark("logs_corpus")


def test_first_failure_across_ranks(two_ranks):
    report = analyze_logs([str(two_ranks)])
    failure = report.first_failure
    assert failure is not None and not failure.only_consequences
    assert failure.rank == 1 and failure.where.source.endswith("rank1.log") and failure.where.line == 8
    assert "error code is 107025" in failure.where.text
    assert failure.time.startswith("2025-08-06 23:10:00")
    assert [c.code for c in failure.codes] == ["107025"]
    # the other rank's HCCL / 107020 errors are consequences, with their own rank and line
    assert {c.rank for c in failure.consequences} == {0}
    assert any("107020" in c.where.text for c in failure.consequences)
    assert all(c.where.source.endswith("rank0.log") for c in failure.consequences)
    # the window is verbatim (worker prefixes kept) and contains the whole error block
    assert failure.window[failure.where.line - failure.window_first_line] == RANK1.splitlines()[7]
    assert any(line.startswith("(Worker_TP1 pid=29931) ERROR") and "EE9999[PID" in line for line in failure.window)
    assert report.severity == "error" and report.exit_code == 1


def test_error_groups_roles_and_codes(two_ranks):
    report = analyze_logs([str(two_ranks)])
    decisive = [g for g in report.errors if g.role == "decisive"]
    assert decisive[0].id == "E-001" and decisive[0].ranks == [1]
    codes = {c.code for g in decisive for c in g.codes}
    assert {"107025", "ERR00100", "EE9999"} <= codes
    consequence = [g for g in report.errors if g.role == "consequence"]
    assert {g.id for g in consequence} == {"E-002"} and len(consequence) == 2
    assert report.warnings[0].id == "E-004" and "Waiting for pending NCCL work" in report.warnings[0].message
    # the knowledge base names the codes where it is installed
    named = {c.code: c.name for g in report.errors for c in g.codes}
    if named.get("107025"):
        assert "107025" in named and named["107025"].startswith("ACL_ERROR_RT")


def test_timeline_memory_and_anomalies(two_ranks):
    report = analyze_logs([str(two_ranks / "rank1.log")])
    kinds = {t.kind: t for t in report.timeline}
    assert kinds["capture"].count == 1 and kinds["capture"].max == pytest.approx(12.5)
    # the second capture began at line 7 and never ended: the failure happened inside it
    assert kinds["capture"].unfinished == 1 and kinds["capture"].examples[0].line == 7
    assert kinds["compile"].max == pytest.approx(41.2)
    assert kinds["capture_summary"].total == pytest.approx(22)
    anomalies = {a.id: a for a in report.anomalies}
    assert anomalies["T-101"].value == pytest.approx(12.5) and anomalies["T-101"].threshold == 10
    assert anomalies["T-102"].value == pytest.approx(41.2)
    assert anomalies["T-101"].message["zh"] and anomalies["T-101"].message["en"]
    memory = {m.id: m for m in report.memory}
    assert memory["M-002"].values[str(two_ranks / "rank1.log")]["peak_reserved_bytes"] == 2097152
    assert memory["M-003"].values["max_gib"] == pytest.approx(0.26)
    # thresholds are configurable
    relaxed = analyze_logs([str(two_ranks / "rank1.log")], thresholds={"capture_s": 20, "compile_s": 60})
    assert not relaxed.anomalies
    from npu_graph_skill.core.errors import UserError

    with pytest.raises(UserError):
        analyze_logs([str(two_ranks)], thresholds={"capture_seconds": 1})


def test_replay_spacing_and_jitter(tmp_path):
    lines = []
    stamp = 0.0
    for i in range(200):
        stamp += 0.050 if i % 20 == 0 else 0.005  # every 20th gap is 10x longer
        sec = 10 + stamp
        lines.append(f"V0821 14:02:{int(sec):02d}.{int((sec % 1) * 1e6):06d} 4242 torch_npu/csrc/core/npu/NPUGraph.cpp:393] "
                     f"[rank:0] NPUGRAPH Replay model_ri=0x5645f200, device=0")
    path = _write(tmp_path / "replay.log", "\n".join(lines) + "\n")
    report = analyze_logs([str(path)])
    replay = next(t for t in report.timeline if t.kind == "replay_interval")
    assert replay.count == 200 and replay.p50 == pytest.approx(0.005, abs=1e-6)
    assert replay.p99 == pytest.approx(0.050, abs=1e-6)
    assert [a.id for a in report.anomalies] == ["T-103"]
    assert not analyze_logs([str(path)], thresholds={"replay_ratio": 20}).anomalies


def test_a_warning_header_with_no_text_is_not_a_warning(tmp_path):
    # vLLM-Ascend v0.13.0's FULL-graph banner (platform.py:281-293@6281c1207a): the logger header carries only
    # the colour code, the banner's rows follow unprefixed
    text = ("WARNING 01-05 10:00:00 [platform.py:293] \x1b[91m\n"
            "* WARNING: You have enabled the *full graph* feature.\n"
            "WARNING 01-05 10:00:01 [utils.py:453] Currently, communication is performed using FFTS+ method\n")
    report = analyze_logs([str(_write(tmp_path / "banner.log", text))])
    assert [w.first.line for w in report.warnings] == [3]


def test_warnings_printed_on_normal_runs_are_notices_listed_last(tmp_path):
    # vLLM-Ascend's experimental-mode warning (ascend_config.py:242@v0.9.1) and vLLM's memory-profiling warning
    # (gpu_worker.py:494@v0.21.0) are notices (S-163, S-171); the config warning is a warning of its own
    notices = ("WARNING 07-10 10:00:00 [ascend_config.py:242] ACL Graph is currently experimental. Please raise an issue "
               "on https://github.com/vllm-project/vllm-ascend/issues if you encourage any Error\n"
               "WARNING 07-10 10:00:01 [gpu_worker.py:494] CUDA graph memory profiling is disabled "
               "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). Without it, CUDA graph memory is not accounted for during "
               "KV cache allocation, which may require lowering --gpu-memory-utilization to avoid OOM.\n")
    report = analyze_logs([str(_write(tmp_path / "notices.log", notices))])
    assert [(g.role, g.notice) for g in report.warnings] == [("notice", "S-163"), ("notice", "S-171")]
    assert report.severity == "ok" and report.totals["notices"] == 2
    other = notices + "WARNING 07-10 10:00:02 [utils.py:120] Current vLLM config is not set.\n"
    report = analyze_logs([str(_write(tmp_path / "mixed.log", other))])
    assert [g.role for g in report.warnings] == ["warning", "notice", "notice"]
    assert report.severity == "warning"


def test_only_consequences_points_to_missing_logs(shared_data):
    report = analyze_logs([str(shared_data / "samples" / "plog" / "plog-114654_20250619092834191.log")])
    assert report.first_failure.only_consequences
    assert all(g.role == "consequence" for g in report.errors)


def test_shared_plog_samples(shared_data):
    report = analyze_logs([str(shared_data / "samples" / "plog")])
    assert report.totals["files"] == 4 and report.totals["lines"] == 25
    assert all(s.layouts == {"plog": s.layouts["plog"]} for s in report.sources)
    messages = " ".join(g.message for g in report.errors)
    assert "Task run failed" in messages and "dispatch timeout" in messages
    dispatch = next(g for g in report.errors if "dispatch timeout" in g.message)
    assert dispatch.role == "consequence"
    # rows of the HCCL link table are context of the table, not errors of their own
    assert not any(set(g.message.strip()) <= set("|-_ ") for g in report.errors)
    assert any("LINK_ERROR_INFO" in g.message and g.role == "consequence" for g in report.errors)


def test_filters_since_until_rank(two_ranks):
    late = analyze_logs([str(two_ranks)], since="2025-08-06 23:11:00")
    assert late.first_failure.only_consequences and {g.role for g in late.errors} == {"consequence"}
    early = analyze_logs([str(two_ranks)], until="08-06 23:09:30")
    assert not early.errors
    rank0 = analyze_logs([str(two_ranks)], rank=0)
    assert rank0.first_failure.rank == 0 and all(g.ranks == [0] for g in rank0.errors)
    from npu_graph_skill.core.errors import UserError

    with pytest.raises(UserError):
        analyze_logs([str(two_ranks)], since="yesterday")


def test_gz_and_truncated_gz(tmp_path, two_ranks):
    data = (two_ranks / "rank1.log").read_bytes()
    whole = tmp_path / "rank1.log.gz"
    whole.write_bytes(gzip.compress(data))
    report = analyze_logs([str(whole)])
    assert report.first_failure.where.line == 8 and not report.notes
    # a log cut while being copied: the readable part is analysed, and the report says what happened
    mixed = tmp_path / "mixed.log"
    _corpus().write_mixed_log(str(mixed), 0.5, seed=5)
    compressed = gzip.compress(mixed.read_bytes())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(compressed[: len(compressed) * 2 // 3])
    partial = analyze_logs([str(cut)])
    assert any("ends early" in note for note in partial.notes)
    assert 0.5 < partial.totals["lines"] / len(mixed.read_bytes().splitlines()) < 0.8


def test_parallel_ranges_match_one_process(tmp_path, monkeypatch):
    corpus = _corpus()
    path = tmp_path / "mixed.log"
    corpus.write_mixed_log(str(path), 1.5, seed=3)
    single = analyze_logs([str(path)], jobs=1)
    monkeypatch.setattr(analyze_mod, "SPLIT_BYTES", 200_000)
    monkeypatch.setattr(analyze_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(scan_mod, "BLOCK_BYTES", 64 * 1024)
    split = analyze_logs([str(path)], jobs=2)
    assert split.totals["lines"] == single.totals["lines"] == len(path.read_bytes().splitlines())
    assert [(g.signature, g.count, g.first.line) for g in split.errors] == [
        (g.signature, g.count, g.first.line) for g in single.errors]
    assert split.first_failure.where.line == single.first_failure.where.line
    assert split.first_failure.window == single.first_failure.window
    replay_split = next(t for t in split.timeline if t.kind == "replay_interval")
    replay_single = next(t for t in single.timeline if t.kind == "replay_interval")
    assert replay_split.count == replay_single.count


def test_window_is_whole_wherever_a_range_starts(tmp_path):
    """Whatever byte a range starts at, the first failure and its window are those of a one-process scan
    (a line belongs to the range it starts in; the lines before a range are read as its context)."""
    lines = [f"[INFO] RUNTIME(7,python):2025-08-06-23:09:{i // 100 % 60:02d}.{i % 1000:03d}.000 [stream.cc:1]7 "
             f"Setup:[EXEC][DEFAULT]stream_id={i}" for i in range(3000)]
    lines[1700] = RANK1.splitlines()[7]
    path = _write(tmp_path / "one.log", "\n".join(lines) + "\n")
    sources = resolve_sources([str(path)])
    single = analyze_logs([], sources=sources, jobs=1)
    size = path.stat().st_size
    line_start = sum(len(line) + 1 for line in lines[:1700])
    for cut in (line_start, line_start - 1, line_start + 1, line_start + 5, 40_000, size - 10):
        tasks = [scan_mod.ScanTask(index=0, name=str(path), path=str(path), start=0, end=cut, year=2025),
                 scan_mod.ScanTask(index=0, name=str(path), path=str(path), start=cut, end=size, year=2025)]
        results = analyze_mod.run_tasks(tasks, jobs=1)
        assert sum(r.lines for r in results) == 3000, cut
        report = analyze_mod.build_report(sources, tasks, results, dict(analyze_mod.DEFAULT_THRESHOLDS), 30)
        assert report.first_failure.where.line == 1701, cut
        assert report.first_failure.window == single.first_failure.window, cut
        assert report.first_failure.window_first_line == single.first_failure.window_first_line


def test_hidden_failure_is_kept_by_reduce_for_diagnosis(tmp_path, shared_cases):
    """A real failure text hidden in a large noisy log: the reduction keeps its decisive lines verbatim."""
    case = next(c for c in shared_cases if c["id"] == "vllm-ascend-2629")
    corpus = _corpus()
    path = tmp_path / "serve.log"
    text = case["error_text"].replace("{", "{{").replace("}", "}}")
    corpus.write_mixed_log(str(path), 3, seed=11, failure_text=text, failure_at=0.6)
    reduced, notes = reduce_for_diagnosis(resolve_sources([str(path)]), context=20)
    kept = reduced.splitlines()
    for line in case["error_text"].splitlines():
        assert line in kept, line
    assert len(kept) < 200
    assert notes[0].startswith("read ") and "kept" in notes[0]
    total = len(path.read_bytes().splitlines())
    assert f"{total:,} lines" in notes[0]


def test_every_emitted_finding_id_is_documented(two_ranks, shared_data):
    documented = load_findings()
    reports = [analyze_logs([str(two_ranks)]), analyze_logs([str(shared_data / "samples" / "plog")])]
    emitted = set()
    for report in reports:
        emitted |= {g.id for g in report.errors + report.warnings}
        emitted |= {t.id for t in report.timeline} | {m.id for m in report.memory} | {a.id for a in report.anomalies}
        if report.first_failure:
            emitted.add(report.first_failure.id)
    assert emitted <= set(documented)
    import re

    source = (REPO / "src" / "npu_graph_skill" / "logs" / "analyze.py").read_text(encoding="utf-8")
    assert set(re.findall(r'"([ETM]-\d{3})"', source)) <= set(documented)
    for entry in documented.values():
        assert entry["title"]["zh"] and entry["description"]["en"]


def test_glog_error_lines_without_an_error_word(tmp_path):
    """G3 / torch formatter lines say their level in one letter: an `E`/`W` line is found even when its text has no
    'error' or 'warn' in it (formats.md §1.3, §1.4)."""
    lines = [f"V0821 14:02:{i % 60:02d}.000000 4242 torch_npu/csrc/core/npu/NPUQueue.cpp:242] [rank:0] Enqueue: start, "
             f"aclnnAdd, device = 0, write_idx = {i}, read_idx = {i}, status = 0" for i in range(3000)]
    lines.insert(1500, "E0821 14:02:30.500000 4242 torch_npu/csrc/core/npu/NPUQueue.cpp:250] [rank:0] "
                       "MakeSureQueueEmpty: the queue got stuck, device = 0")
    lines.insert(2500, "[rank1]:W0821 14:02:40.000000 4243 torch_npu/npu/_graph_tree.py:2072] [0/0] [__cudagraphs] "
                       "mutated inputs (2 instances)")
    path = _write(tmp_path / "g3.log", "\n".join(lines) + "\n")
    report = analyze_logs([str(path)])
    assert [g.message for g in report.errors] == ["MakeSureQueueEmpty: the queue got stuck, device = 0"]
    assert report.errors[0].first.line == 1501 and report.errors[0].ranks == [0]
    assert [(w.message, w.ranks) for w in report.warnings] == [("mutated inputs (2 instances)", [1])]


def test_acl_call_lines_when_npugraph_lines_are_off(tmp_path):
    """With only the acl artifact on (TORCH_NPU_LOGS=acl), `[ACL CALL] aclmdlRI...` lines carry the lifecycle
    (formats.md §1.5 acl; G3 layout of §1.3)."""
    head = "I0821 14:02:{:02d}.{:06d} 4242 torch_npu/csrc/core/npu/interface/AclInterface.cpp:1186] [rank:0] [ACL CALL] "
    lines = [head.format(10, 0) + "aclmdlRICaptureBegin(stream=0x564ec800, mode=1)",
             head.format(13, 0) + "aclmdlRICaptureEnd(stream=0x564ec800, modelRI=0x5645f200)"]
    for i in range(30):
        lines.append(head.format(20, i * 10000) + "aclmdlRIExecuteAsync(modelRI=0x5645f200, stream=0x564ec800)")
    lines.append(head.format(21, 0) + "aclmdlRICaptureTaskUpdateBegin(stream=0x564ec800, handle=0x1)")
    lines.append(head.format(21, 250000) + "aclmdlRICaptureTaskUpdateEnd(stream=0x564ec800)")
    report = analyze_logs([str(_write(tmp_path / "acl.log", "\n".join(lines) + "\n"))])
    kinds = {t.kind: t for t in report.timeline}
    assert kinds["capture"].source == "acl" and kinds["capture"].max == pytest.approx(3.0)
    assert kinds["replay_interval"].source == "acl" and kinds["replay_interval"].count == 30
    assert kinds["replay_interval"].p50 == pytest.approx(0.01, abs=1e-6)
    assert kinds["update"].max == pytest.approx(0.25)


def test_python_graph_lines_update_calls_and_fallback(tmp_path):
    """torch's formatter lines of torch_npu/npu/graphs.py and graph trees (formats.md §1.4, §1.5)."""
    lines = [
        "V0821 14:01:58.000000 4242 torch_npu/npu/graphs.py:560] [__cudagraphs] NPUGRAPH Capture device=0, pool=None, mode=global, auto_dispatch=False",
        "V0821 14:02:03.500000 4242 torch_npu/npu/graphs.py:600] [__cudagraphs] NPUGraph: capture completed, graph_id=1402, device=0",
        "V0821 14:02:04.000000 4242 torch_npu/npu/graphs.py:700] [__cudagraphs] NPUGraph: updating graph (3 inputs)...",
        "W0821 14:02:05.000000 4242 torch_npu/utils/_graph_tree.py:80] [0/0] [__cudagraphs] skipping cudagraphs due to cpu device (arg0_1)",
    ]
    report = analyze_logs([str(_write(tmp_path / "py.log", "\n".join(lines) + "\n"))])
    kinds = {t.kind: t for t in report.timeline}
    assert kinds["capture"].source == "py" and kinds["capture"].max == pytest.approx(5.5)
    assert kinds["update_calls"].count == 1
    assert kinds["fallback"].id == "T-006" and kinds["fallback"].count == 1
    assert report.warnings and "skipping cudagraphs" in report.warnings[0].message


def test_out_of_memory_and_free_memory_after_capture(tmp_path):
    lines = [
        # SGLang (python/sglang/srt/model_executor/model_runner.py) under its own logger layout
        "[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. mem usage=0.93 GB. avail mem=0.53 GB.",
        "[2025-03-08 12:29:28 TP3] Capture cuda graph end. Time elapsed: 7.22 s. mem usage=0.93 GB. avail mem=0.41 GB.",
        # torch_npu OOM text (formats.md §3.3, https://github.com/sgl-project/sglang/issues/29838)
        "[rank3]: torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity; "
        "56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB reserved in total by PyTorch).",
    ]
    report = analyze_logs([str(_write(tmp_path / "sglang.log", "\n".join(lines) + "\n"))])
    memory = {m.id: m for m in report.memory}
    assert memory["M-001"].ranks == [3] and "out of memory" in memory["M-001"].examples[0].text
    assert memory["M-004"].values["min_gib"] == pytest.approx(0.41)
    assert memory["M-003"].values["max_gib"] == pytest.approx(0.93)
    summary = next(t for t in report.timeline if t.kind == "capture_summary")
    assert summary.source == "sglang" and summary.ranks == [0, 3]
    assert report.severity == "error"
