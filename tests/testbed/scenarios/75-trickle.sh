#!/bin/bash
# A peer that is never silent for a whole peer_timeout but barely moves
# (one chunk, or one credit, per window) is cut off by min_rate, with its
# reason, within one window: on the receiver (rawpeer trickle) and on the
# sender (a receiver that runs 50 ms in every 2 s). min_rate 0 disables it,
# a reload applies it, and honest transfers at the testbed's speed pass
# every window while tricklers are connected. A sender that says "the
# next file is coming" (WAIT) a second at a time between two files is cut
# off too, within 20 x peer_timeout, whatever bytes it claims are left
# (beside the rest, against a daemon of its own);
# and a receiver that says "still verifying" for ever after the last END.
# testbed-timeout: 420
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

RAWPEER=/usr/libexec/rdmaxfer-tests/rawpeer
[[ -x $RAWPEER ]] || tb_fail "$RAWPEER is not installed (tests/tools)"
T=4             # peer_timeout: the window
EVERY=3         # a chunk every 3 s: never silent for $T s

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
within() { awk -v t="$1" -v lim="$2" 'BEGIN { exit !(t <= lim) }'; }
beta_cursor() { journalctl -u "$BETA_UNIT" -n 1 --no-pager -o export | sed -n 's/^__CURSOR=//p'; }
beta_logged() { journalctl -u "$BETA_UNIT" --no-pager -o cat --after-cursor "$1" | grep -E "$2"; }

# trickle NAME: a rawpeer trickler against beta, in the background ($! is its pid).
trickle() {
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" --every $EVERY --timeout 60 trickle \
                >"$TESTBED_SHARE/$1.out" 2>&1 &
}

# trickle_cut PID NAME LIMIT [SINCE]: the trickler got its RESULT (rawpeer
# exit 0) within LIMIT s of SINCE (now at the call), or without SINCE,
# within LIMIT s of its ACCEPT (as rawpeer measured it).
trickle_cut() {
        local pid=$1 name=$2 limit=$3 since=${4:-} rc=0 took
        wait "$pid" || rc=$?
        [[ -n $since ]] && took=$(secs "$since" "$(now)")
        sed 's/^/    /' "$TESTBED_SHARE/$name.out"
        ((rc == 0)) || tb_fail "$name: not cut off as a trickler (rawpeer exit $rc)"
        [[ -n $since ]] || took=$(sed -n 's/.* chunks of [0-9]* bytes in \([0-9.]*\) s, then:$/\1/p' "$TESTBED_SHARE/$name.out")
        [[ -n $took ]] || tb_fail "$name: rawpeer did not say when it was cut off"
        within "$took" "$limit" || tb_fail "$name: cut off after ${took} s, over the bound of $limit s"
        tb_log "$name: cut off after ${took} s (bound $limit s, from $([[ -n $since ]] && echo the reload || echo its accept))"
}

# Beta sees the trickle: "16 KiB in the last 4.0 s" (a chunk is 16 KiB).
SLOW_RE="trickle\.dat failed: protocol error: sender too slow: [0-9.]+ KiB in the last ($T|$((T + 1))|$((T + 2)))\.[0-9] s, min_rate 1 MiB/s"

tb_log "min_rate 0: a trickler lives through windows; a reload to the default cuts it off"
# Each cut-off and refusal must be final here, not retried (97-retry retries).
peers_configure peer_timeout=$T min_rate=0 retry_max=0
start_peers

# Issue 32 M1: between two files of a session the sender may say "the next
# one is coming" (WAIT) while it reads it for its digest, but not for
# longer than reading the job's bytes left takes, and never more than 20 x
# peer_timeout, whatever those bytes are (16 TiB here, the sender's claim).
# Against a daemon of its own on beta's address (peer_timeout 2 s), so
# that its 40 s go by beside every other case; judged at the end.
WT_UNIT=rdmaxferd@wt.service
WT_CONF=/etc/rdmaxferd/wt.conf
WT_IN=/var/lib/rdmaxferd-wt/incoming
WT_PORT=7496
_tb_write_conf "$WT_CONF" "$BETA_ADDR" "$WT_IN" /run/rdmaxferd-wt/control.sock port=$WT_PORT \
        peer_timeout=2 min_rate=0 retry_max=0
tb_run systemctl start "$WT_UNIT" || tb_fail "starting $WT_UNIT failed"
wait_for 10 rdma_listening $WT_PORT || tb_fail "$WT_UNIT is not listening on $WT_PORT"
wt_cur=$(journalctl -u "$WT_UNIT" -n 1 --no-pager -o export | sed -n 's/^__CURSOR=//p')
"$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" --port $WT_PORT --timeout 120 wait-trickle \
        >"$TESTBED_SHARE/wait-trickle.out" 2>&1 &
