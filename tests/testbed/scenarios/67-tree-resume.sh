#!/bin/bash
# A tree job continues where it stopped (issue 11 item 4):
#  a. beta is SIGKILLed about half-way through a tree of nested directories,
#     8 files of 5 MiB, 150 small files (packed) and a symlink, some
#     read-only in a read-only directory, and comes
#     back: the sender's own retry completes the job, continuing after the
#     entries beta had staged (both journals say how many, beta's entry
#     has RDMAXFER_RESUMED_BYTES), nothing of the
#     tree visible until then, the received tree identical to the source,
#     at most 1.4 x the tree's bytes on beta's link for the whole job, and
#     nothing left in beta's partial_dir once it is published.
#  b. killed again with no retry, then another tree of other contents sent
#     under the same DEST (another job): not continued from the first (a
#     mix of the two would differ from the source), the second arrives whole.
#  c. killed inside a 160 MiB file of a tree, past its first checkpoint
#     (64 MiB; the kill waits for beta's partial data file, which appears
#     when that checkpoint is fsynced): the retry resumes that file from what beta had flushed of
#     it (RDMAXFER_RESUMED_BYTES >= 64 MiB; at most 1.6 x on the link, as
#     in 96-resume: checkpoints are 64 MiB apart, and a kill just before
#     the second resends 96 MiB of 160), the tree identical, nothing left
#     in partial_dir.
#  d. the same file in a flat job of 3 files (not its last): the job's
#     retry resumes it too.
#  e. a tree's last RESULT is lost: beta's way back to alpha is cut (netem,
#     all of tb-beta's packets dropped) once beta makes the tree's symlinks,
#     which it does only when it publishes, after every entry is in. Beta
#     publishes; alpha never hears so, and its retry, with the way back,
#     is answered "every entry is there" (beta's published record): the job
#     ends ok without sending the tree again, nothing of it made twice.
#  f. the same, by rawpeer (tree-published-retry): DEST's ACCEPT says both
#     entries are there; another job to the same DEST meets "exists".
#  g. --sync=digest --delete into a tree beta added to (files, a nested
#     directory, a symlink): beta is killed half-way, after it kept the
#     unchanged entries; the retry continues the kept tree, and DEST ends
#     with exactly the source's entries (beta's extras gone, kept and
#     changed files the source's), as a job never interrupted would.
# Once a tree is published, partial_dir holds only its record (no staging
# directory, no data).
# testbed-timeout: 420
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

BETA_PART=/var/lib/rdmaxferd-beta/partial
RAWPEER=/usr/libexec/rdmaxfer-tests/rawpeer
COMMON=(peer_timeout=5 retry_max=20 retry_window=120 retry_delay_max=1)
peers_configure "${COMMON[@]}"
start_peers
nb=$BETA_NETDEV

rx_grown() { (($(netdev_bytes "$nb" rx) - $1 >= $2)); }
kept_trees() { find "$BETA_PART" -maxdepth 1 -name '*.tree' 2>/dev/null | wc -l; }
not_recs() { ls -A "$BETA_PART" | grep -v '\.rec$'; }
beta_log_since() { journalctl -u "$BETA_UNIT" --no-pager -o cat --since "$1"; }
# resumed_since SINCE: the largest RDMAXFER_RESUMED_BYTES of beta's entries
# since then (a job's entry is named "N of M files", not by its DEST), once
# the job's ok is among them (jobs_since: beta logs it a moment after the
# sender's xferctl returned; read before, only an earlier attempt's showed).
resumed_since() {
        local js i

        js=$(jobs_since "$BETA_UNIT" "$1" recv)
        for ((i = 0; i < 50; i++)); do
                grep -q '^RDMAXFER_RESULT=ok' <<<"$js" && break
                sleep 0.2
                js=$(jobs_since "$BETA_UNIT" "$1" recv)
        done
        sed -n 's/^RDMAXFER_RESUMED_BYTES=//p' <<<"$js" | sort -n | tail -n 1
}

