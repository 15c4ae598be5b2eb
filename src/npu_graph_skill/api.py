"""The public functions, one per capability. The CLI, the MCP server and the skill's scripts call
these and nothing else. Each returns a record with `to_dict()` (a stable JSON contract).

Imports are deferred to the call so that importing `api` costs nothing.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

# --- diagnosis (issue: diagnosis core) ------------------------------------------------------


def diagnose(text: Optional[str] = None, paths: Optional[List[str]] = None, lang: Optional[str] = None,
             source_dir: Optional[str] = None, kb_dir: Optional[str] = None, source_files: Optional[List[str]] = None,
             provided: Sequence[str] = ()):
    """A pasted error/traceback/log (`text`) or files/directories (`paths`, `-` = stdin) → Diagnosis.
    `source_files`: the user's scripts; lint findings near the failing lines become evidence.
    `provided`: materials collected with the input (versions, plog, graph_log, ranks), not asked for again."""
    from npu_graph_skill.diagnose.engine import diagnose as run

    return run(text=text, paths=paths, lang=lang, source_dir=source_dir, kb_dir=kb_dir, source_files=source_files,
               provided=provided)


def lookup_error_code(code: str):
    """`107027`, `0x1a213`, `EE1016`, `ERR00100`, `0x7020023` → every matching code entry."""
    from npu_graph_skill.knowledge.codes import lookup

    return lookup(code)


def list_patterns(phase: Optional[str] = None):
    """Known failure patterns, optionally of one phase."""
    from npu_graph_skill.knowledge.loader import load_knowledge

    patterns = load_knowledge().patterns
    return [p for p in patterns if phase is None or p.phase == phase.lower()]


def get_pattern(pattern_id: str):
    from npu_graph_skill.knowledge.loader import load_knowledge

    return load_knowledge().pattern(pattern_id)


# --- lint: capture-unsafe code found before it runs ------------------------------------------


def lint(paths: List[str], select: Optional[List[str]] = None, ignore: Optional[List[str]] = None,
         depth: int = 3, lang: Optional[str] = None, within: Optional[List[str]] = None):
    """Python files or folders → LintReport: capture-unsafe code in captured regions (and what they call
    in the same package), each finding with its rule (NGL...), pattern, certainty and call chain.
    `within`: folders the linter may read while following calls (default: anywhere)."""
    from npu_graph_skill.lint.engine import lint_paths

    return lint_paths(paths, select=select, ignore=ignore, depth=depth, lang=lang, within=within)


def lint_rule(rule_id: str):
    """One lint rule (id like NGL001, or its name) with its why, examples, false alarms and sources; None if unknown."""
    from npu_graph_skill.lint.engine import load_config

    config = load_config()
    return config.rule(rule_id) or next((r for r in config.rules if r.name == rule_id.strip().lower()), None)


# --- logs (issue: log analyzer) --------------------------------------------------------------


def analyze_logs(paths: List[str], **options: Any):
    """Stream logs (files, .gz, directories, `-`) into errors (E-), timeline (T-), memory (M-) findings."""
    from npu_graph_skill.logs.analyze import analyze_logs as run

    return run(paths, **options)


def merge_log_summaries(paths: List[str], clock_offsets: Optional[Dict[str, float]] = None):
    """Per-node summaries (`npu-graph logs PATH --summary-out FILE` on each node) → the report of the whole job: first
    failure across all ranks with each node's clock aligned, consequences, anomalies. clock_offsets: {node: seconds its
    clock is ahead}; the others are estimated from events every rank logs together."""
    from npu_graph_skill.logs.merge import merge_summaries

    return merge_summaries(paths, clock_offsets=clock_offsets)


# --- environment doctor ----------------------------------------------------------------------


def run_doctor(backend: str = "auto", **options: Any):
    """Environment checks for graph mode, each isolated in a subprocess; PASS/WARN/FAIL/CRIT/SKIP."""
    from npu_graph_skill.doctor.runner import run_doctor as run

    return run(backend=backend, **options)


def collect_env(**options: Any):
    """A paste-ready environment block (CANN, driver, torch, torch_npu, devices, variables)."""
    from npu_graph_skill.doctor.envinfo import collect_env as run

    return run(**options)


# --- expert: ask and code --------------------------------------------------------------------


def ask(question: str, lang: Optional[str] = None, source_dir: Optional[str] = None, limit: int = 5, **options: Any):
    """Ranked knowledge entries (concepts, patterns, codes, constraints, cases) for a question."""
    from npu_graph_skill.expert.ask import ask as run

    return run(question, lang=lang, source_dir=source_dir, limit=limit, **options)


def locate_symbol(symbol: str, source_dir: Optional[str] = None):
    """Every definition of `symbol` (`NPUGraph::capture_begin`, `graphs.py:capture_begin`) in the
    torch_npu tree at `source_dir` (or $NPU_GRAPH_SOURCE): file, line range, signature."""
    from npu_graph_skill.expert.code import locate_symbol as run

    return run(symbol, source_dir=source_dir)


def find_raise_site(message: str, source_dir: Optional[str] = None):
    """Where a pasted message (concrete values, traceback and ERR suffix allowed) is raised,
    warned or logged in the tree, best match first, with the enclosing function's range."""
    from npu_graph_skill.expert.code import find_raise_site as run

    return run(message, source_dir=source_dir)


