#!/bin/bash
# The multi-rail benchmark, inside the testbed guest (tests/bench/bench
# --rails runs it): alpha and beta with one rail each, then two
# (guest/rails.sh: a second veth pair and rxe device per node), the
# daemons restarted between, interleaved in rounds:
#   single   one file of BENCH_RL_MB (512 MiB)
#   four     four files of a quarter of that each, sent at once
# First with every rail's link capped by tc at BENCH_RL_RATE (80mbit, 10
# MB/s, both ways: one transfer moves 35-50 MB/s over one rail in this
# guest under TCG, so even two capped rails leave the links the limit), then uncapped (BENCH_RL_FREE_REPS rounds). Each received copy
# is checked by its digest. Then rails of unequal speed (BENCH_RL_UNEQ_REPS
# rounds, 3): the first rail capped at BENCH_RL_RATE, the second at a
# quarter of it; the daemons restarted (nothing measured), one file of
# BENCH_RL_UNEQ_MB (128 MiB) goes two lanes over each rail, then again,
# the lanes spread by what each rail delivered (three and one). Then the
# medians and the issue's targets: capped, two rails >= 1.8 x one rail,
# for the single file and for four; unequal, how much the weighted split
# gains (2 x at best with four lanes).
# testbed-timeout: 3600
# shellcheck source=tests/testbed/lib.sh
. "${TESTBED_LIB:?run me with tests/bench/bench --rails}"
# shellcheck source=tests/testbed/xfer.sh
. "$(dirname "$TESTBED_LIB")/xfer.sh"

for a in "$@"; do
        [[ $a == BENCH_*=* ]] && export "${a?}"
done
REPS=${BENCH_RL_REPS:-3}
FREE_REPS=${BENCH_RL_FREE_REPS:-1}
UNEQ_REPS=${BENCH_RL_UNEQ_REPS:-3}
UNEQ_MB=${BENCH_RL_UNEQ_MB:-128}
MB=${BENCH_RL_MB:-512}
RATE=${BENCH_RL_RATE:-80mbit}
MIB=$((1024 * 1024))
OUT=$TESTBED_SHARE/bench
mkdir -p "$OUT"
RES=$OUT/rails-results.tsv
: >"$RES"

NETDEVS=("$ALPHA_NETDEV" "$BETA_NETDEV" "$ALPHA2_NETDEV" "$BETA2_NETDEV")

rails_up
cap() {
        local d cmds=()
        for d in "${NETDEVS[@]}"; do
                cmds+=("qdisc replace dev $d root tbf rate $RATE burst 256kb limit 4mb")
        done
        printf '%s\n' "${cmds[@]}" | tc -batch - || tb_fail "tc: capping the rails failed"
}
# cap_unequal: the first rail at RATE, the second at a quarter of it.
cap_unequal() {
        local slow
        slow=$(awk -v r="$RATE" 'BEGIN { n = r + 0; sub(/^[0-9.]+/, "", r); printf "%g%s", n / 4, r }')
        printf '%s\n' "qdisc replace dev $ALPHA_NETDEV root tbf rate $RATE burst 256kb limit 4mb" \
                "qdisc replace dev $ALPHA2_NETDEV root tbf rate $slow burst 256kb limit 4mb" | tc -batch - ||
                tb_fail "tc: capping the rails failed"
}
uncap() {
        local d
        for d in "${NETDEVS[@]}"; do
                tc qdisc del dev "$d" root 2>/dev/null || true
        done
}

# rails N: both daemons on N rails (restarted).
rails() {
        stop_peers
        rails_configure "$1" "$1" overwrite=yes
        start_peers
}

make_file "$SRC/one.dat" $((MB * MIB))
for i in 1 2 3 4; do
        make_file "$SRC/q$i.dat" $((MB * MIB / 4))
done
declare -A want
for f in one q1 q2 q3 q4; do
        want[$f]=$(xferctl sum "$SRC/$f.dat" | cut -c1-32)
done

digest_ok() {
        [[ $(getfattr --absolute-names --only-values -n user.rdmaxfer.digest "$BETA_IN/$1.dat") == "${want[$1]}" ]] ||
                tb_fail "$1.dat arrived with another digest"
}

# run LINK NRAILS ROUND: one of each kind; a line each into RES.
run() {
        local link=$1 n=$2 r=$3 t0 t1 pids i secs
        sync
        t0=$(date +%s.%N)
        send_ok "$SRC/one.dat" >/dev/null
        t1=$(date +%s.%N)
        digest_ok one
        secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        printf '%s\t%s\t%s\tsingle\t%s\n' "$link" "$n" "$r" "$secs" >>"$RES"
        tb_log "$link, $n rail(s), round $r: one $MB MiB file in $secs s"
        pids=()
        t0=$(date +%s.%N)
        for i in 1 2 3 4; do
                xferctl send "$SRC/q$i.dat" "$BETA_ADDR" >"$SRC/q$i.out" 2>&1 &
                pids+=($!)
        done
        for i in 1 2 3 4; do
                wait "${pids[$((i - 1))]}" || { cat "$SRC/q$i.out" >&2; tb_fail "q$i.dat failed"; }
        done
        t1=$(date +%s.%N)
        for i in 1 2 3 4; do
                digest_ok "q$i"
        done
        secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        printf '%s\t%s\t%s\tfour\t%s\n' "$link" "$n" "$r" "$secs" >>"$RES"
        tb_log "$link, $n rail(s), round $r: four $((MB / 4)) MiB files at once in $secs s"
        # Go-back-N and timeouts would say why a rail fell short.
        for d in "$ALPHA_DEV" "$ALPHA2_DEV"; do
                tb_log "    $d: $(rdma statistic show link "$d/1" 2>&1 | grep -oE '(retry_exceeded_err|rcvd_seq_err|duplicate_request|send_rnr_err|rnr_nak_retry_err|ack_deferred)[a-z_]* [0-9]+' | tr '\n' ' ')"
        done
}

