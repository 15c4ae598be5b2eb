"""Find the files of a torch_npu (or msprof) profiler run, and read the small ones.

Layout (formats reference 4.1; Ascend/pytorch docs/en/developer_notes/ascend_pytorch_profiler_user_guide.md):

    {worker}_{timestamp}_ascend_pt/
      profiler_info_{rank}.json
      ASCEND_PROFILER_OUTPUT/ trace_view.json kernel_details.csv step_trace_time.csv op_statistic.csv
                              api_statistic.csv communication.json memory_record.csv operator_memory.csv ...
    PROF_*/mindstudio_profiler_output/ op_summary_*.csv ...          (msprof)

Any missing or empty file is noted and skipped; the analysis uses what is there.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import glob
import json
import os
from typing import Any, Dict, List, Optional

from npu_graph_skill.core.errors import InputError
from npu_graph_skill.perf.csvrows import iter_csv_rows, num

# kind → file name (or glob) inside the output folder
KNOWN_FILES = {
    "step_trace": "step_trace_time.csv",
    "kernels": "kernel_details.csv",
    "op_statistic": "op_statistic.csv",
    "api_statistic": "api_statistic.csv",
    "trace_view": "trace_view.json",
    "communication": "communication.json",
    "memory_record": "memory_record.csv",
}
MSPROF_GLOBS = {
    "kernels": "op_summary*.csv",
    "op_statistic": "op_statistic*.csv",
    "api_statistic": "api_statistic*.csv",
    "step_trace": "step_trace*.csv",
    "trace_view": "msprof*.json",
}
MAX_SMALL_JSON = 256 << 20  # communication.json / profiler_info: read whole only below this size


@dataclasses.dataclass
class ProfilerFiles:
    root: str
    files: Dict[str, str]
    info_path: Optional[str]
    notes: List[str]


def _first(pattern: str) -> Optional[str]:
    found = sorted(glob.glob(pattern))
    return found[0] if found else None


def _collect(folder: str, notes: List[str]) -> Dict[str, str]:
    files: Dict[str, str] = {}
    for kind, name in KNOWN_FILES.items():
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            files[kind] = path
    if os.path.basename(folder) == "mindstudio_profiler_output" or not files:
        for kind, pattern in MSPROF_GLOBS.items():
            if kind not in files:
                path = _first(os.path.join(folder, pattern))
                if path:
                    files[kind] = path
    for kind, path in list(files.items()):
        try:
            size = os.path.getsize(path)
        except OSError:
            size = -1
        if size == 0:
            notes.append(f"{os.path.basename(path)} is empty; skipped")
            del files[kind]
        elif not os.access(path, os.R_OK):
            notes.append(f"{os.path.basename(path)}: permission denied; skipped")
            del files[kind]
    return files


def _file_kind(path: str) -> Optional[str]:
    base = os.path.basename(path)
    for kind, name in KNOWN_FILES.items():
        if base == name or base == name + ".gz":
            return kind
    for kind, pattern in MSPROF_GLOBS.items():
        if fnmatch.fnmatch(base, pattern):
            return kind
    return None


def locate(path: str) -> ProfilerFiles:
    """A profiler output folder (`*_ascend_pt`, its `ASCEND_PROFILER_OUTPUT`, a msprof `PROF_*`
    folder, or the folder holding such a run) or one of its files."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or directory")
    notes: List[str] = []
    if os.path.isfile(path):
        kind = _file_kind(path)
        if kind is None:
            raise InputError(f"{path}: not a profiler output file (expected a folder such as *_ascend_pt, "
                             f"or one of {', '.join(KNOWN_FILES.values())})")
        if not os.access(path, os.R_OK):
            raise InputError(f"{path}: permission denied")
        if os.path.getsize(path) == 0:
            raise InputError(f"{path}: empty file")
        return ProfilerFiles(root=os.path.dirname(path) or ".", files={kind: path},
                             info_path=_info_near(os.path.dirname(os.path.abspath(path))), notes=notes)
    if not os.access(path, os.R_OK | os.X_OK):
        raise InputError(f"{path}: permission denied")
    folder = _output_folder(path)
    files = _collect(folder, notes)
    if not files:
        dbs = glob.glob(os.path.join(folder, "*.db")) + glob.glob(os.path.join(path, "*", "*.db"))
        if dbs:
            raise InputError(f"{path}: only the database export ({os.path.basename(dbs[0])}) was found; "
                             "this tool reads the text export (profiler experimental_config export_type Text)")
        raise InputError(f"{path}: no torch_npu profiler output found (expected ASCEND_PROFILER_OUTPUT with "
                         "kernel_details.csv, step_trace_time.csv, trace_view.json ...)")
    return ProfilerFiles(root=folder, files=files, info_path=_info_near(folder), notes=notes)


