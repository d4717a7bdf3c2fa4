#!/usr/bin/env bash
# bench/run.sh — the whole CPU benchmark in one command (run by hand, never in CI):
#
#     bench/run.sh [--family F ...] [--folding on|off|both] [NAME ...]
#
#   (no argument)           every model of bench/models.py's table, folded exports, and the GEMM step
#   --family F              the models of family F (cnn, transformer, rnn, encdec, audio, mlp; repeatable)
#   --folding off|both      the do_constant_folding=False exports (names ending in -nofold) instead of
#                           or beside the default ones, for the families named or all models
#   NAME ...                these models (NAME-nofold: the unfolded export of NAME)
#   bench/models.py --list  prints the table (name, family, inputs, description)
#
# Environment: RUNS (timed runs per measurement, default 20, at least 20 for a published table),
# WARMUP (default 3), ROUNDS (default 5: the peers' and OpenBLAS's runs alternate with dlcc's in that many
# rounds), PEERS (default "ort ov torch"), OV_PINNING (1: OpenVINO with its CPU pinning on, as it
# defaults to; default off like the other sides), GEMM (1: run the GEMM step, which needs OpenBLAS;
# default 1 for a run of every model, 0 for a subset), GEMM_BUDGET (seconds of timed GEMM calls per size
# and side before the loop stops early, default 60: dlcc's naive MatMul needs minutes at 2048³; the table
# gives the run count), CC (default cc).
#
# dlcc compiles with --mcpu native (this machine's CPU and SIMD width, as ONNX Runtime, OpenVINO and
# OpenBLAS pick their kernels at run time).
# Steps: a release build of dlcc in bench/build/dlcc; the models exported to ONNX
# (bench/models.py, Debian's Python; `models.py --names` resolves the arguments once, so every step gets
# the same list); dlcc compile + timing harness per model (bench/dlcc_bench.py, bench/harness.c); ONNX
# Runtime, OpenVINO and PyTorch at 1 and 2 threads (bench/peers.py, in bench/.venv), each peer's runs
# alternating with runs of dlcc's harness (the ratios compare times taken in the same stretch of the
# run); the GEMM micro-benchmark (bench/gemm.c) against OpenBLAS single-threaded, dlcc's and OpenBLAS's
# calls alternating in ROUNDS rounds, both with the machine's OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE and with
# both unset (this command only), and one core's multiply-add peak (bench/peak.c) before the models and
# before and after the GEMMs; then bench/report.py writes bench/results/<date>-<host>.md (-2, -3, ... for
# later runs that day) and prints the
# summary: per model dlcc's time against the best peer's (the fastest of the three at that thread count),
# the geometric mean and the worst model.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
ROUNDS=${ROUNDS:-5}
PEERS=${PEERS:-ort ov torch}
GEMM=${GEMM:-$([ $# -eq 0 ] && echo 1 || echo 0)}
GEMM_BUDGET=${GEMM_BUDGET:-60}
CC=${CC:-cc}
B=bench/build
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'bench/run.sh: %s\n' "$*" >&2; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
case " $* " in *" -h "* | *" --help "*) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac

/usr/bin/python3 -c 'import torch, torchvision, onnx' 2>/dev/null ||
  die "Debian's /usr/bin/python3 needs python3-torch, python3-torchvision and python3-onnx (apt-get install them)"
if [ "$GEMM" = 1 ]; then
  echo 'int main(void) { return 0; }' | "$CC" -x c - -lopenblas -o /dev/null 2>/dev/null ||
    die "the GEMM step links OpenBLAS: apt-get install libopenblas-dev, or run with GEMM=0"
fi
names=$(/usr/bin/python3 bench/models.py --names "$@") || die "see bench/models.py --help and --list"
mapfile -t NAMES <<<"$names"
mkdir -p "$B" bench/results

echo "{\"start\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"load_start\": \"$(load)\"," > "$B/run.json"
echo "\"commit\": \"$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench' ':!docs' || echo +changes)\"," >> "$B/run.json"

log "building dlcc (release) in $B/dlcc"
[ -f "$B/dlcc/build.ninja" ] || meson setup "$B/dlcc" --buildtype=release -Dtests=false >/dev/null
ninja -C "$B/dlcc" tools/dlcc runtime/libdlcc_runtime.a >/dev/null
DLCC=$B/dlcc/tools/dlcc
"$CC" -std=c11 -O2 -Wall -Wextra -Werror -march=native -ffp-contract=fast bench/peak.c -o "$B/peak"
"$B/peak" | sed "s/^/before_models /" > "$B/peak.txt"

log "exporting the models: ${NAMES[*]}"
/usr/bin/python3 bench/models.py --out "$B/models" "${NAMES[@]}"

log "dlcc: compile and time (RUNS=$RUNS, WARMUP=$WARMUP)"
echo "\"load_dlcc\": \"$(load)\"," >> "$B/run.json"
/usr/bin/python3 bench/dlcc_bench.py "$DLCC" "$CC" "$B/models" "$B/dlcc.json" --runs "$RUNS" --warmup "$WARMUP" \
  --runtime "$B/dlcc/runtime/libdlcc_runtime.a" "${NAMES[@]}"

log "peers ($PEERS) at 1 and 2 threads"
echo "\"load_peers\": \"$(load)\"," >> "$B/run.json"
pin=()
[ "${OV_PINNING:-0}" = 1 ] && pin=(--ov-pinning)
# shellcheck disable=SC2086  # PEERS is a list of words
/usr/bin/python3 bench/peers.py --models "$B/models" --runs "$RUNS" --warmup "$WARMUP" --out "$B/peers.json" \
  --dlcc "$B/dlcc-out" --rounds "$ROUNDS" "${pin[@]}" --peers $PEERS -- "${NAMES[@]}"

echo "\"load_gemm\": \"$(load)\"," >> "$B/run.json"
: > "$B/gemm.txt"
if [ "$GEMM" = 1 ]; then
  log "GEMM: dlcc MatMul vs OpenBLAS cblas_sgemm, one thread; the core's multiply-add peak before and after"
  /usr/bin/python3 bench/models.py --out "$B/gemm" --gemm 256 1024 2048
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
else
  log "GEMM step skipped (GEMM=0)"
fi
cat "$B/peak.txt" >&2
echo "\"load_end\": \"$(load)\", \"end\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"," >> "$B/run.json"
echo "\"runs\": $RUNS, \"warmup\": $WARMUP, \"gemm_budget_s\": $GEMM_BUDGET}" >> "$B/run.json"

# a later run the same day on the same host gets -2, -3, ... instead of replacing an earlier one
out=bench/results/$(date -u +%Y-%m-%d)-$(hostname -s).md
k=2
while [ -e "$out" ]; do out=bench/results/$(date -u +%Y-%m-%d)-$(hostname -s)-$k.md; k=$((k + 1)); done
/usr/bin/python3 bench/report.py --build "$B" --dlcc "$DLCC" --cc "$CC" > "$out"
log "wrote $out"
/usr/bin/python3 bench/report.py --build "$B" --summary >&2
