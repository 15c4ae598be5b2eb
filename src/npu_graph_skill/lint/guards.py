"""What runs in a captured region: the statements a block executes, without the branches a capture guard
(`is_current_stream_capturing()`, a framework's `capturing` flag) or what a framework's region holds
(`num_prefills == 0`) keeps out of it.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, Iterator, List, Optional

from npu_graph_skill.lint.project import FUNCTION_NODES, ModuleInfo, dotted

SCOPE_BARRIERS = FUNCTION_NODES + (ast.ClassDef, ast.Lambda)


def iter_executed(stmts: List[ast.AST]) -> Iterator[ast.AST]:
    """The nodes a statement list runs, not descending into nested defs, classes and lambdas."""
    stack = list(reversed(stmts))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPE_BARRIERS):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


EXITS = (ast.Return, ast.Raise)


def iter_guarded(stmts: List[ast.AST], state: Callable[[ast.AST], Optional[bool]]) -> Iterator[ast.AST]:
    """`iter_executed` without the code a capture guard keeps out of the region: `state(test)` is True when
    the test holds whenever the region runs (`if torch.npu.is_current_stream_capturing():`), False when it
    never does (`if not ...capturing():`), None when unknown. The branch that cannot run is skipped, and so
    are the statements after `if <true>: return ...` in the same block."""
    stack = list(reversed(_cut(stmts, state)))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPE_BARRIERS):
            continue
        if isinstance(node, (ast.If, ast.IfExp)):
            known = state(node.test)
            body = node.body if isinstance(node.body, list) else [node.body]
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            children = [node.test] + ([] if known is False else _cut(body, state)) + (
                [] if known is True else _cut(orelse, state))
        elif isinstance(node, ast.BoolOp):
            children = evaluated(node, state)
        else:
            children = list(ast.iter_child_nodes(node))
            if any(isinstance(getattr(node, f, None), list) for f in ("body", "orelse", "finalbody")):
                children = _cut_children(node, children, state)
        stack.extend(reversed(children))


def _cut(stmts: List[ast.AST], state: Callable[[ast.AST], Optional[bool]]) -> List[ast.AST]:
    """A block up to an `if <holds in the region>: ... return` (what follows it never runs in the region)."""
    for index, stmt in enumerate(stmts):
        if (isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], EXITS)
                and state(stmt.test) is True):
            return stmts[: index + 1]
    return stmts


def _cut_children(node: ast.AST, children: List[ast.AST], state) -> List[ast.AST]:
    dropped: set = set()
    for field in ("body", "orelse", "finalbody"):
        value = getattr(node, field, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            dropped.update(id(s) for s in value[len(_cut(value, state)):])
    return [c for c in children if id(c) not in dropped] if dropped else children


def guard_state(test: ast.AST, module: ModuleInfo, names: frozenset, bound: Dict[str, bool],
                holds: Optional[Dict[str, frozenset]] = None) -> Optional[bool]:
    """True / False when `test` is known to hold / fail whenever the region runs: from the guard functions,
    and from what a framework's region implies (`holds`, see _holds_state)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = guard_state(test.operand, module, names, bound, holds)
        return None if inner is None else not inner
    if holds:
        known = _holds_state(test, holds)
        if known is not None:
            return known
    if isinstance(test, ast.BoolOp):
        states = [guard_state(v, module, names, bound, holds) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in states else (True if all(s is True for s in states) else None)
        return True if True in states else (False if all(s is False for s in states) else None)
    if isinstance(test, ast.Call) and not test.args and module.qualify(test.func) in names:
        return True
    if isinstance(test, ast.Attribute) and (dotted(test) in names or module.qualify(test) in names):
        return True  # a framework's capture flag (`forward_context.capturing`)
    if (isinstance(test, ast.Attribute) and isinstance(test.value, ast.Call) and not test.value.args
            and f"{module.qualify(test.value.func)}().{test.attr}" in names):
        return True  # the flag read on the getter's result (`get_forward_context().capturing`)
    if isinstance(test, ast.Name):
        return bound.get(test.id)
    return None


def _holds_key(node: ast.AST) -> Optional[str]:
    return node.id if isinstance(node, ast.Name) else ("." + node.attr if isinstance(node, ast.Attribute) else None)


def _holds_state(test: ast.AST, holds: Dict[str, frozenset]) -> Optional[bool]:
    """What a framework's region implies about a name (`pixel_values`) or an attribute (`.is_decoding`):
    is_true / is_false / is_none / is_zero, so `if attn_metadata.is_decoding:` takes its body, `pixel_values is
    not None` and `attn_metadata.num_prefills > 0` fail."""
    key = _holds_key(test)
    if key is not None:
        if key in holds.get("is_true", ()):
            return True
        if any(key in holds.get(k, ()) for k in ("is_false", "is_none", "is_zero")):
            return False
        return None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant)):
        return None
    key, op, value = _holds_key(test.left), test.ops[0], test.comparators[0].value
    if key in holds.get("is_none", ()) and value is None and isinstance(op, (ast.Is, ast.IsNot)):
        return isinstance(op, ast.Is)
    if key in holds.get("is_zero", ()) and value == 0 and not isinstance(value, bool):
        if isinstance(op, (ast.Eq, ast.LtE, ast.GtE)):
            return True
        if isinstance(op, (ast.NotEq, ast.Lt, ast.Gt)):
            return False
    return None


def evaluated(node: ast.BoolOp, state: Callable[[ast.AST], Optional[bool]]) -> List[ast.AST]:
    """The operands of `a and b` / `a or b` that run: none after one the guards settle (short-circuit)."""
    values: List[ast.AST] = []
    for value in node.values:
        values.append(value)
        known = state(value)
        if known is not None and known == isinstance(node.op, ast.Or):
            break
    return values
