"""A C++ scanner good enough for torch_npu: function ranges and raise sites, without a compiler.

Three passes over one file:

1. `clean_cpp` blanks comments, preprocessor lines and the contents of string and character
   literals (keeping every offset and newline), and keeps each literal's decoded value.
2. `_scan_functions` walks the braces of the blanked text with a scope stack (namespaces,
   classes, `extern "C"`), classifies each `{` at namespace/class level by the statement before it
   and records function definitions with their line ranges. `#else`/`#elif` branches are blanked
   for this pass so that a signature duplicated across `#if` branches keeps the braces balanced.
3. `_scan_sites` finds the error, warning and log macros (TORCH_CHECK, TORCH_INTERNAL_ASSERT,
   TORCH_NPU_WARN, NPU_CHECK_ERROR, AT_ERROR, ASCEND_LOGE, NPUGRAPH_LOGD ...) and `throw`, and
   turns their message arguments into pieces: literal text (adjacent literals joined) and
   placeholders for the variable parts (`,` arguments of c10::str, `<<`, `+`, printf `%s`).
"""
from __future__ import annotations

import bisect
import re
from typing import Dict, List, Optional, Tuple

from npu_graph_skill.expert.source_model import (
    HELPER_CALL_RE, FunctionDef, Site, mark_forwarding, merge_pieces, placeholder, printf_pieces,
)

# Message macros by the shape of their arguments. Names from torch (c10/util/Exception.h) and
# torch_npu (torch_npu/csrc/core/npu/NPUException.h, npu_log.h, NPUGraph.h, logging/Logger.h).
CHECK_MACROS = {  # (cond, message...)
    "TORCH_CHECK": "check", "TORCH_CHECK_VALUE": "check", "TORCH_CHECK_TYPE": "check",
    "TORCH_CHECK_INDEX": "check", "TORCH_CHECK_NOT_IMPLEMENTED": "check", "TORCH_CHECK_LINALG": "check",
    "TORCH_INTERNAL_ASSERT": "assert", "TORCH_INTERNAL_ASSERT_DEBUG_ONLY": "assert",
    "AT_ASSERT": "assert", "AT_ASSERTM": "assert",
}
CHECK_WITH_MACROS = {"TORCH_CHECK_WITH": "check"}  # (error type, cond, message...)
MESSAGE_MACROS = {  # (message...)
    "AT_ERROR": "throw", "TORCH_WARN": "warn", "TORCH_WARN_ONCE": "warn", "TORCH_WARN_DEPRECATION": "warn",
    "TORCH_NPU_WARN": "warn", "TORCH_NPU_WARN_ONCE": "warn",
}
THROW_MACROS = {"C10_THROW_ERROR": "throw"}  # (error type, message)
NPU_CHECK_MACROS = {  # (acl call[, check_uce][, "name"]): the message quotes the call text
    "NPU_CHECK_ERROR": "npu_check", "NPU_CHECK_WARN": "npu_check", "NPU_CHECK_ERROR_WITHOUT_UCE": "npu_check",
    "NPU_CHECK_ERROR_CHECK_UCE": "npu_check", "OPS_CHECK_ERROR": "npu_check",
}
DEFINE_RE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?")
LOG_MACRO_RE = re.compile(r"^(?:ASCEND_LOG[EWID]|NPUGRAPH_LOG[DIWE]|TORCH_NPU_(?:\w+_)?LOG[DIWE]L?)$")
ERROR_SUFFIX_RE = re.compile(r"^\s*(?:PTA|OPS|DIST|GRAPH|PROF)_ERROR\s*\(")
STRING_BUILDERS = ("c10::str", "::c10::str", "std::string", "std::to_string")

SITE_NAMES = sorted(set(CHECK_MACROS) | set(CHECK_WITH_MACROS) | set(MESSAGE_MACROS) | set(THROW_MACROS)
                    | set(NPU_CHECK_MACROS) | {"ACL_CALL_LOG"}, key=len, reverse=True)
SITE_RE = re.compile(r"\b(" + "|".join(SITE_NAMES) + r"|[A-Z][A-Z0-9_]*LOG[DIWE]L?|throw)\b\s*")

KEYWORDS_NOT_FUNCTIONS = {
    "if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignas", "alignof",
    "__attribute__", "__declspec", "noexcept", "throw", "static_assert", "requires", "new", "delete",
}
ACCESS_RE = re.compile(r"\b(?:public|private|protected|signals|slots)\s*:(?!:)")
OPERATOR_RE = re.compile(
    r"\boperator\s*(?:\(\s*\)|\[\s*\]|(?:new|delete)\s*(?:\[\s*\])?|->\*?|<<=?|>>=?|<=>|[-+*/%^&|~!=<>,]=?|&&|\|\||\+\+|--"
    r"|\"\"\s*\w+|[A-Za-z_][\w:]*(?:\s*[*&])*)"
)


