"""The on-disk index of a source tree: every file's functions and message sites.

One JSON file per (tree, version) in the user cache directory
(`$NPU_GRAPH_CACHE_DIR`, else `$XDG_CACHE_HOME/npu-graph-skill/code-index`, else
`~/.cache/npu-graph-skill/code-index`). Each file entry keeps the mtime and size it was scanned
at, so a load re-stats the tree (a few milliseconds) and re-scans only what changed; a new
version (another commit) starts from the newest index of the same tree, so switching branches
re-scans only the files git touched. Writes are atomic (temp file + rename); an unwritable cache
directory only costs the speed-up.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from npu_graph_skill.core import cache
from npu_graph_skill.core.files import atomic_write
from npu_graph_skill.expert.source_model import FunctionDef, Site, file_entry, fill_parameters
from npu_graph_skill.expert.source_tree import MAX_FILE_BYTES, SourceTree, language_of

SCHEMA = "npu-graph-skill/code-index/6"
SCANNER_FILES = ("source_cpp.py", "source_python.py", "source_model.py")
KEEP_PER_TREE = 3  # older indexes of the same tree are removed


_SCANNER_KEY: Optional[str] = None


def scanner_key() -> str:
    """A digest of the scanners' own code: an index written by another scanner version is rescanned."""
    global _SCANNER_KEY
    if _SCANNER_KEY is None:
        digest = hashlib.sha1(SCHEMA.encode())
        here = os.path.dirname(os.path.abspath(__file__))
        for name in SCANNER_FILES:
            try:
                with open(os.path.join(here, name), "rb") as handle:
                    digest.update(handle.read())
            except OSError:  # inside a zip archive: the package version stands in
                from npu_graph_skill import __version__

                digest.update(__version__.encode())
        _SCANNER_KEY = digest.hexdigest()[:16]
    return _SCANNER_KEY


def cache_dir(environ: Optional[Dict[str, str]] = None) -> str:
    return os.path.join(cache.location(environ), "code-index")


