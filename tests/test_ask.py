"""`npu-graph ask`: the tokenizer, the ranking, the answers users get to the questions they ask
(Chinese and English), the JSON contract, the source excerpt and bad input."""
from __future__ import annotations

import json
import os
import pathlib

import pytest

from npu_graph_skill.expert.ask import ask, knowledge_index
from npu_graph_skill.expert.retrieval import BM25Index, stem, tokenize

HAS_KNOWLEDGE = True
try:  # patterns, codes and constraints come from the diagnosis core's loader
    from npu_graph_skill.knowledge.loader import load_knowledge  # noqa: F401
except ImportError:
    HAS_KNOWLEDGE = False
needs_knowledge = pytest.mark.skipif(not HAS_KNOWLEDGE, reason="knowledge loader (patterns, codes) not present")


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory, monkeypatch):
    """No user case base, no configured source tree, a private code-index cache."""
    monkeypatch.setenv("NPU_GRAPH_KB", str(tmp_path_factory.mktemp("kb")))
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("NPU_GRAPH_SOURCE", raising=False)


# -- tokenizer ------------------------------------------------------------------------------------

def test_identifiers_and_codes_stay_whole_and_are_also_split():
    tokens = tokenize("aclmdlRICaptureBegin NPUGraph::capture_begin 107027 0x7020023 ERR00100 TORCH_NPU_LOGS")
    for whole in ("aclmdlricapturebegin", "npugraph::capture_begin", "capture_begin", "107027", "0x7020023",
                  "err00100", "torch_npu_logs"):
        assert whole in tokens
    for part in ("aclmdl", "ri", "captur", "begin", "npugraph", "torch", "log"):
        assert part in tokens


def test_chinese_is_bigrams_plus_domain_terms():
    tokens = tokenize("图的内存池怎么共享")
    assert "内存" in tokens and "存池" in tokens  # bigrams
    assert set(tokenize("pool memory share graph")) <= set(tokens)  # 内存池, 共享, 图 meet their English words
    assert "怎么" not in tokens  # question glue


def test_a_single_character_domain_word_is_found_inside_a_run():
    assert "stream" in tokenize("捕获的时候能不能用多条流")
    # a fault told in Chinese meets the English words of the patterns and reports
    assert set(tokenize("pad metadata hang garbled")) <= set(tokenize("填充的元数据没有更新，服务卡住，输出乱码"))
    assert {"default", "stream"} <= set(tokenize("默认流"))


def test_plain_words_are_stemmed_and_question_words_dropped():
    assert stem("captures") == stem("captured") == stem("capturing") == stem("capture")
    assert stem("logging") == stem("logs") == "log"
    assert tokenize("what does it do") == []


def test_greetings_and_thanks_around_a_paste_are_not_topic_words():
    # users wrap a paste in them; as rare words they would pull a similarity search towards any text that has them
    assert tokenize("Hi all, can anyone help? Thanks in advance, regards") == ["all"]
    assert not {"麻烦", "大家", "帮忙", "谢谢"} & set(tokenize("麻烦大家帮忙看一下，谢谢"))
    assert {"captur", "fail"} <= set(tokenize("谢谢大家, capture fails"))


def test_a_chinese_request_around_a_paste_gives_no_bigram_across_its_words():
    # 运行的时候遇到下面的报错: only 运行 and 报错 (error) are words; 的时, 候遇, 到下, 的报 span their boundaries and,
    # rare in reports mostly in English, used to weigh like rare technical words in the similarity searches
    tokens = tokenize("运行的时候遇到下面的报错，麻烦大家帮忙看一下")
    assert not {"行的", "的时", "时候", "候遇", "到下", "面的", "的报", "烦大", "家帮", "忙看", "看一"} & set(tokens)
    assert {"运行", "报错", "error"} <= set(tokens)
    assert {"内存", "存池", "pool", "graph"} <= set(tokenize("图的内存池"))  # a term next to 的 keeps its bigrams


