"""Small real programs for the `npu-graph run` tests, and the real texts they print.

The texts come from ../shared/data (cases and plog samples) and examples/: their numbers that belong
to one process or one moment (pid, times) become placeholders that the running child fills with its
own pid and the current time, so the log analyzer orders and maps them as it would a fresh failure.
"""
from __future__ import annotations

import json
import pathlib
import re
import sys
from typing import Dict, List

REPO = pathlib.Path(__file__).resolve().parents[1]

# Prints its spec's lines (placeholders filled), writes its plog into $ASCEND_PROCESS_LOG_PATH the way
# CANN names it (debug/plog/plog-PID_YYYYmmddHHMMSSmmm.log), then hangs or exits as told.
WORKER = r'''
import datetime, json, os, sys, time
spec = json.load(open(sys.argv[1]))
time.sleep(spec.get("delay", 0))
now = datetime.datetime.now()
pid = str(os.getpid())
def fill(line):
    return (line.replace("@PID@", pid).replace("@RANK@", os.environ.get("RANK", "0"))
            .replace("@PLOGTIME@", now.strftime("%Y-%m-%d-%H:%M:%S.") + "%03d.%03d" % (now.microsecond // 1000, now.microsecond % 1000))
            .replace("@PTATIME@", now.strftime("%Y-%m-%d-%H:%M:%S"))
            .replace("@VLLMTIME@", now.strftime("%m-%d %H:%M:%S"))
            .replace("@GLOGTIME@", now.strftime("%m%d %H:%M:%S.") + "%06d" % now.microsecond))
for line in spec.get("stdout", []):
    print(fill(line), flush=True)
if spec.get("plog"):
    folder = os.path.join(os.environ["ASCEND_PROCESS_LOG_PATH"], "debug", "plog")
    os.makedirs(folder, exist_ok=True)
    name = "plog-%s_%s%03d.log" % (pid, now.strftime("%Y%m%d%H%M%S"), now.microsecond // 1000)
    with open(os.path.join(folder, name), "w") as handle:
        handle.write("".join(fill(line) + "\n" for line in spec["plog"]))
for line in spec.get("stderr", []):
    sys.stderr.write(fill(line) + "\n")
sys.stderr.flush()
if spec.get("ready"):
    open(spec["ready"], "a").write(pid + "\n")
time.sleep(spec.get("hang", 0))
sys.exit(spec.get("exit", 1))
'''

# A launcher like torchrun: one worker per spec, RANK set for each, exit 1 when any failed.
LAUNCHER = r'''
import os, subprocess, sys
worker, specs = sys.argv[1], sys.argv[2:]
procs = [subprocess.Popen([sys.executable, worker, spec],
                          env=dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(len(specs))))
         for rank, spec in enumerate(specs)]
sys.exit(1 if any([p.wait() for p in procs]) else 0)
'''

# A launcher whose workers record the SIGINT they get; one worker ignores it (it must be killed).
SIGNALLED = r'''
import os, signal, subprocess, sys, time
log, ready, stubborn = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
CHILD = """
import os, signal, sys, time
log, ready, ignore = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
def got(signum, frame):
    open(log, "a").write("%d SIGINT\\n" % os.getpid())
    sys.exit(130)
signal.signal(signal.SIGINT, signal.SIG_IGN if ignore else got)
open(ready, "a").write("%d\\n" % os.getpid())
while True:
    time.sleep(0.05)
"""
def got(signum, frame):
    open(log, "a").write("%d SIGINT\n" % os.getpid())
    os._exit(130)  # a launcher that dies at once and leaves its workers behind
signal.signal(signal.SIGINT, got)
children = [subprocess.Popen([sys.executable, "-c", CHILD, log, ready, "1" if stubborn and i == 2 else "0"]) for i in range(3)]
open(ready, "a").write("%d\n" % os.getpid())
while True:
    time.sleep(0.05)
'''


def write(folder: pathlib.Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def spec(folder: pathlib.Path, name: str, **fields) -> str:
    return write(folder, name, json.dumps(fields))


def python(script: str, *args: str) -> List[str]:
    return [sys.executable, script, *args]


# --- real texts, made into templates ----------------------------------------------------------

_PLOG_TIME = re.compile(r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}")
_PLOG_PID = re.compile(r"^(\[[A-Z]+\] [A-Z]+)\((\d+),")


def plog_template(lines: List[str]) -> List[str]:
    """Real plog lines → the same lines with @PID@ and @PLOGTIME@ in place of their pid and time."""
    out = []
    for line in lines:
        match = _PLOG_PID.match(line)
        if match:
            line = line.replace(match.group(2), "@PID@")
        out.append(_PLOG_TIME.sub("@PLOGTIME@", line))
    return out


def grep_plog_lines(text: str) -> List[str]:
    """`grep -r` output pasted into a report (`/path/plog-N_T.log:[ERROR] ...`, wrapped by the page) → plog lines."""
    lines: List[str] = []
    for raw in text.splitlines():
        match = re.match(r"^\S*plog-\d+_\d+\.log:(.*)$", raw)
        if match:
            lines.append(match.group(1))
        elif lines:
            lines[-1] += raw  # the page wrapped the line
    return lines


def vllm_template(text: str, pid: str) -> List[str]:
    """Real vLLM worker lines → @PID@, @RANK@ (the TP index) and the times as placeholders."""
    out = []
    for line in text.strip().splitlines():
        line = line.replace(pid, "@PID@")
        line = _PLOG_TIME.sub("@PLOGTIME@", line)
        line = re.sub(r"\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d", "@PTATIME@", line)
        line = re.sub(r"\b\d\d-\d\d \d\d:\d\d:\d\d\b", "@VLLMTIME@", line, count=1)
        line = re.sub(r"Worker_TP\d+", "Worker_TP@RANK@", line)
        out.append(line)
    return out


def capture_begin_line() -> str:
    """The G3 line of NPUGRAPH Capture begin from examples/logs-two-ranks (pid and rank on one line)."""
    text = (REPO / "examples" / "logs-two-ranks" / "rank1.log").read_text(encoding="utf-8")
    line = next(l for l in text.splitlines() if l.endswith("NPUGRAPH Capture begin"))
    return re.sub(r"^V\d{4} \d\d:\d\d:\d\d\.\d{6} (\d+) (.*)\[rank:\d+\]", r"V@GLOGTIME@ @PID@ \2[rank:@RANK@]", line)


def case_text(shared_data: pathlib.Path, case_id: str) -> str:
    import yaml

    with open(shared_data / "cases" / f"{case_id}.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)["error_text"]


def sample_plog(shared_data: pathlib.Path, name: str) -> List[str]:
    return (shared_data / "samples" / "plog" / name).read_text(encoding="utf-8").splitlines()


def specs_capture_copy(shared_data: pathlib.Path) -> Dict[str, list]:
    """One process failing like vllm-ascend#12983 (aclrtMemcpy 107030 while capturing), with the plog
    lines of the same failure from Mooncake#2201."""
    error = case_text(shared_data, "vllm-ascend-12983")
    return {"stderr": [capture_begin_line()] + vllm_template(error, "496"),
            "plog": plog_template(grep_plog_lines(case_text(shared_data, "mooncake-2201")))}
