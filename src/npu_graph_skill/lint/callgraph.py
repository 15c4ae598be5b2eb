"""Follow calls out of a captured region into the functions of the same package, to a bounded depth.

`Resolver` answers "which function does this call run?" from the calling function's point of view;
`walk_region` visits every node a region executes (its own statements, then the bodies of the
functions it calls) with the call chain that leads there.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple

from npu_graph_skill.lint.guards import guard_state, iter_guarded
from npu_graph_skill.lint.model import Step
from npu_graph_skill.lint.project import FUNCTION_NODES, ModuleInfo, Target, dotted
from npu_graph_skill.lint.regions import Region, short, walk_scopes

DEFAULT_DEPTH = 3
LAYER = "?layer"  # a local bound to a layer looked up by name (`ctx.no_compile_layers[name]`): class unknown


class Resolver:
    """Call targets seen from one function: nested defs, local instances, `self`, imports."""

    def __init__(self, module: ModuleInfo, function: Optional[ast.AST], cls: Optional[str],
                 owner: Optional[Tuple[ModuleInfo, str]] = None) -> None:
        self.module = module
        self.function = function
        self.cls = cls
        # the class `self` is: a subclass when this method was inherited (calls on self dispatch from there)
        self.owner = owner if owner is not None else ((module, cls) if cls else None)
        self._locals: Optional[Dict[str, object]] = None

    def self_attr_type(self, attr: str) -> Optional[str]:
        """The class of `self.attr`, from the owner class's methods, then from the defining class's."""
        if self.owner is None:
            return None
        kind = self.owner[0].attr_types(self.owner[1]).get(attr)
        if kind is None and self.cls and (self.owner[0] is not self.module or self.owner[1] != self.cls):
            kind = self.module.attr_types(self.cls).get(attr)
        return kind

    def locals(self) -> Dict[str, object]:
        """name → nested def node, or the qualified class of `name = Cls(...)` / `for name in self.layers`."""
        if self._locals is None:
            found: Dict[str, object] = {}
            if self.function is not None and not isinstance(self.function, ast.Lambda):
                found.update(self.module.parameter_types(self.function))  # `worker: EAGLEWorker`
                for node in ast.walk(self.function):
                    if isinstance(node, FUNCTION_NODES) and node is not self.function:
                        found.setdefault(node.name, node)
                    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                        kind = LAYER if self.is_layer_lookup(node.value) else self.value_type(node.value)
                        if kind:
                            found.setdefault(node.targets[0].id, kind)
                    elif isinstance(node, ast.For):
                        self._bind_loop(node.target, node.iter, found)
            self._locals = found
        return self._locals

    def _bind_loop(self, target: ast.AST, iterable: ast.AST, found: Dict[str, object]) -> None:
        """`for layer in self.layers`, `.values()`, `for k, layer in .items()`, `for i, x in enumerate(...)`."""
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate"
                and iterable.args and isinstance(target, ast.Tuple) and len(target.elts) == 2):
            self._bind_loop(target.elts[1], iterable.args[0], found)
            return
        pairs = False
        if (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args
                and iterable.func.attr in ("values", "items")):
            pairs = iterable.func.attr == "items"
            iterable = iterable.func.value
        kind = self.value_type(iterable)
        if not (kind and kind.startswith("[]")):
            return
        if pairs:
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return
            target = target.elts[1]
        if isinstance(target, ast.Name):
            found.setdefault(target.id, kind[2:])

    def is_layer_lookup(self, node: ast.AST) -> bool:
        """`forward_context.no_compile_layers[layer_name]`: one of the model's layers, found by name."""
        tables = self.module.project.custom_ops.get("layer_tables") or ()
        return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr in tables

    def value_type(self, value: ast.AST) -> Optional[str]:
        name = dotted(value)
        if name and name.startswith("self.") and name.count(".") == 1 and self.cls:
            return self.self_attr_type(name[5:])
        return self.module.value_type(value)

    def instance_type(self, node: ast.AST) -> Optional[str]:
        """The class of `self.x` or of a local name, when the linter saw it constructed."""
        if isinstance(node, ast.Name):
            kind = self.locals().get(node.id)
            return kind if isinstance(kind, str) and not kind.startswith("[]") else None
        name = dotted(node)
        if name and name.startswith("self.") and name.count(".") == 1 and self.cls:
            kind = self.self_attr_type(name[5:])
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
            if self.is_layer_lookup(base) or (isinstance(base, ast.Name) and self.locals().get(base.id) == LAYER):
                return project.unique_method(node.attr)
            if isinstance(base, ast.Name) and base.id in ("self", "cls") and self.owner is not None:
                target = project.method(self.owner[0], self.owner[1], node.attr)
                if target:
                    return target
                kind = self.self_attr_type(node.attr)
                return project.call_of_instance(kind) if kind and not kind.startswith("[]") else None
            kind = self.instance_type(base)
            if kind:
                found = project.find_class(kind)
                return project.method(found[0], found[1], node.attr) if found else None
            qualified = self.module.qualify(node)
            return project.find_function(qualified) if qualified else None
        return None


