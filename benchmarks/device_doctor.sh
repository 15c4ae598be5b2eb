#!/usr/bin/env bash
# Run `npu-graph doctor --backend cuda` on a GPU machine: the capture/replay self-test through
# torch.cuda.graph(g) and manual capture_begin/capture_end on a side stream, replayed results checked.
# It must pass (exit 0) on a healthy machine.
#
#   bash benchmarks/device_doctor.sh            # writes doctor_cuda.json / .txt under $OUT (or a temp dir)
#   DOCTOR_PYTHON=/path/to/python bash benchmarks/device_doctor.sh   # the interpreter with CUDA torch
#
# Offline-safe: it looks for an interpreter that already has a CUDA build of torch; only if none
# has one does it try `pip install torch` into a temporary venv (local wheels / mirror only).
# npu-graph-skill itself is installed into a temporary venv, or run from src/ when pip cannot build.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

has_cuda_torch() {
  "$1" -c "import sys, torch; sys.exit(0 if torch.version.cuda and torch.cuda.is_available() else 1)" >/dev/null 2>&1
}

PY=""
for candidate in "${DOCTOR_PYTHON:-}" python3 python /usr/bin/python3 /opt/conda/bin/python; do
  [ -n "$candidate" ] || continue
  path=$(command -v "$candidate" 2>/dev/null) || continue
  if has_cuda_torch "$path"; then PY=$path; break; fi
done
if [ -z "$PY" ]; then
  echo "device_doctor: no interpreter with a CUDA torch; trying pip install torch into $WORK/torch-venv" >&2
  python3 -m venv "$WORK/torch-venv" && "$WORK/torch-venv/bin/python" -m pip install --quiet torch \
    && has_cuda_torch "$WORK/torch-venv/bin/python" && PY="$WORK/torch-venv/bin/python"
fi
if [ -z "$PY" ]; then
  echo "device_doctor: no CUDA build of torch available on this machine; nothing to check" >&2
  nvidia-smi -L >&2 || true
  exit 3
fi
echo "device_doctor: checking $PY ($("$PY" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)'))"

# The doctor itself: pure Python + PyYAML. Prefer an installed console script in a temp venv.
DOCTOR=()
if python3 -m venv --system-site-packages "$WORK/doctor-venv" >/dev/null 2>&1 \
   && "$WORK/doctor-venv/bin/python" -m pip install --quiet -e . >/dev/null 2>&1; then
  DOCTOR=("$WORK/doctor-venv/bin/npu-graph")
else
  echo "device_doctor: pip could not install the project here; running it from src/" >&2
  DOCTOR=(env "PYTHONPATH=$PWD/src" python3 -m npu_graph_skill)
fi

start=$(date +%s.%N)
"${DOCTOR[@]}" doctor --backend cuda --python "$PY" --json > "$OUT/doctor_cuda.json"
code=$?
end=$(date +%s.%N)
"${DOCTOR[@]}" doctor --backend cuda --python "$PY" -v --lang en > "$OUT/doctor_cuda.txt"
cat "$OUT/doctor_cuda.txt"
python3 - "$OUT/doctor_cuda.json" "$start" "$end" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
print("\nstatuses:", {c["id"]: c["status"] for c in report["checks"]})
capture = next((c for c in report["checks"] if c["id"] == "capture"), None)
if capture:
    print("capture steps:", [(s["name"], s["ok"]) for s in capture["data"].get("steps", [])])
print("doctor --json wall time: %.1f s" % (float(sys.argv[3]) - float(sys.argv[2])))
EOF
echo "device_doctor: exit $code (0 = nothing FAIL/CRIT); results in $OUT"
exit $code
