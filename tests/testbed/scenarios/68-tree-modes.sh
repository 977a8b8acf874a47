#!/bin/bash
# Every mode arrives (issue 34, item 1). A tree of read-only files, packed
# and offered alone, files without any permission bit, directories without
# write, read or search permission for their owner, a sticky and a
# group-writable one, symlinks in a read-only directory, dotfiles and
# dot directories (.git, .config: names = utf8, the default):
#  1. sent into a new DEST, arrives whole, with exactly the modes and the
#     files', symlinks' and directories' mtimes (DEST's own included) that
#     `rsync -aHS` gives a copy of the same source (tree-oracle);
#  2. sent again with --sync=digest: into the tree above, refused at once
#     with the directory named (the daemon cannot look into its old
#     directories without read or search permission, rdmaxferd(8) Sync),
#     nothing changed; into a tree of read-only files and directories
#     after a file inside a read-only directory changed and one was added
#     to it: only those move, and the result is again what rsync -a makes;
#  3. sent again over it (overwrite): the old tree, unreadable
#     directories and all, is swapped out and removed, nothing left over;
#  4. a receiver that may not make DEST (a directory the daemon may not
#     write into), or a single file (its incoming directory not writable),
#     fails the job at once, no retry, and xferctl names the cause:
#     "permission denied on the receiver".
#  5. --sync --delete (issue 34, item 6) into a DEST the receiver added
#     to (a dotfile, a read-only file, a nested and read-only directory, a
#     symlink out of DEST, a file beside a kept one): refused at once with
#     tree_delete = no, nothing changed; allowed, exactly what rsync -a
#     --delete makes of the source in a copy of the old DEST, the count
#     in xferctl's summary and beta's journal (RDMAXFER_DELETED), a
#     sibling directory and a file beside DEST untouched; with --exclude,
#     what the rule leaves out of DEST stays, as rsync --delete keeps it
#     (a file, a directory whole, a directory the source lacks for the
#     excluded file in it), and -n -i names just the rest; with
#     --delete-excluded an excluded name goes too; with an entry not sent
#     (a FIFO), nothing is deleted, said, exit 23.
#  6. --dry-run (issue 34, item 7): a tree sent, then on the source one
#     file changed, one added, one removed: send -r -n -i --sync=size
#     --delete says exactly those three lines, changes nothing on the
#     receiver, and the real send after it does what it said; a dry run
#     of a single file onto a name there, overwrite off, is refused as
#     the real send is; without --sync, a new file's and a new tree's
#     dry runs say they would be created and move nothing.
#  7. every name (issue 34, item 2): a tree whose names hold a newline,
#     an ESC, a backslash, Latin-1 and other bytes that are not UTF-8, a
#     leading '-', spaces, a dotfile, a directory and a symlink target of
#     such names, and a file 100 directories down, arrives as rsync -aHS
#     makes it; xferctl and beta's log
#     show them escaped, never as their bytes; names = utf8 refuses the
#     tree whole, naming why.
# The daemon runs as rdmaxfer with no capability; xferctl runs as root
# here, so it reads every entry as rsync does.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure overwrite=yes
start_peers

# meta DIR: every entry's type, mode, size (files) and mtime (and a
# symlink's target), one line each, sorted; DEST itself is ".".
meta() {
        (cd "$1" && find . \( -type d -printf '%p d %m %T@\n' \) -o \( -type f -printf '%p f %m %s %T@\n' \) \
                -o \( -type l -printf '%p l %l %T@\n' \)) | LC_ALL=C sort
}

tree=$SRC/modes
rm -rf "$tree"
mkdir -p "$tree/ro-dir/sub" "$tree/noexec-dir" "$tree/noread-dir" "$tree/zero-dir" "$tree/sticky" \
        "$tree/open-dir" "$tree/empty-ro"
