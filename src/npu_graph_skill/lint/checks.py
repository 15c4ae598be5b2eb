"""The kinds of checks the engine offers. A rule in lint_rules.yaml picks a kind and fills in its names;
nothing here knows a rule id.

Capture-scope kinds (`call`, `tensor_condition`, `mask_index`) look at one node the region runs and
return the text to quote, or None. Module-scope kinds look at a whole module (and its regions) and
yield `(node, text, region)` hits.
"""
from __future__ import annotations

import ast
import builtins
import re
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from npu_graph_skill.lint.callgraph import Context, bound_arguments
from npu_graph_skill.lint.guards import iter_executed, iter_guarded
from npu_graph_skill.lint.project import FUNCTION_NODES, ModuleInfo, dotted
from npu_graph_skill.lint.regions import Region, short, walk_scopes

Hit = Tuple[ast.AST, str, Optional[Region]]
BUILTIN_NAMES = set(dir(builtins))
MASK_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
DEVICE_MOVE = re.compile(r"\.(to|cuda|npu)\(")


def is_module_path(module: ModuleInfo, node: ast.AST) -> bool:
    """`np.unique`, `torch.npu.x`: the receiver is an imported module, not an object."""
    name = dotted(node)
    return bool(name) and name.split(".")[0] in module.aliases


def argument(call: ast.Call, position: Optional[int], keyword: Optional[str]) -> Optional[ast.AST]:
    if keyword:
        for item in call.keywords:
            if item.arg == keyword:
                return item.value
    if position is not None and len(call.args) > position and not isinstance(call.args[position], ast.Starred):
        return call.args[position]
    return None


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) for v in node.values)
    return False


# --- capture scope -------------------------------------------------------------------------------

class CallCheck:
    """A call by qualified function name or by method name, with optional argument conditions."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.functions = set(params.get("functions") or [])
        self.methods = set(params.get("methods") or [])
        self.max_args = params.get("max_args")
        spec = params.get("argument")
        self.argument = (spec.get("position"), spec.get("keyword"), re.compile(spec["matches"])) if spec else None
        self.nonliteral = bool(params.get("nonliteral_args"))
        self.exclude = re.compile(params["exclude_receivers"]) if params.get("exclude_receivers") else None

    def match(self, node: ast.AST, context: Context) -> Optional[str]:
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        hit = bool(self.functions) and context.module.qualify(func) in self.functions
        if not hit and self.methods and isinstance(func, ast.Attribute) and func.attr in self.methods:
            receiver = func.value
            hit = not is_module_path(context.module, receiver) and not self._excluded(receiver, context)
        if not hit:
            return None
        if self.max_args is not None and len(node.args) + len(node.keywords) > self.max_args:
            return None
        if self.argument:
            position, keyword, pattern = self.argument
            value = argument(node, position, keyword)
            if value is None or not pattern.search(short(value, 200)):
                return None
        if self.nonliteral and (not node.args or all(_literal(a) for a in node.args)):
            return None
        return short(node)


    def _excluded(self, receiver: ast.AST, context: Context) -> bool:
        """The receiver is of the kind the rule leaves out, or is a parameter every caller binds to one."""
        if self.exclude is None:
            return False
        text = short(receiver, 200)
        if DEVICE_MOVE.search(text):  # `seq_lens_cpu.to(x.device)...` is on the device again
            return False
        if self.exclude.search(text):
            return True
        root = receiver
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if not isinstance(root, ast.Name) or root.id in ("self", "cls"):
            return False
        bound = bound_arguments(context.module, context.function, root.id)
        return bool(bound) and all(self.exclude.search(short(a, 200)) for a in bound)


class TensorConditionCheck:
    """`if` / `while` / `assert` / `x if c else y` deciding on a tensor value."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.methods = set(params.get("methods") or [])
        self.functions = set(params.get("functions") or [])
        self.compared_methods = set(params.get("compared_methods") or [])
        self.compared_functions = set(params.get("compared_functions") or [])

    def _call(self, node: ast.AST, context: Context, methods: Set[str], functions: Set[str]) -> bool:
        if not isinstance(node, ast.Call):
            return False
        if (isinstance(node.func, ast.Attribute) and node.func.attr in methods
                and not is_module_path(context.module, node.func.value)):
            return True
        return context.module.qualify(node.func) in functions

    def match(self, node: ast.AST, context: Context) -> Optional[str]:
        if not isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            return None
        for sub in iter_guarded([node.test], context.guard):  # operands a guard short-circuits do not run
            if self._call(sub, context, self.methods, self.functions):
                return short(node.test)
            if isinstance(sub, ast.Compare):
                for operand in [sub.left] + list(sub.comparators):
                    if self._call(operand, context, self.compared_methods, self.compared_functions):
                        return short(node.test)
        return None


