#!/bin/bash
# Files land as the user who sent them (issue 33), end to end: users run
# xferctl send FILE... PEER:/PATH against alpha (members of group rdmaxfer,
# as its control socket asks) with real MUNGE; beta's
# rdmaxferd, which talks RDMA and never switches uid, has rdmaxfer-lander
# (socket-activated, root, CAP_SETUID/CAP_SETGID) make each file as them;
# the daemons share a pre-shared key, so each landing is under the MAC.
#  1. alice: a file into her 0700 directory (PATH/ names a directory),
#     and one as a new name (PATH itself): hers (uid, gid), its mode as on
#     her side (0640, and a read-only 0444 one), the bytes hers, the digest
#     xattr set, nothing in beta's drop box, nothing of hers in beta's
#     partial_dir; beta's journal entry has RDMAXFER_UID, RDMAXFER_USER and
#     RDMAXFER_LANDED.
#  2. three files into a directory, one job.
#  2a. a file cancelled part way (its xferctl status saying where it lands
#     first), then sent again: beta kept what it had
#     (held open, nameless: nothing in alice's directory or in beta's
#     partial_dir meanwhile) and resumes it (RDMAXFER_RESUMED_BYTES > 0),
#     intact, alice's 0600 file; a file of its name made meanwhile is
#     refused before any data, and the kept part waits for the next.
#  2b. a tree (-r) of every mode alice can read (read-only files and
#     directories, 0400, 0500), dotfiles, symlinks, hard links and mtimes: into PATH/ (a directory: PATH/DIR) and as a new PATH, each
#     what rsync -aHS makes (tree-oracle), every entry alice's, nothing
#     staged left, nothing in the drop box; into PATH/ again: "exists";
#     -r with a tree, a file and a missing source into PATH/: each its
#     own job, the missing one named, exit 23.
#  2d. -X -A: a tree with user.* attributes (a read-only packed file's, a
#     file offered alone's, DEST's) and ACLs (a directory's access and
#     default, a file's) into a directory with a default ACL of its own:
#     what rsync -aHSXA makes (tree-oracle); without -X, none; three files
#     (the first's in the landing, then XATTR parts: 2,500 bytes) keep
#     theirs; get -r -X -A brings the tree back with them; --sync=size
#     --delete sends again the files whose attributes alone changed, and
#     keeps the rest; -n -i says what a sync would send there, as alice
#     sees it, and changes nothing (bob's, into her directory: refused);
#     with --delete, what would be removed too (a directory she may not
#     list: said); with -X -A, which attributes differ (x, a); links:
#     an unchanged symlink and a hard link to a kept file unsaid, a
#     symlink pointed elsewhere and a hard link to a changed file said;
#     into a tmpfs
#     (no user xattrs): fails at once naming the attribute; the drop box
#     refuses -X.
#  2c. the lander SIGKILLed while a 1,500-file tree is staged: the job
#     fails saying to send the tree again (a landing's tree is not
#     resumed), nothing published, nothing staged left, beta's rdmaxferd
#     the same process; sent again (a new lander), it lands whole (killed
#     before the receiver acknowledged anything, the job's own retry
#     sends it afresh, and it lands whole).
#  3. the same name again: refused before any data ("exists"), no retry,
#     the old file untouched; with --overwrite, replaced; kept up to date
#     (--sync=size, --sync=digest, --skip-existing): the very file kept, one
#     that differs replaced, files into a directory kept the second time;
#     into a directory that is not there: refused, naming it.
#  4. bob into alice's 0700 directory: "Permission denied", naming it,
#     nothing made; bob outside landing_roots: refused, naming them.
#  4b. xferctl get: alice pulls her 0600 file from beta into a directory
#     of hers: intact, hers, 0600; again: "exists"; bob pulling it:
#     "Permission denied", nothing made; a directory: "get -r fetches a tree";
#     xferctl send A:/x B:/y (alpha's daemon sends the file on to beta),
#     alice's there; a NODELIST:/PATH lands on each node: one file down a
#     relay chain (alpha lands it and relays it), or with --parallel each
#     node straight.
#  4c. xferctl get -r: alice pulls 2b's tree (and an absolute symlink)
#     from beta: what rsync -aHS makes of it, all hers; send -r A:/x B:/y
#     the same; again: "exists"; bob: "Permission denied",
#     nothing made; with a FIFO in it: refused naming it, nothing
#     published or left staged; 500 small files (the walker ahead of
#     the send), then again with --overwrite; kept up to date (--sync,
#     the same file kept), mirrored (--sync --delete: what only her copy
#     has gone).
#  5. the lander not running (its socket stopped): the send fails naming
#     it ("cannot reach rdmaxfer-lander"); started again, landing works.
#  5b. relay = no: a copy A:/x B:/y is refused by A, nothing made.
#  6. a receiver whose landing_roots is empty refuses it, saying so; the
#     drop box works as ever meanwhile.
#  7. munged stopped on the sending node: xferctl says it cannot get a
#     MUNGE credential and that munged is what is missing; nothing queued.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

ALICE=tb-ualice BOB=tb-ubob
SCR=/scratch
WORK=/var/tmp/land-test
BETA_PART=/var/lib/rdmaxferd-beta/partial
KEY=/etc/rdmaxferd/psk-land

cleanup() {
        systemctl stop rdmaxfer-lander.socket rdmaxfer-lander.service 2>/dev/null || true
        umount "$SCR/$ALICE/shm" 2>/dev/null || true
        for u in "$ALICE" "$BOB"; do userdel -f "$u" 2>/dev/null || true; done
        rm -rf "$SCR" "$WORK" "$KEY"
}
cleanup
trap cleanup EXIT

useradd -M -s /usr/sbin/nologin -G rdmaxfer "$ALICE"
useradd -M -s /usr/sbin/nologin -G rdmaxfer "$BOB"
mkdir -m 1777 "$SCR"
install -d -m 0700 -o "$ALICE" -g "$ALICE" "$SCR/$ALICE"
install -d -m 0755 -o "$ALICE" -g "$ALICE" "$WORK"
munge_up
# Both daemons land users' files (beta receives; the lander reads alpha's
# file, the node's default rdmaxferd.conf, for its landing_roots), with a
# pre-shared key, as SECURITY.md asks: the offer's MAC covers the landing.
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KEY")
chown rdmaxfer: "$KEY" && chmod 0400 "$KEY"
peers_configure "landing_roots=$SCR /tmp" "key_file=$KEY" relay=yes
start_peers
tb_run systemctl start rdmaxfer-lander.socket

# send USER ARGS...: xferctl send as USER; its output in OUT, status in RC.
send() {
        local u=$1
        shift
        RC=0
        OUT=$(as "$u" timeout 120 xferctl send "$@" 2>&1) || RC=$?
}
# beta_entry SINCE: beta's receive entries since then (jobs_since).
beta_entry() { jobs_since "$BETA_UNIT" "$1" recv; }

