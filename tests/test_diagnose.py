"""The diagnosis as a user sees it: real pasted texts in, phase / layer / cause / report out."""
from __future__ import annotations

import json
import re

import pytest

from npu_graph_skill.diagnose.engine import diagnose, generalize
from npu_graph_skill.diagnose.evidence import extract_evidence

# Real texts quoted in shared/reference/error_codes.md §3 (public issues, none of them in shared/data/cases).
SQCQ_8393 = """RuntimeError: ... capture_begin:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:214 NPU function error: c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, capture_mode), error code is 207005
(EngineCore pid=1802921) [ERROR] 2026-04-17-09:16:39 (PID:1802934, Device:0, RankID:-1) ERR00100 PTA call acl api failed
(EngineCore pid=1802921) [Error]: Failed to apply for memory.
(EngineCore pid=1802921) EE9999[PID: 1802934] 2026-04-17-09:16:39.992.922 (EE9999):  [SqCqManage]Alloc sq cq fail, stream_id=1984, retCode=0x7020023.[FUNC:Setup][FILE:stream"""

ITEM_4519 = """LocalScalarDenseNpu.cpp:23 NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 107027
[ERROR] 2026-01-10-10:00:00 (PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed
EE9999: Inner Error!
EE9999: [PID: 1] 2026-01-10-10:00:00.000.000 Not allow to synchronize captured-stream, stream_id=262.
        TraceBack (most recent call last):
        rtStreamSynchronizeWithTimeout execution failed, reason=stream is captured"""

# vllm-ascend#7676: the replay fails with 507011; the cause is an earlier sync copy during capture.
CHAIN_7676 = """[ERROR] RUNTIME(16884,):2026-03-24-09:58:00.084.600 [api_c.cc:1081]16884 rtMemcpy:ErrCode=107030, desc=[the current capture mode does not support this operation], InnerCode=0x703001c
(Worker pid=16884) ERROR 03-25 06:14:02 [multiproc_executor.py:880] RuntimeError: synchronize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:361 NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout(stream()), error code is 507011
(Worker pid=16884) ERROR 03-25 06:14:02 [multiproc_executor.py:880] [ERROR] 2026-03-25-06:14:02 (PID:16884, Device:1, RankID:-1) ERR00100 PTA call acl api failed
(Worker pid=16884) ERROR 03-25 06:14:02 [multiproc_executor.py:880] [Error]: Model execution failed."""

OLD_CANN_1261 = """RuntimeError: Failed to find function aclmdlRICaptureBegin
[ERROR] 2025-06-17-14:07:56 (PID:3846447, Device:0, RankID:-1) ERR00008 PTA resource not found"""


def test_stream_budget_from_an_unseen_report_is_recognised_despite_the_memory_hint():
    report = diagnose(text=SQCQ_8393, lang="en")
    assert report.candidates[0].id == "P-CAP-011"
    assert report.phase == "capture" and report.root_layer == "L4" and report.fix_in == "configuration"
    assert "not HBM" in report.root_cause["direct"]  # the misleading "Failed to apply for memory" is called out


def test_item_inside_capture_from_an_unseen_report():
    report = diagnose(text=ITEM_4519, lang="en")
    assert report.candidates[0].id == "P-CAP-001"
    assert report.confidence >= 0.8


def test_first_error_rule_names_the_capture_violation_not_the_replay_failure():
    report = diagnose(text=CHAIN_7676, lang="en")
    assert report.candidates[0].id == "P-CAP-002"
    assert "107030" in report.error
    consequences = {c["code"]: c["role"] for c in report.consequences}
    assert consequences.get("507011") == "consequence"
    assert report.evidence_summary["codes"][0] == "107030"


# The plog of a capture where a stream sync was refused (107027) and the synchronous copy after it too
# (107030): the copy's refusal matches more lines, the sync's is the first decisive error.
SYNC_THEN_COPY = """\
       synchronize stream failed, runtime result = 107027[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148]
       rtMemcpy execution failed, reason=the current capture mode does not support this operation[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:65]
       synchronized memcpy failed, kind = 2, runtime result = 107030[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148]
"""


def test_a_known_match_of_the_first_decisive_error_beats_one_of_later_lines_only():
    report = diagnose(text=SYNC_THEN_COPY, lang="en")
    assert [c.id for c in report.candidates[:2]] == ["P-CAP-001", "P-CAP-002"]
    assert "107027" in report.error
    # near miss: the same copy refusal first, with no refused sync before it, is the copy's fault
    copy_only = "\n".join(SYNC_THEN_COPY.splitlines()[1:])
    assert diagnose(text=copy_only, lang="en").candidates[0].id == "P-CAP-002"


