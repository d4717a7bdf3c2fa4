#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite twice: once in
# the normal build and once built with AddressSanitizer + UndefinedBehavior-
# Sanitizer (-fno-sanitize-recover=all).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

# ONNX's per-operator conformance cases come with the onnx wheel from PyPI.
node_dir=""
if node_dir=$(scripts/venv.sh); then :; else
  echo "test.sh: could not install onnx from PyPI; the conformance test runs without ONNX's node cases" >&2
  node_dir=""
fi

if [ -d build ]; then meson setup --reconfigure build -Donnx_node_dir="$node_dir" >/dev/null
else meson setup build -Donnx_node_dir="$node_dir"; fi
ninja -C build
meson test -C build --print-errorlogs
grep -h "^conformance:" build/meson-logs/testlog.txt || true

[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Dc_args=-fno-sanitize-recover=all -Dbuildtype=debug
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build-asan --print-errorlogs --suite unit --suite errors --suite cli --suite e2e