Visit = Callable[[ast.AST, "Context"], None]


class Context:
    """Where a visited node is: its module, function, class, the region and the chain to it."""

    __slots__ = ("module", "function", "cls", "region", "chain", "resolver", "_bound")

    def __init__(self, module: ModuleInfo, function: Optional[ast.AST], cls: Optional[str], region: Region,
                 chain: Tuple[Step, ...], owner: Optional[Tuple[ModuleInfo, str]] = None) -> None:
        self.module, self.function, self.cls, self.region, self.chain = module, function, cls, region, chain
        self.resolver = Resolver(module, function, cls, owner)
        self._bound: Optional[Dict[str, bool]] = None

    def guard(self, test: ast.AST) -> Optional[bool]:
        """Whether `test` holds whenever the region runs (see iter_guarded); names bound to a guard call count."""
        names, holds = self.region.guards, self.region.holds
        if not names and not holds:
            return None
        if self._bound is None:
            self._bound = {}
            if self.function is not None and not isinstance(self.function, ast.Lambda):
                for node in ast.walk(self.function):
                    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                            and guard_state(node.value, self.module, names, {}) is not None):
                        self._bound[node.targets[0].id] = bool(guard_state(node.value, self.module, names, {}))
        return guard_state(test, self.module, names, self._bound, holds)


def walk_region(region: Region, visit: Visit, depth: int = DEFAULT_DEPTH) -> int:
    """Visit every node the region runs, following calls `depth` levels deep; returns functions entered."""
    site = Step(region.module.path, region.line, region.text)
    seen: set = set()
    queue: List[Tuple[Context, List[ast.AST], int]] = []
    if region.body:
        queue.append((Context(region.module, region.function, region.cls, region, (site,)), region.body, 0))
    for root in region.roots:
        seen.add(_key(root))
        body = root.node.body if not isinstance(root.node, ast.Lambda) else [root.node.body]
        step = Step(root.module.path, root.node.lineno, f"{_name(root)}")
        queue.append((Context(root.module, root.node, root.cls, region, (site, step), root.owner), body, 0))
    entered = 0
    while queue:
        context, body, level = queue.pop(0)
        entered += 1
        for node in iter_guarded(body, context.guard):
            visit(node, context)
            if level >= depth or not isinstance(node, ast.Call):
                continue
            target = context.resolver.callable_target(node.func)
            op = custom_op_name(context.module, node.func) if target is None else None
            if op is not None:
                target = context.module.project.custom_op(op)
            if target is not None:
                found = [(target, f"{short(node, 50)} → {'custom op ' + op + ' → ' if op else ''}{target.qualname}")]
            elif isinstance(node.func, ast.Name):  # a callable handed to this function: `run_once_fn()`
                found = [(t, f"{short(node, 50)} → {via} → {t.qualname}")
                         for t, via in bound_callables(context.module, context.function, node.func.id)]
            else:
                found = []
            for target, text in found:
                if _key(target) in seen:
                    continue
                seen.add(_key(target))
                step = Step(context.module.path, node.lineno, text)
                inner = Context(target.module, target.node, target.cls, region, context.chain + (step,), target.owner)
                body = target.node.body if not isinstance(target.node, ast.Lambda) else [target.node.body]
                # a custom op's registered function only dispatches to the layer: it costs no depth
                queue.append((inner, body, level + (0 if op else 1)))
    return entered


def custom_op_name(module: ModuleInfo, func: ast.AST) -> Optional[str]:
    """`op` of a call of `torch.ops.<namespace>.<op>` (or of one of its overloads, `.default`)."""
    parts = (module.qualify(func) or dotted(func) or "").split(".")
    return parts[3] if len(parts) in (4, 5) and parts[:2] == ["torch", "ops"] else None


