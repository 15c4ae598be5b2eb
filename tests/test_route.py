"""Gate 0: `npu-graph route` sends a request to the sub-skill a senior engineer would pick.

The requests below are written the way users ask (the design brief's four example prompts, the
wording of public issues in ../shared/data/cases, questions heard from users), not derived from the
routing table's keyword list.
"""
from __future__ import annotations

import copy
import json

import pytest

from npu_graph_skill.skill import route_knowledge
from npu_graph_skill.skill.routing import SUB_SKILLS, compile_term, load_table, parse_table, route

DIAG = "graph-mode-diagnostics"
EXPERT = "graph-mode-expert"
PERF = "graph-performance-profiling"
LOGS = "graph-log-analyzer"
MCP = "graph-mcp-integration"

BRIEF_STEP_11 = (
    "/npu-graph-skill我这边 NPUGraph 捕获阶段报错了，帮我定位。【错误信息】 File \"/home/LucciC/test.py\", line 26, "
    "in <module> g.capture_begin() File \".../torch_npu/npu/graphs.py\", line 359, in capture_begin"
    "RuntimeError: NPU graphs must be captured on a non-default stream.(However, after capture, it's ok to "
    "replay them on the default stream.)【环境】CANN 9.2.0-beta.2 / torch_npu 2.10.0 / Ascend910B2 x8 / "
    "Python 3.13【使能方式】torch_npu.npu.NPUGraph 手动 capture_begin / capture_end【最小复现脚本】g = NPUGraph(); "
    "g.capture_begin() # line 26 抛错; g.capture_end(); g.replay()【已排查】改用非默认流后均通过；"
    "【想请你】1) 判定阶段与层级；2) 解释捕获流约束与校验位置；3) 短期修复与长期写法；4) 如何验证。"
)

REQUESTS = [
    # --- diagnostics: errors, codes, crashes, hangs, OOM, environment, vague or mixed ------------
    ("我的图模式报错了：RuntimeError: NPU graphs must be captured on a non-default stream.", DIAG),
    (BRIEF_STEP_11, DIAG),
    ("vllm-ascend fails at startup with 'Failed to find function aclmdlRICaptureBegin', how do I fix it?", DIAG),
    ("capture_end fails with error code 107025 on torch_npu 2.7.1, traceback below", DIAG),
    ("RuntimeError: Cannot run aclop operators during NPU graph capture. Current working aclop is Fill.", DIAG),
    ("开启图模式后 qwen3 32b 推理报 AclrtSynchronizeStreamWithTimeout(stream), error code is 107027，怎么解决？", DIAG),
    ("Is my environment set up correctly for NPUGraph? CANN 8.2.RC1 and torch_npu 2.7.1", DIAG),
    ("环境对不对？帮我检查一下 CANN 和 torch_npu 版本是否配套", DIAG),
    ("graph capture runs out of memory on 910B when capturing batch sizes 1 to 256", DIAG),
    ("replay 的时候报 507011，前面还有一个 507015", DIAG),
    ("图捕获阶段卡住了，没有任何输出，也不退出", DIAG),
    ("ValueError: not enough values to unpack (expected 13, got 9) during ACL graph replay with FULL_DECODE_ONLY", DIAG),
    ("EE9999: Inner Error! Not allow to synchronize captured stream stream_id=2", DIAG),
    ("调用 update() 之后 actual_seq_lengths 好像没生效，输出和 eager 对不上", DIAG),
    ("我的 NPUGraph 用不了", DIAG),
    ("help with npu graph", DIAG),
    ("graph mode crashes sometimes and is also really slow, not sure where to start", DIAG),
    ("Not support Generator while in capture mode during NPU graph capture — what's wrong with my DeepEP setup?", DIAG),
    ("设备内存在每次分桶 capture 之后都在增长，不符合预期", DIAG),
    ("What does error code 107030 mean in graph mode?", DIAG),
    # --- expert: how it works, constraints, where in the source ---------------------------------
    ("NPUGraph 的 capture_begin 内部做了什么？", EXPERT),
    ("What does aclmdlRICaptureBegin do, and when does torch_npu call it?", EXPERT),
    ("Can I replay an NPUGraph on a different stream than the one I captured it on?", EXPERT),
    ("图重放时输入怎么更新？为什么要用 copy_ 而不是重新赋值？", EXPERT),
    ("How does the graph tree's private memory pool work in torch_npu?", EXPERT),
    ("auto_dispatch_capture 是什么原理？哪些算子支持 update？", EXPERT),
    ("Explain the difference between the npugraphs and npugraph_ex backends", EXPERT),
    ("图捕获期间哪些操作是不允许的？", EXPERT),
    ("Where in the torch_npu source is the non-default stream check for capture?", EXPERT),
    ("make_graphed_callables 和 torch.npu.graph 有什么区别？", EXPERT),
    # --- performance -------------------------------------------------------------------------
    ("图模式比 Eager 慢，从哪里开始排查？", PERF),
    ("After enabling ACL graph in vllm-ascend, decode throughput didn't improve at all", PERF),
    ("How do I profile NPUGraph replay with msprof or the torch_npu profiler?", PERF),
    ("max_num_seqs=12 的时候 decode 慢了 7 倍，是不是有的 batch 没走图？", PERF),
    ("compare step time of graph mode versus eager for my model", PERF),
    ("profiling 里看到两次 replay 之间有很大的空隙，怎么回事", PERF),
    ("Is graph mode actually being used? The speedup is only 1.05x", PERF),
    ("帮我对比一下升级前后两份 profiling 数据，看看性能回归在哪", PERF),
    ("TTFT got worse after upgrading torch_npu with aclgraph enabled", PERF),
    # --- logs --------------------------------------------------------------------------------
    ("TORCH_NPU_LOGS 输出 200MB，帮我分析", LOGS),
    ("I have plog files from 8 ranks under ~/ascend/log, which rank failed first?", LOGS),
    ("How do I turn on NPUGraph debug logs?", LOGS),
    ("分析一下这个 worker 日志，capture 为什么花了 40 秒", LOGS),
    ("把日志里所有 ERROR 按出现次数汇总一下", LOGS),
    ("Here is the output of TORCH_NPU_LOGS=+aclgraph, can you summarise the capture and replay timeline?", LOGS),
    ("plog 里一堆 FuncErrorReason:rtMemcpy execution failed，怎么看是哪里最先出错的", LOGS),
    ("TORCH_NPU_LOGS 打出来几个 G 的文件，根本打不开，怎么看", LOGS),
    # --- MCP and agent integration -----------------------------------------------------------
    ("How do I register npu-graph as an MCP server in Claude Code?", MCP),
    ("怎么把这个诊断工具接入 Cursor 的 MCP？", MCP),
    ("claude mcp add 之后显示 Failed to connect，npu-graph mcp 起不来", MCP),
    ("Set up a .mcp.json for the npu-graph tools in our repository", MCP),
    ("在 Trae 里装了这个 skill，但是问图模式的问题时没有被触发", MCP),
    ("Which tools does the npu-graph MCP server expose?", MCP),
]


