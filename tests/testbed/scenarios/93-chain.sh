#!/bin/bash
# Relay chains (issue 13; rdmaxferd(8) "Relay chains"): `xferctl send FILE
# NODELIST` from alpha to beta, gamma and delta goes once over alpha's link,
# and each node passes it on while it receives it.
#   1. The chain delivers an identical file everywhere; beta's and gamma's
#      receive entries name the next node (RDMAXFER_RELAY), alpha's send
#      entry counts the nodes (RDMAXFER_NODES, _OK); each node's own send
#      is in its journal too, and sent chunks straight from its receive
#      ring (RDMAXFER_FORWARDED_BYTES); the data of the hops overlapped
#      (delta's receive began before beta's ended).
#   2. gamma with relay = no (after a reload): gamma refuses, named with
#      "this node does not relay (relay = no)"; beta goes around it, so
#      beta and delta get the file; exit 23 (partial).
#   3. gamma SIGKILLed while the file flows through it (links capped so
#      that it takes seconds), once `xferctl status` on alpha shows delta
#      has 4 MiB or more (per-node progress, told up the chain by each
#      relay every second): beta goes around it to delta, which continues
#      from what it kept of gamma's send (a relayed offer: delta's
#      receive entry has RDMAXFER_RESUMED_BYTES > 0, beta logs "the
#      receiver kept"); beta and delta get the file, gamma is named as
#      failed, exit 23; nothing half-written is visible on gamma.
#   4. alpha (the origin) SIGKILLed mid-chain: beta, gamma and delta each
#      fail their receive (each relay cancels the send it relays on) and
#      publish nothing. Every node's peer_timeout is 8 s (what the relays
#      wait for a killed origin), not the default 30.
#   5. delta SIGSTOPped mid-chain: gamma's send to it
#      fails on its silence while everything upstream goes on (a relay
#      holds at most half its incoming slots for its next hop); beta and
#      gamma get the file, delta is named, exit 23. Every daemon still
#      serves (the chain once more).
#   6. A tree (-r) through the chain: identical on beta, gamma and delta
#      (symlinks, hard links, modes, mtimes, packed and lone files); with gamma not
#      relaying, beta offers the whole tree to delta instead, exit 23.
#   7. A tree whose one big entry takes longer to reach each relay than
#      peer_timeout (3 s): the next node hears WAIT every second and waits;
#      each relay passes that entry on while it comes in (delta's receive
#      of it began before beta's ended), as it does a single file.
# testbed-timeout: 420
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

MIB=$((1024 * 1024))
PORT=7470
NODES="$BETA_ADDR,$GAMMA_ADDR,$DELTA_ADDR"

# chain FILE [xferctl options]: send FILE to the three; sets OUT and RC.
chain() {
        local file=$1
        shift
        RC=0
        OUT=$(xferctl send "$file" "$NODES" "$@" 2>&1) || RC=$?
        sed 's/^/    | /' <<<"$OUT"
}

# chain_bg NAME: send $SRC/NAME.dat to the three in the background, once
# (no retries); $SRC/NAME.out gets its output, then "rc=N".
chain_bg() {
        rm -f "$SRC/$1.out"
        (
                rc=0
                xferctl send --retries 0 "$SRC/$1.dat" "$NODES" >"$SRC/$1.out" 2>&1 || rc=$?
                echo "rc=$rc" >>"$SRC/$1.out"
        ) &
}

# jlast UNIT MATCH FIELD: FIELD of UNIT's newest entry (since SINCE) that
# matches MATCH (FIELD=VALUE) and has it, given up to 10 s for a job's entry
# (one with a RDMAXFER_RESULT) to be in the journal at all: journald writes
# asynchronously, and a node may log its job after the origin's is done.
jlast() {
        local js i

        for ((i = 0; i < 50; i++)); do
                js=$(journalctl -u "$1" --no-pager -o export --since "@$SINCE" "$2" 2>/dev/null | tr -d '\000')
                grep -q '^RDMAXFER_RESULT=' <<<"$js" && break
                sleep 0.2
        done
        sed -n "s/^$3=//p" <<<"$js" | tail -n 1
}