def _output_folder(path: str) -> str:
    """The folder that holds the output files, descending through the usual wrappers."""
    for sub in ("ASCEND_PROFILER_OUTPUT", "mindstudio_profiler_output"):
        candidate = os.path.join(path, sub)
        if os.path.isdir(candidate):
            return candidate
    if any(os.path.isfile(os.path.join(path, name)) for name in KNOWN_FILES.values()):
        return path
    runs = sorted(d for d in glob.glob(os.path.join(path, "*"))
                  if os.path.isdir(d) and (d.endswith("_ascend_pt") or os.path.basename(d).startswith("PROF_")
                                           or os.path.isdir(os.path.join(d, "ASCEND_PROFILER_OUTPUT"))))
    if len(runs) == 1:
        return _output_folder(runs[0])
    if len(runs) > 1:
        names = ", ".join(os.path.basename(r) for r in runs[:4])
        raise InputError(f"{path}: holds {len(runs)} profiler runs ({names}{' ...' if len(runs) > 4 else ''}); "
                         "pass one of them (one rank at a time)")
    return path


def _info_near(folder: str) -> Optional[str]:
    for base in (folder, os.path.dirname(folder)):
        found = _first(os.path.join(base, "profiler_info*.json"))
        if found:
            return found
    return None


def read_small_json(path: str, notes: List[str]) -> Optional[Any]:
    """A JSON file read whole (communication.json, profiler_info); None with a note when unusable."""
    name = os.path.basename(path)
    try:
        if os.path.getsize(path) > MAX_SMALL_JSON:
            notes.append(f"{name}: larger than {MAX_SMALL_JSON >> 20} MB; skipped")
            return None
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        notes.append(f"{name}: cannot read ({exc.strerror or exc}); skipped")
        return None
    if not raw.strip():
        notes.append(f"{name} is empty; skipped")
        return None
    try:
        return json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError as exc:
        notes.append(f"{name}: not valid JSON ({exc.msg} at char {exc.pos}); skipped")
        return None


