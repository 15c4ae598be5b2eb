"""`npu-graph mcp` as a real stdio subprocess, driven by the SDK's client as an agent would: the
protocol works end to end (so nothing else reaches stdout), a real case gets the CLI's diagnosis,
refusals and bad arguments come back as errors and the server keeps serving.

Needs the `mcp` extra (SDK 2.x, Python >= 3.10); skipped without it. One server start per test
module (~1-2 s, mostly importing the SDK).
"""
from __future__ import annotations

import json
import os
import sys

import pytest

pytest.importorskip("mcp", reason="the MCP SDK (`pip install 'npu-graph-skill[mcp]'`, Python >= 3.10) is not installed")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def server_params(work_dir, *extra: str) -> StdioServerParameters:
    # The SDK passes the child only HOME, LOGNAME, PATH, SHELL, TERM, USER: add what the package needs.
    env = {key: os.environ[key] for key in ("PYTHONPATH", "LANG", "LC_ALL") if key in os.environ}
    env["NPU_GRAPH_CACHE_DIR"] = str(work_dir / ".cache")
    return StdioServerParameters(command=sys.executable, args=["-m", "npu_graph_skill", "mcp", *extra],
                                 env=env, cwd=str(work_dir))


async def test_a_stdio_session_lists_tools_diagnoses_refuses_and_keeps_serving(tmp_path, shared_cases, run_cli):
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    case = next(c for c in shared_cases if c["id"] == "vllm-ascend-2629")
    saved = work / "error.txt"
    saved.write_text(case["error_text"], encoding="utf-8")
    (outside / "app.log").write_text("RuntimeError: secret\n")
    code, out, _ = run_cli("diagnose", str(saved), "--json", "--lang", "en")
    cli = json.loads(out)

    with open(tmp_path / "server.stderr", "w") as errlog:
        async with Client(stdio_client(server_params(work), errlog=errlog), read_timeout_seconds=120) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"diagnose", "analyze_logs", "logs_merge", "record_case", "health_check", "run_bundle", "lint"} <= names \
                and len(names) == 16

            result = await client.call_tool("diagnose", {"path": "error.txt", "lang": "en"})  # relative to the server's cwd
            assert not result.is_error, result.content
            got = result.structured_content
            assert (got["phase"], got["root_layer"], got["candidates"][0]["id"]) == \
                (cli["phase"], cli["root_layer"], cli["candidates"][0]["id"])
            assert got["phase"] == case["phase"].lower()

            refused = await client.call_tool("analyze_logs", {"paths": [str(outside / "app.log")]})
            assert refused.is_error and "outside the allowed roots" in refused.content[0].text

            bad = await client.call_tool("diagnose", {"text": "RuntimeError: x", "lang": "klingon"})
            assert bad.is_error and "lang" in bad.content[0].text

            code_info = await client.call_tool("lookup_error_code", {"code": "207005"})  # still serving
            assert code_info.structured_content["entries"][0]["code"] == "207005"
            pattern = await client.read_resource("pattern://P-CAP-011")
            assert json.loads(pattern.contents[0].text)["id"] == "P-CAP-011"
    server_log = (tmp_path / "server.stderr").read_text()
    assert f"allowed roots: {os.path.realpath(work)}" in server_log  # the server's own words go to stderr
    assert "Traceback" not in server_log


async def test_allow_opens_another_folder_over_stdio(tmp_path):
    work, logs = tmp_path / "work", tmp_path / "logs"
    work.mkdir()
    logs.mkdir()
    (logs / "worker.log").write_text("RuntimeError: NPU graphs must be captured on a non-default stream.\n")
    async with Client(server_params(work, "--allow", str(logs)), read_timeout_seconds=120) as client:
        result = await client.call_tool("diagnose", {"path": str(logs / "worker.log"), "lang": "en"})
    assert not result.is_error, result.content
    assert result.structured_content["phase"] == "capture"
