"""The on-disk copy of `ask`'s knowledge index, so that a fresh `npu-graph ask` skips loading and
tokenizing the whole knowledge base (about two thirds of its run time); Gate 0's routing index
(`skill/route_knowledge.py`) and the patterns' part of this index that a diagnosis searches
(`diagnose/causes.py`) are kept the same way under their own prefixes, and the reference index of
public reports (`diagnose/reference.py`) as a marshal copy of the shipped JSON.

One JSON file per knowledge state under $NPU_GRAPH_CACHE_DIR (default ~/.cache/npu-graph-skill),
keyed by a digest of the knowledge files and the indexing code; written atomically; any problem
(unwritable directory, damaged file, another version) just means the index is built in memory.
NPU_GRAPH_NO_CACHE=1 turns it off.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import os
import sys
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from npu_graph_skill.core.files import atomic_write

SCHEMA = "npu-graph-skill/ask-index/1"
PREFIX = "ask-index-"


def cache_dir(environ: Optional[Dict[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    explicit = env.get("NPU_GRAPH_CACHE_DIR", "").strip()
    if explicit:
        return os.path.expanduser(explicit)
    base = env.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "npu-graph-skill")


def digest(stamps: Iterable[Any]) -> str:
    return hashlib.sha1(repr((SCHEMA, tuple(stamps))).encode("utf-8", "replace")).hexdigest()[:16]


def files_digest(paths: Iterable[str]) -> str:
    """A digest of (path, mtime, size) of the files an index is made from (missing ones are skipped)."""
    stamps = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        stamps.append((path, st.st_mtime_ns, st.st_size))
    return digest(stamps)


def knowledge_key() -> str:
    """The key of `ask`'s index: a digest of (path, mtime, size) of every shipped knowledge file and of
    the code that turns them into an index; the index (in memory or on disk) is valid while these stand."""
    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(here)
    paths = [os.path.join(here, name) for name in ("ask.py", "retrieval.py")]
    for dirpath, dirnames, filenames in os.walk(os.path.join(package, "knowledge")):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")))
        paths.extend(os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith((".md", ".yaml", ".yml", ".csv", ".json", ".py")))
    return files_digest(paths)


def _enabled() -> bool:
    return os.environ.get("NPU_GRAPH_NO_CACHE", "").strip() not in ("1", "true", "yes")


def load(key: str, prefix: str = PREFIX) -> Optional[Dict[str, Any]]:
    if not _enabled():
        return None
    try:
        with open(os.path.join(cache_dir(), f"{prefix}{key}.json"), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == SCHEMA and data.get("key") == key else None


def save(key: str, data: Dict[str, Any], prefix: str = PREFIX) -> None:
    """Write the index for `key` and drop the copies of older knowledge states (of the same `prefix`:
    `ask`'s index, Gate 0's routing index)."""
    payload = json.dumps({"schema": SCHEMA, "key": key, **data}, ensure_ascii=False, separators=(",", ":"))
    _replace(prefix, f"{prefix}{key}.json", payload.encode("utf-8"))


def _replace(prefix: str, name: str, payload: bytes) -> None:
    """Put `name` in the cache and drop the other files of its prefix and kind (older states)."""
    if not _enabled():
        return
    folder = cache_dir()
    kind = os.path.splitext(name)[1]
    try:
        os.makedirs(folder, exist_ok=True)
        atomic_write(os.path.join(folder, name), payload, durable=False)
        for other in os.listdir(folder):
            if other.startswith(prefix) and other.endswith(kind) and other != name:
                os.unlink(os.path.join(folder, other))
    except OSError:
        pass  # a read-only home or a full disk: answer from memory


def shipped_json(path: str, prefix: str) -> Any:
    """The parsed JSON file `path` (data shipped with the package), read from a marshal copy in the cache
    when there is one for this file (path, mtime, size) and this Python: marshal loads the reference
    index in about a third of JSON's time. Else parsed, and the copy written for the next process."""
    key = f"{files_digest([path])}-py{sys.version_info[0]}{sys.version_info[1]}"
    name = f"{prefix}{key}.marshal"
    if _enabled():
        try:
            with open(os.path.join(cache_dir(), name), "rb") as handle:
                return marshal.loads(handle.read())  # load(handle) reads in small pieces: slower than JSON
        except (OSError, EOFError, ValueError, TypeError):
            pass  # none yet, damaged or of another version: parsed again below
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    _replace(prefix, name, marshal.dumps(data))
    return data


def bm25_index(key: str, prefix: str, build: Callable[[], Tuple[Any, bool]]) -> Any:
    """The BM25 index kept under `prefix` for `key`: read back from the disk, else made by `build`
    (which says whether it is complete) and, when complete, written for the next process."""
    from npu_graph_skill.expert.retrieval import BM25Index

    cached = load(key, prefix=prefix)
    if cached:
        try:
            return BM25Index.from_state(cached["bm25"])
        except (KeyError, TypeError, ValueError):
            pass  # damaged or of another version: made again
    index, complete = build()
    if complete:
        save(key, {"bm25": index.state()}, prefix=prefix)
    return index
