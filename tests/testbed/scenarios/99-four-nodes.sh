#!/bin/bash
# Four nodes, each with its own NIC, rxe device and rdmaxferd, on one switch
# (lib.sh: nodes_up; the fan-out's testbed, issue 13). A file goes hop by
# hop along alpha -> beta -> gamma -> delta, each node sending what it
# received, and arrives identical. Then gamma's link is capped at 15 MB/s
# (link_cap: tc tbf, both directions): a 30 MiB transfer into gamma and one
# out of it each run at the cap (+-20 %, as the sender measures it: bytes
# over the job's time), and with the cap lifted the same transfer is faster
# than the cap allows (so the cap, not the CPU, held the others). Last,
# one xferctl send to a NODELIST (alpha to the three others, as a Slurm
# hostlist; then with delta down: partial, exit 23). Last, peer names
# (issue 36): names whose /etc/hosts address is a management network's,
# mapped to the fabric's by alpha's peer_names = %h-ib.
#
# Small rings (16 MiB to receive, 8 MiB to send per daemon) so that four
# daemons start fast and pin 96 MiB between them; 8 slots of credit per
# transfer still keep a 15 MB/s link busy.
# testbed-timeout: 300
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
link_cap "$CAP_TC" gamma
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

# Fan-out from one sender (xferctl send FILE NODELIST): a Slurm hostlist
# of names (in /etc/hosts here, as on a cluster), two peers at a time;
# every peer gets the file, each line names its peer. Then delta's daemon
# is down: beta and gamma still get the next file, delta is named as
# failed, and the exit status is 23 (partial); --json has each peer's exit
# and job.
grep -q ' tbnode2$' /etc/hosts ||
        printf '%s tbnode2\n%s tbnode3\n%s tbnode4\n' "$BETA_ADDR" "$GAMMA_ADDR" "$DELTA_ADDR" >>/etc/hosts
make_file "$SRC/fan.dat" $((4 * MIB))
rc=0
out=$(xferctl send "$SRC/fan.dat" 'tbnode[2-4]' --parallel 2 2>&1) || rc=$?
sed 's/^/    | /' <<<"$out"
((rc == 0)) || tb_fail "fan-out to tbnode[2-4]: exit $rc"
for n in beta gamma delta; do
        same_file "$SRC/fan.dat" "$(node_in "$n")/fan.dat"
done
for h in tbnode2 tbnode3 tbnode4; do
        grep -q "^$h: sent fan.dat " <<<"$out" || tb_fail "no line of $h's send: $out"
done
[[ $(tail -n 1 <<<"$out") == "3 peers: every one sent" ]] || tb_fail "the last line is not the summary: $out"
tb_log "fan-out: fan.dat on beta, gamma and delta, one xferctl send"

tb_run systemctl stop "$(node_unit delta)"
make_file "$SRC/fan2.dat" $((2 * MIB))
rc=0
json=$(xferctl send --json --retries 0 --parallel 3 "$SRC/fan2.dat" "$BETA_ADDR,$GAMMA_ADDR,$DELTA_ADDR" \
        2>"$SRC/fan2.err") ||
        rc=$?
sed 's/^/    | /' "$SRC/fan2.err"
tb_log "fan-out with delta down: exit $rc: $json"
((rc == 23)) || tb_fail "fan-out with one peer down: exit $rc, not 23 (partial)"
same_file "$SRC/fan2.dat" "$(node_in beta)/fan2.dat"
same_file "$SRC/fan2.dat" "$(node_in gamma)/fan2.dat"
[[ ! -e $(node_in delta)/fan2.dat ]] || tb_fail "delta has fan2.dat though its daemon was down"
[[ $json == '{"peers":[{"peer":"'"$BETA_ADDR"'","exit":0,"job":{"id":'* ]] &&
        [[ $json == *'{"peer":"'"$DELTA_ADDR"'","exit":1,"job":{"id":'* ]] ||
        tb_fail "--json does not give each peer's exit and job: $json"
grep -q "^xferctl: $DELTA_ADDR: send fan2.dat to .* failed" "$SRC/fan2.err" ||
        tb_fail "delta's failure is not said, naming delta"
tb_run systemctl start "$(node_unit delta)"

# Peer names: mgmtN is the management network's name (192.0.2.0/24,
# TEST-NET-1: nothing answers there), mgmtN-ib the fabric's. peer_names =
# %h-ib in alpha's rdmaxferd.conf, applied by a reload, is what xferctl
# asks the daemon for: hosts --resolve shows the mapped names and
# addresses, and a send to 'mgmt[2-3]' (a star) reaches beta and gamma.
# --peer-names %h turns it off for one command.
grep -q ' mgmt2-ib$' /etc/hosts ||
        printf '%s mgmt2-ib\n%s mgmt3-ib\n192.0.2.2 mgmt2\n192.0.2.3 mgmt3\n' "$BETA_ADDR" "$GAMMA_ADDR" \
                >>/etc/hosts
echo 'peer_names = %h-ib' >>"$(node_conf alpha)"
reload_applied "$(node_unit alpha)" peer_names
out=$(xferctl hosts --resolve 'mgmt[2-3]' 2>&1) || tb_fail "xferctl hosts --resolve 'mgmt[2-3]': $out"
[[ $out == "mgmt2-ib $BETA_ADDR"$'\n'"mgmt3-ib $GAMMA_ADDR" ]] ||
        tb_fail "hosts --resolve did not map through rdmaxferd's peer_names = %h-ib: $out"
out=$(xferctl hosts --resolve --peer-names %h mgmt2 2>&1)
[[ $out == "mgmt2 192.0.2.2" ]] || tb_fail "--peer-names %h did not turn the mapping off: $out"
make_file "$SRC/names.dat" $((1 * MIB))
rc=0
out=$(xferctl send "$SRC/names.dat" 'mgmt[2-3]' --parallel 2 --retries 0 2>&1) || rc=$?
sed 's/^/    | /' <<<"$out"
((rc == 0)) || tb_fail "send to mgmt[2-3] through peer_names = %h-ib: exit $rc"
same_file "$SRC/names.dat" "$(node_in beta)/names.dat"
same_file "$SRC/names.dat" "$(node_in gamma)/names.dat"
grep -q "^mgmt2: sent names.dat " <<<"$out" || tb_fail "no line of mgmt2's send, by the name given: $out"
tb_log "peer names: mgmt[2-3] went to mgmt2-ib and mgmt3-ib (peer_names = %h-ib)"
tb_log "pass"
