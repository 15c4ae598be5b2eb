"""SARIF 2.1.0 for GitHub code scanning and SARIF viewers.

What GitHub reads (docs.github.com "SARIF support for code scanning"): `version` 2.1.0 and `$schema`;
per run `tool.driver.name`, the `rules` with `id`, `shortDescription`, `fullDescription`, `help`,
`defaultConfiguration.level` and `properties` (`precision`, `problem.severity`, `tags`); per result
`ruleId`, `ruleIndex`, `level`, `message.text` and a `physicalLocation` whose `artifactLocation.uri`
is relative to the checkout (`uriBaseId` %SRCROOT%) with a 1-based `region`. The capture site and the
call chain go into `relatedLocations` and a `codeFlows` thread flow, which viewers show as steps;
`partialFingerprints` keep an alert stable when lines above it move.
"""
from __future__ import annotations

import hashlib
import os
from typing import Any, Dict, List, Optional

from npu_graph_skill import __version__
from npu_graph_skill.core.render import pick
from npu_graph_skill.knowledge.lint_schema import LintConfig, LintRule
from npu_graph_skill.lint.model import Finding, LintReport

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://github.com/npu-graph-skill/npu-graph-skill"
LEVEL = {"certain": "error", "likely": "warning"}
PRECISION = {"certain": "very-high", "likely": "medium"}


def to_sarif(report: LintReport, config: LintConfig, base: Optional[str] = None) -> Dict[str, Any]:
    """The report as one SARIF log. URIs are made relative to `base` (default: the working directory)."""
    base = os.path.abspath(base or os.getcwd())
    rules = [r for r in config.rules if r.id in set(report.rules)]
    index = {r.id: i for i, r in enumerate(rules)}
    lang = report.lang
    run: Dict[str, Any] = {
        "tool": {"driver": {
            "name": "npu-graph-lint", "fullName": "npu-graph lint (NPU graph capture safety)",
            "version": __version__, "semanticVersion": __version__, "informationUri": TOOL_URI,
            "rules": [_rule(r, lang) for r in rules],
        }},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": _dir_uri(base)}},
        "results": [_result(f, index, base) for f in report.findings if f.rule in index],
        "columnKind": "unicodeCodePoints",
    }
    notifications = [{"level": "note", "message": {"text": f"{s.path}: {s.reason}"},
                      "descriptor": {"id": "skipped-file"}} for s in report.skipped]
    run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": notifications}]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule(rule: LintRule, lang: str) -> Dict[str, Any]:
    short = pick(rule.message, lang).replace("`{call}` ", "").replace("{call}", "this call")
    sources = "\n".join(f"- {a}" for a in rule.anchor_strings())
    markdown = (f"**{rule.id} {rule.name}** (prevents {rule.pattern}, {rule.certainty})\n\n{pick(rule.why, lang)}\n\n"
                f"**Fix:** {pick(rule.fix, lang)}\n\n**Example:**\n```python\n{rule.bad.rstrip()}\n```\n\n"
                f"**Instead:**\n```python\n{rule.good.rstrip()}\n```\n\n"
                f"**False alarm when:** {pick(rule.false_alarms, lang)}\n\n**Sources:**\n{sources}\n")
    return {
        "id": rule.id, "name": _camel(rule.name),
        "shortDescription": {"text": short[:200]},
        "fullDescription": {"text": pick(rule.why, lang)},
        "help": {"text": f"{pick(rule.fix, lang)} False alarm when: {pick(rule.false_alarms, lang)}", "markdown": markdown},
        "defaultConfiguration": {"level": LEVEL[rule.certainty]},
        "properties": {"precision": PRECISION[rule.certainty], "problem.severity": LEVEL[rule.certainty],
                       "tags": ["npu-graph", "capture", rule.pattern], "pattern": rule.pattern},
    }


