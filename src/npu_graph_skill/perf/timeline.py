"""One streaming pass over trace_view.json (or msprof_*.json): counts and sums that tell whether
graph mode ran, how many kernels the host launched, how much time went to host syncs and aclop
compilation, and the Overlap Analysis split of device time.

Track model (formats reference 4.2): process `CANN` carries `AscendCL@<api>` / `Node@launch`
events; `Ascend Hardware` carries device tasks with `args["Model Id"]` (4294967295 = eager);
`Overlap Analysis` carries `Computing` / `Communication(Not Overlapped)` / `Free` slices; the
`Python` track carries `ProfilerStep#N`. Process names come as `M` events anywhere in the file,
so sums are kept per pid and resolved to track names at the end.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from npu_graph_skill.core.model import Record
from npu_graph_skill.perf.jsonstream import iter_json_events
from npu_graph_skill.perf.kernels import EAGER_MODEL_ID

REPLAY_API = "AscendCL@aclmdlRIExecuteAsync"  # one per NPUGraph replay (NPUGraph.cpp replay, formats 4.12)
LAUNCH_API = "Node@launch"  # one per eagerly launched kernel
OP_COMPILE_APIS = ("AscendCL@aclopCompileAndExecute", "AscendCL@opCompile")
SYNC_PREFIXES = ("AscendCL@aclrtSynchronizeStream", "AscendCL@aclrtSynchronizeDevice", "AscendCL@aclrtSynchronizeEvent")
# record_function ranges TorchAir puts around its ACL graph work (Ascend/torchair acl_graph.py)
TORCHAIR_RANGES = ("acl_graph_capture", "acl_graph_replay", "acl_graph_warm_up", "fx_run_eagerly")
OVERLAP_NAMES = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")


@dataclasses.dataclass
class ApiUse(Record):
    count: int = 0
    total_us: float = 0.0


@dataclasses.dataclass
class TimelineStats(Record):
    source: str
    events: int
    tracks: Dict[str, int]  # process name → X events
    device_tasks: int
    device_model_ids: Dict[str, int]
    device_graph_tasks: int
    device_task_types: Dict[str, int]
    replays: ApiUse
    launches: ApiUse
    op_compiles: ApiUse
    syncs: ApiUse
    torchair_ranges: Dict[str, int]
    profiler_steps: List[Dict[str, Any]]  # {step, duration_us}
    overlap_us: Dict[str, float]
    time_range_us: Optional[Tuple[float, float]]
    notes: List[str] = dataclasses.field(default_factory=list)


def _ts(value: Any) -> Optional[float]:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def scan_timeline(path: str, max_events: Optional[int] = None, name: Optional[str] = None) -> TimelineStats:
    notes: List[str] = []
    process_names: Dict[Any, str] = {}
    per_pid_events: Dict[Any, int] = {}
    overlap_by_pid: Dict[Tuple[Any, str], float] = {}
    device_by_pid: Dict[Any, Dict[str, int]] = {}
    task_types: Dict[str, int] = {}
    replays, launches, compiles, syncs = ApiUse(), ApiUse(), ApiUse(), ApiUse()
    torchair: Dict[str, int] = {}
    steps: List[Dict[str, Any]] = []
    device_ranges: Dict[Any, List[float]] = {}
    events = 0
    for event in iter_json_events(path, notes, max_events=max_events, name=name):
        events += 1
        if not isinstance(event, dict):
            continue
        phase = event.get("ph")
        pid = event.get("pid")
        if phase == "M":
            if event.get("name") == "process_name":
                process_names[pid] = str((event.get("args") or {}).get("name", ""))
            continue
        if phase != "X":
            continue
        per_pid_events[pid] = per_pid_events.get(pid, 0) + 1
        event_name = str(event.get("name", ""))
        dur = _ts(event.get("dur")) or 0.0
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if "Model Id" in args:
            model = args.get("Model Id")
            bucket = device_by_pid.setdefault(pid, {})
            key = str(model)
            bucket[key] = bucket.get(key, 0) + 1
            task_type = str(args.get("Task Type", "?"))
            task_types[task_type] = task_types.get(task_type, 0) + 1
            start = _ts(event.get("ts"))
            if start is not None:
                span = device_ranges.setdefault(pid, [start, start + dur])
                span[0] = min(span[0], start)
                span[1] = max(span[1], start + dur)
            continue
        if event_name in OVERLAP_NAMES:
            overlap_by_pid[(pid, event_name)] = overlap_by_pid.get((pid, event_name), 0.0) + dur
            continue
        if event_name == REPLAY_API:
            _add(replays, dur)
        elif event_name == LAUNCH_API:
            _add(launches, dur)
        elif event_name in OP_COMPILE_APIS:
            _add(compiles, dur)
        elif event_name.startswith(SYNC_PREFIXES):
            _add(syncs, dur)
        elif event_name.startswith("ProfilerStep#"):
            steps.append({"step": event_name.split("#", 1)[1], "duration_us": dur})
        elif event_name in TORCHAIR_RANGES:
            torchair[event_name] = torchair.get(event_name, 0) + 1

    def track(pid: Any) -> str:
        return process_names.get(pid) or f"pid {pid}"

    device_models: Dict[str, int] = {}
    for bucket in device_by_pid.values():
        for key, count in bucket.items():
            device_models[key] = device_models.get(key, 0) + count
    overlap: Dict[str, float] = {}
    for (pid, overlap_name), total in overlap_by_pid.items():
        if track(pid) == "Overlap Analysis" or pid not in process_names:
            overlap[overlap_name] = overlap.get(overlap_name, 0.0) + total
    tracks: Dict[str, int] = {}
    for pid, count in per_pid_events.items():
        tracks[track(pid)] = tracks.get(track(pid), 0) + count
    ranges = list(device_ranges.values())
    graph_tasks = sum(c for k, c in device_models.items() if _is_graph_model(k))
    return TimelineStats(
        source=name or path, events=events, tracks=dict(sorted(tracks.items(), key=lambda kv: -kv[1])),
        device_tasks=sum(device_models.values()), device_model_ids=device_models, device_graph_tasks=graph_tasks,
        device_task_types=dict(sorted(task_types.items(), key=lambda kv: -kv[1])),
        replays=replays, launches=launches, op_compiles=compiles, syncs=syncs, torchair_ranges=torchair,
        profiler_steps=steps, overlap_us=overlap,
        time_range_us=(min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else None,
        notes=notes)


def _add(use: ApiUse, dur: float) -> None:
    use.count += 1
    use.total_us += dur


def _is_graph_model(key: str) -> bool:
    try:
        return int(float(key)) != EAGER_MODEL_ID
    except ValueError:
        return False
