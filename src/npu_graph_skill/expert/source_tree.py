"""Which torch_npu source tree the user pointed at, and at which version.

Three kinds: a git checkout of Ascend/pytorch (Python + C++; version = the commit, read from
`.git` without running git when possible), an installed torch_npu package (`site-packages/torch_npu`
or the `site-packages` above it; its Python files; version from `torch_npu/version.py` or the
dist-info), or any other directory (version from file stamps only).
"""
from __future__ import annotations

import dataclasses
import glob
import os
import re
import subprocess
from typing import Dict, Iterator, Optional, Tuple

from npu_graph_skill.core.errors import InputError, UserError
from npu_graph_skill.core.model import Record

ENV_VAR = "NPU_GRAPH_SOURCE"
PY_SUFFIXES = (".py",)
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl", ".cuh")
SKIP_DIRS = {"build", "dist", "node_modules", "__pycache__", "site-packages"}
# Inside third_party only the graph-relevant sibling repositories are worth indexing.
THIRD_PARTY_KEEP = {"op-plugin", "torchair"}
MAX_FILE_BYTES = 4 * 1024 * 1024


@dataclasses.dataclass
class SourceTree(Record):
    root: str  # absolute; index paths are relative to it
    kind: str  # git | package | directory
    version: str  # the cache key part: a commit, a package version, or "unversioned"
    label: str  # for people: "master@9e73e708", "torch_npu 2.13.0 (git c798c653)"
    repo: str = ""  # Ascend/pytorch, Ascend/op-plugin ...
    include: Tuple[str, ...] = ()  # top-level directories to index; () = everything
    commit: str = ""  # full commit when known (git checkout, or a package's git_version)

    def walk(self) -> Iterator[Tuple[str, str, os.stat_result]]:
        """(relative path, language, stat) of every indexable file, sorted by directory."""
        tops = list(self.include) if self.include else [""]
        for top in tops:
            yield from _scan_dir(self.root, top)


def _scan_dir(root: str, rel_dir: str) -> Iterator[Tuple[str, str, os.stat_result]]:
    # os.scandir and string joins: this runs on every query (to spot changed files), so it stays lean
    try:
        entries = sorted(os.scandir(os.path.join(root, rel_dir) if rel_dir else root), key=lambda e: e.name)
    except OSError:
        return
    prefix = rel_dir + "/" if rel_dir else ""
    subdirs = []
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if _keep_dir(rel_dir, entry.name):
                subdirs.append(prefix + entry.name)
            continue
        lang = language_of(entry.name)
        if lang:
            try:
                yield prefix + entry.name, lang, entry.stat()
            except OSError:
                continue
    for sub in subdirs:
        yield from _scan_dir(root, sub)


def language_of(filename: str) -> str:
    lower = filename.lower()
    if lower.endswith(PY_SUFFIXES):
        return "py"
    if lower.endswith(CPP_SUFFIXES):
        return "cpp"
    return ""


def _keep_dir(rel_dir: str, name: str) -> bool:
    if name.startswith(".") or name in SKIP_DIRS or name.endswith((".egg-info", ".dist-info")):
        return False
    if rel_dir == "third_party" or rel_dir.endswith("/third_party"):
        return name in THIRD_PARTY_KEEP
    return True


def open_source_tree(source_dir: Optional[str] = None, environ: Optional[Dict[str, str]] = None) -> SourceTree:
    """The tree at `source_dir`, or at $NPU_GRAPH_SOURCE. Raises a one-line UserError otherwise."""
    env = os.environ if environ is None else environ
    path = source_dir or env.get(ENV_VAR, "").strip()
    if not path:
        raise UserError(
            "no torch_npu source given: pass --source DIR (a git checkout of Ascend/pytorch, or an installed "
            "torch_npu: python -c 'import torch_npu,os;print(os.path.dirname(torch_npu.__file__))') or set "
            f"{ENV_VAR}")
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(path):
        raise InputError(f"{path}: no such directory")
    if not os.path.isdir(path):
        raise InputError(f"{path}: is a file, expected a directory (a torch_npu checkout or package)")
    if not os.access(path, os.R_OK | os.X_OK):
        raise InputError(f"{path}: permission denied")
    git_root = _find_git_root(path)
    if git_root:
        return _git_tree(git_root)
    package = _package_root(path)
    if package and not _is_source_tree(package[0]):
        return _package_tree(*package)
    root = package[0] if package else path
    return SourceTree(root=root, kind="directory", version="unversioned", label=f"{os.path.basename(root)} (no version)",
                      repo="Ascend/pytorch" if os.path.isdir(os.path.join(root, "torch_npu")) else "")


def _is_source_tree(root: str) -> bool:
    """A source tree (a tarball, a checkout without .git) has the C++ sources; a package has not."""
    return os.path.isdir(os.path.join(root, "torch_npu", "csrc", "core"))


# -- git checkout ------------------------------------------------------------------------------

