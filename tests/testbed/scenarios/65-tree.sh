#!/bin/bash
# Several files in one job: `xferctl send FILE... PEER` is one session to
# the peer (its lanes stay connected from file to file, one transfer id on
# both sides), every file lands byte-identical under its own name, UTF-8
# names included; the job stops at the first file the receiver refuses,
# with what came before it published and nothing after. A directory, or
# two files of one name, are usage errors before anything is sent. A tree
# (-r --to DEST) arrives whole (nested and empty directories, empty files,
# UTF-8 names, symlinks inside it as symlinks; a FIFO and a symlink
# pointing outside skipped with a warning, the latter sent with --links all
# only to a receiver whose tree_symlinks allows it), is invisible
# until its last file is verified, is not published by a receiver killed
# half-way, and hostile DESTs are refused; files keep their mode (less
# setuid) and mtime, directories their mode. About 1,000 small files go
# several to an offer (packs), the same as one by one. Sync: a tree sent
# again with --sync=digest into its DEST moves only what changed and keeps
# the rest (a file deleted at the source too); --skip-existing replaces
# nothing; with overwrite off a file that differs fails the job and leaves
# DEST as it was; flat files are skipped per file.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

BETA_PART=/var/lib/rdmaxferd-beta/partial

peers_configure
start_peers

many=$SRC/many
rm -rf "$many" && mkdir -p "$many"
# 70 small files (cut from one random blob: one process, not 70), an
# empty one, a UTF-8 name, and one of several chunks: 73 files, handed to
# the daemon in three batches (CTL_BATCH_MAX is 32 descriptors).
head -c $((70 * 10500)) /dev/urandom >"$SRC/blob"
(cd "$many" && split -b 10500 -a 3 -d "$SRC/blob" f) || tb_fail "split"
: >"$many/empty.bin"
make_file "$many/données-été.txt" 7777
make_file "$many/odd.dat" $((3 * 1024 * 1024 + 12345))
nfiles=$(ls "$many" | wc -l)