def test_the_request_set_is_large_and_bilingual():
    chinese = [text for text, _ in REQUESTS if any("\u4e00" <= ch <= "\u9fff" for ch in text)]
    assert len(REQUESTS) >= 40
    assert len(chinese) >= 15
    assert {expected for _, expected in REQUESTS} == set(SUB_SKILLS)


def test_routing_accuracy_is_at_least_90_percent():
    wrong = [(text[:70], expected, route(text).skill) for text, expected in REQUESTS if route(text).skill != expected]
    accuracy = 1 - len(wrong) / len(REQUESTS)
    assert accuracy >= 0.9, f"accuracy {accuracy:.0%}; misrouted: {wrong}"


@pytest.mark.parametrize("text", [
    "NPUGraph 的 capture_begin 内部做了什么？",
    "我的图模式报错了：[贴完整堆栈]",
    "图模式比 Eager 慢，从哪里开始排查？",
    "TORCH_NPU_LOGS 输出 200MB，帮我分析",
])
def test_the_four_prompts_of_the_design_brief_route_to_distinct_sub_skills(text):
    expected = {"内部做了什么": EXPERT, "报错": DIAG, "慢": PERF, "200MB": LOGS}
    want = next(skill for key, skill in expected.items() if key in text)
    assert route(text).skill == want


def test_environment_questions_go_to_diagnostics_which_runs_the_doctor_first():
    for text in ("is my setup right?", "环境对不对？", "are my CANN and torch_npu versions compatible?"):
        assert route(text).skill == DIAG
    section = load_table().skills[DIAG].first_step["en"]
    assert "doctor" in section


