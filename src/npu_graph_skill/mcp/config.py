"""`npu-graph mcp --print-config`: the snippet that registers the server with a coding agent.

With `--agent`, stdout carries exactly the file content (pipe it into the file) and stderr says
where it goes; without, a short guide for every agent. Formats, from each agent's documentation:
  Claude Code  .mcp.json {"mcpServers": {name: {command, args}}}; `claude mcp add --scope project`
               (code.claude.com/docs/en/mcp, as summarised in ../shared/reference/ecosystem.md §2.5)
  Cursor       .cursor/mcp.json, the same mcpServers JSON (cursor.com/docs/mcp)
  Trae         Settings → MCP → Add manually, or .trae/mcp.json, the same JSON (volcengine.com/docs/86677/2137601)
  Codex        [mcp_servers.NAME] command/args in ~/.codex/config.toml; `codex mcp add` (developers.openai.com/codex/mcp)
  OpenCode     opencode.json {"mcp": {"servers": {NAME: {"type": "local", "command": [...]}}}} (V2;
               V1 put NAME directly under "mcp" with "enabled": true) (opencode.ai/docs/mcp-servers)
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from typing import Dict, List, Optional, Sequence, Tuple

SERVER_NAME = "npu-graph"
AGENTS = ("claude", "cursor", "trae", "codex", "opencode")


def server_command(allow: Sequence[str] = (), which=shutil.which, executable: Optional[str] = None) -> List[str]:
    """How an agent should start this server: `npu-graph mcp` when that is this installation on PATH,
    else the absolute path of this installation's script (agents often start servers without the
    virtual environment on PATH), else `python -m npu_graph_skill mcp`."""
    executable = executable or sys.executable
    bin_dir = os.path.dirname(os.path.abspath(executable))
    script = os.path.join(bin_dir, "npu-graph")
    on_path = which("npu-graph")
    if on_path and os.path.dirname(os.path.abspath(on_path)) == bin_dir:
        command = ["npu-graph", "mcp"]
    elif os.path.isfile(script):
        command = [script, "mcp"]
    else:
        command = [os.path.abspath(executable), "-m", "npu_graph_skill", "mcp"]
    for directory in allow:
        command += ["--allow", os.path.abspath(os.path.expanduser(directory))]
    return command


def _mcp_servers_json(command: List[str]) -> str:
    return json.dumps({"mcpServers": {SERVER_NAME: {"command": command[0], "args": command[1:]}}}, indent=2)


def _codex_toml(command: List[str]) -> str:
    return (f"[mcp_servers.{SERVER_NAME}]\n"
            f"command = {json.dumps(command[0])}\n"
            f"args = [{', '.join(json.dumps(a) for a in command[1:])}]\n")


def _opencode_json(command: List[str]) -> str:
    return json.dumps({"$schema": "https://opencode.ai/config.json",
                       "mcp": {"servers": {SERVER_NAME: {"type": "local", "command": command}}}}, indent=2)


def snippet(agent: str, command: List[str]) -> Tuple[str, str]:
    """(file content for stdout, where it goes and the one-line alternative, for stderr)."""
    line = " ".join(shlex.quote(part) for part in command)
    if agent == "claude":
        return (_mcp_servers_json(command) + "\n",
                "# .mcp.json at the project root (commit it), or run instead:\n"
                f"#   claude mcp add --scope project {SERVER_NAME} -- {line}\n"
                "# then check with `claude mcp list`")
    if agent == "cursor":
        return (_mcp_servers_json(command) + "\n",
                "# .cursor/mcp.json in the project (or ~/.cursor/mcp.json for all projects); check Settings → MCP")
    if agent == "trae":
        return (_mcp_servers_json(command) + "\n",
                "# Trae: Settings → MCP → Add → Add manually, paste this; or save it as .trae/mcp.json "
                "(enable project MCP in the settings)")
    if agent == "codex":
        return (_codex_toml(command),
                "# append to ~/.codex/config.toml (or .codex/config.toml in a trusted project), or run instead:\n"
                f"#   codex mcp add {SERVER_NAME} -- {line}\n"
                "# then `/mcp` in a Codex session")
    if agent == "opencode":
        return (_opencode_json(command) + "\n",
                "# opencode.json at the project root (OpenCode V2). V1 wants the server directly under \"mcp\" "
                f"with \"enabled\": true; or run `opencode mcp add {SERVER_NAME} -- {line}`")
    raise ValueError(f"unknown agent {agent!r}; known: {', '.join(AGENTS)}")


def guide(command: List[str]) -> str:
    """Every agent's snippet, for a person reading the terminal."""
    names: Dict[str, str] = {"claude": "Claude Code", "cursor": "Cursor", "trae": "Trae", "codex": "Codex",
                             "opencode": "OpenCode"}
    parts = ["# 把 npu-graph MCP 服务注册到编码 Agent · Register the npu-graph MCP server with a coding agent",
             "# (npu-graph mcp --print-config --agent NAME prints only that agent's file content)", ""]
    for agent in AGENTS:
        content, where = snippet(agent, command)
        parts += [f"## {names[agent]}", where, content.rstrip(), ""]
    return "\n".join(parts)
