"""Does a regex backtrack catastrophically? A static check on the parsed regex, run when knowledge loads.

Python's `re` backtracks. Two shapes make it cost more than linear time in the length of the line:

* **nested** unbounded quantifiers whose iterations can split one string in several ways —
  `(a+)+`, `(\\w+\\s?)*`, `(?:\\d+|\\w+)*`, `(?:a|a)*` — exponential when the rest of the regex fails;
* **adjacent** unbounded quantifiers over overlapping classes, with nothing between them that
  only one of them can match — `\\d+\\d+`, `\\s*\\s*`, `.*:.*`, `[\\d .:]*\\s*` — polynomial; an
  unbounded repeat next to a bounded one of variable length (`\\w*[^\\n]{0,30}`) counts too: each
  search position then costs the length of the line.

The check reads the tree of `re`'s own parser (`re._parser` from Python 3.11, `sre_parse` before; the
tree is the same) and models every single-character class by the characters of a sample alphabet
it matches (ASCII, the regex's own literals, a few non-ASCII letters, digits and spaces). A repeat
counts as unbounded above `UNBOUNDED` iterations. Possessive repeats and atomic groups (3.11+)
never backtrack and are left alone.

`regex_hazard(pattern, flags)` returns a one-line reason or None.
"""
from __future__ import annotations

import functools

import re
from typing import FrozenSet, Iterator, List, Optional, Sequence, Tuple

try:  # Python >= 3.11: the parser moved into the re package (sre_parse is a deprecated alias)
    from re import _constants as _sre_constants  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.9 / 3.10
    import sre_constants as _sre_constants  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

MAXREPEAT = _sre_constants.MAXREPEAT
_IGNORECASE, _DOTALL, _ASCII = int(re.IGNORECASE), int(re.DOTALL), int(re.ASCII)
UNBOUNDED = 1000  # a repeat allowing more iterations than this is treated as unbounded
VARIABLE = 8  # next to an unbounded repeat, a bounded one of this much play costs as much per position

_SAMPLE = "\u00e9\u00df\u0130\u4e2d\u6355\u00a0\u3000\u2028\u0660\uff10\u00b2_"
_BASE_ALPHABET = frozenset(chr(c) for c in range(128)) | frozenset(_SAMPLE)

Chars = FrozenSet[str]


def _name(op) -> str:
    # Opcodes are ints with a name; opcodes of different kinds share values, so never key a dict by them.
    return getattr(op, "name", None) or str(op)


def _parse(pattern: str, flags: int):
    parsed = parse_tree(pattern, flags)
    state = getattr(parsed, "state", None) or getattr(parsed, "pattern", None)
    return parsed, int(getattr(state, "flags", flags))


@functools.lru_cache(maxsize=4096)
def parse_tree(pattern: str, flags: int = 0):
    """`re`'s own parse of a regex (read only), once per process: the hazard check and the word
    signatures of the diagnosis (diagnose/wording.py) both walk it."""
    return _sre_parse.parse(pattern, flags)


def _literals(items) -> Iterator[str]:
    """Every literal character of the parsed tree (added to the alphabet so that a class such as
    `[^x]` and a literal `é` meet where they should)."""
    for op, av in items:
        name = _name(op)
        if name in ("LITERAL", "NOT_LITERAL"):
            yield chr(av)
        elif name == "IN":
            for sub_op, sub_av in av:
                if _name(sub_op) == "LITERAL":
                    yield chr(sub_av)
                elif _name(sub_op) == "RANGE":
                    yield chr(sub_av[0])
                    yield chr(sub_av[1])
        else:
            for child in _children(name, av):
                yield from _literals(child)


def _children(name: str, av) -> List:
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return [av[2]]
    if name == "SUBPATTERN":
        return [av[-1]]
    if name == "BRANCH":
        return list(av[1])
    if name in ("ASSERT", "ASSERT_NOT"):
        return [av[1]]
    if name == "ATOMIC_GROUP":
        return [av]
    if name == "GROUPREF_EXISTS":
        return [branch for branch in av[1:] if branch is not None]
    return []


# --------------------------------------------------------------------------------------------
# A small model of the tree: single-character classes, sequences, alternatives, repeats.
# --------------------------------------------------------------------------------------------

class _Node:
    nullable = False

    def chars(self) -> Chars:  # every character any match may contain
        raise NotImplementedError


class _Char(_Node):
    def __init__(self, charset: Chars) -> None:
        self.charset = charset

    def chars(self) -> Chars:
        return self.charset


