#!/bin/bash
# Multi-rail (issue 35): alpha and beta each drive two rails (two rxe
# devices on two veth pairs, guest/rails.sh) from one daemon, the user
# naming one address of the peer.
#  1. A 256 MiB file: its lanes go over both rails (both veth pairs carry
#     a share of it), xferctl status names both while it runs, it arrives
#     intact, both journal entries name both devices (RDMAXFER_RAILS), and
#     xferctl stats counts each rail's share.
#  2. Four transfers at once: each has a lane on each rail, all intact.
#  2b. One rail slower than the other (tc): once measured, fewer lanes go
#     over it (three and one), and it carries a quarter of the next file.
#  3. A peer with one rail and a peer with two talk both ways: everything
#     goes over the one rail they share, and the journals say so.
#  4. A rail the peer refuses (its allow_peers admits one of the sender's
#     addresses only): the lanes over it cannot connect, the sender leaves
#     the rail out, the retry completes over the other.
# testbed-timeout: 300
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

rails_up
rails_configure 2 2
start_peers

# Bytes a rail's veth pair carried from alpha to beta (rxe: UDP frames).
rail_tx() { netdev_bytes "$1" tx; }

# rails_of UNIT FILE: R, the RDMAXFER_RAILS of UNIT's newest entry for
# FILE (and JF, all of its fields).
rails_of() { jfields_wait "$1" "$2"; R=${JF[RDMAXFER_RAILS]:-}; }

# 1. One big file over both rails.
size=$((256 * 1024 * 1024))
make_file "$SRC/big.dat" "$size"
tx1=$(rail_tx "$ALPHA_NETDEV") tx2=$(rail_tx "$ALPHA2_NETDEV")
xferctl send "$SRC/big.dat" "$BETA_ADDR" >"$SRC/big.out" 2>&1 &
pid=$!
# While it runs, xferctl status names the rails its lanes go over.
wait_for 30 bash -c "xferctl list | grep -q sending" || tb_fail "the transfer never started"
id=$(xferctl list | awk '/sending/ { print $1; exit }')
wait_for 10 bash -c "xferctl status $id | grep -qx 'rails: *$ALPHA_DEV,$ALPHA2_DEV'" ||
        { xferctl status "$id"; tb_fail "xferctl status of the running job does not name both rails"; }
wait "$pid" || { cat "$SRC/big.out" >&2; tb_fail "xferctl send big.dat failed"; }
tb_log "$(tail -n 1 "$SRC/big.out")"
same_file "$SRC/big.dat" "$BETA_IN/big.dat"
d1=$(($(rail_tx "$ALPHA_NETDEV") - tx1)) d2=$(($(rail_tx "$ALPHA2_NETDEV") - tx2))
tb_log "rail 1 ($ALPHA_NETDEV) carried $((d1 >> 20)) MiB, rail 2 ($ALPHA2_NETDEV) $((d2 >> 20)) MiB"
# Four lanes, two on each: each rail carries about half; a quarter at least.
((d1 > size / 4 && d2 > size / 4)) || tb_fail "the file did not go over both rails ($d1 and $d2 bytes of $size)"
rails_of "$ALPHA_UNIT" big.dat
[[ $R == "$ALPHA_DEV,$ALPHA2_DEV" ]] || tb_fail "alpha's journal names rails '$R', not $ALPHA_DEV,$ALPHA2_DEV"
[[ ${JF[RDMAXFER_LANES]:-} -ge 2 ]] || tb_fail "alpha's journal says ${JF[RDMAXFER_LANES]:-no} lanes"
rails_of "$BETA_UNIT" big.dat
[[ $R == "$BETA_DEV,$BETA2_DEV" ]] || tb_fail "beta's journal names rails '$R', not $BETA_DEV,$BETA2_DEV"
# xferctl stats counts each rail's bytes: a quarter of the file at least each.
stats=$(xferctl --socket "$BETA_SOCK" stats)
printf '%s\n' "$stats" | sed -n '/^rails:/,$p' | sed 's/^/    beta: /'
for dev in "$BETA_DEV" "$BETA2_DEV"; do
        grep -qE "(^rails: +| +)$dev up, [0-9.]+ MiB received" <<<"$stats" || tb_fail "beta's stats do not show $dev up"
done
json=$(xferctl --socket "$BETA_SOCK" stats --json)
for dev in "$BETA_DEV" "$BETA2_DEV"; do
        n=$(grep -o "{\"name\":\"$dev\",\"up\":true,\"recv_bytes\":[0-9]*" <<<"$json" | sed 's/.*://')
        ((${n:-0} > size / 4)) || tb_fail "beta's stats --json: $dev not up with its share: $json"
done

# 2. Four at once: lanes shared out, each transfer still on both rails.
pids=()
for i in 1 2 3 4; do
        make_file "$SRC/c$i.dat" $((16 * 1024 * 1024 + i * 4097))
done
for i in 1 2 3 4; do
        xferctl send "$SRC/c$i.dat" "$BETA_ADDR" >"$SRC/c$i.out" 2>&1 &
        pids+=($!)
