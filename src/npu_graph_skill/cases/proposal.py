"""A novel case becomes a pattern proposal: a stub in the knowledge pattern format
(`knowledge/patterns/<phase>.yaml`: id, phase, layers, bilingual texts, weighted matchers,
anchors, examples) with the matchers derived from the case's evidence, ready to be reviewed,
completed and promoted into the shipped knowledge.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from npu_graph_skill.cases.case import Case
from npu_graph_skill.cases.signature import message_regex

FAMILIES = {"capture": "CAP", "replay": "REP", "memory": "MEM", "update": "UPD", "compile": "CMP",
            "environment": "ENV", "unknown": "UNK"}
# Weights on the scale of knowledge/patterns/capture.yaml (runtime message 0.5-0.7, code 0.3-0.45, API/frame 0.1-0.2).
WEIGHTS = {"message": 0.6, "code": 0.35, "api": 0.15, "frame": 0.1}
TODO = {"en": "TODO (English)", "zh": "TODO（中文）"}

_API_RE = re.compile(r"\b(?:acl[a-z]*[A-Z]\w*|Aclrt[A-Z]\w*|rt[A-Z][A-Za-z]+|[Hh]ccl[A-Z]\w*)\b")
_PY_FRAME_RE = re.compile(r'File "[^"]*", line \d+, in (\S+)')
_ANCHOR_RE = re.compile(r"^(?:(?P<repo>[\w.-]+/[\w.-]+)\s+)?(?P<path>\S+?):(?P<line>\d+(?:-\d+)?)(?:@(?P<version>\S+))?")


def proposal_id(case: Case) -> str:
    return f"P-{FAMILIES.get(case.phase, 'UNK')}-NEW-{case.id.rsplit('-', 1)[-1]}"


def build_proposal(case: Case, stub: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The pattern stub (one entry of a patterns file). `stub`: the diagnosis's own `pattern_stub`,
    whose fields are kept where this derivation has nothing better."""
    lang = "zh" if case.lang == "zh" else "en"
    pattern: Dict[str, Any] = {
        "id": proposal_id(case),
        "phase": case.phase,
        "layer": case.layer.get("detected") or "L1",
        "root_layer": case.layer.get("root") or case.layer.get("detected") or "L1",
        "fix_in": case.fix_in or "user_code",
        "title": _texts(case.title, lang),
        "root_cause": _texts(case.root_cause.get("direct", ""), lang),
        "trigger": _texts(case.root_cause.get("trigger", ""), lang),
        "scope": _texts(case.root_cause.get("scope", ""), lang),
        "fix_short": _texts(_joined(case.fix.get("short_term")), lang),
        "fix_long": _texts(_joined(case.fix.get("long_term")), lang),
        "fix_locations": [str(x) for x in case.fix.get("locations") or []] or ([case.location()] if case.location() else []),
        "verification": {lang: list(case.verification.get("steps") or []) or [TODO[lang]],
                         ("en" if lang == "zh" else "zh"): [TODO["en" if lang == "zh" else "zh"]]},
        "matchers": derive_matchers(case),
        "anchors": [a for a in (_anchor(x) for x in case.anchors) if a],
        "references": [],
        "examples": [{"text": case.error or next(iter(case.symptom.splitlines()), ""), "source": f"npu-graph kb case {case.id}"}],
    }
    if not pattern["anchors"]:  # the knowledge schema wants a source: anchors or references
        pattern["references"] = [{"title": f"recorded case {case.id}", "url": "TODO: a public issue, PR or doc page"}]
    if isinstance(stub, dict):
        for key, value in stub.items():
            if key == "id":
                continue
            if key == "matchers" and isinstance(value, list):
                seen = {_matcher_key(m) for m in pattern["matchers"]}
                pattern["matchers"] += [m for m in value if isinstance(m, dict) and _matcher_key(m) not in seen]
            elif key not in pattern or _is_empty(pattern[key]):
                pattern[key] = value
    return pattern


def derive_matchers(case: Case) -> List[Dict[str, Any]]:
    matchers: List[Dict[str, Any]] = []
    message = case.error or next((line for line in case.symptom.splitlines() if line.strip()), "")
    if message:
        matchers.append({"type": "message", "regex": message_regex(message, case.codes), "weight": WEIGHTS["message"]})
    for code in case.codes[:4]:
        matchers.append({"type": "code", "code": code, "weight": WEIGHTS["code"]})
    text = "\n".join([case.error, case.symptom])
    for api in list(dict.fromkeys(_API_RE.findall(text)))[:3]:
        matchers.append({"type": "api", "name": api, "weight": WEIGHTS["api"]})
    frames = [f for f in _PY_FRAME_RE.findall(case.symptom) if not f.startswith("<")]
    function = str(case.layer.get("function") or "").split("::")[-1]
    for frame in list(dict.fromkeys(([function] if function else []) + frames[::-1]))[:2]:
        matchers.append({"type": "frame", "regex": re.escape(frame), "weight": WEIGHTS["frame"]})
    return matchers


def promote_steps(case: Case, path: str) -> List[Dict[str, str]]:
    """How to turn the proposal into a shipped pattern, in both languages."""
    family = FAMILIES.get(case.phase, "UNK")
    target = f"src/npu_graph_skill/knowledge/patterns/{case.phase}.yaml"
    return [
        {"en": f"review {path}: fill the TODO texts in English and Chinese, check the matchers and their weights",
         "zh": f"检查 {path}：补全中英文 TODO 文本，核对匹配器及权重"},
        {"en": f"copy the entry into {target} with the next free id (P-{family}-NNN)",
         "zh": f"把该条目复制到 {target}，改用下一个空闲编号（P-{family}-NNN）"},
        {"en": "add a real example it must match (a shared case id or a messages.csv entry) under `examples`",
         "zh": "在 `examples` 下补一个它必须命中的真实样例（共享案例 id 或 messages.csv 条目）"},
        {"en": "run the knowledge test: pytest tests -q -k \"knowledge or pattern\"",
         "zh": "运行知识库测试：pytest tests -q -k \"knowledge or pattern\""},
    ]


def proposal_header(case: Case) -> str:
    return (f"# Pattern proposal from case {case.id}, written by `npu-graph kb record`. It is not used by the diagnosis\n"
            f"# until promoted: fill the TODOs, copy it into knowledge/patterns/{case.phase}.yaml with a real id,\n"
            f"# add an example, run the knowledge test. 由案例 {case.id} 生成的新模式草稿：补全后并入 patterns 才生效。\n")


def _texts(value: str, lang: str) -> Dict[str, str]:
    other = "en" if lang == "zh" else "zh"
    return {"en": value or TODO["en"], "zh": TODO["zh"]} if lang == "en" else {"en": TODO[other], "zh": value or TODO["zh"]}


def _joined(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value or "")


def _anchor(text: str) -> Optional[Dict[str, str]]:
    """`Ascend/pytorch path:270-274@master` → the knowledge anchor; None unless all four parts are known."""
    found = _ANCHOR_RE.match(text.strip())
    if not found or not found.group("repo") or not found.group("version"):
        return None
    return {"repo": found.group("repo"), "path": found.group("path"), "line": found.group("line"),
            "version": found.group("version")}


def _matcher_key(matcher: Dict[str, Any]) -> tuple:
    return (matcher.get("type"), matcher.get("regex") or matcher.get("code") or matcher.get("name"))


def _is_empty(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_is_empty(v) or v in TODO.values() for v in value.values())
    return value in (None, "", [], {})