tb_log "sending $nfiles files in one job"
t0=$(date +%s.%N)
since="@${t0%.*}"
out=$(xferctl send "$many"/* "$BETA_ADDR" 2>&1) || {
        printf '%s\n' "$out" >&2
        tb_fail "xferctl send of $nfiles files failed"
}
t1=$(date +%s.%N)
tb_log "xferctl: $(tail -n 1 <<<"$out") ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
[[ $out == *"sent $nfiles files"* ]] || tb_fail "summary does not count the files: $out"
(cd "$many" && sha256sum -- *) | (cd "$BETA_IN" && sha256sum --quiet -c -) >&2 ||
        tb_fail "files differ on beta"
tb_log "all $nfiles files identical on beta"

# One session: one journal entry for the job on each side (per-file entries
# are for log_level debug), counting every file, under one transfer id.
for side in "$ALPHA_UNIT send" "$BETA_UNIT recv"; do
        unit=${side% *} dir=${side#* }
        js=$(jobs_since "$unit" "$since" "$dir")
        [[ $(grep -c '^RDMAXFER_FILE=' <<<"$js") == 1 ]] || tb_fail "$unit: not one journal entry for the job"
        [[ $(sed -n 's/^RDMAXFER_FILES=//p' <<<"$js") == "$nfiles" &&
           $(sed -n 's/^RDMAXFER_FILES_TOTAL=//p' <<<"$js") == "$nfiles" &&
           $(sed -n 's/^RDMAXFER_RESULT=//p' <<<"$js") == ok ]] ||
                tb_fail "$unit: the job's entry does not count $nfiles files ok"
        tb_log "$unit: $(sed -n 's/^MESSAGE=//p' <<<"$js")"
        if [[ $dir == send ]]; then id_send=$(sed -n 's/^RDMAXFER_ID=//p' <<<"$js"); else
                id_recv=$(sed -n 's/^RDMAXFER_ID=//p' <<<"$js"); fi
done
[[ -n $id_send && $id_send == "$id_recv" ]] || tb_fail "transfer ids differ: $id_send vs $id_recv"
# ... over one connection set-up: one "receiving" line, not one per file.
conns=$(journalctl -u "$BETA_UNIT" --no-pager --since "$since" -o cat | grep -c ': receiving ')
[[ $conns == 1 ]] || tb_fail "beta accepted $conns sessions, not 1"
id=$(journalctl -u "$ALPHA_UNIT" --no-pager --since "$since" -o cat | sed -n 's/^job \([0-9]*\): [0-9]* files.*/\1/p' | tail -n 1)
js=$(xferctl status "$id" --json)
[[ $(job_field "$js" files) == "$nfiles" && $(job_field "$js" files_total) == "$nfiles" ]] ||
        tb_fail "status --json does not count the files: $js"
tb_log "one session, one transfer id, files counted in status"

# Several lanes kept over the session: a lane per 8 chunks and 1 MiB
# block of the job at most, and each file striped over its own blocks (a
# file of fewer blocks than lanes leaves some lanes only their END), with
# its own block digest, stored on each published file.
sed -i '/^lanes/d' "$ALPHA_CONF" "$BETA_CONF"
echo "lanes = 4" >>"$ALPHA_CONF"
echo "lanes = 4" >>"$BETA_CONF"
tb_run systemctl reload "$ALPHA_UNIT" "$BETA_UNIT"
mkdir -p "$SRC/lanes"
# 130 blocks, a page, 65 blocks, each file's last block short: 4 lanes,
# whose runs of a.dat and c.dat start and end inside 64 MiB digest groups.
make_file "$SRC/lanes/a.dat" $((129 * 1024 * 1024 + 1))
make_file "$SRC/lanes/b.dat" 4097
make_file "$SRC/lanes/c.dat" $((65 * 1024 * 1024))
line=$(xferctl send "$SRC/lanes/a.dat" "$SRC/lanes/b.dat" "$SRC/lanes/c.dat" "$BETA_ADDR" 2>&1) ||
        tb_fail "send over 4 lanes failed: $line"
for f in a.dat b.dat c.dat; do
        same_file "$SRC/lanes/$f" "$BETA_IN/$f"
        want=$(xferctl sum "$SRC/lanes/$f") || tb_fail "xferctl sum $f failed"
        got=$(getfattr --only-values -n user.rdmaxfer.digest "$BETA_IN/$f") ||
                tb_fail "$f was published without user.rdmaxfer.digest"
        [[ "$got  $SRC/lanes/$f" == "$want" ]] || tb_fail "$f: xattr $got, xferctl sum: $want"
done
tb_log "a small file between two large ones, over the session's 4 lanes: identical"
# The same files as a tree: its first entry, DEST, is a directory with no
# data, yet the job's bytes grant 4 lanes; every lane connects and carries
# only its END for it, then the files follow. Without a.dat: b.dat and
# c.dat's 65 MiB are twice what 4 lanes need (8 chunks each).
rm "$SRC/lanes/a.dat"
since="@$(date +%s)"
rc=0
out=$(timeout 120 xferctl send -r "$SRC/lanes" "$BETA_ADDR" --to runs/lanes 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of a tree over 4 lanes: exit $rc: $out"
for f in b.dat c.dat; do same_file "$SRC/lanes/$f" "$BETA_IN/runs/lanes/$f"; done
lanes=$(jobs_since "$BETA_UNIT" "$since" recv | sed -n 's/^RDMAXFER_LANES=//p' | tail -n 1)
[[ $lanes == 4 ]] || tb_fail "the tree went over ${lanes:-no} lanes, not 4"
tb_log "a tree of $(du -sm "$SRC/lanes" | cut -f1) MiB over 4 lanes: identical"

# A refusal stops the job: before it published, after it never offered.
mkdir -p "$SRC/stop"
for f in s1 s2 s3; do make_file "$SRC/stop/$f.dat" 1000; done
cp "$SRC/stop/s2.dat" "$BETA_IN/s2.dat"
rc=0
out=$(xferctl send --json "$SRC/stop/s1.dat" "$SRC/stop/s2.dat" "$SRC/stop/s3.dat" "$BETA_ADDR" 2>"$SRC/stop.err") ||
        rc=$?
err=$(cat "$SRC/stop.err")
((rc == 1)) || tb_fail "a job with a refused file exited $rc, not 1: $out $err"
grep -qi "exists" <<<"$err" || tb_fail "the refusal does not say why: $err"
same_file "$SRC/stop/s1.dat" "$BETA_IN/s1.dat"
[[ ! -e $BETA_IN/s3.dat ]] || tb_fail "s3.dat was sent after the job failed"
# --json says what became of each file.
grep -qE '"file_results":\[\{"path":"[^"]*/s1\.dat","name":"s1\.dat","size":1000,"result":"published"\},'"$(
        )"'\{"path":"[^"]*/s2\.dat","name":"s2\.dat","size":1000,"result":"failed","text":"[^"]*exists[^"]*"\},'"$(
        )"'\{"path":"[^"]*/s3\.dat","name":"s3\.dat","size":1000,"result":"not sent"\}\]\}\}\]\}$' <<<"$out" ||
        tb_fail "--json: no per-file results (published, failed, not sent): $out"
