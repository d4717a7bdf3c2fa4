#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite twice: once in
# the normal build and once built with AddressSanitizer + UndefinedBehavior-
# Sanitizer (-fno-sanitize-recover=all).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

[ -d build ] || meson setup build
ninja -C build
meson test -C build --print-errorlogs

[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Dc_args=-fno-sanitize-recover=all -Dbuildtype=debug
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build-asan --print-errorlogs --suite unit
