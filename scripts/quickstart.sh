#!/usr/bin/env bash
# Installs dependencies, builds dlcc, compiles the example CNN to an object
# file with its C header, links it with a small C program that uses only that
# header, and runs it (comparing with PyTorch's output).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -d build ] || meson setup build
ninja -C build
out=$(mktemp -d)
set -x
build/tools/dlcc examples/cnn/model.json --name cnn -o "$out"
cc -std=c11 -O2 -I "$out" examples/cnn/main.c "$out/cnn.o" -lm -o "$out/cnn_demo"
"$out/cnn_demo" examples/cnn/input.npy examples/cnn/expected_output.npy
