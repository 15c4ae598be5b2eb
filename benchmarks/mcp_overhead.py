"""What an agent pays per MCP tool call, against the ways it could get the same answer otherwise.

    python benchmarks/mcp_overhead.py [--runs 7]

On the same error text (examples/vllm-replay-after-capture-copy.log), in the same run, medians of
--runs: (a) `api.diagnose` in-process, warm — the floor; (b) the `diagnose` MCP tool through the
SDK's in-memory client, which runs the call in a worker process for its time limit; (c) the agent
shelling out `npu-graph diagnose --json`; (d) the `lookup_error_code` tool, which runs in-process.
Also: stdio server start (spawn → tools listed) and the size of the structured results. Prints
ratios against (a) and (c).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "vllm-replay-after-capture-copy.log"


def median_seconds(func, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    try:
        import anyio
        from mcp import Client, StdioServerParameters
    except ImportError:
        print("needs the mcp extra: pip install 'npu-graph-skill[mcp]' (Python >= 3.10)", file=sys.stderr)
        return 2
    from npu_graph_skill import api
    from npu_graph_skill.mcp import server
    from npu_graph_skill.mcp.guard import ServerSettings

    text = EXAMPLE.read_text(encoding="utf-8")
    server.configure(ServerSettings.create(cwd=str(REPO), environ={}))
    api.diagnose(text=text, lang="en")  # warm the knowledge cache for (a)

    direct = median_seconds(lambda: api.diagnose(text=text, lang="en"), args.runs)
    shell = median_seconds(lambda: subprocess.run([sys.executable, "-m", "npu_graph_skill", "diagnose", "--json",
                                                   "--lang", "en", str(EXAMPLE)], capture_output=True, check=True),
                           args.runs)
    sizes = {}

    async def in_memory():
        async with Client(server.server) as client:
            async def tool(name, arguments):
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                sizes[name] = len(json.dumps(result.structured_content, ensure_ascii=False).encode("utf-8"))

            times = {}
            for name, arguments in (("diagnose", {"text": text, "lang": "en"}), ("lookup_error_code", {"code": "107030"})):
                samples = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    await tool(name, arguments)
                    samples.append(time.perf_counter() - start)
                times[name] = statistics.median(samples)
            return times

    async def stdio_start():
        samples = []
        for _ in range(max(3, args.runs // 2)):
            start = time.perf_counter()
            params = StdioServerParameters(command=sys.executable, args=["-m", "npu_graph_skill", "mcp"], cwd=str(REPO))
            async with Client(params) as client:
                await client.list_tools()
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    tool_times = anyio.run(in_memory)
    start_time = anyio.run(stdio_start)
    print(f"input: {EXAMPLE.relative_to(REPO)} ({len(text.encode()):,} bytes), medians of {args.runs} runs")
    print(f"(a) api.diagnose in-process (floor)      {direct * 1000:8.1f} ms")
    print(f"(b) MCP diagnose tool (worker process)   {tool_times['diagnose'] * 1000:8.1f} ms   "
          f"{tool_times['diagnose'] / direct:5.1f}x (a)   {tool_times['diagnose'] / shell:5.2f}x (c)")
    print(f"(c) shell out: npu-graph diagnose --json {shell * 1000:8.1f} ms")
    print(f"(d) MCP lookup_error_code (in-process)   {tool_times['lookup_error_code'] * 1000:8.1f} ms")
    print(f"stdio server start → tools listed        {start_time * 1000:8.1f} ms (once per agent session)")
    print(f"structured result sizes: diagnose {sizes['diagnose']:,} bytes, lookup_error_code {sizes['lookup_error_code']:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