# ------------------------------------------------------------------------------------------------
# Pass 1: blank comments, preprocessor lines and literal contents.
# ------------------------------------------------------------------------------------------------

class CleanText:
    """The file three ways, all with the same offsets: `code` (comments and preprocessor lines
    blanked, literals kept), `blank` (literal contents blanked too) and `struct` (`blank` with the
    `#else`/`#elif` branches blanked, for brace matching). `literals` maps a literal's start
    offset to (end offset, decoded value)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.literals: Dict[int, Tuple[int, str]] = {}
        self.directives: List[Tuple[int, int]] = []  # (start, end) of preprocessor lines
        self.code, self.blank, self.struct = _clean(text, self.literals, self.directives)
        self._newlines = [i for i, ch in enumerate(text) if ch == "\n"]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._newlines, offset - 1) + 1


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "?": "?",
                   "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b"}


def _decode_escapes(body: str) -> str:
    if "\\" not in body:
        return body
    out: List[str] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "\n":  # line continuation inside a literal
            i += 2
        elif nxt == "x":
            m = re.match(r"[0-9A-Fa-f]+", body[i + 2:])
            out.append(chr(int(m.group(0)[:8], 16)) if m else "x")
            i += 2 + (len(m.group(0)) if m else 0)
        elif nxt in "01234567" and nxt != "0" or (nxt == "0" and i + 2 < n and body[i + 2] in "01234567"):
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
        else:
            out.append(_SIMPLE_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


def _blank(chars: List[str], start: int, end: int) -> None:
    for k in range(start, end):
        if chars[k] != "\n":
            chars[k] = " "


def _clean(text: str, literals: Dict[int, Tuple[int, str]], directives: List[Tuple[int, int]]) -> Tuple[str, str, str]:
    n = len(text)
    code = list(text)
    blank = list(text)
    i = 0
    line_start = True  # only whitespace so far on this line (outside comments)
    define_end = -1  # inside a #define body up to here
    while i < n:
        ch = text[i]
        if ch == "\n":
            line_start = True
            i += 1
            continue
        if ch in " \t\r\f\v":
            i += 1
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "/":
            end = i + 2
            while end < n and text[end] != "\n":
                end += 2 if text[end] == "\\" and end + 1 < n and text[end + 1] == "\n" else 1
            _blank(code, i, end)
            _blank(blank, i, end)
            i = end
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            _blank(code, i, end)
            _blank(blank, i, end)
            i = end
            continue
        if ch == "#" and line_start and i >= define_end:  # (`#param` at a line start in a macro body is not one)
            end = _directive_end(text, i)
            directives.append((i, end))
            define = DEFINE_RE.match(text, i, end)
            # A macro body can raise (NPU_CHECK_ERROR's TORCH_CHECKs): keep it for the site scan,
            # minus its `#define NAME(params)` head; the structural text never sees it.
            body = define.end() if define else end
            _blank(code, i, body)
            _blank(blank, i, body)
            for k in range(body, end - 1):  # line continuations would split the body's tokens
                if text[k] == "\\" and text[k + 1] in "\r\n":
                    code[k] = blank[k] = " "
            if define:
                define_end = end
                i = body
                line_start = False
                continue
            i = end
            continue
        line_start = False
        if ch == '"' or (ch == "R" and text.startswith('R"', i)):
            prefix_start = _literal_prefix_start(text, i)
            if ch == "R" and prefix_start is None:
                i += 1
                continue
            end, value = _read_string(text, i)
            literals[prefix_start if prefix_start is not None else i] = (end, value)
            quote = i if ch == '"' else i + 1
            _blank(blank, quote + 1, end - 1)
            i = end
            continue
        if ch == "'":
            if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_") and _is_digit_separator(text, i):
                i += 1
                continue
            end = i + 1
            while end < n and text[end] not in "'\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
            _blank(blank, i + 1, end - 1)
            i = end
            continue
        if ch.isalpha() or ch == "_":
            end = i + 1
            while end < n and (text[end].isalnum() or text[end] == "_"):
                end += 1
            # u8"..", L"..", u"..", U"..", u8R"(..)" ...: let the literal branch see the quote next.
            if end < n and text[end] in "\"'" and text[i:end] in ("u8", "u", "U", "L"):
                i = end
                continue
            if end < n and text[end] == '"' and text[i:end] in ("u8R", "uR", "UR", "LR", "R"):
                i = end - 1
                continue
            i = end
            continue
        i += 1
    struct = list(blank)
    for start, end in directives:
        _blank(struct, start, end)
    _blank_else_branches(text, directives, struct)
    return "".join(code), "".join(blank), "".join(struct)


def _literal_prefix_start(text: str, i: int) -> Optional[int]:
    """The start of an encoding/raw prefix ending at i (`R`, `u8R`, `L`...), None when `R` is part
    of an identifier (`ERR"`)."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    word = text[j:i + 1] if text[i] == "R" else text[j:i]
    if text[i] == "R":
        return j if word in ("R", "u8R", "uR", "UR", "LR") else None
    return j if word in ("u8", "u", "U", "L") else None


