"""A known message in other words: the message's fixed words found in order, with tolerance.

Releases reword their messages a little (`Cannot run aclop operators during NPU graph capture` in
one, `Cannot run aclop operator while capturing, op: Fill` in another), add or drop a word and
print other values. A regex written from one release misses the other. Here a message regex is
reduced to its fixed words (`signatures`: literal text outside optional parts, classes and
alternations), and the input is searched for those words in order, allowing a word added between
them, a word dropped, other inflections (`operators` ~ `operator`, `capture` ~ `capturing`) and
any line breaks; an identifier (capture_end) or a number the message spells out (an error code) must
be found as written. Words are weighted by how rare they are in the knowledge (`Vocabulary`), so
`aclop` counts far more than `npu` or `graph`; a match needs most of the weight, at least three
words and the rarest one.
"""
from __future__ import annotations

import math
import re
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

try:  # the regex parser moved in Python 3.11
    import re._constants as _sre_constants  # type: ignore[import]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _sre_constants  # type: ignore[no-redef]

from npu_graph_skill.knowledge.regex_safety import parse_tree

MIN_WORDS = 4  # shorter messages are too generic to be recognised by their words alone
MIN_MATCHED = 3
MIN_COVERAGE = 0.75  # share of the signature's weight that must be found
MAX_GAP = 3  # words the input may add between two words of the signature
MAX_ANCHORS = 40
WORD_RE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
GAP = None  # a variable part inside a signature (a class, an optional group, a value)
SENTENCE_END = re.compile(r"[.;!?]\s+")
LOOKAROUND = re.compile(r"\(\?<?[!=]")
# Function words carry little meaning whatever their rarity among the knowledge's messages.
FUNCTION_WORDS = frozenset(
    "a an the is are was were be been to of in on at by for from with as and or if when while during this that these "
    "those it its has have had please you your can may should will".split())
FUNCTION_WEIGHT = 0.5
MIN_WEIGHT = 9.0  # the found words must also weigh this much on their own: about three uncommon words


class Signature(NamedTuple):
    words: Tuple[str, ...]
    partial: Tuple[bool, ...]  # the word was cut by a variable part: compare as a prefix


def signatures(regex: str) -> List[Signature]:
    """The fixed words of each sentence of each top-level alternative of `regex`, in order; sentences
    with too few words are left out (a long message is recognised by any one of its sentences).
    A regex with a lookaround has none: its author excluded texts that words alone cannot tell apart."""
    if LOOKAROUND.search(regex):
        return []
    try:
        parsed = parse_tree(regex, re.IGNORECASE)
    except Exception:  # noqa: BLE001 - an unparsable regex simply has no signature
        return []
    items = list(parsed)
    branches = [items]
    if len(items) == 1 and items[0][0] == _sre_constants.BRANCH:
        branches = [list(alternative) for alternative in items[0][1][1]]
    out = []
    for branch in branches:
        segments: List[Optional[str]] = []
        _flatten(branch, segments)
        for sentence in _sentences(segments):
            signature = _words(sentence)
            if len(signature.words) >= MIN_WORDS:
                out.append(signature)
    return out


def _sentences(segments: List[Optional[str]]) -> List[List[Optional[str]]]:
    """Split the flattened regex at the end of each sentence ('. ', '; ')."""
    text_and_gaps: List[Optional[str]] = []
    for segment in segments:  # merge adjacent literal characters into runs
        if segment is not GAP and text_and_gaps and text_and_gaps[-1] is not GAP:
            text_and_gaps[-1] += segment
        else:
            text_and_gaps.append(segment)
    sentences: List[List[Optional[str]]] = [[]]
    for part in text_and_gaps:
        if part is GAP:
            sentences[-1].append(GAP)
            continue
        pieces = SENTENCE_END.split(part)
        sentences[-1].append(pieces[0])
        for piece in pieces[1:]:
            sentences.append([piece])
    return sentences


