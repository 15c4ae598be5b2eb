"""Python sources through `ast`: functions and methods (class-qualified) with their line ranges
and signatures; `raise`, `warnings.warn` and logger calls with their messages as pieces
(f-strings, `+` concatenation, `%` and `.format` templates; a message built in a local variable
first is followed back to its assignment).

A file that this Python cannot parse (newer syntax) falls back to an indentation scan for
definitions, so that locate still works; its sites are then left out.
"""
from __future__ import annotations

import ast
import re
import warnings
from typing import Dict, List, Optional, Tuple

from npu_graph_skill.expert.source_model import (
    HELPER_CALL_RE, FunctionDef, Site, format_pieces, mark_forwarding, merge_pieces, placeholder, printf_pieces,
)

TORCH_CHECKS = {"_check", "_check_with", "_check_value", "_check_type", "_check_index", "_check_is_size"}
LOG_HELPER_RE = re.compile(r"(?:^|_)(?:log|warn|warning)(?:_|$)")
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
WARN_ONCE = {"warn_once", "warning_once", "log_once"}
# torch_npu/utils/_error_code.py: the helpers that build the `[ERROR] ... ERRxxxxx` suffix.
ERROR_HELPERS = {"pta_error", "ops_error", "dist_error", "graph_error", "prof_error"}


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)  # Python >= 3.9
    except Exception:  # noqa: BLE001 - a display aid only
        return node.__class__.__name__


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        base = _call_name(func.value)
        return f"{base}.{func.attr}" if base else func.attr
    if isinstance(func, ast.Call):
        return _call_name(func.func)
    return ""