# jvalue UNIT FIELD MATCH...: FIELD of UNIT's newest entry since SINCE
# that matches every MATCH, given up to 10 s to be there (as jlast).
jvalue() {
        local unit=$1 field=$2 v i
        shift 2
        for ((i = 0; i < 50; i++)); do
                v=$(journalctl -u "$unit" --no-pager -o export --since "@$SINCE" "$@" 2>/dev/null | tr -d '\000' |
                        sed -n "s/^$field=//p" | tail -n 1)
                [[ -n $v ]] && break
                sleep 0.2
        done
        printf '%s\n' "$v"
}

# t_receiving UNIT FILE: when UNIT logged "receiving FILE", seconds since the epoch.
t_receiving() {
        journalctl -u "$1" --no-pager -o short-unix --since "@$SINCE" |
                sed -n "s/^\([0-9.]*\) .*: receiving $2 .*/\1/p" | tail -n 1
}

# Delta is stopped (SIGSTOP) in step 5 until gamma gives up on it, 13-15 s
# under TCG: with the unit's WatchdogSec=30, pinged every 15 s, that can
# outlast its watchdog, which then kills it as it should a daemon that
# hangs. This scenario's delta gets longer.
mkdir -p /run/systemd/system/rdmaxferd@delta.service.d
printf '[Service]\nWatchdogSec=120\n' >/run/systemd/system/rdmaxferd@delta.service.d/93-watchdog.conf
systemctl daemon-reload
# peer_timeout 8 s throughout (30 by default): steps 4 and 5 wait on it,
# and step 7 shortens it further.
nodes_up slot_count=16 send_slots=4 max_transfers=2 relay=yes peer_timeout=8

# 1. The whole chain. Paced at the origin (about 2 s for the first hop),
# so that whether delta's data begins while beta's still comes says
# whether the relays pipeline, however fast the guest is: unpaced, the
# 24 MiB were whole on beta (0.43 s at 58 MB/s) before the far end of the
# chain had connected.
SINCE=$(date +%s)
make_file "$SRC/chain.dat" $((24 * MIB))
chain "$SRC/chain.dat" --bwlimit 12M
((RC == 0)) || tb_fail "chain to $NODES: exit $RC"
for n in beta gamma delta; do
        same_file "$SRC/chain.dat" "$(node_in "$n")/chain.dat"
done
[[ $(tail -n 1 <<<"$OUT") == "3 peers: every one sent" ]] || tb_fail "the last line is not the summary"
grep -q "^$BETA_ADDR: sent chain.dat (25165824 bytes) to " <<<"$OUT" || tb_fail "no line for beta's send"
grep -q "^$DELTA_ADDR: sent chain.dat (25165824 bytes), relayed by $GAMMA_ADDR" <<<"$OUT" ||
        tb_fail "delta's line does not say gamma relayed it"
relay_b=$(jlast "$(node_unit beta)" RDMAXFER_DIRECTION=recv RDMAXFER_RELAY)
relay_g=$(jlast "$(node_unit gamma)" RDMAXFER_DIRECTION=recv RDMAXFER_RELAY)
relay_d=$(jlast "$(node_unit delta)" RDMAXFER_DIRECTION=recv RDMAXFER_RELAY)
[[ $relay_b == "$GAMMA_ADDR:$PORT" && $relay_g == "$DELTA_ADDR:$PORT" && -z $relay_d ]] ||
        tb_fail "RDMAXFER_RELAY: beta '$relay_b', gamma '$relay_g', delta '$relay_d'"
[[ $(jlast "$ALPHA_UNIT" RDMAXFER_DIRECTION=send RDMAXFER_NODES) == 3 &&
   $(jlast "$ALPHA_UNIT" RDMAXFER_DIRECTION=send RDMAXFER_NODES_OK) == 3 ]] ||
        tb_fail "alpha's send entry does not count 3 nodes, 3 published"
[[ $(jlast "$(node_unit gamma)" RDMAXFER_DIRECTION=send RDMAXFER_PEER) == "$DELTA_ADDR:$PORT" ]] ||
        tb_fail "gamma's journal has no entry of its own send to delta"