def _is_digit_separator(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and (text[j].isalnum() or text[j] == "_"):
        j -= 1
    return text[j + 1:j + 2].isdigit() and i + 1 < len(text) and text[i + 1].isalnum()


def _read_string(text: str, i: int) -> Tuple[int, str]:
    """(end offset, decoded value) of the literal whose quote (or raw `R`) is at i."""
    n = len(text)
    if text[i] == "R":
        m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:i + 20])
        if m:
            closing = ")" + m.group(1) + '"'
            body_start = i + m.end()
            end = text.find(closing, body_start)
            end = n if end < 0 else end
            return min(n, end + len(closing)), text[body_start:end]
        i += 1
    end = i + 1
    while end < n and text[end] != '"':
        if text[end] == "\\":
            end += 2
            continue
        if text[end] == "\n":  # unterminated: stop at the line end
            break
        end += 1
    return min(n, end + 1), _decode_escapes(text[i + 1:end])


def _directive_end(text: str, i: int) -> int:
    n = len(text)
    end = i
    while end < n:
        if text[end] == "\n":
            if end > 0 and text[end - 1] == "\\" or (end > 1 and text[end - 1] == "\r" and text[end - 2] == "\\"):
                end += 1
                continue
            break
        if text.startswith("/*", end):  # a block comment inside a directive may span lines
            close = text.find("*/", end + 2)
            end = n if close < 0 else close + 2
            continue
        end += 1
    return end


def _blank_else_branches(text: str, directives: List[Tuple[int, int]], struct: List[str]) -> None:
    """Keep only the first branch of every #if/#ifdef/#ifndef chain in the structural text."""
    stack: List[List[int]] = []  # per open #if: [blanking_from or -1]
    for start, end in directives:
        word = re.match(r"#\s*(\w*)", text[start:end])
        name = word.group(1) if word else ""
        if name in ("if", "ifdef", "ifndef"):
            stack.append([-1])
        elif name in ("elif", "else", "elifdef", "elifndef") and stack:
            if stack[-1][0] < 0:
                stack[-1][0] = end
        elif name == "endif" and stack:
            blank_from = stack.pop()[0]
            if blank_from >= 0 and not any(s[0] >= 0 for s in stack):
                _blank(struct, blank_from, start)


# ------------------------------------------------------------------------------------------------
# Pass 2: function definitions.
# ------------------------------------------------------------------------------------------------

_CLOSER = {"(": ")", "[": "]", "{": "}"}


def _match(text: str, i: int) -> int:
    """Offset of the bracket closing the one at i (len(text) - 1 when unbalanced)."""
    stack = [_CLOSER[text[i]]]
    j = i + 1
    n = len(text)
    while j < n:
        ch = text[j]
        if ch in _CLOSER:
            stack.append(_CLOSER[ch])
        elif ch in ")]}":
            while stack and stack[-1] != ch:  # tolerate a stray closer of another kind
                stack.pop()
            if stack:
                stack.pop()
            if not stack:
                return j
        j += 1
    return n - 1


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _top_groups(head: str) -> List[Tuple[int, int]]:
    """(open, close) offsets of the parenthesis groups of a declaration head that sit outside any
    parenthesis or template angle brackets."""
    groups: List[Tuple[int, int]] = []
    depth = 0
    angle = 0
    open_at = -1
    i = 0
    n = len(head)
    while i < n:
        ch = head[i]
        if ch == "(":
            if depth == 0 and angle == 0:
                open_at = i
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
            if depth == 0 and angle == 0 and open_at >= 0:
                groups.append((open_at, i))
                open_at = -1
        elif depth == 0 and ch == "<":
            if head.startswith("<<", i) and angle == 0:
                i += 2
                continue
            angle += 1
        elif depth == 0 and ch == ">" and angle > 0:
            if i > 0 and head[i - 1] == "-":  # ->
                i += 1
                continue
            angle -= 1
        i += 1
    return groups


def _qualified_name_before(head: str, pos: int) -> Tuple[str, int]:
    """The (possibly qualified) name ending just before `pos`: (name without template args, start)."""
    parts: List[str] = []
    j = pos
    while True:
        while j > 0 and head[j - 1].isspace():
            j -= 1
        end = j
        while j > 0 and (head[j - 1].isalnum() or head[j - 1] == "_"):
            j -= 1
        if j == end:
            break
        start = j
        if j > 0 and head[j - 1] == "~":
            j -= 1
            start = j
        parts.append(head[start:end])
        k = j
        while k > 0 and head[k - 1].isspace():
            k -= 1
        if head[max(0, k - 2):k] != "::":
            j = start
            break
        k -= 2
        while k > 0 and head[k - 1].isspace():
            k -= 1
        if k > 0 and head[k - 1] == ">":  # Foo<T>::bar
            depth = 0
            while k > 0:
                k -= 1
                if head[k] == ">":
                    depth += 1
                elif head[k] == "<":
                    depth -= 1
                    if depth == 0:
                        break
        j = k
    parts.reverse()
    return "::".join(parts), j


