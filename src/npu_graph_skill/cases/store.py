"""The case knowledge base: record a diagnosis as a case (deduplicated, redacted, atomic, locked),
read cases back (list, show, stats, export) and search them.

Recording is prepare → (the face may show, confirm, edit) → save. `record_case` does both for
scripts and agents.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import zipfile
from typing import Any, Dict, Iterable, List, Optional

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.model import Record
from npu_graph_skill.cases.case import Case, CaseError, assign_id, build_case, dump_yaml, load_yaml
from npu_graph_skill.cases.catalogue import CaseGroup, Catalogue, load_catalogue, occurrence_name
from npu_graph_skill.cases.history import count_by, history_is_current, render_history, render_template
from npu_graph_skill.cases.location import KbLocation, resolve_kb_dir
from npu_graph_skill.cases.redact import Redactor, default_redactor
from npu_graph_skill.cases.safe_io import exclusive_lock, remove_stale_temps
from npu_graph_skill.core.files import atomic_write

OCCURRENCE_SCHEMA = "npu-graph-skill/occurrence/1"
EXPORT_SCHEMA = "npu-graph-skill/kb-export/1"
GITIGNORE = ".lock\n.index.json\n.*.tmp\n"
# history.md is generated: a union merge never conflicts, and its fingerprint then says it is stale.
GITATTRIBUTES = "history.md merge=union\n"


# --------------------------------------------------------------------------------------------
# Results.
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass
class PreparedCase(Record):
    """A case built and redacted, not yet saved."""

    case: Case
    kb: KbLocation
    redactions: Dict[str, int]
    stub: Optional[Dict[str, Any]] = None  # the diagnosis's own pattern stub, for a novel case
    notes: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class RecordResult(Record):
    action: str  # created | repeat | preview (dry run: nothing written)
    case_id: str
    path: str  # the file written: the case, or the occurrence of a known case
    kb: str
    kb_source: str
    title: str
    pattern: str
    phase: str
    occurrences: int  # of this case, after the record
    redactions: Dict[str, int]
    proposal: str = ""  # pattern proposal written for a novel case
    promote: List[Dict[str, str]] = dataclasses.field(default_factory=list)
    cases: int = 0  # distinct cases in the knowledge base after the record
    total_occurrences: int = 0
    removed_temp_files: List[str] = dataclasses.field(default_factory=list)
    notes: List[str] = dataclasses.field(default_factory=list)
    case: Dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class CaseSummary(Record):
    id: str
    date: str
    last_seen: str
    title: str
    phase: str
    layer: str
    root_layer: str
    pattern: str
    occurrences: int
    fix: str
    verification: str
    file: str


@dataclasses.dataclass
class CaseList(Record):
    kb: str
    kb_source: str
    total: int  # distinct cases matching the filters, before the limit
    cases: List[CaseSummary]
    notes: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class CaseView(Record):
    case: Dict[str, Any]
    path: str
    occurrences: int
    seen: List[Dict[str, Any]]  # the repeats: date, environment, reporter ...
    duplicates: List[str]  # case files of the same signature (merged from another branch)
    proposal: str = ""


@dataclasses.dataclass
class KbStats(Record):
    kb: str
    kb_source: str
    cases: int  # distinct cases
    occurrences: int  # records, repeats included
    by_phase: Dict[str, Dict[str, int]]
    by_layer: Dict[str, Dict[str, int]]
    by_pattern: Dict[str, Dict[str, int]]
    novel: int
    proposals: int
    verification: Dict[str, int]
    history_current: bool
    exists: bool
    notes: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class ExportResult(Record):
    path: str
    format: str
    cases: int
    occurrences: int


# --------------------------------------------------------------------------------------------
# Recording.
# --------------------------------------------------------------------------------------------

def prepare_case(report: Dict[str, Any], kb_dir: Optional[str] = None, redact: bool = True,
                 symptom: Optional[str] = None, environment: Optional[Dict[str, Any]] = None,
                 collect_env: bool = False, tags: Iterable[str] = (), reporter: str = "",
                 title: Optional[str] = None, verification_result: Optional[str] = None,
                 verification_note: str = "", redactor: Optional[Redactor] = None) -> PreparedCase:
    notes: List[str] = []
    env = dict(environment or {})
    if collect_env:
        collected, note = _collect_environment()
        env = {**collected, **env}
        if note:
            notes.append(note)
    case = build_case(report, symptom=symptom, environment=env, tags=tags, reporter=reporter, title=title,
                      verification_result=verification_result, verification_note=verification_note)
    redactions: Dict[str, int] = {}
    if redact:
        case, redactions = redact_case(case, redactor or default_redactor())
    case.refresh_signature()
    assign_id(case)
    stub = report.get("pattern_stub") if isinstance(report.get("pattern_stub"), dict) else None
    return PreparedCase(case=case, kb=resolve_kb_dir(kb_dir), redactions=redactions, stub=stub, notes=notes)


def redact_case(case: Case, redactor: Redactor) -> "tuple[Case, Dict[str, int]]":
    data = case.to_dict()
    kept = {k: data.pop(k) for k in ("schema", "id", "date", "recorded_at", "pattern", "phase", "signature",
                                      "redactions", "lang", "confidence", "codes")}
    cleaned = redactor.apply(data)
    summary = redactor.summary()
    merged = {**cleaned, **kept}
    merged["redactions"] = {k: case.redactions.get(k, 0) + v for k, v in summary.items()} if summary else dict(case.redactions)
    return Case(**merged), summary


PREPARE_OPTIONS = ("kb_dir", "redact", "symptom", "environment", "collect_env", "tags", "reporter", "title",
                   "verification_result", "verification_note", "redactor")


def record_case(report: Dict[str, Any], **options: Any) -> RecordResult:
    """Record a diagnosis report (a `Diagnosis.to_dict()`) without asking: build, redact, dedupe, save.
    Options: those of `prepare_case`, `lock_timeout`, and `dry_run` (build and redact, write nothing:
    action "preview"). `yes` is accepted and ignored: the library never asks."""
    options.pop("yes", None)
    dry_run = bool(options.pop("dry_run", False))
    save_options = {k: options.pop(k) for k in ("lock_timeout",) if k in options}
    unknown = sorted(set(options) - set(PREPARE_OPTIONS))
    if unknown:
        raise UserError(f"record_case: unknown option(s) {', '.join(unknown)} "
                        f"(known: {', '.join(PREPARE_OPTIONS + ('lock_timeout', 'dry_run'))})")
    prepared = prepare_case(report, **options)
    if dry_run:
        case = prepared.case
        return RecordResult(action="preview", case_id=case.id, path="", kb=prepared.kb.path, kb_source=prepared.kb.source,
                            title=case.title, pattern=case.pattern, phase=case.phase, occurrences=0,
                            redactions=prepared.redactions, notes=prepared.notes, case=case.to_dict())
    return save_case(prepared, **save_options)


def save_case(prepared: PreparedCase, lock_timeout: float = 60.0) -> RecordResult:
    """Write the case (or, when its signature is known, an occurrence of the known case), the
    proposal of a novel case, and the regenerated history — all under the knowledge-base lock."""
    case, kb = prepared.case, prepared.kb
    if not case.signature.get("hash"):
        case.refresh_signature()
    _make_dirs(kb)
    with exclusive_lock(kb.lock_file, timeout=lock_timeout):
        removed = remove_stale_temps([kb.path, kb.cases_dir, kb.occurrences_dir, kb.proposals_dir])
        _write_support_files(kb)
        known = load_catalogue(kb, write_cache=False).group_of(case.signature["hash"])
        proposal, promote = "", []
        if known:
            path = os.path.join(kb.occurrences_dir, occurrence_name(known.entry.id, case.recorded_at))
            atomic_write(path, dump_yaml(_occurrence(case, known.entry.id)).encode("utf-8"))
            action, case_id, title = "repeat", known.entry.id, known.entry.title
        else:
            while os.path.exists(os.path.join(kb.cases_dir, f"{case.id}.yaml")):
                assign_id(case)
            path = os.path.join(kb.cases_dir, f"{case.id}.yaml")
            atomic_write(path, case_yaml(case).encode("utf-8"))
            action, case_id, title = "created", case.id, case.title
            if case.novel:
                proposal, promote = _write_proposal(kb, case, prepared.stub)
        catalogue = load_catalogue(kb)
        _write_generated(kb, catalogue)
    groups = catalogue.groups()
    mine = next((g for g in groups if g.entry.id == case_id), None)
    return RecordResult(
        action=action, case_id=case_id, path=path, kb=kb.path, kb_source=kb.source, title=title,
        pattern=case.pattern, phase=case.phase, occurrences=mine.occurrences if mine else 1,
        redactions=prepared.redactions, proposal=proposal, promote=promote, cases=len(groups),
        total_occurrences=sum(g.occurrences for g in groups), removed_temp_files=removed,
        notes=prepared.notes + catalogue.notes, case=case.to_dict())


def case_yaml(case: Case) -> str:
    header = (f"# Case {case.id}, recorded by `npu-graph kb record`. Fields: see CASE_TEMPLATE.md.\n"
              f"# 案例 {case.id}，由 `npu-graph kb record` 记录，字段说明见 CASE_TEMPLATE.md。\n")
    return dump_yaml(case.to_dict(), header)


def _occurrence(case: Case, case_id: str) -> Dict[str, Any]:
    return {"schema": OCCURRENCE_SCHEMA, "case": case_id, "date": case.date, "recorded_at": case.recorded_at,
            "environment": case.environment, "reporter": case.reporter,
            "verification": {"result": case.verification.get("result", "unverified"),
                             "note": case.verification.get("note", "")},
            "error": case.error, "tags": case.tags, "redactions": case.redactions}


def _write_proposal(kb: KbLocation, case: Case, stub: Optional[Dict[str, Any]]) -> "tuple[str, List[Dict[str, str]]]":
    from npu_graph_skill.cases.proposal import build_proposal, promote_steps, proposal_header, proposal_id

    os.makedirs(kb.proposals_dir, exist_ok=True)
    path = os.path.join(kb.proposals_dir, f"{proposal_id(case)}.yaml")
    atomic_write(path, dump_yaml([build_proposal(case, stub)], proposal_header(case)).encode("utf-8"))
    return path, promote_steps(case, path)


def _make_dirs(kb: KbLocation) -> None:
    try:
        for folder in (kb.cases_dir, kb.occurrences_dir):
            os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{kb.path}: cannot create the knowledge base ({exc.strerror or exc}); "
                        "choose another folder with --kb DIR or NPU_GRAPH_KB") from None
    if not os.access(kb.cases_dir, os.W_OK):
        raise UserError(f"{kb.cases_dir}: not writable; choose another folder with --kb DIR or NPU_GRAPH_KB")


def _write_support_files(kb: KbLocation) -> None:
    for name, text in ((".gitignore", GITIGNORE), (".gitattributes", GITATTRIBUTES)):
        path = kb.sub(name)
        if not os.path.exists(path):
            atomic_write(path, text.encode("utf-8"))


def _write_generated(kb: KbLocation, catalogue: Catalogue) -> None:
    for path, text in ((kb.history_file, render_history(catalogue, proposals=_count_proposals(kb))),
                       (kb.template_file, render_template())):
        if _read(path) != text:
            atomic_write(path, text.encode("utf-8"))


def _count_proposals(kb: KbLocation) -> int:
    try:
        return sum(1 for n in os.listdir(kb.proposals_dir) if n.endswith(".yaml") and not n.startswith("."))
    except OSError:
        return 0


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _collect_environment() -> "tuple[Dict[str, Any], str]":
    """This machine's versions via the doctor, when it is there; never fails a record."""
    try:
        from npu_graph_skill.doctor.envinfo import collect_env
    except ImportError:
        return {}, "environment not collected: the doctor's envinfo module is not available"
    try:
        info = collect_env()
    except Exception as exc:  # noqa: BLE001 - a broken environment must not stop a record
        return {}, f"environment not collected: {exc.__class__.__name__}: {exc}"
    data = info.to_dict() if hasattr(info, "to_dict") else info
    flat: Dict[str, Any] = {}
    _flatten(data, "", flat)
    wanted = {"cann": ("cann", "cann_version", "toolkit"), "torch": ("torch", "torch_version", "pytorch"),
              "torch_npu": ("torch_npu", "torch_npu_version"), "python": ("python", "python_version"),
              "device": ("device", "devices", "npu", "soc", "soc_version", "chip"), "driver": ("driver", "driver_version")}
    env: Dict[str, Any] = {}
    for key, aliases in wanted.items():
        for name, value in flat.items():
            if name.rsplit(".", 1)[-1].lower() in aliases and value not in (None, "", [], {}):
                env[key] = value if not isinstance(value, dict) else json.dumps(value, ensure_ascii=False)
                break
    return env, ""