# Relay without copies: each relay sent chunks straight from the slots of
# its receive ring (those that came in before its downstream was ready are
# read back from its copy); the origin is no relay.
fwd_b=$(jlast "$(node_unit beta)" RDMAXFER_DIRECTION=send RDMAXFER_FORWARDED_BYTES)
fwd_g=$(jlast "$(node_unit gamma)" RDMAXFER_DIRECTION=send RDMAXFER_FORWARDED_BYTES)
tb_log "sent straight from the receive ring: beta $fwd_b, gamma $fwd_g of 25165824 bytes"
((${fwd_b:-0} > 0 && ${fwd_g:-0} > 0 && fwd_b <= 25165824 && fwd_g <= 25165824)) ||
        tb_fail "RDMAXFER_FORWARDED_BYTES: beta '$fwd_b', gamma '$fwd_g'"
[[ -z $(jlast "$ALPHA_UNIT" RDMAXFER_DIRECTION=send RDMAXFER_FORWARDED_BYTES) ]] ||
        tb_fail "alpha's send entry has RDMAXFER_FORWARDED_BYTES: it relays nothing"
# Pipelined: the last hop's data began before the first hop's ended (beta's
# data ran from its "receiving" line for its entry's RDMAXFER_USEC).
b0=$(t_receiving "$(node_unit beta)" 'chain\.dat')
b_usec=$(jlast "$(node_unit beta)" RDMAXFER_DIRECTION=recv RDMAXFER_USEC)
d0=$(t_receiving "$(node_unit delta)" 'chain\.dat')
tb_log "beta received from $b0 s for $b_usec us; delta began at $d0 s"
awk -v b="$b0" -v u="$b_usec" -v d="$d0" 'BEGIN { exit !(b != "" && u > 0 && d != "" && d < b + u / 1e6) }' ||
        tb_fail "delta began receiving only after beta had the whole file: not pipelined"
tb_log "chain: chain.dat identical on beta, gamma and delta, each hop relayed while it received"

# 2. A node that does not relay.
sed -i 's/^relay = yes$/relay = no/' "$(node_conf gamma)"
reload_applied "$(node_unit gamma)" relay
make_file "$SRC/norelay.dat" $((2 * MIB))
chain "$SRC/norelay.dat" --retries 0
((RC == 23)) || tb_fail "chain through a node with relay = no: exit $RC, not 23 (partial)"
same_file "$SRC/norelay.dat" "$(node_in beta)/norelay.dat"
same_file "$SRC/norelay.dat" "$(node_in delta)/norelay.dat"
[[ ! -e $(node_in gamma)/norelay.dat ]] || tb_fail "gamma has the file though it does not relay"
grep -q "^xferctl: $GAMMA_ADDR: .*this node does not relay (relay = no)" <<<"$OUT" ||
        tb_fail "gamma's refusal is not said, naming gamma"
grep -q "^$DELTA_ADDR: sent norelay.dat (2097152 bytes), relayed by $BETA_ADDR" <<<"$OUT" ||
        tb_fail "delta is not said to have it from beta"
sed -i 's/^relay = no$/relay = yes/' "$(node_conf gamma)"
reload_applied "$(node_unit gamma)" relay
tb_log "relay = no: refused with its reason, the node before went around it, exit 23"

# 3. The middle node dies half-way. Capped links (5 MB/s): 24 MiB takes
# about 5 s a hop, so gamma is killed with the file flowing through it.
link_cap 40mbit alpha beta gamma delta
make_file "$SRC/killed.dat" $((32 * MIB))
chain_bg killed
wait_for 30 bash -c "journalctl -u '$ALPHA_UNIT' --no-pager -o cat --since '@$SINCE' |
        grep -q '^job [0-9]*: a chain of 3 nodes: .*'" || tb_fail "alpha did not start the chain"
id=$(journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "@$SINCE" |
        sed -n 's/^job \([0-9]*\): a chain of 3 nodes: .*/\1/p' | tail -n 1)
