"""Lines a framework prints routinely — on normal runs, or with every failure of a kind — that a paste often
holds next to the failure, or instead of it: start-up warnings ("ACL Graph is currently experimental ...
if you encourage any Error"), advice banners ("capturing too many batch sizes can lead to OOM ... or
inference hangs"), progress lines with cautions ("This may lead to unexpected consequences if the model is
not static"), the list of remedies SGLang appends to every capture failure. Their words sound like a fault,
and read as one they outvote the real error or stand in for it. The notices are context signs
(`notice: true` in knowledge/context_signs.yaml, each with its source); the diagnosis leaves their
lines out of the error, the matchers and the similar-words search, and says what they are.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from npu_graph_skill.core.render import pick
from npu_graph_skill.diagnose.reflow import MIN_PIECE, squeeze
from npu_graph_skill.knowledge import prefilter
from npu_graph_skill.logs.formats import strip_prefixes

BANNER_RULE = re.compile(r"(?:\x1b\[[\d;]{0,12}m)?\*{5,}")  # the row of asterisks around a banner (stripped line)
MAX_CONTINUED = 12  # lines of one banner or of one wrapped notice


def notice_lines(lines: Sequence[str], signs: Sequence) -> Dict[int, object]:
    """input line (1-based) → the notice sign it belongs to: the line the notice matches, the rows of its
    banner (starting with `*`), and the rest of the notice before and after it where the paste wrapped it or
    the notice spans lines (a line that is text of the notice as printed)."""
    notices = [sign for sign in signs if sign.notice]
    if not notices or not lines:
        return {}
    lower = "\n".join(lines).lower()
    found: Dict[int, object] = {}
    for sign in notices:
        if not _may_match(sign, lower):
            continue
        regex = sign.compiled()["regex"]
        for number, line in enumerate(lines, start=1):
            if number in found or not regex.search(line):
                continue
            found[number] = sign
            # above it: the banner's top rule, or the notice's own first lines (a list's "Possible solutions:")
            for before in range(number - 1, max(1, number - MAX_CONTINUED) - 1, -1):
                body = _body(lines[before - 1]).strip()
                if not (BANNER_RULE.match(body) or _text_of(body, sign)):
                    break
                found.setdefault(before, sign)
            for after in range(number + 1, min(len(lines), number + MAX_CONTINUED) + 1):
                if not _continues(lines[after - 2], lines[after - 1], sign):
                    break
                found.setdefault(after, sign)
    return found


def notice_of(text: str, signs: Sequence) -> Optional[object]:
    """The notice sign `text` (one logged message) is, or None."""
    lower = text.lower()
    return next((sign for sign in signs
                 if sign.notice and _may_match(sign, lower) and sign.compiled()["regex"].search(text)), None)


def _may_match(sign, lower: str) -> bool:
    """`lower` (the text, lower-cased) holds one of the literals any match of the notice's regex needs: the
    cheap test that spares compiling and running the regexes of notices a text cannot hold."""
    return prefilter.may_match(prefilter.literals(sign.regex), lower)


def shown(lines: Sequence[str], hidden: Dict[int, object]) -> List[str]:
    """The lines with the notices' lines blanked (numbering kept)."""
    return ["" if number in hidden else line for number, line in enumerate(lines, start=1)]


def found(hidden: Dict[int, object]) -> List[Tuple[int, object]]:
    """(its first line, the notice) of each notice found, in input order."""
    first: Dict[str, Tuple[int, object]] = {}
    for number in sorted(hidden):
        first.setdefault(hidden[number].id, (number, hidden[number]))
    return list(first.values())


def notes(hidden: Dict[int, object], lang: str) -> List[str]:
    """One report note per notice found."""
    return [pick({"en": f"Line {line} is a notice {sign.framework} prints routinely ({sign.id}), not the error: "
                        "left out of the matching.",
                  "zh": f"第 {line} 行是 {sign.framework} 例行打印的提示（{sign.id}），不是错误：未参与匹配。"}, lang)
            for line, sign in found(hidden)]


def _body(line: str) -> str:
    return strip_prefixes(line)[1]


def _continues(previous: str, line: str, sign) -> bool:
    body, before = _body(line).strip(), _body(previous).strip()
    if not body or BANNER_RULE.match(before):  # the banner's closing rule ends it
        return False
    if body.startswith("*"):  # a banner row ("* consider reducing ...") or its closing rule
        return True
    # the rest of the notice where the paste wrapped it: text of the notice as printed, not words of the user's
    return _text_of(body, sign)


def _text_of(body: str, sign) -> bool:
    """`body` is a piece of the notice as printed (its example), long enough not to be a chance match."""
    return len(body) >= MIN_PIECE and squeeze(body).lower() in squeeze(sign.example).lower()