def _flatten(value: Any, prefix: str, out: Dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            name = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict):
                _flatten(v, name, out)
            else:
                out[name] = v


def init_kb(kb_dir: Optional[str] = None) -> KbLocation:
    """Create an empty knowledge base (folders, CASE_TEMPLATE.md, history.md); for the skill installer."""
    kb = resolve_kb_dir(kb_dir)
    _make_dirs(kb)
    with exclusive_lock(kb.lock_file):
        _write_support_files(kb)
        _write_generated(kb, load_catalogue(kb))
    return kb


def rebuild(kb_dir: Optional[str] = None) -> "KbStats":
    """Regenerate history.md, CASE_TEMPLATE.md and the cache from the case files (after a git merge)."""
    kb = resolve_kb_dir(kb_dir)
    if not os.path.isdir(kb.cases_dir):
        raise UserError(f"{kb.path}: no knowledge base here (no cases/ folder)")
    with exclusive_lock(kb.lock_file):
        remove_stale_temps([kb.path, kb.cases_dir, kb.occurrences_dir, kb.proposals_dir])
        _write_support_files(kb)
        _write_generated(kb, load_catalogue(kb))
    return case_stats(kb_dir)


# --------------------------------------------------------------------------------------------
# Reading back.
# --------------------------------------------------------------------------------------------