def test_bm25_prefers_a_title_match_and_rare_terms():
    index = BM25Index({"title": 3.0, "body": 1.0})
    index.add("pool", {"title": "memory pool sharing", "body": "graphs share a pool"})
    index.add("long", {"title": "lifecycle", "body": " ".join(["capture replay teardown"] * 40) + " pool"})
    index.add("other", {"title": "logging", "body": "TORCH_NPU_LOGS switches"})
    ranked = [key for key, _, _ in index.search("pool")]
    assert ranked[0] == "pool" and "other" not in ranked  # a title beats a passing mention in a long text
    assert index.search("nothing matches this") == []


def test_a_slice_of_the_index_ranks_its_documents_as_the_whole_does():
    index = BM25Index({"title": 1.0, "body": 1.0})
    index.add("capture", {"title": "capture fails", "body": "stream capture is invalidated by a sync"})
    index.add("replay", {"title": "replay hangs", "body": "replay waits on a stream event"})
    for n in range(8):  # documents outside the slice still make "stream" common and "sync" rare
        index.add(f"note{n}", {"title": "note", "body": "stream"})
    part = BM25Index.from_state(index.subset([0, 1], ["P-CAP", "P-REP"]).state())
    whole = {key: score for key, score, _ in index.search("stream sync replay")}
    assert {key: round(score, 9) for key, score, _ in part.search("stream sync replay")} == \
        {"P-CAP": round(whole["capture"], 9), "P-REP": round(whole["replay"], 9)}
    assert part.idf("sync") == index.idf("sync") > part.idf("stream")


# -- the questions users ask --------------------------------------------------------------------
# Written from the issue, the design brief and what users paste, before looking at the notes' wording.

CONCEPT_QUESTIONS = [
    ("what does capture_begin do internally?", "capture-begin"),
    ("where is the update mechanism?", "update-mechanism"),
    ("why can't I replay inside a capture?", "replay"),
    ("how do I turn on debug logs for NPUGraph?", "logging-switches"),
    ("can several graphs share one memory pool?", "memory-pool"),
    ("what are the capture modes global, thread_local and relaxed?", "capture-modes"),
    ("how does torch.compile mode reduce-overhead use NPU graphs?", ("graph-tree", "compile-backends")),
    ("how do I update actual_seq_lengths of fused infer attention after capture?", "update-mechanism"),
    ("is it allowed to use several streams while capturing?", "multi-stream-capture"),
    ("can I use torch.cond inside a captured graph?", "conditional-nodes"),
    ("how to print a tensor from inside a captured graph", "host-functions"),
    ("what does super_kernel_optimize do?", "super-kernel"),
    ("does TORCH_NPU_GRAPHS_LOG_LEVEL exist?", "logging-switches"),
    ("which constraints of the design brief are wrong?", "capture-constraints"),
    ("what happens when a graph is reset or destroyed?", "reset-teardown"),
    ("how does make_graphed_callables warm up and capture backward?", "make-graphed-callables"),
    ("does dropout work in a captured graph?", "rng-in-capture"),
    ("how to dump the captured graph to json", "debug-dump"),
    ("which backend should I use: npugraphs or npugraph_ex?", "compile-backends"),
    ("what changed between v7.3.0 and master for graph mode?", "version-differences"),
    ("why does aclop fail during capture?", "during-capture"),
    ("NPUGraph 的 capture_begin 内部做了什么？", "capture-begin"),
    ("怎么打开图模式日志", "logging-switches"),
    ("图的内存池怎么共享", "memory-pool"),
    ("为什么不能在捕获里面重放另一张图？", "replay"),
    ("更新机制在哪里实现的？", "update-mechanism"),
    ("捕获的时候能不能用多条流", "multi-stream-capture"),
    ("设计稿里的捕获约束哪些是错的", "capture-constraints"),
    ("图模式下随机数和 dropout 怎么处理", "rng-in-capture"),
    ("reduce-overhead 的图树是怎么工作的", "graph-tree"),
    ("捕获模式 global 和 thread_local 有什么区别", "capture-modes"),
    ("怎么在图里打印张量", "host-functions"),
    ("reset 之后显存什么时候释放", "reset-teardown"),
    ("capture_end 报错时先看哪个异常", "capture-end"),
    ("make_graphed_callables 怎么用", "make-graphed-callables"),
    ("条件节点 torch.cond 支持吗", "conditional-nodes"),
    ("TASK_QUEUE_ENABLE 设置成 2 会怎样", "environment-variables"),
    ("报错的 ERR00007 后缀是什么格式", "error-surface"),
]