class _Empty(_Node):
    """Zero-width: anchors, lookarounds, `\\b`."""
    nullable = True

    def chars(self) -> Chars:
        return frozenset()


class _Opaque(_Node):
    """A back-reference or an atomic group: any text, but never a partner in a hazard."""

    def __init__(self, charset: Chars, nullable: bool) -> None:
        self.charset = charset
        self.nullable = nullable

    def chars(self) -> Chars:
        return self.charset


class _Seq(_Node):
    def __init__(self, items: List[_Node]) -> None:
        flat: List[_Node] = []
        for item in items:
            flat.extend(item.items if isinstance(item, _Seq) else [item])
        self.items = flat
        self.nullable = all(item.nullable for item in flat)

    def chars(self) -> Chars:
        out: FrozenSet[str] = frozenset()
        for item in self.items:
            out |= item.chars()
        return out


class _Alt(_Node):
    def __init__(self, branches: List[_Node]) -> None:
        self.branches = branches
        self.nullable = any(b.nullable for b in branches)

    def chars(self) -> Chars:
        out: FrozenSet[str] = frozenset()
        for branch in self.branches:
            out |= branch.chars()
        return out


class _Repeat(_Node):
    def __init__(self, body: _Node, low: int, high: int, possessive: bool) -> None:
        self.body = body
        self.low = low
        self.high = high
        self.possessive = possessive
        self.nullable = low == 0 or body.nullable
        self.unbounded = (high == MAXREPEAT or high > UNBOUNDED) and not possessive
        # Gives characters back to a neighbour in many ways (`?` and `{1,3}` only in a few: linear enough).
        self.variable = (self.unbounded or high - low >= VARIABLE) and not possessive

    def chars(self) -> Chars:
        return self.body.chars()


def _in_category(name: str, char: str, ascii_only: bool) -> bool:
    if name.startswith("CATEGORY_NOT_"):
        return not _in_category("CATEGORY_" + name[len("CATEGORY_NOT_"):], char, ascii_only)
    if ascii_only and ord(char) > 127:
        return False
    if name == "CATEGORY_DIGIT":
        return char.isdecimal()
    if name == "CATEGORY_WORD":
        return char.isalnum() or char == "_"
    if name == "CATEGORY_SPACE":
        return char.isspace()
    if name == "CATEGORY_LINEBREAK":
        return char == "\n"
    return False


class _Builder:
    def __init__(self, alphabet: Chars) -> None:
        self.alphabet = alphabet
        self.lookarounds: List[_Node] = []  # analysed on their own: they run at every position
        self._categories: dict = {}

    def build(self, items, flags: int) -> _Node:
        return _Seq([self.item(op, av, flags) for op, av in items])

    def _fold(self, chars: Chars, flags: int) -> Chars:
        if not flags & _IGNORECASE:
            return chars
        out = set(chars)
        for char in chars:
            out.update(v for v in (char.lower(), char.upper(), char.swapcase(), char.casefold()) if len(v) == 1)
        return frozenset(out)

    def _category(self, name: str, flags: int) -> Chars:
        key = (name, bool(flags & _ASCII))
        cached = self._categories.get(key)
        if cached is None:
            cached = frozenset(c for c in self.alphabet if _in_category(name, c, key[1]))
            self._categories[key] = cached
        return cached

    def charset(self, items, flags: int) -> Chars:
        negate = False
        members = set()
        for op, av in items:
            name = _name(op)
            if name == "NEGATE":
                negate = True
            elif name == "LITERAL":
                members.add(chr(av))
            elif name == "RANGE":
                low, high = av
                members.update(c for c in self.alphabet if low <= ord(c) <= high)
            elif name == "CATEGORY":
                members.update(self._category(_name(av), flags))
        folded = self._fold(frozenset(members), flags)
        return (self.alphabet - folded) if negate else folded

    def item(self, op, av, flags: int) -> _Node:
        name = _name(op)
        if name == "LITERAL":
            return _Char(self._fold(frozenset(chr(av)), flags))
        if name == "NOT_LITERAL":
            return _Char(self.alphabet - self._fold(frozenset(chr(av)), flags))
        if name == "ANY":
            return _Char(self.alphabet if flags & _DOTALL else self.alphabet - {"\n"})
        if name == "IN":
            return _Char(self.charset(av, flags))
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = av
            return _Repeat(self.build(body, flags), low, high, possessive=name == "POSSESSIVE_REPEAT")
        if name == "SUBPATTERN":
            add, remove = (av[1], av[2]) if len(av) == 4 else (0, 0)
            return self.build(av[-1], (flags | add) & ~remove)
        if name == "BRANCH":
            return _Alt([self.build(branch, flags) for branch in av[1]])
        if name in ("ASSERT", "ASSERT_NOT"):
            self.lookarounds.append(self.build(av[1], flags))
            return _Empty()
        if name == "ATOMIC_GROUP":
            inner = self.build(av, flags)
            self.lookarounds.append(inner)  # its own hazards still count, it just never backtracks out
            return _Opaque(inner.chars(), inner.nullable)
        if name == "GROUPREF_EXISTS":
            branches = [self.build(b, flags) for b in av[1:] if b is not None]
            if len([b for b in av[1:] if b is not None]) < 2:
                branches.append(_Seq([]))
            return _Alt(branches)
        if name == "GROUPREF":
            return _Opaque(self.alphabet, True)
        return _Empty()  # AT (anchors, \b), FAILURE, anything zero-width


