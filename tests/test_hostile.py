"""Hostile input: every public function that takes text or files, fed what users and agents really paste
(mutated real errors and logs, log-shaped fragments, arbitrary Unicode), never raises anything but the
library's input error, always returns a JSON contract that survives a round trip, and answers the same
input the same way twice.

The functions come from the registry in `benchmarks/hostile_inputs.py` (also the fuzz benchmark's):
a new capability that takes text joins both by adding one `Target` there. The example budget is the
`ci` Hypothesis profile (tests/conftest.py); `HYPOTHESIS_PROFILE=thorough pytest tests/test_hostile.py`
explores more.
"""
from __future__ import annotations

import importlib.util
import json
import random

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="Hypothesis (the `test` extra) is not installed")
from hypothesis import given, strategies as st  # noqa: E402

from npu_graph_skill.core.errors import UserError  # noqa: E402
from conftest import load_benchmark  # noqa: E402


H = load_benchmark("hostile_inputs")
SEEDS = H.load_seeds()
SEED_LINES = sorted({line for _, text in SEEDS for line in text.splitlines() if line.strip()})
TARGETS = {target.name: target for target in H.available_targets()}

# Pieces of the line layouts the parsers dispatch on, so examples reach their branches.
FRAGMENTS = [
    "[ERROR] ", "[WARNING] ", "RUNTIME(", "APP(", "HCCL(", ",python):", "2025-08-06-23:10:00.000.000 ", "[api_c.cc:1081]",
    "4127 ", "rtMemcpy:", "ErrCode=", "107030", "error code is ", "InnerCode=0x703001c", "runtime result = ", "EE9999",
    "EE9999: Inner Error!", "[PID: 1] ", "ERR00100 PTA call acl api failed", "[Error]: ", "Traceback (most recent call last):",
    '  File "/x/torch_npu/npu/graphs.py", line ', ", in capture_end", "RuntimeError: ", "torch.OutOfMemoryError: ",
    "(Worker_TP1 pid=29932) ", "[rank0]: ", "plog-1_2.log:", "ERROR 08-06 23:10:00 [multiproc_executor.py:1018] ",
    "[rank:0]:[2025-08-06 23:10:00:000] torch_npu.npugraph: [INFO] ", "I0806 23:10:00.000000 1 NPUGraph.cpp:12] ",
    "[W1210 03:09:10.966659833 NPUGraph.cpp:1] Warning: ", "(function f)", "[FUNC:f][FILE:a.cc][LINE:1]",
    "copy_between_host_and_device_opapi:../torch_npu/csrc/aten/ops/op_api/CopyKernelOpApi.cpp:55 NPU function error: ",
    "aclrtMemcpy, error code is 107030", "Exception raised from f at a.cpp:1", "NPUGRAPH Capture begin", "capture_begin",
    "TASK_QUEUE_ENABLE=2", "CANN 8.0.RC3", "torch_npu 2.5.1", "Ascend910B", "捕获", "重放", "\\n", "\n", "\t", " ", ":",
    "[", "]", "(", ")", "\x1b[31m", "\x1b]8;;", "\x00", "\ufeff", "9" * 40,
]

log_shaped = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(SEED_LINES or ["x"]), st.text(max_size=12)),
                      max_size=40).map("".join)
mutated = st.builds(lambda index, seed, size: H.mutate(random.Random(seed), SEEDS[index % len(SEEDS)][1], size)[1],
                    st.integers(0, 10_000), st.integers(0, 2 ** 32), st.integers(1, 6000)) if SEEDS else st.text()
texts = st.one_of(st.text(max_size=300), log_shaped, mutated)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return str(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("name", sorted(TARGETS))
@given(text=texts)
def test_never_an_unexpected_exception_always_valid_json_and_deterministic(name, text, scratch):
    target = TARGETS[name]
    if target.max_chars:
        text = text[:target.max_chars]
    try:
        first = target.call(text, scratch)  # the call checks the JSON round trip of to_dict()
    except H.Refused as refused:
        message = str(refused)
        assert message.strip() and "\n" not in message.strip(), message  # one line the user can act on
        with pytest.raises(H.Refused):
            target.call(text, scratch)
        return
    second = target.call(text, scratch)
    assert H.stable(first) == H.stable(second)


# --- a run folder's manifest as a hand edit or a truncated write leaves it -------------------------

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                           max_leaves=12)
manifests = st.fixed_dictionaries(
    {"schema": st.sampled_from(["npu-graph-skill/run/1", "npu-graph-skill/run/9", "x"])},
    optional={"switches": st.one_of(json_values, st.lists(st.fixed_dictionaries(
        {}, optional={"name": json_values, "value": json_values, "action": json_values}), max_size=3)),
        "command": json_values, "exit_code": json_values, "diagnosis": json_values, "first_failure": json_values})


@pytest.mark.skipif("bundle_manifest" not in TARGETS, reason="npu-graph run is not installed")
@given(manifest=manifests, output=st.one_of(st.text(max_size=200), log_shaped))
def test_a_damaged_run_manifest_is_read_or_refused_in_one_line(manifest, output, scratch):
    try:
        first = H._bundle(output, scratch, manifest=json.dumps(manifest))
    except UserError as refused:
        assert "\n" not in str(refused).strip()
        return
    assert H.stable(first) == H.stable(H._bundle(output, scratch, manifest=json.dumps(manifest)))