def test_the_question_set_is_big_enough_and_bilingual():
    chinese = [q for q, _ in CONCEPT_QUESTIONS if any("\u4e00" <= ch <= "\u9fff" for ch in q)]
    assert len(CONCEPT_QUESTIONS) >= 30 and len(chinese) >= 12


@pytest.mark.parametrize("question, expected", CONCEPT_QUESTIONS, ids=[q for q, _ in CONCEPT_QUESTIONS])
def test_the_right_concept_comes_first(question, expected):
    result = ask(question, lang="en", limit=3, kinds=["concept"])
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert result.answers and result.answers[0].id in expected, [(a.id, a.score) for a in result.answers]


# With the whole knowledge base in the index (patterns, codes, constraints), the best entry of
# any kind. A pasted error must bring the pattern that explains it — named here by what it
# matches rather than by its number, so renumbering patterns does not break the intent.
ERROR_QUESTIONS = [
    ("what is error 107027", ("code", "107027")),
    ("错误码 107027 是什么意思", ("code", "107027")),
    ("what does ERR00100 mean?", ("code", "ERR00100")),
    ("EE1011 是什么错误", ("code", "EE1011")),
    ("what is ACL_ERROR_RT_STREAM_CAPTURED", ("code", "107027")),
    ("aclmdlRICaptureEnd 返回 107025", ("code", "107025")),
    ("RuntimeError: NPU graphs must be captured on a non-default stream. (However, after capture, it's ok to "
     "replay them on the default stream.)", ("pattern", "message")),
    ("Capture must end on the same stream it began on", ("pattern", "message")),
    ("Captured updatable ACLGraph operators but missing ACLGraph update plan", ("pattern", "message")),
    ("TND layout with dropout (keep_prob < 1) is not supported in ACLgraph mode", ("pattern", "message")),
    ("RuntimeError: Cannot run aclop operators during NPU graph capture. Current working aclop is Cast",
     ("pattern", "message")),
    ("The current graph configuration does not support update", ("pattern", "message")),
    ("Error: accessing tensor output of NPUGraphs that has been overwritten by a subsequent run", ("pattern", "message")),
    ("skipping cudagraphs due to cpu device (arg2_1)", ("pattern", "message")),
    ("replay failed with error code 507011", ("pattern", "code:507011")),
    ("图重放报 507011 怎么办", ("pattern", "code:507011")),
    ("TASK_QUEUE_ENABLE 设置成 2 会怎样", ("pattern", "env:TASK_QUEUE_ENABLE")),
]
# The questions on how things work keep their concept first when everything else is indexed too.
HOW_QUESTIONS = [(q, e) for q, e in CONCEPT_QUESTIONS if q != "TASK_QUEUE_ENABLE 设置成 2 会怎样"]


def _pattern_fits(pattern_id: str, question: str, spec: str) -> bool:
    import re

    pattern = load_knowledge().pattern(pattern_id)
    kind, _, value = spec.partition(":")
    for m in pattern.matchers:
        if m.weight <= 0 or m.type != kind:
            continue
        if kind == "message" and re.search(m.regex, question, re.I):
            return True
        if kind == "code" and m.code == value or kind == "env" and m.name == value:
            return True
    return False


