#!/bin/bash
# A cancelled transfer leaves nothing published and nothing half-written,
# and both daemons carry on.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure
start_peers
make_zeros "$SRC/big.dat" $((1024 * 1024 * 1024))

id=$(xferctl send "$SRC/big.dat" "$BETA_ADDR" --no-wait) || tb_fail "submit failed"
id=${id//[^0-9]/}
tb_log "job $id submitted"
wait_for 60 job_in_state "$id" sending || tb_fail "job never started sending"
sleep 0.5
tb_run xferctl cancel "$id" || tb_fail "cancel failed"
wait_for 30 job_in_state "$id" cancelled || { xferctl status "$id"; tb_fail "job not cancelled"; }
xferctl status "$id"
# The receiver notices the hang-up; give it a moment to tear down.
wait_for 10 bash -c "journalctl -u $BETA_UNIT -o export RDMAXFER_FILE=big.dat | grep -q '^RDMAXFER_RESULT='" ||
        tb_fail "beta logged no entry for the aborted transfer"
[[ $(jfield "$BETA_UNIT" big.dat RDMAXFER_RESULT) != ok ]] || tb_fail "beta says ok"
incoming_clean "$BETA_IN"
[[ -z $(find /var/lib/rdmaxferd-beta -name '*.part') ]] || tb_fail "partial file left behind"

tb_log "both daemons still work"
make_file "$SRC/after.dat" 777777
send_ok "$SRC/after.dat" >/dev/null
same_file "$SRC/after.dat" "$BETA_IN/after.dat"