wt_pid=$!
cur=$(beta_cursor)
trickle a
pid=$!
sleep $((2 * T + 1))
kill -0 "$pid" 2>/dev/null || { cat "$TESTBED_SHARE/a.out"; tb_fail "min_rate 0: the trickler was cut off"; }
beta_logged "$cur" "trickle\.dat failed" && tb_fail "min_rate 0: beta failed the trickler"
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" peer_timeout=$T
t0=$(now)
tb_run systemctl reload "$BETA_UNIT"
# The open window closes within $T s of the reload and is judged by then.
trickle_cut "$pid" a $((T + 2)) "$t0"
wait_for 10 beta_logged "$cur" "$SLOW_RE" || tb_fail "beta did not log the trickler's reason"
beta_logged "$cur" "applied .*min_rate|$SLOW_RE" | sed 's/^/    beta: /'

tb_log "max_transfers - 1 tricklers and an honest 128 MiB send at once: it passes every window"
cur=$(beta_cursor)
pids=()
for i in 1 2 3; do
        trickle "b$i"
        pids+=($!)
done
make_file "$SRC/honest.dat" $((128 * 1024 * 1024))
sleep 1
ts=$(now)
send_ok "$SRC/honest.dat"
tb_log "the honest send took $(secs "$ts" "$(now)") s with peer_timeout $T s, min_rate 1 MiB/s"
same_file "$SRC/honest.dat" "$BETA_IN/honest.dat"
for i in 1 2 3; do trickle_cut "${pids[i - 1]}" "b$i" $((T + 1)); done
[[ $(beta_logged "$cur" "$SLOW_RE" | wc -l) == 3 ]] || tb_fail "beta did not log 3 tricklers too slow"

tb_log "max_transfers (4) tricklers hold every place: an honest send is refused busy until they are cut off"
cur=$(beta_cursor)
pids=()
t0=$(now)
for i in 1 2 3 4; do
        trickle "c$i"
        pids+=($!)
done
wait_for 10 bash -c "journalctl -u $BETA_UNIT -o cat --after-cursor '$cur' | grep -c 'receiving trickle.dat' | grep -qx 4" ||
        tb_fail "beta did not accept 4 tricklers"
make_file "$SRC/meanwhile.dat" 1000000
send_fails "$SRC/meanwhile.dat" "busy: 4 transfers already receiving"
for i in 1 2 3 4; do trickle_cut "${pids[i - 1]}" "c$i" $((T + 1)); done
# Their places come back as their connections are reaped, a moment later.
wait_for 10 xferctl send "$SRC/meanwhile.dat" "$BETA_ADDR" || tb_fail "no honest send got in after the cut-off"
same_file "$SRC/meanwhile.dat" "$BETA_IN/meanwhile.dat"
tb_log "after the cut-off, $(secs "$t0" "$(now)") s after the tricklers came, the honest send got in"
incoming_clean "$BETA_IN" honest.dat meanwhile.dat

tb_log "max_transfers_per_host 2 (a reload): two tricklers from alpha's host, and nothing more from it"
cur=$(beta_cursor)
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" peer_timeout=$T max_transfers_per_host=2
tb_run systemctl reload "$BETA_UNIT"
wait_for 10 beta_logged "$cur" "applied .*max_transfers_per_host" ||
        tb_fail "beta did not say it applied max_transfers_per_host"
cur=$(beta_cursor)
pids=()
for i in 1 2; do
        trickle "d$i"
        pids+=($!)
done
wait_for 10 bash -c "journalctl -u $BETA_UNIT -o cat --after-cursor '$cur' | grep -c 'receiving trickle.dat' | grep -qx 2" ||
        tb_fail "beta did not accept 2 tricklers"
send_fails "$SRC/meanwhile.dat" "2 transfers from this host already receiving \\(max_transfers_per_host\\)"
for i in 1 2; do trickle_cut "${pids[i - 1]}" "d$i" $((T + 1)); done
wait_for 10 xferctl send "$SRC/meanwhile.dat" "$BETA_ADDR" --as after-cap.dat ||
        tb_fail "no send got in once the tricklers were cut off"
rm -f "$BETA_IN/after-cap.dat"

tb_log "the mirror: a receiver that returns credits 50 ms in every 2 s is cut off by the sender"
T=6
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK" peer_timeout=$T min_rate=16M retry_max=0
# Beta judges nobody here, and its 4 KiB slots keep what a 50 ms run returns small.
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" peer_timeout=600 min_rate=0 \
        slot_size=4K slot_count=8