def _dict(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return num(value) if isinstance(value, str) else None


def read_profiler_info(path: Optional[str], notes: List[str]) -> Dict[str, Any]:
    """Level, rank and versions from profiler_info_{rank}.json (formats reference 4.9)."""
    if not path:
        return {}
    data = read_small_json(path, notes)
    if not isinstance(data, dict):
        return {}
    config = _dict(data.get("config"))
    experimental = _dict(config.get("experimental_config"))
    common = _dict(config.get("common_config"))
    return {
        "file": os.path.basename(path),
        "level": experimental.get("_profiler_level"),
        "export_type": experimental.get("_export_type"),
        "activities": common.get("activities"),
        "schedule": common.get("schedule"),
        "rank": data.get("rank_id"),
        "torch_npu_version": data.get("torch_npu_version"),
        "cann_version": data.get("cann_version"),
    }


def read_api_statistic(path: str) -> List[Dict[str, Any]]:
    """api_statistic.csv rows: Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance."""
    rows = []
    for row in iter_csv_rows(path):
        name = row.get("API Name") or row.get("API name") or ""
        if not name:
            continue
        rows.append({"level": row.get("Level", ""), "api": name, "time_us": num(row.get("Time(us)")) or 0.0,
                     "count": int(num(row.get("Count")) or 0), "avg_us": num(row.get("Avg(us)")),
                     "max_us": num(row.get("Max(us)"))})
    return rows


def read_op_statistic(path: str) -> List[Dict[str, Any]]:
    """op_statistic.csv: OP Type,Core Type,Count,Total Time(us),Min,Avg,Max,Ratio(%)."""
    rows = []
    for row in iter_csv_rows(path):
        op_type = row.get("OP Type") or row.get("Op Type") or ""
        if not op_type:
            continue
        rows.append({"op_type": op_type, "core": row.get("Core Type", ""), "count": int(num(row.get("Count")) or 0),
                     "total_us": num(row.get("Total Time(us)")) or 0.0, "avg_us": num(row.get("Avg Time(us)")),
                     "max_us": num(row.get("Max Time(us)")), "ratio_pct": num(row.get("Ratio(%)"))})
    rows.sort(key=lambda r: -r["total_us"])
    return rows


def read_memory_record(path: str) -> Dict[str, Any]:
    """Peak Total Reserved / Allocated per component (APP, PTA, GE ...) from memory_record.csv."""
    peaks: Dict[str, Dict[str, float]] = {}
    for row in iter_csv_rows(path):
        component = row.get("Component") or "?"
        entry = peaks.setdefault(component, {"peak_reserved_mb": 0.0, "peak_allocated_mb": 0.0})
        reserved = num(row.get("Total Reserved(MB)"))
        allocated = num(row.get("Total Allocated(MB)"))
        if reserved is not None:
            entry["peak_reserved_mb"] = max(entry["peak_reserved_mb"], reserved)
        if allocated is not None:
            entry["peak_allocated_mb"] = max(entry["peak_allocated_mb"], allocated)
    return peaks


def read_communication(path: str, notes: List[str]) -> List[Dict[str, Any]]:
    """Collective and p2p ops per step from communication.json (formats reference 4.7)."""
    data = read_small_json(path, notes)
    if not isinstance(data, dict):
        return []
    ops = []
    for step, groups in data.items():
        if not isinstance(groups, dict):
            continue
        for group_kind in ("collective", "p2p"):
            for op_name, info in _dict(groups.get(group_kind)).items():
                if not isinstance(info, dict) or op_name.startswith("Total Op Info"):
                    continue  # the per-step sum, not an operator
                time_info = _dict(info.get("Communication Time Info"))
                bandwidth = _dict(info.get("Communication Bandwidth Info"))
                links = {link: {"size_mb": _number(v.get("Transit Size(MB)")),
                                "bandwidth_gbps": _number(v.get("Bandwidth(GB/s)"))}
                         for link, v in bandwidth.items()
                         if isinstance(v, dict) and (_number(v.get("Transit Size(MB)")) or 0) > 0}
                elapse = _number(time_info.get("Elapse Time(ms)"))
                transit = _number(time_info.get("Transit Time(ms)"))
                ops.append({
                    "step": step, "kind": group_kind, "op": op_name.split("@")[0],
                    "elapse_ms": elapse, "transit_ms": transit, "wait_ms": _number(time_info.get("Wait Time(ms)")),
                    "synchronization_ms": _number(time_info.get("Synchronization Time(ms)")),
                    "idle_ms": _number(time_info.get("Idle Time(ms)")),
                    "wait_ratio": _number(time_info.get("Wait Time Ratio")),
                    "transit_share": (transit / elapse) if transit is not None and elapse else None,
                    "links": links,
                })
    ops.sort(key=lambda o: -(o["elapse_ms"] or 0.0))
    return ops
