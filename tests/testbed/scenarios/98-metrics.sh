#!/bin/bash
# The counters a user and a collector rely on: after one transfer done and
# one refused (the name exists), `xferctl stats --json` on both daemons has
# the file's bytes in and out, one file each way and the refusal under
# "exists" on both sides, the same for a plain member of group rdmaxfer as
# for root; the Prometheus textfile appears (mode 0644, nothing temporary
# left), is valid text format with the same numbers, and is rewritten
# every metrics_interval. In node_exporter's directory it is refused by the
# sandbox, with a warning that says why, until the documented
# ReadWritePaths= drop-in is there.
# testbed-timeout: 300
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

USER_=tb-stats
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

# prom_valid FILE: every line a HELP, a TYPE, or a sample of a family typed before it.
prom_valid() {
        awk '
                /^# HELP rdmaxfer_[a-z_]+ .+$/ { next }
                /^# TYPE rdmaxfer_[a-z_]+ (counter|gauge)$/ { typed[$3] = 1; next }
                /^rdmaxfer_[a-z_]+(\{[a-z_]+="[a-z0-9_]*"(,[a-z_]+="[a-z0-9_]*")*\})? [0-9]+(\.[0-9]+)?$/ {
                        name = $1; sub(/\{.*/, "", name)
                        if (!(name in typed)) { print "untyped: " $0; bad = 1 }
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
sleep 2         # one interval past the transfers
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
grep -E '^rdmaxfer_(transfers_total|ring_slots|uptime)' "$BETA_PROM"

tb_log "rewritten every interval"
up1=$(sample "$ALPHA_PROM" rdmaxfer_uptime_seconds)
ino1=$(stat -c %i "$ALPHA_PROM")
wait_for 10 sh -c "[ \"\$(stat -c %i $ALPHA_PROM)\" != $ino1 ]" || tb_fail "$ALPHA_PROM not rewritten"
up2=$(sample "$ALPHA_PROM" rdmaxfer_uptime_seconds)
awk -v a="$up1" -v b="$up2" 'BEGIN { exit !(b > a) }' || tb_fail "uptime did not grow: $up1 then $up2"
tb_log "uptime $up1 s, then $up2 s"

tb_log "a reload that empties metrics_file stops the writes"
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK"
tb_run systemctl reload "$ALPHA_UNIT"
sleep 1
ino1=$(stat -c %i "$ALPHA_PROM")
sleep 3
[[ $(stat -c %i "$ALPHA_PROM") == "$ino1" ]] || tb_fail "still rewritten after metrics_file was emptied"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat | grep -q "metrics: no longer writing" ||
        tb_fail "alpha did not say it stopped writing"
