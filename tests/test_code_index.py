"""Which tree the user pointed at, at which version, and the cached index of it."""
from __future__ import annotations

import json
import os
import pathlib
import shutil

import pytest

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.expert import source_index
from npu_graph_skill.expert.source_index import cache_path, load_index
from npu_graph_skill.expert.source_tree import open_source_tree, read_git_head

TREE = pathlib.Path(__file__).parent / "data" / "code_tree"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(directory))
    source_index._MEMO.clear()
    yield directory / "code-index"
    source_index._MEMO.clear()


@pytest.fixture
def tree_copy(tmp_path):
    target = tmp_path / "src"
    shutil.copytree(TREE, target)
    return target


def _fake_git(root: pathlib.Path, head: str = "ref: refs/heads/master\n", loose: bool = True, packed: bool = False):
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head)
    if loose:
        (git / "refs" / "heads" / "master").write_text(COMMIT + "\n")
    if packed:
        (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{COMMIT} refs/heads/master\n")
    (git / "config").write_text('[remote "origin"]\n\turl = https://gitcode.com/ascend/pytorch.git\n')


def test_git_checkout_version_is_read_from_loose_and_packed_refs(tree_copy):
    _fake_git(tree_copy)
    tree = open_source_tree(str(tree_copy))
    assert (tree.kind, tree.version, tree.label, tree.repo) == ("git", COMMIT, "master@01234567", "Ascend/pytorch")
    (tree_copy / ".git" / "refs" / "heads" / "master").unlink()
    (tree_copy / ".git" / "packed-refs").write_text(f"{COMMIT} refs/heads/master\n")
    assert read_git_head(str(tree_copy)) == (COMMIT, "master")


def test_git_detached_head_and_worktree_file(tmp_path):
    main = tmp_path / "main"
    (main / "torch_npu").mkdir(parents=True)
    _fake_git(main, head=COMMIT + "\n", loose=False)
    assert open_source_tree(str(main)).label == "detached@01234567"
    worktree = tmp_path / "wt"
    (worktree / "torch_npu").mkdir(parents=True)
    gitdir = main / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/master\n")
    (gitdir / "commondir").write_text("../..\n")
    (main / ".git" / "refs" / "heads" / "master").write_text(COMMIT + "\n")
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n")
    assert open_source_tree(str(worktree)).version == COMMIT


def test_subdirectory_of_a_checkout_opens_the_checkout(tree_copy):
    _fake_git(tree_copy)
    tree = open_source_tree(str(tree_copy / "torch_npu" / "csrc"))
    assert tree.root == str(tree_copy) and tree.kind == "git"


def test_installed_package_by_package_dir_or_site_packages(tmp_path):
    site = tmp_path / "site-packages"
    shutil.copytree(TREE / "torch_npu" / "npu", site / "torch_npu" / "npu")
    shutil.copy(TREE / "torch_npu" / "__init__.py", site / "torch_npu")
    shutil.copy(TREE / "torch_npu" / "version.py", site / "torch_npu")
    for path in (site, site / "torch_npu"):
        tree = open_source_tree(str(path))
        assert (tree.kind, tree.root, tree.include) == ("package", str(site), ("torch_npu",))
        assert tree.version == "9.9.0+abcdef012345" and tree.label == "torch_npu 9.9.0 (git abcdef01)"
    (site / "torch_npu" / "version.py").unlink()
    meta = site / "torch_npu-2.13.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: torch-npu\nVersion: 2.13.0\n")
    assert open_source_tree(str(site)).version == "2.13.0"


def test_source_tree_without_git_is_a_directory(tree_copy):
    tree = open_source_tree(str(tree_copy))
    assert (tree.kind, tree.version, tree.repo) == ("directory", "unversioned", "Ascend/pytorch")


def test_bad_source_paths_are_one_line_user_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("NPU_GRAPH_SOURCE", raising=False)
    with pytest.raises(UserError, match="pass --source DIR"):
        open_source_tree(None)
    with pytest.raises(UserError, match="no such directory"):
        open_source_tree(str(tmp_path / "missing"))
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(UserError, match="expected a directory"):
        open_source_tree(str(tmp_path / "file.txt"))
    monkeypatch.setenv("NPU_GRAPH_SOURCE", str(TREE))
    assert open_source_tree(None).root == str(TREE)