MAX_BINDING_HOPS = 3  # `capture(fn)` → `_capture(fn)` → `fn()`: how many helpers a callable may be handed through


def call_sites(module: ModuleInfo, function: Optional[ast.AST], name: str) -> List[tuple]:
    """Every call of `function` in the project, with what it passes for its parameter `name`:
    (caller module, call, calling function, its class, the argument or None when the call leaves the default)."""
    if not isinstance(function, FUNCTION_NODES):
        return []
    positional = [a.arg for a in function.args.posonlyargs + function.args.args]
    if name not in positional + [a.arg for a in function.args.kwonlyargs]:
        return []
    key = (id(function), name)
    if key in module.project.call_sites:
        return module.project.call_sites[key]
    sites = []
    for caller_module in list(module.project.by_path.values()):
        if function.name not in caller_module.source.text:
            continue
        for node, caller, cls in calls_by_name(caller_module).get(function.name, ()):
            called = Resolver(caller_module, caller, cls).callable_target(node.func)
            if called is None or called.node is not function:
                continue
            argument = next((k.value for k in node.keywords if k.arg == name), None)
            if argument is None and name in positional:
                index = positional.index(name) - (1 if positional and positional[0] in ("self", "cls")
                                                  and isinstance(node.func, ast.Attribute) else 0)
                if 0 <= index < len(node.args) and not isinstance(node.args[index], ast.Starred):
                    argument = node.args[index]
            sites.append((caller_module, node, caller, cls, argument))
    module.project.call_sites[key] = sites
    return sites


def bound_callables(module: ModuleInfo, function: Optional[ast.AST], name: str,
                    hops: int = MAX_BINDING_HOPS) -> List[Tuple[Target, str]]:
    """What a parameter `name` of `function` is bound to at the calls of `function` in the project: the
    callable a capture helper runs (`def _capture_graph(self, graph, run_once_fn): ... run_once_fn()` called as
    `self._capture_graph(g, run_once)`). Followed through helpers that pass it on, `hops` deep."""
    if hops <= 0:
        return []
    cache = module.project.bindings
    key = (id(function), name)
    if key in cache:
        return cache[key]
    cache[key] = []  # a recursive helper does not loop
    found: List[Tuple[Target, str]] = []
    for caller_module, node, caller, cls, argument in call_sites(module, function, name):
        if argument is None:
            continue
        via = f"{name} = {short(argument, 40)} ({caller_module.path}:{node.lineno})"
        if isinstance(argument, ast.Lambda):
            found.append((Target(caller_module, argument, f"{caller_module.name}.<lambda>", cls), via))
            continue
        target = Resolver(caller_module, caller, cls).callable_target(argument)
        if target is not None:
            found.append((target, via))
        elif isinstance(argument, ast.Name):
            found.extend((t, f"{via} → {v}") for t, v in bound_callables(caller_module, caller, argument.id, hops - 1))
    cache[key] = found
    return found


def bound_arguments(module: ModuleInfo, function: Optional[ast.AST], name: str) -> Optional[List[ast.AST]]:
    """What every call of `function` passes for its parameter `name`; None when there is no call, or when one
    leaves the default (then nothing can be said of the value)."""
    arguments = [site[4] for site in call_sites(module, function, name)]
    return arguments if arguments and all(a is not None for a in arguments) else None


def calls_by_name(module: ModuleInfo) -> Dict[str, List[tuple]]:
    """The module's calls by the last name of what they call (`self._capture_graph(...)` → `_capture_graph`),
    with the function and class each is in: one walk of the module serves every binding search."""
    index = module.project.calls.get(module.path)
    if index is None:
        index = {}
        for node, caller, cls in walk_scopes(module.source.tree):
            if isinstance(node, ast.Call):
                name = (dotted(node.func) or "").rpartition(".")[2]
                if name:
                    index.setdefault(name, []).append((node, caller, cls))
        module.project.calls[module.path] = index
    return index


def _key(target: Target) -> tuple:
    """A function is walked once per class `self` is in it (an inherited method may dispatch differently)."""
    return (id(target.node), id(target.owner[0]) if target.owner else None, target.owner[1] if target.owner else None)


def _name(target: Target) -> str:
    return target.qualname.rpartition(".")[2] if not target.cls else f"{target.cls}.{target.qualname.rpartition('.')[2]}"
