"""How often `npu-graph ask` puts a right answer first, on questions held out from tuning.

The questions in tests/test_ask.py shaped the ranking (field weights, intent priors, synonyms), so
their pass rate says little about unseen questions. These were written afterwards, from what users
ask about graph mode, and were not used to change the ranking. Each lists every entry that answers
it (a note, a pattern, a code or a constraint); the first answer must be one of them.

    python benchmarks/eval_ask.py            # top-1 / top-3 accuracy, then the misses
    python benchmarks/eval_ask.py --tests    # the same on the tuned test questions, for comparison
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

HELD_OUT = [
    ("how is the capture stream chosen when I use torch.npu.graph without stream=",
     {"lifecycle", "capture-constraints", "multi-stream-capture", "C-02"}),
    ("what is graph_pool_handle", {"memory-pool", "C-10"}),
    ("how do I share memory between the forward and backward graphs", {"make-graphed-callables", "memory-pool", "C-10"}),
    ("为什么第二次 replay 的输出把第一次的覆盖了", {"P-MEM-001", "C-09", "replay"}),
    ("how do I register my own op for graph update", {"update-mechanism"}),
    ("npugraph_ex 的 capture_limit 是什么", {"compile-backends", "P-CMP-005"}),
    ("why is my memory growing with every captured batch size", {"P-MEM-003", "memory-pool"}),
    ("捕获时报 107025 是什么原因", {"107025", "P-CAP-008"}),
    ("how do I see which ACL calls torch_npu makes", {"logging-switches"}),
    ("是不是只能捕获 aclnn 算子", {"during-capture", "C-07", "P-CAP-005"}),
    ("what does torch.npu.graph do on __enter__", {"lifecycle"}),
    ("can I call torch.npu.synchronize inside the graph context", {"capture-constraints", "C-01", "P-CAP-001", "during-capture"}),
    ("图捕获完以后能在默认流上重放吗", {"replay", "C-02", "capture-constraints"}),
    ("what is auto_dispatch_capture", {"update-mechanism"}),
    ("How many graphs does the graph tree record for dynamic shapes", {"graph-tree", "P-CMP-005"}),
    ("507015 是什么错误", {"507015"}),
    ("how do I release the memory of a graph I no longer need", {"reset-teardown"}),
    ("ExternalStream 能用来捕获吗", {"P-CAP-004", "multi-stream-capture", "capture-begin"}),
    ("which environment variable breaks capture_begin", {"C-08", "environment-variables", "capture-begin", "P-ENV-004", "P-ENV-005"}),
    ("how to get C++ stack traces for a torch_npu error", {"error-surface"}),
]


def evaluate(questions):
    from npu_graph_skill.expert.ask import ask

    top1 = top3 = 0
    misses = []
    for question, right in questions:
        ids = [a.id for a in ask(question, lang="en", limit=3).answers]
        top1 += bool(ids) and ids[0] in right
        top3 += bool(set(ids) & right)
        if not ids or ids[0] not in right:
            misses.append((question, ids, sorted(right)))
    return top1, top3, misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", action="store_true", help="evaluate the (tuned) questions of tests/test_ask.py")
    args = parser.parse_args()
    if args.tests:
        from test_ask import CONCEPT_QUESTIONS

        questions = [(q, set(e) if isinstance(e, tuple) else {e}) for q, e in CONCEPT_QUESTIONS]
    else:
        questions = HELD_OUT
    top1, top3, misses = evaluate(questions)
    n = len(questions)
    print(f"{'tuned test' if args.tests else 'held-out'} questions: {n}   top-1 {top1}/{n} = {top1 / n:.0%}   "
          f"top-3 {top3}/{n} = {top3 / n:.0%}")
    for question, ids, right in misses:
        print(f"  miss: {question!r}\n        got {ids}, a right answer is one of {right}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
