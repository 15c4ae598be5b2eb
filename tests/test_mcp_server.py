"""The MCP server driven in-process by the SDK's own client: every tool, resource and the prompt, on
real cases and samples from ../shared/data, plus refusals and bad arguments.

Needs the `mcp` extra (SDK 2.x, Python >= 3.10); skipped without it.
"""
from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`pip install 'npu-graph-skill[mcp]'`, Python >= 3.10) is not installed")

from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from npu_graph_skill import api  # noqa: E402
from npu_graph_skill.mcp import server  # noqa: E402
from npu_graph_skill.mcp.guard import ServerSettings  # noqa: E402

pytestmark = pytest.mark.anyio

TOOLS = {"diagnose", "analyze_logs", "logs_merge", "lookup_error_code", "search_knowledge", "locate_source", "find_raise_site",
         "health_check", "perf_trace", "perf_compare", "analyze_graph_dump", "record_case", "list_patterns",
         "route_request", "lint", "run_bundle"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def work(tmp_path, monkeypatch):
    """The server as `npu-graph mcp` would start it with `work/` as its working directory; `outside/`
    is not allowed. The code-index cache goes under tmp_path."""
    inside, outside = tmp_path / "work", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    monkeypatch.setenv("NPU_GRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NPU_GRAPH_SOURCE", raising=False)
    monkeypatch.delenv("NPU_GRAPH_KB", raising=False)
    saved = server._settings
    server.configure(ServerSettings.create(cwd=str(inside), environ={}))
    yield inside, outside
    server.configure(saved)


def allow(*folders) -> None:
    current = server.settings()
    server.configure(ServerSettings.create(allow=[str(f) for f in folders], cwd=current.roots[0], environ={},
                                           time_limit=current.time_limit, max_log_bytes=current.max_log_bytes,
                                           max_text_bytes=current.max_text_bytes))


def case_text(shared_cases, case_id: str) -> str:
    return next(c for c in shared_cases if c["id"] == case_id)["error_text"]


async def call(name: str, arguments: dict):
    async with Client(server.server) as client:
        return await client.call_tool(name, arguments)


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


# --- the list ----------------------------------------------------------------------------------

async def test_every_capability_is_a_tool_with_typed_input_and_object_output(work):
    async with Client(server.server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema["type"] == "object", tool.name
        assert tool.input_schema["type"] == "object"
    assert tools["diagnose"].input_schema["properties"]["lang"]["anyOf"][0]["enum"] == ["zh", "en"]
    assert tools["record_case"].annotations.read_only_hint is False
    assert tools["diagnose"].annotations.read_only_hint is True
    assert templates == {"pattern://{pattern_id}", "errcode://{code}", "concept://{name}"}
    assert prompts == {"diagnosis_report"}


# --- diagnose: the same answer as the CLI --------------------------------------------------------

@pytest.mark.parametrize("case_id", ["vllm-ascend-2629", "pytorch-78549"])
async def test_diagnose_a_real_case_gives_the_cli_answer(work, shared_cases, run_cli, case_id):
    inside, _ = work
    text = case_text(shared_cases, case_id)
    saved = inside / f"{case_id}.txt"
    saved.write_text(text, encoding="utf-8")
    code, out, _ = run_cli("diagnose", str(saved), "--json", "--lang", "en")
    cli = json.loads(out)
    for arguments in ({"path": str(saved), "lang": "en"}, {"text": text, "lang": "en"}):
        result = await call("diagnose", arguments)
        assert not result.is_error, result.content
        got = result.structured_content
        assert (got["phase"], got["layer"], got["root_layer"]) == (cli["phase"], cli["layer"], cli["root_layer"])
        assert got["candidates"][0]["id"] == cli["candidates"][0]["id"]
        assert json.loads(result.content[0].text)["phase"] == cli["phase"]  # the same JSON as text, for old clients
    if case_id == "vllm-ascend-2629":
        expected = next(c for c in shared_cases if c["id"] == case_id)
        assert got["phase"] == expected["phase"].lower() and got["root_layer"] == expected["layer"]


async def test_diagnose_a_folder_of_real_plogs(work, shared_data):
    allow(shared_data)
    result = await call("diagnose", {"path": str(shared_data / "samples" / "plog"), "lang": "en"})
    assert not result.is_error, result.content
    assert result.structured_content["schema"].startswith("npu-graph-skill/diagnosis") and result.structured_content["error"]


async def test_run_bundle_diagnoses_a_run_folder_without_running_anything(work, shared_cases):
    import os
    import sys

    inside, _ = work
    script = inside / "fails.py"
    script.write_text(f"import sys\nsys.stderr.write({case_text(shared_cases, 'seed-default-stream')!r})\nsys.exit(1)\n")
    null = os.open(os.devnull, os.O_WRONLY)
    run = api.run_command([sys.executable, str(script)], directory=str(inside), stdout_fd=null, stderr_fd=null,
                          collect_env=False, pack=False, lang="en")
    os.close(null)
    script.unlink()  # the tool must not need (or run) the command
    (inside / run.folder / "diagnosis.json").unlink()  # ... nor write into the folder
    result = await call("run_bundle", {"path": run.folder, "lang": "en"})
    data = result.structured_content
    assert not result.is_error and data["schema"] == "npu-graph-skill/bundle/1"
    assert data["run"]["command"][-1] == str(script) and data["run"]["exit_status"] == 1
    assert data["diagnosis"]["phase"] == "capture" and data["diagnosis"]["candidates"][0]["id"] == "P-CAP-003"
    assert data["written"] == [] and not (inside / run.folder / "diagnosis.json").exists()
    refused = error_text(await call("run_bundle", {"path": str(inside)}))
    assert "not a run folder" in refused


# --- the other tools on real material ------------------------------------------------------------

async def test_analyze_logs_on_real_plogs(work, shared_data):
    allow(shared_data)
    result = await call("analyze_logs", {"paths": [str(shared_data / "samples" / "plog")]})
    assert not result.is_error, result.content
    report = result.structured_content
    assert report["errors"] and report["totals"]["files"] == 4


async def test_logs_merge_of_node_summaries(work):
    """Two nodes' summaries of a generated job (real layouts, benchmarks/logs_corpus.py) merge into the job's first
    failure; a changed summary and a summary outside the roots are refused with one line."""
    from npu_graph_skill import api
    from test_logs_analyze import _corpus

    inside, outside = work
    job = _corpus().write_cluster_job(str(inside / "job"), ranks=4, nodes=2, kb_per_rank=4, failing_rank=1,
                                      also_failing_rank=None)
    (inside / "summ").mkdir()
    for folder in job["nodes"]:
        name = folder.rsplit("/", 1)[-1]
        api.analyze_logs([folder], summary_out=str(inside / "summ" / f"{name}.json"), node=name)
    result = await call("logs_merge", {"paths": [str(inside / "summ")], "clock_offsets": {"node01": 0.5}})
    assert not result.is_error, result.content
    report = result.structured_content
    assert report["first_failure"]["rank"] == 1 and report["totals"]["nodes"] == 2
    assert {c["node"]: c["method"] for c in report["clocks"]}["node01"] == "given"
    summary = inside / "summ" / "node00.json"
    summary.write_text(summary.read_text().replace('"count":1,', '"count":2,', 1))
    assert "digest mismatch" in error_text(await call("logs_merge", {"paths": [str(summary)]}))
    (outside / "node.json").write_text("{}")
    assert "outside the allowed roots" in error_text(await call("logs_merge", {"paths": [str(outside / "node.json")]}))


async def test_perf_trace_and_graph_dump_on_real_samples(work, shared_data):
    allow(shared_data)
    trace = await call("perf_trace", {"path": str(shared_data / "samples" / "profiler_torch_npu"), "lang": "en"})
    assert not trace.is_error, trace.content
    assert "schema" in trace.structured_content
    dump = await call("analyze_graph_dump", {"path": str(shared_data / "samples" / "aclgraph_debug" / "graph_debug.json")})
    assert not dump.is_error, dump.content
    assert dump.structured_content["streams"]


def _bench(path, base_graph: float, seed: int) -> str:
    rng = random.Random(seed)
    data = {"schema": "npu-graph-skill/perf-bench/1", "graph_ms": [base_graph * rng.lognormvariate(0, 0.05) for _ in range(200)],
            "eager_ms": [3.0 * rng.lognormvariate(0, 0.05) for _ in range(200)],
            "env": {"backend": "npu", "torch_npu": "2.5.1"}, "config": {"warmup": 10, "iters": 200}}
    path.write_text(json.dumps(data))
    return str(path)


async def test_perf_compare_finds_a_known_slowdown(work):
    inside, _ = work
    result = await call("perf_compare", {"baseline": _bench(inside / "a.json", 1.0, 1),
                                         "candidate": _bench(inside / "b.json", 1.3, 2), "lang": "en"})
    assert not result.is_error, result.content
    assert result.structured_content["verdict"] == "regression"


async def test_health_check_reports_each_check(work):
    result = await call("health_check", {"backend": "npu", "probe_timeout": 60})
    assert not result.is_error, result.content
    checks = result.structured_content["checks"]
    assert checks and {"id", "status"} <= set(checks[0])


async def test_source_tools_on_a_small_torch_npu_tree(work):
    inside, _ = work
    graphs = inside / "src" / "torch_npu" / "npu" / "graphs.py"
    graphs.parent.mkdir(parents=True)
    graphs.write_text("class NPUGraph:\n    def capture_begin(self, pool=None):\n"
                      "        raise RuntimeError(\"NPU graphs must be captured on a non-default stream.\")\n")
    located = await call("locate_source", {"symbol": "capture_begin", "source_dir": str(inside / "src")})
    assert not located.is_error, located.content
    assert located.structured_content["definitions"][0]["qualname"] == "NPUGraph.capture_begin"
    site = await call("find_raise_site", {"message": "NPU graphs must be captured on a non-default stream.",
                                          "source_dir": str(inside / "src")})
    assert site.structured_content["matches"][0]["line"] == 3
    no_source = await call("locate_source", {"symbol": "capture_begin"})
    assert "NPU_GRAPH_SOURCE" in error_text(no_source)


async def test_lookup_search_route_and_patterns(work):
    code = await call("lookup_error_code", {"code": "207005"})
    assert code.structured_content["entries"][0]["name"] == "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL"
    assert "P-CAP-011" in code.structured_content["patterns"]
    answer = await call("search_knowledge", {"question": "capture_begin 做了什么", "lang": "zh", "limit": 3})
    assert 1 <= len(answer.structured_content["answers"]) <= 3
    route = await call("route_request", {"text": "aclgraph replay 很慢，profiling 怎么看"})
    assert route.structured_content["skill"] == "graph-performance-profiling"
    listed = await call("list_patterns", {"phase": "capture"})
    assert listed.structured_content["count"] > 0
    assert {p["phase"] for p in listed.structured_content["patterns"]} == {"capture"}


async def test_record_a_diagnosis_then_its_repeat(work, shared_cases):
    inside, _ = work
    report = (await call("diagnose", {"text": case_text(shared_cases, "vllm-ascend-2629"), "lang": "en"})).structured_content
    kb = inside / "kb"
    first = await call("record_case", {"report": report, "kb_dir": str(kb), "tags": ["mcp-test"]})
    assert not first.is_error, first.content
    assert first.structured_content["action"] == "created"
    saved = inside / "report.json"
    saved.write_text(json.dumps(report), encoding="utf-8")
    second = await call("record_case", {"report_path": str(saved), "kb_dir": str(kb)})
    assert second.structured_content["action"] == "repeat"
    assert second.structured_content["case_id"] == first.structured_content["case_id"]
    assert (kb / "cases" / f"{first.structured_content['case_id']}.yaml").is_file()


# --- safety: refusals ---------------------------------------------------------------------------

@pytest.mark.parametrize("tool, arguments", [
    ("diagnose", {"path": "{outside}/app.log"}),
    ("analyze_logs", {"paths": ["{inside}/ok.log", "{outside}/app.log"]}),
    ("perf_trace", {"path": "{outside}"}),
    ("analyze_graph_dump", {"path": "{outside}/app.log"}),
    ("perf_compare", {"baseline": "{inside}/ok.log", "candidate": "{outside}/app.log"}),
    ("record_case", {"report_path": "{outside}/app.log"}),
    ("record_case", {"report": {"phase": "capture"}, "kb_dir": "{outside}/kb"}),
    ("locate_source", {"symbol": "capture_begin", "source_dir": "{outside}"}),
    ("search_knowledge", {"question": "capture", "source_dir": "{outside}"}),
    ("diagnose", {"path": "/etc/passwd"}),
    ("run_bundle", {"path": "{outside}"}),
])
async def test_a_file_tool_refuses_paths_outside_the_allowed_roots(work, tool, arguments):
    inside, outside = work
    (outside / "app.log").write_text("RuntimeError: secret\n")
    (inside / "ok.log").write_text("RuntimeError: fine\n")
    filled = json.loads(json.dumps(arguments).replace("{inside}", str(inside)).replace("{outside}", str(outside)))
    message = error_text(await call(tool, filled))
    assert "outside the allowed roots" in message and str(inside) in message and "--allow" in message


async def test_a_symlink_in_the_root_does_not_lead_out(work):
    inside, outside = work
    (outside / "app.log").write_text("RuntimeError: secret\n")
    (inside / "logs").mkdir()
    (inside / "logs" / "rank0.log").symlink_to(outside / "app.log")
    assert "resolves to" in error_text(await call("analyze_logs", {"paths": [str(inside / "logs")]}))
    assert "resolves to" in error_text(await call("diagnose", {"path": str(inside / "logs" / "rank0.log")}))


async def test_inputs_over_the_size_limit_are_refused_with_the_option_to_raise_it(work):
    inside, _ = work
    current = server.settings()
    server.configure(ServerSettings(roots=current.roots, max_log_bytes=1000, max_text_bytes=100))
    (inside / "big.log").write_bytes(b"RuntimeError: x\n" * 100)
    assert "--max-log-mb" in error_text(await call("analyze_logs", {"paths": [str(inside / "big.log")]}))
    assert "limit" in error_text(await call("diagnose", {"text": "RuntimeError: " + "x" * 200}))


async def test_a_call_over_the_time_limit_is_stopped(work, tmp_path, monkeypatch):
    hang = tmp_path / "hang"
    hang.write_text("#!/bin/sh\nsleep 60\n")
    hang.chmod(0o755)
    real = server.run_in_worker
    monkeypatch.setattr(server, "run_in_worker", lambda f, kw, limit: real(f, kw, limit, python=str(hang)))
    current = server.settings()
    server.configure(ServerSettings(roots=current.roots, time_limit=1))
    assert "--time-limit" in error_text(await call("health_check", {}))


async def test_client_roots_widen_what_may_be_read(work, tmp_path):
    _, outside = work
    (outside / "app.log").write_text("RuntimeError: NPU graphs must be captured on a non-default stream.\n")
    import mcp.types as types

    async def roots(_context):
        return types.ListRootsResult(roots=[types.Root(uri=outside.as_uri())])

    async with Client(server.server, mode="legacy", list_roots_callback=roots) as client:
        result = await client.call_tool("diagnose", {"path": str(outside / "app.log"), "lang": "en"})
    assert not result.is_error, result.content
    current = server.settings()
    server.configure(ServerSettings(roots=current.roots, client_roots=False))
    async with Client(server.server, mode="legacy", list_roots_callback=roots) as client:
        refused = await client.call_tool("diagnose", {"path": str(outside / "app.log")})
    assert "outside the allowed roots" in error_text(refused)


# --- bad arguments: errors, never a crash -------------------------------------------------------

@pytest.mark.parametrize("tool, arguments, expected", [
    ("diagnose", {}, "exactly one of"),
    ("diagnose", {"text": "x", "path": "y"}, "exactly one of"),
    ("diagnose", {"text": "RuntimeError: x", "lang": "fr"}, "lang"),
    ("diagnose", {"text": 42}, "text"),
    ("diagnose", {"text": "   "}, "empty"),
    ("analyze_logs", {"paths": []}, "paths"),
    ("analyze_logs", {"paths": ["{inside}/ok.log"], "since": "yesterday"}, "since"),
    ("lookup_error_code", {}, "code"),
    ("search_knowledge", {"question": "capture", "limit": 0}, "limit"),
    ("record_case", {}, "exactly one of"),
    ("record_case", {"report_path": "{inside}/ok.log"}, "not a diagnosis JSON"),
    ("health_check", {"backend": "tpu"}, "backend"),
    ("list_patterns", {"phase": "warmup"}, "phase"),
    ("perf_compare", {"baseline": "{inside}/ok.log", "candidate": "{inside}/ok.log"}, "ok.log"),
    ("no_such_tool", {}, "no_such_tool"),
])
async def test_bad_arguments_give_an_error_the_model_can_read(work, tool, arguments, expected):
    inside, _ = work
    (inside / "ok.log").write_text("RuntimeError: fine\n")
    filled = json.loads(json.dumps(arguments).replace("{inside}", str(inside)))
    message = error_text(await call(tool, filled))
    assert expected in message and "internal error" not in message


async def test_a_missing_capability_says_so(work, monkeypatch):
    import npu_graph_skill.api as api

    def missing(_text):
        raise ModuleNotFoundError("No module named 'npu_graph_skill.skill.routing'", name="npu_graph_skill.skill.routing")

    monkeypatch.setattr(api, "route_request", missing)
    assert "not installed in this version" in error_text(await call("route_request", {"text": "hello"}))


# --- resources and the prompt -------------------------------------------------------------------

async def test_resources_pattern_errcode_concept_and_catalogue(work):
    async with Client(server.server) as client:
        pattern = json.loads((await client.read_resource("pattern://P-CAP-011")).contents[0].text)
        code = json.loads((await client.read_resource("errcode://0x7bc83")).contents[0].text)
        catalogue = json.loads((await client.read_resource("npu-graph://catalogue")).contents[0].text)
        concept = (await client.read_resource(f"concept://{catalogue['concepts'][0]['id']}")).contents[0].text
        for missing in ("pattern://P-NOPE-999", "errcode://999999999", "concept://no-such-note"):
            with pytest.raises(MCPError):
                await client.read_resource(missing)
    assert pattern["id"] == "P-CAP-011" and pattern["phase"] == "capture"
    assert code["normalized"] == "507011" and code["entries"]
    assert len(catalogue["patterns"]) > 20 and catalogue["concepts"]
    assert "## 中文" in concept and "## English" in concept and "## Anchors" in concept


async def test_the_prompt_builds_the_four_section_report_from_a_pasted_error(work, shared_cases):
    text = case_text(shared_cases, "vllm-ascend-2629")
    async with Client(server.server) as client:
        zh = (await client.get_prompt("diagnosis_report", {"error": text})).messages[0].content.text
        en = (await client.get_prompt("diagnosis_report", {"error": text, "lang": "en"})).messages[0].content.text
        with pytest.raises(MCPError, match="empty"):
            await client.get_prompt("diagnosis_report", {"error": "  "})
    for section in ("问题概况", "根因分析", "修复建议", "验证步骤"):
        assert section in zh
    for section in ("Overview", "Root cause", "Fix", "Verification"):
        assert section in en
    assert "207005" in en and "P-CAP-011" in en  # the diagnosis itself is in the prompt, not only instructions


# --- lint: the user's script, inside the roots only ------------------------------------------------

async def test_lint_tool_gives_the_cli_findings_and_refuses_paths_outside(work, run_cli):
    import pathlib
    import shutil

    inside, outside = work
    fixture = pathlib.Path(__file__).parent / "data" / "lint" / "chain"
    shutil.copytree(fixture, inside / "chain")
    code, out, _ = run_cli("lint", str(inside / "chain"), "--json", "--lang", "en")
    cli = json.loads(out)
    result = await call("lint", {"paths": [str(inside / "chain")], "lang": "en"})
    assert not result.is_error, result.content
    got = result.structured_content
    assert got["schema"] == "npu-graph-skill/lint/1" and got["counts"] == cli["counts"]
    assert [(f["rule"], f["line"]) for f in got["findings"]] == [("NGL001", 5)]
    assert [s["text"] for s in got["findings"][0]["chain"]] == [s["text"] for s in cli["findings"][0]["chain"]]
    (outside / "x.py").write_text("import torch\n", encoding="utf-8")
    refused = await call("lint", {"paths": [str(outside / "x.py")]})
    assert "outside the allowed roots" in error_text(refused)
    unknown = await call("lint", {"paths": [str(inside / "chain")], "select": ["NGL999"]})
    assert "no such rule" in error_text(unknown)


async def test_lint_does_not_follow_calls_into_modules_outside_the_roots(work):
    import pathlib
    import shutil

    inside, outside = work
    fixture = pathlib.Path(__file__).parent / "data" / "lint" / "chain" / "serving"
    shutil.copytree(fixture, outside / "serving")
    # the capture site is inside the roots; the model and the helper it calls are not
    (inside / "serving").mkdir()
    (inside / "serving" / "__init__.py").write_text("", encoding="utf-8")
    shutil.copy(fixture / "runner.py", inside / "serving" / "runner.py")
    for name in ("model.py", "ops.py"):
        (inside / "serving" / name).symlink_to(outside / "serving" / name)
    result = await call("lint", {"paths": [str(inside / "serving" / "runner.py")], "lang": "en"})
    assert "outside the allowed roots" not in str(result.content)
    assert result.structured_content["findings"] == []
