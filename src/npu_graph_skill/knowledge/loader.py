"""Load and validate the knowledge base: patterns, constraints, error codes, code roles, messages.

YAML is parsed once and kept in the user's cache folder (`core.cache`), keyed by a digest of the
files, so a diagnosis does not pay for a YAML parse (or even `import yaml`) on every start. A cache
that cannot be written is simply skipped.
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from npu_graph_skill import __version__
from npu_graph_skill.core import cache
from npu_graph_skill.core.model import Record
from npu_graph_skill.knowledge import prefilter
from npu_graph_skill.knowledge.schema import (
    Constraint, ContextSign, KnowledgeError, Pattern, check_matcher_regex, parse_constraint, parse_context_sign,
    parse_pattern, refuse_unsafe_regex,
)

KNOWLEDGE_DIR = Path(__file__).resolve().parent
YAML_SOURCES = ("patterns/*.yaml", "constraints.yaml", "codes/roles.yaml", "context_signs.yaml", "lint_rules.yaml")
CACHE_SCHEMA = "2"  # 2: a cached file has passed the matcher regex safety check


@dataclasses.dataclass
class CodeEntry(Record):
    """One error code of any family, with where the fact comes from."""

    code: str
    kind: str  # acl runtime ge hccl aclnn driver inner ecode pta
    name: str
    meaning: str
    graph_mode: str
    source: str
    family: str = ""
    hex: str = ""
    role: str = "decisive"  # decisive | wrapper | consequence | noisy
    role_why: Dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class MessageEntry(Record):
    """A torch_npu graph-mode message with its raise site (rebuilt from the shared messages table)."""

    id: str
    regex: str
    example: str
    repo: str
    file: str
    line: str
    message_line: str
    version: str
    line_v73: str
    function: str
    phase: str
    layer: str
    kind: str
    condition: str
    error_code: str
    surface: str
    notes: str
    _compiled: Any = dataclasses.field(default=None, repr=False, compare=False)

    def literals(self) -> Optional[List[str]]:
        """Texts one of which the message must contain (see `prefilter`)."""
        return prefilter.literals(self.regex)

    def specificity(self) -> int:
        literals = self.literals()
        return max((len(x) for x in literals), default=0) if literals else 0

    def pattern(self) -> "re.Pattern[str]":
        if self._compiled is None:
            self._compiled = re.compile(self.regex, re.IGNORECASE)
        return self._compiled

    def raise_site(self) -> str:
        line = self.line or (f"{self.line_v73}@v7.3.0" if self.line_v73 else "?")
        return f"{self.repo} {self.file}:{line}"

    def to_dict(self) -> Dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if not f.name.startswith("_")}
        return data


class Knowledge:
    """Everything the engine knows, validated, with the lookups the capabilities need."""

    def __init__(self, patterns: List[Pattern], constraints: List[Constraint], codes: List[CodeEntry],
                 messages: List[MessageEntry], digest: str = "", signs: Optional[List[ContextSign]] = None) -> None:
        self.digest = digest  # of the files it was built from; keys data derived from them
        self.signs = signs or []  # context signs: framework functions, progress lines, settings → phase
        self.patterns = patterns
        self.constraints = constraints
        self.codes = codes
        self.messages = messages
        self._patterns_by_id = {p.id: p for p in patterns}
        self._codes_by_key: Dict[str, List[CodeEntry]] = {}
        for entry in codes:
            self._codes_by_key.setdefault(entry.code.upper(), []).append(entry)

    def pattern(self, pattern_id: str) -> Optional[Pattern]:
        return self._patterns_by_id.get(pattern_id.strip().upper())

    def codes_for(self, key: str) -> List[CodeEntry]:
        return self._codes_by_key.get(key.upper(), [])

    def role_of(self, code: str) -> str:
        entries = self.codes_for(code)
        return entries[0].role if entries else "decisive"


# --------------------------------------------------------------------------------------------
# Raw data: YAML through the cache, CSV directly.
# --------------------------------------------------------------------------------------------

def _yaml_files(root: Path) -> List[Path]:
    files: List[Path] = []
    for pattern in YAML_SOURCES:
        files.extend(sorted(root.glob(pattern)))
    return files


def _digest(files: List[Path]) -> str:
    h = hashlib.sha1(f"{__version__}/{CACHE_SCHEMA}".encode())
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _load_yaml(path: Path) -> Any:
    import yaml  # deferred: only paid when the cache is cold

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as handle:
        try:
            return yaml.load(handle, Loader=loader)
        except yaml.YAMLError as exc:
            raise KnowledgeError(f"{path.name}: invalid YAML ({str(exc).splitlines()[0]})") from None


def load_raw_yaml(root: Path = KNOWLEDGE_DIR, validate: Optional[Callable[[Dict[str, Any]], Any]] = None) -> Dict[str, Any]:
    """{relative path: parsed YAML} for every knowledge YAML file, from the cache when it is fresh.

    Freshly parsed files are checked before they are cached (`validate`, by default `check_fresh`), so
    a file that fails is never cached and a warm cache holds only files that passed."""
    files = _yaml_files(root)
    digest = _digest(files)
    raw = cache.read("knowledge-", digest)
    if isinstance(raw, dict):
        return raw
    raw = {str(path.relative_to(root)): _load_yaml(path) for path in files}
    (validate or check_fresh)(raw)
    cache.write("knowledge-", digest, raw)
    return raw


def _read_csv(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _codes(root: Path, roles: Dict[str, Any]) -> List[CodeEntry]:
    role_of: Dict[str, tuple] = {}
    for role, entries in (roles or {}).items():
        for entry in entries or []:
            role_of[str(entry["code"]).upper()] = (role, entry.get("why") or {})
    entries: List[CodeEntry] = []
    for row in _read_csv(root / "codes" / "numeric.csv"):
        entries.append(CodeEntry(code=row["code"], kind=row["kind"], name=row["name"], meaning=row["meaning"],
                                 graph_mode=row["graph_mode"], source=row["source"], family=row["family"], hex=row["hex"]))
    for row in _read_csv(root / "codes" / "ecodes.csv"):
        entries.append(CodeEntry(code=row["code"], kind="ecode", name=row["component"], meaning=row["meaning"],
                                 graph_mode=row["graph_mode"], source=row["source"], family=row["component"]))
    for row in _read_csv(root / "codes" / "pta.csv"):
        entries.append(CodeEntry(code=row["code"], kind="pta", name=f"{row['submodule']} {row['name']}",
                                 meaning=row["meaning"], graph_mode=row["graph_mode"], source=row["source"],
                                 family=f"torch_npu {row['submodule']}", hex=row["text"]))
    for entry in entries:
        if entry.code.upper() in role_of:
            entry.role, entry.role_why = role_of[entry.code.upper()]
    return entries


def _messages(root: Path) -> List[MessageEntry]:
    return [MessageEntry(id=r["id"], regex=r["message_regex"], example=r["message_example"], repo=r["repo"],
                         file=r["file"], line=r["line"], message_line=r["message_line"], version=r["version"],
                         line_v73=r["line_v7.3.0"], function=r["function"], phase=r["phase"], layer=r["layer"],
                         kind=r["kind"], condition=r["condition"], error_code=r["error_code"], surface=r["surface"],
                         notes=r["notes"])
            for r in _read_csv(root / "messages.csv")]


def _parse_patterns(raw: Dict[str, Any], strict: bool) -> List[Pattern]:
    patterns: List[Pattern] = []
    for name in sorted(k for k in raw if k.startswith("patterns")):
        entries = raw[name] or []
        if not isinstance(entries, list):
            raise KnowledgeError(f"{name}: must be a list of patterns")
        patterns.extend(parse_pattern(entry, name, strict=strict) for entry in entries)
    return patterns


def check_fresh(raw: Dict[str, Any]) -> List[Pattern]:
    """Freshly parsed knowledge: every matcher regex compiled and refused when it can backtrack
    catastrophically (`parse_pattern`, strict), the context signs' regexes too. The parsed patterns."""
    patterns = _parse_patterns(raw, strict=False)  # not compiled: a normal run compiles on demand
    for pattern in patterns:
        for matcher in pattern.matchers:
            check_matcher_regex(f"{pattern.source_file}: {pattern.id}", matcher)
    for entry in raw.get("context_signs.yaml") or []:
        for key in ("regex", "function_regex", "file"):
            expression = str(entry.get(key) or "") if isinstance(entry, dict) else ""
            if expression:  # refused before the file is cached: a warm run compiles signs on demand
                refuse_unsafe_regex(f"context_signs.yaml: {entry.get('id')}", expression, key)
    return patterns


