#!/bin/bash
# Fan-out benchmark (issue 13), run in the guest by `tests/bench/bench
# --fanout`: alpha delivers one file to beta, gamma and delta (lib.sh:
# nodes_up, four nodes on one switch), every node's link capped at
# BENCH_FAN_CAP (tc tbf, both ways: separate NICs), then uncapped. Each
# round, side by side: the file to one peer; to the three by `xferctl send
# FILE NODELIST --parallel 1` (one after the other) and `--parallel 3` (at
# once, from alpha); and by `xferctl send FILE NODELIST`, the relay chain
# alpha -> beta -> gamma -> delta (relay = yes on every node). Every copy must
# arrive identical (cmp) before its time counts. Times are wall seconds of
# the whole xferctl command.
#
# Settings, as BENCH_*=VALUE arguments: BENCH_FAN_MB (512), BENCH_FAN_REPS
# (1), BENCH_FAN_CAP (tc rate, 120mbit = 15 MB/s; "none" skips the capped
# part), BENCH_FAN_TREE (0: one file; N: a tree of N files of BENCH_FAN_MB
# in all, in 8 directories, sent with -r; every copy compared with diff -r).
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

for a in "$@"; do
        [[ $a == BENCH_*=* ]] && export "${a?}"
done
MB=${BENCH_FAN_MB:-512}
REPS=${BENCH_FAN_REPS:-1}
CAP=${BENCH_FAN_CAP:-120mbit}
TREE=${BENCH_FAN_TREE:-0}
OUT=$TESTBED_SHARE/bench
mkdir -p "$OUT"
RES=$OUT/fan-results.tsv
: >"$RES"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# One node's daemon may take every peer's send at once.
nodes_up slot_count=16 send_slots=4 max_transfers=4 relay=yes
if ((TREE > 0)); then
        rm -rf "$SRC/fantree"
        for ((i = 0; i < TREE; i++)); do
                mkdir -p "$SRC/fantree/d$((i % 8))"
                make_file "$SRC/fantree/d$((i % 8))/f$i" $(((MB << 20) / TREE))
        done
        SRCS=(-r "$SRC/fantree")
        DEST=(--to fantree)
else
        make_file "$SRC/fan.bin" $((MB << 20))
        SRCS=("$SRC/fan.bin")
        DEST=(--as fan.bin)
fi
PEERS=("$BETA_ADDR" "$GAMMA_ADDR" "$DELTA_ADDR")

# forwarded NODE: RDMAXFER_FORWARDED_BYTES of NODE's latest send, a relay's
# (what it sent straight from its receive ring, rdmaxferd(8)).
forwarded() {
        journalctl -u "$(node_unit "$1")" --no-pager -o export RDMAXFER_DIRECTION=send 2>/dev/null |
                tr -d '\000' | sed -n 's/^RDMAXFER_FORWARDED_BYTES=//p' | tail -n 1
}

# relay_cpu: CPU nanoseconds beta's and gamma's daemons have used (their
# units' CPUUsageNSec; 0 where systemd does not account it).
relay_cpu() {
        local n v sum=0
        for n in beta gamma; do
                v=$(systemctl show -p CPUUsageNSec --value "$(node_unit "$n")")
                [[ $v =~ ^[0-9]+$ ]] && sum=$((sum + v))
        done
        echo "$sum"
}

# deliver LINK ROUND METRIC NODES PARALLEL: time one xferctl send of
# fan.bin to NODES (comma list; PARALLEL "chain": as a chain), check every
# copy, record the seconds.
deliver() {
        local link=$1 round=$2 metric=$3 nodes=$4 par=$5 t0 t1 out n ok=1 cpu0 cpu1
        cpu0=$(relay_cpu)
        t0=$(now)
        if [[ $par == chain ]]; then
                out=$(xferctl send "${SRCS[@]}" "$nodes" "${DEST[@]}" 2>&1) || ok=0
        else
                out=$(xferctl send "${SRCS[@]}" "$nodes" "${DEST[@]}" --parallel "$par" 2>&1) || ok=0
        fi
        t1=$(now)
        cpu1=$(relay_cpu)
        for n in beta gamma delta; do
                if ((TREE > 0)) && [[ -e $(node_in "$n")/fantree ]]; then
                        diff -r -q "$SRC/fantree" "$(node_in "$n")/fantree" >/dev/null || ok=0
                        rm -rf "$(node_in "$n")/fantree"
                elif [[ -e $(node_in "$n")/fan.bin ]]; then
                        cmp -s "$SRC/fan.bin" "$(node_in "$n")/fan.bin" || ok=0
                        rm -f "$(node_in "$n")/fan.bin"
                fi
        done
        if ((ok)); then
                printf '%s\t%s\t%s\t%s\n' "$link" "$metric" "$round" "$(secs "$t0" "$t1")" >>"$RES"
                tb_log "$link round $round: $metric: $(secs "$t0" "$t1") s"
                if [[ $par == chain ]]; then
                        tb_log "$link round $round: sent straight from the receive ring:" \
                                "beta $(forwarded beta), gamma $(forwarded gamma) of $((MB << 20)) bytes;" \
                                "CPU of beta's and gamma's daemons: $(awk -v a="$cpu0" -v b="$cpu1" \
                                        'BEGIN { printf "%.2f", (b - a) / 1e9 }') s"
                fi
        else
                printf '%s\t%s\t%s\tfail\n' "$link" "$metric" "$round" >>"$RES"
                tb_log "$link round $round: $metric FAILED: $out"
        fi
}

for link in capped uncapped; do
        if [[ $link == capped ]]; then
                [[ $CAP == none ]] && continue
                link_cap "$CAP" alpha beta gamma delta
        fi
        for ((r = 1; r <= REPS; r++)); do
                deliver "$link" "$r" one "$BETA_ADDR" 1
                deliver "$link" "$r" sequential "$(IFS=,; echo "${PEERS[*]}")" 1
                deliver "$link" "$r" parallel "$(IFS=,; echo "${PEERS[*]}")" 3
                deliver "$link" "$r" chain "$(IFS=,; echo "${PEERS[*]}")" chain
        done
        if [[ $link == capped ]]; then
                link_uncap alpha beta gamma delta
        fi
done
rm -rf "$SRC/fan.bin" "$SRC/fantree"
tb_log "pass"
