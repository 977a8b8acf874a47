#!/bin/bash
# The counters a user and a collector rely on: after one transfer done and
# one refused (the name exists), `xferctl stats --json` on both daemons has
# the file's bytes in and out, one file each way and the refusal under
# "exists" on both sides, the same for a plain member of group rdmaxfer as
# for root; the Prometheus textfile appears (mode 0644, nothing temporary
# left), is valid text format with the same numbers, a duration histogram
# with one observation per finished transfer, the daemon's start time and
# version, and is rewritten every metrics_interval. While a bandwidth-limited
# transfer runs, the wire byte counters of both daemons advance between two
# files (the published ones do not), and they never go down when it is
# cancelled. In node_exporter's directory it is refused by the sandbox,
# with a warning that says why, until the documented ReadWritePaths=
# drop-in is there.
# testbed-timeout: 360
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

USER_=tb-stats
MIB=$((1024 * 1024))
ALPHA_PROM=/var/lib/rdmaxferd/rdmaxferd.prom
NODE_DIR=/var/lib/prometheus/node-exporter
BETA_PROM=$NODE_DIR/rdmaxferd-beta.prom
DROPIN=/run/systemd/system/rdmaxferd@beta.service.d/98-metrics.conf

# Beta writes into $NODE_DIR every second: stop it before removing the
# directory, or the removal races a new temporary file ("Directory not
# empty") and, as the EXIT trap runs under set -e, fails the scenario.
cleanup() {
        userdel -f "$USER_" 2>/dev/null || true
        systemctl stop "$BETA_UNIT" 2>/dev/null || true
        if [[ -e $DROPIN ]]; then
                rm -f "$DROPIN"
                systemctl daemon-reload || true
        fi
        rm -rf /var/lib/prometheus
}
cleanup
trap cleanup EXIT

# stats_of SOCKET: one compact JSON object.
stats_of() {
        xferctl --socket "$1" stats --json
}

# num JSON DIR KEY: a number of the "recv" or "send" object.
num() {
        sed -nE "s/.*\"$2\":\{(\"bytes\":[^{}]*\{[^{}]*\}[^{}]*)\}.*/\1/p" <<<"$1" |
                sed -nE "s/.*(^|[,{])\"$3\":([0-9]+).*/\2/p"
}

# failed JSON DIR: the "failed" object of DIR, e.g. {"exists":1}.
failed() {
        sed -nE "s/.*\"$2\":\{\"bytes\":[0-9]+,\"files\":[0-9]+,\"failed\":(\{[^}]*\}).*/\1/p" <<<"$1"
}