# One shape (a peers array), and the job's times in RFC 3339, UTC.
grep -qE '^\{"peers":\[\{"peer":"'"$BETA_ADDR"'","exit":1,"job":\{"id":' <<<"$out" ||
        tb_fail "--json: not the peers shape: $out"
grep -qE '"created":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z","started":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z","ended":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"' <<<"$out" ||
        tb_fail "--json: no RFC 3339 created, started and ended: $out"
tb_log "the job stopped at the refused file: $(tail -n 1 <<<"$err"); --json: s1 published, s2 failed, s3 not sent"

# Usage errors, before anything is sent.
rc=0
out=$(xferctl send "$SRC/stop" "$SRC/stop/s1.dat" "$BETA_ADDR" 2>&1) || rc=$?
((rc == 2)) && grep -q "directory" <<<"$out" || tb_fail "a directory: exit $rc: $out"
rc=0
out=$(xferctl send "$SRC/stop/s1.dat" "$SRC/lanes/../stop/s1.dat" "$BETA_ADDR" 2>&1) || rc=$?
((rc == 2)) && grep -q "two files named" <<<"$out" || tb_fail "a name twice: exit $rc: $out"
rc=0
out=$(xferctl send "$SRC/stop/s1.dat" "$SRC/stop/s3.dat" "$BETA_ADDR" --as x 2>&1) || rc=$?
((rc == 2)) || tb_fail "--as with several files: exit $rc: $out"
[[ ! -e $BETA_IN/s3.dat ]] || tb_fail "a usage error sent something"
tb_log "a directory, a name twice, --as with several files: usage errors"

# --continue-on-error: what cannot be opened is left out, the rest sent, exit 23.
make_file "$SRC/stop/c1.dat" 100
make_file "$SRC/stop/c2.dat" 200
rc=0
out=$(xferctl send --json --continue-on-error "$SRC/stop/c1.dat" "$SRC/stop/none.dat" "$SRC/stop/c2.dat" \
        "$BETA_ADDR" 2>/dev/null) || rc=$?
((rc == 23)) || tb_fail "--continue-on-error with a missing file: exit $rc, not 23: $out"
grep -qE '"result":"published"\},\{"path":"[^"]*/none\.dat","result":"left out","text":"No such file or directory"\},'"$(
        )"'\{"path":"[^"]*/c2\.dat","name":"c2\.dat","size":200,"result":"published"\}\]\}\}\]\}$' <<<"$out" ||
        tb_fail "--json: the file left out is not said: $out"
same_file "$SRC/stop/c1.dat" "$BETA_IN/c1.dat"
same_file "$SRC/stop/c2.dat" "$BETA_IN/c2.dat"
tb_log "--continue-on-error: the readable files sent, exit 23"

# A tree (-r): published as DEST in one rename once every file is verified.
tree=$SRC/tree
rm -rf "$tree" && mkdir -p "$tree/a/b/c" "$tree/empty" "$tree/données"
make_file "$tree/a/b/c/deep.bin" $((2 * 1024 * 1024 + 7))
: >"$tree/a/empty.txt"
make_file "$tree/données/été.txt" 333
# f1 .. f40 of i * 97 random bytes, from one process rather than 80.
perl -e 'for my $i (1 .. 40) { open(my $f, ">", "$ARGV[0]/f$i") or die "$!\n";
        print $f pack("C*", map { int(rand(256)) } 1 .. $i * 97) }' "$tree/a" || tb_fail "f1 .. f40"
chmod 600 "$tree/a/f1"
chmod 755 "$tree/a/f2"
chmod 4755 "$tree/a/f3"
chmod 700 "$tree/a/b"
touch -d '2001-02-03 04:05:06.123456789' "$tree/a/f4"
ln -s a/b/c/deep.bin "$tree/link-in"
ln -s ../données/été.txt "$tree/a/link-up"
ln -s /etc/passwd "$tree/link-out"
touch -h -d '2002-03-04 05:06:07.5' "$tree/link-in"
mkfifo "$tree/fifo"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to runs/t1 2>&1) || rc=$?
# What was left out makes it partial, never a silent success.
((rc == 23)) || tb_fail "send -r of a tree with a FIFO and an outside symlink: exit $rc, not 23: $out"
tb_log "xferctl: $(grep -v '^xferctl: ' <<<"$out" | tail -n 1)"
grep -q "skipping .*fifo: it is a FIFO" <<<"$out" || tb_fail "the FIFO was not skipped with a warning: $out"
grep -q "skipping .*link-out: a symlink pointing outside the tree" <<<"$out" ||
        tb_fail "a symlink pointing outside was not skipped with a warning: $out"
