"""The shape of every knowledge entry, and the checks that make a broken entry a test failure.

Patterns are rules in the ruff/semgrep sense: an id, bilingual texts, weighted matchers, anchors
into the torch_npu source and real examples. The engine in `diagnose/` knows nothing about any
single pattern.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.model import FIX_IN, LANGS, Record
from npu_graph_skill.knowledge import prefilter
from npu_graph_skill.knowledge.regex_safety import regex_hazard

PHASES = ("capture", "replay", "memory", "update", "compile", "environment")
FAMILY_OF_PHASE = {"capture": "CAP", "replay": "REP", "memory": "MEM", "update": "UPD",
                   "compile": "CMP", "environment": "ENV"}
LAYERS = ("L1", "L2", "L3", "L4")
MATCHER_TYPES = ("message", "code", "api", "frame", "env", "setting", "context", "hardware")
PATTERN_ID = re.compile(r"^P-(CAP|REP|MEM|UPD|CMP|ENV)-\d{3}$")
PATTERN_REF = re.compile(r"\bP-(?:CAP|REP|MEM|UPD|CMP|ENV)-\d{3}\b")
ANCHOR_LINE = re.compile(r"^\d+(-\d+)?$")


class KnowledgeError(ValueError):
    """A knowledge file that does not validate; the message names the file and the entry."""


@dataclasses.dataclass
class Matcher(Record):
    type: str
    weight: float
    regex: str = ""
    code: str = ""
    name: str = ""
    value: str = ""
    phase: str = ""
    # False: matched only as written, never by its words in another order or with words between them
    # (diagnose/wording.py): words that are this fault's in this sentence are how users word others
    reworded: bool = True
    _compiled: Any = dataclasses.field(default=None, repr=False, compare=False)

    def literals(self) -> Optional[List[str]]:
        """Texts one of which any match contains; lets a matcher be skipped without compiling it."""
        return prefilter.literals(self.regex) if self.regex else None

    def pattern(self) -> "re.Pattern[str]":
        """The compiled regex (case-insensitive), built on first use."""
        if self._compiled is None:
            self._compiled = re.compile(self.regex, re.IGNORECASE)
        return self._compiled

    def to_dict(self) -> Dict[str, Any]:
        data = {"type": self.type, "weight": self.weight}
        for key in ("regex", "code", "name", "value", "phase"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        if not self.reworded:
            data["reworded"] = False
        return data


@dataclasses.dataclass
class Pattern(Record):
    id: str
    phase: str
    layer: str
    root_layer: str
    fix_in: str
    title: Dict[str, str]
    root_cause: Dict[str, str]
    trigger: Dict[str, str]
    fix_short: Dict[str, str]
    fix_long: Dict[str, str]
    verification: Dict[str, List[str]]
    matchers: List[Matcher]
    anchors: List[Dict[str, str]]
    references: List[Dict[str, str]]
    examples: List[Dict[str, Any]]
    negatives: List[Dict[str, str]] = dataclasses.field(default_factory=list)  # near misses it must not match
    scope: Dict[str, str] = dataclasses.field(default_factory=dict)
    fix_locations: List[str] = dataclasses.field(default_factory=list)
    consequence: bool = False
    source_file: str = ""

    def to_dict(self) -> Dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["matchers"] = [m.to_dict() for m in self.matchers]
        data.pop("source_file")
        return data

    def anchor_strings(self) -> List[str]:
        return [format_anchor(a) for a in self.anchors]

    def ranked_causes(self) -> List[str]:
        """The other patterns its root cause names, in the order it ranks them (a symptom pattern
        lists the causes that produce the symptom)."""
        return [x for x in dict.fromkeys(PATTERN_REF.findall(self.root_cause.get("en", ""))) if x != self.id]


@dataclasses.dataclass
class Constraint(Record):
    id: str
    title: Dict[str, str]
    rule: Dict[str, str]
    anchors: List[Dict[str, str]]
    patterns: List[str]
    brief_claim: Optional[str] = None
    truth: Optional[Dict[str, str]] = None


SIGN_KINDS = ("frame", "line", "setting")
SIGN_ID = re.compile(r"^S-\d{3}$")


@dataclasses.dataclass
class ContextSign(Record):
    """A sign of where in the lifecycle an input comes from: a framework function seen in a frame,
    a line the framework prints, or a setting — with the phase it points to and how strongly."""

    id: str
    framework: str
    kind: str  # frame | line | setting
    phase: str
    layer: str
    weight: float
    meaning: Dict[str, str]
    source: Dict[str, str]
    function: str = ""  # kind frame: the function name as a frame shows it
    function_regex: str = ""  # kind frame: or a regex over the name
    file: str = ""  # kind frame: a regex the frame's file must match
    regex: str = ""  # kind line / setting: a regex over an input line
    when: str = "at"  # at: the sign's phase is where it stands; after: of what fails after it
    # A notice: a line printed routinely (a start-up warning, an advice banner, the remedies listed with every
    # failure of a kind). It may still say where the run was (its weight), but it is never the error and its
    # words are not the fault's.
    notice: bool = False
    example: str = ""  # a notice: the line as printed (it must match)
    near_miss: str = ""  # a notice: an error of the same source that shares its words (it must not)
    _compiled: Any = dataclasses.field(default=None, repr=False, compare=False)

    def compiled(self) -> Dict[str, "re.Pattern[str]"]:
        if self._compiled is None:
            self._compiled = {name: re.compile(getattr(self, name), re.IGNORECASE)
                              for name in ("function_regex", "file", "regex") if getattr(self, name)}
        return self._compiled


def parse_context_sign(raw: Any, where: str, compile_regex: bool = True) -> ContextSign:
    """One sign, validated; `compile_regex` also compiles its regexes (the loader leaves that to the
    fresh-parse check, so a warm start compiles only the signs an input can match)."""
    sid = str(raw.get("id", "")) if isinstance(raw, dict) else ""
    where = f"{where}: {sid or '<no id>'}"
    if not SIGN_ID.match(sid):
        raise KnowledgeError(f"{where}: id must look like S-001")
    if raw.get("kind") not in SIGN_KINDS:
        raise KnowledgeError(f"{where}: kind must be one of {', '.join(SIGN_KINDS)}")
    if raw.get("phase") not in PHASES:
        raise KnowledgeError(f"{where}: phase must be one of {', '.join(PHASES)}")
    try:
        weight = float(raw.get("weight"))
    except (TypeError, ValueError):
        raise KnowledgeError(f"{where}: weight must be a number") from None
    notice = raw.get("notice", False)
    if notice not in (True, False):
        raise KnowledgeError(f"{where}: notice is true or false")
    if not (0 <= weight if notice else 0 < weight) or weight > 1:  # a notice may say nothing of the phase
        raise KnowledgeError(f"{where}: weight {weight} outside {'[0' if notice else '(0'}, 1]")
    if notice and (raw["kind"] != "line" or not raw.get("example") or not raw.get("near_miss")):
        raise KnowledgeError(f"{where}: a notice is a line sign with an example and a near_miss")
    if raw["kind"] == "frame" and not (raw.get("function") or raw.get("function_regex")):
        raise KnowledgeError(f"{where}: a frame sign needs 'function' or 'function_regex'")
    if raw["kind"] != "frame" and not raw.get("regex"):
        raise KnowledgeError(f"{where}: a {raw['kind']} sign needs 'regex'")
    source = raw.get("source")
    if not isinstance(source, dict) or not source.get("repo") or not source.get("path"):
        raise KnowledgeError(f"{where}: needs a source (repo, path, line, version)")
    if raw.get("when", "at") not in ("at", "after"):
        raise KnowledgeError(f"{where}: 'when' is at or after")
    _bilingual(where, raw.get("meaning"), "meaning")
    sign = ContextSign(id=sid, framework=str(raw.get("framework", "")), kind=raw["kind"], phase=raw["phase"],
                       layer=str(raw.get("layer") or "L1"), weight=weight, meaning=raw["meaning"],
                       source={k: str(v) for k, v in source.items()}, function=str(raw.get("function") or ""),
                       function_regex=str(raw.get("function_regex") or ""), file=str(raw.get("file") or ""),
                       regex=str(raw.get("regex") or ""), when=str(raw.get("when") or "at"), notice=notice,
                       example=str(raw.get("example") or ""), near_miss=str(raw.get("near_miss") or ""))
    if compile_regex:
        try:
            sign.compiled()
        except re.error as exc:
            raise KnowledgeError(f"{where}: bad regex ({exc})") from None
    return sign


def format_anchor(anchor: Dict[str, str]) -> str:
    text = f"{anchor['repo']} {anchor['path']}:{anchor['line']}@{anchor['version']}"
    return f"{text} ({anchor['note']})" if anchor.get("note") else text


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------

CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
_FOLDED_SPACE = re.compile(f"(?<=[{CJK}]) (?=[{CJK}])")


def tidy_zh(value: Any) -> Any:
    """YAML folds a line break into a space, which Chinese text does not want between characters."""
    if isinstance(value, str):
        return _FOLDED_SPACE.sub("", value)
    if isinstance(value, list):
        return [tidy_zh(v) for v in value]
    return value


def _bilingual(where: str, value: Any, name: str, as_list: bool = False) -> None:
    if not isinstance(value, dict) or set(LANGS) - set(value):
        raise KnowledgeError(f"{where}: '{name}' needs both zh and en")
    for lang in LANGS:
        text = value[lang]
        if as_list:
            if not isinstance(text, list) or not text or not all(isinstance(t, str) and t.strip() for t in text):
                raise KnowledgeError(f"{where}: '{name}.{lang}' must be a non-empty list of texts")
        elif not isinstance(text, str) or not text.strip():
            raise KnowledgeError(f"{where}: '{name}.{lang}' is empty")
    value["zh"] = tidy_zh(value["zh"])


def _anchor(where: str, anchor: Any) -> Dict[str, str]:
    if not isinstance(anchor, dict):
        raise KnowledgeError(f"{where}: anchor must be a mapping")
    for key in ("repo", "path", "line", "version"):
        if not str(anchor.get(key, "")).strip():
            raise KnowledgeError(f"{where}: anchor lacks '{key}'")
    if not ANCHOR_LINE.match(str(anchor["line"])):
        raise KnowledgeError(f"{where}: anchor line {anchor['line']!r} is not N or N-M")
    return {k: str(v) for k, v in anchor.items()}


def _matcher(where: str, raw: Any, strict: bool) -> Matcher:
    if not isinstance(raw, dict) or raw.get("type") not in MATCHER_TYPES:
        raise KnowledgeError(f"{where}: matcher type must be one of {', '.join(MATCHER_TYPES)}")
    try:
        weight = float(raw.get("weight"))
    except (TypeError, ValueError):
        raise KnowledgeError(f"{where}: matcher weight must be a number") from None
    if not -1.0 <= weight <= 1.5 or weight == 0:
        raise KnowledgeError(f"{where}: matcher weight {weight} outside [-1, 1.5] or zero")
    matcher = Matcher(type=raw["type"], weight=weight, regex=str(raw.get("regex", "")),
                      code=str(raw.get("code", "")).upper() if raw.get("code") is not None else "",
                      name=str(raw.get("name", "")), value=str(raw.get("value", "")),
                      phase=str(raw.get("phase", "")), reworded=raw.get("reworded", True))
    if not isinstance(matcher.reworded, bool) or (not matcher.reworded and matcher.type != "message"):
        raise KnowledgeError(f"{where}: 'reworded' is true or false, and only a message matcher has it")
    needs = {"message": "regex", "frame": "regex", "hardware": "regex", "code": "code", "api": "name",
             "env": "name", "setting": "name", "context": "phase"}[matcher.type]
    if not getattr(matcher, needs):
        raise KnowledgeError(f"{where}: a {matcher.type} matcher needs '{needs}'")
    if matcher.regex and strict:
        try:
            matcher.pattern()
        except re.error as exc:
            raise KnowledgeError(f"{where}: bad regex {matcher.regex!r} ({exc})") from None
        check_matcher_regex(where, matcher)
    if matcher.type == "context" and matcher.phase not in PHASES:
        raise KnowledgeError(f"{where}: context phase {matcher.phase!r} unknown")
    if matcher.type == "code":
        matcher.code = matcher.code if not matcher.code.startswith("0X") else matcher.code.lower()
    return matcher


def refuse_unsafe_regex(where: str, regex: str, label: str = "regex") -> None:
    """One careless regex would make every diagnosis slow: refuse one that does not parse or can backtrack
    catastrophically (parsed, not compiled: cheap enough for every fresh load)."""
    try:
        hazard = regex_hazard(regex, re.IGNORECASE)
    except re.error as exc:
        raise KnowledgeError(f"{where}: bad regex {regex!r} ({exc})") from None
    if hazard:
        raise KnowledgeError(f"{where}: {label} {regex!r} can backtrack catastrophically: {hazard}")


def check_matcher_regex(where: str, matcher: Matcher) -> None:
    if matcher.regex:
        refuse_unsafe_regex(where, matcher.regex, f"{matcher.type} regex")


def parse_pattern(raw: Any, source_file: str, strict: bool = True) -> Pattern:
    if not isinstance(raw, dict):
        raise KnowledgeError(f"{source_file}: every entry must be a mapping")
    pid = str(raw.get("id", ""))
    where = f"{source_file}: {pid or '<no id>'}"
    if not PATTERN_ID.match(pid):
        raise KnowledgeError(f"{where}: id must look like P-CAP-001")
    phase = raw.get("phase")
    if phase not in PHASES:
        raise KnowledgeError(f"{where}: phase must be one of {', '.join(PHASES)}")
    if pid.split("-")[1] != FAMILY_OF_PHASE[phase]:
        raise KnowledgeError(f"{where}: id family does not match phase {phase}")
    for key in ("layer", "root_layer"):
        if raw.get(key) not in LAYERS:
            raise KnowledgeError(f"{where}: {key} must be one of {', '.join(LAYERS)}")
    if raw.get("fix_in") not in FIX_IN:
        raise KnowledgeError(f"{where}: fix_in must be one of {', '.join(FIX_IN)}")
    for name in ("title", "root_cause", "trigger", "fix_short", "fix_long"):
        _bilingual(where, raw.get(name), name)
    _bilingual(where, raw.get("verification"), "verification", as_list=True)
    if raw.get("scope") is not None:
        _bilingual(where, raw["scope"], "scope")
    matchers = [_matcher(where, m, strict) for m in raw.get("matchers") or []]
    if not any(m.weight > 0 and m.type in ("message", "code", "api") for m in matchers):
        raise KnowledgeError(f"{where}: needs at least one positive message, code or api matcher")
    anchors = [_anchor(where, a) for a in raw.get("anchors") or []]
    references = raw.get("references") or []
    if not anchors and not references:
        raise KnowledgeError(f"{where}: needs anchors or references (where does this come from?)")
    for ref in references:
        if not isinstance(ref, dict) or not ref.get("url") or not ref.get("title"):
            raise KnowledgeError(f"{where}: a reference needs title and url")
    examples = raw.get("examples") or []
    if not examples:
        raise KnowledgeError(f"{where}: needs at least one real example (case, message or text)")
    for example in examples:
        if not isinstance(example, dict) or not ({"case", "message", "text"} & set(example)):
            raise KnowledgeError(f"{where}: an example is {{case: id}}, {{message: M-nnn}} or {{text: ..., source: ...}}")
        if "text" in example and not example.get("source"):
            raise KnowledgeError(f"{where}: a text example needs its source")
    negatives = raw.get("negatives") or []
    for negative in negatives:
        if not isinstance(negative, dict) or not negative.get("text") or not negative.get("why"):
            raise KnowledgeError(f"{where}: a negative is {{text: ..., why: ...}} (a near miss and what it really is)")
    return Pattern(
        id=pid, phase=phase, layer=raw["layer"], root_layer=raw["root_layer"], fix_in=raw["fix_in"],
        title=raw["title"], root_cause=raw["root_cause"], trigger=raw["trigger"], scope=raw.get("scope") or {},
        fix_short=raw["fix_short"], fix_long=raw["fix_long"], fix_locations=[str(x) for x in raw.get("fix_locations") or []],
        verification=raw["verification"], matchers=matchers, anchors=anchors, references=references,
        examples=examples, negatives=[{k: str(v) for k, v in n.items()} for n in negatives],
        consequence=bool(raw.get("consequence", False)), source_file=source_file,
    )


def parse_constraint(raw: Any, source_file: str, pattern_ids: set) -> Constraint:
    cid = str(raw.get("id", "")) if isinstance(raw, dict) else ""
    where = f"{source_file}: {cid or '<no id>'}"
    if not re.match(r"^C-\d{2}$", cid):
        raise KnowledgeError(f"{where}: id must look like C-01")
    _bilingual(where, raw.get("title"), "title")
    _bilingual(where, raw.get("rule"), "rule")
    if raw.get("truth") is not None:
        _bilingual(where, raw["truth"], "truth")
    unknown = [p for p in raw.get("patterns") or [] if p not in pattern_ids]
    if unknown:
        raise KnowledgeError(f"{where}: unknown pattern ids {unknown}")
    return Constraint(id=cid, title=raw["title"], rule=raw["rule"],
                      anchors=[_anchor(where, a) for a in raw.get("anchors") or []],
                      patterns=list(raw.get("patterns") or []), brief_claim=raw.get("brief_claim"),
                      truth=raw.get("truth"))
