#!/bin/bash
# The benchmark, inside the testbed guest (tests/bench/bench runs it). Every
# figure comes from this one guest run, so the ratios compare like with like.
# Rates are MB/s = 10^6 bytes/s; perftest's own "MB/sec" is 2^20 bytes/s and
# is converted.
#
# The tools are interleaved: each repetition ("round") runs every tool once,
# in an order rotated by one place per round, so a change in the host's load
# during the run falls on all of them alike, and report pairs the samples of
# one round to compute per-round ratios.
# testbed-timeout: 7200
. "${TESTBED_LIB:?run me with tests/bench/bench}"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

for a in "$@"; do
        [[ $a == BENCH_*=* ]] && export "${a?}"
done
REPS=${BENCH_REPS:-5}
SIZE_MB=${BENCH_SIZE_MB:-1024}          # the main file, MiB
BIG_MB=${BENCH_BIG_MB:-4096}            # RSS check with a larger file; 0 skips
SWEEP=${BENCH_SWEEP:-1}
SLOT=1048576                            # the daemon's default slot_size
DEPTH=16                                # slot_count / max_transfers by default
LANES=4                                 # the daemon's default lanes
OUT=$TESTBED_SHARE/bench
mkdir -p "$OUT"
RES=$OUT/results.tsv
: >"$RES"
ROUND=0

now() { date +%s.%N; }
# record METRIC VALUE: one sample, tagged with the current round.
record() { printf '%s\t%s\t%s\n' "$1" "$2" "$ROUND" >>"$RES"; }
# rate BYTES T0 T1: MB/s
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", n / (b - a) / 1e6 }'; }

# Page cache to page cache, for every tool alike: receivers write into
# tmpfs, so the figures compare network paths, not the emulated disk.
SINK=/var/tmp/sink
mkdir -p "$SINK" "$BETA_IN"
mount -t tmpfs -o size=90% tmpfs "$SINK"
mount -t tmpfs -o size=90%,mode=0750 tmpfs "$BETA_IN"
chown rdmaxfer:rdmaxfer "$BETA_IN"

FILE=$SRC/bench.bin
tb_log "creating $FILE ($SIZE_MB MiB)"
head -c $((SIZE_MB * 1024 * 1024)) /dev/urandom >"$FILE"
BYTES=$(stat -c %s "$FILE")
cat "$FILE" >/dev/null          # page cache -> page cache
quarter=$((SIZE_MB / 4))
for j in 1 2 3 4; do
        head -c $((quarter * 1024 * 1024)) "$FILE" >"$SRC/q$j.bin"
done
make_file "$SRC/one.bin" 1

# The daemons idle (blocked in epoll) while the other tools run.
peers_configure
start_peers
a_pid=$(systemctl show -P MainPID "$ALPHA_UNIT")
b_pid=$(systemctl show -P MainPID "$BETA_UNIT")
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)
# registered_mib UNIT: receive ring + send pool, from the daemon's start-up line.
registered_mib() {
        journalctl -b -u "$1" --no-pager -o cat | grep 'receive ring' | tail -n 1 |
                sed -n 's/.*(\([0-9]*\) MiB).*(\([0-9]*\) MiB).*/\1 \2/p' | awk '{ print $1 + $2 }'
}

# ---- 1. perftest at the daemon's message size and depth ----------------------
# perftest TOOL PORT [-e]: -e sleeps on completion events (as rdmaxferd
# does) instead of busy-polling, which on two emulated CPUs starves rxe.
perftest() {
        local tool=$1 port=$2 iters line avg tag
        shift 2
        tag=$tool$(printf '%s' "$@" | tr -d ' ')
        iters=$((SIZE_MB < 512 ? SIZE_MB : 512))
        "$tool" -R -p "$port" -s "$SLOT" -n "$iters" -t "$DEPTH" -F "$@" -d "$BETA_DEV" \
                --source_ip "$BETA_ADDR" >"$OUT/$tag-server.txt" 2>&1 &
        local server=$!
        wait_for 30 rdma_listening "$port" || tb_fail "$tool server did not listen"
        "$tool" -R -p "$port" -s "$SLOT" -n "$iters" -t "$DEPTH" -F "$@" -d "$ALPHA_DEV" \
                --source_ip "$ALPHA_ADDR" "$BETA_ADDR" >"$OUT/$tag-client.txt" 2>&1 ||
                { cat "$OUT/$tag-client.txt"; tb_fail "$tool failed"; }
        wait "$server" || true
        line=$(awk -v s="$SLOT" '$1 == s && NF >= 4 { print; exit }' "$OUT/$tag-client.txt")
        read -r _ _ _ avg _ <<<"$line"
        [[ -n $avg ]] || tb_fail "$tool: no result"
        # perftest now and then reports 0.00 for a run that moved data:
        # a lost sample, not a figure.
        awk -v a="$avg" 'BEGIN { if (a > 0) printf "%.1f", a * 1048576 / 1e6; else printf "fail" }'
}
run_ib_send_bw() { record ib_send_bw "$(perftest ib_send_bw 18515)"; }
run_ib_send_bw_e() { record ib_send_bw_e "$(perftest ib_send_bw 18517 -e)"; }
run_ib_write_bw() { record ib_write_bw "$(perftest ib_write_bw 18516)"; }
# Four queue pairs: SoftRoCE serialises each QP, so this is the limit that
# several transfers at once (or one striped transfer) can approach.
run_ib_send_bw_e_q4() { record ib_send_bw_e_q4 "$(perftest ib_send_bw 18518 -e -q 4)"; }