def test_old_runtime_from_an_unseen_report():
    report = diagnose(text=OLD_CANN_1261, lang="en")
    assert report.candidates[0].id == "P-ENV-001"
    assert report.phase == "environment"


def test_json_contract_has_every_field_other_faces_rely_on():
    data = diagnose(text=ITEM_4519, lang="en").to_dict()
    for key in ("phase", "layer", "root_layer", "fix_in", "confidence", "candidates", "root_cause", "fix",
                "verification", "missing", "novel", "anchors"):
        assert key in data, key
    assert data["phase"] == data["phase"].lower()
    assert data["layer"] in ("L1", "L2", "L3", "L4") and data["root_layer"] in ("L1", "L2", "L3", "L4")
    assert 0 <= data["confidence"] <= 1
    first = data["candidates"][0]
    assert set(first) >= {"id", "title", "score", "evidence"}
    assert any("Not allow to synchronize" in line for line in first["evidence"])
    json.dumps(data)  # serialisable


def test_chinese_report_is_in_chinese():
    report = diagnose(text=ITEM_4519, lang="zh")
    assert re.search(r"[\u4e00-\u9fff]", report.root_cause["direct"])
    assert re.search(r"[\u4e00-\u9fff]", report.fix["short_term"])
    assert all(re.search(r"[\u4e00-\u9fff]", m.what) for m in report.missing)


def test_unknown_error_is_novel_with_a_stub_whose_regex_matches_the_input():
    text = "RuntimeError: aclgraph replay produced NaN in layer 3 after warmup 0x7f12ab (pid 4242)"
    report = diagnose(text=text, lang="en")
    assert report.novel is True
    assert report.confidence < 0.5
    stub = report.pattern_stub
    assert stub and stub["id"].startswith("P-")
    regex = re.compile(stub["matchers"][0]["regex"])
    assert regex.search(text)
    assert regex.search(text.replace("4242", "99").replace("0x7f12ab", "0xdead"))  # generalised


def test_missing_materials_follow_the_iron_law():
    bare = diagnose(text="RuntimeError: error code is 107027", lang="en")
    whats = " ".join(m.what for m in bare.missing)
    assert "traceback" in whats and "versions" in whats and "reproduction" in whats
    hows = " ".join(m.how for m in bare.missing)
    assert "npu-graph env" in hows and "TORCH_NPU_LOGS=+aclgraph" in hows


def test_evidence_survives_worker_prefixes_tuple_reprs_and_crlf():
    text = ("(Worker_TP0 pid=7) ERROR 08-05 11:23:25 [core.py:632] Traceback (most recent call last):\r\n"
            "(Worker_TP0 pid=7) ERROR 08-05 11:23:25 [core.py:632]   File \"/x/torch_npu/npu/graphs.py\", line 395, in update\r\n"
            "(Worker_TP0 pid=7) ERROR 08-05 11:23:25 [core.py:632]     self.graph_dispatch_mode.update_capture_record(cpu_update_input)\r\n"
            "(Worker_TP0 pid=7) ERROR 08-05 11:23:25 [core.py:632] RuntimeError: ('Currently, there are 3 operators that need "
            "to be updated by capture, and there are only 2 elements in the incoming cpu_update_input', '\\n[ERROR] "
            "2026-01-01-00:00:00 (PID:7, Device:0, RankID:-1) ERR00001 PTA invalid parameter')\r\n")
    evidence = extract_evidence(text)
    assert evidence.frames[0].function == "update" and evidence.frames[0].line == 395
    assert evidence.exceptions and evidence.exceptions[0].type == "RuntimeError"
    assert "ERR00001" in evidence.code_set()
    assert not any(line.startswith("(Worker") for line in evidence.lines)
    report = diagnose(text=text, lang="en")
    assert report.candidates[0].id == "P-UPD-001"


def test_versions_hardware_and_settings_are_extracted():
    text = ("export ASCEND_LAUNCH_BLOCKING=1\nCANN 8.5.1, torch_npu 2.7.1.post1, torch 2.7.1, Python 3.10, Atlas 800I A2 "
            "(Ascend 910B1)\nRuntimeError: boom")
    evidence = extract_evidence(text)
    assert evidence.versions["cann"] == "8.5.1"
    assert evidence.versions["torch_npu"].startswith("2.7.1")
    assert evidence.versions["torch"] == "2.7.1"
    assert evidence.env["ASCEND_LAUNCH_BLOCKING"] == "1"
    assert any("910B1" in h for h in evidence.hardware)