class _Scanner:
    """Walks statements only (not every expression node): raises, calls made as statements
    (`logger.debug(...)`, `warnings.warn(...)`) and assignments are all statements, and skipping
    expression subtrees makes the scan several times faster."""

    def __init__(self) -> None:
        self.functions: List[FunctionDef] = []
        self.sites: List[Site] = []
        self.calls: List[list] = []  # [callee, line, [literal or None per argument]] of raising helpers
        self.params: Dict[str, List[str]] = {}
        self.scope: List[Tuple[str, ast.AST]] = []  # (name, node) of enclosing classes/functions
        self.assignments: List[Dict[str, List[Tuple[int, ast.AST, bool]]]] = [{}]

    # -- definitions -----------------------------------------------------------------------------
    def _qualname(self, name: str) -> str:
        return ".".join([s[0] for s in self.scope] + [name])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = ", ".join(_unparse(b) for b in node.bases)
        self.functions.append(FunctionDef(
            qualname=self._qualname(node.name), name=node.name, start=node.lineno,
            end=getattr(node, "end_lineno", node.lineno) or node.lineno,
            signature=f"class {node.name}({bases})" if bases else f"class {node.name}", kind="class"))
        self.scope.append((node.name, node))
        self.walk(node.body)
        self.scope.pop()

    def _visit_function(self, node, is_async: bool) -> None:
        in_class = bool(self.scope) and isinstance(self.scope[-1][1], ast.ClassDef)
        signature = f"{'async ' if is_async else ''}def {node.name}({_unparse(node.args)})"
        if node.returns is not None:
            signature += f" -> {_unparse(node.returns)}"
        self.functions.append(FunctionDef(
            qualname=self._qualname(node.name), name=node.name, start=node.lineno,
            end=getattr(node, "end_lineno", node.lineno) or node.lineno, signature=signature[:300],
            kind="method" if in_class else "function"))
        params = [a.arg for a in list(getattr(node.args, "posonlyargs", [])) + list(node.args.args)]
        if in_class and params and params[0] in ("self", "cls"):
            params = params[1:]
        self.params[self._qualname(node.name)] = params
        self.scope.append((node.name, node))
        self.assignments.append({})
        self.walk(node.body)
        self.assignments.pop()
        self.scope.pop()

    def walk(self, statements: list) -> None:
        for node in statements:
            kind = type(node)
            if kind is ast.FunctionDef:
                self._visit_function(node, False)
                continue
            if kind is ast.AsyncFunctionDef:
                self._visit_function(node, True)
                continue
            if kind is ast.ClassDef:
                self.visit_ClassDef(node)
                continue
            if kind is ast.Raise:
                self.visit_Raise(node)
            elif kind is ast.Expr and type(node.value) is ast.Call:
                self.visit_Call(node.value)
            elif kind is ast.Assign:
                self.visit_Assign(node)
            elif kind is ast.AugAssign:
                self.visit_AugAssign(node)
            for _name, value in ast.iter_fields(node):  # bodies of if/for/while/with/try/match
                if type(value) is list and value and not isinstance(value[0], ast.expr):
                    first = value[0]
                    if isinstance(first, ast.stmt):
                        self.walk(value)
                    else:  # except handlers, match cases
                        for item in value:
                            body = getattr(item, "body", None)
                            if isinstance(body, list):
                                self.walk(body)

    # -- local message variables ------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.assignments[-1].setdefault(target.id, []).append((node.lineno, node.value, False))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            self.assignments[-1].setdefault(node.target.id, []).append((node.lineno, node.value, True))

    def _resolve(self, name: str, line: int, depth: int) -> Optional[list]:
        history = [a for a in self.assignments[-1].get(name, []) if a[0] < line]
        if not history or depth > 3:
            return None
        pieces: list = []
        for lineno, value, augmented in reversed(history):  # walk back to the plain assignment
            pieces = self._pieces(value, lineno, depth + 1) + pieces
            if not augmented:
                return pieces
        return None

    # -- sites -------------------------------------------------------------------------------------
    def _pieces(self, node: ast.AST, line: int, depth: int = 0) -> list:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            out: list = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out.append(value.value)
                elif isinstance(value, ast.FormattedValue):
                    out.append(placeholder(_unparse(value.value)))
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._pieces(node.left, line, depth) + self._pieces(node.right, line, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self._pieces(node.left, line, depth)
            return [q for p in left for q in (printf_pieces(p) if isinstance(p, str) else [p])]
        if isinstance(node, ast.Call):
            name = _call_name(node.func)
            if name.rsplit(".", 1)[-1] in ERROR_HELPERS:
                return []
            if isinstance(node.func, ast.Attribute) and node.func.attr == "format":
                base = self._pieces(node.func.value, line, depth)
                return [q for p in base for q in (format_pieces(p) if isinstance(p, str) else [p])]
            if name == "str" and node.args:
                return self._pieces(node.args[0], line, depth)
        if isinstance(node, ast.Name) and depth <= 3:
            resolved = self._resolve(node.id, line, depth)
            if resolved is not None:
                return resolved
        return [placeholder(_unparse(node))]

    def _error_code(self, call: ast.Call) -> str:
        for node in list(call.args) + [k.value for k in call.keywords]:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and _call_name(sub.func).rsplit(".", 1)[-1] in ERROR_HELPERS:
                    return _unparse(sub)
        return ""

    def _add_site(self, node: ast.AST, kind: str, call_name: str, message: Optional[ast.AST],
                  call: Optional[ast.Call], printf: bool = False) -> None:
        pieces = self._pieces(message, node.lineno) if message is not None else []
        if printf:
            pieces = [q for p in pieces for q in (printf_pieces(p) if isinstance(p, str) else [p])]
        message_line = getattr(message, "lineno", node.lineno) if message is not None else node.lineno
        self.sites.append(Site(
            line=node.lineno, end_line=getattr(node, "end_lineno", node.lineno) or node.lineno,
            message_line=message_line, kind=kind, call=call_name, pieces=merge_pieces(pieces),
            error_code=self._error_code(call) if call is not None else "",
            function=".".join(s[0] for s in self.scope)))

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call):
            message = exc.args[0] if exc.args else None
            if message is None:
                message = next((k.value for k in exc.keywords if k.arg in ("msg", "message")), None)
            self._add_site(node, "raise", _call_name(exc.func), message, exc)
        elif exc is not None:
            self._add_site(node, "raise", _call_name(exc) or _unparse(exc)[:40], None, None)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node.func)
        last = name.rsplit(".", 1)[-1]
        receiver = name.rsplit(".", 1)[0] if "." in name else ""
        if name in ("warnings.warn", "warn", "warnings.warn_explicit") and node.args:
            self._add_site(node, "warn", name, node.args[0], node)
        elif last in LOG_METHODS and receiver and "log" in receiver.lower():
            args = list(node.args)
            if last == "log" and args:
                args = args[1:]
            if args:
                self._add_site(node, "log", name, args[0], node, printf=len(args) > 1)
        elif last in TORCH_CHECKS and node.args:
            # torch._check(cond, lambda: msg), torch._check_with(Error, cond, lambda: msg)
            message = node.args[-1] if len(node.args) >= (3 if last == "_check_with" else 2) else None
            if isinstance(message, ast.Lambda):
                message = message.body
            if message is not None:
                self._add_site(node, "check", name, message, node)
        elif last not in WARN_ONCE and LOG_HELPER_RE.search(last) and node.args and self._has_literal(node.args[0]):
            self._add_site(node, "log", name, node.args[0], node)  # log_cudagraph_skip_and_bump_counter(f"...")
        elif HELPER_CALL_RE.search(last) and any(_is_str(a) for a in node.args):
            self.calls.append([name, node.lineno, [a.value if _is_str(a) else None for a in node.args[:8]]])
        if last in WARN_ONCE and node.args:
            message = next((a for a in node.args if self._has_literal(a)), None)
            if message is not None:
                self._add_site(node, "warn" if "warn" in last else "log", name, message, node,
                               printf=len(node.args) > node.args.index(message) + 1)

    def _has_literal(self, node: ast.AST) -> bool:
        return any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in ast.walk(node))


