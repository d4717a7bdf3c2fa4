#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz/ for SECONDS each (default 20).
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     (harness names: json safetensors onnx npy pipeline devices)
# Builds build-fuzz with clang (-Dfuzz=true) when needed, seeds a corpus per
# harness in build-fuzz/fuzz/corpus/NAME from the test data (kept between
# runs, so long runs build on short ones), and stops at the first crash, leak,
# timeout (> 10 s per input) or excess memory (> 2 GB), leaving the input in
# build-fuzz/fuzz/artifacts/NAME/.  Environment: JOBS=N runs N harnesses at
# once (default 1); FUZZ_ARGS adds libFuzzer options.  docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
secs=${1:-20}
[ $# -gt 0 ] && shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(json safetensors onnx npy pipeline devices)
B=build-fuzz
if [ ! -d "$B" ]; then
  CC=${FUZZ_CC:-clang} meson setup "$B" -Dfuzz=true -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$B" $(printf 'tests/fuzz/fuzz_%s ' "${harnesses[@]}") tools/dlcc >/dev/null

W=$B/fuzz
mkdir -p "$W"
backend=${ONNX_BACKEND_DATA:-$root/../shared/onnx-backend-data}
node_dir=${ONNX_NODE_DIR:-}       # onnx/backend/test/data/node (scripts/venv.sh prints it)

# seed NAME FILE...: copies the files (at most 256 KiB each) into NAME's corpus.
seed() {
  local name=$1; shift
  mkdir -p "$W/corpus/$name"
  for f in "$@"; do
    [ -f "$f" ] || continue
    [ "$(stat -c %s "$f")" -le 262144 ] || continue
    cp "$f" "$W/corpus/$name/seed-$(sha1sum < "$f" | cut -c1-16)"
  done
}

if [ ! -f "$W/corpus/.seeded" ]; then
  mapfile -t onnx < <(find tests "$backend" $node_dir -name '*.onnx' -size -64k 2>/dev/null | sort)
  # JSON models: the committed ones plus the small ONNX models converted.
  mkdir -p "$W/converted"
  i=0
  for m in "${onnx[@]}"; do
    i=$((i + 1))
    "$B/tools/dlcc" convert "$m" -o "$W/converted/m$i.json" >/dev/null 2>&1 || true
  done
  mapfile -t json < <(find tests examples "$W/converted" -name '*.json' 2>/dev/null | sort)
  seed json "${json[@]}"
  seed pipeline "${json[@]}"
  seed onnx "${onnx[@]}"
  mapfile -t st < <(find tests examples "$W/converted" -name '*.safetensors' 2>/dev/null | sort)
  seed safetensors "${st[@]}"
  mapfile -t npy < <(find tests examples -name '*.npy' 2>/dev/null | sort)
  seed npy "${npy[@]}"
  touch "$W/corpus/.seeded"
fi
if [ ! -f "$W/corpus/.seeded-devices" ]; then       # device files (dlcc partition): the shipped one, a calibration
  "$B/tools/dlcc" calibrate --threads 1 -o "$W/calibrated.json" >/dev/null 2>&1 || true
  seed devices targets/hetero/devices.json "$W/calibrated.json"
  touch "$W/corpus/.seeded-devices"
fi

# A dictionary for the JSON harnesses: the format's keys, operator,
# attribute and dtype names (from the .def tables) and a few value shapes.
python3 - "$W/json.dict" <<'PY'
import re, sys
words = ("format dlcc-graph version name opset weights inputs outputs initializers nodes op domain "
         "dtype shape values key attrs __metadata__ data_offsets "
         "dlcc-devices devices links kind cpu gpu fpga peak_gflops bandwidth_gbs launch_us part clock_mhz cores "
         "note from to latency_us both_directions").split()
for f, pat in (("ir/ops.def", r"^OP\((\w+),"), ("ir/attrs.def", r"^AK\((\w+)\)"),
               ("ir/dtypes.def", r'^DT\(\w+, *"(\w+)"'), ("ir/dtypes.def", r'^DT\((?:[^,]*,){4} *"(\w+)"')):
    words += re.findall(pat, open(f).read(), re.M)
with open(sys.argv[1], "w") as out:
    for w in words:
        out.write('"\\"%s\\""\n' % w)
    for v in ("[1, 3, 4, 4]", "[2, 3]", "-1", "[]", "{}", "null", "0.5", ": [", "}, {"):
        out.write('"%s"\n' % v)
PY
declare -A dict=([json]="-dict=$W/json.dict" [pipeline]="-dict=$W/json.dict" [safetensors]="-dict=$W/json.dict"
                [devices]="-dict=$W/json.dict")
declare -A max_len=([json]=65536 [pipeline]=16384 [onnx]=65536 [safetensors]=65536 [npy]=16384 [devices]=16384)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
run_one() {
  local h=$1
  mkdir -p "$W/artifacts/$h"
  echo "fuzz.sh: fuzz_$h for $secs s"
  if ! "$B/tests/fuzz/fuzz_$h" "$W/corpus/$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
       -max_len="${max_len[$h]}" -print_final_stats=1 -artifact_prefix="$W/artifacts/$h/" ${dict[$h]:-} ${FUZZ_ARGS:-} \
       >"$W/$h.log" 2>&1; then
    echo "fuzz.sh: fuzz_$h FAILED; see $root/$W/$h.log and $root/$W/artifacts/$h/" >&2
    grep -E "ERROR|SUMMARY|runtime error" "$W/$h.log" | head -5 >&2
    return 1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$W/$h.log" | tr '\n' ' '
  echo
}
jobs_max=${JOBS:-1}
pids=()
for h in "${harnesses[@]}"; do
  run_one "$h" & pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
