#!/bin/bash
# A tree down a relay chain continues where a failed node left it (issue 13
# item 5; rdmaxferd(8) "Relay chains"), alpha sending to beta, gamma and
# delta over capped links (5 MB/s each), a tree of packed 1.5 MiB files,
# lone 5 MiB files, directories, and symlinks:
#   1. gamma SIGKILLed once delta has staged some entries: beta goes around
#      it, and delta continues after the entries it kept of gamma's send
#      (a relayed DEST names no peer: delta logs "continuing ... K of M
#      entries", beta "the receiver kept K of M entries"), not from the
#      first; beta and delta get the tree, exit 23, gamma named.
#   2. beta (the first node, a relay) SIGKILLed once delta has staged some
#      entries, and back: alpha's retry continues beta's kept tree, and
#      beta's relay offers gamma the entries beta kept as well as the rest
#      (read back from the list it keeps with them), gamma continues its
#      own kept tree and relays to delta, which continues too. Every node
#      resumed, the tree identical everywhere, exit 0, and nothing left of
#      it in any partial_dir.
#   3. gamma SIGSTOPped: beta gives up on its silence and goes around it;
#      delta, whose session from gamma ends on the same silence, continues
#      or takes the tree whole; beta and delta get it, exit 23.
#   4. beta killed, and the list of entries it keeps lost while it is down:
#      its own copy continues and is published; its relay, unable to offer
#      the entries it kept, says so; gamma and delta named, exit 23.
# testbed-timeout: 360
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

MIB=$((1024 * 1024))
PORT=7470
NODES="$BETA_ADDR,$GAMMA_ADDR,$DELTA_ADDR"

nodes_up slot_count=16 send_slots=4 max_transfers=2 relay=yes peer_timeout=5 retry_max=20 \
        retry_window=120 retry_delay_max=1
link_cap 40mbit alpha beta gamma delta

tree=$SRC/ctree
rm -rf "$tree" && mkdir -p "$tree/p" "$tree/lone" "$tree/d/e/f"
for i in $(seq 1 16); do make_file "$tree/p/f$i" $((3 * MIB / 2 + i)); done   # packed, 2 or 3 to a pack
for i in 1 2 3; do make_file "$tree/lone/big$i" $((5 * MIB + i)); done          # offered alone
make_file "$tree/d/e/f/deep" 4321
ln -s ../p/f1 "$tree/lone/link1"
ln -s d/e/f/deep "$tree/link2"
chmod 640 "$tree/p/f3"
touch -d '2003-04-05 06:07:08.987654321' "$tree/p/f5"
ENTRIES=$(($(find "$tree" | wc -l)))       # DEST and everything beneath it

# same_tree DIR: the source tree there, as rsync -aHS copies it (tree-oracle).
same_tree() { tree_oracle "$tree" "$1"; }

# staged NODE [DEST]: regular files of a tree (DEST) NODE keeps for the next attempt.
staged() {
        find "/var/lib/rdmaxferd-$1/partial" -path "*.tree/${2:-*}/*" -type f ! -name '.*' 2>/dev/null | wc -l
}

# node_staged NODE N [DEST]: NODE keeps N or more files of a tree (DEST).
node_staged() { (($(staged "$1" "${3:-*}") >= $2)); }
# kept_trees NODE: the kept trees in NODE's partial_dir, by name.
kept_trees() { find "/var/lib/rdmaxferd-$1/partial" -maxdepth 1 -name '*.tree' -printf '%f\n' 2>/dev/null | sort; }

# send_bg DEST RETRIES: the tree to the three in the background; $SRC/DEST.out
# gets its output, then "rc=N".
send_bg() {
        rm -f "$SRC/$1.out"
        (
                rc=0
                xferctl send -r --retries "$2" "$tree" "$NODES" --to "$1" >"$SRC/$1.out" 2>&1 || rc=$?
                echo "rc=$rc" >>"$SRC/$1.out"
        ) &
}

