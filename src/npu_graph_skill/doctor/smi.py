"""Parse `npu-smi info` and `nvidia-smi --query-gpu` output into device records.

npu-smi prints a box table with two rows per chip (layout as seen in public reports, e.g.
vllm-project/vllm-ascend#12980 and #2534; it varies by product and driver, so parse defensively):

    | NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
    | Chip  [Phy-ID]            | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
    | 0     910B3               | OK            | 93.5        41                0    / 0             |
    | 0                         | 0000:C1:00.0  | 0           0    / 0          3162 / 65536         |

followed by a process table (`| NPU  Chip | Process id | Process name | Process memory(MB) |`).
"""
from __future__ import annotations

import dataclasses
import re
from typing import List, Optional

from npu_graph_skill.core.model import Record

HEALTH_WORDS = ("OK", "Warning", "Alarm", "Critical", "UNKNOWN")
_USAGE = re.compile(r"(\d+)\s*/\s*(\d+)")


@dataclasses.dataclass
class SmiDevice(Record):
    npu: str
    chip: str = ""
    name: str = ""
    health: str = ""
    bus_id: str = ""
    aicore_percent: Optional[float] = None
    memory_used_mb: Optional[int] = None  # HBM on HBM products, DDR memory otherwise
    memory_total_mb: Optional[int] = None
    temperature_c: Optional[float] = None

    @property
    def label(self) -> str:
        return f"NPU {self.npu}" + (f" chip {self.chip}" if self.chip else "")


@dataclasses.dataclass
class SmiProcess(Record):
    npu: str
    chip: str
    pid: str
    name: str
    memory_mb: Optional[int] = None


@dataclasses.dataclass
class SmiReport(Record):
    version: str = ""
    devices: List[SmiDevice] = dataclasses.field(default_factory=list)
    processes: List[SmiProcess] = dataclasses.field(default_factory=list)


def _cells(line: str) -> List[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_npu_smi(text: str) -> SmiReport:
    report = SmiReport()
    lines = (text or "").splitlines()
    in_processes = False
    pending: Optional[SmiDevice] = None
    for line in lines:
        version = re.search(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)", line)
        if version:
            report.version = version.group(2)
            continue
        if not line.lstrip().startswith("|"):
            continue
        if "Process id" in line or "Process name" in line:
            in_processes = True
            continue
        cells = _cells(line)
        if in_processes:
            _parse_process(cells, report)
            continue
        if len(cells) < 3 or cells[0].startswith(("NPU", "Chip")):
            continue
        first = cells[0].split()
        if pending is None and len(first) >= 2 and cells[1] in HEALTH_WORDS:
            pending = SmiDevice(npu=first[0], name=" ".join(first[1:]), health=cells[1])
            numbers = cells[2].split()
            if len(numbers) >= 2:
                pending.temperature_c = _float(numbers[1])
            continue
        if pending is not None and first and re.match(r"^[0-9A-Fa-f]{4}:", cells[1] or ""):
            pending.chip = first[0]
            pending.bus_id = cells[1]
            numbers = cells[2].split()
            pending.aicore_percent = _float(numbers[0]) if numbers else None
            usages = _USAGE.findall(cells[2])
            if usages:
                used, total = usages[-1]  # HBM-Usage is the last pair; Memory-Usage before it
                if int(total) == 0 and len(usages) > 1:
                    used, total = usages[0]
                pending.memory_used_mb, pending.memory_total_mb = int(used), int(total)
            report.devices.append(pending)
            pending = None
    return report


def _parse_process(cells: List[str], report: SmiReport) -> None:
    if len(cells) < 4:
        return
    head = cells[0].split()
    if len(head) < 2 or not cells[1].isdigit():
        return
    memory = cells[3].split()
    report.processes.append(SmiProcess(
        npu=head[0], chip=head[1], pid=cells[1], name=cells[2],
        memory_mb=int(memory[0]) if memory and memory[0].isdigit() else None,
    ))


def _float(text: str) -> Optional[float]:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


@dataclasses.dataclass
class GpuRecord(Record):
    index: str
    name: str
    driver: str
    memory_used_mb: Optional[int]
    memory_total_mb: Optional[int]


NVIDIA_SMI_QUERY = ["nvidia-smi", "--query-gpu=index,name,driver_version,memory.used,memory.total",
                    "--format=csv,noheader,nounits"]


def parse_nvidia_smi_csv(text: str) -> List[GpuRecord]:
    records = []
    for line in (text or "").splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != 5 or not cells[0].isdigit():
            continue
        used = int(cells[3]) if cells[3].isdigit() else None
        total = int(cells[4]) if cells[4].isdigit() else None
        records.append(GpuRecord(cells[0], cells[1], cells[2], used, total))
    return records
