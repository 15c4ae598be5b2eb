"""Line parsers of the log analyzer: every layout in shared/reference/formats.md, on real lines.

Lines quoted here are public log lines (source in the comment); the shared samples and the cases'
error texts are read through the `shared_data` / `shared_cases` fixtures.
"""
from __future__ import annotations

import pytest

from npu_graph_skill.logs.formats import (
    extract_codes,
    normalise_code,
    parse_line,
    parse_time,
    rank_from_path,
    strip_prefixes,
)

# (line, expected fields) — a field missing from the dict is not checked.
REAL_LINES = [
    # https://github.com/vllm-project/vllm-ascend/issues/11912
    ("[ERROR] RUNTIME(569,):2026-06-30-12:05:19.360.591 [api_c.cc:1081]569 rtMemcpy:ErrCode=107030, desc=[the current "
     "capture mode does not support this operation], InnerCode=0x703001c",
     dict(format="plog", level="ERROR", module="RUNTIME", pid="569", tid="569", file="api_c.cc", line=1081,
          func="rtMemcpy", time="2026-06-30-12:05:19.360.591", codes=["107030", "0x703001c"])),
    # https://github.com/vllm-project/vllm-ascend/pull/11696 — thread name instead of process name
    ("[ERROR] RUNTIME(809924,4):2026-07-11-15:11:05.293.967 [api_c.cc:1081]809924 rtMemcpy:ErrCode=107030, desc=[the "
     "current capture mode does not support this operation], InnerCode=0x703001c",
     dict(format="plog", module="RUNTIME", pid="809924", tid="809924")),
    ("[ERROR] ASCENDCL(971,):2026-06-17-12:12:04.881.908 [memory.cpp:608]971 aclrtMemcpyImpl:synchronized memcpy failed, "
     "kind = 1, runtime result = 107030",
     dict(format="plog", module="ASCENDCL", func="aclrtMemcpyImpl", codes=["107030"])),
    # CANN troubleshooting doc: a space before the tid and stage tags
    ("[ERROR] RUNTIME(3813,python3):2025-01-10-17:53:52.846.403 [device_error_proc.cc:1409] 3813 "
     "ProcessStarsCoreErrorInfo:[INIT][DEFAULT]report error module_type=5, module_name=EZ9999",
     dict(format="plog", tid="3813", func="ProcessStarsCoreErrorInfo", codes=["EZ9999"])),
    # https://github.com/gpustack/gpustack/issues/2021 — HCCL: tid in brackets, HCCL errNo
    ("[ERROR] HCCL(36035,mindie_llm_backend_connector):2025-05-13-02:25:58.068.817 [op_base.cc:974][36818][Init]"
     "[CommRootInfoConfig]errNo[0x0000000005000002]HcclCommInitRootInfo failed.",
     dict(format="plog", module="HCCL", pid="36035", tid="36818", file="op_base.cc", line=974, codes=["0x5000002"])),
    # https://github.com/PaddlePaddle/PaddleX/issues/2311 — TDT: [file:line][Func][tid:N]
    ("[WARNING] TDT(88,python):2024-10-23-20:50:03.868.399 [thread_mode_manager.cpp:114][StartCallAICPU][tid:88] "
     "[ThreadModeManager] Can not open libaicpu_scheduler.so, deviceId[0], reason[x]",
     dict(format="plog", level="WARNING", module="TDT", func="StartCallAICPU", tid="88", line=114)),
    # https://github.com/PaddlePaddle/Paddle-Lite/issues/7669 — GE ErrorNo, EVENT records
    ("[ERROR] GE(39944,ssd_detection_demo):2021-11-18-01:09:39.548.671 [ge_generator.cc:624]39944 GenerateModel: ErrorNo: "
     "1343266819(Graph manager build graph failed.) [COMP][DEFAULT]Build model failed.",
     dict(format="plog", module="GE", func="GenerateModel", codes=["1343266819"])),
    ("[EVENT] GE(39944,ssd_detection_demo):2021-11-18-01:09:39.551.442 [graph_manager.cc:805]39944 PreRunOptimizeOriginalGraph:"
     "[GEPERFTRACE] The time cost of GraphManager::stages.optimizer.OptimizeOriginalGraphForQuantize is [1414] micro second.",
     dict(format="plog", level="EVENT", module="GE")),
    # MC device-1 sample: pid -2, space after the colon
    ("[EVENT] IMP(-2,IMP): 2024-12-04-08:21:54.994.714 70 (device_id:1 die_id:0) [IMP] present 1, mac_link 1",
     dict(format="plog", level="EVENT", module="IMP", pid="-2", tid="70", time="2024-12-04-08:21:54.994.714")),
    # MC plog sample: torch_npu's own APP line; the torch_npu location replaces log_inner.cpp
    ("[ERROR] APP(1365,python3.8):2025-08-06-23:09:42.725.168 [log_inner.cpp:76]6124 build/CMakeFiles/torch_npu.dir/"
     "compiler_depend.ts:checkDispatch:685: \"[PTA]:\"Process group work REDUCE_SCATTER, seq_num 32716847 dispatch timeout. "
     "device 3: the current working event is 0xaaab40f5c5d0. \"\"",
     dict(format="plog", module="APP", func="checkDispatch", line=685, file="build/CMakeFiles/torch_npu.dir/compiler_depend.ts",
          message="Process group work REDUCE_SCATTER, seq_num 32716847 dispatch timeout. device 3: the current working event "
                  "is 0xaaab40f5c5d0.")),
    # Ascend/pytorch commit 1336070c7: function first, then the basename
    ("[DEBUG] APP(223916,python):2026-03-12-10:47:28.033.940 [log_inner.cpp:87]223916 free:NPUCachingAllocator.cpp:1441: "
     "\"[PTA]:\"Freeing memory block: size=512, ptr=0x12c041200000, device=6\"\"",
     dict(format="plog", level="DEBUG", func="free", file="NPUCachingAllocator.cpp", line=1441,
          message="Freeing memory block: size=512, ptr=0x12c041200000, device=6")),
    # https://github.com/Ascend/pytorch/issues/66 — old TORCHAIR line without pid and time
    ("[INFO] TORCHAIR [memory/Allocator.cpp:99] [MemoryTrace] FreePoolMemory: Free memory success, block use count = 0",
     dict(format="plog", level="INFO", module="TORCHAIR", file="memory/Allocator.cpp", line=99, time="")),
    # TORCH_NPU_LOGS G2 (Ascend/pytorch commit 1336070c7)
    ("[223916] [2026-03-12 10:47:24:086] torch_npu.memory: [DEBUG] [223916] Allocating memory: size=64, device=6",
     dict(format="npu_g2", level="DEBUG", module="torch_npu.memory", pid="223916", tid="223916",
          time="2026-03-12 10:47:24:086", message="Allocating memory: size=64, device=6")),
    # G2 "before" example with the rank prefix (commit cf8fa9c17)
    ("[rank:0]: [12345] [2026-04-20 14:30:25:123] torch_npu.dispatch: [INFO] [9876] message",
     dict(format="npu_g2", rank=0, pid="12345", tid="9876", module="torch_npu.dispatch", message="message")),
    # G2 with the date cut by the reporter (https://github.com/Ascend/pytorch/issues/108)
    ("torch_npu.memory: [ERROR] [269128] Get a block from the existing pool failed. Try to free cached blocks and reallocate. "
     "This error log can be ignored.",
     dict(format="npu_g2", level="ERROR", module="torch_npu.memory", tid="269128")),
    # G3 (commit cf8fa9c17)
    ("I0420 14:30:25.123456 12345 torch_npu/csrc/core/npu/NPUQueue.cpp:242] [rank:0] message",
     dict(format="npu_g3", level="INFO", pid="12345", file="torch_npu/csrc/core/npu/NPUQueue.cpp", line=242, rank=0,
          module="torch_npu.dispatch", message="message", time="0420 14:30:25.123456")),
    # c10 warnings (https://github.com/vllm-project/vllm-ascend/issues/4807, #9691, Ascend/pytorch#43)
    ("[rank0]:[W1210 03:09:10.966659833 compiler_depend.ts:187] Warning: Waiting for pending NCCL work to finish before "
     "starting graph capture. (function operator())",
     dict(format="c10_warn", level="WARNING", rank=0, file="compiler_depend.ts", line=187, func="operator()",
          message="Waiting for pending NCCL work to finish before starting graph capture.", prefix="[rank0]:")),
    ("[rank0]:[W610 16:39:20.084416960 NPUGraph.cpp:223] Warning: Waiting for pending NCCL work to finish before starting "
     "graph capture. (function operator())",
     dict(format="c10_warn", file="NPUGraph.cpp", line=223, time="610 16:39:20.084416960")),
    ("[W NPUStream.cpp:365] Warning: NPU warning, error code is 107020[Error]: .",
     dict(format="c10_warn", level="WARNING", file="NPUStream.cpp", line=365, codes=["107020"])),
    # torch_npu exception block (https://github.com/Ascend/pytorch/issues/66, vllm-ascend#486)
    ("[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed",
     dict(format="pta_error", level="ERROR", module="PTA", pid="1066924", device=1, rank=None, codes=["ERR00100"])),
    ("[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.",
     dict(format="pta_error", module="OPS", rank=1, codes=["ERR01100"])),
    ("[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, "
     "error code is 6",
     dict(format="exception", level="ERROR", module="RuntimeError", rank=1)),
    # CANN E-code blocks in stdout (vllm-ascend#6359, #8981, #1993)
    ("(EngineCore_DP0 pid=1878198) EZ9999[PID: 1878198] 2026-01-28-17:23:40.501.863 (EZ9999):  The error from device(chipId:2, "
     "dieId:0), serial number is 13, there is an exception of aivec error",
     dict(format="cann_ecode", level="ERROR", module="EZ9999", pid="1878198", time="2026-01-28-17:23:40.501.863",
          codes=["EZ9999"])),
    ("(EngineCore pid=471424) [PID: 471424] 2026-05-08-17:31:28.781.490 Invalid_Argument(EL0003): The argument is invalid.",
     dict(format="cann_ecode", module="EL0003", pid="471424", codes=["EL0003"])),
    ("EL0004: [PID: 553] 2025-09-17-04:55:13.065.712 Failed to allocate memory.",
     dict(format="cann_ecode", module="EL0004", pid="553", codes=["EL0004"])),
    ("EZ9999: Inner Error!", dict(format="cann_ecode", level="ERROR", module="EZ9999")),
    ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total capacity)",
     dict(format="exception", level="ERROR", module="torch.OutOfMemoryError")),
    # vLLM (https://github.com/vllm-project/vllm-ascend/issues/4807): two worker prefixes; TP0 → rank 0
    ("(EngineCore_DP0 pid=109513) (Worker_TP0_EP0 pid=109520) INFO 12-10 03:09:31 [model_runner_v1.py:3607] Graph capturing "
     "finished in 22 secs, took 0.26 GiB",
     dict(format="vllm", level="INFO", pid="109520", rank=0, file="model_runner_v1.py", line=3607, time="12-10 03:09:31",
          message="Graph capturing finished in 22 secs, took 0.26 GiB")),
    ("(EngineCore_3 pid=302616) INFO 08-13 02:24:45 [platform.py:162] PIECEWISE compilation enabled on NPU.",
     dict(format="vllm", level="INFO", pid="302616", rank=None)),
]