# signal_when_staged N SIGNAL NODE [WATCHED DEST]: once WATCHED (delta)
# keeps N files of the tree (DEST), SIGNAL to NODE.
signal_when_staged() {
        local main

        # The PID first: then the signal is one system call, not a
        # systemctl round trip that a busy guest can make last a second.
        main=$(systemctl show -p MainPID --value "$(node_unit "$3")")
        ((main > 0)) || tb_fail "$3 has no main process"
        wait_for 60 node_staged "${4:-delta}" "$1" "${5:-*}" || tb_fail "${4:-delta} never staged $1 entries of the tree"
        tb_run kill -s "$2" "$main"
        tb_log "beta has $(staged beta), gamma $(staged gamma), delta $(staged delta) files staged: SIG$2 to $3"
}

# job_end DEST: the end of send_bg's job, its output shown.
job_end() {
        wait
        sed 's/^/    | /' "$SRC/$1.out"
}

# log_of NODE: its daemon's log since SINCE.
log_of() { journalctl -u "$(node_unit "$1")" --no-pager -o cat --since "@$SINCE"; }

# continued NODE DEST: K, where NODE logged "DEST: continuing transfer N: K of M entries".
continued() {
        log_of "$1" | sed -nE "s/.*: $2: continuing transfer [0-9]+: ([0-9]+) of $ENTRIES entries .*/\1/p" | tail -n 1
}

# 1. gamma dies; beta goes around it to delta, which continues.
SINCE=$(date +%s)
send_bg around 0
signal_when_staged 8 KILL gamma delta around
job_end around
grep -q '^rc=23$' "$SRC/around.out" || tb_fail "a tree with gamma killed: not exit 23 (partial)"
same_tree "$(node_in beta)/around"
same_tree "$(node_in delta)/around"
grep -q "^xferctl: $GAMMA_ADDR: .*failed" "$SRC/around.out" || tb_fail "gamma's failure is not said"
log_of beta | grep -q "relaying around to $GAMMA_ADDR:$PORT failed .*going around it" ||
        tb_fail "beta did not log that it went around gamma"
k=$(continued delta around)
tb_log "delta continued the tree after ${k:-?} of $ENTRIES entries kept of gamma's send"
[[ -n $k ]] && ((k > 1 && k < ENTRIES)) || tb_fail "delta did not continue the tree it kept of gamma's send"
log_of beta | grep -q "around: the receiver kept $k of $ENTRIES entries from an earlier attempt; sending the rest" ||
        tb_fail "beta did not log that delta kept $k entries"
wait_for 30 systemctl is-active --quiet "$(node_unit gamma)" || tb_fail "gamma did not come back"
wait_for 30 test -S "$(node_sock gamma)" || tb_fail "gamma has no control socket after its restart"
tb_log "gamma killed: beta went around it, delta continued after entry $k of $ENTRIES, exit 23"

# 2. beta, the first node and a relay, dies and comes back: alpha's retry
# continues beta's kept tree, and down the chain each node continues its own.
SINCE=$(date +%s)
for n in beta gamma delta; do
        declare "before_$n=$(kept_trees "$n")"
done
send_bg again 20
# Killed once delta keeps 3 of its entries: each node has some, and beta,
# two hops ahead, is still receiving (it raced past its last entry on a
# busy host when delta's count was of any tree and 6).
signal_when_staged 3 KILL beta delta again
job_end again
grep -q '^rc=0$' "$SRC/again.out" || tb_fail "a tree with beta killed and back: not exit 0"
for n in beta gamma delta; do
        same_tree "$(node_in "$n")/again"
done
kb=$(continued beta again)
kg=$(continued gamma again)
kd=$(continued delta again)
tb_log "continued after entries: beta ${kb:-?}, gamma ${kg:-?}, delta ${kd:-?} of $ENTRIES"
for n in beta gamma delta; do
        log_of "$n" | grep -E 'again: (continuing|the receiver kept|.*not kept|.*list of entries)' | sed "s/^/    $n: /"
done
[[ -n $kb && -n $kg && -n $kd ]] && ((kb > 1 && kg > 1 && kd > 1)) ||
        tb_fail "not every node continued its kept tree (beta '$kb', gamma '$kg', delta '$kd')"
log_of beta | grep -q "again: the receiver kept $kg of $ENTRIES entries" ||
        tb_fail "beta's relay did not log that gamma kept $kg entries"
log_of gamma | grep -q "again: the receiver kept $kd of $ENTRIES entries" ||
        tb_fail "gamma's relay did not log that delta kept $kd entries"
