#!/usr/bin/env python3
"""Rebuild the knowledge tables the product ships from the research tables in ../shared/data.

The shared CSVs are the researched facts (every row cites its header line, doc page or source
line). This script rewrites them in the project's own form — one row per code or message, the
columns the engine reads, the source kept on every row — so the package does not depend on the
shared folder at run time. Run it again when the shared tables change; the knowledge tests check
the result.

    python scripts/import_shared_tables.py [--shared ../shared/data]
"""
from __future__ import annotations

import argparse
import csv
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
OUT = REPO / "src" / "npu_graph_skill" / "knowledge"

# family text of acl_error_codes.csv → our short kind
KINDS = [
    ("RT internal InnerCode", "inner"),
    ("ACLNN", "aclnn"),
    ("ACL", "acl"),
    ("RT", "runtime"),
    ("GE", "ge"),
    ("HCCL", "hccl"),
    ("DRV", "driver"),
]

PHASES = {"capture", "replay", "memory", "update", "compile", "environment"}

# Rows of the shared messages table found wrong when checked against the source (npu-graph code
# verify-anchors on an Ascend/pytorch checkout); corrected here, each with the evidence.
MESSAGE_CORRECTIONS = {
    # AclInterface.cpp:1276@9e73e708 logs "modelRI=" << modelRI << ", path=" << path << ", flags=" << flags
    "[ACL CALL] aclmdlRIDebugJsonPrint(modelRI=<modelRI>, flags=<flags>)": (
        r"\[ACL CALL\] aclmdlRIDebugJsonPrint\(modelRI=.*?, path=.*?, flags=.*?\)",
        "[ACL CALL] aclmdlRIDebugJsonPrint(modelRI=<modelRI>, path=<path>, flags=<flags>)"),
}


def kind_of(family: str) -> str:
    for prefix, kind in KINDS:
        if family.startswith(prefix):
            return kind
    raise SystemExit(f"unknown code family: {family!r}")


def read(path: pathlib.Path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write(path: pathlib.Path, fields, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows):4d} rows → {path.relative_to(REPO)}")


def import_numeric(shared: pathlib.Path) -> None:
    rows = []
    for row in read(shared / "acl_error_codes.csv"):
        kind = kind_of(row["family"])
        code = row["code"].strip()
        if kind == "inner":  # internal codes are known by their hex form in plogs
            code = "0x%x" % int(row["hex"], 16)
        rows.append({
            "code": code, "hex": row["hex"].strip(), "name": row["name"].strip(), "kind": kind,
            "family": row["family"].strip(), "meaning": row["meaning"].strip(),
            "graph_mode": row["graph_mode_relevance"].strip(), "source": row["source"].strip(),
        })
    write(OUT / "codes" / "numeric.csv", ["code", "hex", "name", "kind", "family", "meaning", "graph_mode", "source"], rows)


def import_ecodes(shared: pathlib.Path) -> None:
    rows = [{
        "code": r["code"].strip(), "component": r["component"].strip(), "meaning": r["meaning"].strip(),
        "graph_mode": r["typical_cause"].strip(), "source": r["source"].strip(),
    } for r in read(shared / "cann_error_codes.csv")]
    write(OUT / "codes" / "ecodes.csv", ["code", "component", "meaning", "graph_mode", "source"], rows)


def import_pta(shared: pathlib.Path) -> None:
    rows = [{
        "code": r["error_code"].strip(), "submodule": r["submodule"].strip(), "name": r["code_name"].strip(),
        "text": r["printed_text"].strip(), "meaning": r["meaning"].strip(),
        "graph_mode": r["graph_mode_usage"].strip(), "source": r["source"].strip(),
    } for r in read(shared / "pta_error_codes.csv")]
    write(OUT / "codes" / "pta.csv", ["code", "submodule", "name", "text", "meaning", "graph_mode", "source"], rows)


def import_messages(shared: pathlib.Path) -> None:
    rows = []
    for index, r in enumerate(read(shared / "messages.csv"), start=1):
        phase = r["phase"].strip().lower()
        # Teardown (reset / destroy) is the end of the replay lifecycle in our five phases.
        phase = "replay" if phase == "teardown" else phase
        if phase not in PHASES:
            raise SystemExit(f"messages.csv row {index}: unknown phase {r['phase']!r}")
        try:
            re.compile(r["message_regex"])
        except re.error as exc:
            raise SystemExit(f"messages.csv row {index}: bad regex ({exc})")
        if r["message_example"] in MESSAGE_CORRECTIONS:
            r["message_regex"], r["message_example"] = MESSAGE_CORRECTIONS[r["message_example"]]
        repo, _, version = (r["repo"].strip() or "Ascend/pytorch").partition("@")
        version = version or ("6b46b284" if repo.endswith("op-plugin") else "9e73e708")
        rows.append({
            "id": f"M-{index:03d}", "message_regex": r["message_regex"], "message_example": r["message_example"],
            "repo": repo, "file": r["file"].strip(), "line": r["line"].strip(),
            "message_line": r["message_line"].strip(), "version": version,
            "line_v7.3.0": r["line_at_v7.3.0-pytorch2.9.0"].strip(),
            "function": r["function"].strip(), "phase": phase, "layer": r["layer"].strip(),
            "kind": r["kind"].strip(), "condition": r["condition"].strip(),
            "error_code": r["error_code"].strip(), "surface": r["surface"].strip(), "notes": r["notes"].strip(),
        })
    fields = ["id", "message_regex", "message_example", "repo", "file", "line", "message_line", "version",
              "line_v7.3.0", "function", "phase", "layer", "kind", "condition", "error_code", "surface", "notes"]
    write(OUT / "messages.csv", fields, rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "data"), help="the shared data folder")
    args = parser.parse_args(argv)
    shared = pathlib.Path(args.shared)
    if not (shared / "acl_error_codes.csv").is_file():
        print(f"error: {shared} does not hold the shared tables", file=sys.stderr)
        return 2
    import_numeric(shared)
    import_ecodes(shared)
    import_pta(shared)
    import_messages(shared)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