# make_tree DIR: nested directories, 8 files of 5 MiB (each offered alone),
# 150 small ones (packed), an empty one and a symlink inside.
make_tree() {
        local t=$1
        rm -rf "$t" && mkdir -p "$t/big/deeper" "$t/small" "$t/empty-dir"
        make_file "$SRC/bigblob" $((8 * 5 << 20))
        (cd "$t/big" && split -b $((5 << 20)) -a 1 -d "$SRC/bigblob" part) || tb_fail "split big"
        mv "$t/big/part7" "$t/big/deeper/part7"
        head -c $((150 * 3000)) /dev/urandom >"$SRC/smallblob"
        (cd "$t/small" && split -b 3000 -a 3 -d "$SRC/smallblob" s) || tb_fail "split small"
        rm -f "$SRC/bigblob" "$SRC/smallblob"
        : >"$t/small/empty"
        ln -s ../big/part0 "$t/small/link"
        # Read-only entries, packed and alone, in a read-only directory:
        # what a resumed attempt makes again must not meet them as walls.
        chmod 444 "$t/small/s00"? "$t/big/part1" "$t/big/deeper/part7"
        chmod 555 "$t/big/deeper"
}

# send_killed WHAT READY CHECK -- ARGS...: xferctl send ARGS (to beta),
# SIGKILL beta once READY holds (a command, asked every 0.2 s), CHECK (a
# command: nothing visible yet, what beta kept), bring beta back and wait
# for the sender's own retry to finish the job (exit 0). Sets rx0.
send_killed() {
        local what=$1 ready=$2 check=$3 pid rc=0 main
        shift 4
        rx0=$(netdev_bytes "$nb" rx)
        # The daemon's PID now: the kill is then one system call, not a
        # systemctl round trip that a busy guest can make last a second.
        main=$(systemctl show -p MainPID --value "$BETA_UNIT")
        ((main > 0)) || tb_fail "$BETA_UNIT has no main process"
        xferctl send "$@" >"$SRC/killed.out" 2>&1 &
        pid=$!
        wait_for 60 "$ready" || tb_fail "$what: beta was never where it is to be killed ($ready)"
        tb_run kill -KILL "$main"
        killed=$(($(netdev_bytes "$nb" rx) - rx0))
        tb_log "killed after $((killed >> 20)) MiB of $((bytes >> 20)) MiB crossed"
        "$check" || tb_fail "$what: beta shows or keeps what it must not: $(ls -A "$BETA_PART")"
        restart_killed "$BETA_UNIT" "$main"
        timeout 120 tail --pid="$pid" -f /dev/null || tb_fail "$what: the job is not done 120 s after the kill"
        wait "$pid" || rc=$?
        sed 's/^/    | /' "$SRC/killed.out"
        ((rc == 0)) || tb_fail "$what: xferctl send exited $rc"
}

# tree_same SRC GOT: GOT is SRC as rsync -aHS copies it (tree-oracle), its
# symlink the one sent.
tree_same() {
        tree_oracle "$1" "$2"
        [[ $(readlink "$2/small/link") == ../big/part0 ]] || tb_fail "$2/small/link is not the symlink sent"
}

# resent_at_most WHAT KEPT: what crossed beta's link since the kill is the
# bytes beta did not keep (the job's BYTES less the KEPT it resumed) and
# no more, give or take RoCE's headers (under 10 %) and 4 MiB of the
# rest; sent again from the start, it would be all of BYTES. Measured
# from where the kill came, not from BYTES: a busy guest sees the
# checkpoint late, and more crosses before the kill.
resent_at_most() {
        local after=$((wire - killed)) most=$(((bytes - $2) * 11 / 10 + (4 << 20)))

        tb_log "$1: $((after >> 20)) MiB crossed after the kill, $(($2 >> 20)) MiB kept"
        ((after <= most)) || tb_fail "$1: $after bytes crossed after the kill for $bytes bytes with $2 kept: more than $most"
}