def scan_python(text: str) -> Tuple[List[FunctionDef], List[Site], str, List[list]]:
    """(functions, sites, error, helper calls). On a syntax error: a token-based scan (definitions,
    simple raises)."""
    try:
        with warnings.catch_warnings():  # the scanned file's invalid escapes are not the user's concern
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        functions, sites = _fallback_scan(text)
        return functions, sites, f"{exc.__class__.__name__}: {getattr(exc, 'msg', exc)} (scanned by tokens)", []
    scanner = _Scanner()
    try:
        scanner.walk(tree.body)
    except RecursionError:
        return scanner.functions, scanner.sites, "RecursionError: nesting too deep; partial scan", scanner.calls
    mark_forwarding(scanner.sites, scanner.params)
    return scanner.functions, scanner.sites, "", scanner.calls


def _fallback_scan(text: str) -> Tuple[List[FunctionDef], List[Site]]:
    """Definitions from the token stream's INDENT/DEDENT structure, and `raise X("literal")`
    sites: for a file whose syntax this Python's `ast` does not know."""
    import io
    import tokenize

    found: List[FunctionDef] = []
    sites: List[Site] = []
    stack: List[Tuple[int, str, int, str, str]] = []  # (level, qualname, start, signature, kind)
    level = 0
    pending: Optional[dict] = None  # a def/class header waiting to learn if a block follows
    line_start = True
    last_line = 0
    prev: List[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = tok.type
            if kind in (tokenize.COMMENT, tokenize.NL):
                continue
            if pending is not None and pending.get("header_end") and kind != tokenize.INDENT:
                found.append(FunctionDef(pending["qualname"], pending["name"], pending["start"],
                                         pending["header_end"], pending["signature"], pending["kind"]))
                pending = None
            if kind == tokenize.INDENT:
                level += 1
                if pending is not None:
                    stack.append((level, pending["qualname"], pending["start"], pending["signature"], pending["kind"]))
                    pending = None
            elif kind == tokenize.DEDENT:
                level -= 1
                while stack and stack[-1][0] > level:
                    _lvl, qualname, start, signature, def_kind = stack.pop()
                    found.append(FunctionDef(qualname, qualname.rsplit(".", 1)[-1], start, last_line, signature, def_kind))
            elif kind == tokenize.NEWLINE:
                if pending is not None:
                    pending["header_end"] = tok.start[0]
                    pending["signature"] = " ".join(text.splitlines()[pending["start"] - 1:tok.start[0]][0].split())
                    pending["signature"] = pending["signature"].rstrip(":")[:300]
                line_start = True
                last_line = tok.start[0]
                continue
            elif kind == tokenize.NAME and tok.string in ("def", "class") and line_start_or_async(prev, line_start):
                pending = {"start": tok.start[0], "kind": "class" if tok.string == "class" else
                           ("method" if stack and stack[-1][4] == "class" else "function")}
                prev = (prev + [tok])[-8:]
                line_start = False
                continue
            elif kind == tokenize.NAME and pending is not None and "name" not in pending and prev and prev[-1].string in ("def", "class"):
                pending["name"] = tok.string
                pending["qualname"] = f"{stack[-1][1]}.{tok.string}" if stack else tok.string
            elif kind == tokenize.STRING and len(prev) >= 3 and prev[-1].string == "(" and "raise" in [t.string for t in prev[-4:]]:
                try:
                    value = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError):
                    value = None
                if isinstance(value, str):
                    call = "".join(t.string for t in prev[prev.index(next(t for t in reversed(prev) if t.string == "raise")) + 1:-1])
                    sites.append(Site(line=tok.start[0], end_line=tok.end[0], message_line=tok.start[0], kind="raise",
                                      call=call, pieces=[value]))
            if kind not in (tokenize.INDENT, tokenize.DEDENT):
                line_start = False
                last_line = tok.end[0]
            prev = (prev + [tok])[-8:]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    while stack:
        _lvl, qualname, start, signature, def_kind = stack.pop()
        found.append(FunctionDef(qualname, qualname.rsplit(".", 1)[-1], start, last_line, signature, def_kind))
    found.sort(key=lambda f: (f.start, -f.end))
    _attach(sites, found)
    return found, sites


def line_start_or_async(prev: list, line_start: bool) -> bool:
    return line_start or (bool(prev) and prev[-1].string == "async")


def _attach(sites: List[Site], functions: List[FunctionDef]) -> None:
    for site in sites:
        inner = [f for f in functions if f.start <= site.line <= f.end and f.kind != "class"]
        site.function = max(inner, key=lambda f: f.start).qualname if inner else ""