@pytest.mark.parametrize("line,expected", REAL_LINES, ids=[f"{i}-{e['format']}" for i, (_, e) in enumerate(REAL_LINES)])
def test_real_line_fields(line, expected):
    parsed = parse_line(line)
    expected = dict(expected)
    codes = expected.pop("codes", None)
    for field, value in expected.items():
        assert getattr(parsed, field) == value, f"{field}: {getattr(parsed, field)!r} != {value!r}"
    if codes is not None:
        assert [hit.code for hit in parsed.codes()] == codes
    if parsed.time:
        assert parsed.timestamp is not None


def test_timestamps_order_lines_of_one_run():
    a = parse_line("[ERROR] RUNTIME(569,):2026-06-30-12:05:19.360.581 [api_impl.cc:2725]569 MemCopySync:x")
    b = parse_line("[ERROR] ASCENDCL(569,):2026-06-30-12:05:19.360.759 [memory.cpp:608]569 aclrtMemcpyImpl:y")
    assert 0 < b.timestamp - a.timestamp < 0.001
    # a vLLM header (no year) with the run's year lines up with a plog line of the same second
    v = parse_line("ERROR 06-30 12:05:19 [core.py:1] boom", year=2026)
    assert abs(v.timestamp - a.timestamp) < 1
    # glog/torch lines carry microseconds
    g1 = parse_line("V0821 14:02:11.123456 4242 torch_npu/csrc/core/npu/NPUGraph.cpp:393] NPUGRAPH Replay model_ri=0x1, device=0")
    g2 = parse_line("V0821 14:02:11.130001 4242 torch_npu/csrc/core/npu/NPUGraph.cpp:393] NPUGRAPH Replay model_ri=0x1, device=0")
    assert g2.timestamp - g1.timestamp == pytest.approx(0.006545, abs=1e-6)