class _IndexCheck:
    """`x[index]` where a part of the index is of the kind a subclass recognises (`recognises`), directly or
    through a name the function binds to one (`m = x > 0; y[m]`)."""

    PART_TYPES: tuple = ()
    PASSES = 1  # how many times the function is read for bound names (a name built from another takes 2)

    def __init__(self, functions: Any, methods: Any) -> None:
        self.functions = set(functions or [])
        self.methods = set(methods or [])
        self._names: Dict[int, Set[str]] = {}

    def recognises(self, node: ast.AST, context: Context, names: Set[str]) -> bool:
        raise NotImplementedError

    def bound_names(self, context: Context) -> Set[str]:
        scope = context.function if context.function is not None else context.module.source.tree
        key = id(scope)
        if key not in self._names:
            names: Set[str] = set()
            body = scope.body if isinstance(scope.body, list) else [scope.body]
            for _ in range(self.PASSES):
                for node in iter_executed(body):
                    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                            and self.recognises(node.value, context, names)):
                        names.add(node.targets[0].id)
            self._names[key] = names
        return self._names[key]

    def match(self, node: ast.AST, context: Context) -> Optional[str]:
        if not isinstance(node, ast.Subscript):
            return None
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not any(isinstance(p, self.PART_TYPES) for p in parts):
            return None
        names = self.bound_names(context)
        return short(node) if any(self.recognises(p, context, names) for p in parts) else None


class MaskIndexCheck(_IndexCheck):
    """`x[mask]` / `x[mask] = v` with a boolean mask (a comparison, a mask function, a name bound to one)."""

    PART_TYPES = (ast.Compare, ast.UnaryOp, ast.BinOp, ast.Call, ast.Name)
    PASSES = 2  # a mask built from another mask

    def __init__(self, params: Dict[str, Any]) -> None:
        super().__init__(params.get("mask_functions"), params.get("mask_methods"))

    def recognises(self, node: ast.AST, context: Context, names: Set[str]) -> bool:
        if isinstance(node, ast.Compare):
            return (all(isinstance(op, MASK_COMPARE) for op in node.ops)
                    and not isinstance(node.left, ast.Constant))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            return self.recognises(node.operand, context, names)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self.recognises(node.left, context, names) or self.recognises(node.right, context, names)
        if isinstance(node, ast.Call):
            if (isinstance(node.func, ast.Attribute) and node.func.attr in self.methods
                    and not is_module_path(context.module, node.func.value)):
                return True
            return context.module.qualify(node.func) in self.functions
        return isinstance(node, ast.Name) and node.id in names