def list_cases(kb_dir: Optional[str] = None, phase: Optional[str] = None, pattern: Optional[str] = None,
               tag: Optional[str] = None, limit: Optional[int] = None) -> CaseList:
    kb = resolve_kb_dir(kb_dir)
    catalogue = load_catalogue(kb)
    groups = [g for g in catalogue.groups()
              if (not phase or g.entry.phase == phase.lower())
              and (not pattern or g.entry.pattern.upper() == pattern.upper())
              and (not tag or tag in g.entry.tags or tag in g.entry.codes)]
    shown = groups[:limit] if limit else groups
    notes = list(catalogue.notes) + _history_note(kb, catalogue)
    return CaseList(kb=kb.path, kb_source=kb.source, total=len(groups), cases=[_summary(g) for g in shown], notes=notes)


def _summary(group: CaseGroup) -> CaseSummary:
    e = group.entry
    return CaseSummary(id=e.id, date=e.date, last_seen=group.last_seen, title=e.title, phase=e.phase, layer=e.layer,
                       root_layer=e.root_layer, pattern=e.pattern, occurrences=group.occurrences, fix=e.fix_short,
                       verification=e.verification, file=os.path.join("cases", e.file))


def get_case(case_id: str, kb_dir: Optional[str] = None) -> CaseView:
    """A case by id or unique id prefix (`C-20251130-3f9a`), with its repeats."""
    kb = resolve_kb_dir(kb_dir)
    catalogue = load_catalogue(kb)
    wanted = case_id.strip()
    if wanted.endswith(".yaml"):
        wanted = os.path.basename(wanted)[:-5]
    matches = [e for e in catalogue.entries if e.id == wanted] or [e for e in catalogue.entries if e.id.startswith(wanted)]
    if not matches:
        raise UserError(f"no case '{case_id}' in {kb.path} (see `npu-graph kb list`)")
    if len(matches) > 1:
        raise UserError(f"'{case_id}' matches {len(matches)} cases ({', '.join(e.id for e in matches[:5])}); give more of the id")
    return _view(kb, catalogue, matches[0])


