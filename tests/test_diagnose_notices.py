"""Lines frameworks print on normal runs (notices, knowledge/context_signs.yaml `notice: true`) are not
the error: the report says what they are, and their words neither match a pattern nor vote for a phase."""
from __future__ import annotations

import pytest

from npu_graph_skill.diagnose.engine import diagnose
from npu_graph_skill.knowledge.loader import load_knowledge
from npu_graph_skill.knowledge.schema import KnowledgeError, parse_context_sign

NOTICES = [s for s in load_knowledge().signs if s.notice]

# vLLM-Ascend v0.13.0's banner for FULL / FULL_DECODE_ONLY (platform.py:281-293@6281c1207a) as its logger
# prints it, then a capture that runs out of memory
BANNER = """WARNING 01-05 10:00:00 [platform.py:293] \x1b[91m
            **********************************************************************************
            * WARNING: You have enabled the *full graph* feature.
            * This is an early experimental stage and may involve various unknown issues.
            * A known problem is that capturing too many batch sizes can lead to OOM
            * (Out of Memory) errors or inference hangs. If you encounter such issues,
            * consider reducing `gpu_memory_utilization` or manually specifying a smaller
            * batch size for graph capture.
            * For more details, please refer to:
            * https://docs.vllm.ai/en/stable/configuration/conserving_memory.html#reduce-cuda-graphs
            **********************************************************************************\x1b[0m
"""
OOM = ("INFO 01-05 10:01:00 [model_runner_v1.py:3900] Capturing CUDA graphs (decode, FULL): 40%\n"
       "ERROR 01-05 10:01:05 [core.py:700] RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; "
       "60.96 GiB total capacity; 57.10 GiB already allocated; 1.20 GiB free; 58.00 GiB reserved in total by PyTorch)\n")
EXPERIMENTAL = ("WARNING 07-10 10:00:00 [ascend_config.py:242] ACL Graph is currently experimental. Please raise an "
                "issue on https://github.com/vllm-project/vllm-ascend/issues if you encourage any Error")


def test_the_notices_have_sources_examples_and_near_misses():
    assert len(NOTICES) >= 3
    for sign in NOTICES:
        regex = sign.compiled()["regex"]
        assert regex.search(sign.example), sign.id
        assert not regex.search(sign.near_miss), sign.id
        assert sign.source["repo"] and sign.source["path"] and sign.source["line"], sign.id


@pytest.mark.parametrize("sign", NOTICES, ids=lambda s: s.id)
def test_a_notice_alone_is_said_to_be_no_error(sign):
    report = diagnose(text=sign.example + "\n", lang="en")
    assert report.novel and report.confidence == 0
    assert report.root_cause["direct"].startswith("The input shows no error")
    assert sign.meaning["en"] in report.root_cause["direct"]
    assert any(sign.id in note for note in report.notes)
    # no failure to explain, so nothing to rank; the phase is where the notice says the run was, if anywhere
    assert report.candidates == []
    assert report.phase == (sign.phase if sign.weight else "unknown")


def test_no_pattern_counts_a_notice_as_its_evidence():
    # a notice's lines are left out of the matching: a pattern that needed one would silently lose it (the
    # words that only say graph mode is in use weigh 0.15 at most and stand in other lines of any such log)
    knowledge = load_knowledge()
    for sign in NOTICES:
        words = sign.compiled()["regex"].search(sign.example).group(0)  # the notice's own words
        for pattern in knowledge.patterns:
            for matcher in pattern.matchers:
                if matcher.type == "message" and matcher.weight >= 0.2:
                    assert not matcher.pattern().search(words), (sign.id, pattern.id, matcher.regex)


@pytest.mark.parametrize("sign", NOTICES, ids=lambda s: s.id)
def test_the_near_miss_of_a_notice_is_still_an_error(sign):
    report = diagnose(text=sign.near_miss + "\n", lang="en")
    assert not report.root_cause["direct"].startswith("The input shows no error")
    assert not any(sign.id in note for note in report.notes)
    assert report.error


def test_the_error_after_a_banner_is_diagnosed_without_the_banners_words():
    report = diagnose(text=BANNER + OOM, lang="en")
    assert report.error.startswith("RuntimeError: NPU out of memory")
    assert not report.novel and report.candidates[0].id == "P-MEM-002"
    assert any("S-164" in note for note in report.notes)
    # "capturing too many batch sizes can lead to OOM ... or inference hangs" is advice, not the fault's words
    banner_lines = range(1, BANNER.count("\n") + 1)
    assert not any(v["line"] in banner_lines for v in report.evidence_summary["phase_votes"])


def test_the_banner_alone_is_no_out_of_memory():
    report = diagnose(text=BANNER, lang="zh")
    assert report.phase == "unknown" and report.candidates == []
    assert report.root_cause["direct"].startswith("输入中没有错误")


def test_a_wrapped_notice_is_left_out_whole():
    wrapped = EXPERIMENTAL[:110] + "\n" + EXPERIMENTAL[110:] + "\n"
    report = diagnose(text=wrapped, lang="en")
    assert report.root_cause["direct"].startswith("The input shows no error")
    assert report.candidates == []


def test_what_the_user_says_after_a_notice_is_read():
    report = diagnose(text=EXPERIMENTAL + "\nthe server then hangs while capturing graphs for batch size 64\n", lang="en")
    assert not report.root_cause["direct"].startswith("The input shows no error")
    assert report.candidates
    assert any(v["line"] == 2 for v in report.evidence_summary["phase_votes"])  # the user's words vote