grep -q "2 entries were not sent" <<<"$out" || tb_fail "the summary does not count what was left out: $out"
[[ -d $BETA_IN/runs/t1 ]] || tb_fail "runs/t1 was not published"
# Contents, types, modes (setuid dropped), mtimes to the nanosecond
# (directories' and symlinks' too), symlink targets: what rsync -aHS
# makes of it, less the FIFO and the symlink pointing outside.
tree_oracle "$tree" "$BETA_IN/runs/t1" -- --exclude /link-out
[[ -d $BETA_IN/runs/t1/empty && ! -e $BETA_IN/runs/t1/fifo && ! -L $BETA_IN/runs/t1/link-out ]] ||
        tb_fail "an empty directory missing, or a FIFO or an outside symlink sent"
[[ -L $BETA_IN/runs/t1/link-in && $(readlink "$BETA_IN/runs/t1/link-in") == a/b/c/deep.bin &&
   -L $BETA_IN/runs/t1/a/link-up && $(readlink "$BETA_IN/runs/t1/a/link-up") == ../données/été.txt ]] ||
        tb_fail "the symlinks inside the tree did not arrive as symlinks with their targets"
[[ -z $(find "$BETA_IN" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed"
tb_log "the tree arrived whole (empty directories, empty files, UTF-8 names, modes without setuid, mtimes,"
tb_log "  symlinks inside it as symlinks; a FIFO and a symlink pointing outside skipped)"

# Several sources: each arrives as DEST/its last component; --to is required.
rc=0
out=$(xferctl send -r "$tree/a" "$tree/données" "$BETA_ADDR" 2>&1) || rc=$?
((rc == 2)) && grep -q -- "--to DEST" <<<"$out" || tb_fail "several sources without --to: exit $rc: $out"
out=$(xferctl send -r "$tree/a" "$tree/données/" "$SRC/lanes/b.dat" "$BETA_ADDR" --to runs/multi 2>&1) ||
        tb_fail "send -r of several sources failed: $out"
diff -r --no-dereference "$tree/a" "$BETA_IN/runs/multi/a" >&2 && diff -r "$tree/données" "$BETA_IN/runs/multi/données" >&2 &&
        cmp "$SRC/lanes/b.dat" "$BETA_IN/runs/multi/b.dat" || tb_fail "several sources: the tree differs"
[[ $(ls "$BETA_IN/runs/multi" | LC_ALL=C sort | tr '\n' ' ') == "a b.dat données " ]] ||
        tb_fail "several sources: runs/multi holds $(ls "$BETA_IN/runs/multi")"
tb_log "several sources (two directories and a file) arrived as runs/multi/{a,données,b.dat}"

# Symlinks pointing outside: refused by the receiver unless tree_symlinks allows them.
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to runs/t4 --links all 2>&1) || rc=$?
((rc == 1)) && grep -q "link-out: it points outside the tree, and tree_symlinks is safe" <<<"$out" ||
        tb_fail "--links all to a receiver with tree_symlinks safe: exit $rc: $out"
[[ ! -e $BETA_IN/runs/t4 ]] || tb_fail "runs/t4 was published with a refused symlink"
echo "tree_symlinks = any" >>"$BETA_CONF"
tb_run systemctl reload "$BETA_UNIT"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to runs/t4 --links all 2>&1) || rc=$?
# 23: the FIFO is still left out.
((rc == 23)) && grep -q "1 entry was not sent" <<<"$out" ||
        tb_fail "--links all to a receiver with tree_symlinks any: exit $rc: $out"
[[ -L $BETA_IN/runs/t4/link-out && $(readlink "$BETA_IN/runs/t4/link-out") == /etc/passwd ]] ||
        tb_fail "tree_symlinks any: link-out did not arrive as a symlink to /etc/passwd"
sed -i 's/^tree_symlinks = any$/tree_symlinks = none/' "$BETA_CONF"
tb_run systemctl reload "$BETA_UNIT"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to runs/t5 2>&1) || rc=$?
((rc == 1)) && grep -q "tree_symlinks is none" <<<"$out" || tb_fail "tree_symlinks none: exit $rc: $out"
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to runs/t5 --links none 2>&1) || rc=$?
# The symlinks --links none asked to leave out do not count; the FIFO does.
((rc == 23)) && grep -q "1 entry was not sent" <<<"$out" ||
        tb_fail "--links none to a receiver with tree_symlinks none: exit $rc: $out"
