"""The same report as another user would paste it: wrapped by a terminal, with other prefixes,
other numbers, colours, prose around it, cut short, with CRLF line ends.

Each perturbation is deterministic for a case (seeded by its id). `stability` diagnoses every
variant and counts how often the phase and the top pattern stay those of the original paste.
"""
from __future__ import annotations

import hashlib
import random
import re
import textwrap
from typing import Any, Callable, Dict, List

PREFIX_RE = re.compile(r"^(?:\((?:Worker|EngineCore|VllmWorker|APIServer)[^)]*\)\s*(?:(?:ERROR|INFO|WARNING|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\[[^\]]*\]\s*)?"
                       r"|\[rank\d+\]:\s*)")
# Neutral words around the paste: they add no claim about the failure (a "works in eager" would).
PROSE = {
    "zh": ("运行的时候遇到下面的报错，麻烦大家帮忙看一下：\n```\n", "\n```\n谢谢！"),
    "en": ("Hi all, I got the output below when running my job. Can anyone help?\n```\n", "\n```\nThanks in advance."),
}


def _rng(case_id: str, kind: str) -> random.Random:
    return random.Random(int(hashlib.sha256(f"{case_id}/{kind}".encode()).hexdigest()[:12], 16))


def wrap_terminal(text: str, rng: random.Random) -> str:
    """Hard wrap at a terminal width of 60-100 columns, cutting words as a terminal does."""
    width = rng.randint(60, 100)
    out = []
    for line in text.split("\n"):
        out.extend(line[i:i + width] for i in range(0, max(len(line), 1), width))
    return "\n".join(out)


def wrap_words(text: str, rng: random.Random) -> str:
    """Wrap at word boundaries (an issue form or a mail client) at 60-100 columns."""
    width = rng.randint(60, 100)
    out = []
    for line in text.split("\n"):
        out.extend(textwrap.wrap(line, width=width, break_long_words=False, break_on_hyphens=False,
                                 drop_whitespace=True) or [""])
    return "\n".join(out)


def prefixes(text: str, rng: random.Random) -> str:
    """Strip worker/rank prefixes where there are some; add a vLLM worker prefix where there are none."""
    lines = text.split("\n")
    if sum(bool(PREFIX_RE.match(line)) for line in lines) > len(lines) // 4:
        return "\n".join(PREFIX_RE.sub("", line, count=1) for line in lines)
    pid = rng.randint(1000, 99999)
    stamp = f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    prefix = f"(Worker_TP{rng.randint(0, 7)} pid={pid}) ERROR {stamp} [multiproc_executor.py:{rng.randint(100, 999)}] "
    return "\n".join(prefix + line for line in lines)


