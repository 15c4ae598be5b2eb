"""A small, self-contained knowledge set in the shapes the knowledge loader returns (pattern YAML
entries, code rows, constraints, concept notes), so the skill tests do not depend on the state of
the shipped knowledge data. Facts are real (torch_npu master@9e73e708), trimmed."""
from __future__ import annotations

from npu_graph_skill.skill.bundle import KnowledgeSources, render_bundle

ANCHOR = {"repo": "Ascend/pytorch", "path": "torch_npu/csrc/core/npu/NPUGraph.cpp", "line": "270-274",
          "version": "master@9e73e708", "note": "non-default stream check"}

PATTERNS = [
    {
        "id": "P-CAP-003", "phase": "capture", "layer": "L2", "root_layer": "L1", "fix_in": "user_code",
        "title": {"en": "Capture started on the default stream", "zh": "在默认流上开始捕获"},
        "root_cause": {"en": "capture_begin ran while the current stream was the default stream.",
                       "zh": "capture_begin 执行时当前流是默认流。"},
        "fix_short": {"en": "Capture inside `with torch.npu.stream(side_stream):`.", "zh": "在 `with torch.npu.stream(side_stream):` 中捕获。"},
        "fix_long": {"en": "Use torch.npu.graph(g), which picks a side stream.", "zh": "使用 torch.npu.graph(g)，它自带旁路流。"},
        "fix_locations": ["the capture_begin call in your script"],
        "verification": {"en": ["Capture and replay succeed."], "zh": ["捕获与重放都成功。"]},
        "matchers": [
            {"type": "message", "regex": "NPU graphs must be captured on a non-default stream", "weight": 1.0},
            {"type": "api", "name": "capture_begin", "weight": 0.1},
            {"type": "message", "regex": "ExternalStream", "weight": -0.3},
        ],
        "anchors": [ANCHOR],
        "references": [{"title": "torch_npu facts (a.3)", "url": "shared/reference/torch_npu_graph_facts.md"}],
        "examples": [{"case": "seed-default-stream"}],
    },
    {
        "id": "P-REP-001", "phase": "replay", "layer": "L4", "root_layer": "L4", "fix_in": "cann_driver",
        "title": {"en": "Replay failed after an earlier device fault", "zh": "更早的设备故障之后重放失败"},
        "root_cause": {"en": "507011 follows a device fault.", "zh": "507011 跟在设备故障之后。"},
        "fix_short": {"en": "Find the first error.", "zh": "找到第一条错误。"},
        "fix_long": {"en": "Fix the first fault.", "zh": "修复第一个故障。"},
        "verification": {"en": ["Rerun; no 507011."], "zh": ["重跑，不再出现 507011。"]},
        "matchers": [{"type": "code", "code": "507011", "weight": 0.4}],
        "anchors": [],
        "references": [],
        "examples": [],
    },
]

CODES = [
    {"code": "507011", "kind": "runtime", "name": "ACL_ERROR_RT_MODEL_EXECUTE", "meaning": "model execute failed",
     "graph_mode": "Replay failed; usually after an earlier device fault.", "source": "rt_error_codes.h:91 ; other"},
    {"code": "EE1009", "kind": "ecode", "name": "", "meaning": "Failed to execute model",
     "graph_mode": "Host side of a failed replay.", "source": "CANN docs"},
    {"code": "100001", "kind": "acl", "name": "ACL_ERROR_UNINITIALIZE", "meaning": "not initialised", "graph_mode": "",
     "source": "acl_base.h:69"},
]

CONSTRAINTS = [
    {"id": "C-STREAM", "title": {"en": "Capture on a side stream", "zh": "在旁路流上捕获"},
     "rule": {"en": "capture_begin refuses the default stream.", "zh": "capture_begin 拒绝默认流。"},
     "brief_claim": {"zh": "捕获与重放须在同一 Stream", "en": "capture and replay must share a stream"},
     "truth": {"en": "Only capture_end must be on the begin stream; replay may use any stream.",
               "zh": "只有 capture_end 必须与 capture_begin 同流；重放可以在任意流。"},
     "anchors": [ANCHOR], "patterns": ["P-CAP-003"]},
]

CONCEPTS = [
    {"id": "replay", "title": {"zh": "重放", "en": "Replay"}, "summary": {"zh": "重放在当前流上执行。", "en": "Replay runs on the current stream."},
     "anchors": [ANCHOR], "body": {"zh": "中文正文。", "en": "English body."}, "references": []},
]


def fake_sources() -> KnowledgeSources:
    return KnowledgeSources(patterns=PATTERNS, codes=CODES, constraints=CONSTRAINTS, concepts=CONCEPTS)


def fake_bundle():
    return render_bundle(fake_sources())
