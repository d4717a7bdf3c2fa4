#!/usr/bin/env bash
# scripts/gpu-check.sh — builds here, into one folder, everything the GPU device check needs; the
# folder's run.sh (scripts/gpu-check-run.sh) runs the check on a machine that has an NVIDIA driver
# and nothing else: no network, no packages, no compiler (docs/targets/gpu.md, "Device check").
#
#     scripts/gpu-check.sh [OUT]                   (OUT defaults to build-gpu-check)
#     ... copy OUT to the NVIDIA machine, then there:  OUT/run.sh [RUNS [WARMUP]]
#
# Models: each model of tests/e2e, one CNN of 1-2 G multiply-adds (CNN, a model of bench/models.py
# exported with Debian's /usr/bin/python3; default resnet18, 224x224: 1.8 G), and the bench models
# named in MODELS (default: one or two of each family the e2e models miss: recurrent, attention,
# encoder-decoder, 1-D audio, MLP-Mixer).
# For each, OUT/<model>/ holds
#   input_K.npy, output_K.npy   its inputs and the reference interpreter's outputs (`dlcc run`)
#   gpu/harness                 bench/harness.c linked with the model compiled with `-t gpu --gpu-arch
#                               GPU_ARCH` (default sm_90) and libdlcc_runtime.a
#   cpu/harness                 the same with the model compiled for the CPU (`--mcpu CPU`, default
#                               x86-64-v3; run.sh checks the CPU flags it needs)
#   gpu/m.h, gpu/m.ptx, cpu/m.h, */m.report.json
# Here every CPU harness must match the reference, every GPU harness must reach the device (without
# one: its device error), and `ldd` of every harness may name only the C library's own libraries
# (libc, libm, libdl, libpthread, the dynamic loader): the drivers link everything else statically.
#
# The folder is larger than the CNN's two harnesses (ResNet-18: 45 MB for the GPU, 57 MB for the CPU,
# its weights in each); it can be split by model folder, and a side (gpu/ or cpu/) left out: run.sh runs
# what is there.
#
# Environment: BUILD (a configured Meson build folder, default build), GPU_ARCH, CPU, CNN, MODELS, CC
# (default cc), WORK (where the exported CNN is kept between runs, default $BUILD/gpu-check-models).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build-gpu-check}
BUILD=${BUILD:-build}
GPU_ARCH=${GPU_ARCH:-sm_90}
CPU=${CPU:-x86-64-v3}
CNN=${CNN:-resnet18}
MODELS=${MODELS-lstm_kws gru_bi2 lstm_bi2 transformer_encoder gpt_decoder unet_small m5 mlp_mixer}
CC=${CC:-cc}
WORK=${WORK:-$BUILD/gpu-check-models}
PY=/usr/bin/python3
log() { printf 'gpu-check: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

case $CPU in   # the /proc/cpuinfo flags the CPU objects need (run.sh checks them)
  x86-64-v3) cpu_flags="avx2 fma bmi2 f16c movbe" ;;
  x86-64-v4) cpu_flags="avx512f avx512bw avx512cd avx512dq avx512vl avx2 fma bmi2" ;;
  generic | x86-64) cpu_flags="" ;;
  *) die "CPU=$CPU: say which CPU flags it needs in this script's list" ;;
esac
[ -f "$BUILD/build.ninja" ] || die "$BUILD is not a configured build folder (meson setup $BUILD)"
if [ -e "$OUT" ] && [ ! -f "$OUT/run.sh" ]; then die "$OUT exists and is no gpu-check folder"; fi

log "building dlcc and the runtime in $BUILD"
ninja -C "$BUILD" tools/dlcc runtime/libdlcc_runtime.a >/dev/null
DLCC=$BUILD/tools/dlcc
RUNTIME=$BUILD/runtime/libdlcc_runtime.a
[ -f "$RUNTIME" ] || die "$RUNTIME was not built (the GPU runtime needs libhalide14-0-dev)"

for m in $CNN $MODELS; do
  if [ ! -f "$WORK/$m/model.onnx" ]; then
    log "exporting $m (bench/models.py)"
    $PY bench/models.py --out "$WORK" "$m" >&2
  fi