in_before=$(ls -A "$BETA_IN" | wc -l)
make_file "$WORK/a.dat" 3000000
make_file "$WORK/ro.txt" 5000
make_file "$WORK/x1" 1000 && make_file "$WORK/x2" 0 && make_file "$WORK/x3" 70000
chown "$ALICE:" "$WORK"/*
chmod 0640 "$WORK/a.dat"
chmod 0444 "$WORK/ro.txt"

tb_log "1. alice lands files in her own directory, as herself"
since=$(date '+%F %T.%6N')
send "$ALICE" "$WORK/a.dat" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) || tb_fail "alice's send into her directory: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
same_file "$WORK/a.dat" "$SCR/$ALICE/a.dat"
[[ $(stat -c '%U %G %a' "$SCR/$ALICE/a.dat") == "$ALICE $ALICE 640" ]] ||
        tb_fail "a.dat is not alice's with her mode: $(stat -c '%U %G %a' "$SCR/$ALICE/a.dat")"
[[ $(getfattr --only-values -n user.rdmaxfer.digest "$SCR/$ALICE/a.dat" 2>/dev/null) =~ ^[0-9a-f]{32}$ ]] ||
        tb_fail "a.dat has no digest xattr"
e=$(beta_entry "$since")
grep -q "^RDMAXFER_UID=$(id -u "$ALICE")$" <<<"$e" && grep -q "^RDMAXFER_USER=$ALICE$" <<<"$e" &&
        grep -q "^RDMAXFER_LANDED=$SCR/$ALICE$" <<<"$e" && grep -q '^RDMAXFER_RESULT=ok$' <<<"$e" ||
        tb_fail "beta's journal entry does not say whose and where: $(grep '^RDMAXFER_' <<<"$e" | tr '\n' ' ')"
send "$ALICE" "$WORK/ro.txt" "$BETA_ADDR:$SCR/$ALICE/notes.txt"
((RC == 0)) || tb_fail "alice's send as a new name: exit $RC: $OUT"
same_file "$WORK/ro.txt" "$SCR/$ALICE/notes.txt"
[[ $(stat -c '%U %a' "$SCR/$ALICE/notes.txt") == "$ALICE 444" ]] ||
        tb_fail "notes.txt (PATH itself) is not alice's read-only file: $(stat -c '%U %a' "$SCR/$ALICE/notes.txt")"
[[ $(ls -A "$BETA_IN" | wc -l) == "$in_before" ]] || tb_fail "something landed in beta's drop box: $(ls -A "$BETA_IN")"
[[ -z $(find "$BETA_PART" -user "$ALICE" 2>/dev/null) ]] || tb_fail "a file of alice's is in beta's partial_dir"
tb_log "hers, her modes (640, 444), her bytes and digest; the journal names her; the drop box untouched"

tb_log "2. three files into a directory, one job"
as "$ALICE" mkdir "$SCR/$ALICE/set"
send "$ALICE" "$WORK/x1" "$WORK/x2" "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/set"
((RC == 0)) || tb_fail "three files: exit $RC: $OUT"
for f in x1 x2 x3; do
        same_file "$WORK/$f" "$SCR/$ALICE/set/$f"
        [[ $(stat -c %U "$SCR/$ALICE/set/$f") == "$ALICE" ]] || tb_fail "set/$f is not alice's"
done

tb_log "2a. cancelled part way, sent again: resumed from what beta kept, which nobody saw"
make_file "$WORK/r.dat" $((8 << 20))
chown "$ALICE:" "$WORK/r.dat" && chmod 0600 "$WORK/r.dat"
before=$(ls -A "$SCR/$ALICE")
rx0=$(netdev_bytes "$BETA_NETDEV" rx)
rx_grown() { (($(netdev_bytes "$BETA_NETDEV" rx) - rx0 >= 3 << 20)); }
id=$(as "$ALICE" xferctl send --no-wait --bwlimit 1M "$WORK/r.dat" "$BETA_ADDR:$SCR/$ALICE/") ||
        tb_fail "alice's submit of r.dat failed: $id"
id=${id//[^0-9]/}
wait_for 20 rx_grown || tb_fail "r.dat never got under way"
# Its status says where it lands, as text and as JSON.
st=$(as "$ALICE" xferctl status "$id")
grep -Eq "^lands: +$SCR/$ALICE/? on the peer, as its user$" <<<"$st" ||
        tb_fail "xferctl status does not say where r.dat lands: $st"
as "$ALICE" xferctl status --json "$id" | grep -Eq "\"land\":\"push\",\"land_path\":\"$SCR/$ALICE/?\"" ||
        tb_fail "xferctl status --json does not say where r.dat lands"
as "$ALICE" xferctl cancel "$id" >/dev/null || tb_fail "alice could not cancel her r.dat"
wait_for 10 job_in_state "$id" cancelled || tb_fail "job $id not cancelled"
[[ $(ls -A "$SCR/$ALICE") == "$before" ]] || tb_fail "the cancelled r.dat left a name in alice's directory: $(ls -A "$SCR/$ALICE")"
[[ -z $(find "$BETA_PART" -user "$ALICE" 2>/dev/null) ]] || tb_fail "a partial of alice's is in beta's partial_dir"
# A file of that name there meanwhile: refused before any data, as ever.
as "$ALICE" touch "$SCR/$ALICE/r.dat"
rx0=$(netdev_bytes "$BETA_NETDEV" rx)
send "$ALICE" --retries 0 "$WORK/r.dat" "$BETA_ADDR:$SCR/$ALICE/"
((RC != 0)) && grep -q "exists" <<<"$OUT" || tb_fail "r.dat onto a file of that name: exit $RC: $OUT"
(($(netdev_bytes "$BETA_NETDEV" rx) - rx0 < 1 << 20)) ||
        tb_fail "r.dat onto a file of that name moved $(($(netdev_bytes "$BETA_NETDEV" rx) - rx0)) bytes before the refusal"
as "$ALICE" rm "$SCR/$ALICE/r.dat"
since=$(date '+%F %T.%6N')
send "$ALICE" "$WORK/r.dat" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) || tb_fail "r.dat sent again: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
same_file "$WORK/r.dat" "$SCR/$ALICE/r.dat"
[[ $(stat -c '%U %a' "$SCR/$ALICE/r.dat") == "$ALICE 600" ]] ||
        tb_fail "the resumed r.dat is not alice's 0600 file: $(stat -c '%U %a' "$SCR/$ALICE/r.dat")"
kept=$(beta_entry "$since" | sed -n 's/^RDMAXFER_RESUMED_BYTES=//p' | tail -n 1)
tb_log "beta resumed r.dat with ${kept:-no} bytes kept from the cancelled attempt"
((${kept:-0} > 0)) || tb_fail "r.dat was sent whole again: beta kept nothing of alice's cancelled attempt"

tb_log "2b. a tree as alice: read-only modes, dotfiles, symlinks, hard links, mtimes"
tree=$WORK/proj
mkdir -p "$tree/.git/refs" "$tree/ro-dir/sub" "$tree/rx-dir" "$tree/deep/a/b/c/d/e/f/g"
make_file "$tree/.git/HEAD" 23
make_file "$tree/ro.txt" 4096
make_file "$tree/owner-ro.txt" 100
make_file "$tree/big.bin" $((3 << 20))
make_file "$tree/empty" 0
make_file "$tree/ro-dir/inner.txt" 40
make_file "$tree/ro-dir/sub/deep.txt" 50
make_file "$tree/rx-dir/f.txt" 80
make_file "$tree/deep/a/b/c/d/e/f/g/leaf.txt" 10
ln "$tree/ro.txt" "$tree/ro-dir/ro-again.txt"
ln -s inner.txt "$tree/ro-dir/link"
ln -s ../../ro.txt "$tree/ro-dir/sub/up"
chmod 444 "$tree/ro.txt"
chmod 400 "$tree/owner-ro.txt"
stamp_mtimes "$tree"
chmod 555 "$tree/ro-dir" "$tree/ro-dir/sub"
chmod 500 "$tree/rx-dir"
chmod 750 "$tree"
chown -R "$ALICE:" "$tree"
send "$ALICE" -r "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) || tb_fail "alice's tree into her directory: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
tree_oracle "$tree" "$SCR/$ALICE/proj"
[[ -z $(find "$SCR/$ALICE/proj" ! -user "$ALICE" -o ! -group "$ALICE") ]] ||
        tb_fail "entries of the tree not alice's: $(find "$SCR/$ALICE/proj" ! -user "$ALICE" | head -3)"
[[ -z $(find "$SCR/$ALICE" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed"
[[ $(ls -A "$BETA_IN" | wc -l) == "$in_before" ]] || tb_fail "the tree left something in beta's drop box"
send "$ALICE" -r "$tree" "$BETA_ADDR:$SCR/$ALICE/copy2"
((RC == 0)) || tb_fail "alice's tree as a new PATH: exit $RC: $OUT"
tree_oracle "$tree" "$SCR/$ALICE/copy2"
send "$ALICE" -r "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC != 0)) && grep -q "$SCR/$ALICE/proj: exists" <<<"$OUT" || tb_fail "the tree again: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
# Kept up to date (-r --sync): what is the same stays (its inode, hard
# links and all), what differs is replaced, what is new lands, and what
# only beta has stays; read-only directories and all, as alice.
got=$SCR/$ALICE/proj
ino_big=$(stat -c %i "$got/big.bin") ino_inner=$(stat -c %i "$got/ro-dir/inner.txt")
as "$ALICE" sh -c "echo there >'$got/only-there.txt'"
make_file "$tree/.git/HEAD" 23
mkdir "$tree/new" && make_file "$tree/new/n.txt" 300
chown -R "$ALICE:" "$tree"
send "$ALICE" -r --sync=digest "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && [[ $OUT == *skipped* ]] || tb_fail "-r --sync=digest of the tree into its copy: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
[[ $(stat -c %i "$got/big.bin") == "$ino_big" && $(stat -c %i "$got/ro-dir/inner.txt") == "$ino_inner" ]] ||
        tb_fail "files the sync found the same were replaced (big.bin, ro-dir/inner.txt: new inodes)"
[[ $(cat "$got/only-there.txt" 2>&1) == there ]] || tb_fail "only-there.txt, which only beta had, is gone"
[[ -z $(find "$SCR/$ALICE" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed (sync)"
cp "$got/.git/HEAD" "$WORK/HEAD.before"
make_file "$tree/.git/HEAD" 23
send "$ALICE" -r --skip-existing "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && same_file "$WORK/HEAD.before" "$got/.git/HEAD" ||
        tb_fail "-r --skip-existing: exit $RC, or HEAD replaced: $OUT"
send "$ALICE" -r --sync=size "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && same_file "$WORK/HEAD.before" "$got/.git/HEAD" ||
        tb_fail "-r --sync=size (HEAD of the same size): exit $RC, or HEAD replaced: $OUT"
[[ $(cat "$got/only-there.txt" 2>&1) == there ]] || tb_fail "only-there.txt is gone (--skip-existing, --sync=size)"
# A shared tree: bob's file in it, which alice may not hard-link into the
# staged tree (fs.protected_hardlinks: not hers, not writable by her), is
# moved over after the exchange, his still.
sysctl -qw fs.protected_hardlinks=1
install -o "$BOB" -g "$BOB" -m 0644 /dev/null "$got/bobs.txt"
ino_bob=$(stat -c %i "$got/bobs.txt")
send "$ALICE" -r --sync=size "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && [[ $(stat -c '%i %U' "$got/bobs.txt" 2>&1) == "$ino_bob $BOB" ]] ||
        tb_fail "-r --sync=size over bob's file in alice's tree: exit $RC, bob's file $(stat -c '%i %U' "$got/bobs.txt" 2>&1) ($ino_bob $BOB before): $OUT"
[[ -z $(find "$SCR/$ALICE" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed (bob's file)"
tb_log "a sync merged over bob's file in alice's tree, which she may not link: kept, his"
# The source's tree exactly, once what only beta had is gone (its DEST's
# mtime set by the sync).
rm "$got/only-there.txt" "$got/bobs.txt"
send "$ALICE" -r --sync=digest "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) || tb_fail "-r --sync=digest again: exit $RC: $OUT"
tree_oracle "$tree" "$got"
tb_log "-r --sync=digest, --skip-existing, --sync=size: the tree there kept what is the same, and what only it had"
# Mirrored (--delete): what only beta has goes, in the step that
# publishes; what is the same stays (its inode).
as "$ALICE" sh -c "echo there >'$got/only-there.txt' && mkdir '$got/old-dir' && echo x >'$got/old-dir/x'"
rm -r "$tree/new"
send "$ALICE" -r --sync=digest --delete "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && [[ $OUT == *"5 deleted"* ]] || tb_fail "-r --sync=digest --delete: exit $RC, not 5 deleted: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
[[ $(stat -c %i "$got/big.bin") == "$ino_big" ]] || tb_fail "--delete replaced big.bin, which is the same"
tree_oracle "$tree" "$got"
[[ -z $(find "$SCR/$ALICE" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed (--delete)"
tb_log "--delete: beta's tree is the source's, what only it had gone, what is the same kept"
# A directory there where the source has a file: refused, naming it,
# nothing changed (neither its contents nor the file lost).
rm "$got/empty" && as "$ALICE" mkdir "$got/empty" && as "$ALICE" sh -c "echo x >'$got/empty/x'"
send "$ALICE" -r --sync=size "$tree" "$BETA_ADDR:$SCR/$ALICE/"
((RC != 0)) && grep -q "empty: a directory in one of the tree there and the tree sent" <<<"$OUT" &&
        [[ $(cat "$got/empty/x") == x ]] || tb_fail "a file sent where beta has a directory: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
# Several sources (scp -r A B host:/dir/): each its own job into PATH; one
# that is not there is named, the others land, and the exit is 23.
as "$ALICE" mkdir -m 0700 "$SCR/$ALICE/multi"
send "$ALICE" -r "$tree" "$WORK/x1" "$WORK/no-such" "$BETA_ADDR:$SCR/$ALICE/multi/"
((RC == 23)) && grep -q "1 of 3 sources did not land (above): $WORK/no-such" <<<"$OUT" ||
        tb_fail "-r with three sources, one missing: exit $RC: $OUT"
tree_oracle "$tree" "$SCR/$ALICE/multi/proj"
same_file "$WORK/x1" "$SCR/$ALICE/multi/x1"
tb_log "$(tail -n 1 <<<"$OUT")"
tb_log "as rsync -aHS makes it, all hers, into PATH/ and as PATH; PATH/proj again refused, naming it"

tb_log "2d. -X -A: user.* attributes and POSIX ACLs land with the tree and the files, as rsync -aHSXA makes them"
xt=$WORK/attrs
mkdir -p "$xt/shared/sub" "$xt/plain"
make_file "$xt/ro.txt" 100
make_file "$xt/big.bin" $((5 << 20))
make_file "$xt/shared/f" 50
make_file "$xt/shared/sub/g" 60
make_file "$xt/plain/p" 10
chown -R "$ALICE:" "$xt"
# A packed read-only file's, a file offered alone's (over a pack's 4 MiB:
# several XATTR parts, 2,500 bytes), DEST's own; an access and a default
# ACL on a directory, an access ACL on a file in it.
as "$ALICE" setfattr -n user.origin -v "https://example.org/data/v1" "$xt/ro.txt"
as "$ALICE" setfattr -n user.checksum -v 0xdeadbeef "$xt/big.bin"
as "$ALICE" setfattr -n user.note -v "$(head -c 2500 /dev/zero | tr '\0' n)" "$xt/big.bin"
as "$ALICE" setfattr -n user.top -v T "$xt"
as "$ALICE" setfacl -m "u:$BOB:rx" -m "d:u:$BOB:rx" "$xt/shared"
as "$ALICE" setfacl -m "u:$BOB:r" "$xt/shared/f"
chmod 444 "$xt/ro.txt"
stamp_mtimes "$xt"
# Where it lands has a default ACL of its own: what the sender's entries
# lack, -A leaves off them (rsync -A's copy has the source's ACLs only).
as "$ALICE" mkdir -m 0700 "$SCR/$ALICE/attrs-in"
as "$ALICE" setfacl -d -m "u:$BOB:rwx" "$SCR/$ALICE/attrs-in"
send "$ALICE" -r -X -A "$xt" "$BETA_ADDR:$SCR/$ALICE/attrs-in/"
((RC == 0)) || tb_fail "-r -X -A: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
tree_oracle "$xt" "$SCR/$ALICE/attrs-in/attrs" -- -X -A
[[ -z $(find "$SCR/$ALICE/attrs-in/attrs" ! -user "$ALICE") ]] || tb_fail "-r -X -A: entries not alice's"
# Pulled back (get -r -X -A): beta's lander reads them as alice, its
# send back carries them, alpha's lander sets them.
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get -r -X -A "$BETA_ADDR:$SCR/$ALICE/attrs-in/attrs" "$SCR/$ALICE/attrs-back" 2>&1) ||
        RC=$?
((RC == 0)) || tb_fail "get -r -X -A: exit $RC: $OUT"
tree_oracle "$xt" "$SCR/$ALICE/attrs-back" -- -X -A
# Kept up to date with them (--sync=size --delete): a file whose
# attributes changed, only they, is sent again (a packed one's compared by
# the lander, one offered alone's by the daemon, an ACL's, one with an
# attribute the source lacks); the unchanged one is kept, its inode too.
at=$SCR/$ALICE/attrs-in/attrs
ino_p=$(stat -c %i "$at/plain/p") ino_ro=$(stat -c %i "$at/ro.txt") ino_big=$(stat -c %i "$at/big.bin")
ino_f=$(stat -c %i "$at/shared/f") ino_g=$(stat -c %i "$at/shared/sub/g")
chmod u+w "$xt/ro.txt"
as "$ALICE" setfattr -n user.origin -v "https://example.org/data/v2" "$xt/ro.txt"
chmod 444 "$xt/ro.txt"
as "$ALICE" setfattr -n user.checksum -v 0xfeedface "$xt/big.bin"
as "$ALICE" setfacl -m "u:$BOB:rw" "$xt/shared/f"
as "$ALICE" setfattr -n user.extra -v x "$at/shared/sub/g"
send "$ALICE" -r -X -A --sync=size --delete "$xt" "$BETA_ADDR:$SCR/$ALICE/attrs-in/"
((RC == 0)) || tb_fail "-r -X -A --sync=size --delete: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
tree_oracle "$xt" "$at" -- -X -A
[[ $(stat -c %i "$at/plain/p") == "$ino_p" ]] || tb_fail "--sync -X: plain/p, the same, was not kept"
for f in ro.txt big.bin shared/f shared/sub/g; do
        v=ino_${f##*/}
        v=${v%.*}
        [[ $(stat -c %i "$at/$f") != "${!v}" ]] || tb_fail "--sync -X -A: $f, its attributes changed, was kept"