def test_torch_formatter_line_with_trace_id_and_artifact():
    parsed = parse_line("[rank3]:V0821 14:01:58.001000 4242 torch_npu/npu/_graph_tree.py:2266] [0/0] [__cudagraphs] "
                        "NPUGRAPH-TREE State state=RECORDING, node=0, gen=1")
    assert parsed.format == "torch_py"
    assert parsed.level == "DEBUG" and parsed.rank == 3 and parsed.module == "torch_npu.npugraph"
    assert parsed.message == "NPUGRAPH-TREE State state=RECORDING, node=0, gen=1"


def test_sglang_layout():
    parsed = parse_line("[2025-07-01 10:00:00 DP0 TP3] Capture cuda graph end. Time elapsed: 12.34 s")
    assert parsed.format == "vllm" and parsed.rank == 3 and parsed.time == "2025-07-01 10:00:00"
    assert parsed.message.startswith("Capture cuda graph end")


def test_vllm_header_around_a_torch_npu_block_keeps_the_inner_layout():
    # https://github.com/vllm-project/vllm-ascend/issues/13792
    line = ("(Worker_TP1 pid=29932) ERROR 08-07 16:23:01 [multiproc_executor.py:1018] [ERROR] 2026-08-07-16:23:00 "
            "(PID:29932, Device:1, RankID:-1) ERR00100 PTA call acl api failed.")
    parsed = parse_line(line)
    assert parsed.format == "pta_error"
    assert parsed.time == "2026-08-07-16:23:00" and parsed.pid == "29932" and parsed.rank == 1  # rank from TP1
    assert parsed.prefix == "(Worker_TP1 pid=29932) ERROR 08-07 16:23:01 [multiproc_executor.py:1018] "
    tail = parse_line("(Worker_TP1 pid=29932) ERROR 08-07 16:23:01 [multiproc_executor.py:1018] EE9999: Inner Error!")
    assert tail.format == "cann_ecode" and tail.time == "08-07 16:23:01"  # time borrowed from the vLLM header