def code_index(source_dir: Optional[str] = None, rebuild: bool = False):
    """Build or refresh the cached source index; its counts, timings and cache path."""
    from npu_graph_skill.expert.code import code_index as run

    return run(source_dir, rebuild=rebuild)


def show_code(spec: str, source_dir: Optional[str] = None, context: int = 3):
    """Numbered source lines: `FILE:START-END`, `FILE:LINE` (with context) or a symbol."""
    from npu_graph_skill.expert.code import show_code as run

    return run(spec, source_dir=source_dir, context=context)


def verify_anchors(source_dir: Optional[str] = None, kb_dir: Optional[str] = None, messages_csv: Optional[str] = None):
    """Check the knowledge base's file:line anchors against the tree: ok / moved / changed / vanished ..."""
    from npu_graph_skill.expert.code import verify_anchors as run

    return run(source_dir, kb_dir=kb_dir, messages_csv=messages_csv)


# --- performance -----------------------------------------------------------------------------


def perf_bench(target: str, **options: Any):
    from npu_graph_skill.perf.bench import run_bench

    return run_bench(target, **options)


def perf_compare(baseline: str, candidate: str, **options: Any):
    from npu_graph_skill.perf.compare import compare_files

    return compare_files(baseline, candidate, **options)


def perf_trace(directory: str, **options: Any):
    from npu_graph_skill.perf.trace import analyze_trace

    return analyze_trace(directory, **options)


def analyze_graph_dump(path: str, **options: Any):
    from npu_graph_skill.perf.graph_dump import analyze_graph_dump as run

    return run(path, **options)


# --- case knowledge base ---------------------------------------------------------------------


def record_case(report: Dict[str, Any], **options: Any):
    """Record a diagnosis (`Diagnosis.to_dict()`) as a case without asking: redacted, deduplicated
    by signature, written atomically under the knowledge-base lock → RecordResult.
    Options: kb_dir, redact, symptom (the original text), environment, collect_env, tags, reporter,
    title, verification_result, verification_note."""
    from npu_graph_skill.cases.store import record_case as run

    return run(report, **options)


def search_cases(query: str, **options: Any):
    """Recorded cases like a question or an error text, best first → [CaseMatch] (kb_dir, limit=5)."""
    from npu_graph_skill.cases.store import search_cases as run

    return run(query, **options)


def similar_cases(report: Any, kb_dir: Optional[str] = None, limit: int = 3):
    """Recorded cases like a diagnosis in progress → [CaseMatch]; `.to_candidate()` gives a
    Candidate of kind "case". Silent (empty) when there is no knowledge base."""
    from npu_graph_skill.cases.search import similar_cases as run

    return run(report, kb_dir=kb_dir, limit=limit)


