#!/bin/bash
# The demo transfer: alpha (rdmaxferd.service) sends a 1 GiB file to beta
# (rdmaxferd@beta.service) over SoftRoCE with xferctl, the way a user would;
# then beta's journald entry for it, and ib_send_bw at the same message size
# in the same guest for comparison. MB/s = 10^6 bytes/s throughout.
# testbed-timeout: 1800
. "${TESTBED_LIB:?run me with tests/testbed/testbed run}"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

FILE=$SRC/demo-1GiB.bin
NAME=$(basename "$FILE")

peers_configure
start_peers
systemctl --no-pager --lines=0 status "$ALPHA_UNIT" "$BETA_UNIT" || true

tb_log "creating $FILE (1 GiB of random data)"
head -c $((1024 * 1024 * 1024)) /dev/urandom >"$FILE"

tb_log "xferctl send $FILE $BETA_ADDR"
# Under script(1) xferctl has a terminal, so it draws its progress bar.
script -qfec "xferctl send '$FILE' '$BETA_ADDR'" /dev/null | tee "$TESTBED_SHARE/demo-xferctl.txt" ||
        tb_fail "xferctl send failed"
tr '\r' '\n' <"$TESTBED_SHARE/demo-xferctl.txt" | grep -q "^sent $NAME" || tb_fail "xferctl did not report success"

received=$BETA_IN/$NAME
tb_run cmp "$FILE" "$received" || tb_fail "received file differs"
tb_log "received intact: $received ($(stat -c %s "$received") bytes)"

tb_log "beta's journal entry (journalctl -u $BETA_UNIT RDMAXFER_FILE=$NAME):"
journalctl -u "$BETA_UNIT" -o verbose --no-pager RDMAXFER_FILE="$NAME" RDMAXFER_DIRECTION=recv |
        tee "$TESTBED_SHARE/demo-journal.txt"
grep -q 'RDMAXFER_MBPS=' "$TESTBED_SHARE/demo-journal.txt" || tb_fail "no RDMAXFER_MBPS in beta's journal"

tb_log "for comparison, ib_send_bw -R -e with 1 MiB messages, 512 of them, alpha -> beta:"
ib_send_bw -R -e -p 18515 -s 1048576 -n 512 -t 16 -F -d "$BETA_DEV" --source_ip "$BETA_ADDR" >/tmp/ibsrv.txt 2>&1 &
wait_for 30 rdma_listening 18515 || tb_fail "ib_send_bw server did not listen"
ib_send_bw -R -e -p 18515 -s 1048576 -n 512 -t 16 -F -d "$ALPHA_DEV" --source_ip "$ALPHA_ADDR" "$BETA_ADDR" |
        tee /tmp/ibcli.txt | tail -n 3
wait || true
ib=$(awk '$1 == 1048576 && NF >= 4 { printf "%.1f", $4 * 1048576 / 1e6; exit }' /tmp/ibcli.txt)

echo
echo "== demo summary (MB/s = 10^6 bytes/s) =="
echo "xferctl:  $(tr '\r' '\n' <"$TESTBED_SHARE/demo-xferctl.txt" | grep "^sent $NAME" | tail -n 1)"
echo "journald: $(sed -n 's/^ *MESSAGE=//p' "$TESTBED_SHARE/demo-journal.txt" | tail -n 1)"
echo "          RDMAXFER_BYTES=$(jfield "$BETA_UNIT" "$NAME" RDMAXFER_BYTES) RDMAXFER_USEC=$(jfield "$BETA_UNIT" "$NAME" RDMAXFER_USEC) RDMAXFER_MBPS=$(jfield "$BETA_UNIT" "$NAME" RDMAXFER_MBPS) RDMAXFER_LANES=$(jfield "$BETA_UNIT" "$NAME" RDMAXFER_LANES)"
echo "ib_send_bw -R -e, 1 MiB messages, one queue pair: ${ib:-?} MB/s (perftest printed MiB/s; converted)"