# ---- 2. xferctl, 1 GiB ---------------------------------------------------------
run_xferctl() {
        local name=bench-$ROUND.bin line t0 t1 ca0 cb0 ca1 cb1
        ca0=$(cpu_ticks "$a_pid") cb0=$(cpu_ticks "$b_pid")
        t0=$(now)
        line=$(send_ok "$FILE" --as "$name")
        t1=$(now)
        ca1=$(cpu_ticks "$a_pid") cb1=$(cpu_ticks "$b_pid")
        tb_log "$line"
        same_file "$FILE" "$BETA_IN/$name"
        record xferctl "$(sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' <<<"$line")"
        record journal_recv "$(jfield "$BETA_UNIT" "$name" RDMAXFER_MBPS)"
        record xferctl_wall_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
        record xferctl_wall "$(rate "$BYTES" "$t0" "$t1")"
        record cpu_s_per_gib_send "$(awk -v t=$((ca1 - ca0)) -v h="$hz" -v n="$BYTES" 'BEGIN { printf "%.2f", t / h / (n / 2^30) }')"
        record cpu_s_per_gib_recv "$(awk -v t=$((cb1 - cb0)) -v h="$hz" -v n="$BYTES" 'BEGIN { printf "%.2f", t / h / (n / 2^30) }')"
        rm -f "$BETA_IN/$name"
}

# set_lanes N: both daemons' lanes, by reload (same processes, so CPU and
# RSS figures keep accumulating on the same PIDs).
set_lanes() {
        sed -i '/^lanes *=/d' "$ALPHA_CONF" "$BETA_CONF"
        echo "lanes = $1" | tee -a "$ALPHA_CONF" >>"$BETA_CONF"
        systemctl reload "$ALPHA_UNIT" "$BETA_UNIT" || tb_fail "reload for lanes = $1 failed"
}

# ---- 2b. xferctl over one queue pair (lanes = 1), same file --------------------
run_xferctl_1lane() {
        local name=bench1-$ROUND.bin line ca0 cb0 ca1 cb1
        set_lanes 1
        ca0=$(cpu_ticks "$a_pid") cb0=$(cpu_ticks "$b_pid")
        line=$(send_ok "$FILE" --as "$name")
        ca1=$(cpu_ticks "$a_pid") cb1=$(cpu_ticks "$b_pid")
        set_lanes "$LANES"
        tb_log "1 lane: $line"
        same_file "$FILE" "$BETA_IN/$name"
        record xferctl_1lane "$(sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' <<<"$line")"
        record cpu_s_per_gib_send_1lane "$(awk -v t=$((ca1 - ca0)) -v h="$hz" -v n="$BYTES" 'BEGIN { printf "%.2f", t / h / (n / 2^30) }')"
        record cpu_s_per_gib_recv_1lane "$(awk -v t=$((cb1 - cb0)) -v h="$hz" -v n="$BYTES" 'BEGIN { printf "%.2f", t / h / (n / 2^30) }')"
        rm -f "$BETA_IN/$name"
}

# ---- 7. set-up: xferctl send of 1 byte, wall time -----------------------------
run_setup() {
        local k t0 t1
        for k in 1 2; do
                t0=$(now)
                send_ok "$SRC/one.bin" --as "one-$ROUND-$k.bin" >/dev/null
                t1=$(now)
                record setup_ms "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')"
                rm -f "$BETA_IN/one-$ROUND-$k.bin"
        done
}

# ---- 5. four concurrent transfers ---------------------------------------------
run_aggregate4() {
        local pids=() p j t0 t1
        t0=$(now)
        for j in 1 2 3 4; do
                xferctl send "$SRC/q$j.bin" "$BETA_ADDR" --as "q$ROUND-$j.bin" >/dev/null 2>&1 &
                pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p" || tb_fail "concurrent transfer failed"; done
        t1=$(now)
        record aggregate4 "$(rate $((4 * quarter * 1048576)) "$t0" "$t1")"
        rm -f "$BETA_IN"/q$ROUND-*.bin
}

