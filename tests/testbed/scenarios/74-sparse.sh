#!/bin/bash
# Sparse files (issue 34, item 4; wire.h, Sparse files): the chunks of a
# file that lie wholly in a hole are neither read nor sent, and the file
# arrives with its holes.
#  1. a 256 MiB image with 3 + 3 MiB of data, 10 KiB off a chunk boundary
#     and its last MiB (four lanes: one lane's run is all hole): arrives
#     byte for byte, its digest the source's, as sparse as the source
#     (allocated <= 32 MiB); beta's NIC receives < 32 MiB, not 256; the
#     sender's journal counts the holes (RDMAXFER_HOLE_BYTES);
#  2. --sync=digest of it again: kept, whether beta has the digest stored
#     or must compute it (skipping its holes too);
#  3. a tree: a file of nothing but a hole, one with data only in its
#     middle, small files: the same as rsync -aS's copy, holes kept;
#  3b. --no-sparse: the same file moves whole, and arrives dense;
#  4. a file written dense (make_zeros: allocated, never written) is sent
#     whole: a file's holes are found, never guessed from its zeros;
#  5. one cancelled part way and sent again: resumed from what beta kept
#     (its holes too), identical, still sparse.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

MIB=$((1024 * 1024))
peers_configure overwrite=yes
start_peers

# alloc FILE: the bytes its blocks take.
alloc() { echo $(($(stat -c '%b * %B' "$1"))); }

img=$SRC/sparse.img
rm -f "$img" "$BETA_IN/sparse.img"
make_file "$SRC/rnd" $((4 * MIB))
truncate -s $((256 * MIB)) "$img"
dd if="$SRC/rnd" of="$img" bs=1M count=3 conv=notrunc status=none
dd if="$SRC/rnd" of="$img" bs=1M seek=100 count=3 conv=notrunc status=none
dd if="$SRC/rnd" of="$img" bs=64K iflag=skip_bytes,count_bytes oflag=seek_bytes skip=7 seek=$((200 * MIB + 12345)) count=10240 conv=notrunc status=none
dd if="$SRC/rnd" of="$img" bs=1M skip=1 seek=255 count=1 conv=notrunc status=none
[[ $(stat -c %s "$img") == $((256 * MIB)) ]] || tb_fail "the image is not 256 MiB"
tb_log "source: $(($(alloc "$img") / MIB)) MiB allocated of 256"
sum=$(xferctl sum "$img") || tb_fail "xferctl sum failed"

tb_log "1. a sparse image"
rx0=$(netdev_bytes "$BETA_NETDEV" rx)
tb_log "xferctl: $(send_ok "$img")"
rx=$(($(netdev_bytes "$BETA_NETDEV" rx) - rx0))
same_file "$img" "$BETA_IN/sparse.img"
[[ $(getfattr --absolute-names --only-values -n user.rdmaxfer.digest "$BETA_IN/sparse.img" 2>/dev/null) == "${sum%% *}" ]] ||
        tb_fail "beta's digest of the image is not the source's"
got=$(alloc "$BETA_IN/sparse.img")
tb_log "received: $((got / MIB)) MiB allocated; $((rx / MIB)) MiB crossed beta's NIC"
((got <= 32 * MIB)) || tb_fail "the image arrived dense: $got bytes allocated"
((rx < 32 * MIB)) || tb_fail "$rx bytes crossed the link for 7 MiB of data: holes were sent"
jfields_wait "$ALPHA_UNIT" sparse.img
[[ ${JF[RDMAXFER_RESULT]:-} == ok ]] || tb_fail "alpha's journal: ${JF[RDMAXFER_RESULT]:-no entry}"
holes=${JF[RDMAXFER_HOLE_BYTES]:-0}
((holes >= 200 * MIB && holes < 256 * MIB)) || tb_fail "alpha's journal: RDMAXFER_HOLE_BYTES=$holes"
[[ ${JF[RDMAXFER_BYTES]:-} == $((256 * MIB)) ]] || tb_fail "alpha's journal: RDMAXFER_BYTES=${JF[RDMAXFER_BYTES]:-}"
[[ ${JF[RDMAXFER_DIGEST]:-} == "${sum%% *}" ]] || tb_fail "alpha's journal: RDMAXFER_DIGEST=${JF[RDMAXFER_DIGEST]:-}"
tb_log "alpha: ${JF[MESSAGE]}"

tb_log "2. --sync=digest of it again"
out=$(send_ok "$img" --sync=digest)
[[ $out == *skipped* ]] || tb_fail "--sync=digest sent the image again: $out"
setfattr -x user.rdmaxfer.digest "$BETA_IN/sparse.img" || tb_fail "setfattr -x"
out=$(send_ok "$img" --sync=digest)
[[ $out == *skipped* ]] || tb_fail "--sync=digest with beta computing its digest sent the image again: $out"
((($(alloc "$BETA_IN/sparse.img")) <= 32 * MIB)) || tb_fail "the kept image is dense now"

