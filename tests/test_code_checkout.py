"""`npu-graph code` on a real git checkout of Ascend/pytorch (Python and C++).

Runs when NPU_GRAPH_TEST_TORCH_NPU_SRC points at one (e.g. `git clone https://gitcode.com/ascend/pytorch`);
skipped otherwise. The exact lines are those of master at 9e73e708 (shared/reference/
torch_npu_graph_facts.md: capture_begin 240-340, the non-default stream check 270-274); on another
commit only the file and function are checked. The first run indexes ~1,900 files (seconds to tens
of seconds); the index is cached in a directory kept between runs.
"""
from __future__ import annotations

import os

import pytest

from npu_graph_skill.expert import source_index

FACTS_COMMIT = "9e73e708"
NPUGRAPH = "torch_npu/csrc/core/npu/NPUGraph.cpp"


@pytest.fixture(scope="module")
def checkout():
    path = os.environ.get("NPU_GRAPH_TEST_TORCH_NPU_SRC")
    if not path or not os.path.isdir(os.path.join(path, "torch_npu")):
        pytest.skip("set NPU_GRAPH_TEST_TORCH_NPU_SRC to a git checkout of Ascend/pytorch to run these tests")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NPU_GRAPH_CACHE_DIR", os.environ.get("NPU_GRAPH_TEST_CACHE") or
                     os.path.join(base, "npu-graph-skill-tests", "index"))
        source_index._MEMO.clear()
        from npu_graph_skill.expert.code import open_index

        index = open_index(path)
        yield path, index.tree.commit.startswith(FACTS_COMMIT)
    source_index._MEMO.clear()


def test_locate_capture_begin_in_cpp_and_python(checkout):
    from npu_graph_skill.api import locate_symbol

    path, at_facts_commit = checkout
    found = {(d.file, d.language): d for d in locate_symbol("NPUGraph::capture_begin", path).definitions}
    cpp = found[(NPUGRAPH, "cpp")]
    assert cpp.qualname == "c10_npu::NPUGraph::capture_begin"
    assert cpp.signature.startswith("void NPUGraph::capture_begin(MempoolId_t pool")
    assert ("torch_npu/npu/graphs.py", "python") in found
    if at_facts_commit:
        assert (cpp.start, cpp.end) == (240, 340)


def test_raise_site_non_default_stream(checkout):
    from npu_graph_skill.api import find_raise_site

    path, at_facts_commit = checkout
    best = find_raise_site("NPU graphs must be captured on a non-default stream", path).matches[0]
    assert (best.file, best.kind, best.call, best.function) == (NPUGRAPH, "check", "TORCH_CHECK", "c10_npu::NPUGraph::capture_begin")
    if at_facts_commit:
        assert (best.line, best.end_line, best.message_line) == (270, 274, 272)
        assert (best.function_start, best.function_end) == (240, 340)


def test_raise_site_aclop_with_the_operator_name_filled_in(checkout):
    from npu_graph_skill.api import find_raise_site

    path, _ = checkout
    message = ("RuntimeError: Cannot run aclop operators during NPU graph capture. Current working aclop is Fill. "
               "If you need this call to be captured, please try to set torch.npu.config.allow_internal_format = False. "
               "If still fail, the operator needs aclnn implementation and please file an issue. "
               "Current npuStreamCaptureStatus: 1")
    best = find_raise_site(message, path).matches[0]
    assert (best.file, best.function, best.quality) == ("torch_npu/csrc/core/npu/NPUGraphsUtils.h",
                                                        "c10_npu::assertNotCapturingAclop", "full")


def test_messages_table_anchors_hold_on_the_checkout(checkout, shared_data):
    from npu_graph_skill.api import verify_anchors

    path, at_facts_commit = checkout
    report = verify_anchors(path, messages_csv=str(shared_data / "messages.csv"))
    assert report.summary["ok"] >= 350
    if at_facts_commit:
        # Every master row is where the table says, except one whose example the source contradicts:
        # AclInterface.cpp:1276 logs "aclmdlRIDebugJsonPrint(modelRI=..., path=..., flags=...)" while the
        # table's example has no `path=` (a defect in the table that this check found).
        wrong = [c for c in report.checks if c.status == "wrong"]
        assert all("aclmdlRIDebugJsonPrint(modelRI=<modelRI>, path=" in c.detail["en"] for c in wrong), wrong
        assert len(wrong) <= 1
