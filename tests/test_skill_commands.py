"""Every `npu-graph ...` command line the skill tells an agent to run exists, with those options.

The other commands are built in parallel and change; this test keeps the skill's instructions in
step with their parsers. A command whose module is not built yet is reported as skipped, never
passed silently.
"""
from __future__ import annotations

import argparse
import re
import shlex
from typing import Dict, List, Optional, Tuple

import pytest

from npu_graph_skill.cli import COMMANDS, build_parser
from skill_fakes import fake_bundle

INLINE_RE = re.compile(r"`npu-graph ([^`]+)`")
FENCE_RE = re.compile(r"```[a-z]*\n(.*?)```", re.DOTALL)


def _segments(text: str) -> List[str]:
    """The `npu-graph ...` commands of a Markdown text: inline code spans, and lines of code blocks
    (pipelines split at `|`, comments dropped)."""
    found = [m.group(1) for m in INLINE_RE.finditer(FENCE_RE.sub("", text))]
    for block in FENCE_RE.findall(text):
        for line in block.splitlines():
            for part in line.split("#", 1)[0].split("|"):
                part = part.strip()
                if part.startswith("npu-graph "):
                    found.append(part[len("npu-graph "):])
    return found


def command_lines() -> List[Tuple[str, str]]:
    """(file, the words after `npu-graph`) for every command line in the rendered bundle."""
    found = []
    for item in fake_bundle().files:
        if item.path.endswith(".md"):
            found += [(item.path, words.strip()) for words in _segments(item.data.decode("utf-8"))]
    return sorted(set(found))


def subcommands(parser: argparse.ArgumentParser) -> Dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # noqa: SLF001 - argparse offers no public way to walk sub-parsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def resolve(words: List[str]) -> Tuple[Optional[argparse.ArgumentParser], List[str]]:
    """The parser a command line reaches, and the words that named it."""
    parser = build_parser(words[:1])
    path: List[str] = []
    for word in words:
        children = subcommands(parser)
        if word not in children:
            break
        parser = children[word]
        path.append(word)
    return parser, path


def options(parser: argparse.ArgumentParser) -> set:
    return {option for action in parser._actions for option in action.option_strings}  # noqa: SLF001


LINES = command_lines()


def test_the_skill_names_commands_at_all():
    names = {words.split()[0] for _, words in LINES}
    assert {"diagnose", "doctor", "env", "errcode", "patterns", "logs", "ask", "perf", "kb", "route", "skill", "mcp",
            "run", "bundle"} <= names


@pytest.mark.parametrize("where, words", LINES, ids=[f"{w}: {c}"[:80] for w, c in LINES])
def test_each_command_line_in_the_skill_matches_the_cli(where, words):
    try:
        tokens = shlex.split(words)
    except ValueError:
        tokens = words.split()
    command = tokens[0]
    if command.startswith("-"):  # `npu-graph --version`
        assert command in options(build_parser([])), f"{where}: npu-graph has no option {command}"
        return
    if command.isupper():  # a placeholder: `npu-graph COMMAND --help`
        return
    assert command in COMMANDS, f"{where}: `npu-graph {command}` is not a command of the CLI"
    try:
        parser, path = resolve(tokens)
    except ImportError as exc:
        pytest.skip(f"`npu-graph {command}` is not built yet ({exc})")
    if subcommands(parser):  # a group named on its own (`npu-graph kb`) refers to the command as a whole
        assert len(tokens) == len(path) or "--help" in tokens, f"{where}: `npu-graph {words}` names no sub-command of {path}"
        return
    known = options(parser)
    for token in tokens[len(path):]:
        if token == "--":
            break  # what follows is another command's (`npu-graph run -- python train.py --flag`)
        option = token.split("=", 1)[0]
        if option.startswith("--"):
            assert option in known, f"{where}: `npu-graph {' '.join(path)}` has no option {option}; it has {sorted(known)}"