class ScalarIndexCheck(_IndexCheck):
    """`x[i]` with `i` a 0-dim integer tensor (argmax without dim, or a name bound to one in the function):
    indexing reads such an index on the host (ATen's TensorIndexing calls tensor.item<int64_t>())."""

    PART_TYPES = (ast.Name, ast.Call)

    def __init__(self, params: Dict[str, Any]) -> None:
        super().__init__(params.get("functions"), params.get("methods"))

    def recognises(self, node: ast.AST, context: Context, names: Set[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in names
        if not isinstance(node, ast.Call) or any(k.arg == "dim" for k in node.keywords):
            return False
        if isinstance(node.func, ast.Attribute) and node.func.attr in self.methods and not is_module_path(
                context.module, node.func.value):
            return not node.args  # x.argmax(): no dim, a 0-dim result
        return context.module.qualify(node.func) in self.functions and len(node.args) == 1


CAPTURE_KINDS = {"call": CallCheck, "tensor_condition": TensorConditionCheck, "mask_index": MaskIndexCheck,
                 "scalar_index": ScalarIndexCheck}


# --- module scope --------------------------------------------------------------------------------

def _scope_body(region: Region) -> List[ast.AST]:
    scope = region.function if region.function is not None else region.module.source.tree
    return scope.body if isinstance(scope.body, list) else [scope.body]


def _calls(nodes: List[ast.AST]) -> Iterator[ast.Call]:
    return (n for n in iter_executed(nodes) if isinstance(n, ast.Call))


def _receiver(call: ast.Call) -> str:
    return short(call.func.value, 200) if isinstance(call.func, ast.Attribute) else ""


def _inside(node: ast.AST, region: Region) -> bool:
    return bool(region.body) and region.body[0].lineno <= node.lineno <= region.end_line


class EnvSetCheck:
    """`os.environ[K] = V`, `os.environ.setdefault/update`, `os.putenv`, `monkeypatch.setenv` with a matching value."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.variables = {k: re.compile(v) for k, v in params["variables"].items()}

    def _value(self, name: Any, value: Optional[ast.AST]) -> bool:
        pattern = self.variables.get(name) if isinstance(name, str) else None
        return bool(pattern and isinstance(value, ast.Constant) and pattern.search(str(value.value)))

    def run(self, module: ModuleInfo, regions: List[Region], config: Dict[str, Any]) -> Iterator[Hit]:
        if not any(name in module.source.text for name in self.variables):
            return
        for node in ast.walk(module.source.tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (isinstance(target, ast.Subscript) and module.qualify(target.value) == "os.environ"
                            and isinstance(target.slice, ast.Constant) and self._value(target.slice.value, node.value)):
                        yield node, short(node), None
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = module.qualify(node.func) or ""
                pairs: List[Tuple[Any, Optional[ast.AST]]] = []
                if name in ("os.environ.setdefault", "os.putenv") or node.func.attr == "setenv":
                    if len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
                        pairs.append((node.args[0].value, node.args[1]))
                elif name == "os.environ.update":
                    for arg in node.args:
                        if isinstance(arg, ast.Dict):
                            pairs.extend((k.value, v) for k, v in zip(arg.keys, arg.values) if isinstance(k, ast.Constant))
                    pairs.extend((k.arg, k.value) for k in node.keywords if k.arg)
                if any(self._value(k, v) for k, v in pairs):
                    yield node, short(node), None


class CaptureStreamCheck:
    """`g.capture_begin()` outside any stream (or graph) context and with no set_stream before it."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.begin = set(params["begin_methods"])

    def run(self, module: ModuleInfo, regions: List[Region], config: Dict[str, Any]) -> Iterator[Hit]:
        if not any(name in module.source.text for name in self.begin):
            return
        contexts = set(config["streams"]["contexts"]) | set(config["regions"]["graph_contexts"]["names"])
        set_stream = set(config["streams"]["set_stream"])
        yield from self._visit(module, module.source.tree, False, module.source.tree, contexts, set_stream)

    def _visit(self, module, node, inside, scope, contexts, set_stream) -> Iterator[Hit]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, FUNCTION_NODES + (ast.Lambda, ast.ClassDef)):
                yield from self._visit(module, child, False, child, contexts, set_stream)
                continue
            child_inside = inside
            if isinstance(child, (ast.With, ast.AsyncWith)):
                child_inside = inside or any(
                    isinstance(i.context_expr, ast.Call) and module.qualify(i.context_expr.func) in contexts
                    for i in child.items)
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in self.begin
                    and not inside and not _is_super(child.func.value)
                    and not self._stream_set_before(module, scope, child, set_stream)):
                yield child, short(child), None
            yield from self._visit(module, child, child_inside, scope, contexts, set_stream)

    @staticmethod
    def _stream_set_before(module: ModuleInfo, scope: ast.AST, call: ast.Call, set_stream: Set[str]) -> bool:
        for node in ast.walk(scope):
            if isinstance(node, ast.Call) and node.lineno < call.lineno and module.qualify(node.func) in set_stream:
                return True
        return False


def _is_super(node: ast.AST) -> bool:
    """`super().capture_begin(...)`: a subclass forwarding the call, not a capture site of its own."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


NOT_CAPTURED_WORK = re.compile(r"^self\.(assert|fail|skip|log|debug|info|warn)")  # test and logging helpers


class WarmupCheck:
    """The user code a with/capture region calls, not called before the capture in the same function."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.accept = re.compile(params["accept_calls"])

    @staticmethod
    def _callee(module: ModuleInfo, call: ast.Call) -> Optional[str]:
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in BUILTIN_NAMES:
                return None
            name = module.qualify(func) or ""
            return None if name.split(".")[0] in ("torch", "torch_npu") else func.id
        text = dotted(func)
        if (text and (text.startswith("self.") or func.attr == "forward") and not is_module_path(module, func)
                and not NOT_CAPTURED_WORK.match(text)):
            return text
        return None

    def run(self, module: ModuleInfo, regions: List[Region], config: Dict[str, Any]) -> Iterator[Hit]:
        for region in regions:
            if region.kind not in ("graph", "capture") or region.module is not module:
                continue
            before = [c for c in _calls(_scope_body(region)) if c.lineno < region.line]
            texts = {dotted(c.func) for c in before}
            if any(t and self.accept.search(t) for t in texts):
                continue
            contexts = {id(i.context_expr) for n in iter_executed(region.body) if isinstance(n, (ast.With, ast.AsyncWith))
                        for i in n.items}  # `with switch_stream(s):` sets up, it is not the captured work
            for call in _calls(region.body):  # one finding per capture: the first call not warmed up
                if id(call) in contexts:
                    continue
                callee = self._callee(module, call)
                if callee and callee not in texts:
                    yield call, short(call), region
                    break