# delta's line: "  node 3  198.18.0.4:7470  N of 33554432 bytes (P %)", N >= 4 MiB:
# enough that delta has written some when gamma dies, to keep and resume.
delta_has() {
        local n
        n=$(xferctl status "$id" | sed -nE "s/^  node 3  $DELTA_ADDR:$PORT +([0-9]+) of 33554432 bytes.*/\1/p")
        [[ -n $n ]] && ((n >= 4 * MIB))
}
wait_for 20 delta_has || { xferctl status "$id" >&2; tb_fail "alpha's status never showed delta's bytes"; }
xferctl status "$id" | sed 's/^/    status: /'
tb_run systemctl kill -s KILL "$(node_unit gamma)"
wait
link_uncap alpha beta gamma delta
sed 's/^/    | /' "$SRC/killed.out"
grep -q '^rc=23$' "$SRC/killed.out" || tb_fail "chain with gamma killed: not exit 23 (partial)"
same_file "$SRC/killed.dat" "$(node_in beta)/killed.dat"
same_file "$SRC/killed.dat" "$(node_in delta)/killed.dat"
grep -q "^xferctl: $GAMMA_ADDR: send killed.dat to .* failed" "$SRC/killed.out" || tb_fail "gamma's failure is not said"
grep -q "^$DELTA_ADDR: sent killed.dat (33554432 bytes), relayed by $BETA_ADDR" "$SRC/killed.out" ||
        tb_fail "delta is not said to have it from beta"
journalctl -u "$(node_unit beta)" --no-pager -o cat --since "@$SINCE" | grep -q "relaying killed\.dat to $GAMMA_ADDR:$PORT failed .*going around it" ||
        tb_fail "beta did not log that it went around gamma"
# Around gamma, from where delta stopped: delta kept what gamma sent of the
# relayed file (its partial names no peer), and beta sent only the rest.
kept=$(jvalue "$(node_unit delta)" RDMAXFER_RESUMED_BYTES RDMAXFER_DIRECTION=recv RDMAXFER_FILE=killed.dat \
        RDMAXFER_RESULT=ok)
tb_log "delta's receive from beta kept ${kept:-?} bytes of gamma's"
journalctl -u "$(node_unit delta)" --no-pager -o cat --since "@$SINCE" | grep 'killed\.dat' | sed 's/^/    delta: /'
[[ -n $kept ]] && ((kept > 0 && kept < 32 * MIB)) ||
        tb_fail "delta's receive from beta did not resume (RDMAXFER_RESUMED_BYTES '$kept')"
journalctl -u "$(node_unit beta)" --no-pager -o cat --since "@$SINCE" |
        grep -q "killed\.dat: the receiver kept $kept of 33554432 bytes; sending the rest" ||
        tb_fail "beta did not log that delta kept $kept bytes"
wait_for 30 systemctl is-active --quiet "$(node_unit gamma)" || tb_fail "gamma did not come back"
wait_for 30 test -S "$(node_sock gamma)" || tb_fail "gamma has no control socket after its restart"
incoming_clean "$(node_in gamma)" chain.dat
incoming_clean "$(node_in delta)" chain.dat norelay.dat killed.dat
tb_log "gamma killed half-way: beta went around it, delta resumed, beta and delta have the file, gamma named, nothing half-written"

# 4. The origin dies mid-chain: each relay's receive fails and the send
# it relays on is cancelled with it, down the chain; nobody publishes.
link_cap 40mbit alpha beta gamma delta
make_file "$SRC/orphan.dat" $((32 * MIB))
(xferctl send --retries 0 "$SRC/orphan.dat" "$NODES" >/dev/null 2>&1 || true) &
wait_for 30 bash -c "journalctl -u '$(node_unit delta)' --no-pager -o cat --since '@$SINCE' |
        grep -q ': receiving orphan\.dat'" || tb_fail "delta did not start receiving orphan.dat"
tb_run systemctl kill -s KILL "$ALPHA_UNIT"
wait
link_uncap alpha beta gamma delta
for n in beta gamma delta; do
        wait_for 60 bash -c "journalctl -u '$(node_unit "$n")' --no-pager -o cat --since '@$SINCE' |
                grep -qE 'receive of orphan\.dat (failed|aborted)'" ||
                tb_fail "$n did not fail its receive of orphan.dat"
        [[ ! -e $(node_in "$n")/orphan.dat ]] || tb_fail "$n published a chain whose origin died"
