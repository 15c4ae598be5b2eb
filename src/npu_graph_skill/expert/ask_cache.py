"""The on-disk copy of `ask`'s knowledge index, so that a fresh `npu-graph ask` skips loading and
tokenizing the whole knowledge base (about two thirds of its run time); Gate 0's routing index
(`skill/route_knowledge.py`) and the patterns' part of this index that a diagnosis searches
(`diagnose/causes.py`) are kept the same way under their own prefixes.

Kept in the user's cache folder (`core.cache`), keyed by a digest of the knowledge files and the
indexing code; any problem (unwritable directory, damaged file, another version) just means the index
is built in memory.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from npu_graph_skill.core import cache

SCHEMA = "npu-graph-skill/ask-index/1"
PREFIX = "ask-index-"


def files_digest(paths: Iterable[str]) -> str:
    """A key of (path, mtime, size) of the files an index is made from (missing ones are skipped)."""
    return cache.files_key(paths, SCHEMA)


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


def load(key: str, prefix: str = PREFIX) -> Optional[Dict[str, Any]]:
    data = cache.read(prefix, key)
    return data if isinstance(data, dict) else None


def save(key: str, data: Dict[str, Any], prefix: str = PREFIX) -> None:
    """Keep the index for `key` (and drop the copies of older knowledge states under `prefix`)."""
    cache.write(prefix, key, data)


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