def _result(finding: Finding, index: Dict[str, int], base: str) -> Dict[str, Any]:
    location = _location(finding.path, finding.line, finding.column, finding.end_line, finding.end_column, base)
    result: Dict[str, Any] = {
        "ruleId": finding.rule, "ruleIndex": index[finding.rule], "level": LEVEL[finding.certainty],
        "message": {"text": finding.message}, "locations": [location],
        "partialFingerprints": {"npuGraphLint/v1": _fingerprint(finding)},
        "properties": {"certainty": finding.certainty, "pattern": finding.pattern},
    }
    if finding.region:
        site = _location(finding.region["path"], finding.region["line"], 1, None, None, base)
        site["id"] = 1
        site["message"] = {"text": f"captured here: {finding.region['text']}"}
        result["relatedLocations"] = [site]
    if len(finding.chain) > 1:
        steps = [{"location": dict(_location(s.path, s.line, 1, None, None, base), message={"text": s.text})}
                 for s in finding.chain]
        steps.append({"location": dict(location, message={"text": finding.message})})
        result["codeFlows"] = [{"threadFlows": [{"locations": steps}]}]
    return result


def _location(path: str, line: int, column: int, end_line: Optional[int], end_column: Optional[int],
              base: str) -> Dict[str, Any]:
    region: Dict[str, Any] = {"startLine": max(1, line), "startColumn": max(1, column)}
    if end_line and end_line >= line:
        region["endLine"] = end_line
        if end_column and (end_line > line or end_column > column):
            region["endColumn"] = end_column
    return {"physicalLocation": {"artifactLocation": _artifact(path, base), "region": region}}


def _artifact(path: str, base: str) -> Dict[str, str]:
    """Relative to the checkout (what code scanning needs); a file outside it keeps an absolute file URI."""
    from pathlib import Path
    from urllib.parse import quote

    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, base)
    if relative.startswith(".."):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": quote(relative.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}


def _dir_uri(path: str) -> str:
    from pathlib import Path

    return Path(path).as_uri().rstrip("/") + "/"


def _fingerprint(finding: Finding) -> str:
    text = f"{finding.rule}\0{finding.code}\0{finding.region['text'] if finding.region else ''}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _camel(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(p.capitalize() for p in rest)


def sarif_errors(log: Dict[str, Any]) -> List[str]:
    """What GitHub code scanning would reject in a SARIF log (the checks its upload documents), as
    readable lines. Used by the tests alongside the full 2.1.0 JSON schema."""
    problems: List[str] = []
    if log.get("version") != "2.1.0":
        problems.append("version is not 2.1.0")
    if not isinstance(log.get("runs"), list) or not log["runs"]:
        return problems + ["no runs"]
    for r, run in enumerate(log["runs"]):
        driver = run.get("tool", {}).get("driver", {})
        if not driver.get("name"):
            problems.append(f"runs[{r}].tool.driver.name missing")
        ids = [rule.get("id") for rule in driver.get("rules", [])]
        if len(ids) != len(set(ids)):
            problems.append(f"runs[{r}]: duplicate rule ids")
        for i, result in enumerate(run.get("results", [])):
            where = f"runs[{r}].results[{i}]"
            if not result.get("message", {}).get("text"):
                problems.append(f"{where}.message.text missing")
            if result.get("ruleId") not in ids:
                problems.append(f"{where}.ruleId not among the driver's rules")
            if ids and ids[result.get("ruleIndex", -1)] != result.get("ruleId"):
                problems.append(f"{where}.ruleIndex does not point at its rule")
            for location in result.get("locations", []):
                physical = location.get("physicalLocation", {})
                uri = physical.get("artifactLocation", {}).get("uri", "")
                if not uri or uri.startswith("/") or "://" in uri:
                    problems.append(f"{where}: artifact uri {uri!r} is not relative to the checkout")
                if physical.get("region", {}).get("startLine", 0) < 1:
                    problems.append(f"{where}: region.startLine must be >= 1")
    return problems