_RENUMBER = (
    (re.compile(r"(pid[= ]|PID:\s?|pid=)(\d+)"), lambda m, r: m.group(1) + str(r.randint(1000, 999999))),
    (re.compile(r"(line )(\d+)"), lambda m, r: m.group(1) + str(r.randint(10, 5000))),
    (re.compile(r"\b0x[0-9a-fA-F]{8,16}\b"), lambda m, r: "0x%x" % r.getrandbits(44)),
    (re.compile(r"/(?:home|Users)/[\w.-]+"), lambda m, r: "/home/" + r.choice(["alice", "ma_wei", "dev01", "zhangsan"])),
    (re.compile(r"\b(\d\d):(\d\d):(\d\d)\b"), lambda m, r: f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"),
    (re.compile(r"(python3\.)(\d+)"), lambda m, r: m.group(1) + r.choice(["9", "10", "11", "12"])),
    (re.compile(r"(Device:? ?|device_id=|deviceId=)(\d+)"), lambda m, r: m.group(1) + str(r.randint(0, 15))),
)


def renumber(text: str, rng: random.Random) -> str:
    """Other pids, line numbers, addresses, user paths, times, Python versions and device ids."""
    for regex, make in _RENUMBER:
        text = regex.sub(lambda m: make(m, rng), text)
    return text


def ansi(text: str, rng: random.Random) -> str:
    """Terminal colours on level words and on some whole lines."""
    text = re.sub(r"\b(ERROR|WARNING|Error|Traceback)\b", lambda m: f"\x1b[1;31m{m.group(1)}\x1b[0m", text)
    lines = text.split("\n")
    return "\n".join(f"\x1b[{rng.choice([32, 33, 36])}m{line}\x1b[0m" if rng.random() < 0.3 else line for line in lines)


def prose(text: str, rng: random.Random) -> str:
    before, after = PROSE[rng.choice(["zh", "en"])]
    return before + text + after


def cut(text: str, rng: random.Random, keep: str = "") -> str:
    """Drop up to a fifth of the lines at the head or the tail, never the decisive line `keep`."""
    lines = text.split("\n")
    if len(lines) < 6:
        return text
    drop = max(1, int(len(lines) * rng.uniform(0.05, 0.2)))
    keep_at = next((i for i, line in enumerate(lines) if keep and keep[:60] in line), None)
    if rng.random() < 0.5:
        drop = min(drop, keep_at) if keep_at is not None else drop
        return "\n".join(lines[drop:])
    if keep_at is not None:
        drop = min(drop, len(lines) - keep_at - 1)
    return "\n".join(lines[:len(lines) - drop] if drop else lines)


def crlf(text: str, rng: random.Random) -> str:
    return text.replace("\n", "\r\n")


PERTURBATIONS: Dict[str, Callable[..., str]] = {
    "wrap_terminal": wrap_terminal, "wrap_words": wrap_words, "prefixes": prefixes, "renumber": renumber,
    "ansi": ansi, "prose": prose, "cut": cut, "crlf": crlf,
}


def variants(case_id: str, text: str, decisive_line: str = "") -> Dict[str, str]:
    out = {}
    for kind, perturb in PERTURBATIONS.items():
        rng = _rng(case_id, kind)
        out[kind] = perturb(text, rng, decisive_line) if kind == "cut" else perturb(text, rng)
    return out


def stability(cases: List[Dict[str, Any]], rows: List[Dict[str, Any]], expected: Dict[str, List[str]]) -> Dict[str, Any]:
    """Share of perturbed variants whose phase and top pattern equal those of the original paste."""
    from npu_graph_skill.diagnose.engine import diagnose
    from npu_graph_skill.diagnose.reference import held_out

    kept_phase = kept_top = kept_both = total = 0
    by_kind: Dict[str, List[int]] = {}
    changed: List[str] = []
    for case, row in zip(cases, rows):
        with held_out([case["id"]]):  # as the eval judges it: a dev report does not find itself
            original = diagnose(text=case["error_text"], lang="en")
            versions = variants(case["id"], case["error_text"], original.error)
            reports = {kind: diagnose(text=text, lang="en") for kind, text in versions.items()}
        top = next((c.id for c in original.candidates if c.kind == "pattern"), None)
        for kind, report in reports.items():
            got_top = next((c.id for c in report.candidates if c.kind == "pattern"), None)
            phase_same, top_same = report.phase == original.phase, got_top == top
            total += 1
            kept_phase += phase_same
            kept_top += top_same
            kept_both += phase_same and top_same
            by_kind.setdefault(kind, []).append(int(phase_same and top_same))
            if not (phase_same and top_same):
                changed.append(f"{case['id']} {kind}: {original.phase}/{top} → {report.phase}/{got_top}")
    return {
        "cases": len(cases), "variants": total,
        "stability": round(kept_both / (total or 1), 3),
        "phase_kept": round(kept_phase / (total or 1), 3), "top_kept": round(kept_top / (total or 1), 3),
        "by_kind": {k: round(sum(v) / len(v), 3) for k, v in by_kind.items()},
        "changed": changed,
    }
