#!/usr/bin/env bash
# Installs dependencies, builds dlcc, and runs the example model through the
# reference interpreter, printing its outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -d build ] || meson setup build
ninja -C build
out=$(mktemp -d)
build/tools/dlcc info examples/cnn/model.json
build/tools/dlcc run examples/cnn/model.json -i input=examples/cnn/input.npy -o "$out"
echo "outputs written to $out"
