#!/usr/bin/env python3
"""The layers of rdmaxfer, proved from the build: TAP on stdout.

    check-layers.py SOURCE_ROOT BUILD_DIR

Every source and header of the product belongs to one component (LAYERS,
by path); components are ranked, and a file may see only its own
component's files and those of lower rank. What a file sees is read from
the compiler's own dependency output (ninja -t deps: every header each
translation unit included, however indirectly), so a header that reaches
upward counts against every file that includes it; the direct edges
(each file's own #include lines, resolved against that output) say which
file did it. The calls are checked the same way from the objects: every
symbol a component's library leaves undefined is defined by its own or a
lower component, or outside the project (nm). Two components of the same
rank are siblings: neither may use the other. Unit tests link layer
libraries, never a private source by path.
"""

import os
import re
import subprocess
import sys

# (component, rank, path prefix relative to the source root). The longest
# prefix wins; a prefix ending in "/" takes the files directly in it only
# when it ends in "/*".
LAYERS = [
    ("common", 0, "common/"),
    ("log", 1, "daemon/log/"),
    ("transport", 2, "daemon/engine/transport/"),
    ("transfer", 3, "daemon/engine/transfer/"),
    ("send", 4, "daemon/engine/send/"),
    ("recv", 5, "daemon/engine/recv/"),
    ("engine", 6, "daemon/engine/*"),
    ("jobs", 7, "daemon/jobs/"),
    ("control", 8, "daemon/control/"),
    ("metrics", 8, "daemon/metrics/"),
    ("daemon", 9, "daemon/*"),
    ("xferctl-pure", 1, "client/pure/"),
    ("xferctl", 2, "client/*"),
    ("lander-fs", 1, "lander/fs/"),
    ("lander", 2, "lander/*"),
]

# The build's own generated header (config-build.h): below everything.
GENERATED = {"config-build.h": ("common", 0)}


def component(rel):
    best = None
    for name, rank, prefix in LAYERS:
        if prefix.endswith("/*"):
            d = prefix[:-1]
            ok = rel.startswith(d) and "/" not in rel[len(d):]
        else:
            ok = rel.startswith(prefix)
        if ok and (best is None or len(prefix) > len(best[2])):
            best = (name, rank, prefix)
    if best:
        return best[0], best[1]
    base = os.path.basename(rel)
    return GENERATED.get(base)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, desc, details=()):
        self.n += 1
        print(("ok" if ok else "not ok") + " %d - %s" % (self.n, desc))
        for d in details:
            print("# " + d)
        if not ok:
            self.failed += 1