def _raw(**change):
    raw = {"id": "S-999", "framework": "vllm", "kind": "line", "regex": "x", "phase": "compile", "layer": "L1",
           "weight": 0, "notice": True, "example": "x", "near_miss": "y",
           "meaning": {"en": "a", "zh": "甲"}, "source": {"repo": "r", "path": "p", "line": "1", "version": "v"}}
    raw.update(change)
    return raw


def test_the_notice_fields_are_validated():
    assert parse_context_sign(_raw(), "t").notice
    with pytest.raises(KnowledgeError, match="near_miss"):
        parse_context_sign(_raw(near_miss=""), "t")
    with pytest.raises(KnowledgeError, match="weight"):
        parse_context_sign(_raw(notice=False), "t")  # only a notice may weigh nothing
    with pytest.raises(KnowledgeError, match="notice is true or false"):
        parse_context_sign(_raw(notice="yes"), "t")


# A vLLM start-up that only stops: every line is logged at INFO level (the messages of vLLM v0.21.0's
# gpu_model_runner.py:4858/4960/6064/6143, gpu_worker.py:463 and the notice S-170), the last one the capture's
# progress bar (gpu_model_runner.py:6305). "default" is no fault and "memory" no out-of-memory.
QUIET_LOG = """(EngineCore pid=2210) INFO 11-02 09:14:01 [gpu_model_runner.py:4858] Starting to load model Qwen/Qwen3-8B...
(EngineCore pid=2210) INFO 11-02 09:14:40 [gpu_model_runner.py:4960] Model loading took 15.27 GiB memory and 38.112 seconds
(EngineCore pid=2210) INFO 11-02 09:14:52 [gpu_model_runner.py:6064] Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)
(EngineCore pid=2210) INFO 11-02 09:14:55 [gpu_model_runner.py:6143] Estimated CUDA graph memory: 0.81 GiB total
(EngineCore pid=2210) INFO 11-02 09:14:55 [gpu_worker.py:463] Available KV cache memory: 52.4 GiB
(EngineCore pid=2210) INFO 11-02 09:14:55 [gpu_worker.py:478] CUDA graph memory profiling is enabled (default since v0.21.0). The current --gpu-memory-utilization=0.9000 is equivalent to --gpu-memory-utilization=0.8899 without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase --gpu-memory-utilization to 0.9101. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.
(EngineCore pid=2210) INFO 11-02 09:14:55 [kv_cache_utils.py:1250] Using the default KV cache layout
(EngineCore pid=2210) INFO 11-02 09:14:56 [gpu_model_runner.py:6305] Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  37%|███▋      | 19/51 [00:03<00:05,  6.10it/s]
"""


def test_a_log_of_routine_lines_is_no_error_and_says_where_it_stopped():
    report = diagnose(text=QUIET_LOG, lang="en")
    direct = report.root_cause["direct"]
    assert direct.startswith("The input shows no error") and "line 8" in direct
    assert "hangs in the capture phase" in direct and "py-spy dump" in direct
    assert report.phase == "capture"  # the last sign of a phase: the capture's progress bar, not "memory" above it
    assert report.candidates == [] and report.confidence == 0 and report.error == ""
    assert any("S-170" in note for note in report.notes)
    zh = diagnose(text=QUIET_LOG, lang="zh").root_cause["direct"]
    assert zh.startswith("输入中没有错误") and "卡在「捕获阶段」" in zh


@pytest.mark.parametrize("extra", [
    "it hangs here for an hour, then the engine core dies",  # the user's words: a symptom to explain
    "(EngineCore pid=2210) WARNING 11-02 09:14:56 [utils.py:120] Current vLLM config is not set.",  # not routine
])
def test_a_routine_log_with_anything_else_is_diagnosed(extra):
    report = diagnose(text=QUIET_LOG + extra + "\n", lang="en")
    assert not report.root_cause["direct"].startswith("The input shows no error")
    assert report.candidates


def test_the_advice_in_a_notice_is_no_setting_of_the_run():
    # SGLang lists "--disable-cuda-graph", "--enable-torch-compile" ... after every capture failure (S-172), and
    # vLLM's memory-profiling line says "To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0" (S-170):
    # options the framework suggests, not ones the user launched with
    signs = {sign.id: sign for sign in NOTICES}
    report = diagnose(text="Exception: Capture cuda graph failed: CUDA error: operation not permitted when stream is "
                           "capturing\n" + signs["S-172"].example + "\n", lang="en")
    assert report.error.startswith("Exception: Capture cuda graph failed") and report.candidates[0].id == "P-CAP-001"
    assert report.evidence_summary["settings"] == {} and report.phase == "capture"
    report = diagnose(text=signs["S-170"].example + "\n" + OOM, lang="en")
    assert "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS" not in report.evidence_summary["env"]
    # the same option typed by the user is a setting
    launched = diagnose(text="python -m sglang.launch_server --model-path Qwen/Qwen3-8B --disable-cuda-graph\n", lang="en")
    assert launched.evidence_summary["settings"].get("disable_cuda_graph") == "true"


def test_a_chinese_report_labels_its_notes_in_chinese():
    import io

    from npu_graph_skill.core.render import Style
    from npu_graph_skill.diagnose.report import render_text

    text = render_text(diagnose(text=EXPERIMENTAL + "\n" + OOM, lang="zh"), Style(io.StringIO()))
    assert "  说明: 第 1 行是 vllm-ascend 例行打印的提示（S-163）" in text and "  note:" not in text