# --------------------------------------------------------------------------------------------
# The hazards.
# --------------------------------------------------------------------------------------------

def _heads(node: _Node) -> Iterator[_Repeat]:
    """Repeats of variable length a match of `node` may start with."""
    if isinstance(node, _Repeat):
        if node.variable:
            yield node
        if not node.possessive:
            yield from _heads(node.body)
    elif isinstance(node, _Seq):
        for item in node.items:
            yield from _heads(item)
            if not item.nullable:
                break
    elif isinstance(node, _Alt):
        for branch in node.branches:
            yield from _heads(branch)


def _tails(node: _Node) -> Iterator[_Repeat]:
    """Repeats of variable length a match of `node` may end with."""
    if isinstance(node, _Repeat):
        if node.variable:
            yield node
        if not node.possessive:
            yield from _tails(node.body)
    elif isinstance(node, _Seq):
        for item in reversed(node.items):
            yield from _tails(item)
            if not item.nullable:
                break
    elif isinstance(node, _Alt):
        for branch in node.branches:
            yield from _tails(branch)


def _edge(node: _Node, last: bool) -> Chars:
    """Characters a nonempty match of `node` may start with (or end with, when `last`)."""
    if isinstance(node, (_Char, _Opaque)):
        return node.chars()
    if isinstance(node, _Repeat):
        return _edge(node.body, last)
    if isinstance(node, _Alt):
        return frozenset().union(*(_edge(b, last) for b in node.branches))
    if isinstance(node, _Seq):
        out: FrozenSet[str] = frozenset()
        for item in (reversed(node.items) if last else node.items):
            out |= _edge(item, last)
            if not item.nullable:
                break
        return out
    return frozenset()


def _absorbable(node: _Node, shared: Chars) -> bool:
    """Can `node` match a string made only of `shared` characters (so both neighbours could take it)?"""
    if node.nullable:
        return True
    if isinstance(node, _Char):
        return bool(node.charset & shared)
    if isinstance(node, _Seq):
        return all(_absorbable(item, shared) for item in node.items)
    if isinstance(node, _Alt):
        return any(_absorbable(branch, shared) for branch in node.branches)
    if isinstance(node, _Repeat):
        return _absorbable(node.body, shared)
    if isinstance(node, _Opaque):
        return bool(node.charset & shared)
    return False


def _show(chars: Chars) -> str:
    sample = sorted(chars, key=lambda c: (not c.isalnum(), ord(c)))[:6]
    return "".join(c if c.isprintable() and not c.isspace() else repr(c)[1:-1] for c in sample)


def _adjacent(items: Sequence[_Node]) -> Optional[str]:
    """An unbounded repeat next to another repeat of variable length over overlapping classes, with
    only text between them that both could match: the split between them is tried in every way."""
    for i, left in enumerate(items):
        tails = list(_tails(left))
        if not tails:
            continue
        for j in range(i + 1, len(items)):
            for x in tails:
                for y in _heads(items[j]):
                    if not (x.unbounded or y.unbounded):
                        continue  # two bounded repeats cost a bounded number of splits
                    # x can give characters back to y, or take them from it
                    shared = _edge(x, last=True) & _edge(y, last=False)
                    if shared and all(_absorbable(items[k], shared) for k in range(i + 1, j)):
                        if x.unbounded and y.unbounded:
                            return f"adjacent unbounded repeats over overlapping characters ({_show(shared)})"
                        bounded = y if x.unbounded else x
                        return (f"adjacent unbounded and {{{bounded.low},{bounded.high}}} repeats over overlapping "
                                f"characters ({_show(shared)}): bound the unbounded one")
            # Stop once something between can only be matched by one side of every pair.
            between_shared = frozenset().union(*(_edge(x, last=True) for x in tails))
            if not _absorbable(items[j], between_shared):
                break
    return None


