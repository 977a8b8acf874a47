#!/bin/bash
# Filters (issue 34, item 5): xferctl send -r --exclude/--include and
# their -from files leave out what rsync's rules would, and nothing else.
# A source tree with .git/, *.o files, a top build/ and a nested
# docs/build/, logs/ and logs/old/ with keep.log and other *.log, and a
# FIFO:
#  1. --exclude .git/ --exclude '*.o' --exclude /build/ --include keep.log
#     --exclude '*.log' --exclude pipe: exactly the expected entries arrive,
#     the same as rsync -aHS with the same rules makes (tree-oracle:
#     contents, modes, mtimes); exit 0, no warning (.git, which would arrive, and the
#     FIFO, which the receiver could not take, are the user's to leave out); the
#     summary counts what was sent;
#  2. the same rules from an --exclude-from file (comments, a blank and a
#     CRLF line, "+ " for the include): the same tree;
#  3. rsync's "only the C sources": --exclude .git/ --include '*/'
#     --include '*.c' --exclude '*': every directory, the .c files;
#  4. what the rules do not cover is still skipped and said: with only
#     --exclude .git/, the FIFO makes exit 23, .git is never mentioned;
#  5. several sources with --to: a leading "/" anchors at each SRC;
#  6. a relay chain (beta, then alpha) and a star (beta twice, one after
#     the other): every copy has the same entries as step 1's.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure relay=yes overwrite=yes
start_peers

# list DIR: each entry beneath DIR, "TYPE PATH", sorted.
list() {
        (cd "$1" && find . -mindepth 1 -printf '%y %P\n') | LC_ALL=C sort
}

# send_tree DEST RULES...: alpha sends $tree to beta as filters/DEST with
# RULES; the output in $out, the exit status in $rc.
send_tree() {
        local dest=$1
        shift
        rc=0
        out=$(xferctl send -r "$tree" "$BETA_ADDR" --to "filters/$dest" "$@" 2>&1) || rc=$?
}

tree=$SRC/filters
rm -rf "$tree" "$BETA_IN/filters" "$ALPHA_IN/filters"
mkdir -p "$tree/.git/objects/ab" "$tree/src/lib" "$tree/build/sub" "$tree/docs/build" "$tree/logs/old"
for f in .git/HEAD .git/objects/ab/cdef src/main.c src/main.o src/lib/util.c src/lib/util.o build/out.bin \
        build/sub/x.o docs/build/index.html logs/keep.log logs/run.log logs/old/keep.log logs/old/a.log notes.txt; do
        make_file "$tree/$f" $((1000 + ${#f} * 37))
done
mkfifo "$tree/src/pipe"
rules=(--exclude .git/ --exclude '*.o' --exclude /build/ --include keep.log --exclude '*.log' --exclude pipe)
expected='d docs
d docs/build
d logs
d logs/old
d src
d src/lib
f docs/build/index.html
f logs/keep.log
f logs/old/keep.log
f notes.txt
f src/lib/util.c
f src/main.c'
n=$(wc -l <<<"$expected")

tb_log "1. ${rules[*]}"
send_tree t1 "${rules[@]}"
((rc == 0)) || tb_fail "send -r with rules: exit $rc: $out"
grep -q 'skipping\|not sent' <<<"$out" && tb_fail "something left out by a rule was said: $out"
grep -q "filters/t1 ($((n + 1)) entries" <<<"$out" || tb_fail "the summary does not count $n entries and DEST: $out"
diff <(echo "$expected") <(list "$BETA_IN/filters/t1") >&2 || tb_fail "t1: not the expected entries (< expected)"
tree_oracle "$tree" "$BETA_IN/filters/t1" -- "${rules[@]}"
tb_log "xferctl: $(tail -n 1 <<<"$out")"

tb_log "2. the same rules from --exclude-from FILE"
printf '# objects and build products\n*.o\n/build/\n\n; the logs: keep.log only\n+ keep.log\r\n*.log\n.git/\npipe\n' \
        >"$SRC/filters.rules"
send_tree t2 --exclude-from "$SRC/filters.rules"
((rc == 0)) || tb_fail "send -r --exclude-from: exit $rc: $out"
grep -q 'skipping\|not sent' <<<"$out" && tb_fail "something left out by a rule was said: $out"
diff <(echo "$expected") <(list "$BETA_IN/filters/t2") >&2 || tb_fail "t2: not the expected entries (< expected)"
tree_oracle "$tree" "$BETA_IN/filters/t2" -- "${rules[@]}"

tb_log "3. only the C sources, rsync's way"
c_rules=(--exclude .git/ --include '*/' --include '*.c' --exclude '*')
send_tree t3 "${c_rules[@]}"
((rc == 0)) || tb_fail "send -r ${c_rules[*]}: exit $rc: $out"
[[ $(list "$BETA_IN/filters/t3" | grep -c '^f') == 2 && -d $BETA_IN/filters/t3/build/sub ]] ||
        tb_fail "t3: not the two .c files and every directory: $(list "$BETA_IN/filters/t3")"
tree_oracle "$tree" "$BETA_IN/filters/t3" -- "${c_rules[@]}"

tb_log "4. what no rule covers is still skipped, said, and exit 23"
send_tree t4 --exclude .git/
((rc == 23)) && grep -q 'skipping .*pipe: it is a FIFO' <<<"$out" ||
        tb_fail "a FIFO no rule covers: exit $rc, not 23 with a warning: $out"
grep -q '\.git' <<<"$out" && tb_fail ".git, excluded, was mentioned: $out"
[[ -f $BETA_IN/filters/t4/build/sub/x.o && ! -e $BETA_IN/filters/t4/.git ]] || tb_fail "t4: not the tree less .git"

tb_log "5. several sources: '/' anchors at each"
rc=0
out=$(xferctl send -r "$tree/src" "$tree/logs" "$BETA_ADDR" --to filters/t5 --exclude /lib/ --exclude /old/ \
        --exclude '*.o' --exclude pipe 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of two sources with rules: exit $rc: $out"
diff <(printf 'd logs\nd src\nf logs/keep.log\nf logs/run.log\nf src/main.c\n') <(list "$BETA_IN/filters/t5") >&2 ||
        tb_fail "t5: not the expected entries (< expected)"

tb_log "6. a relay chain (beta, then alpha) and a star (beta twice): the same rules everywhere"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR,$ALPHA_ADDR" --to filters/chain "${rules[@]}" 2>&1) || rc=$?
((rc == 0)) || tb_fail "a chain with rules: exit $rc: $out"
for dir in "$BETA_IN/filters/chain" "$ALPHA_IN/filters/chain"; do
        tree_oracle "$tree" "$dir" -- "${rules[@]}"
done
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR,$BETA_ADDR" --parallel 1 --to filters/star "${rules[@]}" 2>&1) || rc=$?
((rc == 0)) && grep -q '^2 peers: every one sent' <<<"$out" || tb_fail "a star with rules: exit $rc: $out"
grep -q 'skipping\|not sent' <<<"$out" && tb_fail "the star said something left out by a rule: $out"
tree_oracle "$tree" "$BETA_IN/filters/star" -- "${rules[@]}"
tb_log "chain and star: t1's entries on every copy"

rm -rf "$tree" "$SRC/filters.rules" "$BETA_IN/filters" "$ALPHA_IN/filters"