# --- the MCP tools through the SDK's own client: typed arguments, refusals as one-line errors ------

@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the MCP SDK (Python >= 3.10) is not installed")
@hypothesis.settings(max_examples=15)
@given(code=st.text(max_size=120), request=st.one_of(st.text(max_size=200), log_shaped), path=st.text(max_size=60))
def test_mcp_tools_answer_or_refuse_in_one_line(code, request, path, scratch):
    import anyio
    from mcp import Client

    from npu_graph_skill.mcp import server
    from npu_graph_skill.mcp.guard import ServerSettings

    saved = server._settings
    server.configure(ServerSettings.create(cwd=scratch, environ={}))

    async def calls():
        async with Client(server.server) as client:
            return [await client.call_tool("lookup_error_code", {"code": code}),
                    await client.call_tool("route_request", {"text": request}),
                    await client.call_tool("analyze_logs", {"paths": [path]})]

    try:
        results = anyio.run(calls)
    finally:
        server.configure(saved)
    for result in results:
        if result.is_error:
            message = result.content[0].text
            assert message.strip() and not message.startswith("internal error"), message
        else:
            assert isinstance(result.structured_content, dict)
            json.loads(json.dumps(result.structured_content))


# --- what the fuzzing found, kept as plain regression tests ---------------------------------------

@pytest.mark.parametrize("code", ["²", "1" * 5000, "0x" + "f" * 5000, "InnerCode=" + "9" * 70, ""])
def test_lookup_refuses_what_only_looks_like_a_number(code):
    from npu_graph_skill import api

    with pytest.raises(UserError) as refused:
        api.lookup_error_code(code)
    assert len(str(refused.value)) < 200


def test_a_5000_digit_code_or_line_number_is_read_as_text_not_a_crash():
    from npu_graph_skill import api

    text = ("RuntimeError: f:a.cpp:" + "9" * 5000 + " NPU function error: aclrtMemcpy, error code is " + "1" * 5000
            + '\n  File "x.py", line ' + "7" * 5000 + ", in f\n[rank" + "3" * 5000 + "]: ok")
    report = api.diagnose(text=text, lang="en").to_dict()
    assert report["evidence_summary"]["codes"] == []


def test_a_one_megabyte_line_is_read_up_to_the_window_and_says_so():
    from npu_graph_skill import api
    from npu_graph_skill.diagnose.evidence import LINE_WINDOW

    head = ("RuntimeError: copy_between_host_and_device_opapi:../torch_npu/csrc/aten/ops/op_api/CopyKernelOpApi.cpp:55 "
            "NPU function error: aclrtMemcpy, error code is 107030 ")
    report = api.diagnose(text=head + "{\"k\":[" * (1 << 17), lang="en").to_dict()
    assert report["candidates"][0]["id"] == "P-CAP-002"  # the error at the head of the line is still found
    assert any(f"first {LINE_WINDOW}" in note for note in report["notes"])


@pytest.mark.parametrize("path", ["a\x00b", "\ud800.log", "x/" * 3000, "   "])
def test_the_mcp_path_guard_refuses_impossible_paths_in_one_line(path, tmp_path):
    from npu_graph_skill.mcp.guard import PathRefused, check_input, check_output_dir

    for check in (lambda: check_input(path, [str(tmp_path)], None), lambda: check_output_dir(path, [str(tmp_path)])):
        with pytest.raises(PathRefused) as refused:
            check()
        assert "\n" not in str(refused.value) and len(str(refused.value)) < 400


def test_a_log_line_with_a_huge_or_odd_number_where_a_line_number_goes_still_parses():
    from npu_graph_skill.logs.formats import normalise_code, parse_line, rank_from_path

    plog = "[ERROR] RUNTIME(1,python):2025-08-06-23:10:00.000.000 [api_c.cc:" + "9" * 5000 + "]1 f: x"
    assert parse_line(plog).format == "plog" and parse_line(plog).line == 0
    assert parse_line("[ERROR] RUNTIME(1,python):2025-08-06-23:10:00.000.000 [api_c.cc:²]1 f: x").line == 0
    assert parse_line("I0806 23:10:00.000000 1 NPUGraph.cpp:12] [rank:" + "7" * 5000 + "] m").rank is None
    assert normalise_code("0107030") == "107030" and normalise_code("1" * 5000) == "1" * 5000
    assert rank_from_path("run/attempt_0/²/stdout.log") is None


def test_the_scanner_reads_a_huge_run_where_a_rank_goes_as_no_rank(tmp_path):
    from npu_graph_skill.logs.analyze import analyze_logs

    log = tmp_path / "job.log"
    log.write_text("I0821 14:02:11.123456 4242 NPUGraph.cpp:10] [rank:" + "1" * 5000 + "] NPUGRAPH Replay graph 1\n"
                   "[rank" + "2" * 5000 + "]:[W821 14:02:11.123456 x.py:3] Warning: y\n"
                   "I0821 14:02:12.123456 4242 NPUGraph.cpp:10] [rank:3] NPUGRAPH Replay graph 1\n", encoding="utf-8")
    report = analyze_logs([str(log)])
    assert report.totals["lines"] == 3