# run_unequal ROUND: the same file twice over rails of unequal speed,
# from daemons that measured nothing; a line each into RES.
run_unequal() {
        local r=$1 w t0 t1 secs lanes
        rails 2
        for w in even weighted; do
                sync
                t0=$(date +%s.%N)
                send_ok "$SRC/u.dat" --as "u-$w.dat" >/dev/null
                t1=$(date +%s.%N)
                [[ $(getfattr --absolute-names --only-values -n user.rdmaxfer.digest "$BETA_IN/u-$w.dat") == "${want[u]}" ]] ||
                        tb_fail "u-$w.dat arrived with another digest"
                jfields_wait "$ALPHA_UNIT" "u-$w.dat"
                lanes=${JF[RDMAXFER_RAIL_LANES]:-?}
                secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
                printf 'unequal\t2\t%s\t%s\t%s\t%s\n' "$r" "$w" "$secs" "$lanes" >>"$RES"
                tb_log "unequal rails, round $r, $w: one $UNEQ_MB MiB file in $secs s, lanes $lanes"
                rm -f "$BETA_IN/u-$w.dat"
        done
}

cap
for ((r = 1; r <= REPS; r++)); do
        for n in 1 2; do
                rails "$n"
                run capped "$n" "$r"
        done
done
uncap
for ((r = 1; r <= FREE_REPS; r++)); do
        for n in 1 2; do
                rails "$n"
                run uncapped "$n" "$r"
        done
done
if ((UNEQ_REPS > 0)); then
        make_file "$SRC/u.dat" $((UNEQ_MB * MIB))
        want[u]=$(xferctl sum "$SRC/u.dat" | cut -c1-32)
        cap_unequal
        for ((r = 1; r <= UNEQ_REPS; r++)); do
                run_unequal "$r"
        done
        uncap
fi
stop_peers
rm -f "$SRC"/one.dat "$SRC"/q?.dat "$SRC"/q?.out "$SRC"/u.dat "$BETA_IN"/one.dat "$BETA_IN"/q?.dat

awk -F'\t' -v mb="$MB" -v rate="$RATE" -v uneq="$UNEQ_MB" '
function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ t[$1, $2, $3, $4] = $5; if ($3 > R[$1]) R[$1] = $3; if ($1 == "unequal") L[$4] = L[$4] " " $6 }
END {
        printf "rails-bench: %d MiB (single) and 4 x %d MiB at once (four), one rail against two, rounds interleaved\n",
               mb, mb / 4
        for (li = 1; li <= 2; li++) {
                link = li == 1 ? "capped" : "uncapped"
                if (!R[link])
                        continue
                for (ki = 1; ki <= 2; ki++) {
                        kind = ki == 1 ? "single" : "four"
                        for (r = 1; r <= R[link]; r++) {
                                a[r] = t[link, 1, r, kind]; b[r] = t[link, 2, r, kind]
                                q[r] = t[link, 1, r, kind] / t[link, 2, r, kind]
                        }
                        one = median(a, R[link]); two = median(b, R[link]); ratio = median(q, R[link])
                        label = link
                        if (link == "capped")
                                label = link " at " rate
                        printf "rails-bench: %s, %s: one rail %.2f s (%.1f MB/s), two rails %.2f s (%.1f MB/s): %.2f x",
                               label, kind, one, mb * 1.048576 / one, two, mb * 1.048576 / two, ratio
                        if (link == "capped")
                                printf " (target >= 1.8: %s)", (ratio >= 1.8 ? "met" : "missed")
                        printf "\n"
                }
        }
        if (R["unequal"]) {
                for (r = 1; r <= R["unequal"]; r++) {
                        a[r] = t["unequal", 2, r, "even"]; b[r] = t["unequal", 2, r, "weighted"]
                        q[r] = a[r] / b[r]
                }
                n = R["unequal"]
                one = median(a, n); two = median(b, n); ratio = median(q, n)
                printf "rails-bench: unequal (the second rail at a quarter of %s), %d MiB: lanes as measured %.2f s, " \
                       "lanes round the rails %.2f s: %.2f x (2.00 at best; lanes:%s /%s)\n", rate, uneq, two, one,
                       ratio, L["weighted"], L["even"]
        }
}' "$RES" | tee "$OUT/rails-report.txt"