tb_log "3. a tree"
tree=$SRC/sp-tree
rm -rf "$tree" "$BETA_IN/sp-tree"
mkdir -p "$tree/sub"
truncate -s $((64 * MIB)) "$tree/hole.img"
truncate -s $((48 * MIB)) "$tree/sub/middle.img"
dd if="$SRC/rnd" of="$tree/sub/middle.img" bs=1M seek=20 count=2 conv=notrunc status=none
make_file "$tree/small.txt" 3000
make_file "$tree/sub/.hidden" 100
rc=0
out=$(xferctl send -r "$tree" "$BETA_ADDR" 2>&1) || rc=$?
((rc == 0)) || tb_fail "send -r of a tree with sparse files: exit $rc: $out"
tb_log "xferctl: $(tail -n 1 <<<"$out")"
# Contents, modes, mtimes, and holes where rsync -aS keeps them (within
# 4 MiB a file).
tree_oracle "$tree" "$BETA_IN/sp-tree"
for f in hole.img sub/middle.img; do
        tb_log "$f: $(alloc "$BETA_IN/sp-tree/$f") of $(stat -c %s "$tree/$f") bytes allocated"
done

tb_log "3b. --no-sparse: every byte sent, the copy dense"
rx0=$(netdev_bytes "$BETA_NETDEV" rx)
send_ok "$tree/sub/middle.img" --no-sparse >/dev/null
rx=$(($(netdev_bytes "$BETA_NETDEV" rx) - rx0))
same_file "$tree/sub/middle.img" "$BETA_IN/middle.img"
((rx >= 48 * MIB)) || tb_fail "--no-sparse: only $rx bytes crossed for a 48 MiB file"
(($(alloc "$BETA_IN/middle.img") >= 48 * MIB)) || tb_fail "--no-sparse: the copy has holes"
rm -f "$BETA_IN/middle.img"

tb_log "4. a file of written zeros is sent whole"
make_zeros "$SRC/zeros.img" $((16 * MIB))
rx0=$(netdev_bytes "$BETA_NETDEV" rx)
send_ok "$SRC/zeros.img" >/dev/null
rx=$(($(netdev_bytes "$BETA_NETDEV" rx) - rx0))
same_file "$SRC/zeros.img" "$BETA_IN/zeros.img"
((rx >= 16 * MIB)) || tb_fail "only $rx bytes crossed for 16 MiB of allocated zeros"
tb_log "5. cancelled part way, sent again: resumed, and still sparse"
# 64 MiB over four lanes: data in the first 4 MiB (lane 0, sent at 1 MiB/s
# and cancelled in it), none at all in lanes 1 and 2, 4 MiB at the end.
res=$SRC/resume.img
rm -f "$res" "$BETA_IN/resume.img"
truncate -s $((64 * MIB)) "$res"
dd if="$SRC/rnd" of="$res" bs=1M count=4 conv=notrunc status=none
dd if="$SRC/rnd" of="$res" bs=1M seek=60 count=4 conv=notrunc status=none
datas() { find /var/lib/rdmaxferd-beta/partial -name '*.data' 2>/dev/null | wc -l; }
n0=$(datas)
rx0=$(netdev_bytes "$BETA_NETDEV" rx)
id=$(xferctl send --no-wait --bwlimit 1M "$res" "$BETA_ADDR") || tb_fail "submit of resume.img failed"
id=${id//[^0-9]/}
wait_for 20 bash -c "(( \$(cat /sys/class/net/$BETA_NETDEV/statistics/rx_bytes) - $rx0 >= 3 * $MIB ))" ||
        tb_fail "resume.img never got under way"
tb_run xferctl cancel "$id" >/dev/null || tb_fail "cancel failed"
wait_for 10 job_in_state "$id" cancelled || tb_fail "job $id not cancelled"
wait_for 10 bash -c "(( \$(find /var/lib/rdmaxferd-beta/partial -name '*.data' | wc -l) > $n0 ))" ||
        tb_fail "beta kept nothing of the cancelled resume.img"
send_ok "$res" >/dev/null
same_file "$res" "$BETA_IN/resume.img"
r=$(jfield "$BETA_UNIT" resume.img RDMAXFER_RESUMED_BYTES)
tb_log "resume.img: RDMAXFER_RESUMED_BYTES=$r, $(($(alloc "$BETA_IN/resume.img") / MIB)) MiB allocated"
((${r:-0} > 0)) || tb_fail "resume.img was not resumed"
(($(alloc "$BETA_IN/resume.img") <= 16 * MIB)) || tb_fail "the resumed copy is dense"

rm -rf "$img" "$res" "$SRC/rnd" "$SRC/zeros.img" "$tree" "$BETA_IN/sparse.img" "$BETA_IN/zeros.img" \
        "$BETA_IN/sp-tree" "$BETA_IN/resume.img"
tb_log "pass"