done
# A dry run (-n -i) to PEER:/PATH: beta's lander looks as alice, and
# nothing is made or changed there. A file grown and a new one are what
# a sync would send; a tree not there would be made whole; bob may not
# look in alice's directory.
echo more >>"$xt/plain/p"
make_file "$xt/plain/q" 30
chown "$ALICE:" "$xt/plain/q"
snap=$(find "$at" -printf '%p %i %s %T@ %m\n' | sort)
send "$ALICE" -n -i -r --sync=size "$xt" "$BETA_ADDR:$SCR/$ALICE/attrs-in/"
((RC == 0)) && grep -qE '^>f\.s[.t]\.{6} attrs/plain/p$' <<<"$OUT" && grep -qx '>f+++++++++ attrs/plain/q' <<<"$OUT" &&
        [[ $(grep -c '^[>c]' <<<"$OUT") == 2 ]] || tb_fail "-n -i --sync=size to PEER:/PATH: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
[[ $(find "$at" -printf '%p %i %s %T@ %m\n' | sort) == "$snap" ]] || tb_fail "the dry run changed alice's tree on beta"
# With --delete: what her tree there has and this one lacks would go,
# listed by beta's lander as alice (a directory and what is in it, a
# FIFO, a file even she may not read), and still nothing changes.
as "$ALICE" mkdir -p "$at/only-there/deep"
as "$ALICE" touch "$at/only-there/deep/x" "$at/only-there.txt"
as "$ALICE" mkfifo "$at/plain/fifo"
as "$ALICE" install -m 000 /dev/null "$at/plain/secret"
snap=$(find "$at" -printf '%p %i %s %T@ %m\n' | sort)
send "$ALICE" -n -i -r --sync=size --delete "$xt" "$BETA_ADDR:$SCR/$ALICE/attrs-in/"
want=$(printf '%s\n' '*deleting   attrs/only-there.txt' '*deleting   attrs/only-there/' \
        '*deleting   attrs/only-there/deep/' '*deleting   attrs/only-there/deep/x' '*deleting   attrs/plain/fifo' \
        '*deleting   attrs/plain/secret' '>f+++++++++ attrs/plain/q' | LC_ALL=C sort)