def list_cases(kb_dir: Optional[str] = None, **filters: Any):
    """Recorded cases, newest first → CaseList (filters: phase, pattern, tag, limit)."""
    from npu_graph_skill.cases.store import list_cases as run

    return run(kb_dir=kb_dir, **filters)


def get_case(case_id: str, kb_dir: Optional[str] = None):
    """One case (id or unique prefix) with its repeats → CaseView."""
    from npu_graph_skill.cases.store import get_case as run

    return run(case_id, kb_dir=kb_dir)


def case_stats(kb_dir: Optional[str] = None):
    """Distinct cases, occurrences, counts per phase / layer / pattern → KbStats."""
    from npu_graph_skill.cases.store import case_stats as run

    return run(kb_dir=kb_dir)


def init_case_kb(kb_dir: Optional[str] = None):
    """Create an empty knowledge base (cases/, CASE_TEMPLATE.md, history.md) → KbLocation."""
    from npu_graph_skill.cases.store import init_kb as run

    return run(kb_dir)


# --- run: the failing command, diagnosed with its materials -----------------------------------


def run_command(argv: List[str], **options: Any):
    """Run `argv` with graph-mode logging on, its output passed through and recorded; on failure diagnose
    the run folder and pack it → RunResult (its exit status is the command's). Options: directory, keep,
    hang_timeout, kill_after, max_output_mb, plog_level, log_switches, pty, redact, eager_env, eager_cmd,
    lang, source_dir, kb_dir, collect_env, pack, notify, stdout_fd, stderr_fd, environ, on_diagnosis."""
    from npu_graph_skill.run.session import run_command as run

    return run(argv, **options)


def diagnose_bundle(directory: str, lang: Optional[str] = None, source_dir: Optional[str] = None,
                    kb_dir: Optional[str] = None, write: bool = False):
    """Diagnose a folder written by `npu-graph run` again (its output and plogs) → BundleReport; `write`
    replaces its diagnosis files. Never starts a command."""
    from npu_graph_skill.run.bundle import diagnose_bundle as run

    return run(directory, lang=lang, source_dir=source_dir, kb_dir=kb_dir, write=write)


def pack_bundle(directory: str, redact: bool = True):
    """(Re)write the .tar.gz beside a run folder, redacted unless `redact=False` → PackResult."""
    from npu_graph_skill.run.bundle import read_manifest
    from npu_graph_skill.run.pack import pack_folder

    read_manifest(directory)
    return pack_folder(directory, redact=redact)


# --- skill -----------------------------------------------------------------------------------


def route_request(text: str):
    """Gate 0: which sub-skill handles this request (and a second one when it has two concerns),
    with the scores behind the choice — or, when it is too thin, the one question to ask back."""
    from npu_graph_skill.skill.routing import route

    return route(text)


def install_skill(agent: Optional[List[str]] = None, scope: str = "project", project: Optional[str] = None,
                  directory: Optional[str] = None, force: bool = False, offline: bool = False):
    """Write the skill bundle into each agent's skills folder (default: Claude Code, this project),
    keeping files the user edited and the case knowledge base → InstallReport."""
    from npu_graph_skill.skill.install import install_skill as run

    return run(agent=agent, scope=scope, project=project, directory=directory, force=force, offline=offline)


def validate_skill(path: str, official: bool = False):
    """Check every SKILL.md under `path` against the Agent Skills spec (+ skills-ref) → ValidationReport."""
    from npu_graph_skill.skill.validate import validate_tree

    return validate_tree(path, official=official)


def export_skill(out: str, offline: bool = False):
    """Write the bundle as a zip (`npu-graph-skill/` at its top) → ExportReport."""
    from npu_graph_skill.skill.export import export_skill as run

    return run(out, offline=offline)
