#!/bin/bash
# A chain longer than one ROUTE message holds (wire.h, Relay chains,
# version 11): 35 nodes, 34 hops after the first, where one message
# carries 27. Nine daemons on each of the four fabric addresses (ports
# 7470 to 7478; alpha's 7470 is the origin), small rings so that 36 of
# them fit the guest. The rest of the route travels after the first
# node's accept; every relay passes on what is after it.
#   1. The chain delivers an identical file to all 35; alpha's send entry
#      counts 35 nodes, 35 published; the 28th and later nodes (named only
#      in the route's second part) are relayed to.
#   2. The 34th node stopped (its daemon down): the 33rd goes around it to
#      the 35th; 34 of 35 have the file, the 34th is named (a node past the
#      first 32: the hop set is wider than 32 bits), exit 23.
# testbed-timeout: 420
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

MIB=$((1024 * 1024))
KEYS=(slot_size=256K slot_count=8 send_slots=2 max_transfers=2 relay=yes)
EXTRA=()        # NAME:ADDR:PORT of the instances beyond the four nodes
NODES=()        # ADDR:PORT, in the chain's order

cleanup() {
        local e name units=() paths=()
        for e in "${EXTRA[@]}"; do
                name=${e%%:*}
                units+=("rdmaxferd@$name.service")
                paths+=("/etc/rdmaxferd/$name.conf" "/var/lib/rdmaxferd-$name")
        done
        ((${#units[@]})) || return 0
        # One systemctl for all 32: one at a time took seconds under TCG.
        systemctl stop "${units[@]}" 2>/dev/null || true
        rm -rf "${paths[@]}"
}
trap cleanup EXIT

nodes_up "${KEYS[@]}"

# The instances: NODE-PORT on NODE's address, its own state and socket.
units=()
for port in 7471 7472 7473 7474 7475 7476 7477 7478; do
        for n in alpha beta gamma delta; do
                name=$n$port
                _tb_write_conf "/etc/rdmaxferd/$name.conf" "$(node_addr "$n")" \
                        "/var/lib/rdmaxferd-$name/incoming" "/run/rdmaxferd-$name/control.sock" \
                        "port=$port" "${KEYS[@]}"
                EXTRA+=("$name:$(node_addr "$n"):$port")
                units+=("rdmaxferd@$name.service")
        done
done
tb_run systemctl start "${units[@]}" || tb_fail "starting ${#units[@]} more daemons failed"
tb_log "36 daemons up: four nodes with nine each"

# The chain: beta, gamma, delta on 7470, then port by port, addresses in turn.
NODES=("$BETA_ADDR:7470" "$GAMMA_ADDR:7470" "$DELTA_ADDR:7470")
for e in "${EXTRA[@]}"; do
        NODES+=("${e#*:}")
done
((${#NODES[@]} == 35)) || tb_fail "${#NODES[@]} nodes, not 35"
LIST=$(IFS=,; echo "${NODES[*]}")

# name_of ADDR:PORT: that daemon's instance name (beta, gamma7473, ...).
name_of() {
        local e
        case $1 in
        "$BETA_ADDR:7470") echo beta; return 0 ;;
        "$GAMMA_ADDR:7470") echo gamma; return 0 ;;
        "$DELTA_ADDR:7470") echo delta; return 0 ;;
        esac
        for e in "${EXTRA[@]}"; do
                if [[ ${e#*:} == "$1" ]]; then
                        echo "${e%%:*}"
                        return 0
                fi
        done
        tb_fail "no daemon at $1"
}

# in_of ADDR:PORT: that daemon's incoming directory.
in_of() {
        local name
        name=$(name_of "$1")
        echo "/var/lib/rdmaxferd-$name/incoming"
}

# chain FILE: send FILE to the 35; sets OUT and RC.
chain() {
        RC=0
        OUT=$(xferctl send --retries 0 "$1" "$LIST" 2>&1) || RC=$?
        sed 's/^/    | /' <<<"$OUT" | tail -n 12
}

# 1. The whole chain.
SINCE=$(date +%s)
make_file "$SRC/long.dat" $((2 * MIB))
chain "$SRC/long.dat"
((RC == 0)) || tb_fail "a chain of 35: exit $RC"
for a in "${NODES[@]}"; do
        same_file "$SRC/long.dat" "$(in_of "$a")/long.dat"
done
js=$(jobs_since "$ALPHA_UNIT" "@$SINCE" send)
nodes=$(sed -n 's/^RDMAXFER_NODES=//p' <<<"$js" | tail -n 1)
nodes_ok=$(sed -n 's/^RDMAXFER_NODES_OK=//p' <<<"$js" | tail -n 1)
[[ $nodes == 35 && $nodes_ok == 35 ]] || tb_fail "alpha's send entry: RDMAXFER_NODES '$nodes', _OK '$nodes_ok'"
# The 28th node is the first that only the route's second part named: the
# 27th relayed to it with the rest of the route, which it had whole.
n28=${NODES[27]}
u27=rdmaxferd@$(name_of "${NODES[26]}").service
journalctl -u "$u27" --no-pager -o cat --since "@$SINCE" | grep -q "relaying long\.dat to $n28 (7 hops after it)" ||
        tb_fail "the 27th node ($u27) did not relay to the 28th ($n28) with the 7 hops after it"
tb_log "35 nodes, one route over two ROUTE parts: every node has long.dat"

# 2. The 34th node down: the 33rd goes around it to the 35th.
n34=${NODES[33]}
u34=rdmaxferd@$(name_of "$n34").service
tb_run systemctl stop "$u34"
make_file "$SRC/around.dat" $((1 * MIB))
chain "$SRC/around.dat"
((RC == 23)) || tb_fail "a chain of 35 with the 34th down: exit $RC, not 23 (partial)"
for a in "${NODES[@]}"; do
        if [[ $a == "$n34" ]]; then
                [[ ! -e $(in_of "$a")/around.dat ]] || tb_fail "the stopped node has the file"
        else
                same_file "$SRC/around.dat" "$(in_of "$a")/around.dat"
        fi
done
grep -q "^xferctl: $n34: " <<<"$OUT" || tb_fail "the 34th node ($n34) is not named as failed"
tb_log "the 34th of 35 down: named, the 35th has the file from the 33rd, exit 23"