make_file "$tree/ro.txt" 4096
make_file "$tree/big-ro.bin" $((5 << 20))       # over 4 MiB: offered alone, not packed
make_file "$tree/none.txt" 100
make_file "$tree/big-none.bin" $((5 << 20))
make_file "$tree/wo.txt" 10
make_file "$tree/shared.txt" 20
make_file "$tree/exec.sh" 30
make_file "$tree/ro-dir/inner.txt" 40
mkdir -p "$tree/.config/app" "$tree/.git/refs"
make_file "$tree/.hidden" 50
make_file "$tree/.config/app/settings.ini" 60
make_file "$tree/.git/HEAD" 23
chmod 0700 "$tree/.git"
make_file "$tree/ro-dir/sub/deep.txt" 50
ln -s inner.txt "$tree/ro-dir/link"
ln -s ../inner.txt "$tree/ro-dir/sub/up"
make_file "$tree/noexec-dir/file.txt" 60
make_file "$tree/noread-dir/file.txt" 70
make_file "$tree/zero-dir/f.txt" 80
make_file "$tree/sticky/f" 90
chmod 444 "$tree/ro.txt" "$tree/big-ro.bin" "$tree/ro-dir/sub/deep.txt"
chmod 000 "$tree/none.txt" "$tree/big-none.bin"
chmod 200 "$tree/wo.txt"
chmod 666 "$tree/shared.txt"
chmod 755 "$tree/exec.sh"
# mtimes, each its own, entries before their directories; then the
# directories' modes (chmod changes no mtime).
stamp_mtimes "$tree"
chmod 555 "$tree/ro-dir" "$tree/ro-dir/sub" "$tree/empty-ro"
chmod 600 "$tree/noexec-dir"
chmod 300 "$tree/noread-dir"
chmod 000 "$tree/zero-dir"
chmod 1777 "$tree/sticky"
chmod 777 "$tree/open-dir"
chmod 750 "$tree"