def _is_macro_name(name: str) -> bool:
    return bool(name) and name.upper() == name and any(c.isalpha() for c in name)


def _init_list_colon(head: str, groups: List[Tuple[int, int]]) -> int:
    """Offset of a constructor initializer list's `:` after the parameter list, or -1."""
    if not groups:
        return -1
    depth = 0
    for i in range(groups[0][1] + 1, len(head)):
        ch = head[i]
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == ":" and depth == 0 and head[i - 1:i] != ":" and head[i + 1:i + 2] != ":":
            return i
    return -1


def _function_head(head: str) -> Optional[Tuple[str, int, int, int]]:
    """For a statement that ends where a `{` opens: (name, name start, params close, sig end) of
    a function definition, or None."""
    masked = OPERATOR_RE.sub(lambda m: re.sub(r"\W", "_", m.group(0)), head)
    masked = re.sub(r"->", "__", masked)
    groups = _top_groups(masked)
    colon = _init_list_colon(masked, groups)
    limit = colon if colon >= 0 else len(masked)
    candidates = []
    for open_at, close_at in groups:
        if open_at >= limit:
            break
        name, name_start = _qualified_name_before(masked, open_at)
        short = name.rsplit("::", 1)[-1]
        if not short or short in KEYWORDS_NOT_FUNCTIONS:
            continue
        if masked[max(0, name_start - 1):name_start] == "." or masked[max(0, name_start - 2):name_start] == "->":
            continue
        candidates.append((name, name_start, open_at, close_at))
    if not candidates:
        return None
    chosen = next((c for c in candidates if not _is_macro_name(c[0].rsplit("::", 1)[-1])), candidates[0])
    name, name_start, _open_at, close_at = chosen
    name = _squash(head[name_start:_open_at]) if "operator" in name else name
    name = re.sub(r"<[^<>]*>", "", name).replace(" ", "") if "operator" not in name else name
    # Anything left between the parameter list and the body must look like qualifiers.
    tail = masked[close_at + 1:limit]
    if re.search(r"[=;]|\breturn\b", re.sub(r"\([^()]*\)", "", tail)):
        return None
    return name, name_start, close_at, limit


def _statement_start(head: str, name_start: int) -> int:
    """Where the declaration begins: past access specifiers and macro invocations that end a line
    before it (`C10_REGISTER_X(...)` with no semicolon)."""
    start = 0
    for m in ACCESS_RE.finditer(head, 0, name_start):
        start = m.end()
    for m in re.finditer(r"\b[A-Z][A-Z0-9_]+\s*\(", head[:name_start]):
        if m.start() < start:
            continue
        close = _match(head, m.end() - 1)
        if close < name_start and "\n" in head[close:name_start] and not head[close + 1:head.find("\n", close)].strip():
            start = close + 1
    while start < len(head) and head[start].isspace():
        start += 1
    return start