# What gamma kept of part 1 stays (for a retry of that job, until
# partial_retention); nothing of this job does.
for n in beta gamma delta; do
        before=before_$n
        [[ $(kept_trees "$n") == "${!before}" ]] || tb_fail "$n: a kept tree of the job left in partial_dir"
done
tb_log "beta killed and back: alpha's retry, then each node down the chain continued its kept tree"

# 3. gamma stalls (SIGSTOP): beta's send to it fails on its silence
# (peer_timeout 5 s) and beta goes around it to delta, whose own session
# from gamma fails on the same silence about then. delta continues what it
# kept once that session has ended (the relayed offer waits for it to store
# its last record), or takes the tree whole while it is still receiving
# ("not kept"); either way beta and delta get the tree, exit 23. gamma
# runs again once beta has given up on it (a stop that lasted the job could
# outlast its watchdog).
SINCE=$(date +%s)
send_bg stalled 0
signal_when_staged 6 STOP gamma delta stalled
wait_for 30 bash -c "journalctl -u '$(node_unit beta)' --no-pager -o cat --since '@$SINCE' |
        grep -q 'relaying stalled to $GAMMA_ADDR:$PORT failed'" || tb_fail "beta did not give up on gamma"
tb_run systemctl kill -s CONT "$(node_unit gamma)"
job_end stalled
grep -q '^rc=23$' "$SRC/stalled.out" || tb_fail "a tree with gamma stalled: not exit 23 (partial)"
same_tree "$(node_in beta)/stalled"
same_tree "$(node_in delta)/stalled"
grep -q "^xferctl: $GAMMA_ADDR: .*failed" "$SRC/stalled.out" || tb_fail "gamma's failure is not said"
log_of delta | grep -E 'stalled: (continuing|not kept|waiting)' | sed 's/^/    delta: /'
k=$(continued delta stalled)
how="took the tree whole"
if [[ -n $k ]]; then how="continued after $k of $ENTRIES entries"; fi
tb_log "gamma stalled: beta went around it, delta $how, exit 23"
# 4. beta killed again, and the list of entries it keeps beside its kept
# tree lost while it is down: alpha's retry continues beta's own copy, but
# beta cannot offer gamma the entries it kept, so it relays nothing and
# says why; beta has the tree, gamma and delta are named, exit 23. The
# tree's symlinks are in its kept copy as if beta had been killed while
# it published (they are made once every entry is in, before the tree's
# rename, and the last entry is never recorded): made again, they are
# taken as the ones it made, not refused as entries of the same name.
SINCE=$(date +%s)
send_bg lost 20
# Watched on beta itself: killed once it is into the tree, never after
# its last entry (delta, two hops behind, can lag that far on a busy host).
signal_when_staged 6 KILL beta beta lost
for f in /var/lib/rdmaxferd-beta/partial/*.tree/.entries; do
        tb_log "truncating beta's $f ($(stat -c %s "$f") bytes)"
        : >"$f"
done
for t in /var/lib/rdmaxferd-beta/partial/*.tree/lost; do
        # The daemon's own, as those it made would be.
        ln -s d/e/f/deep "$t/link2" && chown -h --reference="$t" "$t/link2"
        if [[ -d $t/lone ]]; then ln -s ../p/f1 "$t/lone/link1" && chown -h --reference="$t" "$t/lone/link1"; fi
        tb_log "symlinks as a publish left them in $t: $(find "$t" -type l -printf '%P ' | sort)"
done
job_end lost
grep -q '^rc=23$' "$SRC/lost.out" || tb_fail "a tree whose relay lost its list of entries: not exit 23 (partial)"
same_tree "$(node_in beta)/lost"
grep -q "^xferctl: $GAMMA_ADDR: .*the list of entries kept with the tree here was lost: not relayed" "$SRC/lost.out" ||
        tb_fail "gamma is not named with the reason"
[[ -n $(continued beta lost) ]] || tb_fail "beta did not continue its own kept tree"
[[ ! -e $(node_in gamma)/lost && ! -e $(node_in delta)/lost ]] || tb_fail "gamma or delta published a tree beta never relayed"
tb_log "beta's list of entries lost: its own copy continued and published, the rest named, exit 23"
link_uncap alpha beta gamma delta
