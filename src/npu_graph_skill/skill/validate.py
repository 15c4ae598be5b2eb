"""`npu-graph skill validate DIR`: every SKILL.md in a tree against the Agent Skills spec.

The strictest union of what clients and validators enforce (../shared/reference/ecosystem.md §1.2,
§1.7): the spec's six frontmatter keys and name rules (agentskills.io/specification), name equal
to the folder, Anthropic's packager rules (no `<` or `>` in the description, no reserved words in
the name), YAML that strictyaml (skills-ref) also accepts, unique names across the tree (Codex and
OpenCode register nested skills), and relative Markdown links that resolve.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.core.model import Record

ALLOWED_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
RESERVED_WORDS = ("anthropic", "claude")
MAX_NAME, MAX_DESCRIPTION, MAX_COMPATIBILITY = 64, 1024, 500
DESCRIPTION_SOFT_LIMIT = 600  # Codex shortens long descriptions first when the skill list is long
BODY_SOFT_LINES = 500
FIRST_PERSON = re.compile(r"^(?:i|i'm|i am|we|you|my|our)\b|^(?:我|你|我们|您)", re.IGNORECASE)
LINK_RE = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SKIP_DIRS = {".git", "node_modules", "__pycache__"}


@dataclasses.dataclass
class Issue(Record):
    path: str  # relative to the validated root
    severity: str  # error | warning
    message: str


@dataclasses.dataclass
class SkillSummary(Record):
    path: str  # folder of the skill, relative to the root ("." for the root itself)
    name: str
    description_chars: int


@dataclasses.dataclass
class ValidationReport(Record):
    root: str
    skills: List[SkillSummary]
    issues: List[Issue]
    checked_files: int
    official: Optional[str] = None  # "passed" | "failed" | "unavailable: why" | None (not asked)

    @property
    def ok(self) -> bool:
        return not any(issue.severity == "error" for issue in self.issues)

    def to_dict(self) -> Dict[str, Any]:
        data = super().to_dict()
        data["ok"] = self.ok
        return data


# --------------------------------------------------------------------------------------------
# Frontmatter
# --------------------------------------------------------------------------------------------

def split_frontmatter(text: str) -> Tuple[Optional[str], str]:
    """(frontmatter text, body); None when the file does not start with a `---` block."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1:])
    return None, text


