"""`npu-graph code verify-anchors`: do the knowledge base's file:line anchors still point at what
they meant, in this tree?

Anchors come from the knowledge files shipped with the package (or a directory given with
`--kb`): `patterns/*.yaml` and `constraints.yaml` (`anchors:` lists), `concepts/*.md` (frontmatter
`anchors:`, with an optional `symbol:`), and `messages.csv` (each row's raise site: file, line,
function and message). They are read as data, so a half-written knowledge entry is reported, not
fatal.

For each anchor, what it meant is taken from the best evidence at hand:
- the message (messages.csv rows): the site raising it must be at the anchored line;
- the anchored lines' text at the anchor's version, from `git show <commit>:<path>` when the tree
  is a git checkout that holds that commit: the same lines must still exist (found again, the
  new line is reported);
- the function (`symbol:` or the row's `function`): it must still exist and still hold the lines.
Statuses: ok, moved (same text/message, other lines), changed (the text or message is gone from
the file), vanished (the function is gone), missing_file, wrong (at the very version the anchor
names, its lines do not hold what it says), unverified (nothing to compare against: a package
without history), skipped (another repository, or C++ anchors in an installed package).
"""
from __future__ import annotations

import csv
import dataclasses
import glob
import os
import re
import subprocess
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.model import Record
from npu_graph_skill.expert.source_index import SourceIndex
from npu_graph_skill.expert.source_match import SiteMatcher, similarity
from npu_graph_skill.expert.source_model import FunctionDef, example_pieces
from npu_graph_skill.expert.source_tree import describe

DRIFT = ("moved", "changed", "vanished", "missing_file", "wrong")
STATUSES = ("ok",) + DRIFT + ("unverified", "skipped")
# messages.csv rows without a version column were read at Ascend/pytorch master 9e73e708
# (shared/reference/torch_npu_graph_facts.md, scope and section (k)).
MESSAGES_DEFAULT_VERSION = "master@9e73e708"
MESSAGES_TAG_VERSION = "v7.3.0-pytorch2.9.0"
LINE_RE = re.compile(r"^\s*(\d+)(?:\s*-\s*(\d+))?\s*$")
MIN_BLOCK_CHARS = 20  # anchored text shorter than this is too common to find again
FRONTMATTER_RE = re.compile(r"^---[ \t]*\n(.*?)\n---[ \t]*(?:\n|$)", re.S)


@dataclasses.dataclass
class AnchorSpec(Record):
    origin: str  # "pattern P-CAP-003", "concept capture-begin", "message M-090"
    repo: str
    path: str
    line: str
    version: str
    note: str = ""
    symbol: str = ""  # the function the lines belong to, when known
    message: str = ""  # the message raised at the line (messages.csv)
    line_is_message: bool = False  # `line` is where the literal starts, not the statement
    message_line: int = 0  # where the literal starts, when `line` is the statement


@dataclasses.dataclass
class AnchorCheck(Record):
    origin: str
    anchor: str  # repo path:line@version
    status: str
    current: str  # path:lines in this tree, when found
    function: str  # the function holding the lines in this tree
    detail: Dict[str, str]  # {"en", "zh"}


@dataclasses.dataclass
class AnchorReport(Record):
    tree: Dict[str, str]
    summary: Dict[str, int]
    checks: List[AnchorCheck]
    sources: List[str]
    notes: List[str] = dataclasses.field(default_factory=list)
    schema: str = "npu-graph-skill/code-verify-anchors/1"

    @property
    def drift(self) -> int:
        return sum(self.summary.get(s, 0) for s in DRIFT)


# --------------------------------------------------------------------------------------------
# Reading anchors
# --------------------------------------------------------------------------------------------

def default_kb_dir() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "knowledge")


def _anchor_specs(origin: str, anchors: Any) -> List[AnchorSpec]:
    specs = []
    for anchor in anchors if isinstance(anchors, list) else []:
        if not isinstance(anchor, dict) or not all(str(anchor.get(k) or "").strip() for k in ("path", "line")):
            continue
        specs.append(AnchorSpec(
            origin=origin, repo=str(anchor.get("repo") or "Ascend/pytorch"), path=str(anchor["path"]).strip(),
            line=str(anchor["line"]).strip(), version=str(anchor.get("version") or ""), note=str(anchor.get("note") or ""),
            symbol=str(anchor.get("symbol") or anchor.get("function") or ""), message=str(anchor.get("message") or "")))
    return specs