[[ -z $(find "$BETA_IN/runs/t5" -type l) ]] || tb_fail "--links none sent a symlink"
sed -i '/^tree_symlinks = /d' "$BETA_CONF"
tb_run systemctl reload "$BETA_UNIT"
tb_log "outside symlinks: refused by tree_symlinks safe, kept as links by any; none refuses every one"

# Many small files: packed several to an offer (wire.h "Packs"), so the
# receiver's job entry counts fewer packs than entries, and they arrive
# exactly as entries offered one by one would: nested and empty
# directories, empty files, UTF-8 names, the pack limit's edges (4 MiB
# packed, 4 MiB + 1 alone), a few larger files between them, modes and
# mtimes. Cut from one blob per directory: a few processes, not 1,000.
pk=$SRC/packs
rm -rf "$pk" && mkdir -p "$pk"
head -c $((2 * 1024 * 1024)) /dev/urandom >"$SRC/pblob"
# In each of d01 .. d10, 95 files of d * 211 + 300 bytes, the last one 7
# bytes short (what split -a 3 -d makes of the blob's head), by one process.
perl -e 'open(my $b, "<", $ARGV[1]) or die "$!\n"; local $/; my $blob = <$b>;
        for my $d (1 .. 10) {
                my $dir = sprintf("%s/d%02d/sub", $ARGV[0], $d);
                for my $m (sprintf("%s/d%02d", $ARGV[0], $d), $dir) { -d $m or mkdir($m) or die "$m: $!\n" }
                my $sz = $d * 211 + 300;
                for my $k (0 .. 94) {
                        open(my $f, ">", sprintf("%s/f%03d", $dir, $k)) or die "$!\n";
                        print $f substr($blob, $k * $sz, $k == 94 ? $sz - 7 : $sz);
                }
        }' "$pk" "$SRC/pblob" || tb_fail "the packs' files"
mkdir -p "$pk/empty1" "$pk/empty2/inner" "$pk/zero" "$pk/été/über"
(cd "$pk/zero" && touch z{00..39}) || tb_fail "touch"
for n in un deux trois quatre; do make_file "$pk/été/über/fichier-$n.txt" 777; done
make_file "$pk/d01/edge-4m" $((4 * 1024 * 1024))
make_file "$pk/d02/edge-4m+1" $((4 * 1024 * 1024 + 1))
make_file "$pk/d03/large-a" $((6 * 1024 * 1024 + 5))
make_file "$pk/d10/large-b" $((5 * 1024 * 1024))
chmod 600 "$pk/d04/sub/f000"
chmod 4755 "$pk/d05/sub/f001"
chmod 750 "$pk/d06/sub"
touch -d '1999-12-31 23:59:59.987654321' "$pk/d07/sub/f002" "$pk/zero/z07"
entries=$(find "$pk" | wc -l)
t0=$(date +%s.%N)
since="@${t0%.*}"
rc=0
out=$(xferctl send -r "$pk" "$BETA_ADDR" --to runs/packs 2>&1) || rc=$?
t1=$(date +%s.%N)
((rc == 0)) || tb_fail "send -r of $entries entries failed (exit $rc): $out"
tb_log "xferctl: $(tail -n 1 <<<"$out") ($(awk -v a="$t0" -v b="$t1" -v n="$entries" \
        'BEGIN { printf "%.1f s, %.0f entries/s", b - a, n / (b - a) }'))"
tree_oracle "$pk" "$BETA_IN/runs/packs"
# A packed file carries the digest an entry offered alone does.
want=$(xferctl sum "$pk/d08/sub/f003") || tb_fail "xferctl sum failed"
got=$(getfattr --only-values -n user.rdmaxfer.digest "$BETA_IN/runs/packs/d08/sub/f003") ||
        tb_fail "a packed file was published without user.rdmaxfer.digest"
[[ "$got  $pk/d08/sub/f003" == "$want" ]] || tb_fail "packed file's xattr $got, xferctl sum: $want"
js=$(jobs_since "$BETA_UNIT" "$since" recv)
files=$(sed -n 's/^RDMAXFER_FILES=//p' <<<"$js" | tail -n 1)
packs=$(sed -n 's/^RDMAXFER_PACKS=//p' <<<"$js" | tail -n 1)
[[ $files == "$entries" ]] || tb_fail "the receiver's job entry counts ${files:-no} files, not $entries"
[[ -n $packs ]] && ((packs > 0 && packs * 10 < entries)) ||
        tb_fail "${packs:-no} packs for $entries entries: small files were not packed"