def _strict_yaml_problems(block: str) -> List[str]:
    """What strictyaml (used by skills-ref) refuses and PyYAML lets through."""
    problems = []
    for number, line in enumerate(block.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or ":" not in stripped:
            continue
        value = stripped.split(":", 1)[1].strip()
        if value[:1] in ("{", "["):
            problems.append(f"line {number}: flow-style value ({value[:20]}...) is rejected by strictyaml; use block style")
        elif value[:1] in ("&", "*", "!"):
            problems.append(f"line {number}: anchors, aliases and tags are rejected by strictyaml")
    return problems


def _load_mapping(block: str) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        pass

    duplicates: List[str] = []

    def construct_mapping(loader: Any, node: Any, deep: bool = False) -> Dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                duplicates.append(str(key))
            seen.add(key)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    try:
        data = yaml.load(block, Loader=UniqueKeyLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, [f"invalid YAML in frontmatter{at}: {reason}; quote values that contain ': '"]
    problems = [f"duplicate key {key!r} in frontmatter" for key in duplicates]
    if not isinstance(data, dict):
        return None, problems + ["frontmatter is not a mapping of keys to values"]
    return data, problems


def check_skill_file(path: str, rel: str) -> Tuple[List[Issue], Optional[SkillSummary]]:
    issues: List[Issue] = []

    def error(message: str) -> None:
        issues.append(Issue(rel, "error", message))

    def warning(message: str) -> None:
        issues.append(Issue(rel, "warning", message))

    if os.path.basename(path) != "SKILL.md":
        error(f"the file must be named SKILL.md exactly, not {os.path.basename(path)}")
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        error("not valid UTF-8")
        return issues, None
    except OSError as exc:
        error(f"cannot read: {exc.strerror or exc}")
        return issues, None
    block, body = split_frontmatter(text)
    if block is None:
        error("no YAML frontmatter: the file must start with a '---' line and close the block with another")
        return issues, None
    for problem in _strict_yaml_problems(block):
        error(problem)
    data, problems = _load_mapping(block)
    for problem in problems:
        error(problem)
    if data is None:
        return issues, None

    unknown = [str(k) for k in data if k not in ALLOWED_KEYS]
    if unknown:
        error(f"unexpected frontmatter key(s) {', '.join(unknown)}; allowed: {', '.join(ALLOWED_KEYS)} "
              "(put anything else under metadata)")
    name = data.get("name")
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if not isinstance(name, str) or not name:
        error("name is required and must be a string")
        name = ""
    else:
        if len(name) > MAX_NAME:
            error(f"name is {len(name)} characters; at most {MAX_NAME}")
        if not NAME_RE.match(name):
            error(f"name {name!r} must be lower-case letters, digits and single hyphens, not starting or ending with '-'")
        if name != folder:
            error(f"name {name!r} must equal its folder name {folder!r}")
        for word in RESERVED_WORDS:
            if word in name:
                error(f"name {name!r} contains the reserved word {word!r}")
    description = data.get("description")
    chars = 0
    if not isinstance(description, str) or not description.strip():
        error("description is required and must be a non-empty string")
    else:
        chars = len(description)
        if chars > MAX_DESCRIPTION:
            error(f"description is {chars} characters; at most {MAX_DESCRIPTION}")
        elif chars > DESCRIPTION_SOFT_LIMIT:
            warning(f"description is {chars} characters; Codex shortens descriptions past ~{DESCRIPTION_SOFT_LIMIT}")
        if "<" in description or ">" in description:
            error("description must not contain '<' or '>' (Anthropic's packager rejects them)")
        if FIRST_PERSON.match(description.strip()):
            warning("description should be written in the third person ('Diagnoses ...', not 'I ...' or 'You ...')")
    for key in ("license", "compatibility", "allowed-tools"):
        if key in data and not isinstance(data[key], str):
            error(f"{key} must be a string (quote it)")
    compatibility = data.get("compatibility")
    if isinstance(compatibility, str) and not 1 <= len(compatibility) <= MAX_COMPATIBILITY:
        error(f"compatibility is {len(compatibility)} characters; 1 to {MAX_COMPATIBILITY}")
    metadata = data.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            error("metadata must be a mapping of strings to strings")
        else:
            for key, value in metadata.items():
                if not isinstance(key, str) or not isinstance(value, str):
                    error(f"metadata {key!r}: keys and values must be strings (quote {value!r})")
    if not body.strip():
        error("the body after the frontmatter is empty")
    elif body.count("\n") > BODY_SOFT_LINES:
        warning(f"the body has {body.count(chr(10))} lines; keep SKILL.md under {BODY_SOFT_LINES} and move detail to references/")
    skill_dir = os.path.dirname(rel) or "."
    return issues, SkillSummary(skill_dir, name, chars)


# --------------------------------------------------------------------------------------------
# Links
# --------------------------------------------------------------------------------------------

def broken_links(path: str) -> List[str]:
    """Relative link targets in a Markdown file that do not exist (code blocks are skipped)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    missing = []
    base = os.path.dirname(path)
    for target in LINK_RE.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
            continue  # http:, mailto:, in-page anchors
        file_part = target.split("#", 1)[0]
        if file_part and not os.path.exists(os.path.join(base, file_part)):
            missing.append(target)
    return missing


# --------------------------------------------------------------------------------------------
# The tree
# --------------------------------------------------------------------------------------------

def _walk(root: str) -> Tuple[List[str], List[str]]:
    skill_files, markdown = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for filename in sorted(filenames):
            full = os.path.join(dirpath, filename)
            if filename.lower() == "skill.md":
                skill_files.append(full)
            if filename.lower().endswith(".md"):
                markdown.append(full)
    return skill_files, markdown


def validate_tree(path: str, official: bool = False) -> ValidationReport:
    """Check every SKILL.md under `path` (a skill folder or a skills folder holding several)."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or directory")
    if os.path.isfile(path):
        path = os.path.dirname(os.path.abspath(path))
    root = os.path.abspath(path)
    skill_files, markdown = _walk(root)
    if not skill_files:
        raise InputError(f"{path}: no SKILL.md found (point at a skill folder or a skills folder such as .claude/skills)")
    issues: List[Issue] = []
    skills: List[SkillSummary] = []
    for skill_file in skill_files:
        rel = os.path.relpath(skill_file, root)
        found, summary = check_skill_file(skill_file, rel)
        issues.extend(found)
        if summary:
            skills.append(summary)
    by_name: Dict[str, List[str]] = {}
    for summary in skills:
        if summary.name:
            by_name.setdefault(summary.name, []).append(summary.path)
    for name, places in sorted(by_name.items()):
        if len(places) > 1:
            issues.append(Issue(places[1], "error", f"skill name {name!r} is used {len(places)} times ({', '.join(places)}); "
                                                     "agents that register nested skills need unique names"))
    for md in markdown:
        for target in broken_links(md):
            issues.append(Issue(os.path.relpath(md, root), "error", f"link target does not exist: {target}"))
    report = ValidationReport(root=root, skills=skills, issues=issues, checked_files=len(markdown))
    if official:
        report.official = _run_official(root, skills, report)
    return report


def _run_official(root: str, skills: List[SkillSummary], report: ValidationReport) -> str:
    """skills-ref's `validate` (PyPI skills-ref, Python 3.11+) on every skill folder, one at a time."""
    try:
        from pathlib import Path

        from skills_ref import validate as official_validate
    except ImportError:
        return "unavailable: pip install skills-ref (needs Python 3.11+)"
    failed = False
    for summary in skills:
        folder = os.path.join(root, summary.path)
        for problem in official_validate(Path(folder)):
            failed = True
            report.issues.append(Issue(os.path.join(summary.path, "SKILL.md"), "error", f"skills-ref: {problem}"))
    return "failed" if failed else "passed"
