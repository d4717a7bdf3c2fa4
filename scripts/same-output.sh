#!/usr/bin/env bash
# scripts/same-output.sh — proves that a change of the source tree leaves
# everything dlcc writes byte-identical (docs/architecture.md, "Moving code").
#
#     scripts/same-output.sh BASE [HEAD]      (git revisions; HEAD default: the work tree)
#
# Builds dlcc at BASE (a git worktree under .same-output/) and at HEAD (the
# work tree itself, or a second worktree), then compiles with both and
# compares with cmp:
#   - every bench model (bench/models.py, exported once with Debian's Python
#     and PyTorch) and every e2e model (tests/e2e/*/model.json) for the CPU at
#     --threads 1 and 2, for x86-64 (generic), x86-64-v3, x86-64-v4 (AVX-512),
#     AArch64 and Cortex-M4 (one thread: bare metal has no thread pool):
#     NAME.o, NAME.h, NAME.report.json;
#   - every e2e model for the GPU (NAME.ptx, the host NAME.o, NAME.h, report;
#     --gpu-arch sm_90) and for --gpu-emulate, and for the FPGA (NAME.c,
#     NAME_tb.c, NAME.tcl, NAME.h, report; float32, and fixed<16,6> with .cpp);
#   - `dlcc info --json` of every model.
# Prints one line per difference and a count; exit status 0 when nothing
# differs.  Needs: meson, ninja, git; /usr/bin/python3 with torch and
# torchvision (python3-torch, python3-torchvision) for the bench models
# (without them only the e2e models are compared, and it says so).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
[ $# -ge 1 ] || { echo "usage: $0 BASE [HEAD]" >&2; exit 2; }
W=$ROOT/.same-output
mkdir -p "$W"

build_at() {   # REV DIR -> echoes the dlcc binary
  local rev=$1 dir=$2
  if [ "$rev" = worktree ]; then
    [ -f "$W/build-worktree/build.ninja" ] || meson setup "$W/build-worktree" --buildtype=release -Dtests=false >/dev/null
    ninja -C "$W/build-worktree" tools/dlcc >/dev/null
    echo "$W/build-worktree/tools/dlcc"
    return
  fi
  local sha; sha=$(git rev-parse --short "$rev")
  if [ ! -d "$dir/src-$sha" ]; then git worktree add --detach "$dir/src-$sha" "$sha" >/dev/null 2>&1; fi
  [ -f "$dir/build-$sha/build.ninja" ] || meson setup "$dir/build-$sha" "$dir/src-$sha" --buildtype=release -Dtests=false >/dev/null
  ninja -C "$dir/build-$sha" tools/dlcc >/dev/null
  echo "$dir/build-$sha/tools/dlcc"
}

A=$(build_at "$1" "$W")
B=$(build_at "${2:-worktree}" "$W")
echo "same-output: $1 ($A) against ${2:-the work tree} ($B)"

# The models.
models=()
for d in tests/e2e/*/; do models+=("e2e_$(basename "$d"):$ROOT/${d}model.json"); done
if /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  [ -f "$W/models/.done" ] || { /usr/bin/python3 bench/models.py --out "$W/models" >/dev/null 2>&1 && touch "$W/models/.done"; }
  for d in "$W"/models/*/; do models+=("bench_$(basename "$d"):${d}model.onnx"); done
else
  echo "same-output: no PyTorch for Debian's python3: the bench models are not compared" >&2
fi

cpu_cfgs=(
  "x86-64:--triple x86_64-unknown-linux-gnu --mcpu x86-64"
  "x86-64-v3:--triple x86_64-unknown-linux-gnu --mcpu x86-64-v3"
  "x86-64-v4:--triple x86_64-unknown-linux-gnu --mcpu x86-64-v4"
  "aarch64:--triple aarch64-unknown-linux-gnu --mcpu generic"
  "cortex-m4:--triple thumbv7em-none-eabihf --mcpu cortex-m4"
)
jobs=()
for m in "${models[@]}"; do
  name=${m%%:*}; path=${m#*:}
  for c in "${cpu_cfgs[@]}"; do
    cn=${c%%:*}; flags=${c#*:}
    jobs+=("$name/cpu-$cn-1t|$path $flags --threads 1")
    [ "$cn" = cortex-m4 ] || jobs+=("$name/cpu-$cn-2t|$path $flags --threads 2")
  done
  jobs+=("$name/info|info $path --json")
  case $name in
    e2e_*)
      jobs+=("$name/gpu|$path -t gpu --gpu-arch sm_90")
      jobs+=("$name/gpu-emulate|$path -t gpu --gpu-emulate --triple x86_64-unknown-linux-gnu --mcpu x86-64")
      jobs+=("$name/fpga|$path -t fpga")
      jobs+=("$name/fpga-fixed|$path -t fpga --precision fixed<16,6>")
      ;;
  esac
done

run_one() {   # DLCC OUT ARGS...
  local dlcc=$1 out=$2; shift 2
  rm -rf "$out"; mkdir -p "$out"
  if [ "$1" = info ]; then
    "$dlcc" "$@" > "$out/info.json" 2> "$out/stderr.txt" || echo "exit $?" >> "$out/stderr.txt"
  else
    "$dlcc" "$@" --name m -o "$out" 2> "$out/stderr.txt" || echo "exit $?" >> "$out/stderr.txt"
  fi
}
export -f run_one
differ=0; n=0
for j in "${jobs[@]}"; do
  key=${j%%|*}; args=${j#*|}
  # shellcheck disable=SC2086
  run_one "$A" "$W/out-a/$key" $args &
  # shellcheck disable=SC2086
  run_one "$B" "$W/out-b/$key" $args &
  wait
  n=$((n + 1))
  if ! diff -r -q "$W/out-a/$key" "$W/out-b/$key" >/dev/null; then
    differ=$((differ + 1))
    echo "DIFFERS: $key ($args)"
    diff -r -q "$W/out-a/$key" "$W/out-b/$key" | sed "s/^/    /" | head -5 || true
  fi
done
echo "same-output: $n compilations, $differ differ"
[ "$differ" -eq 0 ]