def _yaml_entries(path: str, notes: List[str]) -> List[Any]:
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        notes.append(f"{path}: not read ({exc.__class__.__name__})")
        return []
    if isinstance(data, dict):
        for key in ("patterns", "constraints", "entries"):
            if isinstance(data.get(key), list):
                return data[key]
        return [data]
    return data if isinstance(data, list) else []


def anchors_from_yaml(path: str, kind: str, notes: List[str]) -> List[AnchorSpec]:
    specs = []
    for number, entry in enumerate(_yaml_entries(path, notes), 1):
        if isinstance(entry, dict) and entry.get("anchors"):
            specs.extend(_anchor_specs(f"{kind} {entry.get('id') or os.path.basename(path) + '#' + str(number)}",
                                       entry["anchors"]))
    return specs


def anchors_from_concept(path: str, notes: List[str]) -> List[AnchorSpec]:
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        m = FRONTMATTER_RE.match(text.lstrip("\ufeff"))
        meta = yaml.safe_load(m.group(1)) if m else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        notes.append(f"{path}: not read ({exc.__class__.__name__})")
        return []
    if not isinstance(meta, dict):
        return []
    stem = os.path.splitext(os.path.basename(path))[0]
    return _anchor_specs(f"concept {meta.get('id') or stem}", meta.get("anchors"))