def _view(kb: KbLocation, catalogue: Catalogue, entry: Any) -> CaseView:
    group = next(g for g in catalogue.groups() if g.entry.id == entry.id or entry.id in g.duplicates)
    path = os.path.join(kb.cases_dir, entry.file)
    data = load_yaml(_read(path), entry.file)
    members = [group.entry.id] + group.duplicates
    seen: List[Dict[str, Any]] = []
    for member in members:
        for name in sorted(catalogue.occurrence_files.get(member, [])):
            try:
                record = load_yaml(_read(os.path.join(kb.occurrences_dir, name)), name)
            except CaseError:
                continue
            if isinstance(record, dict):
                seen.append({k: record.get(k) for k in ("date", "recorded_at", "environment", "reporter", "verification")})
    seen.sort(key=lambda r: str(r.get("recorded_at") or ""))
    suffix = entry.id.rsplit("-", 1)[-1]
    try:
        proposal = next((os.path.join(kb.proposals_dir, n) for n in sorted(os.listdir(kb.proposals_dir))
                         if n.endswith(f"-NEW-{suffix}.yaml")), "")
    except OSError:
        proposal = ""
    return CaseView(case=data if isinstance(data, dict) else {}, path=path, occurrences=group.occurrences, seen=seen,
                    duplicates=[m for m in members if m != entry.id], proposal=proposal)