def test_numbers_that_are_ids_are_not_taken_for_codes():
    evidence = extract_evidence("stream_id=107027 task_id=207005 pid=507011 NPU function error: x, error code is 107030")
    assert evidence.code_set() == {"107030"}


def test_generalize_masks_numbers_and_addresses():
    regex = re.compile(generalize("Task 12 failed at 0xabc (pid 99)"))
    assert regex.search("Task 7 failed at 0x1f (pid 123456)")


@pytest.mark.parametrize("phase", ["capture", "replay", "memory", "update", "compile", "environment"])
def test_phase_vocabulary_is_shared_with_patterns(phase):
    from npu_graph_skill.core.model import Phase

    assert Phase.parse(phase).value == phase


def test_a_traceback_that_stops_at_printing_a_tensor_in_capture_names_the_host_read():
    """A frame's line is the call that was running when the error rose: printing a device tensor reads it
    on the host, which a capture refuses (P-CAP-001), even when the paste is cut before the error line."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.10/site-packages/vllm_ascend/worker/model_runner_v1.py", line 2290, in _capture_model\n'
        "    self._dummy_run(num_tokens)\n"
        '  File "/opt/venv/lib/python3.10/site-packages/my_model/modeling.py", line 141, in forward\n'
        "    print(hidden_states)\n")
    report = diagnose(text=text, lang="en")
    assert report.novel and report.phase == "capture"
    assert report.candidates[0].id == "P-CAP-001"


def test_a_kernel_fault_reported_at_a_host_read_is_not_read_as_a_refused_host_read():
    """An asynchronous kernel fault surfaces at the next `.item()`: that frame is not evidence of a host read
    the capture refused (P-CAP-001's own matchers stay silent; similar words may still list it)."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in step\n'
        "    loss_value = loss.item()\n"
        "RuntimeError: CUDA error: device-side assert triggered\n")
    report = diagnose(text=text, lang="en")
    host_read = next((c for c in report.candidates if c.id == "P-CAP-001"), None)
    assert host_read is None or not any(m.startswith("frame:") for m in host_read.matched)


# vLLM-Ascend (up to v0.18.0, platform.py:410) prints this on every start with FULL graphs
FULL_GRAPH_BANNER = """\
WARNING 04-30 10:00:01 [platform.py:410]
* WARNING: You have enabled the *full graph* feature.
* This is an early experimental stage and may involve various unknown issues.
* A known problem is that capturing too many batch sizes can lead to OOM
* (Out of Memory) errors or inference hangs. If you encounter such issues,
* consider reducing `gpu_memory_utilization` or manually specifying a smaller
* batch size for graph capture.
"""


def test_a_start_up_banner_that_warns_of_oom_is_not_an_oom_but_does_not_hide_one():
    assert diagnose(text=FULL_GRAPH_BANNER, lang="en").novel
    oom = FULL_GRAPH_BANNER + ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB "
                               "(NPU 0; 60.96 GiB total capacity; 58.12 GiB already allocated)\n")
    report = diagnose(text=oom, lang="en")
    assert not report.novel and report.candidates[0].id == "P-MEM-002"


def test_messages_as_older_torch_npu_releases_word_them_name_their_raise_sites():
    # v2.6.0-7.3.0 (0db038ca) and v2.5.1-7.1.0 print "reserved in total by PyTorch) If reserved", master ").If"
    oom = ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity; 55.10 GiB "
           "already allocated; 55.10 GiB current active; 1.20 GiB free; 58.30 GiB reserved in total by PyTorch) If "
           "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
    report = diagnose(text=oom, lang="en")
    assert report.phase == "memory" and any("NPUCachingAllocator.cpp" in a for a in report.anchors)
    # the 7.x release line refuses a private pool with a pluggable allocator (NPUPluggableAllocator.cpp:292@90441fa5)
    refused = ("RuntimeError: NPUPluggableAllocator does not yet support beginAllocateToPool. If you need it, "
               "please file an issue describing your use case.")
    assert any("NPUPluggableAllocator.cpp:292" in a for a in diagnose(text=refused, lang="en").anchors)
