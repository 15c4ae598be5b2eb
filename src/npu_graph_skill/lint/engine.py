"""`npu-graph lint`: files → modules → captured regions → rule checks → findings.

The rules and region definitions come from knowledge/lint_rules.yaml; this module wires them to the
check kinds in `checks`, follows regions through `callgraph`, applies suppression comments and the
--select / --ignore filters, and returns a `LintReport`.
"""
from __future__ import annotations

import ast
import gc
import os
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.render import default_lang, pick
from npu_graph_skill.knowledge.lint_schema import LintConfig, LintRule
from npu_graph_skill.lint import checks
from npu_graph_skill.lint.callgraph import DEFAULT_DEPTH, Context, walk_region
from npu_graph_skill.lint.model import Finding, LintReport, Skipped, Step
from npu_graph_skill.lint.project import ModuleInfo, Project
from npu_graph_skill.lint.regions import Region, RegionFinder
from npu_graph_skill.lint.source import read_source

SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "venv", "build", "dist"}
MAX_DEPTH = 10


def load_config() -> LintConfig:
    from npu_graph_skill.knowledge.loader import load_lint_config

    return load_lint_config()


def select_rules(config: LintConfig, select: Optional[Sequence[str]], ignore: Optional[Sequence[str]]) -> List[LintRule]:
    """The rules that run: every default rule, or those selected (ids by prefix like ruff: `NGL01` selects
    NGL010-NGL019; a rule that is off by default runs only when selected), less the ignored ones."""
    def expand(values: Optional[Sequence[str]], option: str) -> Optional[set]:
        if not values:
            return None
        chosen = set()
        for value in (v.strip().upper() for item in values for v in item.split(",") if v.strip()):
            matched = {r.id for r in config.rules if r.id.startswith(value) or r.name.upper() == value}
            if not matched:
                raise UserError(f"{option} {value}: no such rule (npu-graph lint --explain lists them)")
            chosen |= matched
        return chosen

    selected, ignored = expand(select, "--select"), expand(ignore, "--ignore") or set()
    return [r for r in config.rules
            if (r.id in selected if selected is not None else r.default) and r.id not in ignored]


def collect_files(paths: Sequence[str]) -> Tuple[List[Tuple[str, str]], List[Skipped]]:
    """[(path to read, path to show)] for every .py file under the given paths; a missing path is bad usage."""
    found: List[Tuple[str, str]] = []
    skipped: List[Skipped] = []
    seen = set()
    for path in paths:
        if not os.path.lexists(path):
            raise UserError(f"{path}: no such file or directory")
        if os.path.isdir(path):
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
                for name in sorted(files):
                    if name.endswith(".py") and not name.startswith("."):
                        full = os.path.join(folder, name)
                        real = os.path.realpath(full)
                        if real not in seen:
                            seen.add(real)
                            found.append((full, os.path.normpath(full)))
        elif os.path.exists(path):
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                found.append((path, os.path.normpath(path)))
        else:
            skipped.append(Skipped(path, "broken symbolic link"))
    return found, skipped


class Linter:
    """One run of the rules over a project."""

    def __init__(self, config: LintConfig, rules: List[LintRule], lang: str, depth: int = DEFAULT_DEPTH) -> None:
        self.config = config
        self.rules = rules
        self.lang = lang
        self.depth = max(0, min(MAX_DEPTH, depth))
        self.raw = {"regions": config.regions, "streams": config.streams}
        self.capture: List[Tuple[LintRule, object]] = []
        self.module: List[Tuple[LintRule, object]] = []
        for rule in rules:
            for check in rule.checks:
                if check.kind in checks.CAPTURE_KINDS:
                    self.capture.append((rule, checks.CAPTURE_KINDS[check.kind](check.params)))
                else:
                    self.module.append((rule, checks.MODULE_KINDS[check.kind](check.params)))
        self.findings: Dict[tuple, Finding] = {}
        self.suppressed = 0
        self.triggers = triggers(config, rules)

    def run(self, project: Project) -> int:
        """Lint every linted module of the project; returns the number of captured regions found."""
        finder = RegionFinder(self.config.regions)
        # Only a module whose text names a capture API, a framework marker or a watched variable can hold a
        # region or a module-level finding; the others are parsed (syntax errors are reported) and kept for
        # call following, but not walked.
        linted = [m for m in project.linted() if any(t in m.source.text for t in self.triggers)]
        regions_of: Dict[str, List[Region]] = {m.name + "@" + m.path: finder.find(m) for m in linted}
        # A class derived from a framework base through a class of the project (`class Impl310(AscendImpl)`,
        # AscendImpl(AttentionImpl)) is in a module that may not name the framework's base: the project classes
        # found as region bases become triggers too, until no new module is reached.
        derived = {r.cls for rs in regions_of.values() for r in rs if r.kind == "base" and r.cls}
        rest = [m for m in project.linted() if m.name + "@" + m.path not in regions_of]
        while derived and rest:
            reached = [m for m in rest if any(name in m.source.text for name in derived)]
            rest = [m for m in rest if m not in reached]
            found = {m.name + "@" + m.path: finder.find(m) for m in reached}
            regions_of.update(found)
            linted.extend(reached)
            derived = {r.cls for rs in found.values() for r in rs if r.kind == "base" and r.cls} - derived
        count = 0
        for module in linted:
            regions = regions_of[module.name + "@" + module.path]
            count += len(regions)
            if self.capture:
                for region in regions:
                    walk_region(region, self._visit, self.depth)
            for rule, check in self.module:
                for node, text, region in check.run(module, regions, self.raw):
                    chain = (Step(region.module.path, region.line, region.text),) if region else ()
                    self._add(rule, module, node, text, region, chain)
        return count

    def _visit(self, node: ast.AST, context: Context) -> None:
        for rule, check in self.capture:
            text = check.match(node, context)
            if text:
                self._add(rule, context.module, node, text, context.region, context.chain)

    def _add(self, rule: LintRule, module: ModuleInfo, node: ast.AST, text: str, region: Optional[Region],
             chain: Tuple[Step, ...]) -> None:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", line) or line
        if module.source.is_ignored(rule.id, (line, end_line)):
            self.suppressed += 1
            return
        certainty = rule.certainty if region is None or region.certainty == "certain" else "likely"
        finding = Finding(
            rule=rule.id, name=rule.name, pattern=rule.pattern, certainty=certainty, path=module.path, line=line,
            column=getattr(node, "col_offset", 0) + 1, end_line=end_line,
            end_column=(getattr(node, "end_col_offset", None) or getattr(node, "col_offset", 0)) + 1,
            message=pick(rule.message, self.lang).replace("{call}", text), code=module.source.line(line).strip(),
            region=region.site() if region else None, chain=list(chain))
        key = finding.key()
        known = self.findings.get(key)
        if known is None or len(finding.chain) < len(known.chain):
            self.findings[key] = finding


