#!/usr/bin/env python3
"""Checks the source tree's layering from the objects of a build folder.

    scripts/check-layering.py BUILD_DIR [--max-share 0.22] [-v]

From `nm` on every static library of BUILD_DIR it builds the graph of calls
between source files (file A -> file B when A's object refers to a symbol B's
object defines) and reports:

  * every pair of files in different folders that call each other, directly or
    through a circle of files (a strongly connected component spanning more
    than one folder) -- there must be none;
  * each top-level folder's share of the C lines (tests excluded) -- none may
    exceed --max-share (default 22.5%: "about 22%", docs/architecture.md).

Exit status 0 when both hold, 1 otherwise.  Run by tests/meson.build (suite
`layering`) and by hand after moving code.
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIRS = ["util", "ir", "frontend", "interp", "passes", "lower", "codegen", "targets", "runtime", "tools"]


def source_of(rel_lib, member):
    """The source file (relative to ROOT) of object `member` of the library in folder rel_lib."""
    name = member[:-2]                       # meson: foo.c.o, or sub_foo.c.o for sub/foo.c
    for cand in (rel_lib / name, rel_lib / name.replace("_", "/", 1)):
        if (ROOT / cand).is_file():
            return str(cand)
    for p in (ROOT / rel_lib).rglob("*.c"):
        if str(p.relative_to(ROOT / rel_lib)).replace("/", "_") == name:
            return str(p.relative_to(ROOT))
    return None


NM_LINE = re.compile(r"^(?:.*?\.a):(.*?\.o):\s*(?:[0-9a-fA-F]+\s+)?[A-Za-z]\s+(\S+)$")


def nm_members(lib, *flags):
    """{object file name: set of symbols} from `nm -A FLAGS lib` (thin archives name each member's path)."""
    out = {}
    text = subprocess.run(["nm", "-A", *flags, str(lib)], capture_output=True, text=True).stdout
    for line in text.splitlines():
        m = NM_LINE.match(line)
        if m:
            out.setdefault(os.path.basename(m.group(1)), set()).add(m.group(2))
    return out


def symbols_by_source(build):
    """{source: (defined global symbols, undefined symbols)} for the libraries of build (tests excluded)."""
    res = {}
    for lib in sorted(Path(build).rglob("*.a")):
        rel_lib = lib.parent.relative_to(build)
        if str(rel_lib).startswith("tests"):
            continue
        defs = nm_members(lib, "--defined-only", "-g")
        uses = nm_members(lib, "-u")
        for member in set(defs) | set(uses):
            src = source_of(rel_lib, member)
            if src:
                res[src] = (defs.get(member, set()), uses.get(member, set()))
    return res


def sccs(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]; counter[0] += 1
                    stack.append(nxt); on.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def folder(path):
    return os.path.dirname(path)


def c_lines():
    share = {}
    for d in SOURCE_DIRS:
        n = 0
        for p in (ROOT / d).rglob("*") if (ROOT / d).is_dir() else []:
            if p.suffix in (".c", ".h", ".def") and p.is_file():
                n += sum(1 for _ in p.open(errors="replace"))
        share[d] = n
    return share


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--max-share", type=float, default=0.225)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    syms = symbols_by_source(a.build)
    if not syms:
        print("check-layering: no objects under %s" % a.build, file=sys.stderr)
        return 1
    defs, uses, owner = {}, {}, {}
    for src in sorted(syms):
        defs[src], uses[src] = syms[src]
        for s in defs[src]:
            owner.setdefault(s, src)
    edges = defaultdict(set)
    for src in defs:
        for s in uses[src]:
            t = owner.get(s)
            if t and t != src:
                edges[src].add(t)
    bad = 0
    for comp in sccs(sorted(defs), edges):
        if len({folder(f) for f in comp}) > 1:
            bad += 1
            print("circle across folders:", ", ".join(comp))
            for f in comp:
                print("   %s -> %s" % (f, ", ".join(sorted(t for t in edges[f] if t in comp))))
    share = c_lines()
    total = sum(share.values())
    for d, n in sorted(share.items(), key=lambda x: -x[1]):
        frac = n / total if total else 0
        flag = frac > a.max_share
        bad += flag
        if a.v or flag:
            print("%-9s %6d lines %5.1f%%%s" % (d + "/", n, 100 * frac, "  over %.0f%%" % (100 * a.max_share) if flag else ""))
    print("check-layering: %d files, %d problems" % (len(defs), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
