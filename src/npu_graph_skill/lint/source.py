"""Read one Python file for linting: bytes → text → `ast`, and the comments that steer the linter.

A file that cannot be linted (binary, undecodable, too large, a syntax error) is not an error of the
run: it becomes a `Skipped` note with the reason, and the other files are linted as usual.
"""
from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from typing import Dict, Optional, Set, Tuple

from npu_graph_skill.lint.model import Skipped

MAX_FILE_BYTES = 4 * 1024 * 1024  # generated code beyond this is not what the rules are about
SNIFF_BYTES = 8192
DIRECTIVE = re.compile(r"#\s*npu-graph:\s*(ignore-file|ignore|captured)\b(?:\[([A-Za-z0-9_,\s]*)\])?")


class SourceFile:
    """A parsed file with its suppression comments (`# npu-graph: ignore[NGL001]`) and pragmas."""

    def __init__(self, path: str, text: str, tree: Optional[ast.Module], note: str = "") -> None:
        self.path = path
        self.text = text
        self._tree = tree
        self.note = note
        self.lines = text.splitlines()
        self.ignored: Dict[int, Set[str]] = {}  # line → rule ids, "*" = every rule
        self.ignore_file: Set[str] = set()
        self.captured_lines: Set[int] = set()  # lines with `# npu-graph: captured`
        if "npu-graph:" in text:
            self._read_directives()

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:  # dropped after the first parse (see `release`): parse again on demand
            self._tree = ast.parse(self.text, filename=self.path)
        return self._tree

    def release(self) -> None:
        """Forget the tree of a file nothing walks; it is parsed again if a call leads into it."""
        self._tree = None

    def _read_directives(self) -> None:
        for number, line in enumerate(self.lines, start=1):
            if "npu-graph:" not in line:
                continue
            for match in DIRECTIVE.finditer(line):
                kind, ids = match.group(1), match.group(2)
                rules = {r.strip().upper() for r in (ids or "").split(",") if r.strip()} or {"*"}
                if kind == "ignore":
                    self.ignored.setdefault(number, set()).update(rules)
                elif kind == "ignore-file":
                    self.ignore_file.update(rules)
                else:
                    self.captured_lines.add(number)

    def is_ignored(self, rule_id: str, lines) -> bool:
        if "*" in self.ignore_file or rule_id in self.ignore_file:
            return True
        for line in lines:
            rules = self.ignored.get(line)
            if rules and ("*" in rules or rule_id in rules):
                return True
        return False

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""


def read_source(path: str, shown: Optional[str] = None) -> Tuple[Optional[SourceFile], Optional[Skipped]]:
    """(the parsed file, None) or (None, why it was skipped)."""
    shown = shown or path
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            return None, Skipped(shown, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, not linted")
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:
        return None, Skipped(shown, "is a directory")
    except PermissionError:
        return None, Skipped(shown, "permission denied")
    except OSError as exc:
        return None, Skipped(shown, f"cannot read ({exc.strerror or exc})")
    if b"\x00" in data[:SNIFF_BYTES]:
        return None, Skipped(shown, "binary file, not Python source")
    text, note = _decode(data)
    if text is None:
        return None, Skipped(shown, note)
    try:
        tree = ast.parse(text, filename=shown)
    except SyntaxError as exc:
        return None, Skipped(shown, f"syntax error at line {exc.lineno}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, Skipped(shown, f"cannot be parsed ({exc.__class__.__name__})")
    return SourceFile(shown, text, tree, note), None


def _decode(data: bytes) -> Tuple[Optional[str], str]:
    """Text and a note. The declared encoding (PEP 263 cookie, BOM) first, as Python reads it; a file
    that is not valid in it but is valid GB18030 (Chinese comments saved by a GBK editor) is read anyway,
    with a note, since Python itself would refuse to run it."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"  # invalid bytes in the first two lines: no usable declaration either
    try:
        return data.decode(encoding).lstrip("\ufeff"), ""
    except (UnicodeDecodeError, LookupError):
        pass
    try:
        return data.decode("gb18030"), f"not valid {encoding} (Python would refuse to run it); read as GB18030"
    except UnicodeDecodeError:
        return None, f"not valid {encoding} or GB18030 text"
