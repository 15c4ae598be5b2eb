#!/usr/bin/env bash
# Device check for `npu-graph perf bench` (issue 6), for a machine with a GPU (or an NPU).
#
# 1. eager vs graph replay of examples/perf_target.py (a deep, narrow MLP: many short kernels);
# 2. the same run again and `perf compare` of the two (an A/A test: the verdict should be no-change);
# 3. a wide, large-batch variant (few long kernels: graph replay should gain much less).
# Prints the reports; the JSON and HTML files go to $OUT (default: a fresh temporary folder).
#
#   bash benchmarks/device_perf.sh                 # backend cuda
#   BACKEND=npu bash benchmarks/device_perf.sh     # on an Ascend machine with torch_npu
#   TORCH_WHEELS=/path/to/wheels bash benchmarks/device_perf.sh   # install torch offline first
set -uo pipefail
cd "$(dirname "$0")/.."
NAME=device_perf
# shellcheck source=benchmarks/device_torch.sh
. benchmarks/device_torch.sh
"$PY" -c "import torch; print('torch', torch.__version__)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true

npu_graph() { "$PY" -m npu_graph_skill "$@"; }
status=0

echo "== 1. eager vs graph: deep narrow MLP (batch 8, width 512, 16 x [Linear, LayerNorm, GELU])"
npu_graph perf bench examples/perf_target.py:build --backend "$BACKEND" --warmup 20 --iters 300 \
  --json "$OUT/bench_a.json" --html "$OUT/bench_a.html" || status=1

echo "== 2. A/A: the same run again, compared with the first"
npu_graph perf bench examples/perf_target.py:build --backend "$BACKEND" --warmup 20 --iters 300 \
  --json "$OUT/bench_b.json" >/dev/null || status=1
npu_graph perf compare "$OUT/bench_a.json" "$OUT/bench_b.json"
echo "(compare exit code $?; 0 = no regression)"

echo "== 3. wide variant (batch 256, width 4096, depth 4): fewer, longer kernels"
npu_graph perf bench examples/perf_target.py:build --backend "$BACKEND" --warmup 20 --iters 200 \
  --arg batch=256 --arg width=4096 --arg depth=4 --json "$OUT/bench_wide.json" || status=1

"$PY" - "$OUT" <<'EOF'
import json, os, sys
out = sys.argv[1]
print("== summary (P50 ms)")
for name in ("bench_a", "bench_b", "bench_wide"):
    path = os.path.join(out, name + ".json")
    if os.path.exists(path):
        d = json.load(open(path))
        e, g = d.get("eager") or {}, d.get("graph") or {}
        print(f"{name:11s} eager {e.get('p50', float('nan')):.4f}  graph {g.get('p50', float('nan')):.4f}  "
              f"speed-up {d.get('speedup_p50') or float('nan'):.2f}x  capture {d.get('capture_ms') or float('nan'):.1f} ms  "
              f"device {d['env'].get('device_name')}  error {d.get('graph_error')}")
EOF
echo "files in $OUT"
exit $status