def _scan_functions(clean: CleanText) -> List[FunctionDef]:
    text = clean.struct
    n = len(text)
    functions: List[FunctionDef] = []
    scopes: List[Tuple[str, str, int]] = []  # (kind, name, offset): namespace | class | extern
    stmt_start = 0
    i = 0
    while i < n:
        ch = text[i]
        if ch == ";":
            stmt_start = i + 1
        elif ch == "}":
            if scopes:
                kind, name, opened_at = scopes.pop()
                if kind == "class" and name:
                    prefix = "::".join(s[1] for s in scopes if s[1])
                    functions.append(FunctionDef(
                        qualname=f"{prefix}::{name}" if prefix else name, name=name, start=clean.line_of(opened_at),
                        end=clean.line_of(i), signature=_squash(clean.blank[opened_at:opened_at + 300].split("{")[0]),
                        kind="class"))
            stmt_start = i + 1
        elif ch in "([":
            close = _match(text, i)
            macro = re.fullmatch(r"\s*([A-Z][A-Z0-9_]*)\s*", text[stmt_start:i]) if ch == "(" else None
            if macro and "{" in text[i:close]:  # REGISTER_X(name, [](...) { ... }) at namespace level
                first_arg = _squash(text[i + 1:close].split(",")[0])[:60]
                name = f"{macro.group(1)}({first_arg})"
                prefix = "::".join(s[1] for s in scopes if s[1])
                functions.append(FunctionDef(
                    qualname=f"{prefix}::{name}" if prefix else name, name=name,
                    start=clean.line_of(stmt_start + macro.start(1)), end=clean.line_of(close),
                    signature=_squash(clean.blank[stmt_start + macro.start(1):i + 1 + len(first_arg)])[:300] + ", ...)",
                    kind="macro"))
            i = close + 1
            line_rest = text[i:text.find("\n", i) if "\n" in text[i:] else len(text)]
            if macro and not line_rest.strip():  # a macro invocation without `;` ends its statement
                stmt_start = i
            continue
        elif ch == "{":
            head = text[stmt_start:i]
            action = _classify(head)
            kind = action[0]
            if kind in ("namespace", "class", "extern"):
                scopes.append((kind, action[1], stmt_start + _statement_start(head, len(head))))
                stmt_start = i + 1
                i += 1
                continue
            if kind == "member_init":  # a brace initializer inside a constructor's init list
                i = _match(text, i) + 1
                continue
            close = _match(text, i)
            if kind == "function":
                _, name, name_start, sig_end = action
                start = stmt_start + _statement_start(head, name_start)
                prefix = "::".join(s[1] for s in scopes if s[1])
                qualname = f"{prefix}::{name}" if prefix else name
                signature = _squash(clean.blank[start:stmt_start + sig_end])
                functions.append(FunctionDef(
                    qualname=qualname, name=name.rsplit("::", 1)[-1] if "operator" not in name else name,
                    start=clean.line_of(start), end=clean.line_of(close), signature=signature[:300],
                    kind="macro" if _is_macro_name(name) else (
                        "method" if "::" in name or any(s[0] == "class" for s in scopes) else "function"),
                ))
            i = close + 1
            stmt_start = i
            continue
        i += 1
    for start, end in clean.directives:
        define = DEFINE_RE.match(clean.text, start, end)
        if define:
            functions.append(FunctionDef(
                qualname=define.group(1), name=define.group(1), start=clean.line_of(start),
                end=clean.line_of(max(start, end - 1)), signature=_squash(define.group(0))[:300], kind="macro"))
    functions.sort(key=lambda f: (f.start, -f.end))
    return functions


def _classify(head: str) -> tuple:
    stripped = ACCESS_RE.sub(" ", head).strip()
    m = re.match(r"^(?:inline\s+)?namespace\b\s*([\w:]*)", stripped)
    if m and re.fullmatch(r"(?:inline\s+)?namespace\s*[\w:]*\s*(?:\[\[.*\]\]|__attribute__\s*\(\(.*\)\))?\s*", stripped, re.S):
        return ("namespace", m.group(1))
    if re.fullmatch(r'extern\s*"[^"]*"\s*', stripped):
        return ("extern", "")
    body = re.sub(r"^template\s*<.*?>\s*(?=(?:class|struct|union)\b)", "", stripped, flags=re.S)
    if re.match(r"^(?:typedef\s+|using\s+\w+\s*=\s*)?(?:enum)\b", body) or body.startswith("typedef"):
        return ("block",)
    if re.match(r"^(?:class|struct|union)\b", body):
        if re.search(r"(?<![=!<>])=(?!=)", body):
            return ("block",)
        name_part = re.split(r"(?<!:):(?!:)", body, maxsplit=1)[0]
        names = [w for w in re.findall(r"[A-Za-z_]\w*", re.sub(r"\b(?:alignas|__attribute__|__declspec)\s*\(.*?\)+", " ", name_part))
                 if w not in ("class", "struct", "union", "final", "template", "typename") and not _is_macro_name(w)]
        return ("class", names[-1] if names else "")
    if _looks_like_member_init(head):
        return ("member_init",)
    function = _function_head(head)
    if function is None:
        return ("block",)
    if re.search(r"(?<![=!<>+\-*/%&|^])=(?![=])", _strip_groups(head[:function[1]])):
        return ("block",)  # `auto f = [](...) {` and other initializers
    return ("function",) + function[:2] + (function[3],)


def _strip_groups(text: str) -> str:
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"\([^()]*\)|<[^<>]*>", "", text)
    return text


def _looks_like_member_init(head: str) -> bool:
    """The `{` ending this head opens a member's brace initializer (`: a_(x), b_{`), not a body."""
    stripped = head.rstrip()
    if not stripped or not (stripped[-1].isalnum() or stripped[-1] in "_>"):
        return False
    masked = OPERATOR_RE.sub(lambda m: re.sub(r"\W", "_", m.group(0)), stripped)
    return _init_list_colon(masked, _top_groups(masked)) >= 0


# ------------------------------------------------------------------------------------------------
# Pass 3: raise, warning and log sites.
# ------------------------------------------------------------------------------------------------

def _split_args(blank: str, start: int, end: int) -> List[Tuple[int, int]]:
    """Top-level comma-separated argument spans between start and end (exclusive)."""
    spans: List[Tuple[int, int]] = []
    last = start
    i = start
    while i < end:
        ch = blank[i]
        if ch in "([{":  # nested brackets are skipped whole, so every comma seen is top-level
            i = _match(blank, i) + 1
            continue
        if ch == ",":
            spans.append((last, i))
            last = i + 1
        i += 1
    if blank[last:end].strip() or spans:
        spans.append((last, end))
    return spans