def _nested(node: _Repeat) -> Optional[str]:
    """A repeat whose iterations can split the same text in more than one way."""
    body = node.body
    alternatives = body.items[0] if isinstance(body, _Seq) and len(body.items) == 1 else body
    if node.unbounded and isinstance(alternatives, _Alt):
        singles = [s for s in (_single_char(b) for b in alternatives.branches) if s is not None]
        for index, first in enumerate(singles):
            for second in singles[index + 1:]:
                if first & second:
                    return f"repeated alternatives that match the same character ({_show(first & second)})"
    if not _has_unbounded(body):
        return None
    if body.nullable:
        return "a repeated group that can match empty text contains an unbounded repeat"
    reason = _adjacent(_Seq([body, body]).items)  # two iterations side by side
    return "nested " + reason[len("adjacent "):] if reason else None


def _single_char(node: _Node) -> Optional[Chars]:
    while isinstance(node, _Seq) and len(node.items) == 1:
        node = node.items[0]
    return node.charset if isinstance(node, _Char) else None


def _has_unbounded(node: _Node) -> bool:
    if isinstance(node, _Repeat):
        return node.unbounded or _has_unbounded(node.body)
    if isinstance(node, _Seq):
        return any(_has_unbounded(i) for i in node.items)
    if isinstance(node, _Alt):
        return any(_has_unbounded(b) for b in node.branches)
    return False


def _walk(node: _Node) -> Optional[str]:
    if isinstance(node, _Seq):
        reason = _adjacent(node.items)
        if reason:
            return reason
        for item in node.items:
            reason = _walk(item)
            if reason:
                return reason
    elif isinstance(node, _Alt):
        for branch in node.branches:
            reason = _walk(branch)
            if reason:
                return reason
    elif isinstance(node, _Repeat):
        if node.unbounded or node.high > 1 and _has_unbounded(node.body):
            reason = _nested(node)
            if reason:
                return reason
        return _walk(node.body)
    return None


def regex_hazard(pattern: str, flags: int = 0) -> Optional[str]:
    """A one-line reason why `pattern` can backtrack catastrophically, or None when it cannot.

    Raises `re.error` for a pattern that does not parse."""
    parsed, all_flags = _parse(pattern, flags)
    if not any(mark in pattern for mark in "*+{"):
        return None  # no repeat of more than one: nothing can backtrack (most matchers are words in alternation)
    alphabet = _BASE_ALPHABET | frozenset(_literals(parsed))
    builder = _Builder(alphabet)
    tree = builder.build(parsed, all_flags)
    for node in [tree] + builder.lookarounds:
        reason = _walk(node)
        if reason:
            return reason
    return None


def check_regex(pattern: str, flags: int = 0) -> Tuple[bool, str]:
    """(safe, reason): a parse error counts as unsafe, with re's message."""
    try:
        reason = regex_hazard(pattern, flags)
    except re.error as exc:
        return False, f"does not parse ({exc})"
    return reason is None, reason or ""


# --------------------------------------------------------------------------------------------
# Material for attack strings (the regex audit of the tests and benchmarks).
# --------------------------------------------------------------------------------------------

def _literal_runs(pattern: str, flags: int = 0) -> List[str]:
    """Runs of two or more literal characters anywhere in the regex."""
    parsed, _ = _parse(pattern, flags)
    runs: List[str] = []

    def visit(items) -> None:
        current: List[str] = []
        for op, av in items:
            name = _name(op)
            if name == "LITERAL":
                current.append(chr(av))
                continue
            if len(current) >= 2:
                runs.append("".join(current))
            current = []
            for child in _children(name, av):
                visit(child)
        if len(current) >= 2:
            runs.append("".join(current))

    visit(parsed)
    return runs


def _class_chars(pattern: str, flags: int = 0) -> List[str]:
    """Characters named in the regex's classes and literals (candidates for runs)."""
    parsed, _ = _parse(pattern, flags)
    return sorted(set(_literals(parsed)))
