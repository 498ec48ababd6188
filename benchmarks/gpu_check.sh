#!/bin/bash
# GPU check (issue 15): the example network trained and used for prediction with
# --device gpu, the same on --device cpu for comparison, and the train-step benchmark,
# on a machine with a CUDA jaxlib. Run from the repository root, no network needed:
#
#     bash benchmarks/gpu_check.sh [OUTDIR]        # default $OUT, else ./gpu_check_out
#
# Everything it measures lands in OUTDIR (at most 8 files): env.txt, smoke.txt,
# gpu_train.json, cpu_train.json, gpu_predict.json, train_step.txt. Each step has its
# own time limit, so one that hangs does not take the rest with it (about 8 minutes in
# all on an H200).
set -u
OUTDIR=${1:-${OUT:-gpu_check_out}}
mkdir -p "$OUTDIR"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
DATA=$(mktemp -d)

{
  echo "== versions and devices"
  $PY - <<'EOF'
import importlib, platform
print("python", platform.python_version())
for m in ("jax", "jaxlib", "numpy", "scipy", "sklearn", "rich", "latex2mathml"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "MISSING", type(e).__name__)
import jax
print("devices", jax.devices(), "default backend", jax.default_backend())
EOF
} > "$OUTDIR/env.txt" 2>&1
cat "$OUTDIR/env.txt"

echo "== data: the example's digits (synthetic images when scikit-learn is missing)"
$PY examples/own_network/make_data.py --out "$DATA" 2>/dev/null || $PY - "$DATA" <<'EOF'
import sys, numpy as np
rng = np.random.default_rng(0)
w = rng.standard_normal((64, 10))
for name, n in (("train", 1437), ("test", 360)):
    x = rng.random((n, 8, 8, 1)).astype(np.float32)
    np.savez(f"{sys.argv[1]}/{name}.npz", x=x, y=np.argmax(x.reshape(n, 64) @ w, axis=1))
EOF

{
  echo "== train examples/own_network/net.py:net on the GPU (render, certify, tie, train 5 epochs)"
  timeout 240 $PY -m verigrad.cli train examples/own_network/net.py:net --data "$DATA/train.npz" \
      --test "$DATA/test.npz" --epochs 5 --batch 64 --device gpu --out "$DATA/gpu" --json \
      > "$OUTDIR/gpu_train.json"; echo "exit $?"
  echo "== predict with the tied forward.mlir on the GPU"
  timeout 120 $PY -m verigrad.cli predict "$DATA/gpu" --data "$DATA/test.npz" --device gpu --json \
      > "$OUTDIR/gpu_predict.json"; echo "exit $?"
  echo "== the same training on the CPU (--device cpu), for comparison"
  timeout 240 $PY -m verigrad.cli train examples/own_network/net.py:net --data "$DATA/train.npz" \
      --test "$DATA/test.npz" --epochs 5 --batch 64 --device cpu --out "$DATA/cpu" --json \
      > "$OUTDIR/cpu_train.json"; echo "exit $?"
} > "$OUTDIR/smoke.txt" 2>&1
cat "$OUTDIR/smoke.txt" "$OUTDIR"/gpu_train.json "$OUTDIR"/gpu_predict.json "$OUTDIR"/cpu_train.json 2>/dev/null | tail -n 40

echo "== benchmarks/train_step.py: the rendered step against jax.jit(value_and_grad) on the GPU"
# batch 64 and issue 13's GPU sizes (B 4096 / 1024, a ViT of width 192 and depth 12 at
# B 512); the texts are timed untied here (the CPU run of the benchmark ties them)
timeout 540 $PY benchmarks/train_step.py --gpu-sizes --no-tie > "$OUTDIR/train_step.txt" 2>&1
echo "exit $?" >> "$OUTDIR/train_step.txt"
cat "$OUTDIR/train_step.txt"
rm -rf "$DATA"
