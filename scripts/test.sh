#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite twice: once in
# the normal build and once built with AddressSanitizer + UndefinedBehavior-
# Sanitizer (-fno-sanitize-recover=all, plus float-cast-overflow, which GCC
# leaves out of -fsanitize=undefined); then checks that both builds write
# byte-identical outputs, and runs each fuzzing harness briefly
# (FUZZ_SECONDS, default 20; 0 skips).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

# ONNX's per-operator conformance cases come with the onnx wheel from PyPI.
node_dir=""
if node_dir=$(scripts/venv.sh); then :; else
  echo "test.sh: could not install onnx from PyPI; the conformance test runs without ONNX's node cases" >&2
  node_dir=""
fi

# Xilinx's ap_types headers (from the hls4ml wheel) for the fixed-point FPGA C simulations.
ap_dir=""
if ap_dir=$(scripts/venv.sh ap-types); then :; else
  echo "test.sh: could not install hls4ml from PyPI; the fixed-point FPGA C simulations are skipped" >&2
  ap_dir=""
fi

if [ -d build ]; then meson setup --reconfigure build -Donnx_node_dir="$node_dir" -Dap_types_dir="$ap_dir" >/dev/null
else meson setup build -Donnx_node_dir="$node_dir" -Dap_types_dir="$ap_dir"; fi
ninja -C build
meson test -C build --print-errorlogs
grep -h "^conformance:" build/meson-logs/testlog.txt || true

[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  "-Dc_args=-fno-sanitize-recover=all -fsanitize=float-cast-overflow" -Dbuildtype=debug
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build-asan --print-errorlogs --suite unit --suite errors --suite cli --suite e2e \
  --suite reproducible --suite safety

# The same outputs from two build folders (and two settings: tests/reproducible/).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  python3 tests/reproducible/run_reproducible.py build/tools/dlcc --other-dlcc build-asan/tools/dlcc \
  tests/e2e/mlp tests/e2e/cnn

# libFuzzer harnesses (clang), FUZZ_SECONDS each; docs/fuzzing.md for long runs.
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then ONNX_NODE_DIR="$node_dir" scripts/fuzz.sh "${FUZZ_SECONDS:-20}"; fi

# One closing line for both builds (meson's own summaries are above).
ok=0; fail=0; skip=0
for b in build build-asan; do
  ok=$((ok + $(awk '/^Ok:/ {print $2}' "$b/meson-logs/testlog.txt" | tail -n 1)))
  fail=$((fail + $(awk '/^Fail:/ {print $2}' "$b/meson-logs/testlog.txt" | tail -n 1)))
  skip=$((skip + $(awk '/^Skipped:/ {print $2}' "$b/meson-logs/testlog.txt" | tail -n 1)))
done
echo "test.sh: $ok passed, $fail failed, $skip skipped"