def triggers(config: LintConfig, rules: List[LintRule]) -> List[str]:
    """Texts one of which a module must contain to be worth walking, from the region names and the rules."""
    regions = config.regions
    calls = set(regions["graph_contexts"]["names"]) | set(regions["graphed_callables"]["names"])
    calls |= set(regions["compiled"]["names"])
    found = {n.rpartition(".")[2] + "(" for n in calls} | {n.rpartition(".")[2] + " as" for n in calls}
    found |= {d["name"] for d in regions.get("decorators") or []} | {b["name"] for b in regions.get("bases") or []}
    found |= set(regions["capture_calls"]["begin"]) | {regions.get("pragma") or "npu-graph:"}
    for rule in rules:
        for check in rule.checks:
            found |= set(check.params.get("variables") or {}) | set(check.params.get("begin_methods") or [])
    return sorted(found)


def lint_paths(paths: Sequence[str], select: Optional[Sequence[str]] = None, ignore: Optional[Sequence[str]] = None,
               depth: int = DEFAULT_DEPTH, lang: Optional[str] = None, config: Optional[LintConfig] = None,
               within: Optional[Sequence[str]] = None) -> LintReport:
    """Lint files and folders (every .py under them) → LintReport. A missing path or an unknown rule id
    is a UserError; files that cannot be read or parsed are listed in `skipped`. Calls are followed into
    modules of the same packages; `within` (folders) limits which of them may be read."""
    if not paths:
        raise UserError("no path: give the files or folders to lint")
    lang = lang or default_lang()
    config = config or load_config()
    rules = select_rules(config, select, ignore)
    files, skipped = collect_files(paths)
    project = Project(config.namespaces, list(within) if within is not None else None)
    project.custom_ops = config.regions.get("custom_ops") or {}
    notes: List[str] = []
    collecting = gc.isenabled()
    gc.disable()  # ASTs hold no cycles; a collector walking thousands of live trees costs more than the parse
    try:
        for real, shown in files:
            source, skip = read_source(real, shown)
            if skip:
                skipped.append(skip)
                continue
            if source.note:
                notes.append(f"{shown}: {source.note}")
            project.add(source, real)
        linter = Linter(config, rules, lang, depth)
        for module in project.linted():
            if not any(t in module.source.text for t in linter.triggers):
                module.source.release()  # parsed (so syntax errors are reported) but never walked
        regions = linter.run(project)
    finally:
        if collecting:
            gc.enable()
    findings = sorted(linter.findings.values(), key=lambda f: (f.path, f.line, f.column, f.rule))
    return LintReport(files_checked=len(files) - sum(1 for s in skipped if s.reason != "broken symbolic link"),
                      findings=findings, skipped=skipped, notes=notes, rules=[r.id for r in rules], regions=regions,
                      suppressed=linter.suppressed, lang=lang)


def lint_source(text: str, name: str = "<source>.py", **options) -> LintReport:
    """Lint a piece of code held in memory (rule examples, tests) without touching the disk layout."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="npu-graph-lint-") as folder:
        path = os.path.join(folder, os.path.basename(name))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        report = lint_paths([path], **options)
    for finding in report.findings:
        finding.path = name if finding.path == os.path.normpath(path) else finding.path
        if finding.region and finding.region.get("path") == os.path.normpath(path):
            finding.region["path"] = name
        for step in finding.chain:
            step.path = name if step.path == os.path.normpath(path) else step.path
    return report


def iter_rules(config: Optional[LintConfig] = None) -> Iterable[LintRule]:
    return (config or load_config()).rules