@needs_knowledge
@pytest.mark.parametrize("question, expected", ERROR_QUESTIONS, ids=[q[:60] for q, _ in ERROR_QUESTIONS])
def test_errors_and_codes_bring_the_entry_that_explains_them(question, expected):
    result = ask(question, lang="en", limit=3)
    assert result.answers, question
    top = result.answers[0]
    kind, want = expected
    assert top.kind == kind, [(a.kind, a.id, a.score) for a in result.answers]
    if kind == "code":
        assert top.id == want
    else:
        assert _pattern_fits(top.id, question, want), (top.id, top.title)


@needs_knowledge
@pytest.mark.parametrize("question, expected", HOW_QUESTIONS, ids=[q for q, _ in HOW_QUESTIONS])
def test_how_questions_still_get_their_concept_among_all_kinds(question, expected):
    result = ask(question, lang="en", limit=3)
    expected = expected if isinstance(expected, tuple) else (expected,)
    top = result.answers[0]
    assert (top.kind, top.id) in {("concept", e) for e in expected}, [(a.kind, a.id, a.score) for a in result.answers]


def test_an_unrelated_question_gets_no_answer():
    assert ask("how do I bake sourdough bread", lang="en").answers == []


def test_answers_follow_the_language():
    zh = ask("capture_begin", lang="zh", limit=1).answers[0]
    en = ask("capture_begin", lang="en", limit=1).answers[0]
    assert zh.id == en.id
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh.title + zh.snippet)
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in en.title)


def test_full_gives_the_whole_note():
    answer = ask("what does capture_begin do internally?", lang="en", limit=1, full=True).answers[0]
    assert "aclmdlRICaptureGetInfo" in answer.detail and "(321-323)" in answer.detail


def test_the_index_is_built_once_per_process():
    assert knowledge_index() is knowledge_index()


# -- recorded cases ------------------------------------------------------------------------------

CASE_REPORT = pathlib.Path(__file__).parent / "data" / "cases" / "report-capture-memcpy.json"


def test_recorded_cases_are_answers_too(tmp_path):
    if not CASE_REPORT.is_file():
        pytest.skip("case fixture of the case knowledge base not present")
    from npu_graph_skill.cases.redact import Redactor
    from npu_graph_skill.cases.store import record_case

    recorded = record_case(json.loads(CASE_REPORT.read_text(encoding="utf-8")), kb_dir=str(tmp_path), redactor=Redactor())
    result = ask("aclrtMemcpy error code is 107030 during capture", lang="en", kinds=["case"], kb_dir=str(tmp_path))
    assert [a.id for a in result.answers] == [recorded.case_id]
    assert result.answers[0].kind == "case" and result.answers[0].anchors[0]["file"].endswith(".yaml")


# -- the command ---------------------------------------------------------------------------------

def test_cli_text_answer(run_cli):
    code, out, err = run_cli("ask", "NPUGraph", "的", "capture_begin", "内部做了什么？", "--lang", "zh", "--limit", "2")
    assert code == 0, err
    assert out.startswith("问题: NPUGraph 的 capture_begin 内部做了什么？")
    assert "1. [概念] capture-begin" in out
    assert "torch_npu/csrc/core/npu/NPUGraph.cpp:240-340@master@9e73e708" in out
    assert "\n3. " not in out


def test_cli_json_contract(run_cli):
    code, out, _ = run_cli("ask", "where is the update mechanism?", "--json", "--lang", "en", "--limit", "3")
    data = json.loads(out)
    assert code == 0 and data["question"] == "where is the update mechanism?" and data["lang"] == "en"
    assert data["schema"] == "npu-graph-skill/ask/1" and 1 <= len(data["answers"]) <= 3
    first = data["answers"][0]
    assert {"kind", "id", "title", "score", "snippet", "anchors"} <= set(first)
    assert "excerpt" not in first and "detail" not in first  # only with --source / --full
    assert first["id"] == "update-mechanism"
    assert all(a["path"] and a["line"] and "@" in a["version"] for a in first["anchors"])
    scores = [a["score"] for a in data["answers"]]
    assert scores == sorted(scores, reverse=True)


