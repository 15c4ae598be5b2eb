"""When no known pattern fits, the report still says what the evidence shows: the phase from the
frames, progress lines and settings of the frameworks (knowledge/context_signs.yaml), the signs it
rests on, and candidates with honest, low scores; nothing when the input has no sign at all."""
from __future__ import annotations

from npu_graph_skill.diagnose.engine import diagnose
from npu_graph_skill.knowledge.loader import load_knowledge

CAPTURE_PATH = '''(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671] Traceback (most recent call last):
(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671]   File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner_v1.py", line 4860, in capture_model
(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671]     self._capture_model()
(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671]   File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner_v1.py", line 4790, in _capture_model
(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671]     self._dummy_run(num_tokens)
(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671]   File "/vllm-workspace/my_plugin/attention.py", line 88, in forward
(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671]     out = self.impl(q, k, v, meta.slot_table)
(Worker_TP0 pid=2211) ERROR 10-29 08:54:50 [multiproc_executor.py:671] AttributeError: 'DecodeMeta' object has no attribute 'slot_table'
'''

SERVING_AFTER_CAPTURE = '''INFO 03-25 06:13:52 [model_runner_v1.py:3607] Graph capturing finished in 12 secs, took 0.31 GiB
INFO 03-25 06:14:01 [api_server.py:1] Started server process
ERROR 03-25 06:14:02 [core.py:10] EngineCore hit an exception
RuntimeError: The size of tensor a (16) must match the size of tensor b (9) at non-singleton dimension 0
'''


def test_the_context_sign_table_loads_with_sources():
    signs = load_knowledge().signs
    assert len(signs) >= 80
    assert {s.kind for s in signs} == {"frame", "line", "setting"}
    for sign in signs:
        assert sign.source["repo"] and sign.source["path"], sign.id
        assert sign.meaning["en"] and sign.meaning["zh"], sign.id


def test_a_python_error_on_the_capture_path_is_the_not_graph_ready_pattern():
    report = diagnose(text=CAPTURE_PATH, lang="en")
    assert report.phase == "capture" and report.candidates[0].id == "P-CAP-025"


def test_framework_capture_frames_give_the_phase_when_no_pattern_fits():
    text = CAPTURE_PATH.replace("AttributeError: 'DecodeMeta' object has no attribute 'slot_table'",
                                "RuntimeError: widget table lookup returned code 7 for entry 12")
    report = diagnose(text=text, lang="en")
    assert report.novel
    assert report.phase == "capture"
    assert report.confidence <= 0.3 or not report.novel
    assert report.candidates, "a report with a phase sign lists candidates"
    assert "capture_model" in report.root_cause["trigger"] or "_capture_model" in report.root_cause["trigger"]
    whys = [v["why"] for v in report.evidence_summary["phase_votes"]]
    assert any("frame capture_model" in w or "frame _capture_model" in w for w in whys)


def test_an_error_after_capture_finished_is_not_a_capture_error():
    report = diagnose(text=SERVING_AFTER_CAPTURE, lang="en")
    assert report.phase != "capture"
    # ... and the same line below the error says nothing about it
    flipped = "RuntimeError: The size of tensor a (16) must match the size of tensor b (9)\n" \
              "INFO 03-25 06:13:52 [model_runner_v1.py:3607] Graph capturing finished in 12 secs"
    assert all("capturing finished" not in v["why"] for v in diagnose(text=flipped, lang="en").evidence_summary["phase_votes"])


def test_chinese_report_gets_the_reasons_in_chinese():
    text = CAPTURE_PATH.replace("AttributeError: 'DecodeMeta' object has no attribute 'slot_table'",
                                "RuntimeError: widget table lookup returned code 7 for entry 12")
    report = diagnose(text=text, lang="zh")
    assert report.root_cause["trigger"].startswith("阶段判断依据")


def test_no_sign_at_all_gives_no_candidate():
    report = diagnose(text="hello, it does not work, please help", lang="en")
    assert report.phase == "unknown"
    assert report.candidates == []
    assert report.novel