def _split_operands(blank: str, start: int, end: int) -> List[Tuple[int, int]]:
    """Split an expression at top-level `+` and `<<` into operand spans."""
    spans: List[Tuple[int, int]] = []
    last = start
    i = start
    while i < end:
        ch = blank[i]
        if ch in "([{":
            i = _match(blank, i) + 1
            continue
        if ch == "?":  # a conditional expression is one variable part
            return [(start, end)]
        if blank.startswith("<<", i) and not blank.startswith("<<=", i):
            spans.append((last, i))
            last = i + 2
            i += 2
            continue
        if ch == "+" and not blank.startswith("++", i) and not blank.startswith("+=", i) and (i == 0 or blank[i - 1] != "+"):
            spans.append((last, i))
            last = i + 1
        i += 1
    spans.append((last, end))
    return [(a, b) for a, b in spans if blank[a:b].strip()]


def _literal_value(clean: CleanText, start: int, end: int) -> Optional[str]:
    """The joined value when [start, end) holds only string literals (`"a" "b"`), else None."""
    parts: List[str] = []
    i = start
    blank = clean.blank
    while i < end:
        if blank[i].isspace():
            i += 1
            continue
        lit = clean.literals.get(i)
        if lit is None:
            return None
        parts.append(lit[1])
        i = lit[0]
    return "".join(parts) if parts else None


IDENT_OPERAND_RE = re.compile(r"^([A-Za-z_]\w*)(?:\.c_str\(\))?$")
MAX_VARIABLE_LOOKBACK = 8000  # characters searched back for `msg = ...;`


def _stringified_concat(clean: CleanText, start: int, end: int) -> Optional[list]:
    """Pieces of adjacent literals mixed with `#param` stringifications, else None."""
    pieces: list = []
    i = start
    seen_literal = False
    blank = clean.blank
    while i < end:
        if blank[i].isspace():
            i += 1
            continue
        lit = clean.literals.get(i)
        if lit is not None:
            pieces.append(lit[1])
            seen_literal = True
            i = lit[0]
            continue
        m = re.match(r"#\s*([A-Za-z_]\w*)", blank[i:end])
        if m is None:
            return None
        pieces.append(placeholder("#" + m.group(1)))
        i += m.end()
    return pieces if seen_literal or pieces else None


def _message_pieces(clean: CleanText, spans: List[Tuple[int, int]], printf: bool = False,
                    depth: int = 0, offsets: Optional[List[int]] = None) -> Tuple[list, str]:
    """Message pieces of c10::str-style arguments: literals kept, a string variable followed back
    to its assignment, everything else a placeholder. Returns (pieces, error-code suffix such as
    `PTA_ERROR(ErrCode::NOT_SUPPORT)`); `offsets` collects where the literals used start."""
    pieces: list = []
    error_code = ""
    offsets = offsets if offsets is not None else []
    for a, b in spans:
        for oa, ob in _split_operands(clean.blank, a, b):
            operand = _squash(clean.code[oa:ob])
            if ERROR_SUFFIX_RE.match(operand):
                error_code = operand
                continue
            oa += _lead(clean, (oa, ob))
            ob = oa + len(clean.code[oa:ob].rstrip())
            if clean.code.endswith(".c_str()", oa, ob):  # "literal".c_str() is still the literal
                ob -= len(".c_str()")
            value = _literal_value(clean, oa, ob)
            if value is not None:
                offsets.append(oa)
                pieces.extend(printf_pieces(value) if printf else [value])
                continue
            stringified = _stringified_concat(clean, oa, ob)
            if stringified is not None:  # `"call " #aclnn_api " failed"` inside a macro body
                offsets.append(oa)
                pieces.extend(stringified)
                continue
            builder = re.match(r"(" + "|".join(re.escape(b) for b in STRING_BUILDERS) + r")\s*\(", clean.blank[oa:ob])
            if builder and builder.group(1) != "std::to_string":
                open_at = oa + builder.end() - 1
                inner, inner_code = _message_pieces(clean, _split_args(clean.blank, open_at + 1, _match(clean.blank, open_at)),
                                                    depth=depth, offsets=offsets)
                pieces.extend(inner)
                error_code = error_code or inner_code
                continue
            variable = IDENT_OPERAND_RE.match(operand)
            if variable and depth < 2:
                resolved = _resolve_variable(clean, variable.group(1), oa, depth, offsets)
                if resolved is not None:
                    pieces.extend(resolved[0])
                    error_code = error_code or resolved[1]
                    continue
            pieces.append(placeholder(operand))
    return pieces, error_code