((RC == 0)) && grep -qE '^>f\.s[.t]\.{6} attrs/plain/p$' <<<"$OUT" &&
        [[ $(grep -v ' attrs/plain/p$' <<<"$OUT" | LC_ALL=C sort) == "$want" ]] ||
        tb_fail "-n -i --sync=size --delete to PEER:/PATH: exit $RC: want
$want
and attrs/plain/p; got
$OUT"
[[ $(find "$at" -printf '%p %i %s %T@ %m\n' | sort) == "$snap" ]] ||
        tb_fail "the dry run with --delete changed alice's tree on beta"
# A directory there she may not list: what deleting would remove is not known, and said.
as "$ALICE" chmod 000 "$at/only-there"
send "$ALICE" -n -r --sync=size --delete "$xt" "$BETA_ADDR:$SCR/$ALICE/attrs-in/"
((RC == 1)) && grep -q 'only-there.*Permission denied' <<<"$OUT" ||
        tb_fail "-n --delete, a directory alice may not list: exit $RC: $OUT"
as "$ALICE" chmod 700 "$at/only-there"
as "$ALICE" rm -r "$at/only-there" "$at/only-there.txt" "$at/plain/fifo" "$at/plain/secret"
# With -X -A: a file whose user.* attributes alone changed, one whose
# ACL alone did, said with rsync's letters (x, a); still nothing changes.
as "$ALICE" setfattr -n user.origin -v v3 "$xt/shared/sub/g"
as "$ALICE" setfacl -m "u:$BOB:r" "$xt/shared/f"
snap=$(find "$at" -printf '%p %i %s %T@ %m\n' | sort)
send "$ALICE" -n -i -r -X -A --sync=size "$xt" "$BETA_ADDR:$SCR/$ALICE/attrs-in/"
((RC == 0)) && grep -qx '>f\.\.\.\.\.\.\.\.x attrs/shared/sub/g' <<<"$OUT" &&
        grep -qx '>f\.\.\.\.\.\.\.a\. attrs/shared/f' <<<"$OUT" && grep -qx '>f+++++++++ attrs/plain/q' <<<"$OUT" &&
        [[ $(grep -c '^[>c]' <<<"$OUT") == 4 ]] || tb_fail "-n -i -X -A --sync=size to PEER:/PATH: exit $RC: $OUT"
[[ $(find "$at" -printf '%p %i %s %T@ %m\n' | sort) == "$snap" ]] || tb_fail "the dry run with -X -A changed alice's tree"
send "$ALICE" -n -i -r "$xt" "$BETA_ADDR:$SCR/$ALICE/dry-none"
((RC == 0)) && grep -qx 'cd+++++++++ attrs/' <<<"$OUT" && grep -qx '>f+++++++++ attrs/plain/q' <<<"$OUT" &&
        [[ ! -e $SCR/$ALICE/dry-none ]] || tb_fail "-n -i of a tree not there: exit $RC: $OUT"
# Links in a dry run: a symlink whose target is the same, a hard link
# to a file kept, are what a sync keeps (no line); a symlink pointed
# elsewhere, a hard link to a file that changed, are what it would make
# again (the lander reads the symlink there as alice, and says whether
# the two names there are one file).
lt=$WORK/links
mkdir -p "$lt/d"
make_file "$lt/a" 100 && make_file "$lt/c" 200
ln -s a "$lt/sl" && ln -s ../c "$lt/d/sl2" && ln "$lt/a" "$lt/ha" && ln "$lt/c" "$lt/d/hc"
chown -hR "$ALICE:" "$lt"
send "$ALICE" -r "$lt" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) || tb_fail "-r of a tree with links: exit $RC: $OUT"
send "$ALICE" -n -i -r --sync=size "$lt" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && ! grep -q '^[>ch*]' <<<"$OUT" || tb_fail "-n -i of a tree with links, unchanged: exit $RC: $OUT"
ln -sfn c "$lt/sl" && chown -h "$ALICE:" "$lt/sl"
echo more >>"$lt/c"
snap=$(find "$SCR/$ALICE/links" -printf '%p %i %s %T@ %m %l\n' | sort)
send "$ALICE" -n -i -r --sync=size --delete "$lt" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && grep -qE '^cLc\.[.t]\.{6} links/sl -> c$' <<<"$OUT" && grep -qE '^>f\.s[.t]\.{6} links/(c|d/hc)$' <<<"$OUT" &&
        grep -qE '^hfc\.[.t]\.{6} links/(d/hc => links/c|c => links/d/hc)$' <<<"$OUT" &&
        [[ $(grep -c . <<<"$OUT") == 3 ]] ||
        tb_fail "-n -i of a tree with links, a symlink and a hard link's file changed: exit $RC: want links/sl,
