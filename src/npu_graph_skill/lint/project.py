"""The modules being linted and those of the same packages: names, imports, definitions, and the
lookups that let the linter follow a call from a captured region into the function it runs.

Only code under the linted files' package roots is followed ("the same package"); a module is read
from disk the first time a call needs it. Name resolution is deliberately simple and static: import
aliases, module-level definitions, methods of the enclosing class and its bases, and the classes
assigned to `self.attr` / local names (`self.layer = Layer(...)` → `self.layer(x)` runs `Layer.forward`).
"""
from __future__ import annotations

import ast
import os
from typing import Dict, Iterator, List, Optional, Tuple

from npu_graph_skill.lint.source import SourceFile, read_source

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
MAX_LOADED_MODULES = 2000  # modules read from disk to follow calls, beyond the linted files
MODULE_CALLS = ("forward", "__call__")  # what calling an nn.Module instance runs


def dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def module_name(path: str) -> Tuple[str, str]:
    """(root directory, dotted module name): walk up while the folder is a package."""
    path = os.path.abspath(path)
    folder, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
        if not package:
            break
    return folder, ".".join(parts) or stem


class Target:
    """A function the linter can walk into: its module, node, qualified name and class (for `self`).

    `owner` is the class `self` really is when the method was found in a base of it ((module, class name);
    None when it is the defining class): `self.helper()` inside an inherited method runs the subclass's
    override, as Python's method lookup does."""

    __slots__ = ("module", "node", "qualname", "cls", "owner")

    def __init__(self, module: "ModuleInfo", node: ast.AST, qualname: str, cls: Optional[str],
                 owner: Optional[Tuple["ModuleInfo", str]] = None) -> None:
        self.module, self.node, self.qualname, self.cls, self.owner = module, node, qualname, cls, owner


