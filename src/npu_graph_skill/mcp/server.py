"""`npu-graph mcp`: the capabilities of `api.py`, served to coding agents over MCP (stdio).

Each tool is a thin typed wrapper over one api function; its result is that function's `to_dict()`
(the same JSON as the CLI's `--json`). Expected failures are `ToolError`s whose one-line message the
model can act on. Paths a tool reads are checked by `guard` (allowed roots, size limits) first;
tools that read files or probe the machine run in a worker process with a time limit (`worker`).

Needs the `mcp` extra (SDK 2.x, Python >= 3.10); `mcp/cli.py` imports this module only to serve.
"""
from __future__ import annotations

import functools
import json
import logging
import warnings
from typing import Any, Annotated, Callable, List, Literal, Optional

import anyio
import anyio.to_thread
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import INVALID_PARAMS, ToolAnnotations
from pydantic import Field

from npu_graph_skill import __version__, api
from npu_graph_skill.core.errors import UserError
from npu_graph_skill.core.render import default_lang
from npu_graph_skill.mcp.guard import MB, ServerSettings, check_input, check_output_dir, roots_from_uris
from npu_graph_skill.mcp.worker import WorkerError, run_in_worker

log = logging.getLogger("npu_graph_skill.mcp")

INSTRUCTIONS = """\
Diagnose torch_npu graph mode (NPUGraph / ACLGraph on Ascend NPUs) — 诊断 torch_npu 图模式问题.
Start with `diagnose` (the pasted error as `text`, or a log file/folder as `path`): it returns the
phase (capture/replay/memory/update/compile/environment), the layer (L1 Python … L4 CANN), the root
cause, the fix and how to verify it, with the lines that matched. Then: `analyze_logs` for big or
multi-rank logs, `logs_merge` for the per-node summaries of a multi-node job, `run_bundle` for a
folder written by `npu-graph run -- CMD` (the run, its plogs and versions), `lookup_error_code` for
a code (107027, EE1016, ERR00100), `search_knowledge` for "how does X work", `health_check` for the
environment, `perf_*` / `analyze_graph_dump` for speed, `lint` on the user's script to find
capture-unsafe code before (or after) it fails.
Paths must lie under the server's allowed roots; report what the results say, not more."""

Result = dict[str, Any]
Lang = Annotated[Optional[Literal["zh", "en"]], Field(description="report language (default: the server's locale)")]
PHASES = Literal["capture", "replay", "memory", "update", "compile", "environment"]
NOT_INSTALLED = "this capability is not installed in this version of npu-graph-skill"
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
MAX_CONCURRENT_WORKERS = 2

server = MCPServer("npu-graph", instructions=INSTRUCTIONS, version=__version__)

_settings: Optional[ServerSettings] = None
_limiter: Optional[anyio.CapacityLimiter] = None


def configure(settings: ServerSettings) -> None:
    """Fix the roots and limits (called once by `npu-graph mcp`; tests call it with their own)."""
    global _settings
    _settings = settings


def settings() -> ServerSettings:
    global _settings
    if _settings is None:
        _settings = ServerSettings.create()
    return _settings


def serve(settings_: ServerSettings) -> None:
    configure(settings_)
    server.run()  # stdio; the SDK points fd 1 at stderr while serving, so stray prints miss the wire


# --------------------------------------------------------------------------------------------
# Tools: one per api function.
# --------------------------------------------------------------------------------------------

