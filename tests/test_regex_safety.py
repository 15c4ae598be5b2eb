"""No regex can make a diagnosis slow: the static check the knowledge loader runs, every regex of the
code and the shipped data passing it, and every one of them run against strings built to make it
backtrack (the worst are printed: `pytest -s tests/test_regex_safety.py`)."""
from __future__ import annotations

import shutil

import pytest

from npu_graph_skill.knowledge.regex_safety import check_regex, regex_hazard
from npu_graph_skill.knowledge.schema import KnowledgeError
from conftest import load_benchmark


H = load_benchmark("hostile_inputs")

CATASTROPHIC = [
    r"(a+)+b", r"(a*)*b", r"(\w+\s?)*$", r"(?:\d+|\w+)*x", r"\d+\d+x", r"\s*\s*x", r".*:.*x", r"[\d .:]*\s*x",
    r"(a+a)+b", r"(?i)(A+a)+b", r"\w+_\w+x", r"(?:\S+\s*)+x", r"(?=(a+)+b)", r"^(\w+\.?)+$", r"(?:a+,)*a+,?a+",
    r"error\s*[:=]?\s*\d", r"(?s)---\s*\n(.*?)\n---",
]
SAFE = [
    r"abc", r"\d+\.\d+", r"(\S+\s+)*x", r"(?:[A-Za-z_]\w*\.)*Error", r"RunOpApi\w*:.*AclrtSync", r"foo.*bar",
    r"[^\s:]+\.(?:cpp|h):\d+", r"\[W[\d .:]{0,40}x", r"(?:\S+\s+){0,3}?work", r"a{1,5}a{1,5}", r"(a+b)+c",
    r"(?:ab|cd)*", r"\bfoo\b", r"(?:\d+,)*\d+", r"error\s*(?:[:=]\s*)?\d", r"capture.{0,300}?, .{0,300}?failed",
]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_shapes_that_backtrack_catastrophically_are_named(pattern):
    reason = regex_hazard(pattern)
    assert reason and "\n" not in reason, pattern
    assert "unbounded" in reason or "repeated" in reason


@pytest.mark.parametrize("pattern", SAFE)
def test_linear_shapes_pass(pattern):
    assert regex_hazard(pattern) is None, pattern


def test_a_regex_that_does_not_parse_is_unsafe_with_re_s_message():
    safe, reason = check_regex("(unclosed")
    assert not safe and "does not parse" in reason


# Regexes the static check refuses that their caller runs on a bounded window only.
BOUNDED_BY_CALLER = {
    "npu_graph_skill.logs.scan._COMM_INIT": "searched within 1024 bytes of the record (logs/scan.py)",
}


def test_every_regex_of_the_code_and_the_shipped_knowledge_passes():
    """Matchers, context signs, the message table, the routing table and every module-level regex of
    the package (the log scanner's bytes regexes too)."""
    regexes = H.code_regexes() + H.knowledge_regexes()
    assert len(regexes) > 900  # 160 matchers, 434 messages, the routing table, the code
    refused = [(where, pattern, check_regex(pattern, flags & ~H.BYTES)[1]) for where, pattern, flags in regexes
               if where not in BOUNDED_BY_CALLER and not check_regex(pattern, flags & ~H.BYTES)[0]]
    assert not refused, refused
    assert all(not check_regex(p, f & ~H.BYTES)[0] for w, p, f in regexes if w in BOUNDED_BY_CALLER)  # still needed


# --- the loader refuses a careless matcher --------------------------------------------------------

CATASTROPHIC_PATTERN = """
- id: P-CAP-999
  phase: capture
  layer: L1
  root_layer: L1
  fix_in: user_code
  title: {en: A careless matcher, zh: 一个不小心写的匹配规则}
  root_cause: {en: Test only., zh: 仅供测试。}
  trigger: {en: Test only., zh: 仅供测试。}
  fix_short: {en: Test only., zh: 仅供测试。}
  fix_long: {en: Test only., zh: 仅供测试。}
  verification: {en: [Test only.], zh: [仅供测试。]}
  matchers:
    - {type: message, regex: "capture failed: (\\\\w+\\\\s?)+$", weight: 1.0}
  references: [{title: test, url: "https://example.invalid/test"}]
  examples: [{text: "capture failed: x", source: "this test"}]
"""