# prom_valid FILE: every line a HELP, a TYPE, or a sample of a family typed
# before it (a histogram's _bucket, _sum and _count are its family's).
prom_valid() {
        awk '
                /^# HELP rdmaxfer_[a-z_]+ .+$/ { next }
                /^# TYPE rdmaxfer_[a-z_]+ (counter|gauge|histogram)$/ { typed[$3] = $4; next }
                /^rdmaxfer_[a-z_]+(\{[a-z_]+="[a-zA-Z0-9_.+~-]*"(,[a-z_]+="[a-zA-Z0-9_.+~-]*")*\})? [0-9]+(\.[0-9]+)?$/ {
                        name = $1; sub(/\{.*/, "", name)
                        base = name; sub(/_(bucket|sum|count)$/, "", base)
                        if (!(name in typed) && typed[base] != "histogram") { print "untyped: " $0; bad = 1 }
                        n++; next
                }
                { print "bad line: " $0; bad = 1 }
                END { if (n == 0) print "no samples"; exit bad || n == 0 }
        ' "$1"
}

# sample FILE NAME{LABELS}: the value of that sample (not of its HELP or TYPE line).
sample() {
        awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# durations_match FILE DIR: the duration histogram of DIR has one
# observation per finished transfer (its _count and +Inf bucket are the sum
# of rdmaxfer_transfers_total over every result), and cumulative buckets.
durations_match() {
        awk -v d="$2" '
                index($1, "rdmaxfer_transfers_total{direction=\"" d "\",") == 1 { total += $2 }
                index($1, "rdmaxfer_transfer_duration_seconds_bucket{direction=\"" d "\",") == 1 {
                        if ($2 < last) bad = 1
                        last = $2; inf = $2; nb++
                }
                $1 == "rdmaxfer_transfer_duration_seconds_count{direction=\"" d "\"}" { count = $2 }
                END {
                        printf "%s: %d transfers, %d observed, +Inf %d, %d buckets\n", d, total, count, inf, nb
                        exit !(!bad && nb == 7 && count == total && inf == count)
                }' "$1"
}

# rewritten FILE: wait for the next write of FILE (up to 5 s).
rewritten() {
        local ino
        ino=$(stat -c %i "$1")
        wait_for 5 sh -c "[ \"\$(stat -c %i $1)\" != $ino ]" || tb_fail "$1 not rewritten"
}

mkdir -p "$NODE_DIR"
chown rdmaxfer: "$NODE_DIR"
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK" \
        "metrics_file=$ALPHA_PROM" metrics_interval=1
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" \
        "metrics_file=$BETA_PROM" metrics_interval=1
start_peers

tb_log "node_exporter's directory without the drop-in: refused, said so, the daemon runs on"
wait_for 15 sh -c "journalctl -u $BETA_UNIT --no-pager -o cat | grep -q 'metrics: cannot write $BETA_PROM'" ||
        tb_fail "beta did not log that it cannot write $BETA_PROM"
journalctl -u "$BETA_UNIT" --no-pager -o cat | grep "metrics: cannot write" | tail -n 1
journalctl -u "$BETA_UNIT" --no-pager -o cat | grep -q "ReadWritePaths=" ||
        tb_fail "the warning does not point at ReadWritePaths="
[[ ! -e $BETA_PROM ]] || tb_fail "$BETA_PROM written despite ProtectSystem=strict"
systemctl is-active --quiet "$BETA_UNIT" || tb_fail "beta stopped over its metrics file"

tb_log "the drop-in from rdmaxferd(8)"
mkdir -p "$(dirname "$DROPIN")"
printf '[Service]\nReadWritePaths=%s\n' "$NODE_DIR" >"$DROPIN"
tb_run systemctl daemon-reload
tb_run systemctl restart "$BETA_UNIT"
wait_for 15 test -s "$BETA_PROM" || tb_fail "$BETA_PROM not written with the drop-in"
wait_for 15 test -s "$ALPHA_PROM" || tb_fail "$ALPHA_PROM not written"

tb_log "one transfer done, one refused"
make_file "$SRC/m.dat" 100000
make_file "$SRC/m2.dat" 5000
send_ok "$SRC/m.dat"
send_fails "$SRC/m2.dat" "exists" --as m.dat

a=$(stats_of "$ALPHA_SOCK")
b=$(stats_of "$BETA_SOCK")
tb_log "alpha: $a"
tb_log "beta:  $b"
[[ $(num "$a" send bytes) == 100000 ]] || tb_fail "alpha sent bytes: $(num "$a" send bytes), want 100000"
[[ $(num "$a" send files) == 1 ]] || tb_fail "alpha sent files: $(num "$a" send files), want 1"
[[ $(failed "$a" send) == '{"exists":1}' ]] || tb_fail "alpha's send failures: $(failed "$a" send)"
[[ $(num "$a" send failed_total) == 1 ]] || tb_fail "alpha's send failed_total"
[[ $(num "$a" recv files) == 0 && $(failed "$a" recv) == '{}' ]] || tb_fail "alpha received something"
[[ $(num "$b" recv bytes) == 100000 ]] || tb_fail "beta received bytes: $(num "$b" recv bytes), want 100000"
[[ $(num "$b" recv files) == 1 ]] || tb_fail "beta received files: $(num "$b" recv files), want 1"
[[ $(failed "$b" recv) == '{"exists":1}' ]] || tb_fail "beta's receive failures: $(failed "$b" recv)"
[[ $(num "$b" send files) == 0 ]] || tb_fail "beta sent something"
# The receiver lets go of a refused transfer's slots once the sender has hung up.
idle() {
        local j
        j=$(stats_of "$1")
        [[ $j == *'"ring":{"recv":{"held":0,"slots":64},"send":{"held":0,"slots":64}}'* &&
           $(num "$j" send active) == 0 && $(num "$j" recv active) == 0 && $(num "$j" send queued) == 0 ]]
}
for s in "$ALPHA_SOCK" "$BETA_SOCK"; do
        wait_for 10 idle "$s" || tb_fail "not idle: $(stats_of "$s")"
done
xferctl --socket "$BETA_SOCK" stats

tb_log "a plain member of group rdmaxfer sees the same counters"
useradd --no-create-home --shell /usr/sbin/nologin -G rdmaxfer "$USER_"
u=$(setpriv --reuid="$USER_" --regid="$(id -g "$USER_")" --init-groups -- \
        xferctl --socket "$BETA_SOCK" stats --json)
[[ $(num "$u" recv bytes) == 100000 && $(failed "$u" recv) == '{"exists":1}' ]] ||
        tb_fail "the user's stats differ: $u"

tb_log "the textfiles"
# Rewritten since the transfers ended (metrics_interval 1 s).
rewritten "$ALPHA_PROM"
rewritten "$BETA_PROM"
for f in "$ALPHA_PROM" "$BETA_PROM"; do
        prom_valid "$f" || tb_fail "$f is not valid text format"
        [[ $(stat -c %a "$f") == 644 ]] || tb_fail "$f mode $(stat -c %a "$f"), want 644"
        # A write in progress has one for a moment; one left behind stays.
        wait_for 5 sh -c "[ -z \"\$(find '$(dirname "$f")' -maxdepth 1 -name '.*.tmp')\" ]" ||
                tb_fail "temporary files left: $(find "$(dirname "$f")" -maxdepth 1 -name '.*.tmp')"
done
[[ $(sample "$BETA_PROM" rdmaxfer_received_bytes_total) == 100000 ]] || tb_fail "beta's file: received bytes"
[[ $(sample "$BETA_PROM" 'rdmaxfer_transfers_total{direction="recv",result="ok"}') == 1 ]] ||
        tb_fail "beta's file: ok"
[[ $(sample "$BETA_PROM" 'rdmaxfer_transfers_total{direction="recv",result="exists"}') == 1 ]] ||
        tb_fail "beta's file: exists"
[[ $(sample "$ALPHA_PROM" rdmaxfer_sent_bytes_total) == 100000 ]] || tb_fail "alpha's file: sent bytes"
[[ $(sample "$ALPHA_PROM" 'rdmaxfer_transfers_total{direction="send",result="exists"}') == 1 ]] ||
        tb_fail "alpha's file: exists"
[[ $(sample "$ALPHA_PROM" 'rdmaxfer_ring_slots{ring="send",state="free"}') == 64 ]] ||
        tb_fail "alpha's file: send pool"
# The wire: at least the file's bytes (the refused one moved none).
r=$(sample "$BETA_PROM" 'rdmaxfer_transferred_bytes_total{direction="recv"}')
w=$(sample "$ALPHA_PROM" 'rdmaxfer_transferred_bytes_total{direction="send"}')
tb_log "on the wire: beta received $r bytes, alpha sent $w"
((r >= 100000 && w >= 100000)) || tb_fail "transferred bytes: beta received $r, alpha sent $w; want 100000 or more"
for f in "$ALPHA_PROM" "$BETA_PROM"; do
        for d in recv send; do
                durations_match "$f" "$d" || tb_fail "$f: the $d duration histogram does not match the transfers"
        done
done
[[ $(sample "$ALPHA_PROM" 'rdmaxfer_transfer_duration_seconds_count{direction="send"}') == 2 ]] ||
        tb_fail "alpha's file: two sends in the duration histogram"
grep -E '^rdmaxfer_(transfer|transfers_total|ring_slots|start_time|build_info)' "$BETA_PROM"

tb_log "start time and version"
v=$(rdmaxferd --version | awk '{ print $2 }')
[[ $(sample "$BETA_PROM" "rdmaxfer_build_info{version=\"$v\"}") == 1 ]] ||
        tb_fail "beta's file: no build_info for version $v: $(grep build_info "$BETA_PROM")"
st=$(sample "$ALPHA_PROM" rdmaxfer_start_time_seconds)
t0=$(date -d "$(systemctl show -P ExecMainStartTimestamp "$ALPHA_UNIT")" +%s)
tb_log "alpha's process started at $t0 (systemd), its file says $st"
# The daemon takes its time a moment after exec (whole seconds from systemd).
awk -v s="$st" -v t="$t0" 'BEGIN { exit !(s >= t && s < t + 30) }' ||
        tb_fail "alpha's start time $st is not when systemd started it ($t0)"

tb_log "rewritten every interval; the start time stays"
rewritten "$ALPHA_PROM"
[[ $(sample "$ALPHA_PROM" rdmaxfer_start_time_seconds) == "$st" ]] || tb_fail "the start time changed"
! grep -qE '^rdmaxfer_(uptime|rate)' "$ALPHA_PROM" || tb_fail "a sampled rate or an uptime is back"

tb_log "the wire counters advance while a transfer runs, and never go down"
make_zeros "$SRC/slow.dat" $((64 * MIB))
id=$(xferctl send --no-wait --bwlimit 4M "$SRC/slow.dat" "$BETA_ADDR" --as slow.dat) ||
        tb_fail "xferctl send --no-wait --bwlimit 4M failed"
wait_for 20 job_in_state "$id" sending || tb_fail "job $id never started sending"
rewritten "$BETA_PROM"
rewritten "$ALPHA_PROM"
r1=$(sample "$BETA_PROM" 'rdmaxfer_transferred_bytes_total{direction="recv"}')
w1=$(sample "$ALPHA_PROM" 'rdmaxfer_transferred_bytes_total{direction="send"}')
sleep 2
rewritten "$BETA_PROM"
rewritten "$ALPHA_PROM"
r2=$(sample "$BETA_PROM" 'rdmaxfer_transferred_bytes_total{direction="recv"}')
w2=$(sample "$ALPHA_PROM" 'rdmaxfer_transferred_bytes_total{direction="send"}')
job_in_state "$id" sending || tb_fail "job $id is no longer sending: the reads were not during it ($(xferctl status "$id"))"
tb_log "while sending: beta received $r1 then $r2 bytes, alpha sent $w1 then $w2"
((r2 > r1 && r1 >= r && w2 > w1 && w1 >= w)) || tb_fail "the wire counters did not advance during the transfer"
[[ $(sample "$BETA_PROM" rdmaxfer_received_bytes_total) == 100000 &&
   $(sample "$ALPHA_PROM" rdmaxfer_sent_bytes_total) == 100000 ]] ||
        tb_fail "the published counters moved before the file was published"
tb_run xferctl cancel "$id" || tb_fail "cancel failed"
wait_for 30 job_in_state "$id" cancelled || { xferctl status "$id"; tb_fail "job $id not cancelled"; }
for s in "$ALPHA_SOCK" "$BETA_SOCK"; do
        wait_for 10 idle "$s" || tb_fail "not idle after the cancel: $(stats_of "$s")"
done
rewritten "$BETA_PROM"
rewritten "$ALPHA_PROM"
r3=$(sample "$BETA_PROM" 'rdmaxfer_transferred_bytes_total{direction="recv"}')
w3=$(sample "$ALPHA_PROM" 'rdmaxfer_transferred_bytes_total{direction="send"}')
tb_log "after the cancel: beta received $r3 bytes, alpha sent $w3"
((r3 >= r2 && w3 >= w2)) || tb_fail "a wire counter went down when the transfer was cancelled"
[[ $(sample "$ALPHA_PROM" 'rdmaxfer_transfers_total{direction="send",result="cancelled"}') == 1 ]] ||
        tb_fail "alpha's file: the cancel is not counted"
for f in "$ALPHA_PROM" "$BETA_PROM"; do
        for d in recv send; do
                durations_match "$f" "$d" || tb_fail "$f: the $d histogram does not match after the cancel"
        done
done
# The cancelled job ran seconds, more than the 0.1 s bucket holds.
[[ $(sample "$ALPHA_PROM" 'rdmaxfer_transfer_duration_seconds_bucket{direction="send",le="0.1"}') -lt 3 ]] ||
        tb_fail "the cancelled job's seconds are not in the histogram"

tb_log "a reload that empties metrics_file stops the writes"
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK"
tb_run systemctl reload "$ALPHA_UNIT"
sleep 1
ino1=$(stat -c %i "$ALPHA_PROM")
sleep 3
[[ $(stat -c %i "$ALPHA_PROM") == "$ino1" ]] || tb_fail "still rewritten after metrics_file was emptied"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat | grep -q "metrics: no longer writing" ||
        tb_fail "alpha did not say it stopped writing"

tb_log "a tree: one transfer on both sides, its files counted alike"
a0=$(stats_of "$ALPHA_SOCK")
b0=$(stats_of "$BETA_SOCK")
t=$SRC/m-tree
rm -rf "$t" "$BETA_IN/m-tree"
mkdir -p "$t/d"
for i in 1 2 3; do make_file "$t/d/f$i" $((i * 1000)); done
make_file "$t/top" 500
send_ok "$t" -r >/dev/null
a1=$(stats_of "$ALPHA_SOCK")
b1=$(stats_of "$BETA_SOCK")
sent=$(($(num "$a1" send files) - $(num "$a0" send files)))
got=$(($(num "$b1" recv files) - $(num "$b0" recv files)))
tb_log "alpha counts $sent files sent, beta $got received (DEST, d, 4 files: 6)"
((sent == 6 && got == 6)) || tb_fail "the tree's files: alpha sent $sent, beta received $got; want 6 each"
sb=$(($(num "$a1" send bytes) - $(num "$a0" send bytes)))
rb=$(($(num "$b1" recv bytes) - $(num "$b0" recv bytes)))
((sb == 6500 && rb == 6500)) || tb_fail "the tree's bytes: alpha sent $sb, beta received $rb; want 6500 each"
rm -rf "$t" "$BETA_IN/m-tree"