tb_log "a. beta is killed half-way through a tree; the retry continues it"
tree=$SRC/tree-a
make_tree "$tree"
bytes=$(du -sb --apparent-size "$tree" | cut -f1)
since=$(date '+%F %T.%6N')
one_tree() { [[ ! -e $BETA_IN/sets/a ]] && (($(kept_trees) == 1)); }
# 8 MiB/s: the half takes 2.5 s, a 0.2 s poll lands well inside the tree.
half_crossed() { rx_grown "$rx0" $((bytes / 2)); }
send_killed sets/a half_crossed one_tree -- -r "$tree" "$BETA_ADDR" --to sets/a --bwlimit 8M
wire=$(($(netdev_bytes "$nb" rx) - rx0))
tree_same "$tree" "$BETA_IN/sets/a"
line=$(beta_log_since "$since" | grep -m 1 'continuing transfer') ||
        tb_fail "beta's journal does not say it continued the tree"
tb_log "beta: ${line#*: }"
rr=$(resumed_since "$since")
((${rr:-0} > 0)) || tb_fail "beta's entry for the tree has RDMAXFER_RESUMED_BYTES=$rr"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "$since" | grep -q 'the receiver kept [0-9]* of [0-9]* entries' ||
        tb_fail "alpha's journal does not say what the receiver kept"
tb_log "done: $((wire >> 20)) MiB on beta's link for $((bytes >> 20)) MiB" \
       "($(awk -v w="$wire" -v s="$bytes" 'BEGIN { printf "%.2f", w / s }') x)"
((wire * 10 <= bytes * 14)) || tb_fail "$wire bytes crossed for a $bytes-byte tree: more than 1.4 x"
(($(kept_trees) == 0)) && (($(ls "$BETA_PART" | grep -c '\.rec$') == 1)) && [[ -z $(not_recs) ]] ||
        tb_fail "partial_dir holds more than the published tree's record: $(ls -A "$BETA_PART")"

tb_log "b. killed with no retry; another job's tree under the same DEST is not spliced onto it"
since=$(date '+%F %T.%6N')
rx0=$(netdev_bytes "$nb" rx)
main=$(systemctl show -p MainPID --value "$BETA_UNIT")
xferctl send --retries 0 -r "$tree" "$BETA_ADDR" --to sets/b --bwlimit 8M >"$SRC/b.out" 2>&1 &
pid=$!
wait_for 60 rx_grown "$rx0" $((bytes / 2)) || tb_fail "half of the tree never crossed (b)"
tb_run systemctl kill -s KILL "$BETA_UNIT"
wait "$pid" && tb_fail "a job with --retries 0 to a killed receiver succeeded"
restart_killed "$BETA_UNIT" "$main"
(($(kept_trees) == 1)) || tb_fail "beta keeps no staged tree (b): $(ls -A "$BETA_PART")"
other=$SRC/tree-b
make_tree "$other"
out=$(xferctl send -r "$other" "$BETA_ADDR" --to sets/b 2>&1) || tb_fail "the other tree's send failed: $out"
tree_same "$other" "$BETA_IN/sets/b"
beta_log_since "$since" | grep -q 'continuing transfer' && tb_fail "another job's tree was continued"
(($(kept_trees) == 0)) || tb_fail "the other job's kept tree is left in partial_dir: $(ls -A "$BETA_PART")"
tb_log "the second job's tree arrived whole; the first one's kept tree went"
rm -rf "$tree" "$other" "$BETA_IN/sets"

tb_log "c. killed inside a large file of a tree: its partial is resumed"
since=$(date '+%F %T.%6N')
tree=$SRC/tree-c
rm -rf "$tree" && mkdir -p "$tree/d"
make_file "$tree/d/huge.bin" $((160 << 20))
echo "a note" >"$tree/note.txt"
bytes=$(du -sb --apparent-size "$tree" | cut -f1)
a_partial() { [[ ! -e $BETA_IN/sets/c ]] && ls "$BETA_PART" | grep -q '\.data$'; }
# Past the first checkpoint is when beta has fsynced it and linked the
# partial's data in: under a loaded guest, seconds after its 64 MiB crossed.
checkpointed() { rx_grown "$rx0" $((64 << 20)) && ls "$BETA_PART" | grep -q '\.data$'; }
send_killed sets/c checkpointed a_partial -- -r "$tree" "$BETA_ADDR" --to sets/c --bwlimit 32M
wire=$(($(netdev_bytes "$nb" rx) - rx0))
same_file "$tree/d/huge.bin" "$BETA_IN/sets/c/d/huge.bin"
same_file "$tree/note.txt" "$BETA_IN/sets/c/note.txt"
rr=$(resumed_since "$since")
tb_log "done: $((wire >> 20)) MiB on beta's link for $((bytes >> 20)) MiB" \
       "($(awk -v w="$wire" -v s="$bytes" 'BEGIN { printf "%.2f", w / s }') x), RDMAXFER_RESUMED_BYTES=$rr"