class CompiledOutputReuseCheck:
    """Outputs of a graph-compiled callable read after the next call of it (or kept in a loop)."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.clone = set(params.get("clone_methods") or [])

    def run(self, module: ModuleInfo, regions: List[Region], config: Dict[str, Any]) -> Iterator[Hit]:
        compiled = {r.node for r in regions if r.kind == "compiled" and r.module is module}
        if not compiled:
            return
        names: Set[str] = set()
        for node, _, cls in walk_scopes(module.source.tree):
            if isinstance(node, ast.Assign) and node.value in compiled:
                names.update(filter(None, (dotted(t) for t in node.targets)))
            elif isinstance(node, FUNCTION_NODES) and node in compiled:
                names.add(f"self.{node.name}" if cls else node.name)
        if not names:
            return
        scopes = [module.source.tree] + [n for n in ast.walk(module.source.tree) if isinstance(n, FUNCTION_NODES)]
        for scope in scopes:
            yield from self._scope(scope, names)

    def _compiled_call(self, node: Optional[ast.AST], names: Set[str]) -> Optional[str]:
        if isinstance(node, ast.Call) and dotted(node.func) in names:
            return dotted(node.func)
        return None

    def _scope(self, scope: ast.AST, names: Set[str]) -> Iterator[Hit]:
        events: List[Tuple[Tuple[int, int], str, Any]] = []
        body = list(iter_executed(scope.body))
        for node in body:
            if self._compiled_call(node, names):
                events.append(((node.lineno, node.col_offset), "call", dotted(node.func)))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                events.append(((node.lineno, node.col_offset), "load", node))
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = getattr(node, "value", None) if not isinstance(node, ast.For) else None
                func = self._compiled_call(value, names)
                end = (getattr(node, "end_lineno", node.lineno), 10 ** 6) if not isinstance(node, ast.For) else (
                    node.lineno, node.col_offset)
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            events.append((end, "bind" if func else "unbind", (name.id, func)))
        events.sort(key=lambda e: e[0])
        generation: Dict[str, int] = {}
        bound: Dict[str, Tuple[str, int]] = {}
        reported: Set[str] = set()
        for _, kind, data in events:
            if kind == "call":
                generation[data] = generation.get(data, 0) + 1
            elif kind == "bind":
                bound[data[0]] = (data[1], generation.get(data[1], 0))
            elif kind == "unbind":
                bound.pop(data[0], None)
            elif data.id in bound and data.id not in reported:
                func, gen = bound[data.id]
                if generation.get(func, 0) > gen:
                    reported.add(data.id)
                    yield data, data.id, None
        for loop in (n for n in body if isinstance(n, (ast.For, ast.While))):
            inside = list(iter_executed(loop.body))
            kept = {dotted(t) for n in inside if isinstance(n, ast.Assign) and self._compiled_call(n.value, names)
                    for t in n.targets} - {None}
            for node in inside:
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("append", "extend", "insert")):
                    for arg in node.args:
                        if dotted(arg) in kept and dotted(arg) not in reported:
                            reported.add(dotted(arg))
                            yield node, short(node), None


def _base_name(node: ast.AST) -> Optional[str]:
    """`static_y[0]`, `static_y.logits` → `static_y` (a bare reference, not a copy)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    name = dotted(node)
    return name