@pytest.mark.parametrize("text,prefix,body", [
    ("(Worker_TP1 pid=29932) RuntimeError: x", "(Worker_TP1 pid=29932) ", "RuntimeError: x"),
    ("(EngineCore_DP0 pid=1) (Worker_TP0_EP0 pid=2) INFO 12-10 03:09:31 [utils.py:444] msg",
     "(EngineCore_DP0 pid=1) (Worker_TP0_EP0 pid=2) INFO 12-10 03:09:31 [utils.py:444] ", "msg"),
    ("(VllmWorker TP2 pid=102322) ERROR 08-27 01:44:46 [multiproc_executor.py:602]   File \"a.py\", line 1, in f",
     "(VllmWorker TP2 pid=102322) ERROR 08-27 01:44:46 [multiproc_executor.py:602] ", "  File \"a.py\", line 1, in f"),
    ("ERROR 08-05 11:23:25 [core.py:632] [rank0]: x", "ERROR 08-05 11:23:25 [core.py:632] [rank0]: ", "x"),
    ("[rank0]: RuntimeError: y", "[rank0]: ", "RuntimeError: y"),
    ("[default3]:[W1210 03:09:10.96 a.cpp:1] Warning: z", "[default3]:", "[W1210 03:09:10.96 a.cpp:1] Warning: z"),
    ("/root/ascend/log/debug/plog/plog-73550_20260524094240186.log:[ERROR] RUNTIME(73550,):x",
     "/root/ascend/log/debug/plog/plog-73550_20260524094240186.log:", "[ERROR] RUNTIME(73550,):x"),
    ("worker.log:12:(Worker_TP0 pid=5) INFO 01-01 00:00:00 [a.py:1] hi", "worker.log:12:(Worker_TP0 pid=5) INFO 01-01 00:00:00 [a.py:1] ", "hi"),
    ("[rank:0]:[2025-03-31 02:30:08:017] torch_npu.dispatch: [INFO] m", "", "[rank:0]:[2025-03-31 02:30:08:017] torch_npu.dispatch: [INFO] m"),
    ("RuntimeError: see /tmp/x.log: for details", "", "RuntimeError: see /tmp/x.log: for details"),
    ("", "", ""),
])
def test_strip_prefixes(text, prefix, body):
    assert strip_prefixes(text) == (prefix, body)


