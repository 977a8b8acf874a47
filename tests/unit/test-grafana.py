#!/usr/bin/python3
"""The Grafana dashboard shipped in contrib/grafana (and the package's
examples): it is JSON Grafana takes (panels with unique ids, a place and
queries; the data source and instance variables it uses), and every query
asks only for metrics, and labels, that the daemon writes: the names are
checked against the text test-stats --print renders with the daemon's own
code (common/stats.c), so a metric renamed there breaks this test rather
than the dashboard. TAP."""

import json
import re
import subprocess
import sys

n = 0
failed = False


def ok(cond, text):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, text))
    failed = failed or not cond


path, test_stats = sys.argv[1], sys.argv[2]
text = subprocess.run([test_stats, "--print"], check=True, capture_output=True, text=True).stdout

# What the daemon writes: each sample's name and its labels' names.
labels = {}
for line in text.splitlines():
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r"^([a-z_]+)(?:\{([^}]*)\})?\s", line)
    if not m:
        continue
    names = set(re.findall(r"([a-z_]+)=\"", m.group(2) or ""))
    labels.setdefault(m.group(1), set()).update(names)

with open(path) as f:
    try:
        dash = json.load(f)
        ok(True, "%s is JSON" % path)
    except ValueError as e:
        ok(False, "%s is JSON: %s" % (path, e))
        print("1..%d" % n)
        sys.exit(1)

panels = dash.get("panels", [])
ids = [p.get("id") for p in panels]
ok(len(panels) >= 8 and len(set(ids)) == len(ids), "%d panels, each id once" % len(panels))
ok(all({"x", "y", "w", "h"} <= set(p.get("gridPos", {})) for p in panels), "each panel has a place")
ok(dash.get("uid") and dash.get("title") and isinstance(dash.get("schemaVersion"), int), "uid, title, schemaVersion")
variables = {v["name"] for v in dash.get("templating", {}).get("list", [])}

exprs = [(p.get("title"), t.get("expr", "")) for p in panels for t in p.get("targets", [])]
ok(exprs and all(e for _, e in exprs), "every panel asks something (%d queries)" % len(exprs))
used_vars = set(re.findall(r"\$(?!__)(\w+)", json.dumps(dash)))
ok(used_vars <= variables, "every variable used is defined: %s of %s" % (sorted(used_vars), sorted(variables)))

wanted = set()
for title, expr in exprs:
    for name in re.findall(r"\brdmaxfer_[a-z_]+", expr):
        wanted.add(name)
        ok(name in labels, "%s: %s is a metric the daemon writes" % (title, name))
        # Labels in its selector, and in by (...) around it, are its own (or Prometheus' instance).
        for sel in re.findall(re.escape(name) + r"\{([^}]*)\}", expr):
            for lab in re.findall(r"([a-z_]+)\s*(?:=~|!=|!~|=)", sel):
                ok(lab == "instance" or lab in labels.get(name, set()),
                   "%s: %s has label %s" % (title, name, lab))
    for group in re.findall(r"by \(([^)]*)\)", expr):
        for lab in (l.strip() for l in group.split(",")):
            ok(lab == "instance" or any(lab in labels.get(m, set()) for m in re.findall(r"\brdmaxfer_[a-z_]+", expr)),
               "%s: grouped by %s, a label of its metric" % (title, lab))

# The families a user looks at first are on it.
for family in ("rdmaxfer_transferred_bytes_total", "rdmaxfer_transfers_total", "rdmaxfer_jobs_queued",
               "rdmaxfer_transfer_duration_seconds_bucket", "rdmaxfer_transfers_active"):
    ok(family in wanted, "the dashboard shows %s" % family)

print("1..%d" % n)
sys.exit(1 if failed else 0)
