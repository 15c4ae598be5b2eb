"""The documented finding ids of the log analyzer (`knowledge/log_findings.yaml`), loaded and checked."""
from __future__ import annotations

import functools
import pathlib
from typing import Any, Dict

FINDINGS_FILE = pathlib.Path(__file__).resolve().parent.parent / "knowledge" / "log_findings.yaml"
REQUIRED = ("id", "family", "title", "description", "rule", "sources")


class FindingsError(ValueError):
    """log_findings.yaml is malformed."""


@functools.lru_cache(maxsize=1)
def load_findings() -> Dict[str, Dict[str, Any]]:
    """id → entry. Raises FindingsError when an entry is incomplete or an id repeats."""
    import yaml  # deferred: only reports that show titles pay for it

    with open(FINDINGS_FILE, encoding="utf-8") as handle:
        entries = yaml.safe_load(handle) or []
    found: Dict[str, Dict[str, Any]] = {}
    for entry in entries:
        missing = [key for key in REQUIRED if not entry.get(key)]
        if missing:
            raise FindingsError(f"{FINDINGS_FILE.name}: {entry.get('id', '?')} lacks {', '.join(missing)}")
        ident = entry["id"]
        if ident in found:
            raise FindingsError(f"{FINDINGS_FILE.name}: {ident} appears twice")
        if not ident.startswith(entry["family"] + "-"):
            raise FindingsError(f"{FINDINGS_FILE.name}: {ident} is not in family {entry['family']}")
        for key in ("title", "description"):
            if not (isinstance(entry[key], dict) and entry[key].get("en") and entry[key].get("zh")):
                raise FindingsError(f"{FINDINGS_FILE.name}: {ident} {key} needs en and zh")
        found[ident] = entry
    return found


def title(finding_id: str, lang: str) -> str:
    try:
        entry = load_findings().get(finding_id)
    except (OSError, FindingsError):
        entry = None
    if not entry:
        return finding_id
    return entry["title"].get(lang) or entry["title"]["en"]