def test_cli_kind_filter(run_cli):
    code, out, _ = run_cli("ask", "capture", "--json", "--kind", "concept", "--limit", "10")
    assert code == 0 and {a["kind"] for a in json.loads(out)["answers"]} == {"concept"}


def test_cli_nothing_found_exits_1(run_cli):
    code, out, _ = run_cli("ask", "sourdough bread recipe", "--lang", "en")
    assert code == 1 and "No entry of the knowledge base matches" in out


def test_cli_question_from_stdin(run_cli, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("怎么打开图模式日志\r\n".encode("utf-8"))))
    code, out, _ = run_cli("ask", "-", "--json")
    assert code == 0 and json.loads(out)["answers"][0]["id"] == "logging-switches"


def test_cli_question_from_a_gb18030_file(run_cli, tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes("图的内存池怎么共享\n".encode("gb18030"))
    code, out, _ = run_cli("ask", "--file", str(path), "--json")
    assert code == 0 and json.loads(out)["answers"][0]["id"] == "memory-pool"


@pytest.mark.parametrize("case", ["empty", "words", "missing", "directory", "binary", "unreadable", "long-line"])
def test_cli_bad_input(run_cli, tmp_path, case):
    path = tmp_path / "q.txt"
    args = ["ask", "--file", str(path)]
    if case == "empty":
        path.write_text("")
    elif case == "words":
        args = ["ask"]
    elif case == "directory":
        args = ["ask", "--file", str(tmp_path)]
    elif case == "binary":
        path.write_bytes(b"\x00\x01\x02ELF" * 100)
    elif case == "unreadable":
        path.write_text("capture_begin")
        path.chmod(0)
        if os.access(str(path), os.R_OK):
            pytest.skip("running as root: permissions are not enforced")
    elif case == "long-line":
        path.write_text("capture_begin " + "x" * (10 * 1024 * 1024))
    code, out, err = run_cli(*args)
    if case == "long-line":  # best effort: the line is cut, the question still answers
        assert code in (0, 1) and "Traceback" not in err
        return
    assert code == 2 and err.startswith("npu-graph: error: ") and err.count("\n") == 1, (code, err)


def test_cli_bad_limit_and_missing_source(run_cli, tmp_path):
    with pytest.raises(SystemExit) as info:
        run_cli("ask", "capture", "--limit", "0")
    assert info.value.code == 2
    code, _, err = run_cli("ask", "capture", "--source", str(tmp_path / "nope"))
    assert code == 2 and "no such directory" in err


# -- the code excerpt ----------------------------------------------------------------------------
# A small tree in the real layout: the anchored lines of capture_begin moved down by 5 lines, as
# they do between versions; the excerpt must follow the function, not the stale numbers.

NPUGRAPH_CPP = """\
#include "NPUGraph.h"
{pad}
namespace c10_npu {{

void NPUGraph::capture_begin(MempoolId_t pool, aclmdlRICaptureMode capture_mode, bool report_shape) {{
  auto stream = c10_npu::getCurrentNPUStream();
  TORCH_CHECK(
      stream != c10_npu::getDefaultNPUStream(),
      "NPU graphs must be captured on a non-default stream. "
      "(However, after capture, it's ok to replay them on the "
      "default stream.)");
}}

}} // namespace c10_npu
"""


def _tree(root: pathlib.Path, shift: int) -> pathlib.Path:
    target = root / "torch_npu" / "csrc" / "core" / "npu"
    target.mkdir(parents=True)
    (target / "NPUGraph.cpp").write_text(NPUGRAPH_CPP.format(pad="\n" * shift), encoding="utf-8")
    return root


def _has_code_index() -> bool:
    try:
        from npu_graph_skill.expert import code  # noqa: F401  (the `npu-graph code` source index)
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _has_code_index(), reason="the source index of `npu-graph code` is not present")
def test_excerpt_follows_the_function_in_the_users_version(run_cli, tmp_path):
    tree = _tree(tmp_path / "pytorch", shift=5)
    code, out, err = run_cli("ask", "what does capture_begin do internally?", "--json", "--limit", "1",
                             "--source", str(tree))
    assert code == 0, err
    excerpt = json.loads(out)["answers"][0]["excerpt"]
    assert excerpt["file"] == "torch_npu/csrc/core/npu/NPUGraph.cpp"
    first = (tree / excerpt["file"]).read_text(encoding="utf-8").splitlines().index(excerpt["lines"][0]["text"]) + 1
    assert first == excerpt["start"] == excerpt["lines"][0]["line"] == 10  # 5 lines lower than in the shift-0 tree
    assert excerpt["lines"][0]["text"].startswith("void NPUGraph::capture_begin(")
    assert excerpt["located_by"] == "symbol" and excerpt["anchor_line"] == "240-340"
    code, text, _ = run_cli("ask", "what does capture_begin do internally?", "--limit", "1", "--source", str(tree))
    assert "10 | void NPUGraph::capture_begin(" in text and "NPU graphs must be captured on a non-default stream" in text


