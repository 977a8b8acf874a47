#!/bin/bash
# The landing benchmark, inside the testbed guest (tests/bench/bench --land
# runs it): what landing as the user (xferctl send FILE... PEER:/PATH,
# through rdmaxfer-lander and MUNGE) costs against the drop box, side by
# side, interleaved in rounds: one file of BENCH_LD_MB (1 GiB); a job of
# BENCH_LD_FILES (1,000) files of 4 KiB each (one job, a session offer
# each, as a flat job of several files goes); and the same files as a
# tree (send -r: packed, the lander making each packed file). Each
# received copy is checked. Then the medians and the issue's targets: the
# large file landed >= 0.95 x the drop box's rate; the small files >= 0.85
# x its files/s (flat and as a tree). The large file and the tree are
# also pulled (xferctl get [-r], read on beta, the tree by the lander's
# walker, and landed on alpha as the user), against their landing pushed.
# And the tree kept up to date as the user: landed (untimed), 1 % of its
# files grown by a byte, then send -r --sync=size --delete timed, against
# the tree landed afresh (what sending it again costs).
# testbed-timeout: 3600
# shellcheck source=tests/testbed/lib.sh
. "${TESTBED_LIB:?run me with tests/bench/bench --land}"
# shellcheck source=tests/testbed/xfer.sh
. "$(dirname "$TESTBED_LIB")/xfer.sh"

for a in "$@"; do
        [[ $a == BENCH_*=* ]] && export "${a?}"
done
REPS=${BENCH_LD_REPS:-3}
BENCH_LD_DEBUG=${BENCH_LD_DEBUG:-}
MB=${BENCH_LD_MB:-1024}
NFILES=${BENCH_LD_FILES:-1000}
MIB=$((1024 * 1024))
OUT=$TESTBED_SHARE/bench
mkdir -p "$OUT"
RES=$OUT/land-results.tsv
: >"$RES"
USER_=tb-bench
SCR=/scratch
WORK=/var/tmp/land-bench

useradd -M -s /usr/sbin/nologin -G rdmaxfer "$USER_" 2>/dev/null || true
rm -rf "$SCR" "$WORK"
# Page cache to page cache, both ways alike (as the other benches): the
# drop box and the landing root in tmpfs, so the figures compare the two
# paths, not the emulated disk. (On the guest's disk, a landed file,
# never checkpointed, is written back all at its end: see
# doc/performance.md.)
mkdir -p "$SCR" "$BETA_IN"
mount -t tmpfs -o size=40%,mode=1777 tmpfs "$SCR"
mount -t tmpfs -o size=40%,mode=0750 tmpfs "$BETA_IN"
chown rdmaxfer:rdmaxfer "$BETA_IN"
install -d -m 0755 -o "$USER_" -g "$USER_" "$SCR/$USER_" "$WORK" "$WORK/small"
munge_up
# BENCH_LD_DEBUG=1: both daemons log at debug (each lander round trip's time).
peers_configure overwrite=yes "landing_roots=$SCR" ${BENCH_LD_DEBUG:+log_level=debug}
start_peers
systemctl start rdmaxfer-lander.socket || tb_fail "rdmaxfer-lander.socket did not start"

