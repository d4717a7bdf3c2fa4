#!/usr/bin/env bash
# Creates .venv with the PyPI packages the tests use for reference data:
# onnx 1.19.1 (the last release whose wheel ships ONNX's node test cases,
# onnx/backend/test/data/node) and numpy; and hls4ml 1.3.0 without its
# dependencies, for the Xilinx ap_types headers (ap_fixed.h, Apache-2.0) its
# wheel ships under templates/vivado/ap_types, which the fixed-point FPGA
# C simulations compile against.  Prints the node-case folder, or with the
# argument `ap-types` the ap_types folder (exit 1 when hls4ml is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import onnx, numpy" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "onnx==1.19.1" numpy >&2
fi
find_ap='import importlib.util, os, sys
s = importlib.util.find_spec("hls4ml")
d = s and os.path.join(s.submodule_search_locations[0], "templates", "vivado", "ap_types")
sys.exit(0 if d and os.path.exists(os.path.join(d, "ap_fixed.h")) and print(d) is None else 1)'
if ! .venv/bin/python -c "$find_ap" >/dev/null 2>&1; then
  .venv/bin/pip install -q --disable-pip-version-check --no-deps "hls4ml==1.3.0" >&2 || true
fi
if [ "${1:-}" = ap-types ]; then
  .venv/bin/python -c "$find_ap"
  exit
fi
.venv/bin/python -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'node'))"
