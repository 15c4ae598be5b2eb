"""verify-anchors with history: anchors written at an older commit of a git checkout, checked
against a newer one (`git show <commit>:<path>` gives what the anchor meant)."""
from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

from npu_graph_skill.expert import source_index

TREE = pathlib.Path(__file__).parent / "data" / "code_tree"
CPP = "torch_npu/csrc/core/npu/FakeGraph.cpp"


def _git(root: pathlib.Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), "-c", "user.name=test", "-c", "user.email=test@example.com",
                           "-c", "commit.gpgsign=false", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def history(tmp_path, monkeypatch):
    """A checkout whose HEAD moved FakeGraph.cpp down 3 lines, removed operator== and reworded a
    message; returns (root, the old commit)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "cache"))
    source_index._MEMO.clear()
    root = tmp_path / "pytorch"
    shutil.copytree(TREE, root)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "v1")
    old = _git(root, "rev-parse", "HEAD")
    path = root / CPP
    text = path.read_text()
    text = text.replace("bool FakeGraph::operator==(const FakeGraph& other) const {\n  return id_ == other.id_;\n}\n\n", "")
    text = text.replace("Called FakeGraph::replay without a preceding successful capture.",
                        "FakeGraph::replay needs a successful capture first.")
    path.write_text("// three\n// new\n// lines\n" + text)
    _git(root, "commit", "-q", "-am", "v2")
    yield root, old
    source_index._MEMO.clear()


def _kb(tmp_path: pathlib.Path, commit: str) -> pathlib.Path:
    kb = tmp_path / "kb"
    (kb / "patterns").mkdir(parents=True)
    anchors = [("35-45", "capture_begin, whole"), ("36-40", "the non-default stream check"),
               ("59-61", "operator=="), ("52", "the replay check"), ("12-19", "checkNotExternal")]
    lines = ["- id: P-CAP-950", "  anchors:"]
    lines += [f'    - {{repo: Ascend/pytorch, path: {CPP}, line: "{line}", version: master@{commit[:8]}, note: "{note}"}}'
              for line, note in anchors]
    (kb / "patterns" / "history.yaml").write_text("\n".join(lines) + "\n")
    return kb


def test_anchors_from_an_older_commit_report_moves_removals_and_rewording(history, tmp_path):
    from npu_graph_skill.api import verify_anchors

    root, old = history
    report = verify_anchors(str(root), kb_dir=str(_kb(tmp_path, old)))
    by_line = {c.anchor.split(":")[-1].split("@")[0]: c for c in report.checks}
    assert (by_line["35-45"].status, by_line["35-45"].current) == ("moved", f"{CPP}:38-48")
    assert "capture_begin now spans 38-48" in by_line["35-45"].detail["en"]
    assert (by_line["36-40"].status, by_line["36-40"].current) == ("moved", f"{CPP}:39-43")
    assert by_line["59-61"].status == "vanished" and "operator==" in by_line["59-61"].detail["en"]
    assert by_line["52"].status == "changed" and "FakeGraph::replay is now 51-60" in by_line["52"].detail["en"]
    assert by_line["12-19"].status == "moved" and by_line["12-19"].current == f"{CPP}:15-22"
    assert report.drift == 5


def test_anchors_at_the_checkout_commit_are_taken_as_they_are(history, tmp_path):
    from npu_graph_skill.api import verify_anchors

    root, _old = history
    head = _git(root, "rev-parse", "HEAD")
    report = verify_anchors(str(root), kb_dir=str(_kb(tmp_path, head)))
    assert report.summary["ok"] == 5 and report.drift == 0


def test_anchors_from_a_commit_the_checkout_lacks_are_unverified(history, tmp_path):
    from npu_graph_skill.api import verify_anchors

    root, _old = history
    report = verify_anchors(str(root), kb_dir=str(_kb(tmp_path, "deadbeefdeadbeef")))
    assert {c.status for c in report.checks} == {"unverified"}
    assert all("history does not hold" in c.detail["en"] for c in report.checks)


def test_op_plugin_anchors_resolve_into_the_submodule_of_a_pytorch_tree(tmp_path, monkeypatch):
    from npu_graph_skill.api import code_index, verify_anchors

    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "cache"))
    source_index._MEMO.clear()
    root = tmp_path / "pytorch"
    shutil.copytree(TREE, root)
    ops = root / "third_party" / "op-plugin" / "op_plugin" / "ops"
    ops.mkdir(parents=True)
    (ops / "Fake.cpp").write_text('void fake_op() {\n  TORCH_CHECK(ok, "something went wrong in op-plugin");\n}\n')
    (root / "third_party" / "googletest").mkdir()
    (root / "third_party" / "googletest" / "gtest.cc").write_text("void not_indexed() {}\n")
    report = code_index(str(root))
    assert report.counts["cpp_files"] == 3  # FakeGraph.cpp/.h and the op-plugin file, not googletest
    table = tmp_path / "messages.csv"
    table.write_text("id,message_example,repo,file,line,message_line,version,function\n"
                     "M-X1,something went wrong in op-plugin,Ascend/op-plugin@6b46b284,op_plugin/ops/Fake.cpp,2,2,,fake_op\n")
    check = verify_anchors(str(root), messages_csv=str(table)).checks[0]
    assert (check.status, check.current) == ("ok", "third_party/op-plugin/op_plugin/ops/Fake.cpp:2")
    assert check.anchor == "Ascend/op-plugin op_plugin/ops/Fake.cpp:2@master@6b46b284"
    source_index._MEMO.clear()
