"""Where capture happens: the captured regions of a module, found with `ast`.

- bodies of `with torch.npu.graph(g):` (any spelling the namespaces map there: torch_npu.npu.graph,
  torch.cuda.graph, `from torch.cuda import graph`, `import torch_npu.npu as n; n.graph`);
- statements between `g.capture_begin()` and `g.capture_end()` in one block;
- callables passed to make_graphed_callables;
- functions and modules compiled with a graph mode, backend or option (call or decorator);
- classes and functions under a framework's capture decorator, and defs marked `# npu-graph: captured`.

Which names mean what comes from lint_rules.yaml (`regions`); this module only knows the shapes.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, Iterator, List, Optional, Tuple

from npu_graph_skill.lint.project import FUNCTION_NODES, ModuleInfo, Target

BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers")


class Region:
    """A captured region: statements (a with body or a capture span) or root functions, with its site."""

    def __init__(self, kind: str, module: ModuleInfo, line: int, text: str, certainty: str,
                 body: Optional[List[ast.stmt]] = None, roots: Optional[List[Target]] = None,
                 function: Optional[ast.AST] = None, cls: Optional[str] = None, graph: str = "",
                 stream: str = "", node: Optional[ast.AST] = None) -> None:
        self.kind = kind  # graph | capture | graphed | compiled | decorator | pragma
        self.module = module
        self.line = line
        self.text = text
        self.certainty = certainty
        self.body = body or []
        self.roots = roots or []
        self.function = function  # the function holding a with/capture region (None = module level)
        self.cls = cls
        self.graph = graph  # source of the graph object: "g", "self.graph"
        self.stream = stream  # the capture stream's source, when named
        self.node = node
        self.guards: frozenset = frozenset()  # functions true whenever this region runs (regions.guards)
        self.holds: Dict[str, frozenset] = {}  # what a framework's region implies (a base's `holds`: is_none, is_true)

    @property
    def end_line(self) -> int:
        return max((getattr(s, "end_lineno", s.lineno) for s in self.body), default=self.line)

    def site(self) -> Dict[str, Any]:
        return {"kind": self.kind, "path": self.module.path, "line": self.line, "text": self.text}


def short(node: ast.AST, limit: int = 70) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd nodes; the text is only for display
        text = node.__class__.__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def walk_scopes(tree: ast.Module) -> Iterator[Tuple[ast.AST, Optional[ast.AST], Optional[str]]]:
    """Every node with its enclosing function (None at module level) and class name (for methods)."""
    stack: List[Tuple[ast.AST, Optional[ast.AST], Optional[str]]] = [(tree, None, None)]
    while stack:
        node, function, cls = stack.pop()
        yield node, function, cls
        if isinstance(node, FUNCTION_NODES) or isinstance(node, ast.Lambda):
            inner_function, inner_cls = node, cls
        elif isinstance(node, ast.ClassDef):
            inner_function, inner_cls = None, node.name
        else:
            inner_function, inner_cls = function, cls
        for child in ast.iter_child_nodes(node):
            stack.append((child, inner_function, inner_cls if not isinstance(child, ast.ClassDef) else inner_cls))


def blocks(node: ast.AST) -> Iterator[List[ast.stmt]]:
    """Every statement list under `node` (bodies, else branches, handlers), nested ones included."""
    for child in ast.walk(node):
        for field in BLOCK_FIELDS:
            value = getattr(child, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value


class RegionFinder:
    """Finds the regions of one module with the names of the `regions` configuration."""

    def __init__(self, config: Dict[str, Any]) -> None:
        self.config = config
        self.graph_names = set(config["graph_contexts"]["names"])
        self.begin = set(config["capture_calls"]["begin"])
        self.end = set(config["capture_calls"]["end"])
        self.graphed = set(config["graphed_callables"]["names"])
        compiled = config["compiled"]
        self.compile_names = set(compiled["names"])
        self.modes = set(compiled.get("modes") or [])
        self.backends = set(compiled.get("backends") or [])
        self.options = set(compiled.get("options") or [])
        self.decorators = {d["name"]: d for d in config.get("decorators") or []}
        self.bases = {b["name"]: b for b in config.get("bases") or []}
        guards = config.get("guards") or {}
        self.capturing = frozenset((guards.get("capturing") or []) + (guards.get("capturing_flags") or []))
        # code traced by torch.compile sees is_compiling() true; a capture of eager code does not
        self.compiling = self.capturing | frozenset(guards.get("compiling") or [])

    def find(self, module: ModuleInfo) -> List[Region]:
        regions: List[Region] = []
        for node, function, cls in walk_scopes(module.source.tree):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                regions.extend(self._with_region(module, node, function, cls))
            elif isinstance(node, ast.Call):
                name = module.qualify(node.func)
                if name in self.graphed:
                    regions.extend(self._graphed(module, node, function, cls))
                elif name in self.compile_names and self._graph_compile(module, node):
                    regions.extend(self._compiled(module, node, function, cls))
            elif isinstance(node, FUNCTION_NODES + (ast.ClassDef,)):
                regions.extend(self._decorated(module, node, cls))
                if isinstance(node, ast.ClassDef) and self.bases:
                    regions.extend(self._based(module, node))
        if any(name in module.source.text for name in self.begin):
            regions.extend(self._capture_spans(module))
        for region in regions:
            region.guards = self.compiling if region.kind in ("compiled", "decorator") else self.capturing
        regions.sort(key=lambda r: r.line)
        return regions

    # --- with torch.npu.graph(g) ------------------------------------------------------------

    def _with_region(self, module: ModuleInfo, node: ast.AST, function, cls) -> Iterator[Region]:
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and module.qualify(call.func) in self.graph_names:
                graph = short(call.args[0]) if call.args else ""
                stream = next((short(k.value) for k in call.keywords if k.arg == "stream"), "")
                yield Region("graph", module, node.lineno, f"with {short(call)}",
                             self.config["graph_contexts"]["certainty"], body=node.body, function=function,
                             cls=cls, graph=graph, stream=stream, node=node)

    # --- g.capture_begin() ... g.capture_end() ----------------------------------------------

    def _capture_spans(self, module: ModuleInfo) -> Iterator[Region]:
        scopes = {id(n): (f, c) for n, f, c in walk_scopes(module.source.tree) if isinstance(n, ast.Expr)}
        for block in blocks(module.source.tree):
            for index, stmt in enumerate(block):
                call = _expr_call(stmt)
                if call is None or not isinstance(call.func, ast.Attribute) or call.func.attr not in self.begin:
                    continue
                graph = short(call.func.value)
                span: List[ast.stmt] = []
                for later in block[index + 1:]:
                    end = _expr_call(later)
                    if end is not None and isinstance(end.func, ast.Attribute) and end.func.attr in self.end:
                        break
                    span.append(later)
                function, cls = scopes.get(id(stmt), (None, None))
                yield Region("capture", module, stmt.lineno, short(call), self.config["capture_calls"]["certainty"],
                             body=span, function=function, cls=cls, graph=graph, node=stmt)

    # --- make_graphed_callables / torch.compile / decorators -------------------------------

    def _graphed(self, module: ModuleInfo, node: ast.Call, function, cls) -> Iterator[Region]:
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "callables"), None)
        items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first] if first is not None else []
        roots = [t for item in items for t in resolve_callable(module, item, function, cls)]
        if roots:
            yield Region("graphed", module, node.lineno, short(node), self.config["graphed_callables"]["certainty"],
                         roots=roots, function=function, cls=cls, node=node)

    def _graph_compile(self, module: ModuleInfo, call: ast.Call) -> bool:
        values = [k.value for k in call.keywords if k.arg in ("mode", "backend")]
        name = module.qualify(call.func) or ""
        if name.endswith("optimize") and call.args:
            values.append(call.args[0])
        for value in values:
            if isinstance(value, ast.Constant) and value.value in (self.modes | self.backends):
                return True
        for keyword in call.keywords:
            if keyword.arg == "options" and isinstance(keyword.value, ast.Dict):
                for key, value in zip(keyword.value.keys, keyword.value.values):
                    if (isinstance(key, ast.Constant) and key.value in self.options
                            and isinstance(value, ast.Constant) and value.value is True):
                        return True
        return False

    def _compiled(self, module: ModuleInfo, node: ast.Call, function, cls) -> Iterator[Region]:
        name = module.qualify(node.func) or ""
        target = None if name.endswith("optimize") else (
            node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "model"), None))
        if target is None:
            return  # used as a decorator: found with the decorated def
        roots = resolve_callable(module, target, function, cls)  # may be empty: a module from a library
        yield Region("compiled", module, node.lineno, short(node), self.config["compiled"]["certainty"],
                     roots=roots, function=function, cls=cls, node=node)

    def _decorated(self, module: ModuleInfo, node: ast.AST, cls: Optional[str]) -> Iterator[Region]:
        is_class = isinstance(node, ast.ClassDef)
        owner = node.name if is_class else cls
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            name = module.qualify(call.func if call else decorator) or ""
            decorator_form = call is not None and (not call.args or name.endswith("optimize"))
            if decorator_form and name in self.compile_names and self._graph_compile(module, call):
                if not is_class:
                    key = f"{cls}.{node.name}" if cls else node.name
                    yield Region("compiled", module, node.lineno, f"@{short(decorator)}",
                                 self.config["compiled"]["certainty"],
                                 roots=[Target(module, node, f"{module.name}.{key}", cls)], cls=cls, node=node)
                continue
            spec = self.decorators.get(name.rpartition(".")[2])
            if spec is None:
                continue
            if is_class:
                target = module.project.method(module, node.name, spec.get("member") or "forward")
                roots = [target] if target else []
            else:
                key = f"{cls}.{node.name}" if cls else node.name
                roots = [Target(module, node, f"{module.name}.{key}", cls)]
            if roots:
                yield Region("decorator", module, node.lineno, f"@{short(decorator)}", spec["certainty"],
                             roots=roots, cls=owner, node=node)
        if not is_class and module.source.captured_lines:
            lines = {node.lineno} | {d.lineno for d in node.decorator_list}
            if lines & module.source.captured_lines:
                key = f"{cls}.{node.name}" if cls else node.name
                yield Region("pragma", module, node.lineno, "# npu-graph: captured", "certain",
                             roots=[Target(module, node, f"{module.name}.{key}", cls)], cls=cls, node=node)


    def _based(self, module: ModuleInfo, node: ast.ClassDef) -> Iterator[Region]:
        """Methods a framework runs captured because of the class they derive from (vLLM attention impls)."""
        spec = next((self.bases[name] for name in base_names(module, node) if name in self.bases), None)
        if spec is None:
            return
        for member in spec["members"]:
            key = f"{node.name}.{member}"
            if key in module.functions:
                target = Target(module, module.functions[key], f"{module.name}.{key}", node.name)
            else:  # inherited: walked again with `self` of this class, so the helpers it overrides are followed
                target = module.project.method(module, node.name, member)
                if target is None:
                    continue
            region = Region("base", module, node.lineno, f"class {node.name}({spec['name']}) → {member}",
                            spec["certainty"], roots=[target], cls=node.name, node=node)
            region.holds = {k: frozenset(v) for k, v in (spec.get("holds") or {}).items()}
            yield region


def base_names(module: ModuleInfo, node: ast.ClassDef, depth: int = 0) -> List[str]:
    """The simple names of a class's bases, and of theirs where the project defines them."""
    names: List[str] = []
    for base in node.bases:
        if isinstance(base, ast.Subscript):  # a generic base: `AttentionImplBase[Metadata]`
            base = base.value
        qualified = module.qualify(base) or ""
        names.append(qualified.rpartition(".")[2])
        found = module.project.find_class(qualified) if qualified and depth < 6 else None
        if found and found[0].classes.get(found[1]) is not node:
            names.extend(base_names(found[0], found[0].classes[found[1]], depth + 1))
    return names


def _expr_call(stmt: ast.stmt) -> Optional[ast.Call]:
    return stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None


def resolve_callable(module: ModuleInfo, node: ast.AST, function, cls: Optional[str]) -> List[Target]:
    """The functions a callable expression stands for: a def, a module instance (its forward), a lambda."""
    from npu_graph_skill.lint.callgraph import Resolver

    if isinstance(node, ast.Lambda):
        return [Target(module, node, f"{module.name}.<lambda>", cls)]
    resolver = Resolver(module, function, cls)
    target = resolver.callable_target(node)
    return [target] if target else []