def _find_git_root(path: str) -> Optional[str]:
    """The checkout holding `path`: itself, or (for `pytorch/torch_npu/csrc`) the nearest parent
    with a .git that is a torch_npu checkout. A directory that is itself a tree root (it holds
    torch_npu/) is never widened to an unrelated repository around it."""
    if os.path.exists(os.path.join(path, ".git")):
        return path
    if os.path.isdir(os.path.join(path, "torch_npu")):
        return None
    current = path
    for _ in range(8):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
        if os.path.exists(os.path.join(current, ".git")):
            return current if os.path.isdir(os.path.join(current, "torch_npu")) else None
    return None


def _git_dir(root: str) -> str:
    dot_git = os.path.join(root, ".git")
    if os.path.isfile(dot_git):  # a worktree or submodule: `gitdir: <path>`
        try:
            with open(dot_git, encoding="utf-8", errors="replace") as handle:
                m = re.match(r"gitdir:\s*(.+)", handle.read().strip())
        except OSError:
            m = None
        if m:
            target = m.group(1).strip()
            return target if os.path.isabs(target) else os.path.normpath(os.path.join(root, target))
    return dot_git


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def read_git_head(root: str) -> Tuple[str, str]:
    """(commit, branch) of a checkout, from .git files; `git rev-parse` only as a last resort."""
    git_dir = _git_dir(root)
    common = git_dir
    commondir = _read(os.path.join(git_dir, "commondir")).strip()
    if commondir:
        common = os.path.normpath(os.path.join(git_dir, commondir))
    head = _read(os.path.join(git_dir, "HEAD")).strip()
    if re.fullmatch(r"[0-9a-f]{40}", head):
        return head, ""
    m = re.match(r"ref:\s*(\S+)", head)
    if m:
        ref = m.group(1)
        branch = ref.rsplit("/", 1)[-1] if ref.startswith("refs/heads/") else ref
        for base in (git_dir, common):
            value = _read(os.path.join(base, ref)).strip()
            if re.fullmatch(r"[0-9a-f]{40}", value):
                return value, branch
        for line in _read(os.path.join(common, "packed-refs")).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref and re.fullmatch(r"[0-9a-f]{40}", parts[0]):
                return parts[0], branch
        commit = _git_rev_parse(root)
        return commit, branch
    return _git_rev_parse(root), ""


def _git_rev_parse(root: str) -> str:
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    value = out.stdout.strip()
    return value if re.fullmatch(r"[0-9a-f]{40}", value) else ""


def _repo_of_checkout(root: str) -> str:
    config = _read(os.path.join(_git_dir(root), "config"))
    common = _read(os.path.join(_git_dir(root), "commondir")).strip()
    if common:
        config += _read(os.path.join(os.path.normpath(os.path.join(_git_dir(root), common)), "config"))
    urls = " ".join(re.findall(r"url\s*=\s*(\S+)", config)).lower()
    if "op-plugin" in urls or os.path.isdir(os.path.join(root, "op_plugin")):
        return "Ascend/op-plugin"
    if "torchair" in urls:
        return "Ascend/torchair"
    if os.path.isdir(os.path.join(root, "torch_npu")) or "pytorch" in urls:
        return "Ascend/pytorch"
    return ""


def _git_tree(root: str) -> SourceTree:
    commit, branch = read_git_head(root)
    short = commit[:8] if commit else "unknown"
    label = f"{branch}@{short}" if branch else f"detached@{short}"
    return SourceTree(root=root, kind="git", version=commit or "unknown-commit", label=label,
                      repo=_repo_of_checkout(root), commit=commit)


# -- installed package -------------------------------------------------------------------------

def _package_root(path: str) -> Optional[Tuple[str, str]]:
    """(root, package dir name) when `path` is an installed torch_npu or the directory holding it."""
    if os.path.basename(path.rstrip(os.sep)) == "torch_npu" and os.path.isfile(os.path.join(path, "__init__.py")):
        return os.path.dirname(path.rstrip(os.sep)), "torch_npu"
    if os.path.isfile(os.path.join(path, "torch_npu", "__init__.py")):
        return path, "torch_npu"
    return None


def package_version(root: str, package: str = "torch_npu") -> Tuple[str, str]:
    """(version, git commit) from version.py, else from the dist-info METADATA."""
    text = _read(os.path.join(root, package, "version.py"))
    version = _assigned(text, "__version__")
    commit = _assigned(text, "git_version")
    if not version:
        for meta in sorted(glob.glob(os.path.join(root, f"{package.replace('_', '[-_]')}-*.dist-info", "METADATA"))):
            m = re.search(r"^Version:\s*(\S+)", _read(meta), re.M)
            if m:
                version = m.group(1)
                break
    return version, commit if re.fullmatch(r"[0-9a-f]{7,40}", commit or "") else ""


def _assigned(text: str, name: str) -> str:
    m = re.search(rf"^{name}\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return m.group(1) if m else ""


def _package_tree(root: str, package: str) -> SourceTree:
    version, commit = package_version(root, package)
    label = f"{package} {version or '(unknown version)'}" + (f" (git {commit[:8]})" if commit else "")
    key = (version or "unknown") + (f"+{commit[:12]}" if commit else "")
    return SourceTree(root=root, kind="package", version=key, label=label, repo="Ascend/pytorch",
                      include=(package,), commit=commit)


def describe(tree: SourceTree) -> Dict[str, str]:
    return {"root": tree.root, "kind": tree.kind, "version": tree.version, "label": tree.label, "repo": tree.repo}
