#!/usr/bin/env bash
# Device check for `npu-graph run` (issue 14), for a machine with a GPU (or an NPU: BACKEND=npu).
#
# A real graph capture failure — `.item()`, a host synchronisation, inside `torch.cuda.graph` (or
# `torch.npu.graph`) — run through `npu-graph run --eager "GRAPH=0"`. Expected:
#   - the command's own exit status (non-zero), its traceback passed through;
#   - the capture diagnosis: phase capture, top candidate P-CAP-001 (host sync inside the capture);
#   - the logging switch for this build (TORCH_LOGS=cudagraphs on CUDA when torch knows the artifact,
#     TORCH_NPU_LOGS=+aclgraph,cudagraphs on an NPU whose torch_npu knows aclgraph);
#   - a bundle: npu-graph-run-<time>/ (output.log, env.txt, diagnosis.json/.md, run.json) and its .tar.gz;
#   - graph vs eager: the same script with GRAPH=0 passes, so the verdict is graph_specific.
# Prints PASS/FAIL per check; everything goes to $OUT (default: a fresh temporary folder).
#
#   bash benchmarks/device_run_capture.sh                # backend cuda
#   BACKEND=npu bash benchmarks/device_run_capture.sh    # on an Ascend machine with torch_npu
#   TORCH_WHEELS=/path/to/wheels bash benchmarks/device_run_capture.sh   # install torch offline first
set -uo pipefail
cd "$(dirname "$0")/.."
NAME=device_run_capture
# shellcheck source=benchmarks/device_torch.sh
. benchmarks/device_torch.sh
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true

cat > "$OUT/capture_item.py" <<'EOF'
"""A capture that synchronises with the host: `.item()` inside the captured region."""
import os
import sys

import torch

backend = sys.argv[1]
if backend == "npu":
    import torch_npu  # noqa: F401
device = getattr(torch, backend)
x = torch.ones(1 << 20, device=backend)
if os.environ.get("GRAPH", "1") == "0":  # graph mode off: the same computation, eagerly
    y = x * 2
    print("eager result", (y + (1 if y.sum().item() > 0 else 0)).sum().item())
    sys.exit(0)
side = device.Stream()
side.wait_stream(device.current_stream())
with device.stream(side):
    for _ in range(3):  # warm-up on a side stream, as the graph docs ask
        y = x * 2
device.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph() if backend == "cuda" else torch.npu.NPUGraph()
with device.graph(graph):
    y = x * 2
    if y.sum().item() > 0:  # a host synchronisation: not permitted while the stream is capturing
        y += 1
graph.replay()
print("replayed", y.sum().item())
EOF

cd "$OUT"
"$PY" -m npu_graph_skill run --json --eager "GRAPH=0" -- "$PY" capture_item.py "$BACKEND" > run.out 2> run.err
rc=$?
echo "npu-graph run exit status: $rc"
tail -n 40 run.err
tail -n 1 run.out > result.json
"$PY" - "$rc" "$BACKEND" <<'EOF'
import json, os, sys, tarfile

rc, backend = int(sys.argv[1]), sys.argv[2]
result = json.load(open("result.json"))
diagnosis = result.get("diagnosis") or {}
top = (diagnosis.get("candidates") or [{}])[0].get("id")
switches = {s["name"]: (s["action"], s["value"]) for s in result.get("switches", [])}
folder = result.get("folder") or ""
checks = [
    ("exit status is the command's (non-zero)", rc == result.get("exit_status") and rc != 0),
    ("phase capture", diagnosis.get("phase") == "capture"),
    ("top candidate P-CAP-001 (host sync inside the capture)", top == "P-CAP-001"),
    ("graph log switch set for this build", any(a == "set" for n, (a, v) in switches.items()
                                                if n in ("TORCH_LOGS", "TORCH_NPU_LOGS"))),
    ("bundle folder with output, env, diagnosis, manifest", all(os.path.isfile(os.path.join(folder, f)) for f in
                                                               ("output.log", "env.txt", "diagnosis.json", "diagnosis.md",
                                                                "run.json"))),
    ("archive beside it", bool(result.get("archive")) and tarfile.is_tarfile(result["archive"])),
    ("graph vs eager: graph_specific", (result.get("eager") or {}).get("verdict") == "graph_specific"),
]
print(f"phase={diagnosis.get('phase')} top={top} switches={switches}")
print(f"error: {diagnosis.get('error')}")
failed = 0
for name, ok in checks:
    print(("PASS " if ok else "FAIL ") + name)
    failed += not ok
print(f"folder: {folder}\narchive: {result.get('archive')}")
sys.exit(1 if failed else 0)
EOF
status=$?
echo "device_run_capture: $([ $status -eq 0 ] && echo PASS || echo FAIL) (files in $OUT)"
exit $status