done
wait_for 30 systemctl is-active --quiet "$ALPHA_UNIT" || tb_fail "alpha did not come back"
wait_for 30 test -S "$ALPHA_SOCK" || tb_fail "alpha has no control socket after its restart"
tb_log "the origin killed mid-chain: every relay failed its receive and cancelled its send, nothing published"

# 5. The last node stalls (SIGSTOP) mid-chain (peer_timeout 8 s). gamma
# holds at most half of its incoming slots for delta (relay.h), so gamma's
# own receive, and beta's and alpha's sends, go on at their pace; gamma's
# send to delta fails on delta's silence and delta alone is reported.
link_cap 40mbit alpha beta gamma delta
make_file "$SRC/stall.dat" $((32 * MIB))
chain_bg stall
wait_for 30 bash -c "journalctl -u '$(node_unit delta)' --no-pager -o cat --since '@$SINCE' |
        grep -q ': receiving stall\.dat'" || tb_fail "delta did not start receiving stall.dat"
sleep 1
tb_run systemctl kill -s STOP "$(node_unit delta)"
# Stopped only until gamma gives up on it (8 s of peer_timeout, 13-15 s
# here): a stop that lasted until the job ends could outlast even the
# longer watchdog given delta above.
wait_for 30 bash -c "journalctl -u '$(node_unit gamma)' --no-pager -o cat --since '@$SINCE' |
        grep -q 'send of stall\.dat to $DELTA_ADDR:$PORT failed'" || tb_fail "gamma did not give up on delta"
tb_run systemctl kill -s CONT "$(node_unit delta)"
wait
link_uncap alpha beta gamma delta
sed 's/^/    | /' "$SRC/stall.out"
grep -q '^rc=23$' "$SRC/stall.out" || tb_fail "chain with delta stalled: not exit 23 (partial)"
same_file "$SRC/stall.dat" "$(node_in beta)/stall.dat"
same_file "$SRC/stall.dat" "$(node_in gamma)/stall.dat"
grep -q "^xferctl: $DELTA_ADDR: send stall.dat to .* failed" "$SRC/stall.out" || tb_fail "delta's failure is not said"
grep -qE "^$GAMMA_ADDR: sent stall.dat \(33554432 bytes\), relayed by $BETA_ADDR" "$SRC/stall.out" ||
        tb_fail "gamma is not said to have it"
# Two deadlines see delta's silence, both peer_timeout long: no progress
# at all for 8 s, or min_rate's window of 8 s closing with less than
# 8 MiB in it (delta stopped early in that window). Which one ends first
# depends on where the stop falls in the window (xfer_check_rate); either
# is gamma giving up on delta for its silence, and nothing else.
journalctl -u "$(node_unit gamma)" --no-pager -o cat --since "@$SINCE" |
        grep -qE "send of stall\.dat to $DELTA_ADDR:$PORT failed: (no progress from receiver|receiver too slow: [0-9.]+ (bytes|KiB|MiB) in the last [0-9.]+ s)" ||
        tb_fail "gamma did not log that its send to delta failed on delta's silence"
wait_for 60 bash -c "journalctl -u '$(node_unit delta)' --no-pager -o cat --since '@$SINCE' |
        grep -qE 'receive of stall\.dat (failed|aborted)'" || tb_fail "delta did not fail its receive of stall.dat"
incoming_clean "$(node_in delta)" chain.dat norelay.dat killed.dat
tb_log "delta stalled mid-chain: gamma's send to it failed on its silence, beta and gamma have the file, delta named"

# 6. A tree through the chain: each relay passes on every entry once it
# has it staged, a session of its own to the next node.
tree=$SRC/tree
rm -rf "$tree" && mkdir -p "$tree/a/b" "$tree/empty" "$tree/données"
make_file "$tree/a/b/big.bin" $((6 * MIB + 5))         # offered alone (over a pack's 4 MiB)
: >"$tree/a/empty.txt"
make_file "$tree/données/été.txt" 333
# f1 .. f30 of i * 997 bytes (packed) and m1 .. m12 of 1 MiB (packs of
# several), cut from one random blob by one process rather than 84.
make_file "$SRC/tblob" $((465 * 997 + 12 * MIB))
perl -e 'open(my $b, "<", $ARGV[1]) or die "$!\n"; local $/; my $blob = <$b>; my $o = 0;
        my @f = ((map { ["f$_", $_ * 997] } 1 .. 30), (map { ["b/m$_", 1 << 20] } 1 .. 12));
        for (@f) {
                open(my $f, ">", "$ARGV[0]/$_->[0]") or die "$!\n";
                print $f substr($blob, $o, $_->[1]);
                $o += $_->[1];
        }' "$tree/a" "$SRC/tblob" || tb_fail "the tree's files"
