"""`npu-graph lint` engine: every rule on its own fixtures (lines marked `# expect: NGLnnn` must be
flagged, nothing else may be), every rule's bad/good example from the rule data, the region kinds,
the call chain into the same package, suppression comments and the rule data's validation."""
from __future__ import annotations

import copy
import pathlib
import re

import pytest

from npu_graph_skill.knowledge.lint_schema import parse_lint_config
from npu_graph_skill.knowledge.loader import load_raw_yaml
from npu_graph_skill.knowledge.schema import KnowledgeError
from npu_graph_skill.lint.engine import lint_paths, lint_source, load_config

DATA = pathlib.Path(__file__).parent / "data" / "lint"
EXPECT = re.compile(r"expect: ((?:NGL\d{3}\s*)+)")
CONFIG = load_config()
RULE_IDS = [r.id for r in CONFIG.rules]
DEFAULT = [r.id for r in CONFIG.rules if r.default]


def expected(path: pathlib.Path) -> set:
    marks = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            marks.update((str(path), number, rule) for rule in match.group(1).split())
    return marks


def found(report) -> set:
    return {(f.path, f.line, f.rule) for f in report.findings}


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_each_rule_flags_its_fixture_lines_and_nothing_else(rule_id):
    path = DATA / "rules" / f"{rule_id}.py"
    assert path.is_file(), f"{rule_id} has no fixture file"
    marks = expected(path)
    assert {m[2] for m in marks} == {rule_id}, "the fixture marks true positives of its rule"
    report = lint_paths([str(path)], select=DEFAULT + [rule_id], lang="en")
    assert found(report) == marks  # true positives at the marked lines; true negatives stay clean


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_each_rules_own_bad_example_is_flagged_and_good_example_is_clean(rule_id):
    rule = CONFIG.rule(rule_id)
    bad = lint_source(rule.bad, select=DEFAULT + [rule_id], lang="en")
    assert rule_id in {f.rule for f in bad.findings}, rule.bad
    assert lint_source(rule.good, select=DEFAULT + [rule_id], lang="en").findings == [], rule.good


def test_a_finding_says_rule_pattern_certainty_message_and_capture_site():
    report = lint_paths([str(DATA / "rules" / "NGL001.py")], select=["NGL001"], lang="en")
    first = report.findings[0]
    assert (first.rule, first.name, first.pattern, first.certainty) == ("NGL001", "host-read-in-capture", "P-CAP-001", "certain")
    assert first.message.startswith("`x.sum().item()` copies a device value to the host")
    assert first.code == "a = x.sum().item()  # expect: NGL001"
    assert first.region["text"] == "with torch.npu.graph(g)" and first.region["line"] == 10
    assert (first.line, first.column, first.end_line, first.end_column) == (11, 13, 11, 27)
    zh = lint_paths([str(DATA / "rules" / "NGL001.py")], select=["NGL001"], lang="zh").findings[0]
    assert "在捕获区内把设备上的值拷回主机" in zh.message


def test_compiled_and_framework_regions_make_findings_likely_and_with_bodies_certain():
    report = lint_paths([str(DATA / "regions" / "frameworks.py")], lang="en")
    assert found(report) == expected(DATA / "regions" / "frameworks.py")
    by_line = {f.line: f for f in report.findings}
    assert by_line[10].certainty == "likely" and by_line[10].region["text"] == "@support_torch_compile"
    assert by_line[17].certainty == "certain" and by_line[17].region["kind"] == "pragma"
    assert by_line[41].region["text"] == "torch.compile(self.decode, backend='npugraph_ex')"


def test_capture_guards_leave_out_the_branch_that_cannot_run_under_capture():
    # `if not is_current_stream_capturing():` bodies, the else of `x if capturing else y` and what follows
    # `if capturing(): return` are eager-only; an `and`/`or` decides only when the guard settles it, and
    # torch.compiler.is_compiling() settles only compiled regions (an eager capture is not compiling)
    path = DATA / "regions" / "guards.py"
    report = lint_paths([str(path)], lang="en")
    assert found(report) == expected(path)
    assert report.regions == 3
    unguarded = copy.deepcopy(CONFIG)
    unguarded.regions.pop("guards")
    lines = sorted(f.line for f in lint_paths([str(path)], lang="en", config=unguarded).findings)
    # 29: the tensor test after `capturing or`, which short-circuits; 53: print + item
    assert lines == [9, 11, 14, 19, 23, 24, 29, 31, 38, 53, 53, 60]


