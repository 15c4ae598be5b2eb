"""Follow calls out of a captured region into the functions of the same package, to a bounded depth.

`Resolver` answers "which function does this call run?" from the calling function's point of view;
`walk_region` visits every node a region executes (its own statements, then the bodies of the
functions it calls) with the call chain that leads there.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from npu_graph_skill.lint.model import Step
from npu_graph_skill.lint.project import FUNCTION_NODES, ModuleInfo, Target, dotted
from npu_graph_skill.lint.regions import Region, short

DEFAULT_DEPTH = 3
SCOPE_BARRIERS = FUNCTION_NODES + (ast.ClassDef, ast.Lambda)


class Resolver:
    """Call targets seen from one function: nested defs, local instances, `self`, imports."""

    def __init__(self, module: ModuleInfo, function: Optional[ast.AST], cls: Optional[str]) -> None:
        self.module = module
        self.function = function
        self.cls = cls
        self._locals: Optional[Dict[str, object]] = None

    def locals(self) -> Dict[str, object]:
        """name → nested def node, or the qualified class of `name = Cls(...)` / `for name in self.layers`."""
        if self._locals is None:
            found: Dict[str, object] = {}
            if self.function is not None and not isinstance(self.function, ast.Lambda):
                for node in ast.walk(self.function):
                    if isinstance(node, FUNCTION_NODES) and node is not self.function:
                        found.setdefault(node.name, node)
                    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                        kind = self.value_type(node.value)
                        if kind:
                            found.setdefault(node.targets[0].id, kind)
                    elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                        kind = self.value_type(node.iter)
                        if kind and kind.startswith("[]"):
                            found.setdefault(node.target.id, kind[2:])
            self._locals = found
        return self._locals

    def value_type(self, value: ast.AST) -> Optional[str]:
        name = dotted(value)
        if name and name.startswith("self.") and name.count(".") == 1 and self.cls:
            return self.module.attr_types(self.cls).get(name[5:])
        return self.module.value_type(value)

    def instance_type(self, node: ast.AST) -> Optional[str]:
        """The class of `self.x` or of a local name, when the linter saw it constructed."""
        if isinstance(node, ast.Name):
            kind = self.locals().get(node.id)
            return kind if isinstance(kind, str) and not kind.startswith("[]") else None
        name = dotted(node)
        if name and name.startswith("self.") and name.count(".") == 1 and self.cls:
            kind = self.module.attr_types(self.cls).get(name[5:])
            return kind if kind and not kind.startswith("[]") else None
        return None

    def callable_target(self, node: ast.AST) -> Optional[Target]:
        """The function run by *calling* `node` (a def, a method, a module instance)."""
        project = self.module.project
        if isinstance(node, ast.Name):
            local = self.locals().get(node.id)
            if isinstance(local, ast.AST):
                return Target(self.module, local, f"{self.module.name}.{node.id}", self.cls)
            if isinstance(local, str):
                return project.call_of_instance(local)
            qualified = self.module.qualify(node)
            if qualified:
                target = project.find_function(qualified)
                if target:
                    return target
                found = project.find_class(qualified)
                return None if found else None  # calling a class constructs it: not followed
            return None
        if isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls") and self.cls:
                target = project.method(self.module, self.cls, node.attr)
                if target:
                    return target
                kind = self.module.attr_types(self.cls).get(node.attr)
                return project.call_of_instance(kind) if kind and not kind.startswith("[]") else None
            kind = self.instance_type(base)
            if kind:
                found = project.find_class(kind)
                return project.method(found[0], found[1], node.attr) if found else None
            qualified = self.module.qualify(node)
            return project.find_function(qualified) if qualified else None
        return None


def iter_executed(stmts: List[ast.AST]) -> Iterator[ast.AST]:
    """The nodes a statement list runs, not descending into nested defs, classes and lambdas."""
    stack = list(reversed(stmts))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPE_BARRIERS):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


Visit = Callable[[ast.AST, "Context"], None]


class Context:
    """Where a visited node is: its module, function, class, the region and the chain to it."""

    __slots__ = ("module", "function", "cls", "region", "chain", "resolver")

    def __init__(self, module: ModuleInfo, function: Optional[ast.AST], cls: Optional[str], region: Region,
                 chain: Tuple[Step, ...]) -> None:
        self.module, self.function, self.cls, self.region, self.chain = module, function, cls, region, chain
        self.resolver = Resolver(module, function, cls)


def walk_region(region: Region, visit: Visit, depth: int = DEFAULT_DEPTH) -> int:
    """Visit every node the region runs, following calls `depth` levels deep; returns functions entered."""
    site = Step(region.module.path, region.line, region.text)
    seen: set = set()
    queue: List[Tuple[Context, List[ast.AST], int]] = []
    if region.body:
        queue.append((Context(region.module, region.function, region.cls, region, (site,)), region.body, 0))
    for root in region.roots:
        seen.add(id(root.node))
        body = root.node.body if not isinstance(root.node, ast.Lambda) else [root.node.body]
        step = Step(root.module.path, root.node.lineno, f"{_name(root)}")
        queue.append((Context(root.module, root.node, root.cls, region, (site, step)), body, 0))
    entered = 0
    while queue:
        context, body, level = queue.pop(0)
        entered += 1
        for node in iter_executed(body):
            visit(node, context)
            if level >= depth or not isinstance(node, ast.Call):
                continue
            target = context.resolver.callable_target(node.func)
            if target is None or id(target.node) in seen or isinstance(target.node, ast.Lambda):
                continue
            seen.add(id(target.node))
            step = Step(context.module.path, node.lineno, f"{short(node, 50)} → {target.qualname}")
            inner = Context(target.module, target.node, target.cls, region, context.chain + (step,))
            queue.append((inner, target.node.body, level + 1))
    return entered


def _name(target: Target) -> str:
    return target.qualname.rpartition(".")[2] if not target.cls else f"{target.cls}.{target.qualname.rpartition('.')[2]}"
