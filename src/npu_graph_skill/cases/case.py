"""A recorded case: the fields of CASE_TEMPLATE.md, built from a diagnosis report, validated, and
written as YAML that reads well in a review (multi-line text as literal blocks).
"""
from __future__ import annotations

import dataclasses
import datetime
import hashlib
import os
import re
from typing import Any, Dict, Iterable, List, Optional

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.model import Phase, Record
from npu_graph_skill.cases.signature import NEW, PATTERN_ID_RE, decisive_part, matched_pattern, report_codes, signature

CASE_SCHEMA = "npu-graph-skill/case/1"
VERIFICATION_RESULTS = ("passed", "failed", "unverified")
MAX_SYMPTOM_LINES = 60

CASE_ID_RE = re.compile(r"^C-\d{8}-[0-9a-f]{8}$")
_LAYER_RE = re.compile(r"^L[1-4]$")

# Report keys of versions → the environment keys of a case.
_ENV_ALIASES = {
    "cann": "cann", "cann_version": "cann", "toolkit": "cann", "ascend_toolkit": "cann",
    "torch": "torch", "pytorch": "torch", "torch_version": "torch",
    "torch_npu": "torch_npu", "torchnpu": "torch_npu", "pta": "torch_npu", "torch_npu_version": "torch_npu",
    "python": "python", "python_version": "python", "py": "python",
    "device": "device", "hardware": "device", "npu": "device", "soc": "device", "soc_version": "device", "chip": "device",
    "driver": "driver", "driver_version": "driver", "firmware": "firmware",
}
ENV_KEYS = ("cann", "torch", "torch_npu", "python", "device", "driver")


class CaseError(UserError):
    """A case that does not validate (after `--edit`, or a broken report)."""


@dataclasses.dataclass
class Case(Record):
    """One failure met in the field, with what was found and done about it."""

    schema: str = CASE_SCHEMA
    id: str = ""
    date: str = ""  # local date of the first record, YYYY-MM-DD
    recorded_at: str = ""  # UTC, ISO 8601
    title: str = ""
    pattern: str = NEW  # the known pattern it matched, or NEW
    phase: str = Phase.UNKNOWN.value
    layer: Dict[str, Any] = dataclasses.field(default_factory=dict)  # detected, root, function, file, line
    fix_in: str = ""
    confidence: float = 0.0
    error: str = ""  # the decisive error line, verbatim
    symptom: str = ""  # the lines the user saw, verbatim
    environment: Dict[str, str] = dataclasses.field(default_factory=dict)
    root_cause: Dict[str, str] = dataclasses.field(default_factory=dict)  # direct, trigger, scope
    fix: Dict[str, Any] = dataclasses.field(default_factory=dict)  # short_term, long_term, locations
    verification: Dict[str, Any] = dataclasses.field(default_factory=dict)  # steps, result, note
    codes: List[str] = dataclasses.field(default_factory=list)
    anchors: List[str] = dataclasses.field(default_factory=list)
    tags: List[str] = dataclasses.field(default_factory=list)
    reporter: str = ""
    notes: str = ""
    signature: Dict[str, str] = dataclasses.field(default_factory=dict)  # pattern, message, hash
    redactions: Dict[str, int] = dataclasses.field(default_factory=dict)
    lang: str = "en"

    @property
    def novel(self) -> bool:
        return self.pattern == NEW

    def refresh_signature(self) -> None:
        self.signature = signature(self.pattern, self.error or _first_line(self.symptom) or self.title, self.codes)

    def location(self) -> str:
        """`NPUGraph::capture_begin torch_npu/csrc/core/npu/NPUGraph.cpp:270`, as far as known."""
        file = self.layer.get("file") or ""
        line = self.layer.get("line") or ""
        where = f"{file}:{line}" if file and line else file
        return " ".join(p for p in (self.layer.get("function") or "", where) if p)


# --------------------------------------------------------------------------------------------
# From a diagnosis report.
# --------------------------------------------------------------------------------------------

