#!/bin/bash
# Every wait on the peer has a deadline (peer_timeout): a receiver that goes
# silent mid-transfer, or never answers a connection, fails the sender's job
# with a clear reason within the documented time; the sender keeps answering
# its control socket meanwhile, and both daemons serve the next transfer.
# The receiver is made silent the bluntest way: SIGSTOP (its kernel still
# completes what was posted, then nothing more comes back).
# testbed-timeout: 300
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

T=5
# Each deadline must fail its job, not be retried (97-retry retries).
peers_configure peer_timeout=$T retry_max=0
start_peers
beta_pid=$(systemctl show -P MainPID "$BETA_UNIT")
((beta_pid > 0)) || tb_fail "no MainPID for $BETA_UNIT"
trap 'kill -CONT "$beta_pid" 2>/dev/null || true' EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# expect_failed ID PATTERN SINCE: job ID fails within T + 10 s of SINCE,
# saying PATTERN; alpha's control socket answers meanwhile.
expect_failed() {
        local id=$1 pattern=$2 since=$3 took text
        xferctl list >/dev/null || tb_fail "alpha's control socket did not answer while waiting"
        wait_for $((T + 20)) job_in_state "$id" failed || { xferctl status "$id"; tb_fail "job $id did not fail"; }
        took=$(secs "$since" "$(now)")
        text=$(xferctl status "$id")
        tb_log "job $id failed after ${took} s: $(grep -iE 'error|text|reason' <<<"$text" | head -n 1)"
        grep -qE "$pattern" <<<"$text" || { printf '%s\n' "$text"; tb_fail "job $id failed without '$pattern'"; }
        awk -v t="$took" -v lim=$((T + 10)) 'BEGIN { exit !(t <= lim) }' ||
                tb_fail "job $id took ${took} s to fail, over peer_timeout $T s + 10 s"
}

tb_log "a receiver that goes silent mid-transfer"
make_zeros "$SRC/big.dat" $((384 * 1024 * 1024))
id=$(xferctl send "$SRC/big.dat" "$BETA_ADDR" --no-wait) || tb_fail "submit failed"
id=${id//[^0-9]/}
wait_for 60 job_in_state "$id" sending || tb_fail "job never started sending"
sleep 1
t0=$(now)
tb_run kill -STOP "$beta_pid"
# Frozen early in a min_rate window (peer_timeout long too), it may be
# judged too slow at the window's close rather than silent a moment later.
expect_failed "$id" "(no progress from receiver for $T s|receiver too slow: .* in the last ($T|$((T + 1))|$((T + 2)))\.[0-9] s)" "$t0"
tb_run kill -CONT "$beta_pid"
# Beta sees the hang-up once it runs again and publishes nothing.
wait_for 30 bash -c "journalctl -u $BETA_UNIT -o export RDMAXFER_FILE=big.dat | grep -q '^RDMAXFER_RESULT='" ||
        tb_fail "beta logged no entry for the abandoned transfer"
[[ $(jfield "$BETA_UNIT" big.dat RDMAXFER_RESULT) != ok ]] || tb_fail "beta says ok"
rm -f "$SRC/big.dat"

tb_log "a receiver that never answers the connection"
make_file "$SRC/small.dat" 1000000
tb_run kill -STOP "$beta_pid"
t0=$(now)
id=$(xferctl send "$SRC/small.dat" "$BETA_ADDR" --no-wait) || tb_fail "submit failed"
id=${id//[^0-9]/}
expect_failed "$id" "(no connection to the receiver within $T s|receiver did not answer the offer within $T s|peer unreachable)" "$t0"
tb_run kill -CONT "$beta_pid"
systemctl is-active --quiet "$BETA_UNIT" || tb_fail "$BETA_UNIT died"

tb_log "both daemons still serve"
# Beta may still be dropping the connection it found on waking.
sleep $((T + 1))
incoming_clean "$BETA_IN"
make_file "$SRC/after.dat" 3333333
send_ok "$SRC/after.dat"
same_file "$SRC/after.dat" "$BETA_IN/after.dat"