def test_a_symptom_lists_the_causes_it_ranks():
    text = "With DP4 and FULL_DECODE_ONLY the server hangs during inference when only one request is sent; eager mode works."
    report = diagnose(text=text, lang="en")
    ids = [c.id for c in report.candidates]
    assert ids[0] == "P-REP-014"
    assert "P-REP-007" in ids[:3]
    cause = next(c for c in report.candidates if c.id == "P-REP-007")
    # listed at half the symptom's score, also where the words found it on their own more weakly
    assert cause.matched[0] == "a cause P-REP-014 ranks"
    assert cause.score == round(report.candidates[0].score * 0.5, 3)


def test_a_pattern_matched_in_part_votes_for_its_phase_over_loose_phase_words():
    # no pattern passes, but the copy rule (P-CAP-002) is matched in part; the memory words around it
    # ("malloc/free", "memory pool") are the plain words of another phase and must not outvote it
    text = ("ACL graph capture disallows host-to-device memcpy and device memory malloc/free on the captured "
            "stream, so the cache is now pre-loaded and the memory pool warmed up before capture.")
    report = diagnose(text=text, lang="en")
    assert report.novel and report.phase == "capture"
    assert report.candidates[0].id == "P-CAP-002"
    assert any(v["why"] == "it matches P-CAP-002 in part" for v in report.evidence_summary["phase_votes"])


def test_a_torch_npu_argument_check_puts_the_fix_in_the_calling_code():
    # no pattern covers conditional nodes, but the table knows the check (M-123, ERR00002 invalid type):
    # the caller broke it, so the root cause is the caller's and the fix states the condition
    report = diagnose(text="RuntimeError: Conditions must be bool tensors to use conditional nodes in npu graphs.", lang="en")
    assert report.novel and report.phase == "capture"
    assert (report.root_layer, report.fix_in) == ("L1", "user_code")
    assert "torch.cond predicate tensor is not torch.bool" in report.fix["short_term"]
    assert any("NPUGraph.cpp:548" in loc for loc in report.fix["locations"])
    # an internal assertion is torch_npu's own failure: the fix stays with torch_npu
    internal = diagnose(text='RuntimeError: capturing_child_model_ri == child_model_ri INTERNAL ASSERT FAILED at '
                             '"/build/torch_npu/csrc/core/npu/NPUGraph.cpp":640, please report a bug to PyTorch.', lang="en")
    assert internal.fix_in != "user_code" and "torch_npu's check passes" not in internal.fix["short_term"]
    assert internal.fix["short_term"].startswith("torch_npu's own consistency check failed")
    assert "Report it to Ascend/pytorch" in internal.fix["long_term"]


def test_votes_of_no_weight_decide_without_failing():
    from npu_graph_skill.diagnose.phase import Vote, decide

    assert decide([Vote("capture", 0.0, 3, "a sign of no weight")]) == ("capture", 0.0)


def test_a_thinly_decided_phase_names_the_phases_nearly_as_likely():
    from npu_graph_skill.diagnose.phase import Vote, close_phases

    votes = [Vote("capture", 0.3, 2, "S-033"), Vote("compile", 0.2, 0, "reports"), Vote("replay", 0.1, 0, "reports"),
             Vote("update", 0.16, 0, "reports")]
    assert close_phases(votes, "capture") == ["compile", "update"]  # at least half of capture's 0.3; replay is not
    assert close_phases([Vote("capture", 0.3, 2, "S-033")], "capture") == []


def test_a_report_says_which_other_phases_are_possible_and_a_matched_one_names_none():
    import dataclasses
    import io

    from npu_graph_skill.core.render import Style
    from npu_graph_skill.diagnose.report import render_markdown, render_text

    matched = diagnose(text="Cannot run aclop operators during NPU graph capture", lang="en")
    assert not matched.novel and matched.other_phases == []
    thin = dataclasses.replace(matched, other_phases=["compile"], novel=True)
    assert "Phase: Capture (also possible: Compile)" in render_text(thin, Style(io.StringIO()))
    assert "也可能: 编译阶段" in render_markdown(dataclasses.replace(thin, lang="zh"))
    assert thin.to_dict()["other_phases"] == ["compile"]
