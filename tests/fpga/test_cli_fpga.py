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
            check("fixed<12,4> stored as int16_t", "const int16_t t_input[" in (out / "net.c").read_text())
        cases = [
            (["-t", "fpga", "--precision", "int8"], 1, "--precision int8 on -t fpga"),
            (["-t", "fpga", "--precision", "fixed<40,6>"], 1, "with 2 <= W <= 32"),
            (["--precision-file", "p.json"], 1, "--precision-file belongs to -t fpga"),
            (["-t", "fpga", "--emit", "obj"], 1, "--emit obj, asm, llvm and ptx belong to the cpu and gpu"),
            (["--emit", "hls"], 1, "--emit ptx, hls and c belong to the gpu and fpga targets"),
            (["-t", "fpga", "--fpga-part", "a b"], 2, "--fpga-part wants a part name"),
            (["-t", "fpga", "--fpga-clock", "-5"], 2, "--fpga-clock wants a frequency in MHz"),
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