def check_messages(messages: List["MessageEntry"]) -> None:
    """Every message regex compiles and cannot backtrack catastrophically."""
    for entry in messages:
        refuse_unsafe_regex(f"messages.csv: {entry.id}", entry.regex)


def build_knowledge(root: Path = KNOWLEDGE_DIR, strict: bool = False) -> Knowledge:
    """`strict` also compiles every regex and checks the message table's (the knowledge tests do). Matcher
    regexes are compiled and checked for catastrophic backtracking whenever the YAML is parsed afresh
    (a warm cache holds only files that passed); a normal run then compiles them on demand."""
    fresh: List[List[Pattern]] = []
    raw = load_raw_yaml(root, validate=lambda parsed: fresh.append(check_fresh(parsed)))
    patterns = fresh[0] if fresh else _parse_patterns(raw, strict)
    seen = set()
    for pattern in patterns:
        if pattern.id in seen:
            raise KnowledgeError(f"{pattern.source_file}: duplicate pattern id {pattern.id}")
        seen.add(pattern.id)
    constraints = [parse_constraint(c, "constraints.yaml", seen) for c in raw.get("constraints.yaml") or []]
    codes = _codes(root, raw.get(os.path.join("codes", "roles.yaml")) or {})
    signs = [parse_context_sign(entry, "context_signs.yaml", compile_regex=strict)
             for entry in raw.get("context_signs.yaml") or []]
    if len({sign.id for sign in signs}) != len(signs):
        raise KnowledgeError("context_signs.yaml: duplicate sign ids")
    digest = _digest(_yaml_files(root) + [root / "messages.csv"])
    messages = _messages(root)
    if strict:
        check_messages(messages)
    knowledge = Knowledge(patterns, constraints, codes, messages, digest=digest, signs=signs)
    if cache.enabled():  # computed for all at once only when kept for the next process; else on demand
        prefilter.seed(derived(knowledge, f"literals{prefilter.VERSION}", lambda: prefilter.table(_regexes(knowledge))))
    knowledge.lint = _lint_config(raw, seen)  # validated with everything else; used by `npu-graph lint`
    return knowledge