tb_log "$entries entries in $packs packs and a few single offers: identical, modes, mtimes, digests"

# The same DEST again: refused (overwrite is off), and what is there stays.
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" --to runs/t1 2>&1) || rc=$?
((rc == 1)) && grep -qi "exists" <<<"$out" || tb_fail "an existing DEST: exit $rc: $out"
diff -r --no-dereference -x fifo -x link-out "$tree" "$BETA_IN/runs/t1" >/dev/null ||
        tb_fail "the existing tree was touched"

# A job that fails while xferctl still hands entries over (more than the
# socket holds) lets it go at once, saying why, instead of leaving it blocked.
mkdir -p "$SRC/wide/d" && (cd "$SRC/wide/d" && seq -f 'e%05g' 4000 | xargs touch)
mkdir -p "$BETA_IN/runs/wide"
rc=0
out=$(timeout 120 xferctl send -r "$SRC/wide" "$BETA_ADDR" --to runs/wide 2>&1) || rc=$?
((rc == 1)) && grep -qi "exists" <<<"$out" || tb_fail "a failed job of 4,000 entries: exit $rc (124: xferctl hung): $out"
rm -rf "$SRC/wide" "$BETA_IN/runs/wide"
tb_log "a job that failed while entries were still being handed over let xferctl go"

# stage_new STAGES: beta's partial_dir has a tree's staging directory that
# is not among STAGES (what it had before).
stages() { find "$BETA_PART" -mindepth 1 -maxdepth 1 -name '*.tree' | sort; }
stage_new() { [[ -n $(comm -13 <(printf '%s\n' "$1") <(stages)) ]]; }

# Nothing visible before the end: slowed down, the tree is not there half-way.
make_file "$tree/a/b/slow.bin" $((6 * 1024 * 1024))
before=$(stages)
xferctl send -r "$tree" "$BETA_ADDR" --to runs/t2 --bwlimit 2M >"$TESTBED_SHARE/t2.out" 2>&1 &
t2=$!
# Kept for a retry: staged in beta's partial_dir, not in incoming_dir.
wait_for 60 stage_new "$before" || tb_fail "no staging directory in partial_dir while the job runs"
[[ ! -e $BETA_IN/runs/t2 ]] || tb_fail "runs/t2 is visible before its job ended"
! ls -A "$BETA_IN" | grep -q '^\.rdmaxfer' || tb_fail "a staging directory in incoming_dir: $(ls -A "$BETA_IN")"
# 23: the FIFO and the outside symlink are left out, as before.
rc=0
wait "$t2" || rc=$?
((rc == 23)) || tb_fail "the slowed send -r: exit $rc: $(cat "$TESTBED_SHARE/t2.out")"
[[ -f $BETA_IN/runs/t2/a/b/slow.bin ]] || tb_fail "runs/t2 not published at the end"
tb_log "nothing of runs/t2 was visible until its last file was verified"

# A receiver SIGKILLed half-way publishes nothing (with no retry: the
# sender gives up; 67-tree-resume has the retry that continues). What it
# staged stays in its partial_dir for partial_retention, nothing of it in
# incoming_dir.
before=$(stages)
xferctl send --retries 0 -r "$tree" "$BETA_ADDR" --to runs/t3 --bwlimit 2M >"$TESTBED_SHARE/t3.out" 2>&1 &
t3=$!
wait_for 60 stage_new "$before" || tb_fail "runs/t3 was never staged in partial_dir"
sleep 1
systemctl kill -s SIGKILL "$BETA_UNIT"
wait "$t3" && tb_fail "the send to a killed receiver succeeded"
[[ ! -e $BETA_IN/runs/t3 ]] || tb_fail "runs/t3 was published by a killed receiver"
tb_run systemctl restart "$BETA_UNIT"
stage_new "$before" || tb_fail "beta kept nothing of runs/t3 for a retry"
! ls -A "$BETA_IN" | grep -q '^\.rdmaxfer' || tb_fail "a staging directory in incoming_dir: $(ls -A "$BETA_IN")"
tb_log "a receiver killed half-way published nothing; it kept what it staged in partial_dir"