def test_the_loader_refuses_a_catastrophic_matcher_with_its_id(tmp_path, monkeypatch):
    from npu_graph_skill.knowledge.loader import KNOWLEDGE_DIR, build_knowledge

    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR, root, ignore=shutil.ignore_patterns("*.py", "__pycache__", "concepts"))
    build_knowledge(root)  # the shipped files load (and are cached)
    with open(root / "patterns" / "capture.yaml", "a", encoding="utf-8") as handle:
        handle.write(CATASTROPHIC_PATTERN)
    for _ in range(2):  # refused, and refused again: a file that fails is never cached
        with pytest.raises(KnowledgeError) as refused:
            build_knowledge(root)
        message = str(refused.value)
        assert "P-CAP-999" in message and "backtrack catastrophically" in message and "\n" not in message
        assert "nested unbounded repeats" in message


BROKEN_SIGN = """
- id: S-999
  framework: test
  kind: line
  regex: 'Capturing (graphs'
  phase: capture
  layer: L1
  weight: 0.2
  meaning: {en: "a test sign", zh: "测试用"}
  source: {repo: this/test, path: x.py, line: "1", version: test}
"""


def test_the_loader_refuses_a_broken_context_sign_regex_with_its_id(tmp_path, monkeypatch):
    """A warm start compiles signs on demand, so the fresh parse must refuse a broken one before caching."""
    from npu_graph_skill.knowledge.loader import KNOWLEDGE_DIR, build_knowledge

    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR, root, ignore=shutil.ignore_patterns("*.py", "__pycache__", "concepts"))
    build_knowledge(root)
    with open(root / "context_signs.yaml", "a", encoding="utf-8") as handle:
        handle.write(BROKEN_SIGN)
    for _ in range(2):  # refused, and refused again: the broken file was not cached
        with pytest.raises(KnowledgeError, match=r"S-999: bad regex"):
            build_knowledge(root)


def test_the_message_table_check_refuses_a_catastrophic_or_broken_regex_with_its_id():
    import types

    from npu_graph_skill.knowledge.loader import check_messages

    with pytest.raises(KnowledgeError, match=r"messages\.csv: M-999: regex .* can backtrack catastrophically"):
        check_messages([types.SimpleNamespace(id="M-999", regex=r"(\w+\s?)*$")])
    with pytest.raises(KnowledgeError, match=r"messages\.csv: M-998: bad regex"):
        check_messages([types.SimpleNamespace(id="M-998", regex=r"capture (failed")])
    check_messages([types.SimpleNamespace(id="M-997", regex=r"capture failed: \d{1,6}")])  # a linear one passes


def test_the_router_refuses_a_catastrophic_table_regex():
    from npu_graph_skill.skill.routing import _compile_terms

    with pytest.raises(ValueError, match="backtrack catastrophically"):
        _compile_terms("test", {"regex": [r"(\d+\s?)+x"]}, 1.0)


# --- every regex against strings built to make it backtrack ---------------------------------------

# Modules on the path of the functions a user or an agent hands text to (diagnose, logs' line parser,
# lookup, route, ask, the MCP guard, the case signature the diagnosis consults): their regexes are
# used with search / finditer, so each must stay linear there. Other modules' regexes are reported.
HOT_PATH = ("npu_graph_skill.diagnose.", "npu_graph_skill.knowledge.", "npu_graph_skill.core.",
            "npu_graph_skill.skill.routing.", "npu_graph_skill.expert.ask.", "npu_graph_skill.expert.retrieval.",
            "npu_graph_skill.logs.formats.", "npu_graph_skill.mcp.", "npu_graph_skill.cases.signature.")
SUPERLINEAR = 10.0  # time growth from 500 to 2000 characters: linear is about 4, quadratic 16
NOTICEABLE_S = 0.002  # below this on 2000 characters, growth is timer noise


def _hot(where: str) -> bool:
    return where.startswith(HOT_PATH) or not where.startswith("npu_graph_skill.")  # knowledge data is hot


def test_no_regex_on_the_hot_path_backtracks_on_hostile_strings():
    """Hot-path regexes at 500 and 2000 characters must grow linearly; the rest of the code's regexes
    run on 250 and 1000 characters, and the worst of all are printed."""
    rows = []
    for where, pattern, flags in H.code_regexes() + H.knowledge_regexes():
        sizes = (500, 2000) if _hot(where) else (250, 1000)
        seconds, growth, label = H.audit_regex(pattern, flags, *sizes)
        rows.append((seconds, growth, where, label, sizes[1]))
    rows.sort(reverse=True)
    print("\nslowest regexes on hostile strings (time, growth from a quarter of the size, where, string):")
    for seconds, growth, where, label, size in rows[:12]:
        print(f"  {seconds * 1000:8.2f} ms on {size}  x{growth:5.1f}  {where}  {label}")
    hot = [row for row in rows if _hot(row[2]) and row[0] > NOTICEABLE_S and row[1] > SUPERLINEAR]
    assert not hot, hot
