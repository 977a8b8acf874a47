#!/bin/bash
# Hard links (issue 34, item 3): a file with several names in a tree
# arrives as one file with those names, its data sent once, as rsync -aH
# makes it. A tree with a 5 MiB file (offered alone) under two names, a
# small one (packed) under three in three directories, a read-only one
# under two, one whose other name is outside the tree, and a plain one:
#  1. sent into a new DEST: content, modes, mtimes and the same groups of
#     names as rsync -aHS's copy (tree-oracle); the receiver's journal counts the data
#     once (the bytes on the wire <= 1.05 x the distinct data);
#  2. --sync=digest with nothing changed: everything kept, links intact;
#     its dry run (-n -i) says nothing;
#  3. the small file changed (all three names: one file): its dry run
#     says that file and its two other names; --sync=digest
#     sends it once, and the three names are one file again, the new one;
#  4. --no-hard-links: every name a file of its own.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure overwrite=yes
start_peers

tree=$SRC/hl
rm -rf "$tree" "$SRC/hl-outside"
mkdir -p "$tree/sub/deep" "$SRC/hl-outside"
make_file "$tree/data.bin" $((5 << 20))         # over 4 MiB: offered alone
ln "$tree/data.bin" "$tree/sub/data-link.bin"
make_file "$tree/small.txt" 3000                # packed
ln "$tree/small.txt" "$tree/sub/small2.txt"
ln "$tree/small.txt" "$tree/sub/deep/small3.txt"
make_file "$tree/ro.txt" 700
ln "$tree/ro.txt" "$tree/sub/ro-link.txt"
chmod 444 "$tree/ro.txt"
make_file "$tree/once.txt" 500                  # its other name is outside the tree
ln "$tree/once.txt" "$SRC/hl-outside/once.txt"
make_file "$tree/plain.txt" 100
touch -d '2021-02-03 04:05:06.789' "$tree/small.txt" "$tree/data.bin"
distinct=$(((5 << 20) + 3000 + 700 + 500 + 100))

tb_log "1. a tree with hard links into a new DEST"
since=$(date '+%F %T.%6N')
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to links/t1 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of a tree with hard links: exit $rc: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
tree_oracle "$tree" "$BETA_IN/links/t1"
[[ $(stat -c %h "$BETA_IN/links/t1/sub/deep/small3.txt") == 3 ]] || tb_fail "small.txt's file has not 3 names"
[[ $(stat -c %h "$BETA_IN/links/t1/once.txt") == 1 ]] || tb_fail "once.txt is linked to something"
# The job's one entry on beta (its RDMAXFER_FILE counts files, names none).
bytes=$(jobs_since "$BETA_UNIT" "$since" recv | sed -n 's/^RDMAXFER_BYTES=//p' | tail -n 1)
[[ -n $bytes ]] || tb_fail "no RDMAXFER_BYTES for the job in beta's journal"
((bytes <= distinct * 105 / 100)) ||
        tb_fail "$bytes bytes moved for $distinct bytes of distinct data (more than 1.05 x: sent twice?)"
tb_log "the same names of one file as rsync -aH's copy; $bytes bytes moved for $distinct distinct"

tb_log "2. --sync=digest, nothing changed: kept, the links intact"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to links/t1 --sync=digest 2>&1) || rc=$?
((rc == 0)) || tb_fail "--sync=digest of an unchanged tree with hard links: exit $rc: $out"
[[ $out == *skipped* ]] || tb_fail "nothing was skipped: $out"
tree_oracle "$tree" "$BETA_IN/links/t1"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
# A dry run says nothing of them: each name there is the file it links.
rc=0
out=$(xferctl send -n -i -r "$tree" "$BETA_ADDR" --to links/t1 --sync=digest 2>&1) || rc=$?
((rc == 0)) && ! grep -q '^[>ch*]' <<<"$out" || tb_fail "-n -i --sync=digest of the unchanged tree: exit $rc: $out"

tb_log "3. the small file changed under all its names: sent once, its names one file again"
make_file "$tree/small.txt.new" 3000
cat "$tree/small.txt.new" >"$tree/small.txt"    # in place: the same file, its three names
rm "$tree/small.txt.new"
# A dry run first: that file would be replaced, and its two other names
# linked to the new one; the other hard links kept.
rc=0
out=$(xferctl send -n -i -r "$tree" "$BETA_ADDR" --to links/t1 --sync=digest 2>&1) || rc=$?
((rc == 0)) && [[ $(grep -cE '^>fc\.[.t]\.{6} .*small' <<<"$out") == 1 && $(grep -cE '^hfc\.[.t]\.{6} .*small.* => .*small' <<<"$out") == 2 &&
        $(grep -c . <<<"$out") == 3 ]] || tb_fail "-n -i --sync=digest, small.txt changed: exit $rc: $out"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to links/t1 --sync=digest 2>&1) || rc=$?
((rc == 0)) || tb_fail "--sync=digest after a hard-linked file changed: exit $rc: $out"
tree_oracle "$tree" "$BETA_IN/links/t1"
tb_log "xferctl: $(tail -n 1 <<<"$out")"

tb_log "4. --no-hard-links: every name a file of its own"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to links/t2 --no-hard-links 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r --no-hard-links: exit $rc: $out"
diff -r "$tree" "$BETA_IN/links/t2" >&2 || tb_fail "links/t2: contents differ"
[[ -z $(find "$BETA_IN/links/t2" -type f -links +1) ]] ||
        tb_fail "--no-hard-links left files with several names: $(find "$BETA_IN/links/t2" -type f -links +1)"
tb_log "each name its own file"

incoming_clean "$BETA_IN" links
chmod -R u+w "$tree" "$BETA_IN/links" 2>/dev/null
rm -rf "$tree" "$SRC/hl-outside" "$BETA_IN/links"
