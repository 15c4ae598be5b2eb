"""What every check is given: the backend, the interpreter to probe, a command runner, the
environment, the results so far; and what a check hands back (`Outcome`).

Probes are cached: the torch import that the torch check ran is the one the version check reads.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from npu_graph_skill.doctor.ascend import DEFAULT_BASE
from npu_graph_skill.doctor.commands import ProbeResult, Runner, run_command, run_probe
from npu_graph_skill.doctor.model import CheckResult, Remedy, Text

# Seconds. Importing torch_npu and opening a device can take a while on a busy NPU server.
DEFAULT_TIMEOUTS = {"info": 30.0, "import": 120.0, "devices": 120.0, "graph_api": 120.0,
                    "capture": 180.0, "smi": 30.0}


@dataclasses.dataclass
class Outcome:
    """What a check function returns; the engine adds id, title, timing."""

    status: str
    summary: Text
    evidence: List[str] = dataclasses.field(default_factory=list)
    remedy: List[Remedy] = dataclasses.field(default_factory=list)
    anchors: List[str] = dataclasses.field(default_factory=list)
    data: Dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class CheckSpec:
    id: str
    title: Text
    func: Callable[["DoctorContext"], Outcome]
    depends_on: Tuple[str, ...] = ()
    backends: Tuple[str, ...] = ("npu", "cuda")


@dataclasses.dataclass
class DoctorContext:
    backend: str
    python: str
    environ: Dict[str, str]
    runner: Runner = run_command
    timeouts: Dict[str, float] = dataclasses.field(default_factory=lambda: dict(DEFAULT_TIMEOUTS))
    ascend_base: str = DEFAULT_BASE
    results: Dict[str, CheckResult] = dataclasses.field(default_factory=dict)
    _probes: Dict[Tuple[str, ...], ProbeResult] = dataclasses.field(default_factory=dict)

    def child_env(self, overrides: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        env = dict(self.environ)
        env.setdefault("PYTHONIOENCODING", "utf-8")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.update(overrides or {})
        return env

    def probe(self, name: str, args: Sequence[str] = (), autoload: bool = False,
              timeout: Optional[float] = None) -> ProbeResult:
        """Run a probe once per (name, args, autoload); torch's backend autoload is off unless asked.

        TORCH_DEVICE_BACKEND_AUTOLOAD=0 keeps a broken torch_npu from breaking `import torch`
        (torch/__init__.py `_import_device_backends`, torch 2.13.0: lines 3017-3054).
        """
        key = (name, *args, "autoload" if autoload else "")
        if key not in self._probes:
            overrides = {} if autoload else {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
            self._probes[key] = run_probe(
                self.runner, self.python, name, list(args),
                timeout if timeout is not None else self.timeouts.get(name, 60.0),
                self.child_env(overrides),
            )
        return self._probes[key]

    def data(self, check_id: str) -> Dict[str, Any]:
        result = self.results.get(check_id)
        return result.data if result else {}

    def passed(self, check_id: str) -> bool:
        result = self.results.get(check_id)
        return bool(result and result.ok)

    def info(self) -> Dict[str, Any]:
        """The interpreter's facts (version, packages, locations), {} when the probe failed."""
        return self.probe("info").data or {}

    def package(self, name: str) -> str:
        return (self.info().get("packages") or {}).get(name, "") or ""