def test_vague_and_mixed_requests_fall_back_to_diagnostics_and_say_so():
    vague = route("hello")
    assert (vague.skill, vague.reason) == (DIAG, "vague")
    for text in ("图模式跑起来又慢又经常崩溃", "my graph mode is broken and slow"):
        mixed = route(text)
        assert (mixed.skill, mixed.reason, mixed.runner_up) == (DIAG, "mixed", PERF)


def test_terms_match_whole_words_and_stems():
    assert compile_term("slow*").search("it got slower")
    assert not compile_term("log").search("catalogue")
    assert compile_term("how do * work").search("how do graph pools work")
    assert not compile_term("rank").search("RankID:-1")


def test_route_json_prints_the_skill_and_every_score(run_cli):
    code, out, err = run_cli("route", "--json", "图模式比 Eager 慢")
    data = json.loads(out)
    assert code == 0 and err == ""
    assert data["skill"] == PERF
    assert set(data["scores"]) == set(SUB_SKILLS)
    assert data["scores"][PERF] > data["scores"][DIAG]


def test_route_text_output_names_the_skill_and_its_first_step(run_cli):
    code, out, _ = run_cli("route", "--lang", "en", "how", "do", "I", "register", "the", "MCP", "server?")
    assert code == 0
    assert MCP in out and "npu-graph mcp" in out


def test_route_reads_a_pasted_traceback_from_stdin(run_cli, monkeypatch):
    import io

    paste = "Traceback (most recent call last):\nRuntimeError: NPU function error: aclmdlRICaptureEnd, error code is 107025\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(paste.encode())))
    code, out, _ = run_cli("route", "--json", "-")
    assert code == 0 and json.loads(out)["skill"] == DIAG


def test_route_without_text_is_a_usage_error(run_cli):
    code, _, err = run_cli("route")
    assert code == 2 and "npu-graph: error:" in err


@pytest.mark.parametrize("data, message", [(b"", "stdin is empty"), (b"\x00\x01\x02binary", "binary")])
def test_route_rejects_empty_or_binary_stdin_with_one_line(run_cli, monkeypatch, data, message):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, _, err = run_cli("route", "-")
    assert code == 2 and message in err and err.count("\n") == 1


def test_route_reads_a_huge_single_line_paste_within_bounds(run_cli, monkeypatch):
    import io

    paste = b"RuntimeError: capture failed, error code is 107025 " + b"x" * (10 * 1024 * 1024) + b"\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(paste)))
    code, out, _ = run_cli("route", "--json", "-")
    assert code == 0 and json.loads(out)["skill"] == DIAG


# --- intent first, topic second; two concerns; asking back ---------------------------------------
# Written the way users ask, not taken from the routing corpus (benchmarks/route_corpus), which
# measures the router on requests it was not written from.

@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """The routing index is kept on disk; keep the tests' copy out of the home folder."""
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path_factory.mktemp("route-cache")))


@pytest.mark.parametrize("text, expected", [
    ("有没有计划支持 aclgraph 下的多流捕获？", EXPERT),
    ("does npugraph_ex support dynamic shapes yet?", EXPERT),
    ("为什么 capture size 要向上取整？", EXPERT),
    ("replay 之前要不要先 copy_ 静态输入？", EXPERT),
    ("is it safe to share one graph pool across graphs replayed in any order?", EXPERT),
    ("图模式能跑 MoE 模型不", EXPERT),
    ("开了图模式之后算子之间空泡很多", PERF),
    ("the server takes twenty minutes to start with graph mode on", PERF),
    ("decode 的 TPOT 比 eager 还高", PERF),
    ("NPU utilization stays at 30% during decode with aclgraph", PERF),
    ("where does torch_npu write its logs?", LOGS),
    ("Cursor 里的 MCP 服务一直显示连接失败", MCP),
])
def test_what_the_user_wants_decides_the_sub_skill(text, expected):
    result = route(text)
    assert (result.skill, result.reason) == (expected, "matched"), result.scores
    assert result.ask_back is None


@pytest.mark.parametrize("text, first, second", [
    ("开启aclgraph后算子间空泡大，而且偶尔报 507011", DIAG, PERF),
    ("310P 什么时候支持图模式？现在 eager 太慢了", EXPERT, PERF),
    ("RuntimeError: NPU function error: aclmdlRICaptureEnd, error code is 107025 — and where are the plog files?", DIAG, LOGS),
])
def test_a_request_with_two_concerns_names_both_in_order(text, first, second):
    result = route(text)
    assert (result.skill, result.reason, result.secondary, result.runner_up) == (first, "mixed", second, second)