done
models=()
for d in tests/e2e/*/; do
  [ -f "$d/model.json" ] && [ -f "$d/input_0.npy" ] && models+=("$(basename "$d")=${d%/}/model.json")
done
for m in $CNN $MODELS; do models+=("$m=$WORK/$m/model.onnx"); done

rm -rf "$OUT"
mkdir -p "$OUT"
install -m 755 scripts/gpu-check-run.sh "$OUT/run.sh"
install -m 644 scripts/gpu-check-torch.py "$OUT/torch-peer.py"
printf '%s\n' "$cpu_flags" > "$OUT/cpu-flags"
glibc=""
for entry in "${models[@]}"; do
  name=${entry%%=*}
  model=${entry#*=}
  dst=$OUT/$name
  log "$name: reference outputs, objects, harnesses"
  mkdir -p "$dst/gpu" "$dst/cpu"
  # the inputs, and the interpreter's outputs by position (float32: what the harness compares)
  $PY - "$DLCC" "$model" "$dst" <<'EOF'
import json, shutil, subprocess, sys, tempfile
from pathlib import Path
import numpy as np
sys.path.insert(0, "tests/e2e")
from run_e2e import file_name
dlcc, model, dst = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
info = json.loads(subprocess.run([dlcc, "info", str(model), "--json"], check=True, capture_output=True,
                                 text=True).stdout)
args = []
for k, t in enumerate(info["inputs"]):
    shutil.copyfile(model.parent / ("input_%d.npy" % k), dst / ("input_%d.npy" % k))
    args += ["-i", "%s=%s" % (t["name"], dst / ("input_%d.npy" % k))]
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([dlcc, "run", str(model), "-o", tmp] + args, check=True, stdout=subprocess.DEVNULL)
    for k, t in enumerate(info["outputs"]):
        ref = Path(tmp) / file_name(t["name"])
        if np.load(ref).dtype != np.float32:
            sys.exit("gpu-check: %s: output %s is not float32, which bench/harness.c compares" % (model, t["name"]))
        shutil.move(ref, dst / ("output_%d.npy" % k))
EOF
  "$DLCC" "$model" -t gpu --gpu-arch "$GPU_ARCH" --name m -o "$dst/gpu"
  "$DLCC" "$model" --mcpu "$CPU" --name m -o "$dst/cpu"
  for side in gpu cpu; do
    d=$dst/$side
    $PY -c 'import sys; sys.path.insert(0, "bench"); from dlcc_bench import io_header
sys.stdout.write(io_header(open(sys.argv[1]).read()))' "$d/m.h" > "$d/m_io.h"
    link=()
    [ $side = gpu ] && link=("$RUNTIME" -ldl -lpthread)
    "$CC" -std=c11 -O2 -Wall -Wextra -Werror -I "$d" bench/harness.c "$d/m.o" "${link[@]}" -lm -static-libgcc \
      -o "$d/harness"
    rm "$d/m.o" "$d/m_io.h"   # linked into the harness
    extra=$(ldd "$d/harness" | awk '{print $1}' | grep -vE '^(linux-vdso\.so\.1|/lib(64)?/ld-linux[^ ]*|lib(c|m|dl|pthread|rt)\.so\.[0-9]+)$' || true)
    [ -z "$extra" ] || die "$d/harness needs libraries an NVIDIA machine may lack: $extra"
    v=$(objdump -T "$d/harness" | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -n 1)
    glibc=$(printf '%s\n%s\n' "$glibc" "$v" | sort -V | tail -n 1)
  done
  out=$("$dst/cpu/harness" 1 0 1e-3 1e-4 "$dst") || die "$name: the CPU harness failed: $out"
  if [ -e /dev/nvidiactl ]; then
    out=$("$dst/gpu/harness" 1 1 1e-3 1e-4 "$dst") || die "$name: the GPU harness failed here: $out"
  else
    rc=0
    out=$("$dst/gpu/harness" 1 1 1e-3 1e-4 "$dst" 2>&1) || rc=$?
    [ $rc = 5 ] && [ "${out#*returned -2}" != "$out" ] || die "$name: without a device the GPU harness should fail with -2 (status $rc): $out"
  fi
done

{
  echo "dlcc $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo +changes), built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
  echo "gpu: -t gpu --gpu-arch $GPU_ARCH; cpu: --mcpu $CPU; CNN: $CNN; bench models: $MODELS (bench/models.py)"
  echo "harnesses need $glibc or newer and, for gpu/, the NVIDIA driver (libcuda.so.1)"
} > "$OUT/BUILD-INFO"
cat "$OUT/BUILD-INFO" >&2
log "$OUT ready ($(du -sh "$OUT" | cut -f1)): copy it to the NVIDIA machine and run $OUT/run.sh there"