def _tree_key(tree: SourceTree) -> str:
    digest = hashlib.sha1(tree.root.encode("utf-8", "replace")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", os.path.basename(tree.root) or "root")[:40]
    return f"{name}-{digest}"


def cache_path(tree: SourceTree, directory: Optional[str] = None) -> str:
    version = re.sub(r"[^A-Za-z0-9._+-]+", "_", tree.version)[:60]
    return os.path.join(directory or cache_dir(), f"{_tree_key(tree)}--{version}.json")


def read_source(path: str) -> Tuple[Optional[str], str]:
    """(text, problem): UTF-8 (BOM tolerated), else Latin-1; binary or huge files are skipped."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    if len(data) > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, skipped"
    if b"\x00" in data[:8192]:
        return None, "binary, skipped"
    try:
        return data.decode("utf-8-sig"), ""
    except UnicodeDecodeError:
        return data.decode("latin-1"), ""


def scan_file(full_path: str, lang: str) -> Dict[str, Any]:
    """One file's index entry. Never raises: a scanner failure is recorded on the entry."""
    text, problem = read_source(full_path)
    if text is None:
        return file_entry(lang, [], [], problem)
    try:
        if lang == "py":
            from npu_graph_skill.expert.source_python import scan_python

            functions, sites, error, calls = scan_python(text)
        else:
            from npu_graph_skill.expert.source_cpp import scan_cpp

            functions, sites, calls = scan_cpp(text)
            error = ""
    except RecursionError:
        return file_entry(lang, [], [], "nesting too deep to scan")
    except Exception as exc:  # noqa: BLE001 - one odd file must not stop the index
        return file_entry(lang, [], [], f"scanner failed: {exc.__class__.__name__}: {exc}")
    return file_entry(lang, functions, sites, error, calls)


def scan_text(text: str, path: str) -> List[FunctionDef]:
    """The functions of a text that is not in the tree (a file at another version)."""
    lang = language_of(path)
    try:
        if lang == "py":
            from npu_graph_skill.expert.source_python import scan_python

            return scan_python(text)[0]
        if lang == "cpp":
            from npu_graph_skill.expert.source_cpp import scan_cpp

            return scan_cpp(text)[0]
    except (RecursionError, ValueError):
        pass
    return []


def scan_text_sites(text: str, path: str) -> List[Site]:
    """The message sites of a text that is not in the tree (a file at another version)."""
    lang = language_of(path)
    try:
        if lang == "py":
            from npu_graph_skill.expert.source_python import scan_python

            return scan_python(text)[1]
        if lang == "cpp":
            from npu_graph_skill.expert.source_cpp import scan_cpp

            return scan_cpp(text)[1]
    except (RecursionError, ValueError):
        pass
    return []


class SourceIndex:
    """Functions and sites of one tree, with the load/build statistics."""

    def __init__(self, tree: SourceTree, files: Dict[str, Dict[str, Any]]) -> None:
        self.tree = tree
        self.files = files
        self.stats: Dict[str, Any] = {}
        self._names: Optional[Dict[str, List[str]]] = None
        self._sites: Optional[List[Tuple[str, Site]]] = None
        self._basenames: Optional[Dict[str, List[str]]] = None
        self._by_path: Optional[Dict[str, List[Site]]] = None

    # -- rows, decoded on first use -------------------------------------------------------------
    def rows(self, path: str, key: str) -> list:
        """A file's `functions`, `sites` or `calls` rows (kept JSON-encoded until asked for)."""
        entry = self.files.get(path)
        return entry_rows(entry, key) if entry else []

    # -- queries ------------------------------------------------------------------------------
    def functions(self, path: str) -> List[FunctionDef]:
        return [FunctionDef.from_row(r) for r in self.rows(path, "functions")]

    def sites_in(self, path: str) -> List[Site]:
        return [Site.from_row(r) for r in self.rows(path, "sites")]

    def all_sites(self) -> List[Tuple[str, Site]]:
        """Every site, plus one per call of a raising helper with a literal message
        (`assertNotCapturing("Cannot construct a new NPUGeneratorImpl")` raises the helper's
        TORCH_CHECK with that text in front)."""
        if self._sites is None:
            sites = [(path, Site.from_row(row)) for path in self.files for row in self.rows(path, "sites")]
            self._sites = sites + self._caller_sites(sites)
        return self._sites

    def _caller_sites(self, sites: List[Tuple[str, Site]]) -> List[Tuple[str, Site]]:
        helpers: Dict[str, List[Tuple[str, Site]]] = {}
        for path, site in sites:
            if site.forward:
                helpers.setdefault(re.split(r"::|\.", site.function)[-1], []).append((path, site))
        derived: List[Tuple[str, Site]] = []
        if not helpers:
            return derived
        for path in self.files:
            for callee, line, literals in self.rows(path, "calls"):
                for helper_path, helper in helpers.get(re.split(r"::|\.", callee)[-1], ()):
                    names = helper.forward.split(",")
                    pieces = fill_parameters(helper.pieces, names, literals)
                    if pieces == helper.pieces:
                        continue
                    fn = self.enclosing(path, line)
                    derived.append((path, Site(
                        line=line, end_line=line, message_line=line, kind=helper.kind, call=callee, pieces=pieces,
                        error_code=helper.error_code, condition=helper.condition, function=fn.qualname if fn else "",
                        via=f"{helper_path}:{helper.line}")))
        return derived

    def sites_at(self, path: str) -> List[Site]:
        """The sites of one file, callers of raising helpers included."""
        if self._by_path is None:
            table: Dict[str, List[Site]] = {}
            for site_path, site in self.all_sites():
                table.setdefault(site_path, []).append(site)
            self._by_path = table
        return self._by_path.get(path, [])

    def names(self) -> Dict[str, List[str]]:
        """Short name of every function/class → the files that define one."""
        if self._names is None:
            table: Dict[str, List[str]] = {}
            for path, entry in self.files.items():
                for name in entry_names(entry):
                    table.setdefault(name, []).append(path)
            self._names = table
        return self._names

    def named(self, name: str) -> List[Tuple[str, list]]:
        """[(path, function row)] of the definitions whose short name is `name`."""
        return [(path, row) for path in self.names().get(name, ()) for row in self.rows(path, "functions")
                if row[1] == name]

    def enclosing(self, path: str, line: int, classes: bool = False) -> Optional[FunctionDef]:
        """The innermost function (or class, if asked) whose range holds `line`."""
        best = None
        for fn in self.functions(path):
            if fn.kind == "class" and not classes:
                continue
            if fn.start <= line <= fn.end and (best is None or (fn.start, -fn.end) >= (best.start, -best.end)):
                best = fn
        return best

    def resolve_path(self, name: str) -> List[str]:
        """Index paths equal to `name` or ending with it at a `/` boundary (`NPUGraph.cpp`,
        `npu/graphs.py`, an absolute path from a traceback)."""
        name = name.replace("\\", "/").strip()
        if name in self.files:
            return [name]
        if self._basenames is None:
            table: Dict[str, List[str]] = {}
            for path in self.files:
                table.setdefault(path.rsplit("/", 1)[-1], []).append(path)
            self._basenames = table
        candidates = self._basenames.get(name.rsplit("/", 1)[-1], [])
        matches = [p for p in candidates if name.endswith("/" + p) or p.endswith("/" + name.lstrip("./")) or p == name.lstrip("./")]
        if matches:
            # the longest common suffix wins: /usr/lib/.../torch_npu/npu/graphs.py → torch_npu/npu/graphs.py
            best = max(len(_common_suffix(p, name)) for p in matches)
            return sorted(p for p in matches if len(_common_suffix(p, name)) == best)
        return []

    def read_lines(self, path: str) -> List[str]:
        text, problem = read_source(os.path.join(self.tree.root, path))
        return text.splitlines() if text is not None else []

    def counts(self) -> Dict[str, int]:
        py = sum(1 for e in self.files.values() if e["lang"] == "py")
        totals = [0, 0, 0]
        for entry in self.files.values():
            for i, n in enumerate(entry_counts(entry)):
                totals[i] += n
        return {
            "files": len(self.files), "python_files": py, "cpp_files": len(self.files) - py,
            "functions": totals[0], "classes": totals[1], "sites": totals[2],
            "files_with_problems": sum(1 for e in self.files.values() if e.get("error")),
        }

    def problems(self, limit: int = 10) -> List[str]:
        return [f"{p}: {e['error']}" for p, e in sorted(self.files.items()) if e.get("error")][:limit]


# An entry holds its rows JSON-encoded on disk ("f", "s", "c" strings) and decoded in memory
# ("functions", "sites", "calls" lists) once asked for: loading the cache then parses ~2,000 strings
# instead of ~50,000 small lists, and a lookup decodes only the files it needs.
ENCODED = {"functions": "f", "sites": "s", "calls": "c"}


def entry_rows(entry: Dict[str, Any], key: str) -> list:
    rows = entry.get(key)
    if rows is None:
        encoded = entry.get(ENCODED[key])
        rows = json.loads(encoded) if encoded else []
        entry[key] = rows
    return rows


def entry_names(entry: Dict[str, Any]) -> List[str]:
    if "n" not in entry:
        entry["n"] = "\n".join(sorted({row[1] for row in entry_rows(entry, "functions")}))
    return entry["n"].split("\n") if entry["n"] else []


def entry_counts(entry: Dict[str, Any]) -> List[int]:
    """[functions, classes, sites] of a file."""
    if "k" not in entry:
        functions = entry_rows(entry, "functions")
        classes = sum(1 for r in functions if r[5] == "class")
        entry["k"] = [len(functions) - classes, classes, len(entry_rows(entry, "sites"))]
    return entry["k"]


def _encoded(entry: Dict[str, Any]) -> Dict[str, Any]:
    """The on-disk form of an entry: rows as JSON strings, names and counts precomputed."""
    out = {k: v for k, v in entry.items() if k not in ENCODED}
    for key, short in ENCODED.items():
        if key in entry:
            out[short] = json.dumps(entry[key], ensure_ascii=False, separators=(",", ":"))
    out["n"] = "\n".join(entry_names(entry))
    out["k"] = entry_counts(entry)
    return out


def _common_suffix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return a[len(a) - n:]


# -- build, load, save -----------------------------------------------------------------------------

_MEMO: Dict[Tuple[str, str], SourceIndex] = {}


def load_index(tree: SourceTree, rebuild: bool = False, directory: Optional[str] = None,
               progress: Optional[Callable[[int, int], None]] = None) -> SourceIndex:
    """The index of `tree`, from the cache where it is fresh, scanning what changed."""
    started = time.perf_counter()
    directory = directory or cache_dir()
    path = cache_path(tree, directory)
    notes: List[str] = []
    seed: Dict[str, Dict[str, Any]] = {}
    source = "none"
    memo = _MEMO.get((tree.root, tree.version))
    if memo is not None and not rebuild:
        seed, source = memo.files, "memory"
    elif not rebuild:
        seed, source = _read_cache(path, tree, notes), "cache"
        if not seed:
            seed, source = _newest_sibling(tree, directory, path, notes), "older-version"
    loaded_at = time.perf_counter()

    files: Dict[str, Dict[str, Any]] = {}
    changed: List[Tuple[str, str]] = []
    for rel, lang, st in tree.walk():
        old = seed.get(rel)
        if old is not None and old.get("mtime") == st.st_mtime_ns and old.get("size") == st.st_size:
            files[rel] = old
        else:
            changed.append((rel, lang))
            files[rel] = {"mtime": st.st_mtime_ns, "size": st.st_size}
    removed = len(set(seed) - set(files))
    walked_at = time.perf_counter()
    for number, (rel, entry) in enumerate(_scan_many(tree.root, changed), 1):
        entry.update(files[rel])
        files[rel] = entry
        if progress is not None:
            progress(number, len(changed))
    scanned_at = time.perf_counter()

    if memo is not None and source == "memory" and not changed and not removed:
        index = memo  # unchanged: keep its lookup tables
    else:
        index = SourceIndex(tree, files)
    written = False
    if changed or removed or source != "cache":
        if source == "memory" and not changed and not removed:
            written = True  # already saved by the run that scanned it
        else:
            written = _write_cache(path, tree, files, scanned_at - walked_at, notes)
            _prune(tree, directory, keep=path)
    _MEMO[(tree.root, tree.version)] = index
    index.stats = {
        "source": source if seed else "scan",
        "scanned_files": len(changed), "reused_files": len(files) - len(changed), "removed_files": removed,
        "load_seconds": round(loaded_at - started, 4), "walk_seconds": round(walked_at - loaded_at, 4),
        "scan_seconds": round(scanned_at - walked_at, 4), "total_seconds": round(time.perf_counter() - started, 4),
        "cache_path": path, "cache_bytes": _size(path), "cache_written": written or source == "cache",
        "notes": notes,
    }
    return index


def _scan_many(root: str, changed: List[Tuple[str, str]]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Scan files, in worker processes when there are many files and several cores (a first
    index of a full checkout), else in this process."""
    workers = min(8, (os.cpu_count() or 1) - 1)
    if len(changed) >= 200 and workers >= 2:
        try:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=workers) as pool:
                paths = [os.path.join(root, rel) for rel, _lang in changed]
                langs = [lang for _rel, lang in changed]
                for (rel, _lang), entry in zip(changed, pool.map(scan_file, paths, langs, chunksize=16)):
                    yield rel, entry
            return
        except (OSError, RuntimeError, ImportError, NotImplementedError):
            pass  # no worker processes here (sandbox, no /dev/shm): scan in this process
    for rel, lang in changed:
        yield rel, scan_file(os.path.join(root, rel), lang)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _read_cache(path: str, tree: SourceTree, notes: List[str]) -> Dict[str, Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        notes.append(f"ignored an unreadable index cache ({exc.__class__.__name__}); rebuilt it")
        return {}
    if (not isinstance(data, dict) or data.get("schema") != SCHEMA or data.get("scanner") != scanner_key()
            or data.get("root") != tree.root):
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def _newest_sibling(tree: SourceTree, directory: str, exclude: str, notes: List[str]) -> Dict[str, Dict[str, Any]]:
    prefix = _tree_key(tree) + "--"
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix) and n.endswith(".json")]
    except OSError:
        return {}
    paths = sorted((os.path.join(directory, n) for n in names if os.path.join(directory, n) != exclude),
                   key=_mtime, reverse=True)
    for candidate in paths[:1]:
        files = _read_cache(candidate, tree, notes)
        if files:
            return files
    return {}


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def _write_cache(path: str, tree: SourceTree, files: Dict[str, Dict[str, Any]], scan_seconds: float,
                 notes: List[str]) -> bool:
    data = {
        "schema": SCHEMA, "scanner": scanner_key(), "root": tree.root, "kind": tree.kind, "version": tree.version, "label": tree.label,
        "repo": tree.repo, "written": time.strftime("%Y-%m-%dT%H:%M:%S"), "scan_seconds": round(scan_seconds, 3),
        "files": {rel: _encoded(entry) for rel, entry in files.items()},
    }
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        atomic_write(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")), durable=False)
        return True
    except (OSError, TypeError, ValueError) as exc:
        notes.append(f"index not cached ({directory}: {getattr(exc, 'strerror', None) or exc}); "
                     "set NPU_GRAPH_CACHE_DIR to a writable directory to keep it")
        return False


def _prune(tree: SourceTree, directory: str, keep: str) -> None:
    prefix = _tree_key(tree) + "--"
    try:
        paths = [os.path.join(directory, n) for n in os.listdir(directory) if n.startswith(prefix) and n.endswith(".json")]
    except OSError:
        return
    for old in sorted((p for p in paths if p != keep), key=_mtime, reverse=True)[KEEP_PER_TREE - 1:]:
        try:
            os.unlink(old)
        except OSError:
            pass