@pytest.mark.skipif(not _has_code_index(), reason="the source index of `npu-graph code` is not present")
def test_excerpt_from_the_source_variable_and_an_installed_package_layout(run_cli, tmp_path, monkeypatch):
    package = _tree(tmp_path / "site-packages", shift=0) / "torch_npu"  # site-packages/torch_npu/csrc/...
    monkeypatch.setenv("NPU_GRAPH_SOURCE", str(package))
    code, out, _ = run_cli("ask", "what does capture_begin do?", "--json", "--limit", "1", "--kind", "concept")
    excerpt = json.loads(out)["answers"][0]["excerpt"]
    assert code == 0 and excerpt["file"].endswith("csrc/core/npu/NPUGraph.cpp")
    assert any("non-default stream" in row["text"] for row in excerpt["lines"])


def test_no_excerpt_when_the_tree_lacks_the_file(run_cli, tmp_path):
    (tmp_path / "empty").mkdir()
    code, out, _ = run_cli("ask", "capture_begin", "--json", "--limit", "1", "--kind", "concept",
                           "--source", str(tmp_path / "empty"))
    data = json.loads(out)
    assert code == 0 and "excerpt" not in data["answers"][0]
    assert any("no anchor of the top answer" in note for note in data["notes"])


def test_without_the_code_index_the_anchored_lines_are_read_as_written(run_cli, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "npu_graph_skill.expert.code", None)  # as if `npu-graph code` were absent
    tree = _tree(tmp_path / "pytorch", shift=235)  # capture_begin at line 240, as anchored at master
    code, out, _ = run_cli("ask", "what does capture_begin do internally?", "--json", "--limit", "1",
                           "--kind", "concept", "--source", str(tree))
    excerpt = json.loads(out)["answers"][0]["excerpt"]
    assert code == 0 and excerpt["located_by"] == "line" and excerpt["start"] == 240
    assert excerpt["lines"][0]["text"].startswith("void NPUGraph::capture_begin(")
    assert excerpt["end"] == excerpt["lines"][-1]["line"] < 260  # the file ends before the anchor's 340


# -- the on-disk index ---------------------------------------------------------------------------

def test_a_fresh_process_answers_from_the_disk_index(tmp_path, monkeypatch):
    import npu_graph_skill.expert.ask as ask_module

    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ask_module, "_INDEX", None)
    first = ask("图的内存池怎么共享", lang="en", limit=3)
    files = list(tmp_path.glob("ask-index-*.marshal"))
    assert len(files) == 1

    def must_not_load(*_, **__):
        raise AssertionError("the knowledge was loaded again although the disk index is current")

    monkeypatch.setattr(ask_module, "_INDEX", None)  # as in a new process
    monkeypatch.setattr(ask_module, "concept_entries", must_not_load)
    monkeypatch.setattr(ask_module, "_load_knowledge", must_not_load)
    again = ask("图的内存池怎么共享", lang="en", limit=3)
    assert again.to_dict() == first.to_dict()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-version"])