restart_peers
beta_pid=$(systemctl show -P MainPID "$BETA_UNIT")
trap 'kill -CONT "$beta_pid" 2>/dev/null || true' EXIT
id=$(xferctl send "$SRC/honest.dat" "$BETA_ADDR" --as slow.dat --no-wait) || tb_fail "submit failed"
id=${id//[^0-9]/}
wait_for 30 job_in_state "$id" sending || tb_fail "job $id never started sending"
t0=$(now)
while ! job_in_state "$id" failed; do
        within "$(secs "$t0" "$(now)")" $((3 * T)) || break
        kill -STOP "$beta_pid"
        sleep 2
        kill -CONT "$beta_pid"
        sleep 0.05
done
kill -CONT "$beta_pid"
wait_for 10 job_in_state "$id" failed || { xferctl status "$id"; tb_fail "job $id did not fail"; }
took=$(secs "$t0" "$(now)")
text=$(xferctl status "$id")
grep -iE "too slow|no progress" <<<"$text" | sed 's/^/    /'
# The window is peer_timeout, or up to a second or two more when alpha's
# own read was in flight as it ended (judged once it is back).
grep -qE "receiver too slow: .* in the last ($T|$((T + 1))|$((T + 2)))\.[0-9] s, min_rate 16 MiB/s" <<<"$text" ||
        { printf '%s\n' "$text"; tb_fail "job $id failed without 'receiver too slow'"; }
within "$took" $((2 * T + 3)) || tb_fail "the slow receiver was cut off after ${took} s, over $((2 * T + 3)) s"
tb_log "the slow receiver was cut off after ${took} s"
systemctl is-active --quiet "$BETA_UNIT" || tb_fail "beta died"
wait_for 30 bash -c "journalctl -u $BETA_UNIT -o export RDMAXFER_FILE=slow.dat | grep -q '^RDMAXFER_RESULT='" ||
        tb_fail "beta logged no entry for the abandoned transfer"
incoming_clean "$BETA_IN" honest.dat meanwhile.dat

# Issue 32 L4: after its ENDs a sender waits for the verdict while the
# receiver says it still verifies (an empty CREDIT a second), but not for
# longer than verifying the job's bytes takes: for an empty file, one
# peer_timeout (the timer looks once a peer_timeout: two at most).
tb_log "a receiver that says 'still verifying' for ever after the END: the sender gives up"
T=2
VPORT=7499
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK" peer_timeout=$T retry_max=0
tb_run systemctl restart "$ALPHA_UNIT" || tb_fail "restart of alpha failed"
"$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" --listen-port $VPORT --timeout 60 verdict-trickle \
        >"$TESTBED_SHARE/verdict.out" 2>&1 &
vpid=$!
wait_for 10 rdma_listening $VPORT || tb_fail "verdict-trickle: rawpeer is not listening"
: >"$SRC/empty.dat"
rc=0
t0=$(now)
out=$(xferctl send "$SRC/empty.dat" "$BETA_ADDR:$VPORT" 2>&1) || rc=$?
took=$(secs "$t0" "$(now)")
vrc=0
wait "$vpid" || vrc=$?
sed 's/^/    /' "$TESTBED_SHARE/verdict.out"
printf '%s\n' "$out" | tail -n 2 | sed 's/^/    /'
((vrc == 0)) || tb_fail "verdict-trickle: the sender did not hang up (rawpeer exit $vrc)"
((rc != 0)) || tb_fail "the send to a receiver that never gave its verdict succeeded"
grep -q "receiver gave no verdict on .*empty\.dat" <<<"$out" || tb_fail "the failure does not say why: $out"
within "$took" $((2 * T + 4)) || tb_fail "the sender waited ${took} s for the verdict, over $((2 * T + 4)) s"
tb_log "the sender gave up after ${took} s of 'still verifying' (peer_timeout $T s)"

tb_log "a WAIT a second between two files, for ever (since the start): cut off within 20 x peer_timeout"
wt_rc=0
wait "$wt_pid" || wt_rc=$?
sed 's/^/    /' "$TESTBED_SHARE/wait-trickle.out"
((wt_rc == 0)) || tb_fail "wait-trickle: not cut off as it must (rawpeer exit $wt_rc)"
wait_for 10 bash -c "journalctl -u $WT_UNIT --no-pager -o cat --after-cursor '$wt_cur' |
        grep -q 'no offer of file 2 in the time reading it allows'" ||
        tb_fail "$WT_UNIT did not say why it gave up on the WAITs"
# rawpeer's own count, from its first WAIT to the REFUSE.
took=$(sed -n 's/.*: WAIT a second for \([0-9.]*\) s, then: .*/\1/p' "$TESTBED_SHARE/wait-trickle.out")
[[ -n $took ]] || tb_fail "wait-trickle: rawpeer did not say how long it sent WAITs"
within "$took" $((20 * 2 + 10)) || tb_fail "the WAITs held the receiver for ${took} s, over $((20 * 2 + 10)) s"
tb_log "cut off after ${took} s of WAITs (peer_timeout 2 s)"
# The session's first file was published; its second never came.
incoming_clean "$WT_IN" sess-a.dat
tb_run systemctl stop "$WT_UNIT"
rm -f "$WT_CONF"
incoming_clean "$BETA_IN" honest.dat meanwhile.dat
