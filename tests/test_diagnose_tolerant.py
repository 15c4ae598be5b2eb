"""A known message is recognised however the paste wraps it, and in another release's words;
a text that only shares some of its words is not."""
from __future__ import annotations

import pathlib
import textwrap

import pytest

from npu_graph_skill.diagnose.engine import diagnose
from npu_graph_skill.diagnose.reflow import FlowText, unwrap

REPO = pathlib.Path(__file__).resolve().parents[1]
TRACEBACK = (REPO / "examples" / "capture-default-stream.txt").read_text(encoding="utf-8")


def _top(text: str) -> str:
    report = diagnose(text=text, lang="en")
    return report.candidates[0].id if report.candidates else ""


def _terminal(text: str, width: int) -> str:
    return "\n".join(line[i:i + width] for line in text.splitlines() for i in range(0, max(len(line), 1), width))


LOG = (REPO / "examples" / "vllm-replay-after-capture-copy.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("width", [60, 73, 100])
def test_terminal_wrap_is_undone(width):
    lines = unwrap(_terminal(LOG, width).splitlines())
    assert lines == LOG.splitlines()


@pytest.mark.parametrize("width", [60, 73, 100])
def test_word_wrap_is_undone_without_joining_two_printed_lines(width):
    original = LOG.splitlines()
    wrapped = [piece for line in original for piece in (textwrap.wrap(line, width) or [""])]
    lines = unwrap(wrapped)
    assert len(lines) < len(wrapped)
    squeezed = ["".join(line.split()) for line in original]
    for line in lines:  # each rejoined line lies within one line as printed
        assert any("".join(line.split()) in whole for whole in squeezed), line
    assert _top("\n".join(lines)) == _top(LOG)


@pytest.mark.parametrize("width", [60, 100])
def test_a_single_wrapped_line_still_diagnoses_the_same(width):
    assert _top(_terminal(TRACEBACK, width)) == _top(TRACEBACK) == "P-CAP-003"
    assert _top(textwrap.fill(TRACEBACK, width)) == "P-CAP-003"


def test_unwrapped_text_and_repeated_same_length_lines_stay_as_they_are(shared_cases):
    repeated = [f"[rank{r}]:[W1106 03:33:04.959369693 compiler_depend.ts:187] Warning: Waiting for pending NCCL work "
                "to finish before starting graph capture. (function operator())" for r in range(8)]
    assert unwrap(repeated) == repeated
    assert unwrap(LOG.splitlines()) == LOG.splitlines()
    for case in shared_cases:
        once = unwrap(case["error_text"].splitlines())
        assert unwrap(once) == once, case["id"]


def test_a_real_terminal_wrapped_paste_is_rejoined(shared_data):
    import yaml

    # mooncake#2201 pasted grep output of a plog from a terminal 172 columns wide
    case = yaml.safe_load((shared_data / "cases" / "mooncake-2201.yaml").read_text(encoding="utf-8"))
    lines = unwrap(case["error_text"].splitlines())
    assert len(lines) < len(case["error_text"].splitlines())
    assert any("MemCopySync:Memory copy sync failed, cnt=456, kind=1." in line for line in lines)
    assert any("desc=[the current capture mode does not support this operation], InnerCode=0x703001c" in line for line in lines)


def test_flow_search_spans_a_break_only_where_the_literal_is():
    import re

    flow = FlowText(["ERROR: the runtime is not allowed to synchro", "nize captured stream now", "other line"])
    regex = re.compile(r"not allow(ed)? to synchroni[sz]e captured[- ]?stream", re.I)
    assert flow.search(regex, ["synchroni"]) == 1
    assert flow.search(re.compile("other line"), ["other line"]) == 3
    assert flow.search(regex, ["absent"]) == 0


@pytest.mark.parametrize("width", [60, 80, 97])
def test_wrapped_real_case_keeps_its_pattern(shared_cases, width):
    for case in shared_cases:
        if case["phase"] == "Performance":
            continue
        assert _top(_terminal(case["error_text"], width)) == _top(case["error_text"]), case["id"]


def test_older_wording_of_a_table_message_is_recognised():
    # The table (master) says "Cannot run aclop operators during NPU graph capture. Current working aclop is ...";
    # a release that words it differently still names the same fault.
    report = diagnose(text="RuntimeError: Cannot run aclop operator while capturing, op: Fill", lang="en")
    assert report.candidates and report.candidates[0].id == "P-CAP-005"
    assert any("reworded" in m for m in report.candidates[0].matched)


def test_a_text_sharing_some_words_is_not_the_message():
    # near miss: the profiler's finding about aclop operators, not a capture failure
    text = ("[TR-ACLOP] aclop operators are compiled and run on the host path: 19 aclopCompileAndExecute calls. "
            "These operators cannot be captured in a graph.")
    report = diagnose(text=text, lang="en")
    assert not any(c.id == "P-CAP-005" and c.score >= 0.5 for c in report.candidates)


def test_an_identifier_of_a_message_is_not_found_as_a_plain_word():
    # near miss: prose with "capture ... before ... captured" is not "capture_end() called before capture_begin()"
    text = ("In the RL loop the weights are reloaded after the capture, before the next replay; "
            "the captured graph still reads the old weight addresses, so the output is wrong.")
    report = diagnose(text=text, lang="en")
    assert not any(c.id == "P-CAP-016" and any("reworded" in m for m in c.matched) for c in report.candidates)
    # the message itself, cut short, is still recognised by its words
    cut = diagnose(text="RuntimeError: capture_end() called before capture_begin", lang="en")
    assert cut.candidates and cut.candidates[0].id == "P-CAP-016"


def test_the_same_words_around_another_error_code_are_another_error():
    # P-CAP-001 knows the ACL line "synchronize stream failed, runtime result = 107027" (a sync during capture);
    # with 507035 (hicann/runtime stream.cpp:144 prints whatever the runtime returned) it is a kernel fault
    line = ("[ERROR] ASCENDCL(73550,python):2026-05-24-09:42:40.187.239 [stream.cpp:144]73550 "
            "aclrtSynchronizeStreamImpl: synchronize stream failed, runtime result = {}")
    other = diagnose(text=line.format(507035), lang="en")
    assert not any("reworded" in m for c in other.candidates for m in c.matched)
    assert other.candidates[0].id != "P-CAP-001"
    assert diagnose(text=line.format(107027), lang="en").candidates[0].id == "P-CAP-001"


def test_a_runtime_message_that_is_a_plain_clause_matches_only_as_the_whole_logged_message():
    # CANN 8.5's runtime logs "StreamBeginTaskUpdate: the stream is capturing." (api_error.cc:5751@c741ed4f);
    # the same clause in a sentence of prose is no misused task update
    logged = ("[ERROR] RUNTIME(12345,python):2026-05-24-09:42:40.187.239 [api_error.cc:5751]12345 "
              "StreamBeginTaskUpdate: the stream is capturing.")
    assert diagnose(text=logged, lang="en").candidates[0].id == "P-UPD-006"
    prose = "The collective resolves its handle lazily; neither path checks whether the stream is capturing."
    assert diagnose(text=prose, lang="en").novel


def test_a_feature_that_does_not_work_with_graphs_is_a_sign_of_a_support_gate_not_a_match_alone():
    # users tell a crash as "X doesn't work with cudagraph"; a release note that also promises a fix is the gate
    crash = ("The Qwen2.5-Omni talker doesn't work with cudagraph: it crashes with an illegal memory access "
             "on the second request.")
    assert diagnose(text=crash, lang="en").novel
    gate = "DeepSeek 3/3.1 and Qwen3 doesn't work with FULL_DECODE_ONLY graph mode. We'll fix it in next release."
    report = diagnose(text=gate, lang="en")
    assert not report.novel and report.candidates[0].id == "P-CMP-001"


def test_twin_runtime_lines_that_differ_in_their_object_are_not_each_other_by_words():
    # the CANN runtime refuses a sync of a captured stream (P-CAP-001) and of a captured event (P-CAP-018) in
    # the same words but the last; word tolerance must not read the one as the other
    line = ("[ERROR] RUNTIME(12345,python):2026-05-24-09:42:40.187.239 [api_error.cc:1290]12345 StreamSynchronize: "
            "Not allow to synchronize captured-{}.")
    stream, event = diagnose(text=line.format("stream"), lang="en"), diagnose(text=line.format("event"), lang="en")
    assert stream.candidates[0].id == "P-CAP-001" and event.candidates[0].id == "P-CAP-018"
    assert not any(c.id == "P-CAP-018" for c in stream.candidates)



# SGLang prints "[2026-08-05 00:11:26 DP0 TP3] " before every log line (configure_logger); tqdm
# redraws its bar with a carriage return, so a copied log has the next line glued to the bar.
SGLANG_CAPTURE = (
    "Capturing num tokens (num_tokens=28 avail_mem=9.36 GB):  86%|████████▌ | 43/50 [00:58<00:04,  1.43it/s]"
    "[2026-08-05 00:11:26 DP0 TP3] ValueError: input tensor must be the same size as output size times world size\n"
    "[2026-08-05 00:11:26 DP0 TP4] ValueError: input tensor must be the same size as output size times world size\n")


def test_an_exception_after_a_sglang_header_and_a_progress_bar_is_the_error():
    from npu_graph_skill.diagnose.evidence import extract_evidence

    evidence = extract_evidence("sglang serve --tp 16 --dp 2 --enable-dp-attention\n" + SGLANG_CAPTURE)
    assert [(e.type, e.input_line) for e in evidence.exceptions] == [("ValueError", 3), ("ValueError", 4)]
    assert evidence.lines[1].endswith("1.43it/s]")  # the bar keeps its own line: the capture progress it shows
    report = diagnose(text="sglang serve --tp 16\n" + SGLANG_CAPTURE, lang="en")
    assert report.error.startswith("ValueError: input tensor must be the same size")
    assert report.phase == "capture"


def test_a_bar_that_ends_its_line_or_a_rate_in_prose_is_not_split():
    from npu_graph_skill.diagnose.evidence import split_lines

    bar = "Capturing CUDA graphs (PIECEWISE): 100%|██████████| 7/7 [00:04<00:00,  1.64it/s]"
    assert split_lines(bar) == [bar]
    prose = "throughput fell to 3.2 it/s] with graph mode, from 9 it/s without"
    assert split_lines(prose) == [prose]


@pytest.mark.parametrize("line, kind, message", [
    ("import torch_npu时报错：AttributeError: module 'torch_npu.dynamo.torchair' has no attribute 'get_npu_backend'",
     "AttributeError", "module 'torch_npu.dynamo.torchair' has no attribute 'get_npu_backend'"),
    ("The code below results in a `torch.AcceleratorError: CUDA error: capturing stream has unjoined work` error.",
     "torch.AcceleratorError", "CUDA error: capturing stream has unjoined work"),
    ("Exception: Capture cuda graph failed: RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture.",
     "Exception", "Capture cuda graph failed: RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture."),
])
def test_an_exception_quoted_in_a_sentence_or_raised_bare_is_found(line, kind, message):
    from npu_graph_skill.diagnose.evidence import extract_evidence

    found = extract_evidence(line).exceptions
    assert [(e.type, e.message) for e in found] == [(kind, message)]


@pytest.mark.parametrize("line", [
    "A ValueError would be raised here if the sizes differed.",  # named, not printed: no colon and message
    "Error: see the log below",  # a label, not an exception type
])
def test_a_sentence_that_only_names_an_exception_is_not_one(line):
    from npu_graph_skill.diagnose.evidence import extract_evidence

    assert extract_evidence(line).exceptions == []


@pytest.mark.parametrize("paste, error", [
    # a launch command pasted first: the error is what the user says went wrong, not the command
    ("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 4 \\\n  --enable-piecewise-cuda-graph \\\n"
     "  --device npu\nThe server fails during capture with the error: operation failed due to a previous error",
     "The server fails during capture with the error: operation failed due to a previous error"),
    # vLLM logs a traceback line by line at ERROR: the header and the source lines are not the error
    ("(Worker_TP0 pid=2019) ERROR 05-12 09:17:24 [multiproc_executor.py:932] WorkerProc hit an exception.\n"
     "(Worker_TP0 pid=2019) ERROR 05-12 09:17:24 [multiproc_executor.py:932] Traceback (most recent call last):\n"
     "(Worker_TP0 pid=2019) ERROR 05-12 09:17:24 [multiproc_executor.py:932]     output = func(*args, **kwargs)\n",
     "WorkerProc hit an exception."),
    # versions first, then the symptom
    ("python: 3.11.11\nvllm: 0.10.2\n图模式下推理一直卡住，eager 模式正常", "图模式下推理一直卡住，eager 模式正常"),
])
def test_the_error_shown_is_what_went_wrong_not_a_command_or_a_traceback_header(paste, error):
    assert diagnose(text=paste, lang="en").error == error


def test_a_sentence_that_starts_with_a_framework_name_is_still_the_error():
    paste = "vllm serve Qwen/Qwen3-8B --tp 2\nvLLM fails with an illegal memory access after enabling FULL graphs"
    assert diagnose(text=paste, lang="en").error == "vLLM fails with an illegal memory access after enabling FULL graphs"


@pytest.mark.parametrize("paste, fix_in", [
    # the innermost frame outside torch is vLLM-Ascend's: the framework's graph path is where the fix goes
    ('Traceback (most recent call last):\n'
     '  File "/home/me/serve.py", line 3, in <module>\n    main()\n'
     '  File "/usr/local/lib/python3.11/site-packages/vllm_ascend/ops/rotary_embedding.py", line 210, in forward_oot\n'
     '    cos, sin = self.cos_sin_cache[positions].chunk(2, dim=-1)\n'
     "ValueError: shapes (7, 64) and (8, 64) do not match", "framework"),
    # the innermost frame is the user's script: the fix is in the user's code
    ('Traceback (most recent call last):\n'
     '  File "/home/me/train.py", line 40, in step\n    loss = model(batch).sum()\n'
     "AttributeError: 'NoneType' object has no attribute 'sum'", "user_code"),
    # no traceback, a framework's setting named: the framework (or its settings), not a user script
    ("With cudagraph_mode FULL_DECODE_ONLY the third request hangs after the first decode step",
     "framework"),
    # no traceback and no script of the user's: graph mode is driven by a framework's code
    ("After warm-up, the captured graph for batch size 8 returns the tokens of another request once the batch "
     "is padded.", "framework"),
    # near miss: the same words under the user's own capture code
    ("g = torch.npu.NPUGraph()\nwith torch.npu.graph(g):\n    out = model(static_x)\nAfter warm-up, the captured "
     "graph for batch size 8 returns the tokens of another request once the batch is padded.", "user_code"),
    # a C++ check raised in op-plugin's kernels: the operator layer, not torch_npu's core
    ("RuntimeError: group_list must be a 1D tensor of int64 values\nException raised from npu_grouped_matmul at "
     "/usr1/op-plugin/op_plugin/ops/opapi/GroupedMatmulKernelNpuOpApi.cpp:88 (most recent call first):", "op_plugin"),
])
def test_a_novel_error_says_whose_code_the_fix_goes_in(paste, fix_in):
    report = diagnose(text=paste, lang="en")
    assert report.novel and report.fix_in == fix_in


CAPTURE_REFUSED = "RuntimeError: operation not permitted when stream is capturing"


@pytest.mark.parametrize("frames, fix_in", [
    # the code that captured is vLLM-Ascend's model runner: the pattern's "your capture code" is the framework's
    ('  File "/usr/local/lib/python3.11/site-packages/vllm_ascend/worker/model_runner_v1.py", line 2100, in _capture_model\n'
     '    self._dummy_run(num_tokens)\n', "framework"),
    # the user's own benchmark script captured: the pattern's fix location stands
    ('  File "/home/me/bench.py", line 30, in <module>\n    out = model(static_x)\n', "user_code"),
])
def test_a_known_pattern_fixed_in_the_capturing_code_names_whose_code_captured(frames, fix_in):
    report = diagnose(text=f"Traceback (most recent call last):\n{frames}{CAPTURE_REFUSED}", lang="en")
    assert report.candidates[0].id == "P-CAP-001" and not report.novel
    assert report.fix_in == fix_in


def test_the_frame_where_code_called_in_skips_torch_triton_and_python_itself():
    from npu_graph_skill.diagnose import locate
    from npu_graph_skill.diagnose.evidence import extract_evidence

    evidence = extract_evidence(
        'Traceback (most recent call last):\n'
        '  File "/usr/lib/python3.11/site-packages/sglang/srt/model_executor/cuda_graph_runner.py", line 90, in capture\n'
        '  File "/usr/lib/python3.11/site-packages/torch/cuda/graphs.py", line 180, in __exit__\n'
        '  File "/usr/lib/python3.11/site-packages/triton/runtime/jit.py", line 600, in run\n'
        '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner\n'
        "RuntimeError: operation not permitted when stream is capturing\n")
    frame = locate.user_frame(evidence)
    assert frame.function == "capture" and locate.framework_frame(frame)


def test_a_message_wrapped_over_three_lines_is_found_from_a_literal_on_its_last_line():
    # vLLM's downgrade warning, wrapped by the width: the most selective literal
    # ("setting cudagraph_mode=") begins two lines below where the message does
    import re

    from npu_graph_skill.knowledge.prefilter import required_literals

    regex = r"CUDAGraphMode\.\w+ is not supported with [^\n]{0,120}setting cudagraph_mode="
    lines = ["INFO start", "WARNING compilation.py CUDAGraphMode.FULL is not supported with",
             "DeepseekV41ROCMAiterSparseSWABackend backend (support:",
             "AttentionCGSupport.UNIFORM_BATCH); setting cudagraph_mode=FULL_AND_PIECEWISE"]
    literals = required_literals(regex)
    assert literals == ["setting cudagraph_mode="]
    assert FlowText(lines).search(re.compile(regex, re.IGNORECASE), literals) == 2
    assert FlowText(lines[:3] + ["other text", lines[3]]).search(re.compile(regex, re.IGNORECASE), literals) == 0  # 4 lines: not one message


def test_a_matcher_marked_not_reworded_is_found_only_as_written():
    """`reworded: false`: the matcher's words in another order, or with words between them, are how users
    word other faults; only its text as written counts."""
    from types import SimpleNamespace

    from npu_graph_skill.diagnose.wording import _table
    from npu_graph_skill.knowledge.schema import Matcher

    words = "Only tasks running on Cube Core or Vector Core can be added to a task group"
    knowledge = SimpleNamespace(messages=[], patterns=[SimpleNamespace(matchers=[
        Matcher(type="message", weight=0.9, regex=words, reworded=False),
        Matcher(type="message", weight=0.9, regex="capture sequence was invalidated by an earlier failing call")])])
    table = _table(knowledge)
    assert words not in table
    assert "capture sequence was invalidated by an earlier failing call" in table


def test_a_host_sync_told_as_cannot_be_captured_is_the_sync_rule_in_chinese():
    # the rule of P-CAP-001 in a doc's words: a synchronisation that the capture cannot record
    report = diagnose(text="aclgraph模式下，print函数包含同步处理，无法被aclgraph捕获。", lang="en")
    assert report.candidates[0].id == "P-CAP-001"
    assert any(m.startswith("message:") and "同步" in m for m in report.candidates[0].matched)
