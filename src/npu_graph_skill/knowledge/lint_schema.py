"""The shape of a lint rule (knowledge/lint_rules.yaml) and the checks that make a broken one a test failure.

A rule is data in the ruff/semgrep sense: a stable id, the failure pattern it prevents, one or more
checks of a kind the engine offers (CHECK_KINDS) with their names filled in, bilingual texts, a bad
and a good example, and where the constraint comes from. The engine in `lint/` knows the kinds,
never a single rule.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.model import Record
from npu_graph_skill.knowledge.schema import KnowledgeError, _anchor, _bilingual

RULE_ID = re.compile(r"^NGL\d{3}$")
CERTAINTIES = ("certain", "likely")
SCOPES = ("capture", "module")  # capture: inside captured regions and what they call; module: anywhere

# kind → (the scope it runs in, the parameters it accepts). A parameter list names what the engine reads.
CHECK_KINDS: Dict[str, tuple] = {
    "call": ("capture", ("functions", "methods", "max_args", "argument", "nonliteral_args", "exclude_receivers")),
    "tensor_condition": ("capture", ("methods", "functions", "compared_methods", "compared_functions")),
    "mask_index": ("capture", ("mask_functions", "mask_methods")),
    "scalar_index": ("capture", ("functions", "methods")),
    "env_set": ("module", ("variables",)),
    "capture_stream": ("module", ("begin_methods",)),
    "warmup": ("module", ("accept_calls",)),
    "compiled_output_reuse": ("module", ("clone_methods",)),
    "static_output_kept": ("module", ("replay_methods", "keep_methods", "clone_methods")),
    "event_crossing": ("module", ("record_methods", "wait_methods", "wait_event_methods")),
    "side_stream": ("module", ("require", "sync_methods")),
}
REGION_KEYS = ("graph_contexts", "capture_calls", "graphed_callables", "compiled", "decorators", "bases", "guards",
               "custom_ops", "pragma")


@dataclasses.dataclass
class Check(Record):
    kind: str
    params: Dict[str, Any]


@dataclasses.dataclass
class LintRule(Record):
    id: str
    name: str
    pattern: str
    certainty: str
    scope: str
    checks: List[Check]
    message: Dict[str, str]
    why: Dict[str, str]
    fix: Dict[str, str]
    false_alarms: Dict[str, str]
    bad: str
    good: str
    anchors: List[Dict[str, str]]
    references: List[Dict[str, str]]
    default: bool = True  # False: runs only when selected (--select), for noisy rules

    def anchor_strings(self) -> List[str]:
        from npu_graph_skill.knowledge.schema import format_anchor

        return [format_anchor(a) for a in self.anchors]


@dataclasses.dataclass
class LintConfig(Record):
    """Everything the engine reads from lint_rules.yaml: names, regions, streams and the rules."""

    namespaces: Dict[str, str]
    regions: Dict[str, Any]
    streams: Dict[str, List[str]]
    rules: List[LintRule]

    def rule(self, rule_id: str) -> Optional[LintRule]:
        wanted = rule_id.strip().upper()
        return next((r for r in self.rules if r.id == wanted), None)


def _strings(where: str, value: Any, name: str) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise KnowledgeError(f"{where}: '{name}' must be a list of names")
    return list(value)


def _regex(where: str, value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise KnowledgeError(f"{where}: '{name}' must be a regular expression")
    try:
        re.compile(value)
    except re.error as exc:
        raise KnowledgeError(f"{where}: bad regex {value!r} in '{name}' ({exc})") from None
    return value


def _check(where: str, raw: Any, scope: str) -> Check:
    if not isinstance(raw, dict) or raw.get("kind") not in CHECK_KINDS:
        raise KnowledgeError(f"{where}: check kind must be one of {', '.join(CHECK_KINDS)}")
    kind = raw["kind"]
    kind_scope, allowed = CHECK_KINDS[kind]
    if kind_scope != scope:
        raise KnowledgeError(f"{where}: a {kind} check runs in scope {kind_scope}, the rule says {scope}")
    params = {k: v for k, v in raw.items() if k != "kind"}
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise KnowledgeError(f"{where}: {kind} check does not take {unknown} (it takes {list(allowed)})")
    for name, value in params.items():
        if name in ("functions", "methods", "compared_methods", "compared_functions", "mask_functions", "mask_methods",
                    "begin_methods", "clone_methods", "replay_methods", "keep_methods", "record_methods",
                    "wait_methods", "wait_event_methods", "sync_methods"):
            _strings(where, value, name)
        elif name in ("exclude_receivers", "accept_calls"):
            _regex(where, value, name)
        elif name == "argument":
            if not isinstance(value, dict) or not ({"position", "keyword"} & set(value)) or "matches" not in value:
                raise KnowledgeError(f"{where}: 'argument' is {{position and/or keyword, matches}}")
            _regex(where, value["matches"], "argument.matches")
        elif name == "variables":
            if not isinstance(value, dict) or not value:
                raise KnowledgeError(f"{where}: 'variables' maps a variable name to a value regex")
            for variable, pattern in value.items():
                _regex(where, pattern, f"variables.{variable}")
        elif name == "require" and value not in ("fork", "join"):
            raise KnowledgeError(f"{where}: 'require' is fork or join")
        elif name == "max_args" and not isinstance(value, int):
            raise KnowledgeError(f"{where}: 'max_args' must be an integer")
    if kind == "call" and not (params.get("functions") or params.get("methods")):
        raise KnowledgeError(f"{where}: a call check needs functions or methods")
    return Check(kind=kind, params=params)


def parse_lint_rule(raw: Any, source_file: str, pattern_ids: set) -> LintRule:
    if not isinstance(raw, dict):
        raise KnowledgeError(f"{source_file}: every rule must be a mapping")
    rid = str(raw.get("id", ""))
    where = f"{source_file}: {rid or '<no id>'}"
    if not RULE_ID.match(rid):
        raise KnowledgeError(f"{where}: id must look like NGL001")
    if not re.match(r"^[a-z0-9]+(-[a-z0-9]+)*$", str(raw.get("name", ""))):
        raise KnowledgeError(f"{where}: name must be kebab-case (host-read-in-capture)")
    if raw.get("pattern") not in pattern_ids:
        raise KnowledgeError(f"{where}: pattern {raw.get('pattern')!r} is not a known pattern id")
    if raw.get("certainty") not in CERTAINTIES:
        raise KnowledgeError(f"{where}: certainty must be one of {', '.join(CERTAINTIES)}")
    if raw.get("scope") not in SCOPES:
        raise KnowledgeError(f"{where}: scope must be one of {', '.join(SCOPES)}")
    checks_raw = raw.get("check")
    checks_raw = checks_raw if isinstance(checks_raw, list) else [checks_raw]
    checks = [_check(where, c, raw["scope"]) for c in checks_raw]
    for name in ("message", "why", "fix", "false_alarms"):
        _bilingual(where, raw.get(name), name)
    if "{call}" not in raw["message"]["en"] or "{call}" not in raw["message"]["zh"]:
        raise KnowledgeError(f"{where}: the message names the code it flags with {{call}} in both languages")
    for name in ("bad", "good"):
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise KnowledgeError(f"{where}: needs a '{name}' example (Python code)")
    anchors = [_anchor(where, a) for a in raw.get("anchors") or []]
    references = raw.get("references") or []
    if not anchors and not references:
        raise KnowledgeError(f"{where}: needs anchors or references (where does this constraint come from?)")
    for ref in references:
        if not isinstance(ref, dict) or not ref.get("url") or not ref.get("title"):
            raise KnowledgeError(f"{where}: a reference needs title and url")
    if not isinstance(raw.get("default", True), bool):
        raise KnowledgeError(f"{where}: 'default' is true or false")
    return LintRule(id=rid, name=raw["name"], pattern=raw["pattern"], certainty=raw["certainty"], scope=raw["scope"],
                    checks=checks, message=raw["message"], why=raw["why"], fix=raw["fix"],
                    false_alarms=raw["false_alarms"], bad=raw["bad"], good=raw["good"], anchors=anchors,
                    references=references, default=raw.get("default", True))


def parse_lint_config(raw: Any, source_file: str, pattern_ids: set) -> LintConfig:
    if not isinstance(raw, dict):
        raise KnowledgeError(f"{source_file}: must be a mapping with namespaces, regions, streams and rules")
    namespaces = raw.get("namespaces") or {}
    if not isinstance(namespaces, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in namespaces.items()):
        raise KnowledgeError(f"{source_file}: namespaces map a module spelling to its canonical name")
    regions = raw.get("regions")
    if not isinstance(regions, dict) or set(regions) - set(REGION_KEYS):
        raise KnowledgeError(f"{source_file}: regions takes {', '.join(REGION_KEYS)}")
    for key in ("graph_contexts", "capture_calls", "graphed_callables", "compiled"):
        entry = regions.get(key)
        if not isinstance(entry, dict) or entry.get("certainty") not in CERTAINTIES:
            raise KnowledgeError(f"{source_file}: regions.{key} needs its names and a certainty")
    for decorator in regions.get("decorators") or []:
        if not isinstance(decorator, dict) or not decorator.get("name") or decorator.get("certainty") not in CERTAINTIES:
            raise KnowledgeError(f"{source_file}: a region decorator needs name, certainty (and member for a class)")
    for base in regions.get("bases") or []:
        if (not isinstance(base, dict) or not base.get("name") or not base.get("members")
                or base.get("certainty") not in CERTAINTIES or not base.get("note")):
            raise KnowledgeError(f"{source_file}: a region base class needs name, members, certainty and a note")
        holds = base.get("holds") or {}
        if not isinstance(holds, dict) or set(holds) - {"is_none", "is_true", "is_false", "is_zero"}:
            raise KnowledgeError(f"{source_file}: regions.bases {base.get('name')}: holds takes is_none, is_true, is_false and is_zero")
        for key, value in holds.items():
            _strings(f"{source_file}: regions.bases {base.get('name')} holds", value, key)
    guards = regions.get("guards") or {}
    if not isinstance(guards, dict) or set(guards) - {"capturing", "capturing_flags", "compiling", "note"}:
        raise KnowledgeError(f"{source_file}: regions.guards takes capturing, compiling (function names), capturing_flags (attributes) and a note")
    for key in ("capturing", "capturing_flags", "compiling"):
        if guards.get(key) is not None:
            _strings(f"{source_file}: regions.guards", guards.get(key), key)
    custom_ops = regions.get("custom_ops") or {}
    if not isinstance(custom_ops, dict) or set(custom_ops) - {"registrars", "decorators", "layer_tables", "note"}:
        raise KnowledgeError(f"{source_file}: regions.custom_ops takes registrars, decorators, layer_tables and a note")
    for registrar in custom_ops.get("registrars") or []:
        if not isinstance(registrar, dict) or not all(isinstance(registrar.get(k), str) for k in ("name", "op_name", "op_func")):
            raise KnowledgeError(f"{source_file}: a custom-op registrar needs name, op_name and op_func (its argument names)")
    for key in ("decorators", "layer_tables"):
        if custom_ops.get(key) is not None:
            _strings(f"{source_file}: regions.custom_ops", custom_ops.get(key), key)
    streams = raw.get("streams") or {}
    for key in ("contexts", "set_stream"):
        _strings(f"{source_file}: streams", streams.get(key), key)
    rules = [parse_lint_rule(r, source_file, pattern_ids) for r in raw.get("rules") or []]
    seen = set()
    for rule in rules:
        if rule.id in seen:
            raise KnowledgeError(f"{source_file}: duplicate rule id {rule.id}")
        seen.add(rule.id)
    if not rules:
        raise KnowledgeError(f"{source_file}: no rules")
    return LintConfig(namespaces=dict(namespaces), regions=regions, streams=streams, rules=rules)