rm -f "$SRC/tblob"
chmod 600 "$tree/a/f1"
touch -d '2001-02-03 04:05:06.123456789' "$tree/a/f4"
ln -s a/b/big.bin "$tree/link-in"
ln -s ../données/été.txt "$tree/a/link-up"
# Hard links: each relay passes the second name on as a link, not as data.
ln "$tree/a/f5" "$tree/données/f5-hard"
ln "$tree/a/b/big.bin" "$tree/big-hard.bin"
# Paths over 255 bytes (wire version 18: in NAME parts before their
# offers): a directory and a file 1,200 bytes down, a large file there
# (offered alone, streamed by each relay), and a hard link to it.
long=$tree/$(printf '%s/' "$(printf 'p%.0s' {1..240})"{1..5} | sed 's,/$,,')
mkdir -p "$long"
make_file "$long/small.txt" 777
make_file "$long/big-long.bin" $((5 * MIB + 3))
ln "$long/big-long.bin" "$tree/hard-to-long.bin"
# A relay reads each entry back to pass it on: read-only, and no
# permission at all, alone and packed, in a directory without write or
# search permission, arrive all the same, with their modes, on every node.
chmod 000 "$tree/a/b/big.bin" "$tree/a/f2"
chmod 444 "$tree/a/b/m1"
chmod 500 "$tree/a/b"
chmod 600 "$tree/données"
# same_tree DIR: DIR is the source tree as rsync -aHS copies it
# (tree-oracle: contents, symlinks, hard links, modes, mtimes).
same_tree() {
        tree_oracle "$tree" "$1"
        [[ $(readlink "$1/link-in") == a/b/big.bin && $(readlink "$1/a/link-up") == ../données/été.txt ]] ||
                tb_fail "$1: the symlinks did not arrive as symlinks"
}
SINCE=$(date +%s)
RC=0
# Capped (5 MB/s), so that it takes seconds: each relay's report of its
# route's progress (every second) then crosses the offers of the session.
link_cap 40mbit alpha beta gamma delta
OUT=$(xferctl send -r "$tree" "$NODES" --to tchain 2>&1) || RC=$?
link_uncap alpha beta gamma delta
sed 's/^/    | /' <<<"$OUT"
((RC == 0)) || tb_fail "a tree to $NODES: exit $RC"
for n in beta gamma delta; do
        same_tree "$(node_in "$n")/tchain"
done
[[ $(jlast "$ALPHA_UNIT" RDMAXFER_DIRECTION=send RDMAXFER_NODES) == 3 &&
   $(jlast "$ALPHA_UNIT" RDMAXFER_DIRECTION=send RDMAXFER_NODES_OK) == 3 ]] ||
        tb_fail "alpha's send entry of the tree does not count 3 nodes, 3 published"
[[ $(jlast "$(node_unit beta)" RDMAXFER_DIRECTION=recv RDMAXFER_RELAY) == "$GAMMA_ADDR:$PORT" ]] ||
        tb_fail "beta's receive entry of the tree does not name gamma as its next node"
tb_log "a tree through the chain: identical on beta, gamma and delta (symlinks, modes, mtimes)"

# The same tree with gamma not relaying: beta's session to gamma is
# refused at DEST, and beta offers every entry again to delta.
sed -i 's/^relay = yes$/relay = no/' "$(node_conf gamma)"
reload_applied "$(node_unit gamma)" relay
RC=0
OUT=$(xferctl send -r --retries 0 "$tree" "$NODES" --to tchain2 2>&1) || RC=$?
sed 's/^/    | /' <<<"$OUT"
((RC == 23)) || tb_fail "a tree through a node with relay = no: exit $RC, not 23 (partial)"
same_tree "$(node_in beta)/tchain2"
same_tree "$(node_in delta)/tchain2"
[[ ! -e $(node_in gamma)/tchain2 ]] || tb_fail "gamma has the tree though it does not relay"
grep -q "^xferctl: $GAMMA_ADDR: .*this node does not relay (relay = no)" <<<"$OUT" ||
        tb_fail "gamma's refusal of the tree is not said, naming gamma"