@pytest.mark.parametrize("text, lang", [
    ("Same problem here!", "en"),
    ("我也遇到了这个错", "zh"),
    ("[Usage]: usage on graph mode", "en"),
    ("有后续吗", "zh"),
    ("hello", "en"),
    ("what is this?", "en"),
])
def test_a_thin_request_gets_one_question_back_in_its_language(text, lang):
    result = route(text)
    assert (result.skill, result.reason, result.secondary) == (DIAG, "vague", None)
    questions = load_table().ask_back
    known = {q[lang] for q in questions.values()} | {s.ask_back[lang] for s in load_table().skills.values()}
    assert result.ask_back in known


def test_a_reference_back_asks_for_what_is_missing_unless_it_was_pasted():
    missing = route("same error here, any fix?")
    assert missing.reason == "vague" and missing.ask_back == load_table().ask_back["refers_back"]["en"]
    pasted = route("same error here: RuntimeError: NPU function error: AclmdlRICaptureEnd, error code is 107025")
    assert (pasted.skill, pasted.ask_back) == (DIAG, None)


@pytest.mark.parametrize("text", [
    "why does the generator need to be registered before warmup?",
    "what does the super kernel scope do?",
])
def test_the_knowledge_of_a_sub_skill_counts_subject_words_no_cue_lists(text):
    with_knowledge, cues_only = route(text), route(text, knowledge=False)
    assert (with_knowledge.skill, with_knowledge.reason) == (EXPERT, "matched")
    assert any(hit.startswith("knowledge:") for hit in with_knowledge.matched[EXPERT])
    assert cues_only.reason == "vague"  # a bare question form, nothing the cues tie to graph mode


def test_the_routing_index_is_kept_on_disk_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(route_knowledge, "_INDEX", None)
    first = route("what does the super kernel scope do?")
    assert len(list(tmp_path.glob("route-index-*.marshal"))) == 1
    assert not list(tmp_path.glob("ask-index-*.marshal"))  # its own file, beside ask's

    def must_not_build():
        raise AssertionError("the knowledge was read again although the disk index is current")

    monkeypatch.setattr(route_knowledge, "_INDEX", None)  # as in a new process
    monkeypatch.setattr(route_knowledge, "documents", must_not_build)
    assert route("what does the super kernel scope do?").to_dict() == first.to_dict()


def _table_data():
    import yaml

    from npu_graph_skill.skill.resources import read_resource

    return yaml.safe_load(read_resource("routing.yaml"))


@pytest.mark.parametrize("breakage, message", [
    (lambda d: d["skills"][LOGS]["signals"][0].update(kind="wish"), "kind must be one of"),
    (lambda d: d["skills"][EXPERT]["signals"][0].update(regex=["(unclosed"]), "bad regex"),
    (lambda d: d["skills"][PERF].pop("ask_back"), "ask_back needs both en and zh"),
    (lambda d: d["ask_back"].pop("refers_back"), "ask_back.refers_back needs both en and zh"),
    (lambda d: d.update(secondary_ratio=2), "outside"),
    (lambda d: d["skills"][MCP].update(signals=[g for g in d["skills"][MCP]["signals"] if g["kind"] == "topic"]),
     "no intent cue"),
])
def test_a_broken_routing_table_is_refused_with_the_reason(breakage, message):
    data = copy.deepcopy(_table_data())
    breakage(data)
    with pytest.raises(ValueError, match=message):
        parse_table(data)


def test_route_json_adds_the_secondary_route_and_the_question_to_ask(run_cli):
    code, out, _ = run_cli("route", "--json", "开启aclgraph后算子间空泡大，而且偶尔报 507011")
    data = json.loads(out)
    assert code == 0 and (data["skill"], data["secondary"], data["ask_back"]) == (DIAG, PERF, None)
    code, out, _ = run_cli("route", "--json", "我也是一样的报错，咋整")
    data = json.loads(out)
    assert code == 0 and data["skill"] in SUB_SKILLS and data["reason"] == "vague"
    assert data["ask_back"] == load_table().ask_back["refers_back"]["zh"]


def test_route_text_output_asks_back_instead_of_naming_a_sub_skill(run_cli):
    code, out, _ = run_cli("route", "--lang", "en", "same", "problem", "here")
    assert code == 0 and "ask back" in out and load_table().ask_back["refers_back"]["en"] in out
    code, out, _ = run_cli("route", "--lang", "zh", "开启aclgraph后算子间空泡大，而且偶尔报 507011")
    assert code == 0 and "两个诉求" in out and PERF in out