def test_an_inherited_framework_method_dispatches_to_the_subclass_override_in_another_module():
    # Impl310 overrides a helper that the base's forward calls; its module never names AttentionImpl, so it is
    # reached through the project class found as a region base, and `self.forward_impl()` in the inherited
    # forward runs the override, as Python's lookup does
    package = DATA / "inherit" / "backends"
    report = lint_paths([str(package)], lang="en")
    assert found(report) == expected(package / "impl310.py")
    chain = [step.text for step in report.findings[0].chain]
    assert chain[0] == "class Impl310(AttentionImpl) → forward"
    assert chain[-1].endswith("→ backends.impl310.Impl310.forward_impl")
    # the base class alone runs its own helper, which is clean
    assert lint_paths([str(package / "base.py")], lang="en").findings == []


def test_calls_are_followed_through_a_module_dict_iterated_by_items_under_enumerate():
    path = DATA / "regions" / "containers.py"
    report = lint_paths([str(path)], lang="en")
    assert found(report) == expected(path)
    assert report.findings[0].chain[-1].text == "block(x) → containers.Block.forward"


def test_a_callable_handed_to_a_capture_helper_is_followed_from_the_call_sites_that_pass_it():
    path = DATA / "regions" / "handed.py"
    report = lint_paths([str(path)], lang="en")
    assert found(report) == expected(path)
    chain = [step.text for step in next(f for f in report.findings if f.line == 7).chain]
    assert chain[0] == "with torch.npu.graph(graph)" and chain[-1] == "step(x) → handed.step"
    # handed through capture() to _capture_graph(): both bindings are shown
    assert "run_once_fn = run_once_fn (" in chain[1] and "run_once_fn = run_once (" in chain[1]
    assert lint_paths([str(path)], lang="en", depth=0).findings == []  # only the helper's own body at depth 0


def test_a_custom_op_called_in_a_region_runs_its_registered_function_and_the_layer_it_looks_up_by_name():
    # vLLM's layer ops: the layer's forward calls torch.ops.vllm.<op>, registered with direct_register_custom_op,
    # which finds the layer in no_compile_layers and runs its method; @torch.library.custom_op ops too.
    # Near misses stay quiet: an op the project does not register, a method two classes define, the op's
    # call outside any region, and a sync behind `not get_forward_context().capturing`
    package = DATA / "customops" / "model"
    report = lint_paths([str(package)], lang="en")
    assert found(report) == expected(package / "layers.py") | expected(package / "ops.py")
    chain = [step.text for step in next(f for f in report.findings if f.rule == "NGL021").chain]
    assert chain[0] == "class SparseAttention(AttentionLayerBase) → forward"
    assert "→ custom op sparse_forward → model.ops.sparse_forward" in chain[2]
    assert chain[3] == "layer._run_sparse(q, out) → model.layers.SparseAttention._run_sparse"
    # the op's function only dispatches: entering it costs no depth, so the helper 3 calls below the layer's
    # method is still reached at the default depth, and not at depth 2
    assert {f.rule for f in lint_paths([str(package)], lang="en", depth=2).findings} == {"NGL001"}
    # without the custom-op data, nothing below the op is followed
    plain = copy.deepcopy(CONFIG)
    plain.regions.pop("custom_ops")
    assert lint_paths([str(package)], lang="en", config=plain).findings == []


def test_calls_are_followed_into_the_same_package_with_the_chain_shown():
    report = lint_paths([str(DATA / "chain" / "serving" / "runner.py")], lang="en")
    assert [(pathlib.Path(f.path).name, f.line, f.rule) for f in report.findings] == [("ops.py", 5, "NGL001")]
    chain = [step.text for step in report.findings[0].chain]
    assert chain == ["with torch.npu.graph(self.graph)",
                     "self.model(static_x) → serving.model.Model.forward",
                     "layer(x) → serving.model.Layer.forward",
                     "normalize(x) → serving.ops.normalize"]
    assert report.files_checked == 1  # model.py and ops.py were read to follow calls, not linted themselves


