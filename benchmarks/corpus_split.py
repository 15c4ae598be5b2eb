"""The fixed dev / test split of the real-report corpora (diagnosis and routing).

A case belongs to the test split when the first four bytes of sha256(id) fall in the lowest 30 % of
their range: stable across machines and releases, blind to the content, and nobody chooses it.
Knowledge is written from dev cases only. A test case that taught a missing general rule is moved
to dev by listing it, with the reason, in a `moved_to_dev.yaml` beside the corpus; evals report
the test figure with and without the moved cases.

    python benchmarks/corpus_split.py [CORPUS_DIR]     # counts per split, and the moved cases

A corpus folder holds one case per YAML file (the diagnosis corpus) or YAML files that each list
cases (the routing corpus, `route_corpus/questions.yaml`).
"""
from __future__ import annotations

import hashlib
import pathlib
import sys
from typing import Dict, Iterable

TEST_SHARE = 0.3
MOVED_FILE = "moved_to_dev.yaml"


def hashed_split(case_id: str) -> str:
    """'test' or 'dev' from the id alone (the split before any move)."""
    value = int.from_bytes(hashlib.sha256(case_id.encode("utf-8")).digest()[:4], "big")
    return "test" if value < TEST_SHARE * 2 ** 32 else "dev"


def moved_to_dev(corpus_dir: pathlib.Path) -> Dict[str, str]:
    """{case id: reason} of the test cases moved to dev (empty when there is no such file)."""
    import yaml

    path = pathlib.Path(corpus_dir) / MOVED_FILE
    if not path.is_file():
        return {}
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return {str(e["id"]): str(e.get("reason", "")) for e in entries}


def split_of(case_id: str, moved: Iterable[str] = ()) -> str:
    """The split a case is evaluated in now: moved test cases count as dev."""
    return "dev" if case_id in set(moved) else hashed_split(case_id)


def main(argv=None) -> int:
    import yaml

    args = list(sys.argv[1:] if argv is None else argv)
    corpus = pathlib.Path(args[0] if args else pathlib.Path(__file__).parent / "corpus")
    moved = moved_to_dev(corpus)
    counts = {"dev": 0, "test": 0}
    for path in sorted(corpus.glob("*.yaml")):
        if path.name == MOVED_FILE:
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in data if isinstance(data, list) else [data]:  # one case a file, or a list of them
            counts[split_of(str(case["id"]), moved)] += 1
    print(f"{corpus}: dev {counts['dev']}, test {counts['test']}, moved to dev {len(moved)}")
    for case_id, reason in moved.items():
        print(f"  moved {case_id}: {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