def test_index_is_cached_and_only_changed_files_are_rescanned(tree_copy, cache):
    tree = open_source_tree(str(tree_copy))
    first = load_index(tree)
    assert first.stats["scanned_files"] == 6 and first.stats["source"] == "scan"
    assert first.counts()["python_files"] == 4 and first.counts()["cpp_files"] == 2
    assert os.path.isfile(first.stats["cache_path"])
    source_index._MEMO.clear()
    second = load_index(tree)
    assert (second.stats["source"], second.stats["scanned_files"]) == ("cache", 0)
    assert second.functions("torch_npu/npu/fake_graphs.py") == first.functions("torch_npu/npu/fake_graphs.py")
    assert second.counts() == first.counts()
    cpp = tree_copy / "torch_npu" / "csrc" / "core" / "npu" / "FakeGraph.cpp"
    cpp.write_text("// one more line\n" + cpp.read_text())
    third = load_index(tree)
    assert third.stats["scanned_files"] == 1
    begin = [f for f in third.functions("torch_npu/csrc/core/npu/FakeGraph.cpp") if f.name == "capture_begin"][0]
    assert (begin.start, begin.end) == (36, 46)
    (tree_copy / "torch_npu" / "npu" / "fake_graphs.py").unlink()
    fourth = load_index(tree)
    assert fourth.stats["removed_files"] == 1 and "torch_npu/npu/fake_graphs.py" not in fourth.files


def test_a_new_version_starts_from_the_previous_index(tree_copy, cache):
    _fake_git(tree_copy)
    first = load_index(open_source_tree(str(tree_copy)))
    assert first.stats["scanned_files"] == 6
    (tree_copy / ".git" / "refs" / "heads" / "master").write_text("f" * 40 + "\n")
    source_index._MEMO.clear()
    second = load_index(open_source_tree(str(tree_copy)))
    assert second.stats["source"] == "older-version" and second.stats["scanned_files"] == 0
    assert second.stats["cache_path"] != first.stats["cache_path"]


def test_corrupt_cache_is_rebuilt_with_a_note(tree_copy, cache):
    tree = open_source_tree(str(tree_copy))
    path = pathlib.Path(cache_path(tree))
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": "npu-graph-skill/code-index/6", "files": {"tru')
    index = load_index(tree)
    assert index.stats["scanned_files"] == 6
    assert any("unreadable index cache" in n for n in index.stats["notes"])
    assert json.loads(path.read_text())["root"] == str(tree_copy)


def test_unwritable_cache_still_answers(tree_copy, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(blocker))
    source_index._MEMO.clear()
    index = load_index(open_source_tree(str(tree_copy)))
    assert index.counts()["functions"] > 10
    assert index.stats["cache_written"] is False
    assert any("NPU_GRAPH_CACHE_DIR" in n for n in index.stats["notes"])
    assert not list(tmp_path.glob("**/.index-*.tmp"))


def test_binary_and_odd_files_are_skipped_not_fatal(tree_copy, cache):
    (tree_copy / "torch_npu" / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (tree_copy / "torch_npu" / "latin.py").write_bytes(b"# caf\xe9\ndef f():\n    raise ValueError('caf\xe9')\n")
    (tree_copy / "torch_npu" / "crlf.cpp").write_bytes(b"void g() {\r\n  TORCH_CHECK(x, \"crlf\");\r\n}\r\n")
    index = load_index(open_source_tree(str(tree_copy)))
    assert index.files["torch_npu/blob.py"]["error"] == "binary, skipped"
    assert [f.qualname for f in index.functions("torch_npu/latin.py")] == ["f"]
    assert index.functions("torch_npu/crlf.cpp")[0].end == 3
    assert index.sites_in("torch_npu/crlf.cpp")[0].message == "crlf"


def test_resolve_path_by_tail_and_from_a_traceback_path(tree_copy, cache):
    index = load_index(open_source_tree(str(tree_copy)))
    assert index.resolve_path("FakeGraph.cpp") == ["torch_npu/csrc/core/npu/FakeGraph.cpp"]
    assert index.resolve_path("/usr/lib/python3.9/site-packages/torch_npu/npu/fake_graphs.py") == ["torch_npu/npu/fake_graphs.py"]
    assert index.resolve_path("__init__.py") == sorted(["torch_npu/__init__.py", "torch_npu/npu/__init__.py"])
    assert index.resolve_path("nothere.py") == []
