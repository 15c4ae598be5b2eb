"""Cheap substring tests that rule a regex out before it is compiled.

A diagnosis holds a few hundred regexes (pattern matchers, the torch_npu message table) while a
pasted error mentions a handful of them; compiling them all would dominate start-up. For each
top-level alternative of a regex we take the longest stretch of literal text outside any group or
class — text every match must contain. If none of those texts occurs in the (lower-cased) input,
the regex cannot match.
"""
from __future__ import annotations

from typing import List, Optional

MIN_LITERAL = 4
_META = ".^$*+?{}[]|()"


def _split_top_level(regex: str) -> List[str]:
    branches, depth, start, i = [], 0, 0, 0
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            end = regex.find("]", i + 2)
            i = end + 1 if end > 0 else len(regex)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            branches.append(regex[start:i])
            start = i + 1
        i += 1
    branches.append(regex[start:])
    return branches


def _required_run(branch: str) -> str:
    """The longest literal run at nesting depth 0 of one alternative."""
    runs: List[str] = []
    current: List[str] = []
    depth, i = 0, 0
    while i < len(branch):
        char = branch[i]
        if char == "\\" and i + 1 < len(branch):
            nxt = branch[i + 1]
            if depth == 0:
                if nxt.isalnum():
                    runs.append("".join(current))
                    current = []
                else:
                    current.append(nxt)
            i += 2
            continue
        if char == "[":
            end = branch.find("]", i + 2)
            runs.append("".join(current))
            current = []
            i = end + 1 if end > 0 else len(branch)
            continue
        if char == "(":
            depth += 1
            runs.append("".join(current))
            current = []
        elif char == ")":
            depth -= 1
            if i + 1 < len(branch) and branch[i + 1] in "?*{":
                pass  # an optional group: already excluded, it was at depth > 0
        elif depth == 0:
            if char in "*?{":
                if current:
                    current.pop()  # the character before may be absent
                runs.append("".join(current))
                current = []
                if char == "{":
                    end = branch.find("}", i)
                    i = end if end > 0 else i
            elif char in _META:
                runs.append("".join(current))
                current = []
            else:
                current.append(char)
        i += 1
    runs.append("".join(current))
    return max(runs, key=len)


def required_literals(regex: str) -> Optional[List[str]]:
    """Lower-cased texts one of which every match contains, or None when the regex has an
    alternative without a usable literal (then it must simply be run)."""
    literals = []
    for branch in _split_top_level(regex):
        run = _required_run(branch).strip().lower()
        if len(run) < MIN_LITERAL:
            return None
        literals.append(run)
    return literals


def may_match(literals: Optional[List[str]], lower_text: str) -> bool:
    return literals is None or any(literal in lower_text for literal in literals)