tb_log "1. a tree of every mode into a new DEST"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to modes/t1 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of a tree of every mode: exit $rc: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
tree_oracle "$tree" "$BETA_IN/modes/t1"
[[ -z $(find "$BETA_IN" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed"
tb_log "arrived as rsync -a makes it: read-only and mode-000 files (packed and alone), directories" \
       "0555, 0600, 0300, 0000, 1777, 0777, DEST 0750, every mtime"

tb_log "2. --sync=digest into it: refused, naming a directory beta may not look into"
since=$(date '+%F %T.%6N')
meta "$BETA_IN/modes/t1" >"$TESTBED_SHARE/modes.before"
rc=0
out=$(timeout 120 xferctl send -r "$tree" "$BETA_ADDR" --to modes/t1 --sync=digest 2>&1) || rc=$?
((rc == 1)) && grep -q 'permission denied on the receiver: .*modes/t1/\(noexec\|noread\|zero\)-dir' <<<"$out" ||
        tb_fail "--sync into a tree whose directories beta may not look into: exit $rc: $out"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "$since" | grep 'retrying in' &&
        tb_fail "a permission refusal was retried (above)"
meta "$BETA_IN/modes/t1" | diff "$TESTBED_SHARE/modes.before" - >&2 || tb_fail "the refused sync changed modes/t1"
tb_log "xferctl: $(tail -n 1 <<<"$out")"

tb_log "2. --sync=digest into a read-only tree: a file changed in a read-only directory, one added"
ro=$SRC/modes-ro
rm -rf "$ro" && mkdir "$ro"
(cd "$tree" && cp -a ro.txt big-ro.bin none.txt exec.sh ro-dir empty-ro "$ro/") || tb_fail "cp -a"
chmod 555 "$ro"
rc=0
out=$(xferctl send -r "$ro" "$BETA_ADDR" --to modes/t2 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of a read-only tree: exit $rc: $out"
tree_oracle "$ro" "$BETA_IN/modes/t2"
chmod 755 "$ro/ro-dir/sub"
printf 'changed\n' >"$ro/ro-dir/sub/deep.txt"
make_file "$ro/ro-dir/sub/new.txt" 77
touch -d '2020-01-02 03:04:05.678' "$ro/ro-dir/sub/deep.txt" "$ro/ro-dir/sub/new.txt" "$ro/ro-dir/sub"
chmod 555 "$ro/ro-dir/sub"
rc=0
out=$(xferctl send -r "$ro" "$BETA_ADDR" --to modes/t2 --sync=digest 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r --sync=digest into a tree with read-only directories: exit $rc: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
[[ $out == *skipped* ]] || tb_fail "the unchanged entries were not skipped: $out"
tree_oracle "$ro" "$BETA_IN/modes/t2"
tb_log "synced as rsync -a would leave it"
since=$(date '+%F %T.%6N')

tb_log "3. the same tree over it (overwrite): the old one swapped out and removed"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to modes/t1 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r over an existing tree of every mode: exit $rc: $out"
tree_oracle "$tree" "$BETA_IN/modes/t1"
[[ -z $(find "$BETA_IN" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] ||
        tb_fail "the old tree's staging directory stayed: $(ls -A "$BETA_IN")"
journalctl -u "$BETA_UNIT" --no-pager -o cat --since "$since" | grep -i 'removing\|permission denied' &&
        tb_fail "beta could not remove something of the old tree (above)"
tb_log "replaced, nothing of the old tree left"

tb_log "4. a DEST the daemon may not make: refused at once, the cause named"
mkdir -p "$BETA_IN/locked"
chown root:root "$BETA_IN/locked"
chmod 755 "$BETA_IN/locked"
since=$(date '+%F %T.%6N')
rc=0
out=$(timeout 120 xferctl send -r "$tree" "$BETA_ADDR" --to locked/t 2>&1) || rc=$?
((rc == 1)) || tb_fail "a DEST in a directory beta may not write: exit $rc: $out"
grep -q 'permission denied on the receiver\|Permission denied' <<<"$out" ||
        tb_fail "xferctl does not name the cause: $out"
grep -qi 'cancelled' <<<"$out" && tb_fail "xferctl says cancelled for a refusal: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "$since" | grep 'retrying in' &&
        tb_fail "a permission refusal was retried (above)"
[[ -z $(ls -A "$BETA_IN/locked") ]] || tb_fail "something was made in locked/: $(ls -A "$BETA_IN/locked")"
# A single file, into an incoming directory the daemon may not write.
mode=$(stat -c %a "$BETA_IN")
chmod 555 "$BETA_IN"
rc=0
out=$(timeout 60 xferctl send "$tree/ro.txt" "$BETA_ADDR" 2>&1) || rc=$?
chmod "$mode" "$BETA_IN"
((rc == 1)) && grep -q 'permission denied on the receiver\|Permission denied' <<<"$out" ||
        tb_fail "a single file into an incoming directory beta may not write: exit $rc: $out"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "$since" | grep 'retrying in' &&
        tb_fail "a permission refusal was retried (above)"
rm -rf "$BETA_IN/locked"
tb_log "refused with the cause, no retry, nothing made"

tb_log "5. --sync --delete: DEST ends with the source's entries, nothing outside it touched"
del=$SRC/del
d=$BETA_IN/modes/del
rm -rf "$del" && mkdir -p "$del/keep-dir/nested" "$del/ro-keep"
make_file "$del/same.txt" 1000
make_file "$del/changed.txt" 2000
make_file "$del/gone-later.txt" 300
make_file "$del/big-same.bin" $((5 << 20))      # offered alone, kept by its size and digest
make_file "$del/keep-dir/nested/deep.txt" 400
make_file "$del/ro-keep/r.txt" 500
ln -s same.txt "$del/link"
ln "$del/same.txt" "$del/hard"
chmod 444 "$del/ro-keep/r.txt"
chmod 555 "$del/ro-keep"
rc=0
out=$(xferctl send -r "$del" "$BETA_ADDR" --to modes/del 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of the tree to delete in: exit $rc: $out"
# What only the receiver has: a dotfile, a read-only file, a nested
# directory (one of them read-only), a symlink out of DEST, a file in a
# directory the source has too, and a file the source no longer has;
# beside DEST a sibling directory (the symlink's target) and a file.
make_file "$d/.extra-dot" 10
make_file "$d/ro-extra" 20
chmod 444 "$d/ro-extra"
mkdir -p "$d/extra-dir/sub"
make_file "$d/extra-dir/sub/f" 30
chmod 555 "$d/extra-dir/sub"
ln -s ../sibling "$d/extra-link"
make_file "$d/keep-dir/nested/extra.txt" 40
mkdir -p "$BETA_IN/modes/sibling"
make_file "$BETA_IN/modes/sibling/s.txt" 50
make_file "$BETA_IN/modes/outside.txt" 60
# Made as a local user of the drop box would, one beta's daemon may remove.
chown -R rdmaxfer: "$d" "$BETA_IN/modes/sibling" "$BETA_IN/modes/outside.txt"
rm "$del/gone-later.txt"
printf 'changed, and longer than before\n' >"$del/changed.txt"
make_file "$del/keep-dir/new.txt" 70
cp -a "$BETA_IN/modes/sibling" "$SRC/del-sibling"
cp -a "$BETA_IN/modes/outside.txt" "$SRC/del-outside.txt"

# Refusals first: nothing may change.
meta "$d" >"$TESTBED_SHARE/del.before"
rc=0
out=$(xferctl send -r "$del" "$BETA_ADDR" --to modes/del --delete 2>&1) || rc=$?
((rc == 2)) && grep -q -- '--sync or --skip-existing' <<<"$out" ||
        tb_fail "--delete without --sync: exit $rc (want 2): $out"
rc=0
out=$(xferctl send "$del/same.txt" "$BETA_ADDR" --sync=size --delete 2>&1) || rc=$?
((rc == 2)) && grep -q -- 'for a tree (-r)' <<<"$out" || tb_fail "--delete without -r: exit $rc (want 2): $out"
tb_log "usage errors: --delete without --sync, without -r (exit 2)"
since=$(date '+%F %T.%6N')
rc=0
out=$(timeout 120 xferctl send -r "$del" "$BETA_ADDR" --to modes/del --sync=digest --delete 2>&1) || rc=$?
((rc == 1)) && grep -q 'deleting is off on the receiver (tree_delete)' <<<"$out" ||
        tb_fail "--delete into a receiver with tree_delete = no: exit $rc: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "$since" | grep 'retrying in' &&
        tb_fail "a refused --delete was retried (above)"
journalctl -u "$BETA_UNIT" --no-pager -o cat --since "$since" | grep -q 'tree_delete' ||
        tb_fail "beta's journal does not name tree_delete"
meta "$d" | diff "$TESTBED_SHARE/del.before" - >&2 || tb_fail "the refused --delete changed DEST"
tb_log "tree_delete = no: refused at once, named on both sides, nothing changed"

echo "tree_delete = yes" >>"$BETA_CONF"
reload_applied "$BETA_UNIT" tree_delete
# The reference: rsync --delete of the source into a copy of the old DEST.
ref=$SRC/del-ref
rm -rf "$ref" && cp -a "$d" "$ref"
want=$(comm -23 <(cd "$d" && find . -mindepth 1 | LC_ALL=C sort) <(cd "$del" && find . -mindepth 1 | LC_ALL=C sort) |
        wc -l)
since=$(date '+%F %T.%6N')
rc=0
out=$(xferctl send -r "$del" "$BETA_ADDR" --to modes/del --sync=digest --delete 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r --sync=digest --delete: exit $rc: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
[[ $out == *skipped* ]] || tb_fail "the unchanged entries were not skipped: $out"
[[ $out == *"$want deleted"* ]] || tb_fail "xferctl does not say $want deleted: $out"
tree_oracle --base "$ref" "$del" "$d" -- --delete
[[ $(readlink "$d/link") == same.txt ]] || tb_fail "the kept symlink is not the source's"
[[ $(stat -c %i "$d/same.txt") == $(stat -c %i "$d/hard") ]] || tb_fail "the kept hard link is not one file"
diff -r --no-dereference "$SRC/del-sibling" "$BETA_IN/modes/sibling" >&2 ||
        tb_fail "the sibling directory beside DEST changed"
same_file "$SRC/del-outside.txt" "$BETA_IN/modes/outside.txt"
[[ -z $(find "$BETA_IN" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed"
# Both daemons' entries of this job (the refusal's came before $since; a
# job's entry is named "N of M files", not by its DEST).
for unit in "$BETA_UNIT" "$ALPHA_UNIT"; do
        wait_for 15 bash -c "journalctl -u '$unit' --no-pager -o export --since '$since' |
                tr -d '\\000' | grep -qx 'RDMAXFER_DELETED=$want'" || {
                journalctl -u "$unit" --no-pager -o cat --since "$since" >&2
                tb_fail "$unit's journal entry of the job has no RDMAXFER_DELETED=$want (above)"
        }
done
tb_log "the receiver's extras gone ($want deleted, so says the journal), kept and changed files as" \
       "rsync -a --delete makes them, the sibling and the file outside DEST untouched"

tb_log "5. --delete --exclude: what the rules leave out stays on the receiver, as rsync's --delete keeps it"
# Excluded: a file the source has too (scratch.tmp, not sent), one only
# the receiver has (old.tmp), a directory whole (cache.tmp); a directory
# the source lacks, holding an excluded file and one that is not
# (gone-dir): the one goes, the other stays, and so does its directory.
make_file "$del/scratch.tmp" 80
make_file "$d/old.tmp" 90
mkdir -p "$d/cache.tmp/deep" "$d/gone-dir/sub"
make_file "$d/cache.tmp/deep/blob" 40
make_file "$d/gone-dir/sub/keep.tmp" 20
make_file "$d/gone-dir/sub/drop.txt" 30
make_file "$d/extra.txt" 25
chown -R rdmaxfer: "$d/old.tmp" "$d/cache.tmp" "$d/gone-dir" "$d/extra.txt"
snap=$(meta "$d")
rc=0
out=$(xferctl send -n -i -r "$del" "$BETA_ADDR" --to modes/del --sync=digest --delete --exclude '*.tmp' 2>&1) || rc=$?
((rc == 0)) && [[ $(grep '^\*deleting' <<<"$out" | LC_ALL=C sort) == "$(printf '%s\n' '*deleting   modes/del/extra.txt' \
        '*deleting   modes/del/gone-dir/sub/drop.txt')" ]] ||
        tb_fail "-n -i --delete --exclude '*.tmp': exit $rc, want extra.txt and gone-dir/sub/drop.txt deleted, no more: $out"
[[ $(meta "$d") == "$snap" ]] || tb_fail "the dry run changed DEST"
# The reference for what stays: rsync --delete --exclude into a copy, less
# gone-dir (rsync removes drop.txt in place, and its directory's mtime
# with it; rdmaxfer's keeps the directory as it was), compared on its own.
rm -rf "$ref" && cp -a "$d" "$ref"
rc=0
out=$(xferctl send -r "$del" "$BETA_ADDR" --to modes/del --sync=digest --delete --exclude '*.tmp' 2>&1) || rc=$?
((rc == 0)) && [[ $out == *"2 deleted"* ]] ||
        tb_fail "send -r --sync=digest --delete --exclude '*.tmp': exit $rc, want 2 deleted: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
[[ -f $d/old.tmp && -f $d/cache.tmp/deep/blob && -f $d/gone-dir/sub/keep.tmp && ! -e $d/gone-dir/sub/drop.txt &&
        ! -e $d/extra.txt && ! -e $d/scratch.tmp ]] || tb_fail "not what rsync keeps: $(cd "$d" && find . | sort)"
gone_meta=$(meta "$ref/gone-dir" | grep -v drop.txt | grep -v '^\./sub d\|^\. d')
[[ $(meta "$d/gone-dir" | grep -v '^\./sub d\|^\. d') == "$gone_meta" ]] || tb_fail "gone-dir's content changed"
[[ $(stat -c '%a %Y' "$d/gone-dir/sub") == $(stat -c '%a %Y' "$ref/gone-dir/sub") ]] ||
        tb_fail "gone-dir/sub, which keeps keep.tmp, lost its mode or mtime"
dm=$(stat -c %y "$d")
rm -rf "$ref/gone-dir" "$d.gone" && mv "$d/gone-dir" "$d.gone" && touch -d "$dm" "$d"
tree_oracle --base "$ref" "$del" "$d" -- --delete --exclude '*.tmp'
mv "$d.gone" "$d/gone-dir" && touch -d "$dm" "$d"
tb_log "what --exclude leaves out stays (a file, a directory whole, a directory for what it holds), the rest" \
       "goes, as rsync --delete --exclude; -n -i said just that"

tb_log "5b. --delete-excluded: an excluded name is deleted on the receiver too"
rc=0
out=$(xferctl send -r "$del" "$BETA_ADDR" --to modes/del --skip-existing --delete --exclude '*.tmp' \
        --delete-excluded 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r --skip-existing --delete --exclude --delete-excluded: exit $rc: $out"
[[ ! -e $d/old.tmp && ! -e $d/scratch.tmp ]] || tb_fail "an excluded name is on the receiver: $(ls -A "$d")"
# The source as it was sent, less what the rule left out (its mtime too).
sent=$(stat -c %y "$del")
rm "$del/scratch.tmp"
touch -d "$sent" "$del"
tree_oracle "$del" "$d"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
# An entry not sent (a FIFO, skipped with a warning): the receiver would
# take its copy for gone, so nothing is deleted, said, exit 23.
mkfifo "$del/pipe"
make_file "$d/pipe" 70
chown rdmaxfer: "$d/pipe"
make_file "$d/extra.txt" 60
chown rdmaxfer: "$d/extra.txt"
rc=0
out=$(xferctl send -r "$del" "$BETA_ADDR" --to modes/del --sync=size --delete 2>&1) || rc=$?
((rc == 23)) && grep -q -- '--delete: 1 entry is not sent (above).*nothing in modes/del is deleted' <<<"$out" ||
        tb_fail "--delete with a FIFO skipped: exit $rc (want 23): $out"
[[ -f $d/pipe && -f $d/extra.txt ]] || tb_fail "--delete with an entry not sent deleted the receiver's: $(ls -A "$d")"
rm -f "$del/pipe" "$d/pipe" "$d/extra.txt"
tb_log "an entry not sent: nothing deleted, exit 23: $(grep -- '--delete:' <<<"$out")"

tb_log "6. --dry-run -i: what a send would do, one line an entry, nothing moved"
dry=$SRC/dry
dd=$BETA_IN/modes/dry
rm -rf "$dry" && mkdir -p "$dry/sub"
make_file "$dry/same.txt" 1000
make_file "$dry/changed.txt" 2000
make_file "$dry/gone.txt" 300
make_file "$dry/sub/s.txt" 400
# 300 more entries: the receiver keeps every name offered to judge
# --delete by, and once ran out of room for them past 192 (the names'
# array grew past the bound it was held to).
mkdir "$dry/many"
for i in {1..300}; do printf '%d\n' "$i" >"$dry/many/f$i"; done
rc=0
out=$(xferctl send -r "$dry" "$BETA_ADDR" --to modes/dry 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of the tree for the dry run: exit $rc: $out"
rm "$dry/gone.txt"
printf 'changed, and longer than before\n' >"$dry/changed.txt"
make_file "$dry/sub/new.txt" 70
meta "$dd" >"$TESTBED_SHARE/dry.before"
rc=0
out=$(xferctl send -r "$dry" "$BETA_ADDR" --to modes/dry -n -i --sync=size --delete 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r -n -i --sync=size --delete: exit $rc: $out"
want=$(printf '%s\n' '>f.st...... modes/dry/changed.txt' '>f+++++++++ modes/dry/sub/new.txt' \
        '*deleting   modes/dry/gone.txt' | LC_ALL=C sort)
[[ $(LC_ALL=C sort <<<"$out") == "$want" ]] || tb_fail "the dry run's lines: want
$want
got
$out"
meta "$dd" | diff "$TESTBED_SHARE/dry.before" - >&2 || tb_fail "the dry run changed DEST"
out=$(xferctl send -r "$dry" "$BETA_ADDR" --to modes/dry -n --sync=size --delete 2>&1) || tb_fail "-n: $out"
[[ $out == "would send 2 files ("*"), keep 302, delete 1" ]] || tb_fail "the dry run's summary: $out"
meta "$dd" | diff "$TESTBED_SHARE/dry.before" - >&2 || tb_fail "the summary's dry run changed DEST"
tb_log "dry run: $(tr '\n' ';' <<<"$want"), nothing changed; $out"
rc=0
out=$(xferctl send -r "$dry" "$BETA_ADDR" --to modes/dry --sync=size --delete 2>&1) || rc=$?
((rc == 0)) && [[ $out == *"2 skipped"*"1 deleted"* ]] ||
        tb_fail "the real send after the dry run: exit $rc: $out"
diff -r "$dry" "$dd" >&2 || tb_fail "the real send did not do what the dry run said"
out=$(xferctl send -r "$dry" "$BETA_ADDR" --to modes/dry -n -ii --sync=size --delete 2>&1) ||
        tb_fail "-n -ii: $out"
grep -q '^[>c*]' <<<"$out" && tb_fail "a dry run after the send still sees changes: $out"
grep -qx '\.f          modes/dry/sub/new.txt' <<<"$out" || tb_fail "-ii does not list what is kept: $out"
tb_log "the real send did what it said; -ii lists every entry, unchanged"
# A single file onto a name there, overwrite off: the real refusal, and nothing made.
# Set once (a key twice is refused): the line peers_configure wrote.
sed -i 's/^overwrite *=.*/overwrite = no/' "$BETA_CONF"
reload_applied "$BETA_UNIT" overwrite
xferctl send "$dry/same.txt" "$BETA_ADDR" --as dry-one.txt >/dev/null || tb_fail "sending dry-one.txt failed"
rc=0
real=$(xferctl send "$dry/changed.txt" "$BETA_ADDR" --as dry-one.txt --retries 0 2>&1) || rc=$?
((rc == 1)) || tb_fail "the real send onto dry-one.txt: exit $rc (want 1): $real"
rc=0
out=$(xferctl send "$dry/changed.txt" "$BETA_ADDR" --as dry-one.txt -n -i --retries 0 2>&1) || rc=$?
((rc == 1)) && [[ $out == "$real" ]] || tb_fail "the dry run onto dry-one.txt: exit $rc: $out (the real one: $real)"
cmp -s "$dry/same.txt" "$BETA_IN/dry-one.txt" || tb_fail "the refused dry run changed dry-one.txt"
tb_log "a single file onto a name there, overwrite off: refused as the real send is: $out"
rm -f "$BETA_IN/dry-one.txt"
# Without a sync too, a dry run moves nothing (its offers said it was
# one only with --sync or --skip-existing, and the file landed).
rc=0
out=$(xferctl send "$dry/changed.txt" "$BETA_ADDR" --as dry-new.txt -n -i --retries 0 2>&1) || rc=$?
((rc == 0)) && grep -qx '>f+++++++++ dry-new.txt' <<<"$out" && [[ ! -e $BETA_IN/dry-new.txt ]] ||
        tb_fail "a dry run of a new file, no --sync: exit $rc: $out; $(ls -l "$BETA_IN/dry-new.txt" 2>&1)"
rc=0
out=$(xferctl send -r "$dry" "$BETA_ADDR" --to modes/dry-new -n -i 2>&1) || rc=$?
((rc == 0)) && grep -qx 'cd+++++++++ modes/dry-new/' <<<"$out" && [[ ! -e $BETA_IN/modes/dry-new ]] ||
        tb_fail "a dry run of a new tree, no --sync: exit $rc: $out"
tb_log "without --sync, a new file and a new tree: would be created, nothing moved"

tb_log "7. every name: control characters, bytes that are not UTF-8, a leading '-', spaces"
nm=$SRC/names
latin1=$'caf\xe9'
rm -rf "$nm" && mkdir -p "$nm/$latin1-dir"
for n in "$latin1.txt" $'line\nbreak' $'esc\e[31mred' 'back\slash' -rf ' space ' $'\xff\xfe' .dot "$latin1-dir/inner"; do
        make_file "$nm/$n" 64
done
ln -s "$latin1.txt" "$nm/link-latin1"
make_file "$nm/big-$latin1.bin" $((5 << 20))    # offered alone, not packed
# A tree 100 levels deep: "modes/names/d/.../d/deep.txt" is 220 bytes.
deep=$nm$(printf '/d%.0s' {1..100})
mkdir -p "$deep" && make_file "$deep/deep.txt" 100
# Paths over 255 bytes (wire version 18): one of 300 bytes, and 14
# directories of 245-byte names with a file, a symlink and a 5 MiB file
# (offered alone, no partial kept past 1023 bytes) at the bottom: 3,464
# bytes on the receiver; a hard link of a long name to a short one, and
# one of a short name to a long one.
mid=$nm/$(printf 'm%.0s' {1..250})
mkdir -p "$mid" && make_file "$mid/$(printf 'f%.0s' {1..36})" 300
long=$nm/$(printf '%s/' "$(printf 'q%.0s' {1..243})"{10..23} | sed 's,/$,,')
mkdir -p "$long"
make_file "$long/end.txt" 1234
make_file "$long/big.bin" $((5 << 20))
ln -s end.txt "$long/end-link"
ln "$nm/$latin1.txt" "$long/hard-to-short.txt"
ln "$long/end.txt" "$nm/hard-to-long.txt"
since=$(date '+%F %T.%6N')
rc=0
out=$(xferctl send -r "$nm" "$BETA_ADDR" --to modes/names 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of a tree of odd names: exit $rc: $out"
tree_oracle "$nm" "$BETA_IN/modes/names"
[[ -f $BETA_IN/modes/names/${long#"$nm"/}/big.bin ]] || tb_fail "the file at a path of 3,464 bytes is not there"
# Again with --sync=digest: every entry, the long ones too, is found and kept.
rc=0
again=$(xferctl send -r "$nm" "$BETA_ADDR" --to modes/names --sync=digest 2>&1) || rc=$?
((rc == 0)) && [[ $again == *"skipped"* ]] || tb_fail "--sync=digest of the odd names: exit $rc: $again"
tree_oracle "$nm" "$BETA_IN/modes/names"
tb_log "paths of 300 and 3,464 bytes arrived, and a sync found them: $(tail -n 1 <<<"$again")"
[[ -f $BETA_IN/modes/names/$'line\nbreak' && -f $BETA_IN/modes/names/$'\xff\xfe' ]] ||
        tb_fail "the names with a newline and with bytes that are not UTF-8 are not there as themselves"
# Shown escaped, never as the bytes: no ESC nor a bare 0xe9 in xferctl's output or beta's log.
LC_ALL=C grep -q $'[\e\xe9]' <<<"$out" && tb_fail "xferctl printed a name's raw bytes: $out"
journalctl -u "$BETA_UNIT" --since "$since" --no-pager -o cat | LC_ALL=C grep -q $'[\e\xe9]' &&
        tb_fail "beta logged a name's raw bytes"
xferctl send "$nm/$latin1.txt" "$BETA_ADDR" >/dev/null || tb_fail "a single Latin-1 name failed"
cmp -s "$nm/$latin1.txt" "$BETA_IN/$latin1.txt" || tb_fail "the Latin-1 file differs"
tb_log "arrived as rsync -aHS makes it (tree-oracle), shown escaped: $(tail -n 1 <<<"$out")"
# names = utf8, the admin's choice: the tree is refused whole, the cause named.
echo "names = utf8" >>"$BETA_CONF"
reload_applied "$BETA_UNIT" names
rc=0
out=$(xferctl send -r "$nm" "$BETA_ADDR" --to modes/names-utf8 --retries 0 2>&1) || rc=$?
# Whichever entry comes first: a control character, or bytes that are not UTF-8.
((rc != 0)) && grep -qE "(not valid UTF-8|a control character) \(names = utf8\)" <<<"$out" ||
        tb_fail "names = utf8 took a tree of names that are not UTF-8: exit $rc: $out"
[[ ! -e $BETA_IN/modes/names-utf8 ]] || tb_fail "names = utf8: a part of the refused tree was published"
tb_log "names = utf8: refused, $(tail -n 1 <<<"$out")"
rm -f "$BETA_IN/$latin1.txt"

chmod -R u+rwx "$tree" "$ro" "$del" "$ref" "$BETA_IN/modes" 2>/dev/null
rm -rf "$nm" "$tree" "$ro" "$del" "$dry" "$ref" "$SRC/del-sibling" "$SRC/del-outside.txt" "$SRC/rsync-ref" "$BETA_IN/modes"