def _resolve_variable(clean: CleanText, name: str, before: int, depth: int,
                      offsets: List[int]) -> Optional[Tuple[list, str]]:
    """`std::string msg = "a" + x; msg += "b";` before the use → the pieces of "a" <x> "b"."""
    if name in ("true", "false", "nullptr", "this"):
        return None
    window_start = max(0, before - MAX_VARIABLE_LOOKBACK)
    window = clean.blank[window_start:before]
    pattern = re.compile(r"(?:^|(?<=[;{}]))\s*(?:(?:const\s+)?(?:auto|std::string|string)\s*&?\s+)?"
                         + re.escape(name) + r"\s*(\+?=)(?!=)")
    found = list(pattern.finditer(window))
    plain = [m for m in found if m.group(1) == "="]
    if not plain:
        return None
    first = plain[-1]
    parts = [first] + [m for m in found if m.group(1) == "+=" and m.start() > first.start()]
    pieces: list = []
    error_code = ""
    for m in parts:
        expr_start = window_start + m.end()
        expr_end = _statement_end(clean.blank, expr_start, before)
        if expr_end is None:
            return None
        sub, code = _message_pieces(clean, [(expr_start, expr_end)], depth=depth + 1, offsets=offsets)
        pieces.extend(sub)
        error_code = error_code or code
    return (pieces, error_code) if any(isinstance(p, str) for p in pieces) else None


def _statement_end(blank: str, start: int, limit: int) -> Optional[int]:
    i = start
    while i < limit:
        ch = blank[i]
        if ch in "([{":
            i = _match(blank, i) + 1
            continue
        if ch == ";":
            return i
        i += 1
    return None


def _scan_sites(clean: CleanText, functions: List[FunctionDef]) -> List[Site]:
    sites: List[Site] = []
    blank = clean.blank
    for m in SITE_RE.finditer(blank):
        name = m.group(1)
        after = m.end()
        if name == "throw":
            site = _throw_site(clean, m.start(), after)
            if site:
                sites.append(site)
            continue
        if after >= len(blank) or blank[after] != "(":
            continue
        close = _match(blank, after)
        args = _split_args(blank, after + 1, close)
        site = _macro_site(clean, name, m.start(), args, close)
        if site is not None and not (site.kind == "npu_check" and _in_directive(clean, m.start())
                                     and not _named(clean, args)):
            sites.append(site)  # (a bare NPU_CHECK_ERROR(param) forwarded inside a #define is not a raise site)
    _attach_functions(sites, functions)
    return sites


def _macro_site(clean: CleanText, name: str, start: int, args: List[Tuple[int, int]], close: int) -> Optional[Site]:
    pieces: list = []
    error_code = ""
    condition = ""
    offsets: List[int] = []
    if name in CHECK_MACROS or name in CHECK_WITH_MACROS:
        kind = CHECK_MACROS.get(name) or CHECK_WITH_MACROS[name]
        first = 1 if name in CHECK_WITH_MACROS else 0
        if len(args) <= first:
            return None
        condition = _squash(clean.code[args[first][0]:args[first][1]])
        pieces, error_code = _message_pieces(clean, args[first + 1:], offsets=offsets)
        if kind == "assert":
            # c10: `<cond> INTERNAL ASSERT FAILED at "<file>":<line>, please report a bug to PyTorch. <msg>`
            pieces = [condition, " INTERNAL ASSERT FAILED at ", placeholder("__FILE__:__LINE__"),
                      ", please report a bug to PyTorch. "] + pieces
        elif len(args) == first + 1 or all(ERROR_SUFFIX_RE.match(clean.code[a:b].strip()) for a, b in args[first + 1:]):
            # c10: an empty TORCH_CHECK message reads `Expected <cond> to be true, but got false.`
            pieces = ["Expected " + condition + " to be true, but got false. "] + pieces
    elif name in MESSAGE_MACROS or name in THROW_MACROS:
        kind = MESSAGE_MACROS.get(name) or THROW_MACROS[name]
        pieces, error_code = _message_pieces(clean, args[1:] if name in THROW_MACROS else args, offsets=offsets)
    elif name == "NPU_CHECK_WARN":
        # NPUException.h NPU_CHECK_WARN: TORCH_NPU_WARN("NPU warning, error code is ", Error, "[Error]: ", ...)
        kind = "npu_check"
        if not args:
            return None
        condition = _squash(clean.code[args[0][0]:args[0][1]])
        pieces = ["NPU warning, error code is ", placeholder("error_code"), "[Error]: ", placeholder("description")]
    elif name == "ACL_CALL_LOG":
        # interface/AclCallDecorator.h: "[ACL CALL] %s(%s)" with the API name and the streamed arguments
        kind = "log"
        if len(args) < 2:
            return None
        api, _ = _message_pieces(clean, [args[0]], offsets=offsets)
        streamed, _ = _message_pieces(clean, [args[1]], offsets=offsets)
        pieces = ["[ACL CALL] "] + api + ["("] + streamed + [")"]
    elif name in NPU_CHECK_MACROS:
        kind = "npu_check"
        if not args:
            return None
        condition = _squash(clean.code[args[0][0]:args[0][1]])
        label = condition
        named = [a for a in args[1:] if '"' in clean.code[a[0]:a[1]]]  # NPU_CHECK_ERROR(call, "name")
        label: list = [condition]
        if named:
            label, _code = _message_pieces(clean, named[-1:], offsets=offsets)
        # NPUException.h: `<func>:<file>:<line> NPU function error: <call or name>, error code is <n>`
        pieces = [placeholder("__func__:__FILE__:__LINE__"), " NPU function error: "] + label + [
            ", error code is ", placeholder("error_code")]
    elif LOG_MACRO_RE.match(name):
        kind = "log"
        fmt = next((a for a in args if _literal_value(clean, a[0] + _lead(clean, a), a[1]) is not None
                    or re.search(r'"', clean.code[a[0]:a[1]])), None)
        if fmt is None:
            return None
        pieces, error_code = _message_pieces(clean, [fmt], printf=True, offsets=offsets)
    else:
        return None
    message_line = clean.line_of(min(offsets)) if offsets else clean.line_of(start)
    return Site(line=clean.line_of(start), end_line=clean.line_of(close), message_line=message_line,
                kind=kind, call=name, pieces=merge_pieces(pieces), error_code=error_code, condition=condition)