@server.tool(annotations=READS)
async def diagnose(
    text: Annotated[Optional[str], Field(description="the pasted error, traceback or log excerpt")] = None,
    path: Annotated[Optional[str], Field(description="or: a log/traceback file (.gz too) or a folder of logs")] = None,
    lang: Lang = None,
    source_dir: Annotated[Optional[str], Field(description="torch_npu source tree for the drill-down to the raise site")] = None,
    kb_dir: Annotated[Optional[str], Field(description="case knowledge base to search for similar cases")] = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Diagnose a graph-mode failure: phase, layer, root cause, fix, verification, ranked candidate
    patterns with the lines that matched, and the materials still missing (schema npu-graph-skill/diagnosis/1)."""
    if (text is None) == (path is None):
        raise ToolError("give exactly one of `text` (the pasted error) or `path` (a file or folder of logs)")
    roots = await _roots(ctx)
    if text is not None:
        _check_text(text, "text")
    return await _in_worker("diagnose", text=text, paths=[_log_input(path, roots)] if path else None, lang=lang,
                            source_dir=_source_dir(source_dir, roots), kb_dir=_kb_dir(kb_dir, roots))


@server.tool(annotations=READS)
async def analyze_logs(
    paths: Annotated[List[str], Field(min_length=1, max_length=64,
                                      description="log files (.gz too) or folders: plog trees, per-rank folders, worker logs")],
    since: Annotated[Optional[str], Field(description="keep lines from this time on, as printed in the logs")] = None,
    until: Annotated[Optional[str], Field(description="keep lines up to this time")] = None,
    rank: Annotated[Optional[int], Field(ge=0, description="keep only this rank")] = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Analyse TORCH_NPU_LOGS / CANN plog / vLLM worker logs: grouped errors (E), graph timeline (T),
    memory (M), anomalies and the first failure across ranks."""
    roots = await _roots(ctx)
    checked = _inputs(paths, roots, settings().max_log_bytes, "any", "log")
    return await _in_worker("analyze_logs", paths=checked, since=since, until=until, rank=rank)


@server.tool(annotations=READS)
async def run_bundle(
    path: Annotated[str, Field(description="a folder written by `npu-graph run -- CMD` (npu-graph-run-<time>/)")],
    lang: Lang = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Diagnose a run folder of `npu-graph run`: its manifest (command, exit status, logging switches, versions,
    graph vs eager) and the four-section diagnosis of its recorded output and plogs, with the first failure
    across ranks (schema npu-graph-skill/bundle/1). Reads only; it never starts a command."""
    checked = _log_input(path, await _roots(ctx), kind="dir")
    return await _in_worker("diagnose_bundle", directory=checked, lang=lang)


@server.tool(annotations=READS)
async def logs_merge(
    paths: Annotated[List[str], Field(min_length=1, max_length=1024,
                                      description="per-node summaries (`npu-graph logs PATH --summary-out node07.json` on "
                                                  "each node), or a folder of them")],
    clock_offsets: Annotated[Optional[dict[str, float]], Field(
        description="seconds a node's clock is ahead, e.g. {\"node07\": 1.8}; the others are estimated from events all "
                    "ranks log together")] = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Merge the per-node log summaries of a multi-node job: the first failure across all ranks with the nodes' clocks
    aligned (and how sure the order is), its consequences, anomalies — as if all logs were analysed on one machine."""
    roots = await _roots(ctx)
    checked = _inputs(paths, roots, settings().max_log_bytes, "any", "log")
    return await _in_worker("merge_log_summaries", paths=checked, clock_offsets=clock_offsets)


@server.tool(annotations=READS)
def lookup_error_code(
    code: Annotated[str, Field(min_length=1, max_length=100,
                               description="as printed: 107027, 0x1a213, EE1016, ERR00100, 0x7020023")],
) -> Result:
    """What an ACL / CANN / torch_npu error code means, its role in graph mode, and related patterns."""
    result = _local(api.lookup_error_code, code).to_dict()
    result["patterns"] = _patterns_with_code(result.get("normalized", ""))
    return result


@server.tool(annotations=READS)
async def search_knowledge(
    question: Annotated[str, Field(min_length=1, max_length=4000, description="a question, Chinese or English")],
    lang: Lang = None,
    limit: Annotated[int, Field(ge=1, le=20)] = 5,
    source_dir: Annotated[Optional[str], Field(description="torch_npu source tree: quote the code at the top answer's anchor")] = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Answer "how does graph mode work" questions with ranked knowledge entries (concepts, patterns,
    codes, constraints, notices frameworks print routinely, recorded cases), each with its source anchors."""
    source = _source_dir(source_dir, await _roots(ctx))
    return (await _threaded(api.ask, question, lang=lang, source_dir=source, limit=limit)).to_dict()


@server.tool(annotations=READS)
async def locate_source(
    symbol: Annotated[str, Field(min_length=1, max_length=500,
                                 description="NPUGraph::capture_begin, make_graphed_callables, graphs.py:capture_begin")],
    source_dir: Annotated[Optional[str], Field(description="torch_npu checkout or installed package (default: $NPU_GRAPH_SOURCE)")] = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Where a symbol is defined in a torch_npu source tree: file, line range, signature, anchor."""
    source = _source_dir(source_dir, await _roots(ctx))
    return await _in_worker("locate_symbol", symbol=symbol, source_dir=source)


@server.tool(annotations=READS)
async def find_raise_site(
    message: Annotated[str, Field(min_length=1, max_length=20000, description="the error or warning text as printed")],
    source_dir: Annotated[Optional[str], Field(description="torch_npu checkout or installed package (default: $NPU_GRAPH_SOURCE)")] = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Where a message is raised, warned or logged in a torch_npu source tree, best match first."""
    source = _source_dir(source_dir, await _roots(ctx))
    return await _in_worker("find_raise_site", message=message, source_dir=source)


@server.tool(annotations=READS)
async def health_check(
    backend: Literal["auto", "npu", "cuda"] = "auto",
    probe_timeout: Annotated[float, Field(ge=1, le=600, description="seconds allowed to each probe")] = 45,
) -> Result:
    """Check this machine's environment for graph mode (CANN, torch, torch_npu, devices, a capture/replay
    self-test), each check PASS/WARN/FAIL/CRIT/SKIP with its reason and remedy. Runs in the server's Python."""
    return await _in_worker("run_doctor", backend=backend, timeout=probe_timeout)


@server.tool(annotations=READS)
async def perf_trace(
    path: Annotated[str, Field(description="torch_npu profiler output folder (or one of its files)")],
    top: Annotated[int, Field(ge=1, le=100)] = 10,
    lang: Lang = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Read a torch_npu profiler result: step time, host launch vs device time, kernel top-N, graph-mode findings."""
    checked = _log_input(path, await _roots(ctx))
    return await _in_worker("perf_trace", directory=checked, top=top, lang=lang or default_lang())


@server.tool(annotations=READS)
async def perf_compare(
    baseline: Annotated[str, Field(description="JSON written by `npu-graph perf bench --json FILE`")],
    candidate: Annotated[str, Field(description="the second such JSON")],
    threshold: Annotated[float, Field(gt=0, le=10, description="relative P50 change that matters")] = 0.05,
    tail_threshold: Annotated[float, Field(gt=0, le=100, description="relative P99 growth that matters")] = 0.25,
    alpha: Annotated[float, Field(gt=0, lt=1, description="significance level of the tests")] = 0.01,
    lang: Lang = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Compare two benchmark results: regression / improvement / no-change per mode, with rank and tail tests."""
    roots = await _roots(ctx)
    first, second = (_text_input(p, roots) for p in (baseline, candidate))
    return await _in_worker("perf_compare", baseline=first, candidate=second, threshold=threshold,
                            tail_threshold=tail_threshold, alpha=alpha, lang=lang or default_lang())


@server.tool(annotations=READS)
async def analyze_graph_dump(
    path: Annotated[str, Field(description="JSON written by NPUGraph.debug_dump() (or its .aligned.json)")],
    top: Annotated[int, Field(ge=1, le=200)] = 15,
    lang: Lang = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Summarise a captured graph's debug dump: tasks per stream and kind, kernels, events, findings."""
    checked = _log_input(path, await _roots(ctx), kind="file")
    return await _in_worker("analyze_graph_dump", path=checked, top=top, lang=lang or default_lang())


@server.tool(annotations=READS)
async def lint(
    paths: Annotated[List[str], Field(min_length=1, max_length=64,
                                      description="Python files or folders (every .py under them) of the user's project")],
    select: Annotated[Optional[List[str]], Field(description="only these rule ids or prefixes, e.g. NGL001, NGL00")] = None,
    ignore: Annotated[Optional[List[str]], Field(description="skip these rule ids or prefixes")] = None,
    depth: Annotated[int, Field(ge=0, le=10, description="call levels followed out of a captured region")] = 3,
    lang: Lang = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Find capture-unsafe code before it runs: host syncs (.item(), .cpu(), synchronize), blocking copies, RNG
    seeding, default-stream capture, missing warm-up, data-dependent branches and shapes, graph outputs kept
    across replays, events/streams crossing the capture. Each finding: rule (NGL...), pattern (P-...), certainty,
    file:line and the call chain from the capture site (schema npu-graph-skill/lint/1)."""
    roots = await _roots(ctx)
    checked = _inputs(paths, roots, settings().max_log_bytes, "any", "log")
    return await _in_worker("lint", paths=checked, select=select, ignore=ignore, depth=depth, lang=lang,
                            within=list(roots))


@server.tool(annotations=WRITES)
async def record_case(
    report: Annotated[Optional[dict[str, Any]], Field(description="a diagnosis as returned by the `diagnose` tool")] = None,
    report_path: Annotated[Optional[str], Field(description="or: a file written by `npu-graph diagnose --json -o FILE`")] = None,
    symptom: Annotated[Optional[str], Field(description="the original error text, quoted verbatim in the case")] = None,
    tags: Annotated[List[str], Field(max_length=20)] = [],  # noqa: B006 - pydantic copies defaults
    title: Optional[str] = None,
    reporter: str = "",
    verification_result: Optional[Literal["passed", "failed", "unverified"]] = None,
    verification_note: str = "",
    collect_env: Annotated[bool, Field(description="add this machine's versions (CANN, torch, torch_npu)")] = False,
    kb_dir: Annotated[Optional[str], Field(description="knowledge-base folder (default: the project's skill knowledge/ or the user's)")] = None,
    ctx: Optional[Context] = None,
) -> Result:
    """Record a diagnosis in the case knowledge base (redacted, deduplicated by signature; a repeat adds an
    occurrence). Returns the case id, whether it was created or repeated, and the counts."""
    if (report is None) == (report_path is None):
        raise ToolError("give exactly one of `report` (the diagnose tool's result) or `report_path` (its JSON file)")
    roots = await _roots(ctx)
    if report_path is not None:
        report = _read_report(_text_input(report_path, roots, kind="file"))
    if symptom is not None:
        _check_text(symptom, "symptom")
    options = dict(kb_dir=_kb_dir(kb_dir, roots), redact=True, symptom=symptom, collect_env=collect_env,
                   tags=tags, reporter=reporter, title=title, verification_result=verification_result,
                   verification_note=verification_note)
    return (await _threaded(api.record_case, report, **options)).to_dict()


@server.tool(annotations=READS)
def list_patterns(phase: Optional[PHASES] = None) -> Result:
    """The known failure patterns (id, phase, layers, where the fix goes, title), optionally of one phase.
    Read `pattern://{id}` for one in full."""
    patterns = _local(api.list_patterns, phase)
    return {"phase": phase, "count": len(patterns), "patterns": [_pattern_summary(p) for p in patterns]}


@server.tool(annotations=READS)
def route_request(text: Annotated[str, Field(min_length=1, max_length=20000, description="the user's request, zh or en")]) -> Result:
    """Gate 0: which sub-skill (diagnostics, logs, expert, performance, MCP integration) handles a request, and why;
    `secondary` names a second concern, and `ask_back` (set when `reason` is vague) is the one question to ask the user
    before routing."""
    return _local(api.route_request, text).to_dict()


# --------------------------------------------------------------------------------------------
# Resources and the prompt.
# --------------------------------------------------------------------------------------------

@server.resource("pattern://{pattern_id}", mime_type="application/json",
                 description="one known failure pattern in full: matchers, cause, fix, verification, anchors")
def pattern_resource(pattern_id: str) -> str:
    pattern = _resource_call(api.get_pattern, pattern_id.upper())
    if pattern is None:
        raise ResourceNotFoundError(f"no pattern {pattern_id}; the list_patterns tool lists them")
    return json.dumps(pattern.to_dict(), ensure_ascii=False, indent=2)


@server.resource("errcode://{code}", mime_type="application/json",
                 description="an ACL / CANN / torch_npu error code: meaning, graph-mode role, source")
def errcode_resource(code: str) -> str:
    result = _resource_call(api.lookup_error_code, code)
    if not result.entries:
        raise ResourceNotFoundError(f"{code}: {result.note or 'unknown code'}")
    data = result.to_dict()
    data["patterns"] = _patterns_with_code(result.normalized)
    return json.dumps(data, ensure_ascii=False, indent=2)


@server.resource("concept://{name}", mime_type="text/markdown",
                 description="a concept note (lifecycle, memory pool, update mechanism ...), zh and en, with source anchors")
def concept_resource(name: str) -> str:
    try:
        from npu_graph_skill.knowledge.concepts import get_concept, load_concepts
    except ImportError:
        raise ResourceError(f"concept notes: {NOT_INSTALLED}") from None
    note = get_concept(name)
    if note is None:
        known = ", ".join(n.id for n in load_concepts())
        raise ResourceNotFoundError(f"no concept {name}; known: {known}")
    return _concept_markdown(note)


@server.resource("npu-graph://catalogue", mime_type="application/json",
                 description="what the pattern:// and concept:// resources hold: ids and titles")
def catalogue_resource() -> str:
    data: dict[str, Any] = {"patterns": [{"id": p.id, "phase": p.phase, "title": p.title} for p in api.list_patterns()]}
    try:
        from npu_graph_skill.knowledge.concepts import load_concepts

        data["concepts"] = [{"id": n.id, "title": n.title} for n in load_concepts()]
    except ImportError:
        data["concepts"] = []
    return json.dumps(data, ensure_ascii=False, indent=2)


REPORT_PROMPT = {
    "zh": ("请根据下面的报错和 npu-graph 的诊断结果，写一份图模式问题诊断报告，分四节：\n"
           "1. 问题概况（报错原文、阶段、层级、置信度）\n2. 根因分析（直接原因、触发条件、影响范围）\n"
           "3. 修复建议（短期、长期、修改位置）\n4. 验证步骤\n"
           "只写报错文本和诊断结果支持的结论；引用决定性的报错行；源码锚点（仓库 路径:行号@版本）原样保留，不要编造错误码或行号。"
           "置信度低或诊断标记为新问题时如实说明，并列出待补充材料及收集命令。诊断列出相似的公开报告（similar_reports）时，附上其链接和修复；列出其他可能的阶段（other_phases）时一并说明。"
           "需要更多信息时可调用 diagnose、lookup_error_code、"
           "search_knowledge、analyze_logs 工具。"),
    "en": ("Write a graph-mode diagnosis report from the error and the npu-graph diagnosis below, in four sections:\n"
           "1. Overview (the error verbatim, phase, layer, confidence)\n2. Root cause (direct cause, trigger, scope)\n"
           "3. Fix (short term, long term, where)\n4. Verification\n"
           "State only what the error text and the diagnosis support; quote the decisive lines; keep source anchors "
           "(repo path:line@version) as given and never invent codes or line numbers. When confidence is low or the "
           "diagnosis says novel, say so and list the missing materials with the commands that collect them. When the "
           "diagnosis lists similar public reports (similar_reports), give their links and what fixed them; when it names "
           "other possible phases (other_phases), say so. Call the "
           "diagnose, lookup_error_code, search_knowledge and analyze_logs tools for more."),
}


@server.prompt(title="Graph-mode diagnosis report / 图模式诊断报告")
async def diagnosis_report(error: str, lang: str = "zh") -> str:
    """The four-section diagnosis report (overview / root cause / fix / verification) for a pasted error."""
    lang = lang if lang in REPORT_PROMPT else "zh"
    if not error or not error.strip():
        raise MCPError(INVALID_PARAMS, "error is empty: paste the error, the traceback or the log excerpt")
    try:
        _check_text(error, "error")
        from npu_graph_skill.diagnose.report import render_markdown

        report = await _threaded(api.diagnose, text=error, lang=lang)
    except ToolError as exc:
        raise MCPError(INVALID_PARAMS, str(exc)) from None
    return (f"{REPORT_PROMPT[lang]}\n\n## {'报错' if lang == 'zh' else 'The error'}\n\n```\n{error.strip()}\n```\n\n"
            f"## npu-graph diagnose\n\n{render_markdown(report)}")


# --------------------------------------------------------------------------------------------
# Plumbing: roots, checks, where a call runs, error shaping.
# --------------------------------------------------------------------------------------------

async def _roots(ctx: Optional[Context]) -> List[str]:
    """The server's roots, plus the client's when it announces them (MCP roots; deprecated in the
    2026-07-28 protocol, so only asked where the client declared the capability, briefly)."""
    roots = list(settings().roots)
    if not settings().client_roots or ctx is None:
        return roots
    try:
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return roots
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with anyio.fail_after(5):
                listed = await ctx.session.list_roots()
        roots += [r for r in roots_from_uris(root.uri for root in listed.roots) if r not in roots]
    except Exception as exc:  # noqa: BLE001 - no client roots is not an error
        log.debug("client roots unavailable: %r", exc)
    return roots


def _limit_hint(kind: str) -> str:
    return f", or restart the server with `npu-graph mcp --max-{kind}-mb N`"


def _inputs(paths: List[str], roots: List[str], max_bytes: int, kind: str, limit: str) -> List[str]:
    checked, total = [], 0
    for path in paths:
        absolute, size = _guarded(check_input, path, roots, max_bytes, kind, _limit_hint(limit))
        checked.append(absolute)
        total += size
    if total > max_bytes:
        raise ToolError(f"the inputs add up to {total / MB:.1f} MB, over the {max_bytes / MB:.0f} MB limit for this "
                        f"tool; give fewer or smaller inputs{_limit_hint(limit)}")
    return checked


def _log_input(path: Optional[str], roots: List[str], kind: str = "any") -> str:
    return _inputs([path or ""], roots, settings().max_log_bytes, kind, "log")[0]


def _text_input(path: str, roots: List[str], kind: str = "file") -> str:
    return _inputs([path], roots, settings().max_text_bytes, kind, "text")[0]


def _source_dir(path: Optional[str], roots: List[str]) -> Optional[str]:
    return None if path is None else _guarded(check_input, path, roots, None, "dir")[0]


def _kb_dir(path: Optional[str], roots: List[str]) -> Optional[str]:
    return None if path is None else _guarded(check_output_dir, path, roots)


def _check_text(text: str, name: str) -> None:
    size = len(text.encode("utf-8", "replace"))
    if size > settings().max_text_bytes:
        raise ToolError(f"`{name}` is {size / MB:.1f} MB, over the {settings().max_text_bytes / MB:.0f} MB limit; "
                        "save it to a file under the allowed roots and pass its path instead")


def _read_report(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
        raise ToolError(f"{path}: not a diagnosis JSON file ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise ToolError(f"{path}: expected a JSON object (from `npu-graph diagnose --json`)")
    return data


def _guarded(check: Callable, *args: Any) -> Any:
    try:
        return check(*args)
    except UserError as exc:
        raise ToolError(str(exc)) from None


async def _in_worker(function: str, **kwargs: Any) -> Result:
    """Run `api.<function>` in a worker process under the time limit; its reply as a result or a ToolError."""
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(MAX_CONCURRENT_WORKERS)
    call = functools.partial(run_in_worker, function, kwargs, settings().time_limit)
    try:
        reply = await anyio.to_thread.run_sync(call, limiter=_limiter)
    except WorkerError as exc:
        raise ToolError(str(exc)) from None
    if reply.get("ok"):
        result = reply.get("result")
        return result if isinstance(result, dict) else {"result": result}
    raise ToolError(_failure(reply.get("kind", ""), str(reply.get("message", ""))))


async def _threaded(func: Callable, *args: Any, **kwargs: Any) -> Any:
    """An in-process api call (quick ones) off the event loop, with errors shaped like the worker's."""
    return await anyio.to_thread.run_sync(functools.partial(_local, func, *args, **kwargs))


def _local(func: Callable, *args: Any, **kwargs: Any) -> Any:
    try:
        return func(*args, **kwargs)
    except UserError as exc:
        raise ToolError(str(exc)) from None
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("npu_graph_skill"):
            raise ToolError(_failure("missing", f"module {exc.name} is missing")) from None
        raise ToolError(_failure("internal", f"ModuleNotFoundError: {exc}")) from None
    except Exception as exc:  # noqa: BLE001 - the model reads one line; the traceback goes to the server log
        log.exception("tool call failed")
        raise ToolError(_failure("internal", f"{exc.__class__.__name__}: {exc}")) from None


def _resource_call(func: Callable, *args: Any) -> Any:
    try:
        return func(*args)
    except UserError as exc:
        raise ResourceError(str(exc)) from None


def _failure(kind: str, message: str) -> str:
    if kind == "missing":
        return f"{NOT_INSTALLED} ({message})"
    if kind == "internal":
        return f"internal error: {message} (a bug in npu-graph-skill; the server log has the details)"
    return message


def _patterns_with_code(code: str) -> List[str]:
    return [p.id for p in api.list_patterns()
            if any(m.type == "code" and m.code == code and m.weight > 0 for m in p.matchers)]


def _pattern_summary(pattern: Any) -> Result:
    return {"id": pattern.id, "phase": pattern.phase, "layer": pattern.layer, "root_layer": pattern.root_layer,
            "fix_in": pattern.fix_in, "title": pattern.title,
            "codes": [m.code for m in pattern.matchers if m.type == "code" and m.weight > 0]}


def _concept_markdown(note: Any) -> str:
    lines = [f"# {note.title.get('zh', '')} · {note.title.get('en', '')}", ""]
    for lang, heading in (("zh", "## 中文"), ("en", "## English")):
        lines += [heading, "", note.summary.get(lang, ""), "", note.body.get(lang, "").strip(), ""]
    lines.append("## Anchors")
    lines += [f"- {a.get('repo')} {a.get('path')}:{a.get('line')}@{a.get('version')} — {a.get('note', '')}"
              for a in note.anchors]
    if note.references:
        lines += ["", "## References"] + [f"- {r}" for r in note.references]
    return "\n".join(lines) + "\n"