links/c and links/d/hc, no more; got
$OUT"
[[ $(find "$SCR/$ALICE/links" -printf '%p %i %s %T@ %m %l\n' | sort) == "$snap" ]] ||
        tb_fail "the dry run with links changed alice's tree on beta"
ino_sl2=$(stat -c %i "$SCR/$ALICE/links/d/sl2")
send "$ALICE" -r --sync=size --delete "$lt" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && [[ $(stat -c %i "$SCR/$ALICE/links/d/sl2") == "$ino_sl2" ]] ||
        tb_fail "-r --sync=size --delete of the tree with links: exit $RC (d/sl2, unchanged, made anew?): $OUT"
tree_oracle "$lt" "$SCR/$ALICE/links"
# Synced again, unchanged: its symlinks are left as they are (the same
# inodes), as rsync leaves them.
ino_sl=$(stat -c %i "$SCR/$ALICE/links/sl") ino_sl2=$(stat -c %i "$SCR/$ALICE/links/d/sl2")
send "$ALICE" -r --sync=size "$lt" "$BETA_ADDR:$SCR/$ALICE/"
((RC == 0)) && [[ $(stat -c %i "$SCR/$ALICE/links/sl") == "$ino_sl" &&
        $(stat -c %i "$SCR/$ALICE/links/d/sl2") == "$ino_sl2" ]] ||
        tb_fail "-r --sync=size of the unchanged tree with links: exit $RC, the symlinks made anew: $OUT"
tree_oracle "$lt" "$SCR/$ALICE/links"
make_file "$WORK/bobs.txt" 10
chown "$BOB:" "$WORK/bobs.txt"
send "$BOB" -n "$WORK/bobs.txt" "$BETA_ADDR:$SCR/$ALICE/attrs-in/"
((RC == 1)) && grep -qi "permission denied" <<<"$OUT" || tb_fail "bob's dry run into alice's directory: exit $RC: $OUT"
# Without them, none (the drop box's digest aside).
send "$ALICE" "$xt/ro.txt" "$BETA_ADDR:$SCR/$ALICE/ro-plain.txt"
((RC == 0)) && [[ -z $(getfattr -d -m '^user\.[^r]' "$SCR/$ALICE/ro-plain.txt" 2>/dev/null) ]] ||
        tb_fail "without -X: exit $RC, or attributes landed: $OUT"
# Files: the first's in the landing, the next ones' in XATTR parts before their offers.
as "$ALICE" mkdir -m 0700 "$SCR/$ALICE/attrs-files"
send "$ALICE" -X -A "$xt/ro.txt" "$xt/shared/f" "$xt/big.bin" "$BETA_ADDR:$SCR/$ALICE/attrs-files/"
((RC == 0)) || tb_fail "-X -A with three files: exit $RC: $OUT"
for f in ro.txt shared/f big.bin; do
        [[ $(getfattr -h -d -e hex -m '^(user\.|system\.posix_acl_access$)' "$xt/$f" 2>/dev/null | tail -n +2 | sort) == \
           $(getfattr -h -d -e hex -m '^(user\.[^r]|system\.posix_acl_access$)' "$SCR/$ALICE/attrs-files/${f##*/}" \
                2>/dev/null | tail -n +2 | sort) ]] || tb_fail "-X -A: ${f##*/}'s attributes are not the source's"
done
# A file system that keeps no user xattrs there (tmpfs, kernel 6.1):
# the send fails naming the attribute, at once (not retried), nothing
# published.
as "$ALICE" mkdir -m 0700 "$SCR/$ALICE/shm"
mount -t tmpfs -o "mode=0700,uid=$(id -u "$ALICE"),gid=$(id -g "$ALICE")" tmpfs "$SCR/$ALICE/shm" ||
        tb_fail "mounting a tmpfs for alice"
send "$ALICE" -X "$xt/ro.txt" "$BETA_ADDR:$SCR/$ALICE/shm/"
((RC == 1)) && grep -q "user.origin: Operation not supported" <<<"$OUT" && ! grep -q "attempt 2" <<<"$OUT" &&
        [[ -z $(ls -A "$SCR/$ALICE/shm") ]] || tb_fail "-X into a tmpfs: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
umount "$SCR/$ALICE/shm"
# The drop box keeps its own; a chain carries none yet: said, nothing sent.
send "$ALICE" -X "$xt/ro.txt" "$BETA_ADDR"
((RC == 2)) && grep -q "attributes go only with files that land as you" <<<"$OUT" ||
        tb_fail "-X into the drop box: exit $RC: $OUT"
tb_log "-X -A: a tree (packed, alone, DEST) and three files carry them; the drop box refuses -X"

tb_log "2c. the lander killed mid-tree: nothing published, nothing left staged; sent again, whole"
big=$WORK/many
mkdir -p "$big"
# 1,500 files of 4 KiB: a pack the lander makes in a dozen chunks.
head -c $((1500 * 4096)) /dev/urandom | (cd "$big" && split -b 4096 -a 4 -d - f) || tb_fail "split"
chown -R "$ALICE:" "$big"
beta_pid=$(systemctl show -p MainPID --value "$BETA_UNIT")
as "$ALICE" timeout 300 xferctl send -r "$big" "$BETA_ADDR:$SCR/$ALICE/" >"$WORK/kill.out" 2>&1 &
sender=$!
for _ in $(seq 600); do
        stage=$(find "$SCR/$ALICE" -maxdepth 1 -name '.rdmaxfer-stage-*' -print -quit)
        [[ -n $stage ]] && (($(find "$stage" -type f | wc -l) >= 100)) && break
        sleep 0.05
done
[[ -n $stage ]] || tb_fail "no staging directory appeared for the tree"
tb_run systemctl kill -s KILL rdmaxfer-lander.service
RC=0
wait "$sender" || RC=$?
OUT=$(cat "$WORK/kill.out")
# Entries the receiver had acknowledged are gone from the sender: the
# tree is not resumed (a landing keeps nothing in the daemon's
# partial_dir), and the job says to send it again. Killed before the
# receiver acknowledged any (DEST's offer, the one pack still being
# made), the job's retry sends the tree afresh to a new lander instead,
# and it lands whole: which of the two depends on where the kill falls.
if ((RC == 0)); then
        grep -q "rdmaxfer-lander went away" <<<"$OUT" ||
                tb_fail "the tree after the lander was killed: exit 0, and no attempt failed: $OUT"
        tree_oracle "$big" "$SCR/$ALICE/many"
        tb_log "killed before any entry was acknowledged: retried afresh, whole"
else
        grep -q "send the tree again" <<<"$OUT" && grep -q "nothing of it was published" <<<"$OUT" ||
                tb_fail "the tree after the lander was killed: exit $RC: $OUT"
        tb_log "$(tail -n 1 <<<"$OUT")"
        [[ ! -e $SCR/$ALICE/many ]] || tb_fail "a tree was published although its transfer failed"