def case_stats(kb_dir: Optional[str] = None) -> KbStats:
    kb = resolve_kb_dir(kb_dir)
    catalogue = load_catalogue(kb)
    groups = catalogue.groups()

    def table(key: str) -> Dict[str, Dict[str, int]]:
        return {value: {"cases": cases, "occurrences": occ} for value, cases, occ in count_by(groups, key)}

    verification: Dict[str, int] = {}
    for group in groups:
        result = group.entry.verification or "unverified"
        verification[result] = verification.get(result, 0) + 1
    exists = os.path.isdir(kb.cases_dir)
    current = history_is_current(_read(kb.history_file), catalogue) if exists else True
    return KbStats(kb=kb.path, kb_source=kb.source, cases=len(groups), occurrences=sum(g.occurrences for g in groups),
                   by_phase=table("phase"), by_layer=table("layer"), by_pattern=table("pattern"),
                   novel=sum(1 for g in groups if g.entry.pattern == "NEW"), proposals=_count_proposals(kb),
                   verification=verification, history_current=current, exists=exists,
                   notes=list(catalogue.notes) + ([] if current else _history_note(kb, catalogue)))


def _history_note(kb: KbLocation, catalogue: Catalogue) -> List[str]:
    if not os.path.isdir(kb.cases_dir) or history_is_current(_read(kb.history_file), catalogue):
        return []
    return ["history.md does not match the case files (a merge or a hand edit): run `npu-graph kb rebuild`"]


def export_cases(out: str, kb_dir: Optional[str] = None, fmt: Optional[str] = None) -> ExportResult:
    """All cases with their repeats into one JSON or YAML file, or the knowledge-base files into a zip."""
    fmt = (fmt or _format_of(out)).lower()
    if fmt not in ("json", "yaml", "zip"):
        raise UserError(f"{out}: unknown export format '{fmt}' (use .json, .yaml or .zip, or --format)")
    folder = os.path.dirname(os.path.abspath(out))
    if os.path.isdir(out):
        raise UserError(f"{out}: is a directory, expected a file name")
    if not os.path.isdir(folder):
        raise UserError(f"{out}: folder {folder} does not exist")
    kb = resolve_kb_dir(kb_dir)
    catalogue = load_catalogue(kb)
    data = _zip_bytes(kb) if fmt == "zip" else export_text(kb, catalogue, fmt).encode("utf-8")
    try:
        atomic_write(out, data)
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    groups = catalogue.groups()
    return ExportResult(path=out, format=fmt, cases=len(groups), occurrences=sum(g.occurrences for g in groups))


def export_text(kb: KbLocation, catalogue: Catalogue, fmt: str) -> str:
    """The JSON or YAML export as text (for a file, or for stdout)."""
    cases = []
    for group in catalogue.groups():
        view = _view(kb, catalogue, group.entry)
        cases.append({**view.case, "occurrences": view.occurrences, "seen": view.seen, "duplicates": view.duplicates})
    payload = {"schema": EXPORT_SCHEMA, "cases_count": len(cases),
               "occurrences": sum(c["occurrences"] for c in cases), "cases": cases}
    if fmt == "json":
        return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"
    return dump_yaml(payload)


def _format_of(out: str) -> str:
    ext = os.path.splitext(out)[1].lower().lstrip(".")
    return {"yml": "yaml"}.get(ext, ext or "json")


def _zip_bytes(kb: KbLocation) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in (".gitignore", ".gitattributes", "CASE_TEMPLATE.md", "history.md"):
            if os.path.isfile(kb.sub(name)):
                archive.write(kb.sub(name), f"kb/{name}")
        for folder in ("cases", "occurrences", "proposals"):
            try:
                names = sorted(os.listdir(kb.sub(folder)))
            except OSError:
                continue
            for name in names:
                if name.endswith(".yaml") and not name.startswith("."):
                    archive.write(kb.sub(folder, name), f"kb/{folder}/{name}")
    return buffer.getvalue()


def search_cases(query: str, **options: Any):
    """Cases ranked by similarity to a question or an error text (see `cases.search`)."""
    from npu_graph_skill.cases.search import search_cases as run

    return run(query, **options)


def similar_cases(report: Dict[str, Any], **options: Any):
    from npu_graph_skill.cases.search import similar_cases as run

    return run(report, **options)