make_file "$WORK/big.dat" $((MB * MIB))
# What a get reads on beta: the user's own copy beneath the landing root.
install -d -m 0755 -o "$USER_" -g "$USER_" "$SCR/$USER_/src" "$SCR/$USER_/got"
install -m 0644 -o "$USER_" -g "$USER_" "$WORK/big.dat" "$SCR/$USER_/src/big.dat"
head -c $((NFILES * 4096)) /dev/urandom >"$WORK/smallblob"
(cd "$WORK/small" && split -b 4096 -a 5 -d "$WORK/smallblob" f) || tb_fail "split"
rm -f "$WORK/smallblob"
chown -R "$USER_:" "$WORK"
# What a get -r reads on beta: the same tree, the user's.
cp -a "$WORK/small" "$SCR/$USER_/src/small"
small=("$WORK"/small/f*)
((${#small[@]} == NFILES)) || tb_fail "${#small[@]} small files, not $NFILES"
tb_log "$MB MiB file, $NFILES files of 4 KiB; $REPS round(s), drop box and landing interleaved"

# run KIND WHAT: one send as the user, timed; the copy checked, then removed.
run() {
        local kind=$1 what=$2 dest t0 t1 out
        if [[ $kind == dropbox ]]; then
                dest=$BETA_ADDR
        else
                dest=$BETA_ADDR:$SCR/$USER_/
        fi
        sync
        t0=$(date +%s.%N)
        if [[ $kind == sync ]]; then
                out=$(as "$USER_" xferctl send -r --sync=size --delete "$WORK/small" "$dest" 2>&1) ||
                        tb_fail "$kind $what: $out"
        elif [[ $kind == get && $what == tree ]]; then
                out=$(as "$USER_" xferctl get -r "$BETA_ADDR:$SCR/$USER_/src/small" "$SCR/$USER_/got/" 2>&1) ||
                        tb_fail "$kind $what: $out"
        elif [[ $kind == get ]]; then
                out=$(as "$USER_" xferctl get "$BETA_ADDR:$SCR/$USER_/src/big.dat" "$SCR/$USER_/got/" 2>&1) ||
                        tb_fail "$kind $what: $out"
        elif [[ $what == big ]]; then
                out=$(as "$USER_" xferctl send "$WORK/big.dat" "$dest" 2>&1) || tb_fail "$kind $what: $out"
        elif [[ $what == tree ]]; then
                out=$(as "$USER_" xferctl send -r "$WORK/small" "$dest" 2>&1) || tb_fail "$kind $what: $out"
        else
                out=$(as "$USER_" xferctl send "${small[@]}" "$dest" 2>&1) || tb_fail "$kind $what: $out"
        fi
        t1=$(date +%s.%N)
        if [[ $what == big ]]; then
                local got=$BETA_IN/big.dat
                [[ $kind == land ]] && got=$SCR/$USER_/big.dat
                [[ $kind == get ]] && got=$SCR/$USER_/got/big.dat
                cmp -s "$WORK/big.dat" "$got" || tb_fail "$kind: big.dat arrived with other bytes"
                [[ $kind == dropbox || $(stat -c %U "$got") == "$USER_" ]] || tb_fail "landed big.dat is not the user's"
                rm -f "$got"
        elif [[ $what == tree ]]; then
                local got=$BETA_IN/small
                [[ $kind == land || $kind == sync ]] && got=$SCR/$USER_/small
                [[ $kind == get ]] && got=$SCR/$USER_/got/small
                diff -r "$WORK/small" "$got" >/dev/null || tb_fail "$kind: the tree arrived with other bytes"
                [[ $kind == dropbox || -z $(find "$got" ! -user "$USER_") ]] || tb_fail "the landed tree is not the user's"
                rm -rf "$got"
        else
                local dir=$BETA_IN
                [[ $kind == land ]] && dir=$SCR/$USER_
                cmp -s "$WORK/small/f00000" "$dir/f00000" && [[ -e $dir/f$(printf '%05d' $((NFILES - 1))) ]] ||
                        tb_fail "$kind: the small files did not all arrive"
                rm -f "$dir"/f[0-9]*
        fi
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

# sync_prepare: the tree landed as the user, untimed; then 1 % of the
# source's files (at least one) grown by a byte. sync_undo: back to 4 KiB.
nchanged=$(((NFILES + 99) / 100))
sync_prepare() {
        local out
        out=$(as "$USER_" xferctl send -r "$WORK/small" "$BETA_ADDR:$SCR/$USER_/" 2>&1) || tb_fail "sync's tree: $out"
        for f in "${small[@]:0:nchanged}"; do printf 'x' >>"$f"; done
}
sync_undo() {
        for f in "${small[@]:0:nchanged}"; do truncate -s 4096 "$f"; done
}

for ((r = 1; r <= REPS; r++)); do
        for what in big small tree; do
                kinds=(dropbox land)
                [[ $what != small ]] && kinds+=(get)
                [[ $what == tree ]] && kinds+=(sync)
                for kind in "${kinds[@]}"; do
                        [[ $kind == sync ]] && sync_prepare
                        secs=$(run "$kind" "$what")
                        [[ $kind == sync ]] && sync_undo
                        printf '%s\t%s\t%s\t%s\n' "$r" "$what" "$kind" "$secs" >>"$RES"
                        tb_log "round $r, $what, $kind: $secs s"
                done
        done
done
# With BENCH_LD_DEBUG, both daemons' and the lander's journal, for their timings.
[[ -z $BENCH_LD_DEBUG ]] ||
        journalctl -u "$ALPHA_UNIT" -u "$BETA_UNIT" -u rdmaxfer-lander.service -o short-monotonic --no-pager \
                >"$OUT/land-journal.txt"
rm -rf "$WORK"
userdel -f "$USER_" 2>/dev/null || true

awk -F'\t' -v mb="$MB" -v n="$NFILES" '
function median(a, k,   i, j, t) {
        for (i = 2; i <= k; i++)
                for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{ t[$1, $2, $3] = $4; if ($1 > R) R = $1 }
END {
        for (r = 1; r <= R; r++) {
                bd[r] = t[r, "big", "dropbox"]; bl[r] = t[r, "big", "land"]; br[r] = bd[r] / bl[r]
                bg[r] = t[r, "big", "get"]; gr[r] = bl[r] / bg[r]
                sd[r] = t[r, "small", "dropbox"]; sl[r] = t[r, "small", "land"]; sr[r] = sd[r] / sl[r]
                td[r] = t[r, "tree", "dropbox"]; tl[r] = t[r, "tree", "land"]; tr[r] = td[r] / tl[r]
                tg[r] = t[r, "tree", "get"]; tgr[r] = tl[r] / tg[r]
                ts[r] = t[r, "tree", "sync"]; tsr[r] = tl[r] / ts[r]
        }
        printf "land-bench: %d MiB file and %d x 4 KiB files, %d round(s), drop box and landing interleaved\n", mb, n, R
        printf "land-bench: large file: drop box %.2f s (%.1f MB/s), landed %.2f s (%.1f MB/s)\n",
               median(bd, R), mb * 1.048576 / median(bd, R), median(bl, R), mb * 1.048576 / median(bl, R)
        printf "land-bench: large file pulled (xferctl get): %.2f s (%.1f MB/s)\n", median(bg, R), mb * 1.048576 / median(bg, R)
        printf "land-bench: small files: drop box %.2f s (%.1f files/s), landed %.2f s (%.1f files/s)\n",
               median(sd, R), n / median(sd, R), median(sl, R), n / median(sl, R)
        printf "land-bench: the same as a tree: drop box %.2f s (%.1f files/s), landed %.2f s (%.1f files/s)\n",
               median(td, R), n / median(td, R), median(tl, R), n / median(tl, R)
        rb = median(br, R); rs = median(sr, R); rt = median(tr, R)
        printf "land-bench: landed / drop box, large file rate: %.3f (target >= 0.95: %s)\n", rb, (rb >= 0.95 ? "met" : "NOT met")
        printf "land-bench: landed / drop box, small files/s:   %.3f (target >= 0.85: %s)\n", rs, (rs >= 0.85 ? "met" : "NOT met")
        printf "land-bench: landed / drop box, a tree, files/s: %.3f (target >= 0.85: %s)\n", rt, (rt >= 0.85 ? "met" : "NOT met")
        printf "land-bench: the tree pulled (xferctl get -r): %.2f s (%.1f files/s)\n", median(tg, R), n / median(tg, R)
        printf "land-bench: pulled / pushed, both landed as the user, large file rate: %.3f\n", median(gr, R)
        printf "land-bench: pulled / pushed, both landed as the user, a tree, files/s: %.3f\n", median(tgr, R)
        printf "land-bench: the tree kept up to date as the user (1 %% grown, --sync=size --delete): %.2f s\n", median(ts, R)
        printf "land-bench: sent again / synced, both landed as the user: %.3f\n", median(tsr, R)
}' "$RES" | tee "$OUT/land-report.txt"