fi
[[ -z $(find "$SCR/$ALICE" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed"
[[ $(systemctl show -p MainPID --value "$BETA_UNIT") == "$beta_pid" ]] || tb_fail "beta's daemon restarted"
if ((RC != 0)); then
        send "$ALICE" -r "$big" "$BETA_ADDR:$SCR/$ALICE/"
        ((RC == 0)) || tb_fail "the tree sent again, with a new lander: exit $RC: $OUT"
        tree_oracle "$big" "$SCR/$ALICE/many"
        tb_log "failed, saying why; nothing published or left staged; beta's daemon the same; sent again, whole"
fi
rm -rf "$SCR/$ALICE/proj" "$SCR/$ALICE/copy2" "$SCR/$ALICE/many" "$SCR/$ALICE/multi"

tb_log "3. refusals of a path: a name there already, a directory that is not"
since=$(date '+%F %T.%6N')
cp -p "$SCR/$ALICE/a.dat" "$WORK/a.before"
send "$ALICE" "$WORK/ro.txt" "$BETA_ADDR:$SCR/$ALICE/a.dat"
((RC != 0)) && grep -q "exists" <<<"$OUT" || tb_fail "the same name again: exit $RC, not 'exists': $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
cmp -s "$WORK/a.before" "$SCR/$ALICE/a.dat" || tb_fail "the refused send changed a.dat"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat --since "$since" | grep -q 'retrying in' &&
        tb_fail "an existing name was retried"
send "$ALICE" --overwrite "$WORK/ro.txt" "$BETA_ADDR:$SCR/$ALICE/a.dat"
((RC == 0)) || tb_fail "--overwrite of her own a.dat: exit $RC: $OUT"
same_file "$WORK/ro.txt" "$SCR/$ALICE/a.dat"
[[ $(stat -c '%U %a' "$SCR/$ALICE/a.dat") == "$ALICE 444" ]] || tb_fail "a.dat replaced is not her 0444 file"
tb_log "with --overwrite, her a.dat replaced by the new one"
# Kept up to date: the same file is kept (no new inode), one that differs
# in its bytes only (--sync=digest) or its size (--sync=size) is replaced; with
# --skip-existing what is there stays; a new name lands as ever.
ino=$(stat -c %i "$SCR/$ALICE/a.dat")
for how in --sync=size --sync=digest --skip-existing; do
        send "$ALICE" "$how" "$WORK/ro.txt" "$BETA_ADDR:$SCR/$ALICE/a.dat"
        ((RC == 0)) && [[ $OUT == *skipped* ]] && [[ $(stat -c %i "$SCR/$ALICE/a.dat") == "$ino" ]] ||
                tb_fail "$how of the very file: exit $RC, inode $(stat -c %i "$SCR/$ALICE/a.dat") (was $ino): $OUT"
done
# Byte 100 flipped (a random file's may already be whatever one writes there).
b=$(od -An -tu1 -j100 -N1 "$WORK/ro.txt")
cp "$WORK/ro.txt" "$WORK/ro2.txt" &&
        printf "\\x$(printf %02x $(((b ^ 255))))" | dd of="$WORK/ro2.txt" bs=1 seek=100 conv=notrunc status=none &&
        chown "$ALICE:" "$WORK/ro2.txt" && ! cmp -s "$WORK/ro.txt" "$WORK/ro2.txt" || tb_fail "ro2.txt: ro.txt with a byte changed"
send "$ALICE" --skip-existing "$WORK/ro2.txt" "$BETA_ADDR:$SCR/$ALICE/a.dat"
((RC == 0)) && [[ $OUT == *skipped* ]] && same_file "$WORK/ro.txt" "$SCR/$ALICE/a.dat" ||
        tb_fail "--skip-existing of another a.dat: exit $RC: $OUT"
send "$ALICE" --sync=size "$WORK/ro2.txt" "$BETA_ADDR:$SCR/$ALICE/a.dat"
((RC == 0)) && [[ $OUT == *skipped* ]] || tb_fail "--sync=size of a.dat of the same size: exit $RC: $OUT"
send "$ALICE" --sync=digest "$WORK/ro2.txt" "$BETA_ADDR:$SCR/$ALICE/a.dat"
((RC == 0)) && [[ $OUT != *skipped* ]] || tb_fail "--sync=digest of a.dat with other bytes: exit $RC: $OUT"
same_file "$WORK/ro2.txt" "$SCR/$ALICE/a.dat"
send "$ALICE" --sync=size "$WORK/x1" "$BETA_ADDR:$SCR/$ALICE/a.dat"
((RC == 0)) && same_file "$WORK/x1" "$SCR/$ALICE/a.dat" || tb_fail "--sync=size of a.dat of another size: exit $RC: $OUT"
send "$ALICE" --sync=size "$WORK/x1" "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/synced/"
((RC != 0)) && grep -q "$SCR/$ALICE/synced" <<<"$OUT" || tb_fail "--sync=size into a directory not there: exit $RC: $OUT"
as "$ALICE" mkdir "$SCR/$ALICE/synced"
send "$ALICE" --sync=size "$WORK/x1" "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/synced/"
((RC == 0)) && same_file "$WORK/x3" "$SCR/$ALICE/synced/x3" || tb_fail "--sync=size of two new files: exit $RC: $OUT"
send "$ALICE" --sync=size "$WORK/x1" "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/synced/"
((RC == 0)) && [[ $OUT == *"2 skipped"* ]] || tb_fail "--sync=size of the two again: exit $RC: $OUT"
tb_log "--sync=size, --sync=digest, --skip-existing: kept what is the same, replaced what differs, as alice"
send "$ALICE" "$WORK/ro.txt" "$BETA_ADDR:$SCR/$ALICE/none/deeper/x"
((RC != 0)) && grep -q "$SCR/$ALICE/none" <<<"$OUT" || tb_fail "a missing directory: exit $RC, not named: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"

tb_log "4. bob may not land in alice's directory, nor outside landing_roots"
chown "$BOB:" "$WORK/x1"
send "$BOB" "$WORK/x1" "$BETA_ADDR:$SCR/$ALICE/"
((RC != 0)) && grep -q "Permission denied" <<<"$OUT" && grep -q "$SCR/$ALICE" <<<"$OUT" ||
        tb_fail "bob into alice's 0700 directory: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
send "$BOB" "$WORK/x1" "$BETA_ADDR:/var/tmp/bob.dat"
((RC != 0)) && grep -q "landing_roots" <<<"$OUT" || tb_fail "outside landing_roots: exit $RC: $OUT"
[[ ! -e /var/tmp/bob.dat ]] || tb_fail "bob's file landed outside landing_roots"
tb_log "$(tail -n 1 <<<"$OUT")"

tb_log "4b. pulls: alice gets her 0600 file back as herself; bob may not read it"
# xferctl get against alpha: beta's lander reads the file as the user,
# beta sends it back to alpha, whose lander lands it as that user.
make_file "$WORK/pull.dat" 2500000
install -m 0600 -o "$ALICE" -g "$ALICE" "$WORK/pull.dat" "$SCR/$ALICE/pull.dat"
as "$ALICE" mkdir -m 0700 "$SCR/$ALICE/got"
since=$(date '+%F %T.%6N')
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get "$BETA_ADDR:$SCR/$ALICE/pull.dat" "$SCR/$ALICE/got" 2>&1) || RC=$?
((RC == 0)) && grep -qF "$SCR/$ALICE/got/pull.dat" <<<"$OUT" || tb_fail "alice's get: exit $RC: $OUT"
tb_log "$OUT"
same_file "$WORK/pull.dat" "$SCR/$ALICE/got/pull.dat"
[[ $(stat -c '%U %G %a' "$SCR/$ALICE/got/pull.dat") == "$ALICE $ALICE 600" ]] ||
        tb_fail "the pulled file is not alice's 0600 one: $(stat -c '%U %G %a' "$SCR/$ALICE/got/pull.dat")"
e=$(beta_entry "$since")
grep -q "^RDMAXFER_PULLED=$SCR/$ALICE/pull.dat$" <<<"$e" && grep -q '^RDMAXFER_BYTES=2500000$' <<<"$e" &&
        grep -q "^RDMAXFER_USER=$ALICE$" <<<"$e" && ! grep -q '^RDMAXFER_LANDED=' <<<"$e" ||
        tb_fail "beta's journal does not say what was pulled: $(grep '^RDMAXFER_\|^MESSAGE' <<<"$e" | tr '\n' ' ')"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get "$BETA_ADDR:$SCR/$ALICE/pull.dat" "$SCR/$ALICE/got/" 2>&1) || RC=$?
((RC != 0)) && grep -q "exists" <<<"$OUT" || tb_fail "a second get into the same name: exit $RC: $OUT"
# Kept up to date here (get --sync): the same file stays (its inode).
ino=$(stat -c %i "$SCR/$ALICE/got/pull.dat")
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get --sync=digest "$BETA_ADDR:$SCR/$ALICE/pull.dat" "$SCR/$ALICE/got/" 2>&1) ||
        RC=$?
((RC == 0)) && [[ $(stat -c %i "$SCR/$ALICE/got/pull.dat") == "$ino" ]] ||
        tb_fail "get --sync=digest of the same file: exit $RC, inode $(stat -c %i "$SCR/$ALICE/got/pull.dat") (was $ino): $OUT"
