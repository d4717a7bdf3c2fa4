#!/usr/bin/env python3
"""The firmware options of `dlcc MODEL` on the host toolchain's view:

    test_options.py DLCC MODEL_DIR

--depfile contents, the header's size macros (stack estimate, static
workspace note), the report's fields, and the diagnostics of misuse.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

failures = []


def expect(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def dlcc(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)


def main():
    exe, mdir = sys.argv[1], Path(sys.argv[2])
    model = mdir / "model.json"
    with tempfile.TemporaryDirectory(prefix="dlcc-opts-") as tmp:
        tmp = Path(tmp)
        out = tmp / "o"
        p = dlcc(exe, model, "-o", out, "--name", "net", "--depfile", tmp / "net.d", "--static-workspace",
                 "--triple", "thumbv7em-none-eabihf", "--mcpu", "cortex-m4")
        expect(p.returncode == 0, "compiles with --depfile --static-workspace (%s)" % p.stderr.strip())
        dep = (tmp / "net.d").read_text()
        target, _, deps = dep.rstrip("\n").partition(": ")
        expect(dep.endswith("\n") and target == "%s/net.o" % out and
               [os.path.realpath(x) for x in deps.split(" ")] ==
               [os.path.realpath(model), os.path.realpath(mdir / "model.safetensors")],
               "depfile is 'OUTDIR/NAME.o: MODEL WEIGHTS': %r" % dep)
        h = (out / "net.h").read_text()
        m = re.search(r"#define net_STACK_SIZE (\d+) +/\* worst-case stack bytes of net_run: LLVM's frame sizes", h)
        expect(m is not None and 256 < int(m.group(1)) < 4096,
               "header states the worst-case stack from LLVM's frame sizes")
        expect("#define net_STATIC_WORKSPACE 1 " in h and "NOT reentrant" in h,
               "header says the static workspace makes net_run non-reentrant")
        rep = json.loads((out / "net.report.json").read_text())
        expect(m is not None and rep.get("stack_bytes") == int(m.group(1)) and rep.get("stack_bytes_from") == "llvm"
               and rep.get("static_workspace") is True and rep.get("no_libm") is False,
               "report: stack_bytes (as the header), stack_bytes_from, static_workspace, no_libm")

        p = dlcc(exe, model, "-o", tmp / "r", "--name", "plain")
        h = (tmp / "r" / "plain.h").read_text()
        expect("STATIC_WORKSPACE" not in h and "Reentrant: no global state." in h,
               "without --static-workspace the header promises reentrancy")

        spaced = tmp / "a b#c"
        p = dlcc(exe, model, "-o", spaced, "--name", "s", "--depfile", tmp / "s.d")
        dep = (tmp / "s.d").read_text()
        expect(p.returncode == 0 and dep.startswith(str(tmp) + "/a\\ b\\#c/s.o: "),
               "depfile escapes spaces and '#': %r" % dep[:120])

        p = dlcc(exe, model, "-o", tmp / "c", "--name", "c", "--workspace-section", ".bss.*/x")
        h = (tmp / "c" / "c.h").read_text()
        expect(p.returncode == 0 and "(.bss.* /x): NOT reentrant */" in h,
               "a section name cannot end the header's comment")

        enc = mdir.parent / "encoder" / "model.json"
        p = dlcc(exe, enc, "-o", tmp / "enc", "--no-libm", "--triple", "thumbv7em-none-eabihf", "--mcpu", "cortex-m4")
        expect(p.returncode == 0 and p.stderr == "",
               "--no-libm on Cortex-M4: silent (no forced-vectorization warnings): %r" % p.stderr[:200])

        for args, status, msg in [
            (["--weights-section", ""], 2, "dlcc: error: --weights-section wants a section name"),
            (["--workspace-section", ""], 2, "dlcc: error: --workspace-section wants a section name"),
            (["--depfile", tmp / "no" / "such" / "dir" / "x.d"], 1, "error: cannot write the depfile"),
        ]:
            p = dlcc(exe, model, "-o", tmp / "e", *args)
            expect(p.returncode == status and msg in p.stderr,
                   "%s: exit %d with '%s' (got %d: %s)" % (" ".join(map(str, args)) or "''", status, msg,
                                                          p.returncode, p.stderr.splitlines()[0] if p.stderr else ""))
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