def _regexes(knowledge: Knowledge) -> List[str]:
    """Every regex a diagnosis may test against the input: matchers, messages, context signs."""
    found = [m.regex for p in knowledge.patterns for m in p.matchers if m.regex]
    found += [m.regex for m in knowledge.messages]
    return found + [sign.regex for sign in knowledge.signs if sign.regex]


def derived(knowledge: Knowledge, name: str, compute: Callable[[], Any]) -> Any:
    """Data computed from the knowledge (e.g. the messages' word signatures), cached under the
    knowledge's digest, so a diagnosis does not recompute it."""
    prefix = f"{name}-"
    data = cache.read(prefix, knowledge.digest) if knowledge.digest else cache.MISSING
    if data is cache.MISSING:
        data = compute()
        if knowledge.digest:
            cache.write(prefix, knowledge.digest, data)
    return data


def _lint_config(raw: Dict[str, Any], pattern_ids: set):
    from npu_graph_skill.knowledge.lint_schema import parse_lint_config

    return parse_lint_config(raw.get("lint_rules.yaml"), "lint_rules.yaml", pattern_ids)


_LINT = None


def load_lint_config(root: Path = KNOWLEDGE_DIR):
    """The lint rules and region definitions, validated against the pattern ids (without the code tables)."""
    global _LINT
    if _LINT is None or root != KNOWLEDGE_DIR:
        raw = load_raw_yaml(root)
        ids = {str(p.get("id")) for name, entries in raw.items() if name.startswith("patterns")
               for p in entries or [] if isinstance(p, dict)}
        config = _lint_config(raw, ids)
        if root != KNOWLEDGE_DIR:
            return config
        _LINT = config
    return _LINT


_KNOWLEDGE: Optional[Knowledge] = None


def load_knowledge() -> Knowledge:
    """The process-wide knowledge base (built once)."""
    global _KNOWLEDGE
    if _KNOWLEDGE is None:
        _KNOWLEDGE = build_knowledge()
    return _KNOWLEDGE
