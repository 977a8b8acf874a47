#!/bin/bash
# SIGTERM (systemctl stop) in the middle of a transfer: the receiver exits
# cleanly (status 0), publishes nothing, and starts again ready to receive.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

# The sender's retries would outlast the stopped receiver: this is about the stop.
peers_configure retry_max=0
start_peers
make_zeros "$SRC/big.dat" $((1024 * 1024 * 1024))

xferctl send "$SRC/big.dat" "$BETA_ADDR" >"$SRC/term.out" 2>&1 &
pid=$!
wait_for 60 bash -c "xferctl list | grep -q sending" || tb_fail "transfer never started"
sleep 0.5
tb_run systemctl stop "$BETA_UNIT"
[[ $(systemctl show -P Result "$BETA_UNIT") == success ]] || tb_fail "beta did not stop cleanly"
[[ $(systemctl show -P ExecMainStatus "$BETA_UNIT") == 0 ]] || tb_fail "beta exit status not 0"
rc=0
wait "$pid" || rc=$?
tb_log "xferctl: $(tail -n 1 "$SRC/term.out") (exit $rc)"
((rc != 0)) || tb_fail "xferctl reported success for an interrupted transfer"
incoming_clean "$BETA_IN"

tb_log "beta starts again and receives"
tb_run systemctl start "$BETA_UNIT"
make_file "$SRC/after.dat" $((5 * 1024 * 1024 + 3))
send_ok "$SRC/after.dat" >/dev/null
same_file "$SRC/after.dat" "$BETA_IN/after.dat"

tb_log "SIGTERM on the sending side fails its job cleanly too"
xferctl send "$SRC/big.dat" "$BETA_ADDR" --as big2.dat >"$SRC/term2.out" 2>&1 &
pid=$!
wait_for 60 bash -c "xferctl list | grep -q sending" || tb_fail "second transfer never started"
tb_run systemctl stop "$ALPHA_UNIT"
[[ $(systemctl show -P Result "$ALPHA_UNIT") == success ]] || tb_fail "alpha did not stop cleanly"
wait "$pid" || true
wait_for 15 bash -c "journalctl -u $BETA_UNIT -o export RDMAXFER_FILE=big2.dat | grep -q '^RDMAXFER_RESULT='" ||
        tb_fail "beta logged no entry for the aborted transfer"
incoming_clean "$BETA_IN" after.dat