# Hostile destinations, refused by xferctl before anything is sent.
for bad in ../x /abs a/../../b; do
        rc=0
        out=$(xferctl send -r "$tree" "$BETA_ADDR" --to "$bad" 2>&1) || rc=$?
        ((rc == 2)) || tb_fail "--to $bad: exit $rc: $out"
done
tb_log "hostile destinations refused"

# Sync (xferctl send --sync, --skip-existing): a tree sent again into its
# existing DEST moves only what changed and keeps what the receiver has
# beyond it; a file packed or alone, a size change or the same size with
# other bytes (--sync=digest), a file added, one deleted at the source
# (kept: this is not rsync --delete), a symlink kept a symlink.
st=$SRC/sync-src
rm -rf "$st" && mkdir -p "$st/sub"
make_file "$st/big.bin" $((1536 * 1024))
make_file "$st/sub/big2.bin" $((600 * 1024))
for f in s1.txt s2.txt s3.txt sub/s4.txt gone.txt; do make_file "$st/$f" 3000; done
ln -s s1.txt "$st/link"
since_sync=$(date +%s)
xferctl send -r "$st" "$BETA_ADDR" --to t-sync >/dev/null 2>&1 || tb_fail "the first send of t-sync failed"
diff -r --no-dereference "$st" "$BETA_IN/t-sync" >/dev/null || tb_fail "t-sync differs after its first send"
make_file "$st/big.bin" $((1536 * 1024))        # the same size, other bytes
make_file "$st/s2.txt" 4000                     # another size
make_file "$st/new.txt" 5000                    # added
rm "$st/gone.txt"                               # deleted at the source
echo "overwrite = yes" >>"$BETA_CONF"
reload_applied "$BETA_UNIT" overwrite
sleep 1
since_sync=$(date +%s)
out=$(xferctl send -r "$st" "$BETA_ADDR" --to t-sync --sync=digest 2>&1) ||
        tb_fail "send -r --sync=digest into the existing t-sync failed: $out"
tb_log "sync: $(tail -n 1 <<<"$out")"
# Four unchanged files, and the symlink (its target the same).
[[ $out == *"5 skipped (already on"* ]] || tb_fail "the summary does not say 5 skipped: $out"
diff -r --no-dereference "$st" "$BETA_IN/t-sync" | grep -v "^Only in $BETA_IN/t-sync: gone.txt\$" | grep . &&
        tb_fail "t-sync is not the new source plus gone.txt"
[[ -f $BETA_IN/t-sync/gone.txt && -L $BETA_IN/t-sync/link ]] ||
        tb_fail "sync removed what the source no longer has, or the symlink is not one"
