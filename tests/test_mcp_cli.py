"""`npu-graph mcp` as a command: the registration snippets (--print-config), the message when the
`mcp` extra is missing, bad options. None of these needs the MCP SDK."""
from __future__ import annotations

import json
import os
import sys

import pytest

from npu_graph_skill.mcp.config import AGENTS, server_command


def test_print_config_for_claude_is_a_mcp_json_file_and_says_how_to_add_it(run_cli):
    code, out, err = run_cli("mcp", "--print-config", "--agent", "claude")
    assert code == 0
    entry = json.loads(out)["mcpServers"]["npu-graph"]
    assert "mcp" in entry["args"] and entry["command"]
    assert "claude mcp add --scope project npu-graph --" in err and ".mcp.json" in err


@pytest.mark.parametrize("agent, where", [("cursor", ".cursor/mcp.json"), ("trae", ".trae/mcp.json")])
def test_cursor_and_trae_take_the_same_mcp_servers_json(run_cli, agent, where):
    code, out, err = run_cli("mcp", "--print-config", "--agent", agent)
    assert code == 0 and where in err
    assert set(json.loads(out)["mcpServers"]) == {"npu-graph"}


def test_codex_gets_a_config_toml_table(run_cli):
    code, out, err = run_cli("mcp", "--print-config", "--agent", "codex", "--allow", os.getcwd())
    assert code == 0 and "codex mcp add npu-graph --" in err
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        assert out.startswith("[mcp_servers.npu-graph]\n")
        return
    server = tomllib.loads(out)["mcp_servers"]["npu-graph"]
    assert server["args"][-2:] == ["--allow", os.getcwd()]


def test_opencode_gets_a_local_server_with_the_command_as_one_list(run_cli):
    code, out, _ = run_cli("mcp", "--print-config", "--agent", "opencode")
    server = json.loads(out)["mcp"]["servers"]["npu-graph"]
    assert code == 0 and server["type"] == "local" and server["command"][-1] == "mcp"


def test_print_config_without_an_agent_is_a_guide_for_every_agent(run_cli):
    code, out, _ = run_cli("mcp", "--print-config")
    assert code == 0
    for name in ("Claude Code", "Cursor", "Trae", "Codex", "OpenCode"):
        assert f"## {name}" in out
    assert out.count('"npu-graph"') >= len(AGENTS) - 1


def test_the_command_is_npu_graph_when_that_is_this_install_on_path(tmp_path):
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    python, script = bin_dir / "python", bin_dir / "npu-graph"
    script.write_text("#!/bin/sh\n")
    on_path = server_command(which=lambda _: str(script), executable=str(python))
    assert on_path == ["npu-graph", "mcp"]
    elsewhere = server_command(which=lambda _: "/usr/local/bin/npu-graph", executable=str(python))
    assert elsewhere == [str(script), "mcp"]  # the agent may start it without the venv on PATH
    script.unlink()
    bare = server_command(["/data"], which=lambda _: None, executable=str(python))
    assert bare == [str(python), "-m", "npu_graph_skill", "mcp", "--allow", "/data"]


def test_without_the_mcp_extra_one_line_says_how_to_install_it(run_cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` now fails as when it is not installed
    monkeypatch.delitem(sys.modules, "npu_graph_skill.mcp.server", raising=False)
    import npu_graph_skill.mcp as package

    monkeypatch.delattr(package, "server", raising=False)  # an earlier import left it on the package
    code, out, err = run_cli("mcp")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "pip install 'npu-graph-skill[mcp]'" in err and "3.10" in err


def test_bad_options_exit_2(run_cli, tmp_path):
    code, _, err = run_cli("mcp", "--allow", str(tmp_path / "missing"))
    assert code == 2 and "no such directory" in err
    with pytest.raises(SystemExit) as info:
        run_cli("mcp", "--time-limit", "0")
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        run_cli("mcp", "--print-config", "--agent", "vim")


def test_help_lists_the_tools_and_the_registration(capsys):
    from npu_graph_skill.cli import main

    with pytest.raises(SystemExit) as info:
        main(["mcp", "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    assert "claude mcp add --scope project npu-graph -- npu-graph mcp" in out and "--allow DIR" in out
    assert "diagnose, analyze_logs" in out and "pattern://{id}" in out
