#!/usr/bin/env bash
# Creates .venv with the PyPI packages the tests use for reference data:
# onnx 1.19.1 (the last release whose wheel ships ONNX's node test cases,
# onnx/backend/test/data/node) and numpy.  Prints the node-case folder.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import onnx, numpy" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "onnx==1.19.1" numpy >&2
fi
.venv/bin/python -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'node'))"
