"""Cheap substring tests that rule a regex out before it is compiled.

A diagnosis holds a few hundred regexes (pattern matchers, the torch_npu message table, the context
signs) while a pasted error mentions a handful of them; compiling them all would dominate start-up.
From the regex's parse tree we take texts every match must contain: a run of literal characters, or
a required group whose every alternative holds one (`(AttributeError|TypeError)`), whichever is the
most selective. If none of those texts occurs in the (lower-cased) input, the regex cannot match.
Working them out costs about as much as compiling, so the knowledge's regexes have theirs computed
once and kept in the user's cache with the parsed knowledge (`seed`); `literals` answers from memory.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional

try:  # Python 3.11+
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.9 / 3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]

MIN_LITERAL = 3  # bytes of UTF-8: three ASCII letters ("NPU", "MTP"), or one CJK character
VERSION = "3"  # of the analysis: part of the cache key of the computed literals

_ZERO_WIDTH = {"AT", "ASSERT", "ASSERT_NOT"}  # \b, ^, lookarounds: a run of literals goes on across them
_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}
_MEMO: Dict[str, Optional[List[str]]] = {}


def required_literals(regex: str) -> Optional[List[str]]:
    """Lower-cased texts one of which every match contains, or None when there is no such set of texts
    of at least MIN_LITERAL bytes each (then the regex must simply be run)."""
    try:
        tree = _sre_parse.parse(regex)
    except Exception:  # noqa: BLE001 - an invalid regex is refused elsewhere; here it is just run
        return None
    return _of_sequence(list(tree))


def literals(regex: str) -> Optional[List[str]]:
    """`required_literals`, remembered (and seeded from the cache)."""
    if regex not in _MEMO:
        _MEMO[regex] = required_literals(regex)
    return _MEMO[regex]


def seed(table: Dict[str, Any]) -> None:
    """Take the literals computed earlier for many regexes at once (see `table`)."""
    for regex, found in table.items():
        _MEMO.setdefault(regex, list(found) if found is not None else None)


def table(regexes: Iterable[str]) -> Dict[str, Optional[List[str]]]:
    return {regex: literals(regex) for regex in regexes if regex}


def _score(texts: List[str]) -> int:
    return min(len(text.encode("utf-8")) for text in texts)


def _of_sequence(items: List[Any]) -> Optional[List[str]]:
    """The most selective requirement among the literal runs and required parts of a sequence."""
    options: List[List[str]] = []
    run: List[str] = []

    def close_run() -> None:
        text = "".join(run).strip().lower()
        if text:
            options.append([text])
        run.clear()

    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(arg))
            continue
        if name in _ZERO_WIDTH:
            continue
        close_run()
        inner = _required_part(name, arg)
        if inner:
            options.append(inner)
    close_run()
    usable = [texts for texts in options if _score(texts) >= MIN_LITERAL]
    if not usable:
        return None
    return max(usable, key=lambda texts: (_score(texts), -len(texts)))


def _required_part(name: str, arg: Any) -> Optional[List[str]]:
    """What a non-literal item requires of every match: a group, a branch or a repeat of at least once."""
    if name == "SUBPATTERN":
        return _of_sequence(list(arg[-1]))
    if name == "ATOMIC_GROUP":
        return _of_sequence(list(arg))
    if name in _REPEATS:
        low, _high, body = arg
        return _of_sequence(list(body)) if low >= 1 else None
    if name == "BRANCH":
        found: List[str] = []
        for alternative in arg[1]:
            texts = _of_sequence(list(alternative))
            if texts is None:
                return None
            found.extend(text for text in texts if text not in found)
        return found
    return None


def may_match(literals: Optional[List[str]], lower_text: str) -> bool:
    return literals is None or any(literal in lower_text for literal in literals)