def test_a_damaged_disk_index_is_rebuilt(tmp_path, monkeypatch, damage):
    import marshal

    import npu_graph_skill.expert.ask as ask_module
    from npu_graph_skill.core import cache
    from npu_graph_skill.expert import ask_cache

    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ask_module, "_INDEX", None)
    ask("capture_begin", lang="en")
    path = next(tmp_path.glob("ask-index-*.marshal"))
    data = path.read_bytes()
    path.write_bytes({"garbage": b"\x00not marshal", "truncated": data[: len(data) // 2],
                      "other-version": marshal.dumps(("npu-graph-skill/cache/0",) + marshal.loads(data)[1:])}[damage])
    monkeypatch.setattr(ask_module, "_INDEX", None)
    assert ask("what does capture_begin do internally?", lang="en", limit=1).answers[0].id == "capture-begin"
    assert isinstance(ask_cache.load(ask_cache.knowledge_key()), dict)  # rewritten
    assert cache.read(ask_cache.PREFIX, ask_cache.knowledge_key())["entries"]


def test_no_disk_index_when_turned_off_or_unwritable(tmp_path, monkeypatch):
    import npu_graph_skill.expert.ask as ask_module

    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "off"))
    monkeypatch.setenv("NPU_GRAPH_NO_CACHE", "1")
    monkeypatch.setattr(ask_module, "_INDEX", None)
    assert ask("capture_begin", lang="en").answers
    assert not (tmp_path / "off").exists()
    monkeypatch.delenv("NPU_GRAPH_NO_CACHE")
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "file"))
    monkeypatch.setattr(ask_module, "_INDEX", None)
    assert ask("capture_begin", lang="en").answers  # answers from memory, says nothing


def test_a_message_known_in_several_wordings_does_not_weigh_more_in_the_words_search():
    """The same words in a torch_npu, a PyTorch and a vLLM wording of one message count once: a pattern
    that learns another wording of its fault must not outrank the others on every input with those words."""
    from types import SimpleNamespace

    from npu_graph_skill.expert.ask import pattern_entries

    def pattern(pid, regexes):
        return SimpleNamespace(id=pid, title={"en": pid}, phase="capture", anchors=[],
                               matchers=[{"type": "message", "regex": r, "weight": 0.9} for r in regexes])

    once = pattern("P-A", ["This NPUGraph instance already owns a captured graph"])
    thrice = pattern("P-B", ["This NPUGraph instance already owns a captured graph",
                             "This CUDAGraph instance already owns a captured graph",
                             "This (CUDA|NPU)Graph instance already owns a captured graph"])
    signals = {e.id: e.fields["signals"].split() for e in pattern_entries(SimpleNamespace(patterns=[once, thrice]))}
    assert signals["P-B"].count("captured") == 1
    assert set(signals["P-A"]) <= set(signals["P-B"])


@pytest.mark.parametrize("question, notice", [
    ("what does 'ACL Graph is currently experimental. Please raise an issue on https://github.com/vllm-project/vllm-ascend"
     "/issues if you encourage any Error' mean?", "S-163"),
    ("日志里有 CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) ... to avoid OOM，"
     "是显存不够了吗", "S-171"),
])
def test_a_quoted_notice_is_answered_first_as_no_error(question, notice):
    result = ask(question, lang="en")
    first = result.answers[0]
    assert (first.kind, first.id) == ("notice", notice) and "not an error" in first.title
    assert first.anchors and first.anchors[0]["path"]


def test_words_of_a_notice_without_the_quote_do_not_make_it_the_answer():
    # near miss: an out-of-memory question shares "memory", "OOM", "profiling" with S-171 but quotes no notice
    result = ask("graph capture runs out of memory (OOM) while profiling, what should I lower?", lang="en")
    assert result.answers and result.answers[0].kind != "notice"
