#!/bin/bash
# --sync=digest where reading a file for its digest takes longer than
# peer_timeout (2 s here; a 512 MiB file takes about 5 s under TCG), on
# either side, and nobody gives up:
#  1. the first file of a job, read before connecting: the connect
#     deadline starts once its digest is in; a file that needs several
#     lanes and is skipped goes on over one (wire.h, Sync);
#  2. a later file, read while the receiver waits between two files: WAIT
#     every second keeps it waiting;
#  3. the receiver's copy without user.rdmaxfer.digest: the receiver reads
#     it before it answers, and its empty CREDIT every second keeps the
#     sender waiting.
# Each one is skipped (the receiver has the very file), with exit 0.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure peer_timeout=2
start_peers
make_zeros "$SRC/big.dat" $((512 * 1024 * 1024))
make_file "$SRC/small.dat" 1000
t0=$(date +%s.%N)
sum=$(xferctl sum "$SRC/big.dat") || tb_fail "xferctl sum failed"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
tb_log "xferctl sum of 512 MiB took $took s (peer_timeout 2 s)"
awk -v t="$took" 'BEGIN { exit !(t > 2) }' || tb_log "note: faster than peer_timeout here: the waits below are not exercised"
# The receiver has the very file, with the digest it would have stored.
# Allocated, not sparse, as the source: read whole for its digest.
fallocate -l $((512 * 1024 * 1024)) "$BETA_IN/big.dat" || tb_fail "fallocate"
setfattr -n user.rdmaxfer.digest -v "${sum%% *}" "$BETA_IN/big.dat" || tb_fail "setfattr"

rc=0
out=$(xferctl send "$SRC/big.dat" "$BETA_ADDR" --sync=digest 2>&1) || rc=$?
tb_log "1. the first file: exit $rc: $out"
((rc == 0)) && [[ $out == *skipped* ]] || tb_fail "reading the first file for its digest ended the job"

rc=0
out=$(xferctl send "$SRC/small.dat" "$SRC/big.dat" "$BETA_ADDR" --sync=digest 2>&1) || rc=$?
tb_log "2. a later file: exit $rc: $out"
((rc == 0)) && [[ $out == *"1 skipped"* ]] || tb_fail "reading a later file for its digest ended the session"
same_file "$SRC/small.dat" "$BETA_IN/small.dat"
journalctl -u "$BETA_UNIT" --no-pager -o cat | grep -q "no offer of file" &&
        tb_fail "beta gave up waiting for an offer"

setfattr -x user.rdmaxfer.digest "$BETA_IN/big.dat" || tb_fail "setfattr -x"
rc=0
out=$(xferctl send "$SRC/big.dat" "$BETA_ADDR" --sync=digest 2>&1) || rc=$?
tb_log "3. the receiver reads its copy: exit $rc: $out"
((rc == 0)) && [[ $out == *skipped* ]] || tb_fail "the receiver reading its copy for a digest ended the job"
rm -f "$SRC/big.dat" "$SRC/small.dat" "$BETA_IN/big.dat" "$BETA_IN/small.dat"
tb_log "pass"
