#!/usr/bin/python3
"""The metrics file, as a real parser reads it: test-stats --print renders a
sample snapshot (common/stats.c's stats_prometheus), and the Prometheus
client library's text parser (python3-prometheus-client) reads it back.
Checks what it says: each family's HELP and TYPE, a histogram's buckets,
the names rdmaxferd(8) documents. TAP; SKIP when the library is missing.
Debian's python3 (the shebang): the package installs the library there."""

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


def done():
    print("1..%d" % n)
    sys.exit(1 if failed else 0)


try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("1..0 # SKIP no python3-prometheus-client here (apt-get install python3-prometheus-client)")
    sys.exit(0)

text = subprocess.run([sys.argv[1], "--print"], check=True, capture_output=True, text=True).stdout

# The families rdmaxferd(8) documents, by the name their samples carry.
want = {
    "rdmaxfer_transferred_bytes_total": "counter",
    "rdmaxfer_received_bytes_total": "counter",
    "rdmaxfer_sent_bytes_total": "counter",
    "rdmaxfer_files_total": "counter",
    "rdmaxfer_transfers_total": "counter",
    "rdmaxfer_transfer_duration_seconds": "histogram",
    "rdmaxfer_transfers_active": "gauge",
    "rdmaxfer_jobs_queued": "gauge",
    "rdmaxfer_ring_slots": "gauge",
    "rdmaxfer_start_time_seconds": "gauge",
    "rdmaxfer_build_info": "gauge",
    "rdmaxfer_rail_transferred_bytes_total": "counter",
    "rdmaxfer_rail_up": "gauge",
}

try:
    families = list(text_string_to_metric_families(text))
    ok(True, "the text parses (%d families)" % len(families))
except Exception as e:  # the parser's own exceptions vary by version
    ok(False, "the text parses: %s" % e)
    done()

# The raw lines: one HELP and one TYPE per family, before its samples.
helps = re.findall(r"^# HELP (\S+) (.+)$", text, re.M)
types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
ok([h[0] for h in helps] == list(want), "a HELP line for each family, in order: %s" % [h[0] for h in helps])
ok(types == want, "each family's TYPE: %s" % types)
seen = set()
order_ok = True
for line in text.splitlines():
    m = re.match(r"^# TYPE (\S+) ", line)
    if m:
        seen.add(m.group(1))
    elif not line.startswith("#"):
        name = line.split("{")[0].split(" ")[0]
        base = re.sub(r"_(bucket|sum|count)$", "", name) if name.startswith("rdmaxfer_transfer_duration_seconds") else name
        order_ok = order_ok and base in seen
ok(order_ok, "every sample after its family's TYPE")

by_name = {}
for f in families:
    for s in f.samples:
        by_name.setdefault(s.name, []).append(s)
    ok(f.documentation != "", "%s has a HELP text" % f.name)

ok(not any(k.startswith(("rdmaxfer_rate_", "rdmaxfer_uptime")) for k in by_name),
   "no sampled rate gauge, no uptime")

tb = {s.labels["direction"]: s.value for s in by_name.get("rdmaxfer_transferred_bytes_total", [])}
ok(tb == {"recv": 123456789, "send": 987654321}, "transferred bytes by direction: %s" % tb)
fl = {s.labels["direction"]: s.value for s in by_name.get("rdmaxfer_files_total", [])}
ok(fl == {"recv": 1, "send": 7}, "files of the transfers done, by direction: %s" % fl)
ok([s.value for s in by_name.get("rdmaxfer_start_time_seconds", [])] == [1764950400.123456], "start time")
rb = {(s.labels["rail"], s.labels["direction"]): s.value
      for s in by_name.get("rdmaxfer_rail_transferred_bytes_total", [])}
ok(rb == {("mlx5_0", "recv"): 100000000, ("mlx5_0", "send"): 987654321, ("mlx5_1", "recv"): 23456789,
          ("mlx5_1", "send"): 0}, "bytes by rail and direction: %s" % rb)
ru = {s.labels["rail"]: s.value for s in by_name.get("rdmaxfer_rail_up", [])}
ok(ru == {"mlx5_0": 1, "mlx5_1": 0}, "each rail up or down: %s" % ru)
bi = by_name.get("rdmaxfer_build_info", [])
ok(len(bi) == 1 and bi[0].labels == {"version": "0.9.0"} and bi[0].value == 1, "build_info{version} 1")

# The histogram: per direction, cumulative buckets ending in +Inf = _count.
for d, count, total in (("recv", 2, 0.05), ("send", 4, 7262.5)):
    buckets = [(s.labels["le"], s.value) for s in by_name.get("rdmaxfer_transfer_duration_seconds_bucket", [])
               if s.labels["direction"] == d]
    les = [b[0] for b in buckets]
    vals = [b[1] for b in buckets]
    ok(les == ["0.1", "1.0", "10.0", "60.0", "600.0", "3600.0", "+Inf"] or
       les == ["0.1", "1", "10", "60", "600", "3600", "+Inf"], "%s: the bounds %s" % (d, les))
    ok(vals == sorted(vals), "%s: the buckets are cumulative %s" % (d, vals))
    cnt = [s.value for s in by_name.get("rdmaxfer_transfer_duration_seconds_count", []) if s.labels["direction"] == d]
    sm = [s.value for s in by_name.get("rdmaxfer_transfer_duration_seconds_sum", []) if s.labels["direction"] == d]
    ok(cnt == [count] and vals and vals[-1] == count, "%s: +Inf and _count are %d" % (d, count))
    ok(len(sm) == 1 and abs(sm[0] - total) < 1e-6, "%s: _sum is %s" % (d, total))
    # Every finished transfer is in the histogram: _count = the transfers' total.
    tt = sum(s.value for s in by_name.get("rdmaxfer_transfers_total", []) if s.labels["direction"] == d)
    ok(tt == count, "%s: as many observations as finished transfers (%d)" % (d, tt))

done()