((${rr:-0} >= 64 << 20)) || tb_fail "beta resumed $rr bytes of huge.bin, not its first checkpoint's 64 MiB"
resent_at_most c "$rr"
[[ -z $(not_recs) ]] || tb_fail "something besides records is left in partial_dir: $(ls -A "$BETA_PART")"

tb_log "d. killed inside a large file of a job of several: its retry resumes it"
since=$(date '+%F %T.%6N')
echo "the last one" >"$SRC/z.dat"
files=("$tree/note.txt" "$tree/d/huge.bin" "$SRC/z.dat")
a_file_partial() { ls "$BETA_PART" | grep -q '\.data$'; }
send_killed "3 files" checkpointed a_file_partial -- "${files[@]}" "$BETA_ADDR" --bwlimit 32M
wire=$(($(netdev_bytes "$nb" rx) - rx0))
for f in "${files[@]}"; do
        same_file "$f" "$BETA_IN/${f##*/}"
done
line=$(beta_log_since "$since" | grep -m 1 'huge.bin: resuming') || tb_fail "beta did not resume huge.bin"
tb_log "beta: ${line#*: }; $((wire >> 20)) MiB on beta's link"
kept=$(sed -n 's/.*: resuming, \([0-9]*\) of .*/\1/p' <<<"$line")
((${kept:-0} >= 64 << 20)) || tb_fail "beta resumed ${kept:-no} bytes of huge.bin, not its first checkpoint's 64 MiB (d)"
resent_at_most d "$kept"
rm -rf "$tree" "$BETA_IN/sets" "$SRC/z.dat"

tb_log "e. the tree's last RESULT is lost; the retry finds it published"
since=$(date '+%F %T.%6N')
tree=$SRC/tree-e
rm -rf "$tree" && mkdir -p "$tree/l"
make_file "$tree/data.bin" $((4 << 20))
# Enough symlinks that making them (beta does, one by one, once every
# entry is in) outlasts noticing the first and cutting the way back.
perl -e 'symlink("../data.bin", "$ARGV[0]/$_") or die "$!\n" for 1 .. 4000' "$tree/l" || tb_fail "symlinks"
xferctl send -r "$tree" "$BETA_ADDR" --to sets/e >"$SRC/e.out" 2>&1 &
pid=$!
# The first symlink in beta's staging directory (the kept tree's, in
# partial_dir: KEPT/e/l/N): every entry is in. Looked for without forking.
t_end=$((SECONDS + 120))
until compgen -G "$BETA_PART/*/e/l/*" >/dev/null; do
        ((SECONDS < t_end)) || tb_fail "beta never began to publish sets/e"
        sleep 0.05
done
t_seen=$(cut -d' ' -f1 /proc/uptime)
tb_run tc qdisc add dev "$nb" root netem loss 100%
wait_for 60 test -d "$BETA_IN/sets/e" || { tc qdisc del dev "$nb" root; tb_fail "beta did not publish sets/e"; }
tb_log "beta published sets/e while its way back to alpha was cut (seen published" \
       "$(awk -v a="$t_seen" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.2f", b - a }') s" \
       "after its first symlink)"
# Alpha's wait for the RESULT ends by peer_timeout, the retry's by
# failing to connect; then the way back returns.
wait_for 30 bash -c "journalctl -u $ALPHA_UNIT --no-pager -o cat --since '$since' | grep -q 'retrying in'" ||
        { tc qdisc del dev "$nb" root; tb_fail "alpha did not retry the job whose RESULT was lost"; }
