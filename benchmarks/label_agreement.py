#!/usr/bin/env python3
"""How often two labellers agree on the corpus' labels: the ceiling any diagnosis can be judged against.

    python benchmarks/label_agreement.py [--second benchmarks/corpus_second_labels.yaml]

The second labels (`corpus_second_labels.yaml`) were given blind to 80 reports of batches 4 to 7
and 40 of batches 9 to 11, each drawn by a hash of the id, to the 20 of batch 12, to 19 of 20
drawn from batch 13, and to 20 of batch 16 and 10 of batch 17, drawn the same way (Performance
reports left out): the second labeller saw what the user
pasted and what the thread concluded (the first labeller's root_cause, fix and evidence), not the
first labels, and did not run the tool. Printed: agreement on phase and root-cause layer, the
overlap of expected patterns where both named one, agreement by the second labeller's certainty,
and the phase pairs they disagree on.
"""
from __future__ import annotations

import argparse
import collections
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
CORPUS = REPO / "benchmarks" / "corpus"
SECOND = REPO / "benchmarks" / "corpus_second_labels.yaml"


def agreement(second_path: pathlib.Path = SECOND, corpus_dir: pathlib.Path = CORPUS) -> dict:
    import yaml

    second = yaml.safe_load(second_path.read_text(encoding="utf-8"))
    phase = layer = 0
    both_named = overlap = 0
    by_sure: dict = collections.defaultdict(lambda: [0, 0])
    pairs: collections.Counter = collections.Counter()
    for entry in second:
        first = yaml.safe_load((corpus_dir / f"{entry['id']}.yaml").read_text(encoding="utf-8"))
        p1, p2 = str(first["phase"]).lower(), str(entry["phase"]).lower()
        phase += p1 == p2
        layer += str(first.get("layer"))[:2] == str(entry.get("layer"))[:2]
        by_sure[entry.get("sure", "?")][0] += p1 == p2
        by_sure[entry.get("sure", "?")][1] += 1
        if p1 != p2:
            pairs[f"{p1} / {p2}"] += 1
        e1, e2 = set(first.get("expected_patterns") or []), set(entry.get("expected_patterns") or [])
        if e1 and e2:
            both_named += 1
            overlap += bool(e1 & e2)
    n = len(second) or 1
    return {"reports": len(second), "phase": round(phase / n, 3), "layer": round(layer / n, 3),
            "pattern_overlap": round(overlap / (both_named or 1), 3), "both_named": both_named,
            "by_sure": {k: f"{a}/{b}" for k, (a, b) in sorted(by_sure.items())}, "phase_pairs": dict(pairs.most_common())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--second", type=pathlib.Path, default=SECOND, help="the second labels (default: %(default)s)")
    args = parser.parse_args(argv)
    result = agreement(args.second)
    print(f"{result['reports']} reports labelled twice, blind")
    print(f"  phase agreement        {result['phase']}")
    print(f"  root-cause layer       {result['layer']}")
    print(f"  expected pattern       {result['pattern_overlap']} (of {result['both_named']} where both named one)")
    print(f"  phase, by second labeller's certainty: {result['by_sure']}")
    print(f"  phase disagreements (first / second): {result['phase_pairs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
