#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ ! -d build ]; then meson setup build; fi
ninja -C build
meson test -C build --print-errorlogs
