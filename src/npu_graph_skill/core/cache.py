"""The user's cache folder: what a process computed from the shipped files (the parsed knowledge, the
search indexes, the reference index), kept for the next process.

One file per kind and state, `<prefix><key>-py<X><Y>.marshal`: marshal reads these three to four times
faster than JSON (start-up is most of a diagnosis), and its format belongs to one Python version, hence
the tag in the name. Each file holds (MAGIC, key, data); anything else read back, a damaged or
truncated file, or a folder that cannot be written just means the data is computed again. Writing a
state drops the older states of the same prefix. The folder is $NPU_GRAPH_CACHE_DIR, else
$XDG_CACHE_HOME/npu-graph-skill, else ~/.cache/npu-graph-skill; where that default cannot be written
(a read-only home, as in a container with a read-only root file system) a private folder in the
system's temporary directory (`npu-graph-skill-<uid>`) stands in, else every diagnosis would rebuild
the indexes (about 4.5 times the start-up). NPU_GRAPH_NO_CACHE=1 or an empty NPU_GRAPH_CACHE_DIR turns
caching off. The folder is the user's own: marshal is not meant for untrusted bytes, so the stand-in
is used only when it is a directory this user owns that no one else can write to.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import os
import stat
import sys
import tempfile
from typing import Any, Dict, Iterable, Optional

from npu_graph_skill.core.files import atomic_write

MAGIC = "npu-graph-skill/cache/1"
SUFFIX = f"-py{sys.version_info[0]}{sys.version_info[1]}.marshal"
MISSING = object()  # read()'s answer when there is nothing usable (None is valid data)


def location(environ: Optional[Dict[str, str]] = None) -> str:
    """Where the cache lives (also the default home of the code index), whether or not it is on."""
    env = os.environ if environ is None else environ
    explicit = env.get("NPU_GRAPH_CACHE_DIR", "").strip()
    if explicit:
        return os.path.expanduser(explicit)
    base = env.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "npu-graph-skill")


_FOLDER: Dict[tuple, str] = {}  # the folder chosen for an environment, decided once a process


def folder() -> str:
    """Where this process keeps its files: `location()`, or the private stand-in when the default
    location cannot be written (an explicit NPU_GRAPH_CACHE_DIR is taken as it is)."""
    key = tuple(os.environ.get(name) for name in ("NPU_GRAPH_CACHE_DIR", "XDG_CACHE_HOME", "HOME"))
    if key not in _FOLDER:
        preferred = location()
        chosen = preferred
        if not os.environ.get("NPU_GRAPH_CACHE_DIR", "").strip() and not _writable(preferred):
            stand_in = os.path.join(tempfile.gettempdir(), f"npu-graph-skill-{_uid()}")
            if _private(stand_in):
                chosen = stand_in
        _FOLDER[key] = chosen
    return _FOLDER[key]


def _uid() -> str:
    getuid = getattr(os, "getuid", None)
    return str(getuid()) if getuid else os.environ.get("USERNAME", "user")


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK)


def _private(path: str) -> bool:
    """A directory of this user's that no one else may write to (created so when missing)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and owner_ok and not info.st_mode & 0o022


def enabled() -> bool:
    if os.environ.get("NPU_GRAPH_NO_CACHE", "").strip().lower() in ("1", "true", "yes"):
        return False
    return os.environ.get("NPU_GRAPH_CACHE_DIR") != ""


def path(prefix: str, key: str) -> str:
    return os.path.join(folder(), f"{prefix}{key}{SUFFIX}")


def read(prefix: str, key: str) -> Any:
    """The data written for (prefix, key) by this Python version, or MISSING."""
    if not enabled():
        return MISSING
    try:
        with open(path(prefix, key), "rb") as handle:
            stored = marshal.loads(handle.read())  # marshal.load(handle) reads in small pieces: slower
    except (OSError, EOFError, ValueError, TypeError):
        return MISSING  # none yet, damaged, truncated
    if isinstance(stored, tuple) and len(stored) == 3 and stored[0] == MAGIC and stored[1] == key:
        return stored[2]
    return MISSING


def write(prefix: str, key: str, data: Any) -> bool:
    """Keep `data` for (prefix, key: a hex digest) and drop the other states of `prefix`. False when
    it could not be kept (turned off, unwritable folder, full disk, data marshal cannot hold)."""
    if not enabled():
        return False
    target = path(prefix, key)
    try:
        payload = marshal.dumps((MAGIC, key, data))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        atomic_write(target, payload, durable=False)
        for other in os.listdir(os.path.dirname(target)):
            if other != os.path.basename(target) and _older_state(other, prefix):
                os.unlink(os.path.join(os.path.dirname(target), other))
    except (OSError, ValueError):
        return False
    return True


def _older_state(name: str, prefix: str) -> bool:
    """`name` is another state of `prefix` itself: a marshal file of any Python version, or the JSON file
    of releases before this cache, and not a file of a longer prefix that starts with it (keys are hex
    digests, so "knowledge-" never sweeps away a "knowledge-index-...")."""
    if not name.startswith(prefix):
        return False
    stem = name[len(prefix):]
    if stem.endswith(".marshal"):
        key = stem.split("-py", 1)[0]
    elif stem.endswith(".json"):
        key = stem[:-len(".json")]
    else:
        return False
    return bool(key) and all(char in "0123456789abcdef" for char in key)


def files_key(paths: Iterable[str], salt: str = "") -> str:
    """A hex key of (path, mtime, size) of the files (missing ones skipped) and `salt` (what turns them
    into the cached data): the data stays valid while these stand."""
    stamps = []
    for name in paths:
        try:
            st = os.stat(name)
        except OSError:
            continue
        stamps.append((name, st.st_mtime_ns, st.st_size))
    return hashlib.sha1(repr((salt, tuple(stamps))).encode("utf-8", "replace")).hexdigest()[:16]


def shipped_json(file: str, prefix: str) -> Any:
    """The parsed JSON file `file` shipped with the package, from the cache when it holds this file's
    state: marshal loads the reference index in about a third of JSON's time. Else parsed and kept."""
    key = files_key([file], "shipped-json")
    data = read(prefix, key)
    if data is MISSING:
        with open(file, encoding="utf-8") as handle:
            data = json.load(handle)
        write(prefix, key, data)
    return data
