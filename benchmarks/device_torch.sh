# Sourced by the device checks (device_perf.sh, device_run_capture.sh): the settings they share and a torch
# with a usable $BACKEND device, installed from wheels on local disk if needed (offline machines).
# Sets REPO, PY, BACKEND, OUT and PYTHONPATH; exits 2 with one line when no such torch can be had.
# Expects to be sourced from the repository root, with NAME set to the calling script's name.
REPO=$PWD
PY=${PYTHON:-python3}
BACKEND=${BACKEND:-cuda}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
export PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}"

have_torch() {
  "$PY" - "$BACKEND" <<'PYEOF' 2>/dev/null
import sys
import torch
if sys.argv[1] == "npu":
    import torch_npu  # noqa: F401
sys.exit(0 if getattr(torch, sys.argv[1]).is_available() else 1)
PYEOF
}

if ! have_torch; then
  for dir in ${TORCH_WHEELS:-} /wheels /opt/wheels "$HOME/wheels"; do
    if ls "$dir"/torch-*.whl >/dev/null 2>&1; then
      echo "installing torch from $dir"
      "$PY" -m pip install --quiet --no-index --find-links "$dir" torch && break
    fi
  done
fi
if ! have_torch; then
  echo "$NAME: no torch with a usable '$BACKEND' device here (set PYTHON or TORCH_WHEELS)" >&2
  exit 2
fi