js=$(jobs_since "$ALPHA_UNIT" "@$since_sync" send)
skipped=$(sed -n 's/^RDMAXFER_SKIPPED=//p' <<<"$js" | tail -n 1)
bytes=$(sed -n 's/^RDMAXFER_BYTES=//p' <<<"$js" | tail -n 1)
total=$(find "$st" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
[[ $skipped == 5 ]] || tb_fail "the sender's entry has RDMAXFER_SKIPPED=${skipped:-none}, not 5"
((bytes > 0 && bytes < total - 500000)) ||
        tb_fail "RDMAXFER_BYTES=$bytes of a $total-byte tree: the unchanged files moved too"
# The small files go in index packs (wire.h): the unchanged ones' 3000
# bytes each do not move either, only what changed (and the symlink's).
changed=$((1536 * 1024 + 4000 + 5000))
((bytes < changed + 1000)) ||
        tb_fail "RDMAXFER_BYTES=$bytes, $changed changed: unchanged small files moved too"
tb_log "sync=digest: 4 unchanged files and the symlink skipped, $bytes of $total bytes moved, gone.txt kept"

# --skip-existing: a changed file that is there already is left as it was.
cp "$BETA_IN/t-sync/s1.txt" "$SRC/s1.before"
make_file "$st/s1.txt" 3500
out=$(xferctl send -r "$st" "$BETA_ADDR" --to t-sync --skip-existing 2>&1) ||
        tb_fail "send -r --skip-existing failed: $out"
same_file "$SRC/s1.before" "$BETA_IN/t-sync/s1.txt"
tb_log "skip-existing: $(tail -n 1 <<<"$out")"

# overwrite off: nothing differs (the symlink compared by its target
# once it has arrived): everything kept, exit 0.
sed -i '/^overwrite = yes$/d' "$BETA_CONF"
reload_applied "$BETA_UNIT" overwrite
cp "$SRC/s1.before" "$st/s1.txt"
touch -r "$BETA_IN/t-sync/s1.txt" "$st/s1.txt"
out=$(xferctl send -r "$st" "$BETA_ADDR" --to t-sync --sync=digest 2>&1) ||
        tb_fail "--sync=digest of an unchanged tree with overwrite off: $out"
n=$(find "$st" -type f -o -type l | wc -l)
[[ $out == *"$n skipped (already on"* ]] || tb_fail "an unchanged tree: not all $n files and links skipped: $out"
[[ $(readlink "$BETA_IN/t-sync/link") == s1.txt ]] || tb_fail "the kept symlink changed"
tb_log "unchanged, overwrite off: $(tail -n 1 <<<"$out")"
# A file that differs fails the job, saying so; DEST stays.
cp -a "$BETA_IN/t-sync" "$SRC/t-sync.before"
make_file "$st/s3.txt" 3100
rc=0
out=$(xferctl send -r "$st" "$BETA_ADDR" --to t-sync --sync=size 2>&1) || rc=$?
((rc == 1)) && grep -q "differs" <<<"$out" && grep -q "overwrite" <<<"$out" ||
        tb_fail "--sync=size of a differing file with overwrite off: exit $rc: $out"
diff -r --no-dereference "$SRC/t-sync.before" "$BETA_IN/t-sync" >/dev/null || tb_fail "the failed sync changed t-sync"
tb_log "overwrite off: $(tail -n 1 <<<"$out")"

# Flat files: the second send with --skip-existing skips both.
make_file "$SRC/sync-f1.bin" 70000
make_file "$SRC/sync-f2.bin" 700000
send_ok "$SRC/sync-f1.bin" >/dev/null
out=$(xferctl send "$SRC/sync-f1.bin" "$SRC/sync-f2.bin" "$BETA_ADDR" --skip-existing 2>&1) ||
        tb_fail "flat --skip-existing with one file there: $out"
[[ $out == *"1 skipped"* ]] || tb_fail "flat: not 1 skipped: $out"
out=$(xferctl send "$SRC/sync-f1.bin" "$SRC/sync-f2.bin" "$BETA_ADDR" --skip-existing 2>&1) ||
        tb_fail "flat --skip-existing again: $out"
[[ $out == *"2 skipped"* ]] || tb_fail "flat: not 2 skipped: $out"
out=$(send_ok "$SRC/sync-f2.bin" --sync=digest)
[[ $out == *skipped* ]] || tb_fail "one file, --sync=digest, the same: not skipped: $out"
same_file "$SRC/sync-f2.bin" "$BETA_IN/sync-f2.bin"
rm -rf "$st" "$SRC/t-sync.before" "$SRC"/sync-f* "$SRC/s1.before" "$BETA_IN/t-sync" "$BETA_IN"/sync-f*
tb_log "flat: --skip-existing skipped what was there (1, then 2); --sync=digest skipped the same file"

# An index pack the receiver has every file of gives their descriptors
# back (a long-running daemon syncing many trees must not run out): files
# of 4 MiB less 4 KiB fill an index pack two at a time, so of five the
# first two packs are settled by their RESULTs, with an offer after each.
it=$SRC/sync-idx
rm -rf "$it" && mkdir -p "$it"
for i in 1 2 3 4 5; do make_file "$it/f$i" $(((4 << 20) - 4096)); done
xferctl send -r "$it" "$BETA_ADDR" --to t-idx >/dev/null 2>&1 || tb_fail "the first send of t-idx failed"
alpha_pid=$(systemctl show -P MainPID "$ALPHA_UNIT")
alpha_fds() { find "/proc/$alpha_pid/fd" -mindepth 1 | wc -l; }
fds_at_most() { (($(alpha_fds) <= $1)); }
wait_for 10 fds_at_most "$(alpha_fds)" || true
fds0=$(alpha_fds)
for round in 1 2; do
        out=$(xferctl send -r "$it" "$BETA_ADDR" --to t-idx --sync=size 2>&1) ||
                tb_fail "--sync=size of the unchanged t-idx failed: $out"
        [[ $out == *"5 skipped (already on"* ]] || tb_fail "t-idx: not all 5 files skipped: $out"
done
wait_for 10 fds_at_most "$fds0" ||
        tb_fail "alpha holds $(alpha_fds) descriptors after syncing t-idx twice, $fds0 before ($(ls -l "/proc/$alpha_pid/fd" | grep -c "$it/") of them t-idx's files)"
rm -rf "$it" "$BETA_IN/t-idx"
tb_log "an unchanged tree's index packs synced twice: alpha's descriptors $fds0, as before"
