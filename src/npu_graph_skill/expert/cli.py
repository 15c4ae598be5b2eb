"""`npu-graph ask` and `npu-graph code`: the expert commands. Each builds its parser in its own
module, imported only when that command runs."""
from __future__ import annotations

import argparse


def add_parser(subparsers, name: str, help_text: str) -> argparse.ArgumentParser:
    if name == "ask":
        from npu_graph_skill.expert.ask_cli import add_ask_parser

        return add_ask_parser(subparsers, name, help_text)
    from npu_graph_skill.expert.code_cli import add_code_parser

    return add_code_parser(subparsers, name, help_text)
