"""`npu-graph mcp`: serve the tools over MCP (stdio), or print the snippet that registers the server."""
from __future__ import annotations

import argparse
import sys

from npu_graph_skill.core.errors import UserError

INSTALL_HINT = ("the MCP server needs the optional `mcp` extra (MCP SDK 2.x, Python >= 3.10): "
                "pip install 'npu-graph-skill[mcp]'")

DESCRIPTION = ("Serve npu-graph's tools (diagnose, logs, error codes, knowledge, doctor, perf, cases) to coding "
               "agents over MCP, on stdin/stdout; or print how to register the server with an agent.")

EPILOG = """examples:
  claude mcp add --scope project npu-graph -- npu-graph mcp    register with Claude Code (.mcp.json)
  npu-graph mcp --print-config                     how to register it with every agent
  npu-graph mcp --print-config --agent cursor > .cursor/mcp.json
  npu-graph mcp --print-config --agent codex >> ~/.codex/config.toml
  npu-graph mcp --allow /data/logs                 also let the tools read /data/logs
  npu-graph mcp --time-limit 600 --max-log-mb 2048 bigger inputs, longer calls

tools: diagnose, analyze_logs, logs_merge, lookup_error_code, search_knowledge, locate_source,
find_raise_site, health_check, perf_trace, perf_compare, analyze_graph_dump, record_case, list_patterns,
route_request
resources: pattern://{id}, errcode://{code}, concept://{name}, npu-graph://catalogue
prompt: diagnosis_report (the four-section report for a pasted error)

Safety: tools read only under the allowed roots — the working directory, $CLAUDE_PROJECT_DIR, each
--allow DIR, and the roots the client announces — after resolving symlinks; inputs over the size
limits and calls over the time limit are refused with a message the model can act on. No shell.
The server speaks MCP on stdin/stdout; it is started by the agent, not run by hand.
exit: 0 served until the client closed, 2 bad usage or the `mcp` extra missing
"""


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    from npu_graph_skill.mcp.config import AGENTS
    from npu_graph_skill.mcp.guard import DEFAULT_MAX_LOG_BYTES, DEFAULT_MAX_TEXT_BYTES, DEFAULT_TIME_LIMIT, MB

    parser = subparsers.add_parser(name, help=help_text, description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--allow", action="append", default=[], metavar="DIR",
                        help="another folder the tools may read (repeat for more); the working directory always is")
    parser.add_argument("--time-limit", type=_positive, default=DEFAULT_TIME_LIMIT, metavar="S",
                        help=f"seconds one file-reading or probing call may run (default {DEFAULT_TIME_LIMIT:g})")
    parser.add_argument("--max-log-mb", type=_positive, default=DEFAULT_MAX_LOG_BYTES / MB, metavar="N",
                        help=f"largest log / trace / dump input, in MB (default {DEFAULT_MAX_LOG_BYTES // MB})")
    parser.add_argument("--max-text-mb", type=_positive, default=DEFAULT_MAX_TEXT_BYTES / MB, metavar="N",
                        help=f"largest pasted text or JSON file, in MB (default {DEFAULT_MAX_TEXT_BYTES // MB})")
    parser.add_argument("--no-client-roots", dest="client_roots", action="store_false",
                        help="ignore the roots the client announces; only the working directory and --allow")
    parser.add_argument("--print-config", action="store_true",
                        help="print the snippet that registers this server with an agent, and exit")
    parser.add_argument("--agent", choices=AGENTS, default=None,
                        help="with --print-config: only this agent's file content on stdout (where it goes on stderr)")
    parser.set_defaults(func=run)
    return parser


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0: {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from npu_graph_skill.mcp.guard import MB, ServerSettings

    settings = ServerSettings.create(allow=args.allow, time_limit=args.time_limit,
                                     max_log_bytes=int(args.max_log_mb * MB), max_text_bytes=int(args.max_text_mb * MB),
                                     client_roots=args.client_roots)
    if args.print_config or args.agent:
        return print_config(args.agent, args.allow)
    try:
        from npu_graph_skill.mcp import server
    except ImportError as exc:
        if (getattr(exc, "name", "") or "").split(".")[0] in ("mcp", "mcp_types", "pydantic", "anyio"):
            raise UserError(INSTALL_HINT) from None
        raise
    if sys.stdin.isatty():
        print("npu-graph mcp: serving MCP on stdin/stdout (agents start it themselves; "
              "`npu-graph mcp --print-config` shows how to register it). Ctrl-C to stop.", file=sys.stderr)
    print(f"npu-graph mcp: allowed roots: {', '.join(settings.roots)}", file=sys.stderr)
    server.serve(settings)
    return 0


def print_config(agent, allow) -> int:
    from npu_graph_skill.mcp.config import guide, server_command, snippet

    command = server_command(allow)
    if agent is None:
        sys.stdout.write(guide(command) + "\n")
        return 0
    content, where = snippet(agent, command)
    print(where, file=sys.stderr)
    sys.stdout.write(content)
    return 0
