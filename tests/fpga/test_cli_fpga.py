#!/usr/bin/env python3
"""`dlcc -t fpga` on the command line: options reach the files, errors are
one-line diagnostics with the documented exit status, and a failed compile
leaves nothing behind.

    test_cli_fpga.py DLCC MODEL_DIR
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

failed = 0


def check(what, ok, detail=""):
    global failed
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, "" if ok else ": " + detail))
    failed += not ok


def main():
    dlcc, model = sys.argv[1], str(Path(sys.argv[2]) / "model.json")
    with tempfile.TemporaryDirectory(prefix="dlcc-fpga-cli-") as tmp:
        tmp = Path(tmp)

        def run(*args):
            return subprocess.run([dlcc] + list(args), capture_output=True, text=True)

        out = tmp / "o"
        p = run(model, "-t", "fpga", "-o", str(out), "--name", "net", "--fpga-part", "xc7z020-clg400-1",
                "--fpga-clock", "250", "--precision", "fixed<12,4>")
        check("compile with part, clock and precision", p.returncode == 0, p.stderr)
        if p.returncode == 0:
            tcl = (out / "net.tcl").read_text()
            check("set_part from --fpga-part", "set_part {xc7z020-clg400-1}" in tcl, tcl)
            check("create_clock from --fpga-clock", "create_clock -period 4.000" in tcl, tcl)
            rep = json.loads((out / "net.report.json").read_text())
            check("report names part, clock, precision",
                  (rep["part"], rep["clock_mhz"], rep["precision"]) == ("xc7z020-clg400-1", 250, "fixed<12,4>"),
                  str(rep)[:200])
            res, util = rep["part_resources"], rep["utilization"]
            check("the Zynq-7020's resources and the utilization against them",
                  res is not None and res["board"] == "Zynq-7020" and (res["dsp"], res["bram_18k"]) == (220, 280)
                  and abs(util["dsp"] - rep["dsp"] / 220) < 1e-5 and abs(util["lut"] - rep["lut"] / 53200) < 1e-5
                  and rep["fits"] == (rep["dsp"] <= 220 and rep["lut"] <= 53200 and rep["bram_18k"] <= 280),
                  str((res, util, rep["fits"])))
            src = (out / "net.cpp").read_text()
            check("fixed<12,4> stored as ap_fixed<12, 4>",
                  "typedef ap_fixed<12, 4, AP_RND_INF, AP_SAT> dlcc_fx12_4;" in src
                  and "const dlcc_fx12_4 t_input[" in src, src[:300])
            check("fixed point is C++: net.cpp and net_tb.cpp, no net.c",
                  (out / "net_tb.cpp").exists() and not (out / "net.c").exists()
                  and "add_files net.cpp" in tcl and "add_files -tb net_tb.cpp" in tcl, tcl)
        p = run(model, "-t", "fpga", "-o", str(tmp / "vu9p"), "--name", "m", "--fpga-part",
                "xcvu9p-flga2104-2-e")
        rep = json.loads((tmp / "vu9p" / "m.report.json").read_text()) if p.returncode == 0 else {}
        check("a part dlcc has no table for: no utilization, no verdict",
              p.returncode == 0 and rep.get("part_resources", 0) is None and rep.get("fits", 0) is None, p.stderr)
        # off-chip memory: an on-chip budget of 1 KiB moves the weights and the intermediates out
        # (of the e2e CNN, beside the MLP: the MLP's intermediates are under 1 KB, which stay)
        cnn = str(Path(sys.argv[2]).parent / "cnn" / "model.json")
        p = run(cnn, "-t", "fpga", "-o", str(tmp / "ext"), "--name", "m", "--fpga-onchip-kb", "1")
        rep = json.loads((tmp / "ext" / "m.report.json").read_text()) if p.returncode == 0 else {}
        ext = rep.get("offchip", [])
        kinds = {e["kind"] for e in ext}
        src = (tmp / "ext" / "m.c").read_text() if p.returncode == 0 else ""
        check("--fpga-onchip-kb 1: weights and activations off chip, listed in the report",
              p.returncode == 0 and kinds == {"weights", "activations"} and rep["onchip_budget_bytes"] == 1024
              and rep["offchip_weights_bytes"] == sum(e["bytes"] for e in ext if e["kind"] == "weights")
              and rep["offchip_activations_bytes"] == sum(e["bytes"] for e in ext if e["kind"] == "activations"),
              p.stderr + str(ext))
        check("off-chip arrays are m_axi ports of the top function (bundles wmem, amem), no DATAFLOW",
              all("port=%s_%s offset=slave bundle=%s" % ("w" if e["kind"] == "weights" else "t", e["buffer"],
                                                         "wmem" if e["kind"] == "weights" else "amem") in src
                  for e in ext) and "is in external memory" in src and "#pragma HLS DATAFLOW" not in src,
              src[-1500:])
        check("off-chip weights are read through on-chip tiles copied in bursts", "_tile[" in src, "")
        p = run(model, "-t", "fpga", "-o", str(tmp / "m8"), "--name", "m", "--fpga-multipliers", "8")
        rep = json.loads((tmp / "m8" / "m.report.json").read_text()) if p.returncode == 0 else {}
        check("--fpga-multipliers 8: the report's unroll budget", rep.get("unroll_budget") == 8, p.stderr)
        p = run(model, "-t", "fpga", "-o", str(tmp / "z7"), "--name", "m", "--fpga-part", "xc7z020-clg400-1")
        rep = json.loads((tmp / "z7" / "m.report.json").read_text()) if p.returncode == 0 else {}
        check("the Zynq-7020: fewer multipliers per layer, chosen to fit 70% of its DSPs and LUTs",
              p.returncode == 0 and rep["unroll_budget"] < 64 and rep["dsp"] <= 0.7 * 220 and rep["lut"] <= 0.7 * 53200,
              str({k: rep.get(k) for k in ("unroll_budget", "dsp", "lut")}))
        # streams (the e2e CNN beside the MLP): NAME.cpp with hls::stream FIFOs, listed in the report;
        # --fpga-io parallel: arrays only, C
        cnn = str(Path(sys.argv[2]).parent / "cnn" / "model.json")
        p = run(cnn, "-t", "fpga", "-o", str(tmp / "st"), "--name", "m")
        rep = json.loads((tmp / "st" / "m.report.json").read_text()) if p.returncode == 0 else {}
        check("io stream: the CNN's layers pass hls::stream FIFOs (NAME.cpp), the report lists them, DATAFLOW",
              p.returncode == 0 and (tmp / "st" / "m.cpp").exists() and rep["io"] == "stream" and
              len(rep["streams"]) >= 3 and all(s["depth"] >= 2 for s in rep["streams"]) and rep["dataflow"] and
              "#include <hls_stream.h>" in (tmp / "st" / "m.cpp").read_text(), p.stderr + str(rep.get("streams")))
        budgets = [l["unroll_budget"] for l in rep.get("layers", [])]
        check("balanced: on the U50 the slowest layers get more multipliers than the design's budget, and the "
              "estimate stays within 70% of the part", p.returncode == 0 and max(budgets) > rep["unroll_budget"] and
              rep["utilization"]["dsp"] <= 0.7 and rep["utilization"]["lut"] <= 0.7,
              str(budgets) + str(rep.get("utilization")))
        p = run(cnn, "-t", "fpga", "-o", str(tmp / "par"), "--name", "m", "--fpga-io", "parallel")
        rep = json.loads((tmp / "par" / "m.report.json").read_text()) if p.returncode == 0 else {}
        check("--fpga-io parallel: no streams, plain C", p.returncode == 0 and (tmp / "par" / "m.c").exists() and
              rep["io"] == "parallel" and rep["streams"] == [], p.stderr)
        # the precision file's parallelism knob: per layer, and for the rest of the design
        knob = tmp / "knob.json"
        knob.write_text(json.dumps({"multipliers": 16, "layers": {"/2/Gemm": {"multipliers": 4}}}))
        p = run(model, "-t", "fpga", "-o", str(tmp / "knob"), "--name", "m", "--precision-file", str(knob))
        rep = json.loads((tmp / "knob" / "m.report.json").read_text()) if p.returncode == 0 else {}
        per = {tuple(l["nodes"]): l["unroll_budget"] for l in rep.get("layers", [])}
        check("precision file multipliers: 4 for /2/Gemm, 16 for the other layers (float32 kept)",
              p.returncode == 0 and rep["precision"] == "float32" and (tmp / "knob" / "m.c").exists()
              and rep["unroll_budget"] == 16 and per.get(("/2/Gemm", "/3/Relu")) == 4
              and per.get(("/0/Gemm", "/1/Relu")) == 16, p.stderr + str(per))
        bad_knob = tmp / "bad_knob.json"
        bad_knob.write_text(json.dumps({"layers": {"/2/Gemm": {"multipliers": 0}}}))
        no_layer = tmp / "no_layer.json"
        no_layer.write_text(json.dumps({"layers": {"nope": {"multipliers": 8}}}))
        cases = [
            (["-t", "fpga", "--precision-file", str(bad_knob)], 1, "multipliers wants a count from 1 to 4096"),
            (["-t", "fpga", "--precision-file", str(no_layer)], 1, "layer 'nope' is not a node of the model"),
            (["-t", "fpga", "--precision", "int8"], 1, "--precision int8 on -t fpga"),
            (["-t", "fpga", "--precision", "fixed<40,6>"], 1, "with 2 <= W <= 32"),
            (["--precision-file", "p.json"], 1, "--precision-file belongs to -t fpga"),
            (["-t", "fpga", "--emit", "obj"], 1, "--emit obj, asm, llvm and ptx belong to the cpu and gpu"),
            (["--emit", "hls"], 1, "--emit ptx, hls and c belong to the gpu and fpga targets"),
            (["-t", "fpga", "--fpga-part", "a b"], 2, "--fpga-part wants a part name"),
            (["-t", "fpga", "--fpga-clock", "-5"], 2, "--fpga-clock wants a frequency in MHz"),
            (["-t", "fpga", "--fpga-onchip-kb", "0"], 2, "--fpga-onchip-kb wants a size in KiB"),
            (["-t", "fpga", "--fpga-multipliers", "x"], 2, "--fpga-multipliers wants a count"),
            (["-t", "fpga", "--fpga-io", "serial"], 2, "--fpga-io wants stream or parallel"),
            (["--fpga-io", "parallel"], 1, "--fpga-io belongs to -t fpga"),
            (["--fpga-onchip-kb", "64"], 1, "--fpga-onchip-kb belongs to -t fpga"),
            (["--fpga-multipliers", "16"], 1, "--fpga-multipliers belongs to -t fpga"),
            (["-t", "fpga", "--precision-file", str(tmp / "missing.json")], 1, "missing.json"),
        ]
        for args, status, msg in cases:
            bad = tmp / "bad"
            p = run(model, "-o", str(bad), *args)
            check("%s -> exit %d" % (" ".join(args), status),
                  p.returncode == status and msg in p.stderr and not bad.exists(),
                  "exit %d, stderr %r, folder left: %s" % (p.returncode, p.stderr, bad.exists()))
    print("PASS" if not failed else "FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