# A larger one at --bwlimit 8M, watched: beta sends it at that rate, and
# the job shows the file's size and progress as it comes back (its own
# bytes are none).
make_file "$WORK/big.dat" 25165824
install -m 0600 -o "$ALICE" -g "$ALICE" "$WORK/big.dat" "$SCR/$ALICE/big.dat"
t0=$(date +%s%N)
id=$(as "$ALICE" xferctl get --no-wait --bwlimit 8M "$BETA_ADDR:$SCR/$ALICE/big.dat" "$SCR/$ALICE/got/") ||
        tb_fail "get --no-wait: $id"
for _ in $(seq 300); do
        st=$(as "$ALICE" xferctl status "$id" --json 2>&1)
        grep -q '"state":"\(done\|failed\|cancelled\)"' <<<"$st" && break
        sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q '"state":"done"' <<<"$st" && grep -q '"bytes":25165824,"bytes_total":25165824' <<<"$st" ||
        tb_fail "the get's job does not show what came back: $st"
grep -Eq "\"land\":\"pull\",\"land_path\":\"$SCR/$ALICE/big.dat\",\"back_path\":\"$SCR/$ALICE/got/?\"" <<<"$st" ||
        tb_fail "the get's job does not say what it read and where it landed: $st"
((ms >= 2400)) || tb_fail "24 MiB at --bwlimit 8M came back in $ms ms"
tb_log "24 MiB at --bwlimit 8M: $ms ms"
same_file "$WORK/big.dat" "$SCR/$ALICE/got/big.dat"
RC=0
OUT=$(as "$BOB" timeout 120 xferctl get --retries 0 "$BETA_ADDR:$SCR/$ALICE/pull.dat" /tmp/bob-pull.dat 2>&1) || RC=$?
((RC != 0)) && grep -q "Permission denied" <<<"$OUT" && grep -q "$SCR/$ALICE" <<<"$OUT" ||
        tb_fail "bob's get of alice's file: exit $RC: $OUT"
[[ ! -e /tmp/bob-pull.dat ]] || tb_fail "bob got alice's 0600 file"
tb_log "$(tail -n 1 <<<"$OUT")"
# Several sources (scp's host:a host:b DIR): each its own pull into DIR;
# one not there is named, the others come, and the exit is 23.
as "$ALICE" mkdir -m 0700 "$SCR/$ALICE/got2"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get "$BETA_ADDR:$SCR/$ALICE/pull.dat" "$BETA_ADDR:$SCR/$ALICE/none.dat" \
        "$BETA_ADDR:$SCR/$ALICE/big.dat" "$SCR/$ALICE/got2" 2>&1) || RC=$?
((RC == 23)) && grep -q "1 of 3 sources did not land (above): $BETA_ADDR:$SCR/$ALICE/none.dat" <<<"$OUT" ||
        tb_fail "a get of three sources, one not there: exit $RC: $OUT"
same_file "$WORK/pull.dat" "$SCR/$ALICE/got2/pull.dat"
same_file "$WORK/big.dat" "$SCR/$ALICE/got2/big.dat"
tb_log "$(tail -n 1 <<<"$OUT")"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get "$BETA_ADDR:$SCR/$ALICE/set" "$SCR/$ALICE/set-copy" 2>&1) || RC=$?
((RC != 0)) && grep -q "get -r fetches a tree" <<<"$OUT" || tb_fail "a get of a directory: exit $RC: $OUT"
[[ ! -e $SCR/$ALICE/set-copy ]] || tb_fail "a get of a directory made something"
tb_log "4c. get -r: alice pulls a tree of every mode as herself; bob may not; a FIFO in it refuses it"
# The tree of 2b (read-only files and directories, dotfiles, symlinks,
# hard links, mtimes), alice's, on beta, with an absolute symlink too (a
# tree that lands as its user takes any); beta's walker reads it as her.
cp -a "$tree" "$SCR/$ALICE/ptree"
ln -s /etc/hostname "$SCR/$ALICE/ptree/abs" && chown -h "$ALICE:" "$SCR/$ALICE/ptree/abs"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get -r "$BETA_ADDR:$SCR/$ALICE/ptree" "$SCR/$ALICE/got/" 2>&1) || RC=$?
((RC == 0)) && grep -qF "$SCR/$ALICE/got/ptree" <<<"$OUT" || tb_fail "alice's get -r: exit $RC: $OUT"
tb_log "$OUT"
tree_oracle "$SCR/$ALICE/ptree" "$SCR/$ALICE/got/ptree"
# Between two peers, as scp -r A:/x B:/y: alpha walks it, beta lands it.
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl send -r "$ALPHA_ADDR:$SCR/$ALICE/ptree" "$BETA_ADDR:$SCR/$ALICE/pcopy" 2>&1) ||
        RC=$?
((RC == 0)) || tb_fail "alice's send -r A:/x B:/y: exit $RC: $OUT"
tree_oracle "$SCR/$ALICE/ptree" "$SCR/$ALICE/pcopy"
# A copy kept up to date (--sync): into PATH/, then again, beta's
# big.bin, the same, staying.
as "$ALICE" mkdir -m 0700 "$SCR/$ALICE/pc"
unset ino
for how in --sync=size --sync=size; do
        RC=0
        OUT=$(as "$ALICE" timeout 120 xferctl send -r "$how" "$ALPHA_ADDR:$SCR/$ALICE/ptree" \
                "$BETA_ADDR:$SCR/$ALICE/pc/" 2>&1) || RC=$?
        ((RC == 0)) || tb_fail "alice's send -r $how A:/x B:/y/: exit $RC: $OUT"
        [[ -z ${ino:-} || $(stat -c %i "$SCR/$ALICE/pc/ptree/big.bin") == "$ino" ]] ||
                tb_fail "send -r $how A:/x B:/y/ again replaced big.bin, the same"
        ino=$(stat -c %i "$SCR/$ALICE/pc/ptree/big.bin")
        tree_oracle "$SCR/$ALICE/ptree" "$SCR/$ALICE/pc/ptree"
done
[[ -z $(find "$SCR/$ALICE/got/ptree" ! -user "$ALICE" -o ! -group "$ALICE") ]] ||
        tb_fail "entries of the pulled tree not alice's: $(find "$SCR/$ALICE/got/ptree" ! -user "$ALICE" | head -3)"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get -r "$BETA_ADDR:$SCR/$ALICE/ptree" "$SCR/$ALICE/got/" 2>&1) || RC=$?
((RC != 0)) && grep -q "exists" <<<"$OUT" || tb_fail "the tree pulled again into the same name: exit $RC: $OUT"
# Kept up to date here (get -r --sync): what is the same stays (its
# inode), what differs comes.
ino=$(stat -c %i "$SCR/$ALICE/got/ptree/big.bin")
make_file "$SCR/$ALICE/ptree/.git/HEAD" 23
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get -r --sync=digest "$BETA_ADDR:$SCR/$ALICE/ptree" "$SCR/$ALICE/got/" 2>&1) ||
        RC=$?
((RC == 0)) && [[ $OUT == *" kept)"* ]] || tb_fail "alice's get -r --sync=digest into her copy: exit $RC: $OUT"
[[ $(stat -c %i "$SCR/$ALICE/got/ptree/big.bin") == "$ino" ]] || tb_fail "get -r --sync replaced big.bin, the same"
tree_oracle "$SCR/$ALICE/ptree" "$SCR/$ALICE/got/ptree"
tb_log "get -r --sync=digest: her copy kept up to date, big.bin kept"
# Mirrored (get -r --sync --delete): what only her copy has goes, in the
# step that publishes it; what is the same stays.
as "$ALICE" sh -c "echo there >'$SCR/$ALICE/got/ptree/only-here.txt' && mkdir '$SCR/$ALICE/got/ptree/old' &&
        echo x >'$SCR/$ALICE/got/ptree/old/x'"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get -r --sync=size --delete "$BETA_ADDR:$SCR/$ALICE/ptree" \
        "$SCR/$ALICE/got/" 2>&1) || RC=$?
((RC == 0)) && [[ $OUT == *", 3 deleted)"* ]] || tb_fail "alice's get -r --sync=size --delete: exit $RC: $OUT"
[[ ! -e $SCR/$ALICE/got/ptree/only-here.txt && ! -e $SCR/$ALICE/got/ptree/old &&
   $(stat -c %i "$SCR/$ALICE/got/ptree/big.bin") == "$ino" ]] ||
        tb_fail "get -r --delete left what only her copy had, or replaced big.bin: $(ls "$SCR/$ALICE/got/ptree")"
