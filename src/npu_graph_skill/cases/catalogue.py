"""The knowledge base read back: a small summary of every case file, grouped into distinct cases.

Parsing YAML is the slow part, so the summaries are cached in `.index.json` keyed by each file's
size and modification time; a diagnosis that searches the cases on every run reads one JSON file
and a directory listing. The cache is local and derived: it is git-ignored, rebuilt for any file
that changed, and skipped silently where the folder is read-only.

Two files with the same signature (two people recorded the same failure on their own branches,
then merged) are one case: the earlier is the case, the later counts as an occurrence.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.model import Record
from npu_graph_skill.cases.location import KbLocation
from npu_graph_skill.core.files import atomic_write, is_temp_name

INDEX_VERSION = 1
SYMPTOM_HEAD_LINES = 12


@dataclasses.dataclass
class CaseEntry(Record):
    """What search, list and history need of one case file."""

    id: str
    file: str
    date: str = ""
    recorded_at: str = ""
    title: str = ""
    pattern: str = ""
    phase: str = ""
    layer: str = ""
    root_layer: str = ""
    location: str = ""
    fix_in: str = ""
    error: str = ""
    signature: str = ""
    message: str = ""
    codes: List[str] = dataclasses.field(default_factory=list)
    tags: List[str] = dataclasses.field(default_factory=list)
    root_cause: str = ""
    fix_short: str = ""
    fix_long: str = ""
    verification: str = ""
    reporter: str = ""
    symptom_head: str = ""
    environment: Dict[str, str] = dataclasses.field(default_factory=dict)


ENTRY_FIELDS = {f.name for f in dataclasses.fields(CaseEntry)}


@dataclasses.dataclass
class CaseGroup(Record):
    """One distinct case: its first file, later files of the same signature, and its repeats."""

    entry: CaseEntry
    duplicates: List[str] = dataclasses.field(default_factory=list)
    occurrences: int = 1
    last_seen: str = ""


@dataclasses.dataclass
class Catalogue:
    location: KbLocation
    entries: List[CaseEntry]
    occurrence_files: Dict[str, List[str]]  # case id → its occurrence file names
    notes: List[str]  # files that could not be read
    digests: Dict[str, str]  # case file name → sha1 of its bytes

    def groups(self) -> List[CaseGroup]:
        """Distinct cases, newest first."""
        by_signature: Dict[str, List[CaseEntry]] = {}
        for entry in sorted(self.entries, key=lambda e: (e.recorded_at or e.date, e.id)):
            by_signature.setdefault(entry.signature or entry.id, []).append(entry)
        groups = []
        for members in by_signature.values():
            first = members[0]
            occurrences = 0
            last_seen = first.date
            for member in members:
                names = self.occurrence_files.get(member.id, [])
                occurrences += 1 + len(names)
                last_seen = max([last_seen, member.date] + [_stamp_date(n) for n in names])
            groups.append(CaseGroup(entry=first, duplicates=[m.id for m in members[1:]],
                                    occurrences=occurrences, last_seen=last_seen))
        groups.sort(key=lambda g: (g.entry.recorded_at or g.entry.date, g.entry.id), reverse=True)
        return groups

    def group_of(self, signature_hash: str) -> Optional[CaseGroup]:
        for group in self.groups():
            if group.entry.signature == signature_hash:
                return group
        return None

    def fingerprint(self) -> str:
        """Changes whenever a case or an occurrence is added, removed or edited."""
        h = hashlib.sha1()
        for name in sorted(self.digests):
            h.update(f"case {name} {self.digests[name]}\n".encode())
        for case_id in sorted(self.occurrence_files):
            for name in sorted(self.occurrence_files[case_id]):
                h.update(f"occurrence {name}\n".encode())
        return h.hexdigest()[:16]


def occurrence_name(case_id: str, recorded_at: str) -> str:
    stamp = recorded_at.replace("-", "").replace(":", "")  # 20251130T081233Z
    return f"{case_id}.{stamp}-{os.urandom(3).hex()}.yaml"


def _stamp_date(name: str) -> str:
    stamp = name.split(".", 2)[1] if name.count(".") >= 2 else ""
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}" if len(stamp) >= 8 and stamp[:8].isdigit() else ""


def load_catalogue(location: KbLocation, write_cache: bool = True) -> Catalogue:
    """Every readable case; a missing folder is an empty knowledge base."""
    cache = _read_cache(location.index_file)
    entries: List[CaseEntry] = []
    notes: List[str] = []
    digests: Dict[str, str] = {}
    fresh: Dict[str, Any] = {}
    for name in _yaml_names(location.cases_dir):
        path = os.path.join(location.cases_dir, name)
        try:
            stat = os.stat(path)
        except OSError:
            continue
        key = [stat.st_size, stat.st_mtime_ns]
        cached = cache.get(name)
        if cached and cached.get("key") == key and set(cached.get("entry") or {}) == ENTRY_FIELDS:
            fresh[name] = cached
        else:
            summary, problem = _summarise(path, name)
            if problem:
                notes.append(problem)
                continue
            fresh[name] = {"key": key, **summary}
        digests[name] = fresh[name]["sha1"]
        entries.append(CaseEntry(**fresh[name]["entry"]))
    occurrences: Dict[str, List[str]] = {}
    for name in _yaml_names(location.occurrences_dir):
        occurrences.setdefault(name.split(".", 1)[0], []).append(name)
    if write_cache and fresh != cache:
        _write_cache(location, fresh)
    return Catalogue(location, entries, occurrences, notes, digests)


def _yaml_names(folder: str) -> List[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n.endswith(".yaml") and not n.startswith(".") and not is_temp_name(n))


def _summarise(path: str, name: str) -> Tuple[Dict[str, Any], str]:
    from npu_graph_skill.cases.case import CaseError, load_yaml

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        data = load_yaml(raw.decode("utf-8", errors="replace"), name)
    except (OSError, CaseError) as exc:
        return {}, f"cases/{name}: skipped ({exc})"
    if not isinstance(data, dict) or not data.get("id"):
        return {}, f"cases/{name}: skipped (not a case: no id)"
    return {"sha1": hashlib.sha1(raw).hexdigest(), "entry": summarise_case(data, name)}, ""


def summarise_case(data: Dict[str, Any], name: str) -> Dict[str, Any]:
    layer = data.get("layer") if isinstance(data.get("layer"), dict) else {}
    fix = data.get("fix") if isinstance(data.get("fix"), dict) else {}
    cause = data.get("root_cause") if isinstance(data.get("root_cause"), dict) else {}
    sig = data.get("signature") if isinstance(data.get("signature"), dict) else {}
    verification = data.get("verification") if isinstance(data.get("verification"), dict) else {}
    env = data.get("environment") if isinstance(data.get("environment"), dict) else {}
    where = f"{layer.get('file')}:{layer.get('line')}" if layer.get("file") and layer.get("line") else str(layer.get("file") or "")
    return dataclasses.asdict(CaseEntry(
        id=str(data.get("id")), file=name, date=str(data.get("date") or ""), recorded_at=str(data.get("recorded_at") or ""),
        title=str(data.get("title") or ""), pattern=str(data.get("pattern") or ""), phase=str(data.get("phase") or ""),
        layer=str(layer.get("detected") or ""), root_layer=str(layer.get("root") or ""),
        location=" ".join(p for p in (str(layer.get("function") or ""), where) if p),
        fix_in=str(data.get("fix_in") or ""), error=str(data.get("error") or ""),
        signature=str(sig.get("hash") or ""), message=str(sig.get("message") or ""),
        codes=[str(c) for c in data.get("codes") or []], tags=[str(t) for t in data.get("tags") or []],
        root_cause=str(cause.get("direct") or ""), fix_short=_text(fix.get("short_term")), fix_long=_text(fix.get("long_term")),
        verification=str(verification.get("result") or ""), reporter=str(data.get("reporter") or ""),
        symptom_head="\n".join(str(data.get("symptom") or "").splitlines()[:SYMPTOM_HEAD_LINES]),
        environment={str(k): str(v) for k, v in env.items()},
    ))


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value)
    return str(value or "")


def _read_cache(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION or not isinstance(data.get("files"), dict):
        return {}
    return data["files"]


def _write_cache(location: KbLocation, files: Dict[str, Any]) -> None:
    if not os.path.isdir(location.path):
        return
    try:
        atomic_write(location.index_file, json.dumps({"version": INDEX_VERSION, "files": files},
                                                     ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except OSError:
        pass  # a read-only knowledge base is still searchable, only slower