def _named(clean: CleanText, args: List[Tuple[int, int]]) -> bool:
    return any('"' in clean.code[a:b] for a, b in args[1:])


def _in_directive(clean: CleanText, offset: int) -> bool:
    return any(start <= offset < end for start, end in clean.directives)


def _lead(clean: CleanText, span: Tuple[int, int]) -> int:
    text = clean.code[span[0]:span[1]]
    return len(text) - len(text.lstrip())


def _throw_site(clean: CleanText, start: int, after: int) -> Optional[Site]:
    blank = clean.blank
    m = re.match(r"([A-Za-z_][\w:]*(?:<[^<>;]*>)?)\s*([({])", blank[after:after + 200])
    if not m:
        return None
    open_at = after + m.end() - 1
    close = _match(blank, open_at)
    args = _split_args(blank, open_at + 1, close)
    offsets: List[int] = []
    pieces, error_code = _message_pieces(clean, args, offsets=offsets)
    return Site(line=clean.line_of(start), end_line=clean.line_of(close),
                message_line=clean.line_of(min(offsets)) if offsets else clean.line_of(start), kind="throw",
                call=_squash(m.group(1)),
                pieces=merge_pieces(pieces), error_code=error_code)


def _attach_functions(sites: List[Site], functions: List[FunctionDef]) -> None:
    for site in sites:
        best = None
        for fn in functions:
            if fn.start <= site.line <= fn.end and (best is None or fn.start >= best.start):
                best = fn
        site.function = best.qualname if best else ""


CALL_RE = re.compile(r"\b([A-Za-z_][\w:]*)\s*\(")


def _literal_calls(clean: CleanText) -> List[list]:
    """Calls of functions named like raising helpers with a literal argument:
    [callee, line, [literal or None per argument]]."""
    calls = []
    for m in CALL_RE.finditer(clean.blank):
        callee = m.group(1)
        short = callee.rsplit("::", 1)[-1]
        if not HELPER_CALL_RE.search(short) or short in SITE_NAMES or LOG_MACRO_RE.match(short) or short in KEYWORDS_NOT_FUNCTIONS:
            continue
        open_at = m.end() - 1
        close = _match(clean.blank, open_at)
        if '"' not in clean.blank[open_at:close]:
            continue
        literals = [_literal_value(clean, a + _lead(clean, (a, b)), a + len(clean.code[a:b].rstrip()))
                    for a, b in _split_args(clean.blank, open_at + 1, close)[:8]]
        if any(literals):
            calls.append([callee, clean.line_of(m.start()), literals])
    return calls


def parameters(signature: str, name: str) -> List[str]:
    """Parameter names of a C++ signature (`void f(const NPUStream& s, const char* api)` → [s, api])."""
    at = signature.find(name.rsplit("::", 1)[-1] + "(")
    if at < 0:
        return []
    open_at = signature.index("(", at)
    close = _match(signature, open_at)
    names = []
    for a, b in _split_args(signature, open_at + 1, close):
        words = re.findall(r"[A-Za-z_]\w*", signature[a:b].split("=")[0])
        names.append(words[-1] if len(words) >= 2 else "")
    return names


def scan_cpp(text: str) -> Tuple[List[FunctionDef], List[Site], List[list]]:
    """Function definitions, raise/warn/log sites and raising-helper calls of one C++ file."""
    clean = CleanText(text)
    functions = _scan_functions(clean)
    sites = _scan_sites(clean, functions)
    mark_forwarding(sites, {f.qualname: parameters(f.signature, f.name) for f in functions if f.kind != "class"})
    return functions, sites, _literal_calls(clean)
