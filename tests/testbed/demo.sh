#!/bin/bash
# The demo transfer: alpha (rdmaxferd.service) sends a 1 GiB file to beta
# (rdmaxferd@beta.service) over SoftRoCE; the receiver's journal entry gives
# the rate (RDMAXFER_MBPS, 10^6 bytes/s).
# testbed-timeout: 1200
. "${TESTBED_LIB:?run me with tests/testbed/testbed run}"

FILE=/var/tmp/demo-1GiB.bin
NAME=$(basename "$FILE")

peers_configure
tb_run systemctl start rdmaxferd.service rdmaxferd@beta.service
systemctl --no-pager --lines=0 status rdmaxferd.service rdmaxferd@beta.service

tb_log "creating $FILE (1 GiB of random data)"
dd if=/dev/urandom of="$FILE" bs=1M count=1024 status=none

tb_run xferctl send "$FILE" "$BETA_ADDR"

received=/var/lib/rdmaxferd-beta/incoming/$NAME
wait_for 60 test -f "$received" || tb_fail "$received did not appear"
tb_run cmp "$FILE" "$received" || tb_fail "received file differs"
tb_log "received intact: $received"

tb_log "beta's journal entry for the file:"
journalctl -u rdmaxferd@beta.service -o verbose --no-pager \
        MESSAGE_ID=21177541c9c64eadac5b1c2700c1e715 | tee "$TESTBED_SHARE/demo-journal.txt"
grep -q 'RDMAXFER_MBPS=' "$TESTBED_SHARE/demo-journal.txt" || tb_fail "no RDMAXFER_MBPS in beta's journal"
grep -E 'MESSAGE=|RDMAXFER_(BYTES|USEC|MBPS)=' "$TESTBED_SHARE/demo-journal.txt"
