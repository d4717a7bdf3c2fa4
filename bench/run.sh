#!/usr/bin/env bash
# bench/run.sh — the whole CPU benchmark in one command (run by hand, never in CI):
#
#     bench/run.sh [NAME ...]          (default: every model of bench/models.py)
#
# Environment: RUNS (timed runs per measurement, default 20, at least 20 for a published table),
# WARMUP (default 3), ROUNDS (default 5: the peers' and OpenBLAS's runs alternate with dlcc's in that many rounds), GEMM_BUDGET (seconds of timed GEMM calls per size and side before the loop stops
# early, default 60: dlcc's naive MatMul needs minutes at 2048³; the table gives the run count),
# CC (default cc).
#
# dlcc compiles with --mcpu native (this machine's CPU and SIMD width, as ONNX Runtime and OpenBLAS pick
# their kernels at run time).
# Steps: a release build of dlcc in bench/build/dlcc; the models exported to ONNX
# (bench/models.py, Debian's Python); dlcc compile + timing harness per model
# (bench/dlcc_bench.py, bench/harness.c); ONNX Runtime and PyTorch at 1 and 2 threads
# (bench/peers.py, in bench/.venv), each peer's runs alternating with runs of dlcc's harness
# (the ratios compare times taken in the same stretch of the run); the GEMM micro-benchmark (bench/gemm.c) against OpenBLAS
# single-threaded, dlcc's and OpenBLAS's calls alternating in ROUNDS rounds, both with the machine's
# OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE and with both unset (this command only), and one core's
# multiply-add peak (bench/peak.c) before the models and before and after the GEMMs; then bench/report.py writes
# bench/results/<date>-<host>.md.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
ROUNDS=${ROUNDS:-5}
GEMM_BUDGET=${GEMM_BUDGET:-60}
CC=${CC:-cc}
B=bench/build
mkdir -p "$B" bench/results
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "{\"start\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"load_start\": \"$(load)\"," > "$B/run.json"
echo "\"commit\": \"$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench' ':!docs' || echo +changes)\"," >> "$B/run.json"

log "building dlcc (release) in $B/dlcc"
[ -f "$B/dlcc/build.ninja" ] || meson setup "$B/dlcc" --buildtype=release >/dev/null
ninja -C "$B/dlcc" tools/dlcc runtime/libdlcc_runtime.a >/dev/null
DLCC=$B/dlcc/tools/dlcc
"$CC" -std=c11 -O2 -Wall -Wextra -Werror -march=native -ffp-contract=fast bench/peak.c -o "$B/peak"
"$B/peak" | sed "s/^/before_models /" > "$B/peak.txt"

log "exporting the models"
/usr/bin/python3 bench/models.py --out "$B/models" "$@"
/usr/bin/python3 bench/models.py --out "$B/gemm" --gemm 256 1024 2048

log "dlcc: compile and time (RUNS=$RUNS, WARMUP=$WARMUP)"
echo "\"load_dlcc\": \"$(load)\"," >> "$B/run.json"
/usr/bin/python3 bench/dlcc_bench.py "$DLCC" "$CC" "$B/models" "$B/dlcc.json" --runs "$RUNS" --warmup "$WARMUP" \
  --runtime "$B/dlcc/runtime/libdlcc_runtime.a" "$@"

log "peers: ONNX Runtime and PyTorch at 1 and 2 threads"
echo "\"load_peers\": \"$(load)\"," >> "$B/run.json"
/usr/bin/python3 bench/peers.py --models "$B/models" --runs "$RUNS" --warmup "$WARMUP" --out "$B/peers.json" \
  --dlcc "$B/dlcc-out" --rounds "$ROUNDS" "$@"

log "GEMM: dlcc MatMul vs OpenBLAS cblas_sgemm, one thread; the core's multiply-add peak before and after"
echo "\"load_gemm\": \"$(load)\"," >> "$B/run.json"
: > "$B/gemm.txt"
"$B/peak" | sed "s/^/before_gemm /" >> "$B/peak.txt"
for n in 256 1024 2048; do
  d=$B/gemm/gemm$n
  t0=$(date +%s.%N)
  "$DLCC" "$d/model.onnx" -O2 --mcpu native --name g -o "$d/out"
  t1=$(date +%s.%N)
  "$CC" -std=c11 -O2 -Wall -Wextra -Werror -I "$d/out" -DGEMM_N=$n bench/gemm.c "$d/out/g.o" -lopenblas -lm \
    -o "$d/gemm"
  echo "n=$n compile_s=$(echo "$t1 - $t0" | bc)" >> "$B/gemm.txt"
  OPENBLAS_NUM_THREADS=1 "$d/gemm" "$RUNS" "$WARMUP" both "$GEMM_BUDGET" "$ROUNDS" \
    | sed "s/^/n=$n env=machine /" >> "$B/gemm.txt" || true
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 "$d/gemm" "$RUNS" "$WARMUP" both \
    "$GEMM_BUDGET" "$ROUNDS" | sed "s/^/n=$n env=unset /" >> "$B/gemm.txt" || true
  tail -4 "$B/gemm.txt" >&2
done
"$B/peak" | sed "s/^/after_gemm /" >> "$B/peak.txt"
cat "$B/peak.txt" >&2
echo "\"load_end\": \"$(load)\", \"end\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"," >> "$B/run.json"
echo "\"runs\": $RUNS, \"warmup\": $WARMUP, \"gemm_budget_s\": $GEMM_BUDGET}" >> "$B/run.json"

out=bench/results/$(date -u +%Y-%m-%d)-$(hostname -s).md
/usr/bin/python3 bench/report.py --build "$B" --dlcc "$DLCC" --cc "$CC" > "$out"
log "wrote $out"