def _flatten(items: Iterable, segments: List[Optional[str]]) -> None:
    c = _sre_constants
    for op, av in items:
        if op == c.LITERAL:
            segments.append(chr(av))
        elif op == c.SUBPATTERN:
            _flatten(av[-1], segments)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) or op == getattr(c, "POSSESSIVE_REPEAT", None):
            low, high, inner = av
            inner = list(inner)
            if low >= 1 and high == low and len(inner) == 1 and inner[0][0] == c.LITERAL:
                segments.append(chr(inner[0][1]) * low)
            elif low >= 1 and len(inner) == 1 and inner[0][0] == c.LITERAL and chr(inner[0][1]) == " ":
                segments.append(" ")
            else:
                segments.append(GAP)
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue
        else:  # classes, any character, nested alternatives, back references: a variable part
            segments.append(GAP)


def _words(sentence: Sequence[Optional[str]]) -> Signature:
    """Words of at least two letters; a word touching a variable part (a class, an optional group) is
    marked partial and compared as a prefix."""
    words: List[str] = []
    partial: List[bool] = []
    parts = list(sentence)
    for at, part in enumerate(parts):
        if part is GAP:
            continue
        gap_before = at > 0 and parts[at - 1] is GAP
        gap_after = at + 1 < len(parts) and parts[at + 1] is GAP
        found = list(WORD_RE.finditer(part.lower()))
        for index, match in enumerate(found):
            word = match.group(0)
            cut = ((index == len(found) - 1 and match.end() == len(part) and gap_after)
                   or (index == 0 and match.start() == 0 and gap_before))
            if len(word) >= 2:
                words.append(word)
                partial.append(cut)
    return Signature(tuple(words), tuple(partial))


def same_word(want: str, got: str, partial: bool = False) -> bool:
    """Equal, or the same stem: a shared prefix of all but the last two letters of the shorter word."""
    if want == got:
        return True
    if want[:3] != got[:3]:  # every pair accepted below shares its first three letters
        return False
    if partial and len(want) >= 3 and (got.startswith(want) or want.startswith(got) and len(got) >= 4):
        return True
    if "_" in want or "_" in got:  # an identifier is not inflected: capture_end is not "capture", nor "captured"
        return False
    shorter = min(len(want), len(got))
    if shorter < 4:
        return False
    need = max(4, shorter - 2)
    return want[:need] == got[:need]