def build_case(report: Dict[str, Any], symptom: Optional[str] = None, environment: Optional[Dict[str, Any]] = None,
               tags: Iterable[str] = (), reporter: str = "", title: Optional[str] = None,
               verification_result: Optional[str] = None, verification_note: str = "",
               now: Optional[datetime.datetime] = None) -> Case:
    """A diagnosis (`Diagnosis.to_dict()`) → a case, before redaction. `symptom` is the original
    input text when the caller has it; else the quoted lines of the report stand in for it."""
    if not isinstance(report, dict):
        raise CaseError("a case is recorded from a diagnosis report (a JSON object from `npu-graph diagnose --json`)")
    error = str(report.get("error") or "").strip()
    root_cause = _str_dict(report.get("root_cause"))
    if not (error or root_cause.get("direct") or report.get("candidates")):
        raise CaseError("the report has no error line, root cause or candidate: nothing to record "
                        "(produce it with `npu-graph diagnose FILE --json`)")
    if verification_result and verification_result not in VERIFICATION_RESULTS:
        raise CaseError(f"verification result must be one of {', '.join(VERIFICATION_RESULTS)}")
    now = now or datetime.datetime.now().astimezone()
    summary = report.get("evidence_summary") if isinstance(report.get("evidence_summary"), dict) else {}
    pattern = matched_pattern(report)
    codes = report_codes(summary)
    case = Case(
        date=now.strftime("%Y-%m-%d"),
        recorded_at=now.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        title=(title or _title(report, pattern, error)).strip(),
        pattern=pattern,
        phase=Phase.parse(report.get("phase") or "unknown").value,
        layer=_layer(report),
        fix_in=str(report.get("fix_in") or ""),
        confidence=_float(report.get("confidence")),
        error=error,
        symptom=_symptom(symptom, report),
        environment=_environment(summary, environment),
        root_cause=root_cause,
        fix=_fix(report.get("fix")),
        verification={"steps": _str_list(report.get("verification")),
                      "result": verification_result or "unverified", "note": verification_note},
        codes=codes,
        anchors=_str_list(report.get("anchors"))[:10],
        tags=_tags(tags, report, codes),
        reporter=reporter,
        lang=str(report.get("lang") or "en"),
    )
    return case


def assign_id(case: Case) -> None:
    """`C-<date>-<8 hex>`: the date for people, the hash so that two people never pick the same name."""
    salt = f"{case.signature.get('hash', '')}|{case.recorded_at}|{os.getpid()}|{os.urandom(8).hex()}"
    case.id = f"C-{case.date.replace('-', '')}-{hashlib.sha1(salt.encode()).hexdigest()[:8]}"


def _title(report: Dict[str, Any], pattern: str, error: str) -> str:
    if pattern != NEW:
        for cand in report.get("candidates") or []:
            if isinstance(cand, dict) and cand.get("id") == pattern and cand.get("title"):
                return str(cand["title"])
    text = decisive_part(error) or _str_dict(report.get("root_cause")).get("direct", "") or "unnamed case"
    return text if len(text) <= 100 else text[:97].rstrip() + "..."


def _symptom(symptom: Optional[str], report: Dict[str, Any]) -> str:
    if symptom and symptom.strip():
        lines = symptom.strip("\n").splitlines()
    else:
        lines = [str(report.get("error") or "")]
        for cand in (report.get("candidates") or [])[:3]:
            if isinstance(cand, dict):
                lines.extend(str(e) for e in cand.get("evidence") or [])
        lines = list(dict.fromkeys(line for line in lines if line.strip()))
    if len(lines) > MAX_SYMPTOM_LINES:  # a traceback's end carries the error: keep the head and the tail
        omitted = len(lines) - MAX_SYMPTOM_LINES
        lines = lines[:10] + [f"... ({omitted} lines omitted)"] + lines[-(MAX_SYMPTOM_LINES - 10):]
    return "\n".join(line.rstrip() for line in lines)


_ANCHOR_RE = re.compile(r"(?P<file>[\w./+-]+\.\w+):(?P<line>\d+)")


def _layer(report: Dict[str, Any]) -> Dict[str, Any]:
    """Where it was detected and where the cause lies, with the deepest located function and file:line."""
    layer: Dict[str, Any] = {"detected": _layer_name(report.get("layer")), "root": _layer_name(report.get("root_layer")),
                             "function": "", "file": "", "line": ""}
    for step in reversed(report.get("drill_down") or []):  # deepest first: the raise site or the ACL call
        if not isinstance(step, dict):
            continue
        file, line = step.get("file"), step.get("line")
        found = None if file and line else _ANCHOR_RE.search(str(step.get("where") or step.get("location") or ""))
        if found:
            file, line = found.group("file"), found.group("line")
        if file and line:
            layer.update(function=str(step.get("function") or step.get("symbol") or ""), file=str(file), line=_line(line))
            return layer
    places = list((_fix(report.get("fix")).get("locations") or [])) + _str_list(report.get("anchors"))
    for place in places:
        if isinstance(place, dict) and place.get("file"):
            layer.update(function=str(place.get("function") or ""), file=str(place["file"]), line=_line(place.get("line")))
            return layer
        found = _ANCHOR_RE.search(str(place))
        if found:
            layer.update(file=found.group("file"), line=int(found.group("line")))
            return layer
    return layer


def _layer_name(value: Any) -> str:
    text = str(value or "").strip().upper()[:2]
    return text if _LAYER_RE.match(text) else ""


def _line(value: Any) -> Any:
    text = str(value or "").split("-")[0]
    return int(text) if text.isdigit() else str(value or "")