sed -i 's/^relay = no$/relay = yes/' "$(node_conf gamma)"
reload_applied "$(node_unit gamma)" relay
tb_log "a tree around a node that does not relay: beta offered it whole to delta, exit 23"

# 7. A tree's entry that takes longer to reach a relay than the next
# node's peer_timeout: the relay's session to it waits for the entry, and
# the next node hears every second that it is coming (WAIT), so nobody
# gives up on anybody while the data flows upstream. A large entry goes
# on while it comes in, so its hops overlap as a file's do (the per-entry
# journal entries and lines are logged at log_level debug).
for n in alpha beta gamma delta; do
        sed -i 's/^peer_timeout = 8$/peer_timeout = 3/' "$(node_conf "$n")"
        echo 'log_level = debug' >>"$(node_conf "$n")"
done
reload_applied "$(node_unit alpha)" "$(node_unit beta)" "$(node_unit gamma)" "$(node_unit delta)" peer_timeout
SINCE=$(date +%s)
rm -rf "$SRC/slowtree" && mkdir -p "$SRC/slowtree/d"
make_file "$SRC/slowtree/d/small" 1000
make_file "$SRC/slowtree/big.bin" $((24 * MIB))         # 5 s a hop at 5 MB/s
link_cap 40mbit alpha beta gamma delta
RC=0
OUT=$(xferctl send -r --retries 0 "$SRC/slowtree" "$NODES" --to slowtree 2>&1) || RC=$?
link_uncap alpha beta gamma delta
sed 's/^/    | /' <<<"$OUT"
for n in alpha beta gamma delta; do
        sed -i 's/^peer_timeout = 3$/peer_timeout = 8/; /^log_level = debug$/d' "$(node_conf "$n")"
done
reload_applied "$(node_unit alpha)" "$(node_unit beta)" "$(node_unit gamma)" "$(node_unit delta)" peer_timeout
((RC == 0)) || tb_fail "a tree whose entry takes longer than peer_timeout to reach each relay: exit $RC"
for n in beta gamma delta; do
        diff -r "$SRC/slowtree" "$(node_in "$n")/slowtree" >&2 || tb_fail "$n: slowtree differs"
done
b0=$(t_receiving "$(node_unit beta)" 'slowtree.big\.bin')
b_usec=$(jvalue "$(node_unit beta)" RDMAXFER_USEC RDMAXFER_DIRECTION=recv RDMAXFER_FILE=slowtree/big.bin)
d0=$(t_receiving "$(node_unit delta)" 'slowtree.big\.bin')
tb_log "beta received big.bin from $b0 s for $b_usec us; delta began at $d0 s"
awk -v b="$b0" -v u="$b_usec" -v d="$d0" 'BEGIN { exit !(b != "" && u > 0 && d != "" && d < b + u / 1e6) }' ||
        tb_fail "delta began receiving big.bin only after beta had it whole: the tree's relays did not pipeline it"
# Its chunks went from gamma's receive slots straight to delta, as a file's do.
fwd_g=$(jlast "$(node_unit gamma)" RDMAXFER_DIRECTION=send RDMAXFER_FORWARDED_BYTES)
tb_log "gamma sent $fwd_g bytes of the tree straight from its receive ring"
((${fwd_g:-0} > 0 && fwd_g <= 25166824)) || tb_fail "gamma's send of the tree: RDMAXFER_FORWARDED_BYTES '$fwd_g'"
tb_log "an entry slower than peer_timeout at every relay: each next node kept waiting, each relay passed it on while it came in"

# Every daemon still serves: the chain once more.
make_file "$SRC/after.dat" $((1 * MIB))
chain "$SRC/after.dat"
((RC == 0)) || tb_fail "the chain after gamma's restart: exit $RC"
for n in beta gamma delta; do
        same_file "$SRC/after.dat" "$(node_in "$n")/after.dat"
done
tb_log "pass"