done
for i in 1 2 3 4; do
        wait "${pids[$((i - 1))]}" || { cat "$SRC/c$i.out" >&2; tb_fail "concurrent transfer $i failed"; }
        same_file "$SRC/c$i.dat" "$BETA_IN/c$i.dat"
        rails_of "$BETA_UNIT" "c$i.dat"
        [[ $R == "$BETA_DEV,$BETA2_DEV" ]] || tb_fail "concurrent transfer $i went over '$R' only"
done

# 2b. Rails of unequal speed: alpha's second rail capped by tc at 10 MB/s,
# a quarter or less of what its first carries here. The first transfer
# (daemons just started: nothing measured) goes two lanes over each; it
# measures what each rail pair delivered, and the next puts fewer lanes
# on the slow one (one of four), which carries a quarter of it.
stop_peers
rails_configure 2 2 log_level=debug
start_peers
tc qdisc replace dev "$ALPHA2_NETDEV" root tbf rate 80mbit burst 256kb limit 4mb ||
        tb_fail "tc: capping $ALPHA2_NETDEV failed"
size=$((48 * 1024 * 1024))
make_file "$SRC/w.dat" "$size"
lanes=()
for w in w1 w2; do
        tx2=$(rail_tx "$ALPHA2_NETDEV")
        tb_log "$w: $(send_ok "$SRC/w.dat" --as "$w.dat")"
        same_file "$SRC/w.dat" "$BETA_IN/$w.dat"
        d2=$(($(rail_tx "$ALPHA2_NETDEV") - tx2))
        rails_of "$ALPHA_UNIT" "$w.dat"
        tb_log "$w: lanes over $R: ${JF[RDMAXFER_RAIL_LANES]:-?}; the capped rail carried $((d2 >> 20)) MiB"
        lanes+=("${JF[RDMAXFER_RAIL_LANES]:-}")
done
tc qdisc del dev "$ALPHA2_NETDEV" root
journalctl -u "$ALPHA_UNIT" --no-pager -o cat | grep "rail pair" | sed 's/^/    alpha: /'
[[ ${lanes[0]} == 2,2 ]] || tb_fail "with nothing measured, the first transfer put lanes '${lanes[0]}' over $R, not 2,2"
[[ ${JF[RDMAXFER_RAIL_LANES]:-} == 3,1 ]] ||
        tb_fail "after a transfer over a slow rail, the next put lanes '${JF[RDMAXFER_RAIL_LANES]:-}' over $R, not 3,1"
((d2 < size * 3 / 8)) || tb_fail "the slow rail carried $d2 bytes of $size with one lane of four"
rails_of "$BETA_UNIT" w2.dat
[[ ${JF[RDMAXFER_RAIL_LANES]:-} == 3,1 ]] || tb_fail "beta's journal says lanes '${JF[RDMAXFER_RAIL_LANES]:-}' over $R"

# 3. alpha back to one rail; beta keeps two. Both ways.
stop_peers
rails_configure 1 2
start_peers
make_file "$SRC/one.dat" $((8 * 1024 * 1024 + 1))
tb_log "$(send_ok "$SRC/one.dat")"
same_file "$SRC/one.dat" "$BETA_IN/one.dat"
rails_of "$BETA_UNIT" one.dat
[[ $R == "$BETA_DEV" ]] || tb_fail "from a one-rail peer, beta's journal names '$R', not $BETA_DEV"
out=$(xferctl --socket "$BETA_SOCK" send "$SRC/one.dat" "$ALPHA_ADDR" --as back.dat 2>&1) ||
        tb_fail "beta (two rails) could not send to alpha (one): $out"
same_file "$SRC/one.dat" "$ALPHA_IN/back.dat"
rails_of "$BETA_UNIT" back.dat
[[ $R == "$BETA_DEV" ]] || tb_fail "to a one-rail peer, beta's journal names '$R', not $BETA_DEV"
tb_log "two rails to one and one to two: over $BETA_DEV alone"

# 4. Two rails each again, but beta admits only alpha's first address
# (allow_peers naming one rail's subnet, as an admin may forget the
# others): the lanes over alpha's second rail are refused, the attempt
# fails, alpha leaves that rail out of new transfers for a while, and the
# retry goes over the first rail alone.
stop_peers
rails_configure 2 2 allow_peers=198.18.0.0/24
start_peers
tb_log "$(send_ok "$SRC/one.dat" --as warm.dat)"
t0=$(date +%s)
out=$(xferctl send "$SRC/c1.dat" "$BETA_ADDR" --as around.dat 2>&1) || { printf '%s\n' "$out" >&2; tb_fail "the send over a refused rail did not complete"; }
printf '%s\n' "$out" | sed 's/^/    | /'
same_file "$SRC/c1.dat" "$BETA_IN/around.dat"
journalctl -u "$ALPHA_UNIT" --no-pager --since "@$t0" -o cat | grep "leave the rail out" | sed 's/^/    alpha: /' || true
journalctl -u "$ALPHA_UNIT" --no-pager --since "@$t0" -o cat | grep -q "rail $ALPHA2_DEV: lane .* could not connect" ||
        tb_fail "alpha did not say it left $ALPHA2_DEV out"
rails_of "$ALPHA_UNIT" around.dat
[[ $R == "$ALPHA_DEV" && ${JF[RDMAXFER_ATTEMPT]:-} -ge 2 ]] ||
        tb_fail "the retry went over '$R' (attempt ${JF[RDMAXFER_ATTEMPT]:-?}), not $ALPHA_DEV alone"