class WordStream:
    """The input's words in order, each with its 1-based line, indexed by their first four letters."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.words: List[str] = []
        self.lines: List[int] = []
        self.by_stem: Dict[str, List[int]] = {}
        for number, line in enumerate(lines, start=1):
            for match in WORD_RE.finditer(line.lower()):
                self.by_stem.setdefault(match.group(0)[:4], []).append(len(self.words))
                self.words.append(match.group(0))
                self.lines.append(number)


class Vocabulary:
    """How rare each word is among the signatures of the knowledge (inverse document frequency)."""

    def __init__(self, all_signatures: Iterable[Signature]) -> None:
        documents = 0
        frequency: Dict[str, int] = {}
        for signature in all_signatures:
            documents += 1
            for word in set(signature.words):
                frequency[word] = frequency.get(word, 0) + 1
        self._idf = {word: math.log(1 + documents / count) for word, count in frequency.items()}
        self._unseen = math.log(1 + max(documents, 1))

    def weight(self, word: str) -> float:
        if word in FUNCTION_WORDS:
            return FUNCTION_WEIGHT
        return self._idf.get(word, self._unseen)


class FuzzyHit(NamedTuple):
    line: int
    coverage: float
    matched: Tuple[str, ...]


def find(signature: Signature, stream: WordStream, vocabulary: Vocabulary) -> Optional[FuzzyHit]:
    """The best in-order occurrence of the signature's words, when it covers enough of their weight."""
    words, n = signature.words, len(signature.words)
    # A number the message spells out (an error code: 107027) is its identity, not a value it prints:
    # the same words around another code are another error.
    codes = [i for i, w in enumerate(words) if w.isdigit() and len(w) >= 3 and not signature.partial[i]]
    weights = [vocabulary.weight(w) for w in words]
    total = sum(weights)
    # Words whose stem the input never holds cannot be found: skip a signature that could not pass anyway.
    present = [i for i, w in enumerate(words) if w[:4] in stream.by_stem or (signature.partial[i] and len(w) < 4)]
    reachable = sum(weights[i] for i in present)
    if len(present) < MIN_MATCHED or reachable < MIN_COVERAGE * total or reachable < MIN_WEIGHT:
        return None
    rarest = max(range(n), key=lambda i: (weights[i], len(words[i])))
    slack = max(MAX_GAP, n // 3)
    best: Optional[FuzzyHit] = None
    for anchor in stream.by_stem.get(words[rarest][:4], [])[:MAX_ANCHORS]:
        if not same_word(words[rarest], stream.words[anchor], signature.partial[rarest]):
            continue
        low = max(0, anchor - rarest - slack)
        high = min(len(stream.words), anchor + (n - rarest) + slack)
        score, matched = _aligned(signature, weights, stream.words[low:high])
        coverage = score / total
        if codes and not set(codes) <= {i for i, _ in matched}:
            continue
        if (len(matched) >= MIN_MATCHED and coverage >= MIN_COVERAGE and score >= MIN_WEIGHT
                and (best is None or coverage > best.coverage)):
            best = FuzzyHit(line=stream.lines[low + matched[0][1]], coverage=round(coverage, 3),
                            matched=tuple(words[i] for i, _ in matched))
    return best


def _aligned(signature: Signature, weights: List[float], window: List[str]) -> Tuple[float, List[Tuple[int, int]]]:
    """Weighted longest common subsequence of the signature and a window of input words:
    (weight found, [(signature index, window index)] in order)."""
    words, partial = signature.words, signature.partial
    n, m = len(words), len(window)
    table = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            best = below[j] if below[j] > row[j + 1] else row[j + 1]
            if same_word(words[i], window[j], partial[i]):
                take = weights[i] + below[j + 1]
                if take > best:
                    best = take
            row[j] = best
    matched, i, j = [], 0, 0
    while i < n and j < m:
        if same_word(words[i], window[j], partial[i]) and table[i][j] == weights[i] + table[i + 1][j + 1]:
            matched.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return table[0][0], matched


SIGNATURES_VERSION = "5"  # bump when `signatures` changes what it derives


class SignatureIndex:
    """The signatures of every torch_npu message (by id) and message matcher (by regex), and the
    vocabulary they weigh words with; derived once per knowledge state and cached."""

    def __init__(self, table: Dict[str, List[List[list]]]) -> None:
        self._table = {key: [Signature(tuple(words), tuple(partial)) for words, partial in entries]
                       for key, entries in table.items()}
        self.vocabulary = Vocabulary(s for entries in self._table.values() for s in entries)

    def of(self, key: str) -> List[Signature]:
        return self._table.get(key, [])

    @classmethod
    def for_knowledge(cls, knowledge) -> "SignatureIndex":
        index = getattr(knowledge, "_signature_index", None)
        if index is None:
            from npu_graph_skill.knowledge.loader import derived

            table = derived(knowledge, f"signatures{SIGNATURES_VERSION}", lambda: _table(knowledge))
            index = cls(table)
            knowledge._signature_index = index
        return index


def _table(knowledge) -> Dict[str, List[List[list]]]:
    found = {entry.id: signatures(entry.regex) for entry in knowledge.messages}
    # A sentence several different messages end with ("If you need this call to be captured, please
    # file an issue.") identifies none of them.
    documents: Dict[Tuple[str, ...], set] = {}
    for sentences in found.values():
        whole = tuple(w for s in sentences for w in s.words)
        for sentence in sentences:
            documents.setdefault(sentence.words, set()).add(whole)
    table: Dict[str, List[List[list]]] = {}
    for key, sentences in found.items():
        kept = [s for s in sentences if len(documents[s.words]) == 1]
        if kept:
            table[key] = [[list(s.words), list(s.partial)] for s in kept]
    for pattern in knowledge.patterns:
        for matcher in pattern.matchers:
            if matcher.type == "message" and matcher.weight > 0 and matcher.reworded and matcher.regex not in table:
                sentences = signatures(matcher.regex)
                if sentences:
                    table[matcher.regex] = [[list(s.words), list(s.partial)] for s in sentences]
    return table
