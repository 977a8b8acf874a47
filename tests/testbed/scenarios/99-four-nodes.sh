#!/bin/bash
# Four nodes, each with its own NIC, rxe device and rdmaxferd, on one switch
# (lib.sh: nodes_up; the fan-out's testbed, issue 13). A file goes hop by
# hop along alpha -> beta -> gamma -> delta, each node sending what it
# received, and arrives identical. Then gamma's link is capped at 15 MB/s
# (link_cap: tc tbf, both directions): a 30 MiB transfer into gamma and one
# out of it each run at the cap (+-20 %, as the sender measures it: bytes
# over the job's time), and with the cap lifted the same transfer is faster
# than the cap allows (so the cap, not the CPU, held the others).
#
# Small rings (16 MiB to receive, 8 MiB to send per daemon) so that four
# daemons start fast and pin 96 MiB between them; 8 slots of credit per
# transfer still keep a 15 MB/s link busy.
# testbed-timeout: 240
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

MIB=$((1024 * 1024))
CAP=15000000            # bytes/s: 15 MB/s, 120 Mbit/s
CAP_TC=120mbit

# rate BYTES USEC: bytes per second, whole.
rate() { awk -v b="$1" -v u="$2" 'BEGIN { printf "%d", (u > 0 ? b * 1e6 / u : 0) }'; }
mbps() { awk -v r="$1" 'BEGIN { printf "%.1f", r / 1e6 }'; }

# send_from FROM TO FILE NAME: FROM's daemon sends FILE to TO as NAME, which
# must arrive identical; prints "BYTES USEC" (the sender's job).
send_from() {
        local from=$1 to=$2 file=$3 name=$4 json bytes usec
        json=$(xferctl --socket "$(node_sock "$from")" send --json "$file" "$(node_addr "$to")" \
                --as "$name") || tb_fail "$from -> $to: xferctl send $file failed: $json"
        bytes=$(job_field "$json" bytes)
        usec=$(job_field "$json" usec)
        [[ $(job_field "$json" state) == done ]] || tb_fail "$from -> $to: job not done: $json"
        same_file "$file" "$(node_in "$to")/$name"
        tb_log "$from -> $to: $name, $bytes bytes in $usec usec: $(mbps "$(rate "$bytes" "$usec")") MB/s" >&2
        echo "$bytes $usec"
}

nodes_up slot_count=16 send_slots=4 max_transfers=2
for n in alpha beta gamma delta; do
        tb_log "$n: $(node_addr "$n") on tb-$n, rxe_$n, $(node_unit "$n") $(rdma_active "rxe_$n" && echo ACTIVE)"
done

# The chain, one hop at a time: each node forwards its own received copy.
make_file "$SRC/hop.dat" $((8 * MIB))
send_from alpha beta "$SRC/hop.dat" hop.dat >/dev/null
send_from beta gamma "$(node_in beta)/hop.dat" hop.dat >/dev/null
send_from gamma delta "$(node_in gamma)/hop.dat" hop.dat >/dev/null
same_file "$SRC/hop.dat" "$(node_in delta)/hop.dat"
tb_log "alpha -> beta -> gamma -> delta: 8 MiB arrived identical at each hop"

# The cap, both ways: into gamma (tbf on the bridge's port tb-gamma-p), then
# out of it (tbf on tb-gamma).
make_file "$SRC/capped.dat" $((30 * MIB))
link_cap gamma "$CAP_TC"
lo=$((CAP * 8 / 10)) hi=$((CAP * 12 / 10))
for way in "beta gamma in" "gamma delta out"; do
        read -r from to dir <<<"$way"
        r=$(send_from "$from" "$to" "$SRC/capped.dat" "capped-$dir.dat")
        read -r bytes usec <<<"$r"
        got=$(rate "$bytes" "$usec")
        tb_log "capped, $dir of gamma: $bytes bytes in $usec usec = $(mbps "$got") MB/s" \
                "(cap $(mbps "$CAP") MB/s, allowed $(mbps "$lo")..$(mbps "$hi"))"
        echo "capped-$dir $bytes $usec $got" >>"$TESTBED_SHARE/rates.txt"
        link_stats gamma
        ((got >= lo && got <= hi)) || tb_fail "capped $dir of gamma: $got bytes/s, not within 20 % of $CAP"
done

link_uncap gamma
r=$(send_from beta gamma "$SRC/capped.dat" uncapped.dat)
read -r bytes usec <<<"$r"
got=$(rate "$bytes" "$usec")
tb_log "uncapped, into gamma: $bytes bytes in $usec usec = $(mbps "$got") MB/s"
echo "uncapped-in $bytes $usec $got" >>"$TESTBED_SHARE/rates.txt"
((got > hi)) || tb_fail "without the cap the transfer ran at $got bytes/s, no faster than the cap allows:" \
        "the CPU, not the cap, may have held the capped ones"