def _environment(summary: Dict[str, Any], extra: Optional[Dict[str, Any]]) -> Dict[str, str]:
    env: Dict[str, str] = {}
    versions = summary.get("versions") if isinstance(summary.get("versions"), dict) else {}
    for key, value in list(versions.items()) + list((extra or {}).items()):
        if value in (None, "", [], {}):
            continue
        norm = str(key).strip().lower().replace("-", "_").replace(" ", "_")
        norm = _ENV_ALIASES.get(norm, norm)
        env[norm] = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    hardware = summary.get("hardware")
    if hardware and "device" not in env:
        env["device"] = ", ".join(map(str, hardware)) if isinstance(hardware, (list, tuple)) else str(hardware)
    ordered = {k: env[k] for k in ENV_KEYS if k in env}
    ordered.update((k, v) for k, v in sorted(env.items()) if k not in ordered)
    return ordered


def _fix(value: Any) -> Dict[str, Any]:
    if not isinstance(value, dict):
        return {"short_term": str(value or ""), "long_term": "", "locations": []}
    fix = dict(value)
    fix.setdefault("short_term", "")
    fix.setdefault("long_term", "")
    fix["locations"] = list(fix.get("locations") or [])
    return fix


def _tags(tags: Iterable[str], report: Dict[str, Any], codes: List[str]) -> List[str]:
    out: List[str] = []
    for tag in list(tags) + [str(report.get("phase") or "").lower()] + codes[:5] + (["novel"] if report.get("novel") else []):
        for part in str(tag).split(","):
            part = part.strip()
            if part and part != "unknown" and part not in out:
                out.append(part)
    return out


def _str_dict(value: Any) -> Dict[str, str]:
    if isinstance(value, dict):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    return {"direct": str(value)} if value else {}


def _str_list(value: Any) -> List[str]:
    if not value:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v.get("text") or v) if isinstance(v, dict) else str(v) for v in value]
    return [str(value)]


def _float(value: Any) -> float:
    try:
        return round(float(value), 3)
    except (TypeError, ValueError):
        return 0.0


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line
    return ""


# --------------------------------------------------------------------------------------------
# Validation and YAML.
# --------------------------------------------------------------------------------------------

FIELDS = tuple(f.name for f in dataclasses.fields(Case))


def validate(data: Any) -> List[str]:
    """Problems of a case as a user would fix them (one line each); empty when it is valid."""
    if not isinstance(data, dict):
        return ["a case is a YAML mapping of fields (see CASE_TEMPLATE.md)"]
    problems = [f"unknown field '{k}' (known: {', '.join(FIELDS)})" for k in data if k not in FIELDS]
    if data.get("id") and not CASE_ID_RE.match(str(data["id"])):
        problems.append(f"id '{data['id']}' is not of the form C-YYYYMMDD-xxxxxxxx")
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", str(data.get("date") or "")):
        problems.append("date must be YYYY-MM-DD")
    if not str(data.get("title") or "").strip():
        problems.append("title is empty")
    if str(data.get("phase") or "") not in {p.value for p in Phase}:
        problems.append(f"phase must be one of {', '.join(p.value for p in Phase)}")
    if not PATTERN_ID_RE.match(str(data.get("pattern") or "")):
        problems.append("pattern must be a pattern id (P-CAP-001) or NEW")
    for key in ("layer", "environment", "root_cause", "fix", "verification", "signature", "redactions"):
        if key in data and data[key] is not None and not isinstance(data[key], dict):
            problems.append(f"{key} must be a mapping")
    for key in ("codes", "anchors", "tags"):
        if key in data and data[key] is not None and not isinstance(data[key], list):
            problems.append(f"{key} must be a list")
    layer = data.get("layer") if isinstance(data.get("layer"), dict) else {}
    for key in ("detected", "root"):
        if layer.get(key) and not _LAYER_RE.match(str(layer[key])):
            problems.append(f"layer.{key} must be L1, L2, L3 or L4")
    verification = data.get("verification") if isinstance(data.get("verification"), dict) else {}
    if verification.get("result") and verification["result"] not in VERIFICATION_RESULTS:
        problems.append(f"verification.result must be one of {', '.join(VERIFICATION_RESULTS)}")
    if not (str(data.get("error") or "").strip() or str(data.get("symptom") or "").strip()):
        problems.append("error and symptom are both empty: quote what the user saw")
    return problems


def case_from_dict(data: Any) -> Case:
    problems = validate(data)
    if problems:
        raise CaseError("invalid case: " + "; ".join(problems))
    values = {k: v for k, v in data.items() if v is not None}
    for key in ("title", "error", "symptom", "reporter", "notes", "fix_in"):
        if key in values:
            values[key] = str(values[key]).strip("\n") if key == "symptom" else str(values[key]).strip()
    values["date"] = str(values["date"])
    values["confidence"] = _float(values.get("confidence"))
    values["codes"] = [str(c) for c in values.get("codes") or []]
    values["tags"] = [str(t) for t in values.get("tags") or []]
    values["anchors"] = [str(a) for a in values.get("anchors") or []]
    return Case(**values)


def dump_yaml(data: Any, header: str = "") -> str:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value and not any(c in value for c in "\t\r") and value == value.rstrip(" ") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    body = yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=110, default_flow_style=False)
    return header + body


def load_yaml(text: str, name: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise CaseError(f"{name}: not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