# ---- 3. rcopy (rsockets) ---------------------------------------------------------
run_rcopy() {
        local server t0 t1
        (cd "$SINK" && exec rcopy -p 7427) >"$OUT/rcopy-server.txt" 2>&1 &
        server=$!
        wait_for 30 rdma_listening 7427 || tb_fail "rcopy server did not listen"
        t0=$(now)
        rcopy "$FILE" "$BETA_ADDR:$SINK/out.bin" -p 7427 >"$OUT/rcopy-client.txt" 2>&1 ||
                { cat "$OUT/rcopy-client.txt"; tb_fail "rcopy failed"; }
        t1=$(now)
        kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true
        same_file "$FILE" "$SINK/out.bin"
        record rcopy "$(rate "$BYTES" "$t0" "$t1")"
        rm -f "$SINK/out.bin"
}

# ---- 4. plain TCP over the same veth ------------------------------------------
run_tcp() {
        local server t0 t1
        nc -l "$BETA_ADDR" 7428 >$SINK/tcp.bin &
        server=$!
        wait_for 10 tcp_listening 7428 || tb_fail "nc did not listen"
        t0=$(now)
        nc -N -s "$ALPHA_ADDR" "$BETA_ADDR" 7428 <"$FILE" || tb_fail "nc failed"
        wait "$server"
        t1=$(now)
        same_file "$FILE" $SINK/tcp.bin
        record tcp "$(rate "$BYTES" "$t0" "$t1")"
        rm -f $SINK/tcp.bin
}
tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }

# ---- the rounds ------------------------------------------------------------------
tools=(ib_send_bw ib_send_bw_e ib_write_bw ib_send_bw_e_q4 xferctl xferctl_1lane rcopy tcp aggregate4 setup)
for ((ROUND = 1; ROUND <= REPS; ROUND++)); do
        n=${#tools[@]}
        order=()
        for ((k = 0; k < n; k++)); do
                order+=("${tools[(k + ROUND - 1) % n]}")
        done
        tb_log "round $ROUND of $REPS: ${order[*]}"
        for t in "${order[@]}"; do
                "run_$t"
        done
done
ROUND=0
record registered_mib_send "$(registered_mib "$ALPHA_UNIT")"
record registered_mib_recv "$(registered_mib "$BETA_UNIT")"
record rss_mib_send "$(awk -v k="$(hwm_kb "$a_pid")" 'BEGIN { printf "%.1f", k / 1024 }')"
record rss_mib_recv "$(awk -v k="$(hwm_kb "$b_pid")" 'BEGIN { printf "%.1f", k / 1024 }')"
rm -f "$SRC"/q*.bin

# ---- 6b. RSS with a larger file: fresh daemons, one transfer -------------------
if ((BIG_MB > 0)); then
        fallocate -l $((BIG_MB * 1024 * 1024)) "$SRC/big.bin"
        systemctl restart "$ALPHA_UNIT" "$BETA_UNIT"
        a_pid=$(systemctl show -P MainPID "$ALPHA_UNIT")
        b_pid=$(systemctl show -P MainPID "$BETA_UNIT")
        send_ok "$SRC/big.bin" >/dev/null
        [[ $(stat -c %s "$BETA_IN/big.bin") == $((BIG_MB * 1024 * 1024)) ]] || tb_fail "big.bin: wrong size"
        record big_mib "$BIG_MB"
        record rss_big_mib_send "$(awk -v k="$(hwm_kb "$a_pid")" 'BEGIN { printf "%.1f", k / 1024 }')"
        record rss_big_mib_recv "$(awk -v k="$(hwm_kb "$b_pid")" 'BEGIN { printf "%.1f", k / 1024 }')"
        rm -f "$BETA_IN/big.bin" "$SRC/big.bin"
fi
stop_peers

# ---- sweep: slot size x depth (one lane), and lanes, 256 MiB each ------------
if ((SWEEP)); then
        head -c $((256 * 1024 * 1024)) "$FILE" >"$SRC/sweep.bin"
        for lanes in 1 2 4 8; do
                peers_configure lanes=$lanes
                systemctl restart "$ALPHA_UNIT" "$BETA_UNIT" || { record "lanes_$lanes" fail; continue; }
                line=$(send_ok "$SRC/sweep.bin" --as "lanes-$lanes.bin")
                record "lanes_$lanes" "$(sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' <<<"$line")"
                rm -f "$BETA_IN/lanes-$lanes.bin"
        done
        for slot in 64K 256K 1M 4M; do
                for depth in 4 16 64; do
                        # One transfer on one queue pair: the whole ring is its depth.
                        peers_configure slot_size=$slot slot_count=$depth max_transfers=1 send_slots=$depth lanes=1
                        systemctl restart "$ALPHA_UNIT" "$BETA_UNIT" || { record "sweep_${slot}_x$depth" fail; continue; }
                        line=$(send_ok "$SRC/sweep.bin" --as "sweep-$slot-$depth.bin")
                        record "sweep_${slot}_x$depth" "$(sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' <<<"$line")"
                        rm -f "$BETA_IN/sweep-$slot-$depth.bin"
                done
        done
        stop_peers
fi
tb_log "benchmark done: $RES"
