"""Hostile inputs built from real ones, and the public functions they are fed to.

Shared by `bench_hostile.py` (timing, many inputs) and `tests/test_hostile.py` (Hypothesis, a few
hundred inputs): both load this file by path, so the registry of targets is written once. A new
capability that takes text or files (lint, run bundles) joins by adding one `Target` to `TARGETS`.

Seeds are the real texts of `../shared/data`: the `error_text` of every case and the CANN plog /
device logs of `samples/plog`. Mutations are what users and agents really paste: junk characters,
cut and repeated spans, reversed text, long runs of brackets, lines joined into one, one very long
line without spaces (a minified JSON, a joined log).
"""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import random
import sys
from typing import Callable, Dict, List, Optional, Tuple

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from shared_data import find_shared_data  # noqa: E402

# Characters a broken paste carries: brackets, quotes, separators of the line layouts, control
# and wide characters, digits that look like codes.
JUNK = ("[](){}<>\"'`\\/|:;=,.-_*+?^$#@!%&~ \t\x00\x07\x1b\x7f\u00a0\u200b\u3000\ufeff\ud7ff"
        "０１２捕获重放图ÿ€0123456789xXeE")
BRACKETS = ("[", "(", "{", "[[", "((", "[(", "][", ")(", "[]", "()", "\\[", "<")


def load_seeds(shared: Optional[pathlib.Path] = None) -> List[Tuple[str, str]]:
    """(name, text) of every real input: case error texts and plog samples, in a fixed order."""
    import yaml

    shared = shared or find_shared_data()
    seeds: List[Tuple[str, str]] = []
    if shared is not None:
        for path in sorted((shared / "cases").glob("*.yaml")):
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle) or {}
            if isinstance(data, dict) and str(data.get("error_text") or "").strip():
                seeds.append((f"case:{path.stem}", str(data["error_text"])))
        for path in sorted((shared / "samples" / "plog").glob("*.log")):
            seeds.append((f"plog:{path.name}", path.read_text(encoding="utf-8", errors="replace")))
    if not seeds:  # without the shared data: the project's own examples (real texts too)
        for path in sorted((REPO / "examples").rglob("*")):
            if path.is_file() and path.suffix in (".txt", ".log"):
                seeds.append((f"example:{path.name}", path.read_text(encoding="utf-8", errors="replace")))
    return seeds


# --------------------------------------------------------------------------------------------
# Mutations: each takes (rng, text, size) and returns text of about `size` characters or less.
# --------------------------------------------------------------------------------------------

