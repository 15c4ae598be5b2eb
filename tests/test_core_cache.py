"""The cache folder: what one process computed is read back by the next, and anything wrong with a
cached file (damaged, cut short, another format or key, an unwritable folder) only means computing
again."""
from __future__ import annotations

import marshal

from npu_graph_skill.core import cache

KEY = "0123456789abcdef"


def test_a_state_is_read_back_and_older_states_of_its_kind_are_dropped(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    data = {"tf": [{"capture": 1.5}], "keys": ("P-CAP-001",), 3: None}
    assert cache.write("words-", "aaaa", {"old": 1})
    assert cache.write("words-index-", "bbbb", {"other": 2})  # a longer prefix: another kind
    (tmp_path / "words-cccc.json").write_text("{}")  # what releases before this cache wrote
    (tmp_path / "words-py311.marshal.tmp").write_text("")  # not a state of "words-": kept
    assert cache.write("words-", KEY, data)
    assert cache.read("words-", KEY) == data  # tuples and int keys survive, unlike JSON
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"words-{KEY}{cache.SUFFIX}", f"words-index-bbbb{cache.SUFFIX}", "words-py311.marshal.tmp"]
    assert cache.read("words-", "aaaa") is cache.MISSING


def test_damaged_cut_or_foreign_files_read_as_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path))
    cache.write("knowledge-", KEY, {"patterns": [1, 2, 3]})
    path = tmp_path / f"knowledge-{KEY}{cache.SUFFIX}"
    whole = path.read_bytes()
    for damaged in (b"\x00garbage", whole[: len(whole) // 2], marshal.dumps({"patterns": [1]}),
                    marshal.dumps(("npu-graph-skill/cache/0", KEY, {})), marshal.dumps((cache.MAGIC, "ffff", {}))):
        path.write_bytes(damaged)
        assert cache.read("knowledge-", KEY) is cache.MISSING
    assert cache.write("knowledge-", KEY, None) and cache.read("knowledge-", KEY) is None  # None is data


def test_off_unwritable_or_unmarshallable_means_no_file_and_no_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "off"))
    monkeypatch.setenv("NPU_GRAPH_NO_CACHE", "1")
    assert not cache.write("x-", KEY, 1) and cache.read("x-", KEY) is cache.MISSING
    assert not (tmp_path / "off").exists()
    monkeypatch.delenv("NPU_GRAPH_NO_CACHE")
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", "")  # set but empty: off too (a read-only home's choice)
    assert not cache.enabled() and not cache.write("x-", KEY, 1)
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "file"))
    assert not cache.write("x-", KEY, 1) and cache.read("x-", KEY) is cache.MISSING
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "ok"))
    assert not cache.write("x-", KEY, {"a": object()})  # marshal cannot hold it: not kept, no error
    assert cache.read("x-", KEY) is cache.MISSING


def test_the_location_follows_the_environment(tmp_path):
    assert cache.location({"NPU_GRAPH_CACHE_DIR": str(tmp_path)}) == str(tmp_path)
    assert cache.location({"XDG_CACHE_HOME": str(tmp_path)}) == str(tmp_path / "npu-graph-skill")


def test_a_read_only_home_keeps_its_cache_in_a_private_temporary_folder(tmp_path, monkeypatch):
    # the default location cannot be made (here: its parent is a file, which stops root too)
    blocked = tmp_path / "home-cache"
    blocked.write_text("a file where the cache folder's parent should be")
    monkeypatch.delenv("NPU_GRAPH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setattr(cache.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert cache.write("knowledge-", KEY, {"kept": True})
    assert cache.read("knowledge-", KEY) == {"kept": True}
    stand_in = tmp_path / "tmp" / f"npu-graph-skill-{cache._uid()}"
    assert (stand_in / f"knowledge-{KEY}{cache.SUFFIX}").is_file()
    assert stand_in.stat().st_mode & 0o777 == 0o700


def test_a_stand_in_others_can_write_to_is_not_used(tmp_path, monkeypatch):
    monkeypatch.delenv("NPU_GRAPH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setattr(cache.tempfile, "tempdir", str(tmp_path))
    shared = tmp_path / f"npu-graph-skill-{cache._uid()}"
    shared.mkdir()
    shared.chmod(0o777)  # someone else could plant a file here: marshal must not read it
    (shared / f"knowledge-{KEY}{cache.SUFFIX}").write_bytes(marshal.dumps((cache.MAGIC, KEY, {"planted": 1})))
    assert cache.read("knowledge-", KEY) is cache.MISSING
    assert not cache.write("knowledge-", KEY, {"kept": True})


def test_an_explicit_folder_is_taken_as_it_is(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "file"))
    monkeypatch.setattr(cache.tempfile, "tempdir", str(tmp_path))
    assert cache.folder() == str(tmp_path / "file")
    assert not cache.write("x-", KEY, 1) and not list(tmp_path.glob("npu-graph-skill-*"))


def test_a_files_key_changes_with_the_file_and_the_salt(tmp_path):
    shipped = tmp_path / "index.json"
    shipped.write_text("[1]")
    key = cache.files_key([str(shipped)], "a")
    assert key == cache.files_key([str(shipped), str(tmp_path / "absent")], "a")  # a missing file is skipped
    assert key != cache.files_key([str(shipped)], "b")
    shipped.write_text("[1, 2]")  # another size (and time): another state
    assert key != cache.files_key([str(shipped)], "a")
