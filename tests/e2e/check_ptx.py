#!/usr/bin/env python3
"""Compiles one end-to-end model with `dlcc -t gpu` for each GPU architecture
and assembles the PTX with ptxas (exit 77 = skipped when ptxas is absent).

    check_ptx.py DLCC MODEL_DIR [ARCH...]      (default: sm_75 sm_80 sm_90)

Checks: dlcc succeeds, NAME.ptx names the architecture in `.target`, has one
`.entry` per kernel of the report, and ptxas accepts it without spills
(printed with -v for the record).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PTXAS = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")


def main():
    dlcc, model_dir = sys.argv[1], Path(sys.argv[2])
    archs = sys.argv[3:] or ["sm_75", "sm_80", "sm_90"]
    if not Path(PTXAS).exists():
        print("SKIP: ptxas not found at %s (set PTXAS)" % PTXAS)
        return 77
    ok = True
    for arch in archs:
        with tempfile.TemporaryDirectory(prefix="dlcc-ptx-") as tmp:
            tmp = Path(tmp)
            cmd = [dlcc, str(model_dir / "model.json"), "-t", "gpu", "--gpu-arch", arch, "-o", str(tmp),
                   "--name", "m"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                print("FAIL: %s\n%s" % (" ".join(cmd), p.stderr))
                return 1
            ptx = (tmp / "m.ptx").read_text()
            report = json.loads((tmp / "m.report.json").read_text())
            entries = re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)
            if ".target %s" % arch not in ptx or len(entries) != len(report.get("kernels", [])):
                print("FAIL: %s: no .target %s or no .entry" % (arch, arch))
                ok = False
                continue
            p = subprocess.run([PTXAS, "-v", "-arch=%s" % arch, str(tmp / "m.ptx"), "-o", str(tmp / "m.cubin")],
                               capture_output=True, text=True)
            if p.returncode:
                print("FAIL: ptxas -arch=%s\n%s" % (arch, p.stderr))
                ok = False
                continue
            spills = [l for l in p.stderr.splitlines() if re.search(r"[1-9]\d* bytes spill", l)]
            print("%s: %d kernels (report: %d) assembled; %s" % (arch, len(entries), len(report.get("kernels", [])),
                                                                 "spills: %s" % spills if spills else "no spills"))
            for line in p.stderr.splitlines():
                if "Used" in line or "Compiling entry" in line:
                    print("   " + line.strip())
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