class StaticOutputKeptCheck:
    """A manual graph's static output kept in a container inside a replay loop, without a copy."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.replay = set(params["replay_methods"])
        self.keep = set(params["keep_methods"])

    def run(self, module: ModuleInfo, regions: List[Region], config: Dict[str, Any]) -> Iterator[Hit]:
        for region in regions:
            if region.kind not in ("graph", "capture") or region.module is not module:
                continue
            outputs: Set[str] = set()
            for node in iter_executed(region.body):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                            if dotted(part):
                                outputs.add(dotted(part))
            if not outputs:
                continue
            scopes = [region.function] if region.function is not None else [module.source.tree]
            if region.cls and any(o.startswith("self.") for o in outputs) and region.cls in module.classes:
                scopes = [n for n in module.classes[region.cls].body if isinstance(n, FUNCTION_NODES)]
            for scope in scopes:
                yield from self._loops(scope, region, outputs)

    def _loops(self, scope: ast.AST, region: Region, outputs: Set[str]) -> Iterator[Hit]:
        for loop in (n for n in iter_executed(scope.body) if isinstance(n, (ast.For, ast.While))):
            if _inside(loop, region) or loop.lineno <= region.line <= getattr(loop, "end_lineno", loop.lineno):
                continue
            inside = list(iter_executed(loop.body))
            if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in self.replay
                       and (not region.graph or _receiver(n) == region.graph) for n in inside):
                continue
            for node in inside:
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in self.keep
                        and any(_base_name(a) in outputs for a in node.args)):
                    yield node, short(node), region
                elif (isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) for t in node.targets)
                      and _base_name(node.value) in outputs and not isinstance(node.value, ast.Call)):
                    yield node, short(node), region


class EventCrossingCheck:
    """Inside a capture, a wait on an event recorded before the capture began."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.record = set(params["record_methods"])
        self.wait = set(params["wait_methods"])
        self.wait_event = set(params["wait_event_methods"])

    def run(self, module: ModuleInfo, regions: List[Region], config: Dict[str, Any]) -> Iterator[Hit]:
        for region in regions:
            if region.kind not in ("graph", "capture") or region.module is not module:
                continue
            scope = _scope_body(region)
            external = {dotted(t) for n in iter_executed(scope) if isinstance(n, ast.Assign)
                        and isinstance(n.value, ast.Call) and (dotted(n.value.func) or "").endswith("ExternalEvent")
                        for t in n.targets}
            before: Set[str] = set()
            for node in iter_executed(scope):
                if not isinstance(node, (ast.Call, ast.Assign)) or node.lineno >= region.line:
                    continue
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in self.record:
                    before.add(_receiver(node))
                elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(
                        node.value.func, ast.Attribute) and node.value.func.attr in self.record:
                    before.update(filter(None, (dotted(t) for t in node.targets)))
            before -= external
            if not before:
                continue
            recorded: Set[str] = set()
            for node in iter_executed(region.body):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                    continue
                attr = node.func.attr
                if attr in self.record:
                    recorded.add(_receiver(node))
                event = _receiver(node) if attr in self.wait else (
                    short(node.args[0], 200) if attr in self.wait_event and node.args else None)
                if event and event in before and event not in recorded:
                    yield node, short(node), region


class SideStreamCheck:
    """A side stream used inside a capture without the fork (it waits on the capture stream) or the join."""

    def __init__(self, params: Dict[str, Any]) -> None:
        self.require = params["require"]
        self.sync = set(params["sync_methods"])

    def run(self, module: ModuleInfo, regions: List[Region], config: Dict[str, Any]) -> Iterator[Hit]:
        contexts = set(config["streams"]["contexts"])
        for region in regions:
            if region.kind not in ("graph", "capture") or region.module is not module:
                continue
            nodes = list(iter_executed(region.body))
            calls = [n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
            for block in nodes:
                if not isinstance(block, (ast.With, ast.AsyncWith)):
                    continue
                for item in block.items:
                    call = item.context_expr
                    if not (isinstance(call, ast.Call) and module.qualify(call.func) in contexts and call.args):
                        continue
                    stream = short(call.args[0], 200)
                    if stream == region.stream or "current_stream" in stream or "default_stream" in stream:
                        continue
                    if self.require == "fork" and not self._forked(calls, block, stream):
                        yield block, f"with {short(call)}", region
                    elif self.require == "join" and self._forked(calls, block, stream) and not self._joined(
                            calls, block, stream):
                        yield block, f"with {short(call)}", region

    def _forked(self, calls: List[ast.Call], block: ast.AST, stream: str) -> bool:
        return any(c.lineno < block.lineno and c.func.attr in self.sync and _receiver(c) == stream for c in calls)

    def _joined(self, calls: List[ast.Call], block: ast.AST, stream: str) -> bool:
        end = getattr(block, "end_lineno", block.lineno)
        events = {_receiver(c) for c in calls if c.func.attr == "record" and (
            block.lineno <= c.lineno <= end or any(short(a, 200) == stream for a in c.args))}
        for call in calls:
            if call.lineno <= end:
                continue
            args = {short(a, 200) for a in call.args}
            if call.func.attr in self.sync and (stream in args or args & events):
                return True
            if call.func.attr == "wait" and _receiver(call) in events:
                return True
        return False


MODULE_KINDS = {"env_set": EnvSetCheck, "capture_stream": CaptureStreamCheck, "warmup": WarmupCheck,
                "compiled_output_reuse": CompiledOutputReuseCheck, "static_output_kept": StaticOutputKeptCheck,
                "event_crossing": EventCrossingCheck, "side_stream": SideStreamCheck}
