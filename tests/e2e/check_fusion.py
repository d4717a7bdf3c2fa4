#!/usr/bin/python3
"""Graph optimization on the end-to-end models, as `dlcc info --json` reports it.

    check_fusion.py DLCC MODEL_DIR...

For every model: at -O2 no more kernels and no more workspace than at -O0, and
the planned workspace within 10% of the lower bound `dlcc info` reports (the
most bytes of intermediate tensors live at once), every Relu is computed in the kernel of the Conv / Gemm / MatMul that produces
its input (the kernel's first operator).  For a transformer encoder (a model
whose -O0 graph has ReduceMean): LayerNormalization and Softmax are single
nodes, and none of the operators of their decomposed forms remains.  The
outputs themselves are compared by run_e2e.py / run_compiled.py.
"""

import json
import subprocess
import sys

DECOMPOSED = ("ReduceMean", "Pow", "Sqrt", "Exp", "ReduceSum", "ReduceMax", "Erf")


def info(dlcc, model, level):
    r = subprocess.run([dlcc, "info", model, "-O%d" % level, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("dlcc info -O%d %s failed: %s" % (level, model, r.stderr.strip()))
    return json.loads(r.stdout)


def check(dlcc, folder):
    model = folder + "/model.json"
    o0, o2 = info(dlcc, model, 0), info(dlcc, model, 2)
    errors = []
    if o2["kernels_after"] > o0["kernels_after"]:
        errors.append("more kernels at -O2 (%d) than at -O0 (%d)" % (o2["kernels_after"], o0["kernels_after"]))
    if o2["workspace_bytes"] > o0["workspace_bytes"]:
        errors.append("more workspace at -O2 (%d) than at -O0 (%d)" % (o2["workspace_bytes"], o0["workspace_bytes"]))
    # The bound counts the graph's intermediate tensors at their plain size; the plan adds the kernels'
    # scratch (halos, padded copies).
    if o2["workspace_bytes"] > 1.1 * o2["workspace_lower_bound"]:
        errors.append("workspace %d is more than 10%% above the lower bound %d" % (
            o2["workspace_bytes"], o2["workspace_lower_bound"]))
    for k in o2["kernels"]:
        for op in k["ops"][1:]:
            if op == "Relu" and k["ops"][0] not in ("Conv", "Gemm", "MatMul"):
                errors.append("a Relu is fused into %s (kernel %s)" % (k["ops"][0], k["name"]))
        if k["ops"] == ["Relu"]:
            errors.append("Relu kernel %s is not fused into its producer" % k["name"])
    if "ReduceMean" in o0["ops_after"]:
        ops = o2["ops_after"]
        if ops.get("LayerNormalization", 0) < 1 or ops.get("Softmax", 0) < 1:
            errors.append("no LayerNormalization / Softmax at -O2: %s" % ops)
        left = [op for op in DECOMPOSED if op in ops]
        if left:
            errors.append("decomposed operators remain at -O2: %s" % left)
    print("%s: nodes %d -> %d, kernels %d -> %d (%d nodes fused), workspace %d -> %d bytes" % (
        folder.rstrip("/").split("/")[-1], o0["nodes_after"], o2["nodes_after"], o0["kernels_after"],
        o2["kernels_after"], o2["fused_nodes"], o0["workspace_bytes"], o2["workspace_bytes"]))
    for e in errors:
        print("  FAIL: " + e)
    return not errors


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    ok = all([check(sys.argv[1], d) for d in sys.argv[2:]])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