def test_the_depth_bound_stops_following():
    runner = str(DATA / "chain" / "serving" / "runner.py")
    assert lint_paths([runner], depth=2, lang="en").findings == []
    assert len(lint_paths([runner], depth=3, lang="en").findings) == 1


def test_linting_the_helper_alone_finds_nothing_because_nothing_captures_it():
    assert lint_paths([str(DATA / "chain" / "serving" / "ops.py")], lang="en").findings == []


def test_suppression_comments_by_id_bare_and_per_file():
    report = lint_paths([str(DATA / "suppress")], lang="en")
    lines = {(pathlib.Path(f.path).name, f.line, f.rule) for f in report.findings}
    assert lines == {("comments.py", 10, "NGL001"), ("whole_file.py", 9, "NGL002")}
    assert report.suppressed == 5


def test_a_rule_off_by_default_runs_only_when_selected():
    path = [str(DATA / "rules" / "NGL008.py")]
    assert "NGL008" not in lint_paths(path, lang="en").rules and lint_paths(path, lang="en").findings == []
    assert {f.rule for f in lint_paths(path, select=["NGL008"], lang="en").findings} == {"NGL008"}


def test_select_and_ignore_take_ids_prefixes_and_names():
    path = [str(DATA / "rules" / "NGL001.py"), str(DATA / "rules" / "NGL010.py")]
    assert {f.rule for f in lint_paths(path, select=["NGL01"], lang="en").findings} == {"NGL010"}
    assert {f.rule for f in lint_paths(path, ignore=["NGL010"], lang="en").findings} == {"NGL001"}
    assert {f.rule for f in lint_paths(path, select=["host-read-in-capture"], lang="en").findings} == {"NGL001"}
    assert lint_paths(path, select=["NGL001,NGL010"], ignore=["NGL001"], lang="en").rules == ["NGL010"]


def test_crlf_sources_keep_their_line_numbers(tmp_path):
    text = (DATA / "rules" / "NGL002.py").read_text(encoding="utf-8")
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    assert [f.line for f in lint_paths([str(crlf)], lang="en").findings] == [9, 10, 11, 12, 13]


def test_rule_data_validation_rejects_broken_rules():
    raw = load_raw_yaml()
    patterns = {p["id"] for name, entries in raw.items() if name.startswith("patterns") for p in entries}
    good = raw["lint_rules.yaml"]
    assert len(parse_lint_config(good, "lint_rules.yaml", patterns).rules) == len(RULE_IDS)

    def broken(change):
        data = copy.deepcopy(good)
        change(data["rules"][0])
        with pytest.raises(KnowledgeError):
            parse_lint_config(data, "lint_rules.yaml", patterns)

    broken(lambda r: r.update(pattern="P-CAP-999"))  # unknown pattern
    broken(lambda r: r.update(certainty="sure"))
    broken(lambda r: r.update(check={"kind": "grep"}))  # a kind the engine does not offer
    broken(lambda r: r.update(check={"kind": "env_set", "variables": {"X": "1"}}))  # module kind in capture scope
    broken(lambda r: r["message"].pop("zh"))
    broken(lambda r: r.update(good=""))
    broken(lambda r: r.update(anchors=[], references=[]))
    broken(lambda r: r.update(check={"kind": "call", "methods": ["item"], "argument": {"keyword": "x", "matches": "("}}))
    for bad_ops in ({"registrars": [{"name": "direct_register_custom_op", "op_name": "op_name"}]},  # no op_func
                    {"layer_tables": "no_compile_layers"}, {"registry": []}):
        data = copy.deepcopy(good)
        data["regions"]["custom_ops"] = bad_ops
        with pytest.raises(KnowledgeError):
            parse_lint_config(data, "lint_rules.yaml", patterns)


def test_rule_ids_are_unique_stable_and_cover_the_issue_list():
    assert RULE_IDS == [f"NGL{n:03d}" for n in range(1, len(RULE_IDS) + 1)]
    names = {r.id: r.name for r in CONFIG.rules}
    assert names["NGL001"] == "host-read-in-capture" and names["NGL014"] == "task-queue-2-set-in-code"
    for rule in CONFIG.rules:
        assert rule.anchors or rule.references
        assert rule.false_alarms["en"] and rule.false_alarms["zh"]