class ModuleInfo:
    """One parsed module: its import aliases and top-level definitions."""

    def __init__(self, source: SourceFile, name: str, root: str, project: "Project", linted: bool) -> None:
        self.source = source
        self.path = source.path
        self.name = name
        self.root = root
        self.project = project
        self.linted = linted
        self._aliases: Optional[Dict[str, str]] = None  # built on first use: most modules never need it
        self._functions: Dict[str, ast.AST] = {}  # "f" and "C.m"
        self._classes: Dict[str, ast.ClassDef] = {}
        self._attr_types: Dict[str, Dict[str, str]] = {}

    @property
    def aliases(self) -> Dict[str, str]:
        if self._aliases is None:
            self._aliases = {}
            self._index(self.source.tree)
        return self._aliases

    @property
    def functions(self) -> Dict[str, ast.AST]:
        self.aliases  # noqa: B018 - builds the index
        return self._functions

    @property
    def classes(self) -> Dict[str, ast.ClassDef]:
        self.aliases  # noqa: B018 - builds the index
        return self._classes

    def _index(self, tree: ast.Module) -> None:
        package = self.name if self.source.path.endswith("__init__.py") else self.name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self._aliases.setdefault(top, top)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".") if package else []
                    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                    base = ".".join(p for p in parts + ([node.module] if node.module else []) if p)
                for alias in node.names:
                    if alias.name != "*":
                        self._aliases[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        for node in tree.body:
            if isinstance(node, FUNCTION_NODES):
                self._functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self._classes[node.name] = node
                for item in node.body:
                    if isinstance(item, FUNCTION_NODES):
                        self._functions[f"{node.name}.{item.name}"] = item

    # --- names ------------------------------------------------------------------------------

    def qualify(self, node: ast.AST) -> Optional[str]:
        """The canonical dotted name of a Name/Attribute chain: import aliases expanded, local
        definitions prefixed with this module, known module spellings rewritten (torch_npu.npu → torch.npu)."""
        text = dotted(node)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        if head in self.aliases:
            text = self.aliases[head] + ("." + rest if rest else "")
        elif head in self.functions or head in self.classes:
            text = f"{self.name}.{text}"
        return self.project.canonical(text)

    # --- classes ----------------------------------------------------------------------------

    def attr_types(self, cls: str) -> Dict[str, str]:
        """`self.x = Cls(...)` (or a list / ModuleList of them, as `[]Cls`) in any method of `cls`."""
        if cls not in self._attr_types:
            types: Dict[str, str] = {}
            node = self.classes.get(cls)
            for item in node.body if node else []:
                if isinstance(item, FUNCTION_NODES):
                    params = self.parameter_types(item)
                    for stmt in ast.walk(item):
                        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                            kind = (params.get(stmt.value.id) if isinstance(stmt.value, ast.Name)
                                    else self.value_type(stmt.value))
                            for target in targets:
                                name = dotted(target)
                                if kind and name and name.startswith("self.") and name.count(".") == 1:
                                    types.setdefault(name[5:], kind)
            self._attr_types[cls] = types
        return self._attr_types[cls]

    def parameter_types(self, function: ast.AST) -> Dict[str, str]:
        """Parameters annotated with a class of the project (`worker: EAGLEWorker`, `Optional["Cls"]`, `Cls | None`)."""
        found: Dict[str, str] = {}
        args = function.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs:
            kind = self.annotation_type(arg.annotation) if arg.annotation is not None else None
            if kind:
                found[arg.arg] = kind
        return found

    def annotation_type(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.Subscript) and (dotted(node.value) or "").rpartition(".")[2] == "Optional":
            node = node.slice
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # `Cls | None`
            sides = [n for n in (node.left, node.right) if not (isinstance(n, ast.Constant) and n.value is None)]
            node = sides[0] if len(sides) == 1 else node
        name = self.qualify(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        return name if name and self.project.find_class(name) else None

    def value_type(self, value: ast.AST) -> Optional[str]:
        """The qualified class of `Cls(...)`; `[]Cls` for a container of them: `[Cls(...) for ...]`,
        `nn.ModuleList([...])`, `nn.ModuleDict({k: Cls(...) for ...})` (iterating a dict's values, see callgraph)."""
        if isinstance(value, ast.Call):
            name = self.qualify(value.func)
            if name and name.rpartition(".")[2] in ("ModuleList", "Sequential", "ModuleDict") and value.args:
                inner = self.value_type(value.args[0])
                return inner if inner and inner.startswith("[]") else None
            if name and name[:1] != "[" and self.project.find_class(name):
                return name
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            inner = self.value_type(value.elt)
            return f"[]{inner}" if inner and not inner.startswith("[]") else None
        if isinstance(value, ast.List) and value.elts:
            inner = self.value_type(value.elts[0])
            return f"[]{inner}" if inner and not inner.startswith("[]") else None
        if isinstance(value, (ast.DictComp, ast.Dict)):
            element = value.value if isinstance(value, ast.DictComp) else (value.values[0] if value.values else None)
            inner = self.value_type(element) if element is not None else None
            return f"[]{inner}" if inner and not inner.startswith("[]") else None
        return None


class Project:
    """Every module known to this run, by dotted name; modules of the same roots are loaded on demand."""

    def __init__(self, namespaces: Dict[str, str], within: Optional[List[str]] = None) -> None:
        self.namespaces = sorted(namespaces.items(), key=lambda kv: -len(kv[0]))
        # real paths the linter may read to follow calls (the MCP server's allowed roots); None = anywhere
        self.within = [os.path.realpath(p) for p in within] if within is not None else None
        self.modules: Dict[str, ModuleInfo] = {}
        self.by_path: Dict[str, ModuleInfo] = {}
        self.roots: List[str] = []
        self._missing: set = set()
        self._loaded = 0
        self.bindings: Dict[tuple, list] = {}  # (function, parameter) → the callables its callers pass (callgraph)
        self.calls: Dict[str, Dict[str, list]] = {}  # module path → its calls by called name (callgraph)
        self.call_sites: Dict[tuple, list] = {}  # (function, parameter) → its call sites and arguments (callgraph)
        self.custom_ops: Dict[str, object] = {}  # regions.custom_ops of the lint config: how ops are registered
        self._op_index: Optional[Dict[str, Target]] = None
        self._unique_methods: Dict[str, Optional[Target]] = {}

    def canonical(self, name: str) -> str:
        for prefix, replacement in self.namespaces:
            if name == prefix or name.startswith(prefix + "."):
                return replacement + name[len(prefix):]
        return name

    def add(self, source: SourceFile, real_path: str, linted: bool = True) -> ModuleInfo:
        root, name = module_name(real_path)
        if root not in self.roots:
            self.roots.append(root)
        module = ModuleInfo(source, name, root, self, linted)
        self.modules.setdefault(name, module)
        self.by_path[os.path.abspath(real_path)] = module
        return module

    def linted(self) -> Iterator[ModuleInfo]:
        return (m for m in self.by_path.values() if m.linted)

    def module(self, name: str) -> Optional[ModuleInfo]:
        if name in self.modules:
            return self.modules[name]
        if name in self._missing or self._loaded >= MAX_LOADED_MODULES:
            return None
        relative = name.replace(".", os.sep)
        for root in self.roots:
            for candidate in (os.path.join(root, relative + ".py"), os.path.join(root, relative, "__init__.py")):
                real = os.path.abspath(candidate)
                if real in self.by_path:
                    return self.by_path[real]
                if os.path.isfile(candidate) and self._may_read(candidate):
                    source, _ = read_source(candidate, shown=os.path.relpath(candidate))
                    if source is not None:
                        self._loaded += 1
                        return self.add(source, candidate, linted=False)
        self._missing.add(name)
        return None

    def _may_read(self, path: str) -> bool:
        if self.within is None:
            return True
        real = os.path.realpath(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.within)

    def _split(self, name: str) -> Iterator[Tuple[ModuleInfo, List[str]]]:
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.module(".".join(parts[:cut]))
            if module is not None:
                yield module, parts[cut:]

    def find_class(self, name: str) -> Optional[Tuple[ModuleInfo, str]]:
        for module, rest in self._split(name):
            if len(rest) == 1 and rest[0] in module.classes:
                return module, rest[0]
            if len(rest) == 1 and rest[0] in module.aliases:  # re-exported from a package __init__
                again = module.qualify(ast.Name(id=rest[0]))
                if again and again != name:
                    return self.find_class(again)
        return None

    def find_function(self, name: str) -> Optional[Target]:
        for module, rest in self._split(name):
            key = ".".join(rest)
            if key in module.functions:
                return Target(module, module.functions[key], f"{module.name}.{key}", rest[0] if len(rest) == 2 else None)
            if len(rest) == 2 and rest[0] in module.classes:
                return self.method(module, rest[0], rest[1])
            if len(rest) == 1 and rest[0] in module.aliases:
                again = module.qualify(ast.Name(id=rest[0]))
                if again and again != name:
                    return self.find_function(again)
        return None

    def method(self, module: ModuleInfo, cls: str, name: str) -> Optional[Target]:
        """`cls.name`, looked up through the class's bases (in this project) like Python would; a method found
        in a base keeps `cls` as its owner, so the calls it makes on `self` are looked up from `cls` again."""
        target = self._method(module, cls, name)
        if target is not None and (target.module is not module or target.cls != cls):
            target.owner = (module, cls)
        return target

    def _method(self, module: ModuleInfo, cls: str, name: str, depth: int = 0) -> Optional[Target]:
        key = f"{cls}.{name}"
        if key in module.functions:
            return Target(module, module.functions[key], f"{module.name}.{key}", cls)
        node = module.classes.get(cls)
        if node is None or depth > 8:
            return None
        for base in node.bases:
            qualified = module.qualify(base.value if isinstance(base, ast.Subscript) else base)
            found = self.find_class(qualified) if qualified else None
            if found:
                target = self._method(found[0], found[1], name, depth + 1)
                if target:
                    return target
        return None

    def custom_op(self, op: str) -> Optional[Target]:
        """The Python function the project registers as custom op `op` (what `torch.ops.<ns>.<op>(...)` runs)."""
        if self._op_index is None:
            self._op_index = {}
            for module in list(self.by_path.values()):
                self._index_custom_ops(module)
        return self._op_index.get(op)

    def _index_custom_ops(self, module: "ModuleInfo") -> None:
        registrars = {r["name"]: r for r in self.custom_ops.get("registrars") or []}
        decorators = set(self.custom_ops.get("decorators") or [])
        words = list(registrars) + [d.rpartition(".")[2] for d in decorators]
        if not any(word in module.source.text for word in words):
            return
        for node in ast.walk(module.source.tree):
            if isinstance(node, ast.Call) and (dotted(node.func) or "").rpartition(".")[2] in registrars:
                spec = registrars[(dotted(node.func) or "").rpartition(".")[2]]
                op = _argument(node, spec["op_name"], 0)
                func = _argument(node, spec["op_func"], 1)
                if isinstance(op, ast.Constant) and isinstance(op.value, str) and func is not None:
                    target = self._function_named(module, func)
                    if target is not None:
                        self._op_index.setdefault(op.value.rpartition("::")[2], target)
            elif isinstance(node, FUNCTION_NODES):
                for decorator in node.decorator_list:
                    if (isinstance(decorator, ast.Call) and module.qualify(decorator.func) in decorators and decorator.args
                            and isinstance(decorator.args[0], ast.Constant) and isinstance(decorator.args[0].value, str)):
                        self._op_index.setdefault(decorator.args[0].value.rpartition("::")[2],
                                                  Target(module, node, f"{module.name}.{node.name}", None))

    def _function_named(self, module: "ModuleInfo", node: ast.AST) -> Optional[Target]:
        if isinstance(node, ast.Name) and node.id in module.functions:
            return Target(module, module.functions[node.id], f"{module.name}.{node.id}", None)
        qualified = module.qualify(node)
        return self.find_function(qualified) if qualified else None

    def unique_method(self, name: str) -> Optional[Target]:
        """The method `name` when exactly one class of the project defines it (a layer found by name at run
        time, whose class the code does not say), else None."""
        if name not in self._unique_methods:
            found = [(module, key) for module in list(self.by_path.values()) if f"def {name}(" in module.source.text
                     for key in module.functions if key.endswith("." + name) and key.count(".") == 1]
            self._unique_methods[name] = (Target(found[0][0], found[0][0].functions[found[0][1]],
                                                 f"{found[0][0].name}.{found[0][1]}", found[0][1].split(".")[0])
                                          if len(found) == 1 else None)
        return self._unique_methods[name]

    def call_of_instance(self, class_name: str) -> Optional[Target]:
        """What `instance(...)` runs for an instance of `class_name`: forward (nn.Module) or __call__."""
        found = self.find_class(class_name)
        if not found:
            return None
        for member in MODULE_CALLS:
            target = self.method(found[0], found[1], member)
            if target:
                return target
        return None


def _argument(call: ast.Call, keyword: str, position: int) -> Optional[ast.AST]:
    """A call's argument given by keyword or at its position."""
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return call.args[position] if len(call.args) > position and not isinstance(call.args[position], ast.Starred) else None