@pytest.mark.parametrize("text,codes", [
    ("c10_npu::acl::AclmdlRICaptureEnd(capture_stream_, &model_ri), error code is 107025", [("107025", "acl")]),
    ("begin capture stream failed, runtime result = 207005[FUNC:ReportCallError]", [("207005", "acl")]),
    ("[SqCqManage]Alloc sq cq fail, stream_id=1984, retCode=0x7020023.[FUNC:Setup]", [("0x7020023", "inner")]),
    ("PreCheckTaskErr:Kernel task happen error, retCode=0x2a, [aicpu exception].", [("0x2a", "inner")]),
    ("rtMemcpy:ErrCode=107030, desc=[x], InnerCode=0x0703001C", [("107030", "acl"), ("0x703001c", "inner")]),
    ("ERR00100 PTA call acl api failed", [("ERR00100", "pta")]),
    ("EE9999: Inner Error! then ee9999 again and EL0004", [("EE9999", "ecode"), ("EL0004", "ecode")]),
    ("OPS function error: HcclAllreduce, error code is 6", [("6", "hccl")]),
    ("V0420 14:30:25.1 E0420 W1210 0xE12345 no codes here, error code = 0", []),
    ("ExecFunc: Op Add Run with aclopCompileAndExecute, ret = 0.", []),
])
def test_extract_codes(text, codes):
    assert [(hit.code, hit.kind) for hit in extract_codes(text)] == codes


def test_normalise_code():
    assert normalise_code("0x0703001C") == "0x703001c"
    assert normalise_code("0107030") == "107030"
    assert normalise_code("ee9999") == "EE9999"


@pytest.mark.parametrize("path,rank", [
    ("/x/ascend/log/debug/device-3/device-1365_20250806230906733.log", 3),
    ("/x/ascend/log/debug/plog/plog-1365_20250806230935838.log", None),  # a pid, not a rank
    ("logs/rank_1.log", 1), ("logs/train_rank12.txt", 12), ("out/worker-2/stdout.txt", 2), ("RANK3/x.log", 3),
    ("/tmp/torchelastic_x/run/attempt_0/5/stderr.log", 5), ("x.log", None), ("-", None),
])
def test_rank_from_path(path, rank):
    assert rank_from_path(path) == rank


def test_parse_time_forms():
    assert parse_time("2026-06-30-12:05:19.360.581") == parse_line(
        "[ERROR] RUNTIME(569,):2026-06-30-12:05:19.360.581 [a.cc:1]1 f:x").timestamp
    assert parse_time("2026-06-30 12:05:19") == pytest.approx(parse_time("06-30 12:05:19", year=2026))
    assert parse_time("yesterday") is None