def anchors_from_messages(path: str, notes: List[str]) -> List[AnchorSpec]:
    """Raise sites of a messages table (the shipped knowledge/messages.csv or the shared one)."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: cannot read the messages table ({exc.__class__.__name__}: {exc})") from None
    if rows and not {"file", "line"} <= set(rows[0]):
        raise InputError(f"{path}: not a messages table (needs the columns file, line, function, message_example)")
    specs = []
    for number, row in enumerate(rows, 2):
        origin = f"message {row.get('id') or 'row ' + str(number)}"
        example = row.get("message_example") or ""
        repo, _, repo_version = (row.get("repo") or "Ascend/pytorch").partition("@")  # "Ascend/op-plugin@6b46b284"
        common = dict(origin=origin, repo=repo, path=(row.get("file") or "").strip(),
                      symbol=row.get("function") or "", message=example)
        if not common["path"]:
            continue
        line = (row.get("line") or "").strip()
        if line:
            version = (row.get("version") or repo_version or "").strip()
            version = f"master@{version}" if re.fullmatch(r"[0-9a-f]{7,40}", version) else (version or MESSAGES_DEFAULT_VERSION)
            literal_line = (row.get("message_line") or "").strip()
            specs.append(AnchorSpec(line=line, version=version, message_line=int(literal_line) if literal_line.isdigit() else 0,
                                    **common))
            continue
        tag_line = (row.get("line_v7.3.0") or row.get(f"line_at_{MESSAGES_TAG_VERSION}") or "").strip()
        if tag_line:
            specs.append(AnchorSpec(line=tag_line, version=MESSAGES_TAG_VERSION, line_is_message=True, **common))
    return specs


def collect_anchors(kb_dir: Optional[str] = None, messages_csv: Optional[str] = None,
                    include: Tuple[str, ...] = ("patterns", "constraints", "concepts", "messages")
                    ) -> Tuple[List[AnchorSpec], List[str], List[str]]:
    """(anchors, sources read, notes) from a knowledge directory and/or a messages table."""
    notes: List[str] = []
    sources: List[str] = []
    specs: List[AnchorSpec] = []
    if kb_dir is not None or messages_csv is None:
        base = kb_dir or default_kb_dir()
        if not os.path.isdir(base):
            raise InputError(f"{base}: no such knowledge directory")
        if "patterns" in include:
            for path in sorted(glob.glob(os.path.join(base, "patterns", "*.yaml"))):
                sources.append(path)
                specs.extend(anchors_from_yaml(path, "pattern", notes))
        if "constraints" in include and os.path.isfile(os.path.join(base, "constraints.yaml")):
            sources.append(os.path.join(base, "constraints.yaml"))
            specs.extend(anchors_from_yaml(os.path.join(base, "constraints.yaml"), "constraint", notes))
        if "concepts" in include:
            for path in sorted(glob.glob(os.path.join(base, "concepts", "*.md"))):
                sources.append(path)
                specs.extend(anchors_from_concept(path, notes))
        if "messages" in include and messages_csv is None and os.path.isfile(os.path.join(base, "messages.csv")):
            messages_csv = os.path.join(base, "messages.csv")
    if messages_csv is not None:
        if not os.path.isfile(messages_csv):
            raise InputError(f"{messages_csv}: no such file")
        sources.append(messages_csv)
        specs.extend(anchors_from_messages(messages_csv, notes))
    return specs, sources, notes


# --------------------------------------------------------------------------------------------
# Checking one anchor
# --------------------------------------------------------------------------------------------

def _lines(spec: AnchorSpec) -> Optional[Tuple[int, int]]:
    m = LINE_RE.match(spec.line)
    if not m:
        return None
    start = int(m.group(1))
    end = int(m.group(2) or start)
    return (start, end) if 0 < start <= end else None


def _version_ref(version: str) -> str:
    """What `git show` understands: the commit after `@`, else the whole (a tag or a commit)."""
    version = version.strip()
    if "@" in version:
        return version.rsplit("@", 1)[1]
    return version


def _same_version(version: str, commit: str) -> bool:
    ref = _version_ref(version)
    return bool(commit) and bool(re.fullmatch(r"[0-9a-f]{7,40}", ref)) and commit.startswith(ref)


def _squash(line: str) -> str:
    return " ".join(line.split())


def find_block(lines: List[str], block: List[str], near: int) -> Optional[int]:
    """1-based start of `block` (compared without whitespace differences) in `lines`, nearest to `near`."""
    wanted = [_squash(x) for x in block]
    skipped = 0
    while wanted and not wanted[0]:  # leading blank lines match anywhere; anchor on the first real one
        wanted.pop(0)
        skipped += 1
    if not wanted or sum(len(x) for x in wanted) < MIN_BLOCK_CHARS:
        return None  # `}` or `return ret;` alone would be found in every function
    squashed = [_squash(x) for x in lines]
    best = None
    for i, line in enumerate(squashed):
        if line == wanted[0] and squashed[i:i + len(wanted)] == wanted:
            if best is None or abs(i + 1 - skipped - near) < abs(best - near):
                best = i + 1 - skipped
    return best


def _qual_matches(fn: FunctionDef, symbol: str) -> bool:
    wanted = [p for p in re.split(r"::|\.", symbol.strip().rstrip("()")) if p]
    have = [p for p in re.split(r"::|\.", fn.qualname) if p]
    return bool(wanted) and have[-len(wanted):] == wanted


class AnchorChecker:
    def __init__(self, index: SourceIndex, git_timeout: float = 10.0) -> None:
        self.index = index
        self.tree = index.tree
        self.git_timeout = git_timeout
        self._old_text: Dict[Tuple[str, str], Optional[List[str]]] = {}
        self._git_usable = self.tree.kind == "git"
        self._matchers: Dict[str, SiteMatcher] = {}
        self._whole: Optional[SiteMatcher] = None

    def old_lines(self, version: str, path: str) -> Optional[List[str]]:
        """The file at the anchor's version, from the checkout's own history (None if not there)."""
        key = (version, path)
        if key in self._old_text:
            return self._old_text[key]
        text = None
        ref = _version_ref(version)
        if self._git_usable and ref and re.fullmatch(r"[\w./+-]+", ref):
            try:
                out = subprocess.run(["git", "-C", self.tree.root, "show", f"{ref}:{path}"], capture_output=True,
                                     timeout=self.git_timeout)
                if out.returncode == 0:
                    text = out.stdout.decode("utf-8", "replace").splitlines()
            except (OSError, subprocess.SubprocessError):
                self._git_usable = False  # no git here: do not try again for every anchor
        self._old_text[key] = text
        return text

    def _file_matcher(self, path: str) -> SiteMatcher:
        if path not in self._matchers:
            self._matchers[path] = SiteMatcher([(path, s) for s in self.index.sites_at(path)])
        return self._matchers[path]

    def _resolve(self, spec: AnchorSpec) -> Tuple[Optional[str], str]:
        """(path in this tree or None, reason to skip)."""
        tree_repo = self.tree.repo or "Ascend/pytorch"
        if spec.repo and spec.repo != tree_repo:
            if spec.repo == "Ascend/op-plugin" and tree_repo == "Ascend/pytorch":
                prefixed = "third_party/op-plugin/" + spec.path
                if prefixed in self.index.files or os.path.exists(os.path.join(self.tree.root, prefixed)):
                    return prefixed, ""
            return None, f"anchor in {spec.repo}; this tree is {tree_repo}"
        if self.tree.kind == "package" and not spec.path.endswith(".py"):
            return None, "C++ sources are not part of an installed torch_npu package"
        if self.tree.kind == "package" and not spec.path.startswith(self.tree.include):
            return None, "not part of the installed package (tests, tools)"
        return spec.path, ""

    def check(self, spec: AnchorSpec) -> AnchorCheck:
        anchor = f"{spec.repo} {spec.path}:{spec.line}@{spec.version}"

        def result(status: str, en: str, zh: str, current: str = "", function: str = "") -> AnchorCheck:
            return AnchorCheck(origin=spec.origin, anchor=anchor, status=status, current=current, function=function,
                               detail={"en": en, "zh": zh})

        lines_range = _lines(spec)
        if lines_range is None:
            return result("wrong", f"line {spec.line!r} is not N or N-M", f"行号 {spec.line!r} 不是 N 或 N-M 形式")
        path, skip = self._resolve(spec)
        if path is None:
            return result("skipped", skip, _zh_skip(skip))
        full = os.path.join(self.tree.root, path)
        if not os.path.isfile(full):
            same_name = self.index.resolve_path(os.path.basename(path))
            hint = f"; a file of that name is at {', '.join(same_name[:3])}" if same_name else ""
            hint_zh = f"；同名文件位于 {', '.join(same_name[:3])}" if same_name else ""
            return result("missing_file", f"{path} is not in this tree{hint}", f"本源码树中没有 {path}{hint_zh}")
        current = self.index.read_lines(path)
        start, end = lines_range
        same = _same_version(spec.version, self.tree.commit)
        old = current if same else self.old_lines(spec.version, path)
        if spec.message:
            return self._check_message(spec, path, current, start, end, same, result)
        if same:  # the very version the anchor names: the lines are what they were
            if end > len(current):
                return result("wrong", f"the file has {len(current)} lines; the anchor ends at {end}",
                              f"文件只有 {len(current)} 行，锚点止于第 {end} 行")
            return self._check_function(spec, path, current, start, end, same, result)
        if old is not None and end <= len(old):
            return self._check_block(spec, path, current, old, start, end, same, result)
        return self._check_function(spec, path, current, start, end, same, result)

    # -- by message ----------------------------------------------------------------------------
    def _check_message(self, spec, path, current, start, end, same, result) -> AnchorCheck:
        # The example's literal text only: its placeholders (<build_dir>, <value>) are not in the site.
        probe = " ".join(p for p in example_pieces(spec.message) if isinstance(p, str))
        wanted = {start, end, spec.message_line} | set(range(start, end + 1))
        matcher = self._file_matcher(path)
        found = [s for s in matcher.match(probe, limit=12, min_score=0.0, align=False) if s.quality == "full"
                 and max(s.message_coverage, s.site_coverage) >= 0.4]
        if not found:  # only then pay for the alignment that also credits cut-short texts
            found = [s for s in matcher.match(probe, limit=12, min_score=0.0) if s.quality in ("full", "fragment")
                     and max(s.message_coverage, s.site_coverage) >= 0.4]
        if found:
            best = max(s.score for s in found)
            tied = [s for s in found if s.score >= best - 0.05]  # the same text raised twice: the nearest one
            chosen = min(tied, key=lambda s: min(abs(s.site.line - start), abs(s.site.message_line - start)))
            site = chosen.site
            fn = self.index.enclosing(path, site.line)
            fname = fn.qualname if fn else site.function
            here = site.message_line if spec.line_is_message else site.line
            if here in wanted or site.message_line in wanted or site.line in wanted:
                return result("ok", f"the message is raised at line {here}", f"该报错信息仍在第 {here} 行抛出",
                              f"{path}:{here}", fname)
            at_anchor = self._literal_line(current, spec.message, start)
            if at_anchor is not None and min(start, spec.message_line or start) <= at_anchor <= max(end, spec.message_line):
                # the same text is also built right at the anchor (a stream or a variable we do not model)
                return result("ok", f"the message text is at line {at_anchor}", f"该报错文本位于第 {at_anchor} 行",
                              f"{path}:{at_anchor}", fname)
            status = "wrong" if same else "moved"
            return result(status, f"the message is now raised at line {here}, not {spec.line}",
                          f"该报错信息现位于第 {here} 行（锚点为 {spec.line}）", f"{path}:{here}", fname)
        literal = self._literal_line(current, spec.message, start)
        if literal is not None:  # set as a value, not raised by a call we know (disable_cudagraphs_reason = msg)
            fn = self.index.enclosing(path, literal)
            fname = fn.qualname if fn else ""
            low = min(start, spec.message_line or start)
            if literal in wanted or low <= literal <= max(end, spec.message_line) + 3:
                return result("ok", f"the message text is at line {literal}", f"该报错文本位于第 {literal} 行",
                              f"{path}:{literal}", fname)
            return result("wrong" if same else "moved", f"the message text is now at line {literal}, not {spec.line}",
                          f"该报错文本现位于第 {literal} 行（锚点为 {spec.line}）", f"{path}:{literal}", fname)
        here = [s for s in self.index.sites_at(path) if s.literal_keys()
                and (start <= s.line <= end or start <= s.message_line <= end)]
        if here:  # the anchored statement raises, but another text
            site = here[0]
            return result("wrong" if same else "changed",
                          f"line {site.line} raises another message now: {site.message[:120]!r}",
                          f"第 {site.line} 行现在抛出的是另一条信息：{site.message[:120]!r}", f"{path}:{site.line}",
                          site.function)
        if spec.symbol:
            named = [f for f in self.index.functions(path) if _qual_matches(f, spec.symbol)]
            holding = [f for f in named if f.start <= start <= f.end]
            if holding:  # the text is built elsewhere (a helper, upstream torch): only the place can be checked
                fn = holding[0]
                return result("unverified", f"the message text is not in {path} (built by a helper or upstream); "
                              f"line {start} is still inside {fn.qualname}",
                              f"{path} 中没有该报错文本（由辅助函数或上游生成）；第 {start} 行仍在 {fn.qualname} 内",
                              f"{path}:{spec.line}", fn.qualname)
        elsewhere = [s for s in self._whole_matcher().match(probe, limit=3, min_score=0.6)
                     if s.quality in ("full", "fragment") and s.path != path]
        if elsewhere:
            site = elsewhere[0]
            return result("moved", f"the message is now raised in {site.path}:{site.site.line}",
                          f"该报错信息已移至 {site.path}:{site.site.line}", f"{site.path}:{site.site.line}",
                          site.site.function)
        nearest = self._nearest_literal(path, probe)
        extra = f"; the closest text in the file ({nearest[1]:.0%} alike): {nearest[0][:120]!r}" if nearest else ""
        extra_zh = f"；文件中最接近的文本（相似度 {nearest[1]:.0%}）：{nearest[0][:120]!r}" if nearest else ""
        return result("wrong" if same else "changed", f"the message is not raised in {path} any more{extra}",
                      f"{path} 中已找不到该报错信息{extra_zh}")

    @staticmethod
    def _literal_line(lines: List[str], example: str, near: int) -> Optional[int]:
        """The line holding the example's longest literal part (12+ characters), nearest to `near`."""
        # plain words only: punctuation next to a placeholder, `\n` escapes and line breaks differ in the source
        parts = [m.group(0).strip() for p in example_pieces(example) if isinstance(p, str)
                 for m in re.finditer(r"[\w][\w ,.'()=-]*[\w)]", re.sub(r"\\n", "\n", p))]
        parts.sort(key=len, reverse=True)
        if not parts or len(parts[0]) < 12:
            return None
        needle = parts[0][:40]
        hits = [n for n, line in enumerate(lines, 1) if needle in line]
        return min(hits, key=lambda n: abs(n - near)) if hits else None

    def _whole_matcher(self) -> SiteMatcher:
        if self._whole is None:
            from npu_graph_skill.expert.code import site_matcher

            self._whole = site_matcher(self.index)
        return self._whole

    def _nearest_literal(self, path: str, probe: str) -> Optional[Tuple[str, float]]:
        best = None
        for site in self.index.sites_in(path):
            text = site.message
            if not text.strip():
                continue
            score = similarity(text, probe)
            if best is None or score > best[1]:
                best = (text, score)
        return best if best and best[1] >= 0.4 else None

    # -- by the anchored text --------------------------------------------------------------------
    def _check_block(self, spec, path, current, old, start, end, same, result) -> AnchorCheck:
        old_fn = self._old_function(spec, old, start, end, path, same)
        if old_fn is not None and start <= old_fn.start and end >= old_fn.end - 1:
            return self._check_whole_function(spec, path, old_fn, start, end, same, result)
        block = old[start - 1:end]
        found = find_block(current, block, start)
        if found is not None:
            new_end = found + (end - start)
            fn = self.index.enclosing(path, found)
            fname = fn.qualname if fn else ""
            if found == start:
                return result("ok", "the anchored lines are unchanged", "锚定的代码行未变", f"{path}:{spec.line}", fname)
            return result("moved", f"the same lines are now {found}-{new_end}", f"相同代码现位于 {found}-{new_end} 行",
                          f"{path}:{found}-{new_end}", fname)
        moved_site = self._follow_old_site(old, path, start, end, same)
        if moved_site is not None:
            site, fname = moved_site
            status = "ok" if start <= site.line <= end else "moved"
            return result(status, f"the check raising {site.message[:80]!r} is at line {site.line}",
                          f"抛出 {site.message[:80]!r} 的检查位于第 {site.line} 行",
                          f"{path}:{site.line}-{site.end_line}" if site.end_line != site.line else f"{path}:{site.line}", fname)
        if old_fn is not None:
            now = [f for f in self.index.functions(path) if f.qualname == old_fn.qualname]
            if not now:
                return result("vanished", f"{old_fn.qualname} is gone from {path}; its lines changed",
                              f"{path} 中已没有 {old_fn.qualname}，相关代码已改动")
            fn = now[0]
            return result("changed", f"the anchored lines changed; {fn.qualname} is now {fn.start}-{fn.end}",
                          f"锚定的代码已改动；{fn.qualname} 现位于 {fn.start}-{fn.end} 行",
                          f"{path}:{fn.start}-{fn.end}", fn.qualname)
        return result("changed", "the anchored lines are not in the file any more", "锚定的代码已不在该文件中")

    def _follow_old_site(self, old, path, start, end, same):
        """The anchored lines raised a message at the anchor's version: where is it raised now?"""
        if same:
            return None
        from npu_graph_skill.expert.source_index import scan_text_sites

        for old_site in scan_text_sites("\n".join(old), path):
            if not (start <= old_site.line <= end or start <= old_site.message_line <= end):
                continue
            probe = " ".join(p for p in old_site.pieces if isinstance(p, str))
            if len(probe.strip()) < 12:
                continue
            found = [s for s in self._file_matcher(path).match(probe, limit=3, min_score=0.0, align=False)
                     if s.quality == "full" and s.message_coverage >= 0.8]
            if found:
                site = min(found, key=lambda s: abs(s.site.line - start)).site
                fn = self.index.enclosing(path, site.line)
                return site, fn.qualname if fn else site.function
        return None

    def _old_function(self, spec, old, start, end, path, same) -> Optional[FunctionDef]:
        """The function holding the anchored lines at the anchor's version."""
        if same:
            candidates = self.index.functions(path)
        else:
            from npu_graph_skill.expert.source_index import scan_text

            candidates = scan_text("\n".join(old), path)
        if spec.symbol:
            named = [f for f in candidates if _qual_matches(f, spec.symbol)]
            holding = [f for f in named if f.start <= start and end <= f.end]
            if holding or named:
                return (holding or named)[0]
        inner = [f for f in candidates if f.kind != "class" and f.start <= start and end <= f.end]
        return max(inner, key=lambda f: f.start) if inner else None

    def _check_whole_function(self, spec, path, old_fn, start, end, same, result) -> AnchorCheck:
        now = [f for f in self.index.functions(path) if f.qualname == old_fn.qualname]
        if not now:
            return result("vanished", f"{old_fn.qualname} is gone from {path}", f"{path} 中已没有 {old_fn.qualname}")
        fn = min(now, key=lambda f: abs(f.start - start))
        if (fn.start, fn.end) == (start, end) or (fn.start == start and abs(fn.end - end) <= 1):
            return result("ok", f"{fn.qualname} still spans {fn.start}-{fn.end}", f"{fn.qualname} 仍位于 {fn.start}-{fn.end} 行",
                          f"{path}:{fn.start}-{fn.end}", fn.qualname)
        return result("wrong" if same else "moved", f"{fn.qualname} now spans {fn.start}-{fn.end}",
                      f"{fn.qualname} 现位于 {fn.start}-{fn.end} 行", f"{path}:{fn.start}-{fn.end}", fn.qualname)

    # -- by the function alone ------------------------------------------------------------------
    def _check_function(self, spec, path, current, start, end, same, result) -> AnchorCheck:
        holding = self.index.enclosing(path, start)
        hname = holding.qualname if holding else ""
        if end > len(current):
            if not spec.symbol:
                return result("changed", f"the file has {len(current)} lines; the anchor ends at {end}",
                              f"文件只有 {len(current)} 行，锚点止于第 {end} 行")
        if spec.symbol:
            named = [f for f in self.index.functions(path) if _qual_matches(f, spec.symbol)]
            if not named:
                return result("vanished", f"{spec.symbol} is not defined in {path}", f"{path} 中没有定义 {spec.symbol}")
            inside = [f for f in named if f.start <= start and end <= f.end]
            if inside:
                fn = inside[0]
                return result("ok", f"the lines are inside {fn.qualname} ({fn.start}-{fn.end})",
                              f"锚定行位于 {fn.qualname}（{fn.start}-{fn.end} 行）内", f"{path}:{spec.line}", fn.qualname)
            fn = named[0]
            return result("wrong" if same else "moved", f"{fn.qualname} is now at {fn.start}-{fn.end}, outside the anchored lines",
                          f"{fn.qualname} 现位于 {fn.start}-{fn.end} 行，不含锚定行", f"{path}:{fn.start}-{fn.end}", fn.qualname)
        if same:
            return result("ok", f"same version; the lines are in {hname or 'no function'}",
                          f"版本相同；这些行位于 {hname or '函数之外'}", f"{path}:{spec.line}", hname)
        why, why_zh = {
            "git": ("the checkout's history does not hold the anchor's version", "源码树的 git 历史中没有锚点所指版本"),
            "package": ("an installed package keeps no history to compare with", "已安装的包没有可对比的历史"),
        }.get(self.tree.kind, ("this directory is not a git checkout, so it has no history", "该目录不是 git 仓库，没有历史可对比"))
        return result("unverified", f"nothing to compare with ({why}); the lines are in {hname or 'no function'} here",
                      f"无可对比的内容（{why_zh}）；当前这些行位于 {hname or '函数之外'}", f"{path}:{spec.line}", hname)


def _zh_skip(reason: str) -> str:
    if reason.startswith("anchor in"):
        return "锚点属于另一个仓库：" + reason
    if "C++" in reason:
        return "已安装的 torch_npu 包不含 C++ 源码"
    return "不在已安装的包内（测试、工具等）"


def verify_anchor_specs(index: SourceIndex, specs: List[AnchorSpec], sources: List[str],
                        notes: Optional[List[str]] = None) -> AnchorReport:
    checker = AnchorChecker(index)
    checks = [checker.check(spec) for spec in specs]
    summary = {status: 0 for status in STATUSES}
    for check in checks:
        summary[check.status] = summary.get(check.status, 0) + 1
    summary["total"] = len(checks)
    return AnchorReport(tree=describe(index.tree), summary=summary, checks=checks, sources=sources, notes=list(notes or []))