def _grow(text: str, size: int) -> str:
    """Repeat `text` until it has `size` characters."""
    if not text:
        return text
    return (text * (size // len(text) + 1))[:size]


def junk(rng: random.Random, text: str, size: int) -> str:
    text = _grow(text, size)
    chars = list(text)
    for _ in range(max(1, len(chars) // rng.choice((5, 20, 100)))):
        chars.insert(rng.randrange(len(chars) + 1), rng.choice(JUNK))
    return "".join(chars)[:size]


def cut(rng: random.Random, text: str, size: int) -> str:
    text = _grow(text, size)
    for _ in range(rng.randint(1, 8)):
        if len(text) < 4:
            break
        start = rng.randrange(len(text))
        text = text[:start] + text[start + rng.randint(1, max(1, len(text) // 4)):]
    return _grow(text, size)


def repeat(rng: random.Random, text: str, size: int) -> str:
    if not text:
        return text
    start = rng.randrange(len(text))
    span = text[start:start + rng.randint(1, 64)] or text[:1]
    where = rng.randrange(len(text) + 1)
    return (text[:where] + span * (size // len(span) + 1) + text[where:])[:size]


def reverse(rng: random.Random, text: str, size: int) -> str:
    return _grow(text, size)[::-1]


def brackets(rng: random.Random, text: str, size: int) -> str:
    text = _grow(text, size // 2)
    run = rng.choice(BRACKETS) * (size // 2)
    where = rng.randrange(len(text) + 1)
    return (text[:where] + run + text[where:])[:size]


def join_lines(rng: random.Random, text: str, size: int) -> str:
    return _grow(text.replace("\n", rng.choice(("", " ", "\\n", "\t", ";"))), size)


def no_spaces(rng: random.Random, text: str, size: int) -> str:
    """One long line without spaces: a minified JSON, a log joined by a tool."""
    return _grow("".join(text.split()), size)


def digits(rng: random.Random, text: str, size: int) -> str:
    """Numbers where codes, pids and line numbers go, far longer than any real one."""
    text = _grow(text, size // 2)
    run = rng.choice("0123456789") * rng.randint(10, size // 2 + 10)
    where = rng.randrange(len(text) + 1)
    return (text[:where] + run + text[where:])[:size]


def separators(rng: random.Random, text: str, size: int) -> str:
    """A long run of one layout's separator after a real line head (`[ERROR] RUNTIME(` + `,,,,`)."""
    head = text.splitlines()[0] if text.strip() else text
    cut_at = rng.randrange(len(head) + 1)
    return (head[:cut_at] + rng.choice(" :,.-_/=[]()\\\t\"'") * size)[:size]


MUTATIONS: Dict[str, Callable[[random.Random, str, int], str]] = {
    "junk": junk, "cut": cut, "repeat": repeat, "reverse": reverse, "brackets": brackets,
    "join": join_lines, "nospace": no_spaces, "digits": digits, "separators": separators,
}


def mutate(rng: random.Random, text: str, size: int) -> Tuple[str, str]:
    """(description, mutated text): one to three mutations in a row."""
    names = [rng.choice(list(MUTATIONS)) for _ in range(rng.choice((1, 1, 2, 3)))]
    for name in names:
        text = MUTATIONS[name](rng, text, size) or text
    return "+".join(names), text[:size]


def ordinary(seeds: List[Tuple[str, str]], size: int, rng: random.Random) -> str:
    """Real texts, unmutated, one after the other until `size` characters: the baseline input."""
    order = list(range(len(seeds)))
    rng.shuffle(order)
    parts: List[str] = []
    total = 0
    while total < size:
        for index in order:
            parts.append(seeds[index][1].rstrip("\n"))
            total += len(parts[-1]) + 1
            if total >= size:
                break
    return "\n".join(parts)[:size]


# --------------------------------------------------------------------------------------------
# Targets: the public functions that take text or files.
# --------------------------------------------------------------------------------------------

class Refused(Exception):
    """The function refused the input the documented way (UserError, an MCP ToolError)."""


@dataclasses.dataclass
class Target:
    name: str
    call: Callable[[str, str], Optional[dict]]  # (text, scratch folder) → the JSON contract, or raises
    max_chars: Optional[int] = None  # the function's own documented bound on its argument (MCP limits)
    needs: str = ""  # a module the target needs; skipped when it cannot be imported
    # The baseline's input of a given size, when real texts one after the other are not what this
    # function is given (an error code is a few characters, whatever the size of the paste).
    ordinary: Optional[Callable[[List[Tuple[str, str]], int, random.Random], str]] = None


def _contract(result) -> dict:
    """`to_dict()` must be JSON that survives a round trip unchanged."""
    data = result.to_dict() if hasattr(result, "to_dict") else result
    decoded = json.loads(json.dumps(data, ensure_ascii=False, allow_nan=False))
    if decoded != data:
        raise AssertionError("to_dict() does not round-trip through JSON")
    return decoded


VOLATILE_KEYS = frozenset({"seconds", "mb_per_s", "elapsed", "elapsed_s", "duration_s", "took_s"})


def stable(data):
    """The contract without what measures this run's speed (`totals.seconds`), for comparing two runs."""
    if isinstance(data, dict):
        return {k: stable(v) for k, v in data.items() if k not in VOLATILE_KEYS}
    if isinstance(data, list):
        return [stable(v) for v in data]
    return data


def _user_errors(call):
    def wrapped(text: str, scratch: str):
        from npu_graph_skill.core.errors import UserError

        try:
            return call(text, scratch)
        except UserError as exc:
            raise Refused(str(exc)) from None
    return wrapped


def _write(scratch: str, text: str, name: str = "input.log") -> str:
    path = os.path.join(scratch, name)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)
    return path


def _diagnose(text: str, scratch: str) -> dict:
    from npu_graph_skill import api

    return _contract(api.diagnose(text=text, lang="en"))


def _diagnose_file(text: str, scratch: str) -> dict:
    from npu_graph_skill import api

    return _contract(api.diagnose(paths=[_write(scratch, text)], lang="zh"))


def _analyze_logs(text: str, scratch: str) -> dict:
    from npu_graph_skill import api

    return _contract(api.analyze_logs([_write(scratch, text)], jobs=1))


def _lookup(text: str, scratch: str) -> dict:
    from npu_graph_skill import api

    return _contract(api.lookup_error_code(text))


def ordinary_code(seeds: List[Tuple[str, str]], size: int, rng: random.Random) -> str:
    """A code as printed in the real texts ("error code is 107030", "EE9999", "InnerCode=0x703001c"),
    in the whitespace a copy brings along, `size` characters in all."""
    import re

    found = sorted({m.group(0) for _, text in seeds for m in re.finditer(
        r"error code is \d+|ErrCode=\d+|InnerCode=0x[0-9a-f]+|\bE[A-Z]\d{4}\b|\bERR\d{5}\b", text)})
    code = rng.choice(found) if found else "107027"
    pad = max(0, size - len(code))
    return " " * (pad // 2) + code + "\n" * (pad - pad // 2)


def _route(text: str, scratch: str) -> dict:
    from npu_graph_skill import api

    return _contract(api.route_request(text))


def _ask(text: str, scratch: str) -> dict:
    from npu_graph_skill import api

    return _contract(api.ask(text, lang="en", kb_dir=scratch))


def _mcp_arguments(text: str, scratch: str) -> dict:
    """The MCP tools' own argument handling (without the transport): the text checks, path guards and
    the tools that answer in the server process."""
    from mcp.server.mcpserver.exceptions import ToolError

    from npu_graph_skill.mcp import server
    from npu_graph_skill.mcp.guard import ServerSettings

    if server._settings is None or server._settings.roots != [os.path.realpath(scratch)]:
        server.configure(ServerSettings.create(cwd=scratch, environ={}))
    out: dict = {}
    for name, step in (
            ("check_text", lambda: server._check_text(text, "text")),
            ("log_input", lambda: server._log_input(text, server.settings().roots)),
            ("text_input", lambda: server._text_input(text[:4096], server.settings().roots)),
            ("kb_dir", lambda: server._kb_dir(text[:4096], server.settings().roots)),
            ("lookup_error_code", lambda: server.lookup_error_code(text[:100])),
            ("route_request", lambda: server.route_request(text[:20000])),
    ):
        try:
            out[name] = _contract(step() or {})
        except ToolError as exc:
            if str(exc).startswith("internal error"):  # the server's shape for a crash of the capability
                raise AssertionError(f"{name}: {exc}") from None
            out[name] = {"refused": str(exc).splitlines()[0] if str(exc) else ""}
    return out


def _folder(scratch: str, name: str) -> str:
    folder = os.path.join(scratch, name)
    os.makedirs(folder, exist_ok=True)
    return folder


def ordinary_python(seeds: List[Tuple[str, str]], size: int, rng: random.Random) -> str:
    """Real Python of `size` characters (this package's own modules, whole lines), what lint is given."""
    files = sorted((REPO / "src" / "npu_graph_skill").rglob("*.py"))
    start = rng.randrange(len(files))
    lines: List[str] = []
    total = 0
    for path in files[start:] + files[:start]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if total + len(line) + 1 > size:
                return "\n".join(lines)
            lines.append(line)
            total += len(line) + 1
    return "\n".join(lines)


def _lint(text: str, scratch: str) -> dict:
    """The text as a Python file under `npu-graph lint`."""
    from npu_graph_skill import api

    folder = _folder(scratch, "lint")
    return _contract(api.lint([_write(folder, text, "input.py")], within=[folder], lang="en"))


RUN_MANIFEST = {"schema": "npu-graph-skill/run/1", "switches": [{"name": "TORCH_NPU_LOGS", "value": "+aclgraph", "action": "set"}]}


def _bundle(text: str, scratch: str, manifest: Optional[str] = None) -> dict:
    """A folder of `npu-graph run`: the text as its output (and as a plog), read back by diagnose_bundle."""
    from npu_graph_skill import api

    folder = _folder(scratch, "bundle")
    _write(folder, manifest if manifest is not None else json.dumps(RUN_MANIFEST), "run.json")
    _write(folder, text, "output.log")
    _write(_folder(folder, "ascend_log"), text, "plog-1_1.log")
    return _contract(api.diagnose_bundle(folder, lang="en"))


def ordinary_manifest(seeds: List[Tuple[str, str]], size: int, rng: random.Random) -> str:
    """A real manifest of `size` characters: the command line it records holds real text."""
    return json.dumps(dict(RUN_MANIFEST, command=ordinary(seeds, max(16, size - 110), rng)))


def _bundle_manifest(text: str, scratch: str) -> dict:
    """The text as the bundle's run.json (a hand-edited or truncated manifest)."""
    return _bundle("RuntimeError: capture failed", scratch, manifest=text)


TARGETS: List[Target] = [
    Target("diagnose", _user_errors(_diagnose)),
    Target("diagnose_file", _user_errors(_diagnose_file)),
    Target("analyze_logs", _user_errors(_analyze_logs)),
    Target("lookup_error_code", _user_errors(_lookup), max_chars=100, ordinary=ordinary_code),
    Target("route", _user_errors(_route)),
    Target("ask", _user_errors(_ask)),
    Target("mcp_arguments", _user_errors(_mcp_arguments), needs="mcp"),
    Target("lint", _user_errors(_lint), needs="npu_graph_skill.lint", ordinary=ordinary_python),
    Target("diagnose_bundle", _user_errors(_bundle), needs="npu_graph_skill.run"),
    Target("bundle_manifest", _user_errors(_bundle_manifest), needs="npu_graph_skill.run", ordinary=ordinary_manifest),
]


def available_targets(names: Optional[List[str]] = None) -> List[Target]:
    import importlib.util

    chosen = [t for t in TARGETS if not names or t.name in names]
    return [t for t in chosen if not t.needs or importlib.util.find_spec(t.needs) is not None]


# --------------------------------------------------------------------------------------------
# Every regex the code and the knowledge data hold (for the regex audit).
# --------------------------------------------------------------------------------------------

def _patterns_in(value, depth: int = 0):
    import re

    if isinstance(value, re.Pattern):
        yield value
    elif depth < 2 and isinstance(value, dict):
        for item in value.values():
            yield from _patterns_in(item, depth + 1)
    elif depth < 2 and isinstance(value, (list, tuple)):
        for item in value:
            yield from _patterns_in(item, depth + 1)


BYTES = 1 << 30  # a flag of ours: the regex is a bytes pattern (never a flag of re's)


def compile_audited(pattern: str, flags: int):
    """The regex as the code holds it: bytes patterns compiled as bytes."""
    import re

    if flags & BYTES:
        return re.compile(pattern.encode("latin-1"), flags & ~BYTES)
    return re.compile(pattern, flags)


def code_regexes() -> List[Tuple[str, str, int]]:
    """(where, pattern, flags) of every compiled regex held at module level in the package; a bytes
    regex (the log scanner's) comes as its Latin-1 text with `BYTES` added to its flags."""
    import importlib
    import pkgutil
    import re

    import npu_graph_skill

    found: Dict[Tuple[str, int], str] = {}
    for info in pkgutil.walk_packages(npu_graph_skill.__path__, "npu_graph_skill."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - optional extras (mcp, matplotlib) may be missing
            continue
        for attr, value in sorted(vars(module).items()):
            if getattr(value, "__module__", info.name) != info.name and not isinstance(value, (dict, list, tuple)) \
                    and type(value).__name__ != "Pattern":
                continue
            for pattern in _patterns_in(value):
                text, flags = pattern.pattern, pattern.flags
                if isinstance(text, bytes):
                    text, flags = text.decode("latin-1"), flags | BYTES | re.ASCII
                found.setdefault((text, flags), f"{info.name}.{attr}")
    return [(where, pattern, flags) for (pattern, flags), where in sorted(found.items(), key=lambda kv: kv[1])]


def knowledge_regexes() -> List[Tuple[str, str, int]]:
    """(where, pattern, flags) of every matcher, message and routing regex in the shipped data."""
    import re

    from npu_graph_skill.knowledge.loader import build_knowledge
    from npu_graph_skill.skill.routing import load_table

    knowledge = build_knowledge(strict=True)
    out: List[Tuple[str, str, int]] = []
    for pattern in knowledge.patterns:
        for matcher in pattern.matchers:
            if matcher.regex:
                out.append((f"{pattern.id} {matcher.type}", matcher.regex, re.IGNORECASE))
    for message in knowledge.messages:
        out.append((f"messages.csv {message.id}", message.regex, re.IGNORECASE))
    table = load_table()
    signals = [(name, signal) for name, skill in table.skills.items() for signal in skill.signals]
    signals += [("domain", s) for s in getattr(table, "domain", [])] + [("refers_back", s) for s in getattr(table, "refers_back", [])]
    for name, signal in signals:
        out.append((f"routing {name} {signal.text}", signal.pattern.pattern, signal.pattern.flags))
    for sign in getattr(knowledge, "signs", []):  # context signs
        for key in ("regex", "function_regex", "file"):
            if getattr(sign, key, ""):
                out.append((f"context_signs.yaml {sign.id} {key}", getattr(sign, key), re.IGNORECASE))
    return out


# --------------------------------------------------------------------------------------------
# The regex audit: each regex against strings built to make it backtrack.
# --------------------------------------------------------------------------------------------

_RUN_CHARS = " :.,-_/\\[](){}\"'=0aA\t"


def _fragments(pattern: str, flags: int) -> List[str]:
    """Literal runs of the regex (its own prefixes and separators), longest first."""
    from npu_graph_skill.knowledge.regex_safety import _literal_runs

    runs = sorted(set(_literal_runs(pattern, flags)), key=lambda r: (-len(r), r))
    return [""] + runs[:3]


def attack_strings(pattern: str, flags: int, size: int) -> List[Tuple[str, str]]:
    """(label, text): runs of one character or two, after each literal run of the regex."""
    from npu_graph_skill.knowledge.regex_safety import _class_chars

    chars = sorted(set(_RUN_CHARS) | set(_class_chars(pattern, flags)))[:40]
    out: List[Tuple[str, str]] = []
    for fragment in _fragments(pattern, flags):
        for char in chars:
            out.append((f"{fragment!r}+{char!r}*", (fragment + char * size)[:size]))
        for a, b in ((":", "a"), ("0", "."), (" ", "a"), ("a", "_"), ("(", ")"), ("0", ",")):
            out.append((f"{fragment!r}+({a}{b})*", (fragment + (a + b) * size)[:size]))
        if fragment:
            out.append((f"({fragment!r})*", (fragment * (size // len(fragment) + 1))[:size]))
            out.append((f"({fragment!r}+' ')*", ((fragment + " ") * (size // (len(fragment) + 1) + 1))[:size]))
    return out


def time_regex(compiled, text: str) -> float:
    import time

    if isinstance(compiled.pattern, bytes):
        text = text.encode("latin-1", "replace")  # type: ignore[assignment]
    start = time.perf_counter()
    for _ in compiled.finditer(text):
        pass
    return time.perf_counter() - start


def audit_regex(pattern: str, flags: int, small: int = 1000, large: int = 4000) -> Tuple[float, float, str]:
    """(seconds on the worst large input, growth of its time from small to large, its label).

    Every attack string is timed once at the large size; the three slowest are then timed again at
    both sizes, interleaved, best of five, so a busy machine does not pass for a quadratic regex."""
    compiled = compile_audited(pattern, flags)
    flags &= ~BYTES
    pairs = list(zip(attack_strings(pattern, flags, small), attack_strings(pattern, flags, large)))
    first = sorted(((time_regex(compiled, long), index) for index, (_, (_, long)) in enumerate(pairs)), reverse=True)
    worst = (0.0, 0.0, "")
    for _, index in first[:3]:
        (label, short), (_, long) = pairs[index]
        shorts, longs = [], []
        for _ in range(5):
            shorts.append(time_regex(compiled, short))
            longs.append(time_regex(compiled, long))
        seconds = min(longs)
        worst = max(worst, (seconds, seconds / max(min(shorts), 1e-7), label))
    return worst