tb_run tc qdisc del dev "$nb" root
timeout 120 tail --pid="$pid" -f /dev/null || tb_fail "e: the job is not done 120 s after the way back returned"
rc=0
wait "$pid" || rc=$?
sed 's/^/    | /' "$SRC/e.out"
((rc == 0)) || tb_fail "e: xferctl send exited $rc"
diff -r --no-dereference "$tree" "$BETA_IN/sets/e" >&2 || tb_fail "sets/e differs from the source"
line=$(beta_log_since "$since" | grep -m 1 'was published by transfer .* already') ||
        tb_fail "beta's journal does not say the retry's tree was published already"
tb_log "beta: ${line#*: }"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "$since" | grep -q 'the receiver has all [0-9]* entries' ||
        tb_fail "alpha's journal does not say the receiver had every entry"
[[ -z $(find "$BETA_IN" -maxdepth 2 -name '.rdmaxfer*' -print -quit) ]] || tb_fail "a staging directory is left"
[[ -z $(not_recs) ]] || tb_fail "something besides records is left in partial_dir: $(ls -A "$BETA_PART")"
rm -rf "$tree" "$BETA_IN/sets"

tb_log "f. rawpeer: a retry of a tree published already"
rc=0
"$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" tree-published-retry 2>&1 | sed 's/^/    /' || rc=${PIPESTATUS[0]}
((rc == 0)) || tb_fail "tree-published-retry: beta did not answer the retry as published already (rawpeer exit $rc)"
[[ $(head -c 100 "$BETA_IN/rawpeer-tree/f") == "$(printf 'r%.0s' $(seq 100))" ]] ||
        tb_fail "rawpeer-tree/f is not the 100 bytes sent"
rm -rf "$BETA_IN/rawpeer-tree"

tb_log "g. --sync --delete, killed half-way: the retry continues, DEST ends as the source"
# Changed files replace beta's (overwrite), and what the source lacks goes.
printf 'overwrite = yes\ntree_delete = yes\n' >>"$BETA_CONF"
reload_applied "$BETA_UNIT" tree_delete
tree=$SRC/tree-g
make_tree "$tree"
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to sets/g 2>&1) || tb_fail "the first send of sets/g failed: $out"
g=$BETA_IN/sets/g
# beta's own additions, made as the daemon's user would (it removes them).
mkdir -p "$g/extra-dir/sub"
echo extra >"$g/extra-dir/sub/f"
echo dot >"$g/small/.extra"
ln -s ../../elsewhere "$g/big/extra-link"
chown -R rdmaxfer: "$g/extra-dir" "$g/small/.extra"
chown -h rdmaxfer: "$g/big/extra-link"
# The source changes half its large files (same size, other bytes: only
# --sync=digest sees it) and drops a small one.
for p in 4 5 6; do make_file "$tree/big/part$p" $((5 << 20)); done
chmod u+w "$tree/big/deeper" && make_file "$tree/big/deeper/part7" $((5 << 20)) && chmod 444 "$tree/big/deeper/part7" &&
        chmod 555 "$tree/big/deeper"
rm "$tree/small/s149"
bytes=$((4 * 5 << 20))
since=$(date '+%F %T.%6N')
kept_old() { [[ -e $g/extra-dir/sub/f ]] && (($(kept_trees) == 1)); }
send_killed sets/g half_crossed kept_old -- -r "$tree" "$BETA_ADDR" --to sets/g --sync=digest --delete --bwlimit 8M
tree_same "$tree" "$g"
line=$(beta_log_since "$since" | grep -m 1 'continuing transfer') ||
        tb_fail "beta's journal does not say it continued the deleting tree"
tb_log "beta: ${line#*: }"
[[ -z $(find "$BETA_IN" -maxdepth 2 -name '.rdmaxfer*' -print -quit) ]] || tb_fail "a staging directory is left"
(($(kept_trees) == 0)) || tb_fail "a kept tree is left in partial_dir: $(ls -A "$BETA_PART")"
tb_log "resumed, and sets/g holds exactly the source's entries"
chmod -R u+w "$tree"
rm -rf "$tree" "$BETA_IN/sets"
