"""Concept notes: bilingual Markdown answers to "how does graph mode work?", with source anchors.

A note is `knowledge/concepts/<id>.md`: YAML frontmatter between `---` lines, then a `## 中文`
section and a `## English` section. Frontmatter keys:

    id         the file's stem, lower-case words joined by '-'
    title      {zh, en}
    summary    {zh, en}: the one-paragraph answer shown first
    tags       words a user may ask with (API names, messages, codes, Chinese terms)
    anchors    [{repo, path, line: "N" | "N-M", version: "<ref>@<sha>", note, symbol?}]
    related    ids of patterns / constraints / other notes (may be empty)
    references optional: documents without a line anchor (URLs, upstream docs)

`load_concepts()` parses and validates every note once per process; a broken note raises
`ConceptError` naming the file, so a bad edit fails the test suite instead of a user's query.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.model import Record

CONCEPTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "concepts")
SECTION_HEADINGS = {"zh": "## 中文", "en": "## English"}
REQUIRED_KEYS = ("id", "title", "summary", "tags", "anchors", "related")
ANCHOR_KEYS = ("repo", "path", "line", "version", "note")
KNOWN_REPOS = ("Ascend/pytorch", "Ascend/op-plugin", "Ascend/torchair", "pytorch/pytorch", "hicann/runtime")

ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LINE_RE = re.compile(r"^(\d+)(?:-(\d+))?$")
VERSION_RE = re.compile(r"^[A-Za-z0-9][\w.\-]*@[0-9a-f]{7,40}$")
FRONTMATTER_RE = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n", re.S)  # the body is what follows the match


class ConceptError(ValueError):
    """A concept note that does not parse or validate; the message names the file."""


@dataclasses.dataclass
class ConceptNote(Record):
    id: str
    title: Dict[str, str]
    summary: Dict[str, str]
    tags: List[str]
    anchors: List[Dict[str, str]]
    related: List[str]
    body: Dict[str, str]
    references: List[str] = dataclasses.field(default_factory=list)
    path: str = ""


def line_range(line: str) -> Optional[Tuple[int, int]]:
    """`"270"` → (270, 270), `"240-340"` → (240, 340); None when malformed or reversed."""
    match = LINE_RE.match(str(line).strip())
    if not match:
        return None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    return (start, end) if 0 < start <= end else None


def anchor_problems(anchor: Any) -> List[str]:
    """Why an anchor is not well-formed (empty list when it is)."""
    if not isinstance(anchor, dict):
        return [f"anchor is not a mapping: {anchor!r}"]
    problems = [f"anchor lacks '{key}'" for key in ANCHOR_KEYS if not str(anchor.get(key) or "").strip()]
    if problems:
        return problems
    if anchor["repo"] not in KNOWN_REPOS:
        problems.append(f"anchor repo '{anchor['repo']}' is not one of {', '.join(KNOWN_REPOS)}")
    path = str(anchor["path"])
    if path.startswith("/") or ".." in path.split("/") or "\\" in path:
        problems.append(f"anchor path '{path}' must be relative to the repository root")
    if line_range(anchor["line"]) is None:
        problems.append(f"anchor line '{anchor['line']}' must be N or N-M with N <= M")
    if not VERSION_RE.match(str(anchor["version"])):
        problems.append(f"anchor version '{anchor['version']}' must look like master@9e73e708")
    return problems


def note_problems(note: ConceptNote, stem: str = "") -> List[str]:
    """Validation of a parsed note: keys, both languages, anchors."""
    problems: List[str] = []
    if not ID_RE.match(note.id):
        problems.append(f"id '{note.id}' must be lower-case words joined by '-'")
    if stem and note.id != stem:
        problems.append(f"id '{note.id}' differs from the file name '{stem}'")
    for key in ("title", "summary", "body"):
        texts = getattr(note, key)
        for lang in ("zh", "en"):
            if not str(texts.get(lang) or "").strip():
                problems.append(f"{key} lacks its '{lang}' text")
    if not _has_cjk(note.title.get("zh", "")) or not _has_cjk(note.body.get("zh", "")):
        problems.append("the zh title and section must be written in Chinese")
    if _has_cjk(note.title.get("en", "")):
        problems.append("the en title must not be Chinese")
    if not note.tags:
        problems.append("tags are empty")
    if not note.anchors:
        problems.append("a note needs at least one anchor")
    for index, anchor in enumerate(note.anchors):
        problems.extend(f"anchors[{index}]: {p}" for p in anchor_problems(anchor))
    return problems


def parse_note(text: str, name: str = "<note>") -> ConceptNote:
    """Markdown with frontmatter → ConceptNote (raises ConceptError, naming `name`)."""
    import yaml

    match = FRONTMATTER_RE.match(text.lstrip("\ufeff"))
    if not match:
        raise ConceptError(f"{name}: no YAML frontmatter between '---' lines")
    try:
        meta = yaml.load(match.group(1), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml when present
    except yaml.YAMLError as exc:
        raise ConceptError(f"{name}: frontmatter is not valid YAML: {exc}".replace("\n", " ")) from None
    if not isinstance(meta, dict):
        raise ConceptError(f"{name}: frontmatter must be a mapping")
    missing = [key for key in REQUIRED_KEYS if key not in meta]
    if missing:
        raise ConceptError(f"{name}: frontmatter lacks {', '.join(missing)}")
    return ConceptNote(
        id=str(meta["id"]),
        title=_bilingual(meta["title"]),
        summary=_bilingual(meta["summary"]),
        tags=[str(t) for t in meta.get("tags") or []],
        anchors=[{k: str(v) for k, v in a.items()} if isinstance(a, dict) else a for a in meta.get("anchors") or []],
        related=[str(r) for r in meta.get("related") or []],
        body=split_sections(text.lstrip("\ufeff")[match.end():]),
        references=[str(r) for r in meta.get("references") or []],
        path=name,
    )


def split_sections(body: str) -> Dict[str, str]:
    """The `## 中文` and `## English` sections of a note body."""
    found: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in body.splitlines():
        lang = next((code for code, heading in SECTION_HEADINGS.items() if line.strip() == heading), None)
        if lang:
            current = lang
            found.setdefault(lang, [])
        elif current:
            found[current].append(line)
    return {lang: "\n".join(lines).strip() for lang, lines in found.items()}


_CACHE: Dict[str, List[ConceptNote]] = {}


def load_concepts(directory: Optional[str] = None) -> List[ConceptNote]:
    """Every note in `directory` (default: the shipped notes), parsed and validated, sorted by id."""
    directory = directory or CONCEPTS_DIR
    if directory in _CACHE:
        return _CACHE[directory]
    notes: List[ConceptNote] = []
    for filename in sorted(os.listdir(directory)):
        if not filename.endswith(".md"):
            continue
        path = os.path.join(directory, filename)
        with open(path, encoding="utf-8") as handle:
            note = parse_note(handle.read(), filename)
        problems = note_problems(note, stem=filename[:-3])
        if problems:
            raise ConceptError(f"{filename}: {'; '.join(problems)}")
        notes.append(note)
    _CACHE[directory] = notes
    return notes


def get_concept(concept_id: str) -> Optional[ConceptNote]:
    return next((note for note in load_concepts() if note.id == concept_id), None)


def _bilingual(value: Any) -> Dict[str, str]:
    if isinstance(value, dict):
        return {str(k): str(v).strip() for k, v in value.items() if v is not None}
    return {"en": str(value or "").strip()}


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
