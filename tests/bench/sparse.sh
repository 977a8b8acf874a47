#!/bin/bash
# The sparse-file benchmark, inside the testbed guest (tests/bench/bench
# --sparse runs it): one file of BENCH_SP_MB (1 GiB) with a tenth of it
# data (1 MiB of random bytes every 10 MiB, the rest holes), sent as it is
# and as the same bytes written out dense, interleaved in rounds, each
# received copy checked. Per send: wall time, the bytes beta's NIC
# received (the RoCE frames: data, headers and control), and what the
# received copy allocates. Then the medians and the issue's targets:
# wire bytes <= 1.05 x the data, time <= 0.2 x the dense file's.
# testbed-timeout: 3600
# shellcheck source=tests/testbed/lib.sh
. "${TESTBED_LIB:?run me with tests/bench/bench --sparse}"
# shellcheck source=tests/testbed/xfer.sh
. "$(dirname "$TESTBED_LIB")/xfer.sh"

for a in "$@"; do
        [[ $a == BENCH_*=* ]] && export "${a?}"
done
REPS=${BENCH_SP_REPS:-3}
MB=${BENCH_SP_MB:-1024}
MIB=$((1024 * 1024))
OUT=$TESTBED_SHARE/bench
mkdir -p "$OUT"
RES=$OUT/sparse-results.tsv
: >"$RES"

peers_configure overwrite=yes
start_peers

sp=$SRC/sparse.img
dense=$SRC/dense.img
rm -f "$sp" "$dense"
make_file "$SRC/rnd" $((16 * MIB))
truncate -s $((MB * MIB)) "$sp"
extents=0
for ((off = 0; off < MB; off += 10)); do
        dd if="$SRC/rnd" of="$sp" bs=1M skip=$((extents % 16)) seek="$off" count=1 conv=notrunc status=none
        extents=$((extents + 1))
done
data=$((extents * MIB))
cp --sparse=never "$sp" "$dense"
rm -f "$SRC/rnd"
want=$(xferctl sum "$sp" | cut -c1-32)
tb_log "$MB MiB, $extents MiB of data in $extents extents; the dense copy allocates $(($(stat -c '%b * %B' "$dense") / MIB)) MiB"

for ((r = 1; r <= REPS; r++)); do
        for kind in sparse dense; do
                f=$SRC/$kind.img
                rm -f "$BETA_IN/$kind.img"
                sync
                rx0=$(netdev_bytes "$BETA_NETDEV" rx)
                t0=$(date +%s.%N)
                send_ok "$f" >/dev/null
                t1=$(date +%s.%N)
                rx=$(($(netdev_bytes "$BETA_NETDEV" rx) - rx0))
                [[ $(getfattr --absolute-names --only-values -n user.rdmaxfer.digest "$BETA_IN/$kind.img") == "$want" ]] ||
                        tb_fail "round $r: $kind.img arrived with another digest"
                alloc=$(($(stat -c '%b * %B' "$BETA_IN/$kind.img")))
                secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
                printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$kind" "$secs" "$rx" "$alloc" >>"$RES"
                tb_log "round $r, $kind: $secs s, $((rx / MIB)) MiB received by beta's NIC, $((alloc / MIB)) MiB allocated"
        done
done
rm -f "$sp" "$dense" "$BETA_IN/sparse.img" "$BETA_IN/dense.img"

awk -F'\t' -v data="$data" -v mb="$MB" '
function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ t[$1, $2] = $3; w[$1, $2] = $4; al[$1, $2] = $5; if ($1 > R) R = $1 }
END {
        for (r = 1; r <= R; r++) {
                ts[r] = t[r, "sparse"]; td[r] = t[r, "dense"]; ratio[r] = t[r, "sparse"] / t[r, "dense"]
                ws[r] = w[r, "sparse"]; wd[r] = w[r, "dense"]; as[r] = al[r, "sparse"]
        }
        printf "sparse-bench: %d MiB file, %.0f MiB of data, %d round(s)\n", mb, data / 1048576, R
        printf "sparse-bench: sparse: %.2f s, %.1f MiB on the wire (%.3f x the data), %.1f MiB allocated\n",
               median(ts, R), median(ws, R) / 1048576, median(ws, R) / data, median(as, R) / 1048576
        printf "sparse-bench: dense:  %.2f s, %.1f MiB on the wire\n", median(td, R), median(wd, R) / 1048576
        printf "sparse-bench: time sparse / dense, median of the rounds: %.3f (target <= 0.2: %s)\n",
               median(ratio, R), median(ratio, R) <= 0.2 ? "met" : "missed"
        printf "sparse-bench: wire / data: %.3f (target <= 1.05: %s)\n",
               median(ws, R) / data, median(ws, R) / data <= 1.05 ? "met" : "missed"
}' "$RES" | tee "$OUT/sparse-report.txt"
