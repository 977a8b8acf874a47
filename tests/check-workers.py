#!/usr/bin/env python3
"""What the daemon's worker threads read, proved from the source: TAP.

    check-workers.py SOURCE_ROOT

A function handed to io_call() runs on an io worker thread, beside the
event loop that owns the daemon's state. A reload (SIGHUP) replaces the
configuration on the loop while workers run (daemon.c: daemon_reload), so a
worker must never read it: what a worker needs of the configuration is
copied into its request by the loop when the request is made (as
recv_file's pack_symlinks is), and a reload cannot change it under the
worker. This finds every io_call() in daemon/, and in each worker function,
and in every function of daemon/ that it calls, however deeply, looks for
the configuration: the identifier `cfg`, or a call of a config_ function.
Each worker is one test; a reach of the configuration fails it with the
path of calls that leads there. Comments, strings and character literals
are left out; a function is found by its definition's name, so one called
through a pointer is not followed (none is, in a worker, today).
"""

import os
import re
import sys

IDENT_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "_Alignof",
            "alignof", "__typeof__", "typeof", "_Static_assert", "static_assert", "do"}
CONFIG = re.compile(r"\bcfg\b|\bconfig_[a-z0-9_]+\s*\(")


def strip(text):
    """The text with comments, strings and character literals blanked
    (newlines kept, so that line numbers still count)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path, text):
    """{name: (path, line, body)} for each function defined at file scope."""
    found = {}
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                head = text[max(0, i - 400):i]
                m = re.search(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*$", head)
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and m and m.group(1) not in KEYWORDS:
                # A struct or array initialiser has "=" before its brace.
                if not re.search(r"=\s*$", text[max(0, start - 200):start]):
                    found[m.group(1)] = (path, text.count("\n", 0, start) + 1, text[start:i + 1])
                m = None
        i += 1
    return found


def main():
    if len(sys.argv) != 2:
        print("usage: check-workers.py SOURCE_ROOT", file=sys.stderr)
        return 2
    root = sys.argv[1]
    defs, calls = {}, []
    for top, _, names in os.walk(os.path.join(root, "daemon")):
        for name in sorted(names):
            if not name.endswith(".c"):
                continue
            path = os.path.join(top, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = strip(f.read())
            for fn, d in functions(rel, text).items():
                defs.setdefault(fn, []).append(d)
            for m in re.finditer(r"\bio_call\s*\(([^;]*?)\)\s*[;<)=!|&]", text):
                args = [a.strip() for a in m.group(1).split(",")]
                if len(args) >= 3 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args[2]):
                    calls.append((args[2], rel, text.count("\n", 0, m.start()) + 1))
    # io.c defines io_call itself; its own fn parameter is not a worker.
    workers = sorted({fn for fn, rel, _ in calls if fn != "fn"})
    if not workers:
        print("1..1\nnot ok 1 - no io_call() worker found in daemon/: the scan is broken")
        return 1

    print(f"1..{len(workers)}")
    failed = 0
    for k, w in enumerate(workers, 1):
        if w not in defs:
            print(f"not ok {k} - worker {w}: its definition was not found")
            failed += 1
            continue
        # Depth-first over the calls; the first reach of the configuration wins.
        seen, stack, hit = set(), [(w, [w])], None
        while stack and not hit:
            fn, trail = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            for path, line, body in defs.get(fn, []):
                c = CONFIG.search(body)
                if c:
                    hit = (trail, path, line + body.count("\n", 0, c.start()), c.group(0))
                    break
                for callee in IDENT_CALL.findall(body):
                    if callee in defs and callee not in seen and callee not in KEYWORDS:
                        stack.append((callee, trail + [callee]))
        where = ", ".join(f"{rel}:{line}" for fn, rel, line in calls if fn == w)
        if hit:
            trail, path, line, what = hit
            print(f"not ok {k} - worker {w} ({where}) reads the configuration")
            print(f"# {' -> '.join(trail)}: '{what.strip()}' at {path}:{line}")
            failed += 1
        else:
            print(f"ok {k} - worker {w} ({where}): {len(seen)} function(s), no configuration read")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