def read_deps(build):
    """{object: [dependency paths, absolute]} from ninja -t deps."""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True,
                         check=True).stdout
    deps, cur = {}, None
    for line in out.splitlines():
        if not line:
            continue
        if not line.startswith(" "):
            cur = line.split(":", 1)[0]
            deps[cur] = []
        elif cur is not None:
            p = line.strip()
            deps[cur].append(os.path.normpath(os.path.join(build, p)))
    return deps


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    if len(sys.argv) != 3:
        print("usage: check-layers.py SOURCE_ROOT BUILD_DIR", file=sys.stderr)
        return 2
    top, build = (os.path.realpath(a) for a in sys.argv[1:])
    tap = Tap()

    def rel(path):
        path = os.path.realpath(path)
        if path.startswith(top + os.sep) and not path.startswith(build + os.sep):
            return os.path.relpath(path, top)
        if path.startswith(build + os.sep):
            return os.path.basename(path)       # generated
        return None

    deps = read_deps(build)
    # Translation units of the product (not tests/), and which object is whose.
    units, obj_src = {}, {}
    for obj, ds in deps.items():
        src = [d for d in ds if d.endswith(".c")]
        if not src:
            continue
        r = rel(src[0])
        if r is None or r.startswith("tests/"):
            continue
        units[r] = [x for x in (rel(d) for d in ds[1:]) if x is not None]
        obj_src[os.path.normpath(os.path.join(build, obj))] = r

    tap.check(len(units) > 0, "the build's dependency output names the product's sources (%d)" % len(units))

    unplaced = sorted({f for s, hs in units.items() for f in [s] + hs if component(f) is None})
    tap.check(not unplaced, "every source and header of the product is in a layer", unplaced)

    # What each translation unit sees, however indirectly.
    seen_bad = []
    for src, hdrs in sorted(units.items()):
        c = component(src)
        if c is None:
            continue
        for h in hdrs:
            hc = component(h)
            if hc is None or hc[0] == c[0]:
                continue
            if hc[1] >= c[1]:
                seen_bad.append("%s (%s, %d) sees %s (%s, %d)" % (src, c[0], c[1], h, hc[0], hc[1]))
    tap.check(not seen_bad, "no translation unit sees a header of its own rank or above but its own", seen_bad)

    # Direct edges: which file includes what, resolved by the compiler's paths.
    edges = {}
    for src, hdrs in units.items():
        files = [src] + hdrs
        by_name = {}
        for f in files:
            by_name.setdefault(os.path.basename(f), set()).add(f)
        for f in files:
            try:
                text = open(os.path.join(top, f), encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            for inc in INCLUDE.findall(text):
                for target in by_name.get(os.path.basename(inc), ()):
                    if target.endswith(inc) and target != f:
                        edges.setdefault(f, set()).add(target)
    up = []
    for f, ts in sorted(edges.items()):
        fc = component(f)
        for t in sorted(ts):
            tc = component(t)
            if fc and tc and fc[0] != tc[0] and tc[1] >= fc[1]:
                up.append("%s includes %s (%s %d -> %s %d)" % (f, t, fc[0], fc[1], tc[0], tc[1]))
    tap.check(not up, "no file includes a header of a sibling or a higher layer", up)

    # Calls: each layer library's undefined symbols are its own or lower.
    libs = {}
    for dirpath, _, names in os.walk(build):
        for n in names:
            if n.endswith(".a") and not os.path.relpath(dirpath, build).startswith("tests"):
                libs[os.path.join(dirpath, n)] = None
    defined, undefined, lib_comp = {}, {}, {}
    for lib in libs:
        # A thin archive names its members by path (from where ar runs).
        members = subprocess.run(["ar", "t", lib], capture_output=True, text=True, cwd=build).stdout.split()
        comps = set()
        for m in members:
            src = obj_src.get(os.path.normpath(os.path.join(build, m)))
            c = component(src) if src else None
            if c:
                comps.add(c)
        if len(comps) != 1:
            tap.check(False, "%s holds one layer's objects" % os.path.relpath(lib, build),
                      ["%s: %s" % (c[0], c[1]) for c in sorted(comps)])
            continue
        c = comps.pop()
        lib_comp[lib] = c
        out = subprocess.run(["nm", "-g", "--defined-only", lib], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3:
                defined.setdefault(parts[2], set()).add(c)
        out = subprocess.run(["nm", "-g", "-u", lib], capture_output=True, text=True).stdout
        undefined[lib] = {line.split()[-1] for line in out.splitlines() if line.strip() and ":" not in line}
    calls = []
    for lib, syms in sorted(undefined.items()):
        c = lib_comp[lib]
        for s in sorted(syms):
            for dc in defined.get(s, ()):
                if dc[0] != c[0] and dc[1] >= c[1]:
                    calls.append("%s (%s) uses %s of %s" % (os.path.relpath(lib, build), c[0], s, dc[0]))
    tap.check(bool(lib_comp), "the layers are static libraries (%d found)" % len(lib_comp))
    tap.check(not calls, "no layer library calls into a sibling or a higher layer", calls)

    # Unit tests link libraries, never a product source by path.
    by_path = []
    mb = os.path.join(top, "tests", "unit", "meson.build")
    for i, line in enumerate(open(mb, encoding="utf-8"), 1):
        if re.search(r"files\(\s*'\.\./\.\./(daemon|client|common)/", line):
            by_path.append("tests/unit/meson.build:%d: %s" % (i, line.strip()))
    tap.check(not by_path, "unit tests link layer libraries, not sources by path", by_path)

    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