tree_oracle "$SCR/$ALICE/ptree" "$SCR/$ALICE/got/ptree"
tb_log "get -r --sync=size --delete: her copy is beta's tree, what only it had gone, big.bin kept"
RC=0
OUT=$(as "$BOB" timeout 120 xferctl get -r --retries 0 "$BETA_ADDR:$SCR/$ALICE/ptree" /tmp/bob-tree 2>&1) || RC=$?
((RC != 0)) && grep -q "Permission denied" <<<"$OUT" || tb_fail "bob's get -r of alice's tree: exit $RC: $OUT"
[[ ! -e /tmp/bob-tree ]] || tb_fail "bob got alice's tree"
mkfifo "$SCR/$ALICE/ptree/pipe" && chown "$ALICE:" "$SCR/$ALICE/ptree/pipe"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl get -r --retries 0 "$BETA_ADDR:$SCR/$ALICE/ptree" "$SCR/$ALICE/ptree2" 2>&1) ||
        RC=$?
((RC != 0)) && grep -q "ptree/pipe: a FIFO" <<<"$OUT" || tb_fail "a tree with a FIFO pulled: exit $RC: $OUT"
[[ ! -e $SCR/$ALICE/ptree2 ]] || tb_fail "a tree with a FIFO in it was published"
[[ -z $(find "$SCR/$ALICE" -maxdepth 1 -name '.rdmaxfer-stage-*') ]] || tb_fail "a staging directory stayed"
tb_log "$(tail -n 1 <<<"$OUT")"
# 500 small files: the walker runs ahead of the send back and waits for
# it; the files go back packed. Pulled again with --overwrite: replaced.
mkdir -m 0700 "$SCR/$ALICE/small" && (cd "$SCR/$ALICE/small" && head -c $((500 * 4096)) /dev/urandom |
        split -b 4096 -a 4 -d - f) && chown -R "$ALICE:" "$SCR/$ALICE/small" || tb_fail "the small files"
for how in "" --overwrite; do
        RC=0
        OUT=$(as "$ALICE" timeout 300 xferctl get -r $how "$BETA_ADDR:$SCR/$ALICE/small" "$SCR/$ALICE/got/" 2>&1) ||
                RC=$?
        ((RC == 0)) || tb_fail "alice's get -r $how of 500 files: exit $RC: $OUT"
        tree_oracle "$SCR/$ALICE/small" "$SCR/$ALICE/got/small"
done
tb_log "500 files pulled, then pulled again over them with --overwrite"
rm -rf "$SCR/$ALICE/ptree" "$SCR/$ALICE/got/ptree" "$SCR/$ALICE/pcopy" "$SCR/$ALICE/small" "$SCR/$ALICE/got/small"
# A copy between two daemons, as scp A:/x B:/y; here A is alpha itself,
# which reads the file as alice and sends it on to beta.
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl send "$ALPHA_ADDR:$SCR/$ALICE/pull.dat" "$BETA_ADDR:$SCR/$ALICE/copied.dat" 2>&1) ||
        RC=$?
((RC == 0)) && grep -qF -- "-> $BETA_ADDR:$SCR/$ALICE/copied.dat" <<<"$OUT" || tb_fail "alice's copy A:/x B:/y: exit $RC: $OUT"
same_file "$WORK/pull.dat" "$SCR/$ALICE/copied.dat"
[[ $(stat -c '%U %a' "$SCR/$ALICE/copied.dat") == "$ALICE 600" ]] || tb_fail "the copy is not alice's 0600 file"
tb_log "$OUT"
# A NODELIST:/PATH: one file down a relay chain (alpha lands it and
# passes it on to beta), and with --parallel to each node directly, each
# with its own credential (one guest, one file system: the second
# replaces the first's).
for how in chain --parallel=2; do
        since=$(date '+%F %T.%6N')
        RC=0
        OUT=$(as "$ALICE" timeout 120 xferctl send --overwrite ${how#chain} "$WORK/pull.dat" \
                "$ALPHA_ADDR,$BETA_ADDR:$SCR/$ALICE/both.dat" 2>&1) || RC=$?
        ((RC == 0)) && grep -q "^$ALPHA_ADDR: " <<<"$OUT" && grep -q "^$BETA_ADDR: " <<<"$OUT" ||
                tb_fail "alice's send to two peers at PATH ($how): exit $RC: $OUT"
        same_file "$WORK/pull.dat" "$SCR/$ALICE/both.dat"
        [[ $(stat -c %U "$SCR/$ALICE/both.dat") == "$ALICE" ]] || tb_fail "both.dat is not alice's ($how)"
        e=$(jobs_since "$ALPHA_UNIT" "$since" recv)
        if [[ $how == chain ]]; then
                grep -q "^RDMAXFER_RELAY=$BETA_ADDR:" <<<"$e" && grep -q "^RDMAXFER_LANDED=$SCR/$ALICE/both.dat$" <<<"$e" ||
                        tb_fail "alpha did not land and relay it: $(grep '^RDMAXFER_\|^MESSAGE' <<<"$e" | tr '\n' ' ')"
        fi
        tb_log "$how: $OUT"
done
rm -rf "$SCR/$ALICE/got" "$SCR/$ALICE/pull.dat" "$SCR/$ALICE/copied.dat" "$SCR/$ALICE/both.dat" "$SCR/$ALICE/big.dat"

tb_log "5. the lander not running: said; with it back, landing works again"
tb_run systemctl stop rdmaxfer-lander.socket rdmaxfer-lander.service
send "$ALICE" --retries 0 "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/later.dat"
((RC != 0)) && grep -q "cannot reach rdmaxfer-lander" <<<"$OUT" || tb_fail "no lander: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
tb_run systemctl start rdmaxfer-lander.socket
send "$ALICE" "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/later.dat"
((RC == 0)) || tb_fail "with the lander back: exit $RC: $OUT"
same_file "$WORK/x3" "$SCR/$ALICE/later.dat"
rm -f "$SCR/$ALICE/later.dat"

tb_log "5b. relay = no: a node does not send a user's file on to another (a copy A:/x B:/y)"
peers_configure "landing_roots=$SCR /tmp" "key_file=$KEY" relay=no
restart_peers
install -m 0600 -o "$ALICE" -g "$ALICE" "$WORK/x3" "$SCR/$ALICE/x3"
RC=0
OUT=$(as "$ALICE" timeout 120 xferctl send --retries 0 "$ALPHA_ADDR:$SCR/$ALICE/x3" "$BETA_ADDR:$SCR/$ALICE/x3-copy" 2>&1) ||
        RC=$?
((RC != 0)) && grep -q "only as a relay may" <<<"$OUT" || tb_fail "a copy past relay = no: exit $RC: $OUT"
[[ ! -e $SCR/$ALICE/x3-copy ]] || tb_fail "a copy past relay = no landed"
tb_log "$(tail -n 1 <<<"$OUT")"
rm -f "$SCR/$ALICE/x3"

tb_log "6. a receiver without landing_roots refuses it; its drop box still takes files"
peers_configure "key_file=$KEY"
restart_peers
send "$ALICE" "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/later.dat"
((RC != 0)) && grep -q "lands no user's files" <<<"$OUT" || tb_fail "user landing off: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
[[ ! -e $SCR/$ALICE/later.dat ]] || tb_fail "a file landed with landing_roots empty"
out=$(xferctl send "$WORK/x3" "$BETA_ADDR" --as land-dropbox.dat 2>&1) || tb_fail "the drop box: $out"
same_file "$WORK/x3" "$BETA_IN/land-dropbox.dat"
rm -f "$BETA_IN/land-dropbox.dat"

tb_log "7. no munged on the sending node: said, nothing queued"
tb_run systemctl stop munge
send "$ALICE" "$WORK/x3" "$BETA_ADDR:$SCR/$ALICE/"
((RC != 0)) && grep -qi "munged" <<<"$OUT" || tb_fail "without munged: exit $RC: $OUT"
tb_log "$(tail -n 1 <<<"$OUT")"
tb_run systemctl start munge