@pytest.mark.parametrize("junk", [
    "", "[", "[ERROR]", "[ERROR] RUNTIME(", "(", "(x pid=1)", "E", "EE9999", "V0821", "[W", "[rank0]:", "\x00\x01\xff",
    "[ERROR] RUNTIME(1,p):2026-13-45-99:99:99.000.000 [a.cc:1]1 f:bad date", "x" * 100000, "[" * 5000, "(" * 5000,
])
def test_never_raises_on_junk(junk):
    parsed = parse_line(junk)
    assert parsed.format in ("text", "plog", "cann_ecode", "c10_warn", "exception", "vllm")


def test_every_shared_plog_sample_line(shared_data):
    files = sorted((shared_data / "samples" / "plog").glob("*.log"))
    assert files
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            parsed = parse_line(line)
            where = f"{path.name}:{number}"
            assert parsed.format == "plog", where
            assert parsed.level in ("ERROR", "TRACE", "WARNING", "INFO", "EVENT", "DEBUG"), where
            assert parsed.module in ("HCCL", "RUNTIME", "APP"), where
            assert parsed.pid.isdigit() and parsed.time and parsed.timestamp, where
            assert parsed.file and parsed.line > 0, where
            assert parsed.message and "[log_inner.cpp" not in parsed.message, where
    device = parse_line((shared_data / "samples/plog/device-1365_20250806230906733.log").read_text().splitlines()[0])
    assert (device.module, device.pid, device.tid, device.file) == ("HCCL", "5375", "5792", "aicpu_hccl_sqcq.cc")
    runtime = parse_line((shared_data / "samples/plog/plog-1365_20250806230935838.log").read_text().splitlines()[0])
    assert (runtime.tid, runtime.func) == ("6219", "ProcLogicCqReport")


def _case(shared_cases, case_id):
    return next(c for c in shared_cases if c["id"] == case_id)


def test_case_error_texts_parse_with_the_right_fields(shared_cases):
    for case in shared_cases:
        for line in (case.get("error_text") or "").splitlines():
            parsed = parse_line(line)  # never raises
            prefix, body = strip_prefixes(line)
            assert prefix + body == line
            if parsed.format != "text":
                assert parsed.message or parsed.format == "cann_ecode"

    # vLLM worker prefixes around a torch_npu exception block (vllm-ascend-13792)
    lines = [parse_line(l) for l in _case(shared_cases, "vllm-ascend-13792")["error_text"].splitlines()]
    assert [p.format for p in lines] == ["exception", "pta_error", "cann_ecode", "cann_ecode"]
    assert all(p.rank == 1 and p.pid == "29932" and p.level == "ERROR" for p in lines)
    assert [c.code for p in lines for c in p.codes()] == ["107025", "ERR00100", "EE9999", "EE9999"]

    # grep output of a plog directory, with the terminal's wrapped halves (mooncake-2201)
    lines = [parse_line(l) for l in _case(shared_cases, "mooncake-2201")["error_text"].splitlines()]
    plog = [p for p in lines if p.format == "plog"]
    assert len(plog) == 5 and all(p.pid == "73550" and p.prefix.endswith("plog-73550_20260524094240186.log:") for p in plog)
    assert [p.module for p in plog] == ["RUNTIME"] * 4 + ["ASCENDCL"]
    assert plog[2].codes()[0].code == "107030" and plog[2].func == "rtMemcpy"
    assert all(p.format == "text" for p in lines if p not in plog)  # the wrapped halves stay text

    # vLLM traceback under EngineCore headers, CANN block with E-code and inner code (vllm-ascend-2629)
    lines = [parse_line(l) for l in _case(shared_cases, "vllm-ascend-2629")["error_text"].splitlines()]
    assert {p.pid for p in lines} == {"519998"}
    codes = [c.code for p in lines for c in p.codes()]
    for code in ("207005", "ERR00100", "EL0006", "0x7020023"):
        assert code in codes
    el = next(p for p in lines if p.format == "cann_ecode")
    assert el.module == "EL0006" and el.time == "2025-08-05-11:23:25.691.093"
