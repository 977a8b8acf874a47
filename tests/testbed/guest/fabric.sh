#!/bin/bash
# More endpoints, on demand: a switch with one NIC per node.
#   fabric.sh up NODE...   alpha, beta and each NODE (gamma, delta) on the fabric
#   fabric.sh down         remove it all (then guest/rdma-setup.sh puts back
#                          the default alpha-beta veth pair)
#
# The bridge tb-fabric is the switch. Each node has a veth pair: tb-NODE
# (its NIC: the address, the rxe device rxe_NODE) and tb-NODE-p, a port of
# the bridge. rxe goes on the NIC end, never on a bridge port: a port hands
# what it receives to the bridge, and rxe's receive path looks for its
# device by the netdev a packet arrived on, which is then the bridge.
# Every NIC end stays in the initial namespace (rxe's UDP socket only lives
# there, as for the pair: guest/rdma-setup.sh), so the policy routing is the
# pair's, per source: a table per node that sends what it originates to
# each other node out of its own NIC, consulted before the local table.
# A link is then one veth: tc on tb-NODE shapes what the node sends, tc on
# tb-NODE-p what it receives (lib.sh: link_cap).
#
# alpha and beta keep their addresses, devices and netdev names, but move
# from their direct pair onto the fabric: the daemons must be stopped. The
# runner takes the fabric down after the scenario (its reset_state).
set -euo pipefail

BRIDGE=tb-fabric
# name -> address, policy-routing table and rule preference (< 100: the local table's).
declare -A ADDR=([alpha]=198.18.0.1 [beta]=198.18.0.2 [gamma]=198.18.0.3 [delta]=198.18.0.4)
declare -A TABLE=([alpha]=111 [beta]=112 [gamma]=113 [delta]=114)
declare -A PREF=([alpha]=21 [beta]=22 [gamma]=23 [delta]=24)
ALL=(alpha beta gamma delta)

log() { echo "fabric: $*"; }

rxe_del() {
        # Waits for every process to let go of the device: bounded.
        rdma link show "rxe_$1/1" >/dev/null 2>&1 || return 0
        timeout 60 rdma link del "rxe_$1"
}

down() {
        local n
        for n in "${ALL[@]}"; do
                rxe_del "$n"
                ip link del "tb-$n-p" 2>/dev/null || true
                ip rule del pref "${PREF[$n]}" 2>/dev/null || true
                ip route flush table "${TABLE[$n]}" 2>/dev/null || true
        done
        ip link del "$BRIDGE" 2>/dev/null || true
}

up() {
        local nodes=(alpha beta) sysctls n m q rps active t0=$SECONDS
        for n in "$@"; do
                [[ -n ${ADDR[$n]:-} ]] || { echo "fabric: no node '$n' (gamma, delta)" >&2; exit 2; }
                [[ $n == alpha || $n == beta ]] || nodes+=("$n")
        done
        if systemctl list-units --state=active --no-legend 'rdmaxferd*' | grep -q .; then
                echo "fabric: stop the daemons first (they hold the rxe devices)" >&2
                exit 1
        fi
        modprobe rdma_rxe
        modprobe bridge
        down
        # The default pair (guest/rdma-setup.sh): its rxe devices, veth and rules.
        rxe_del alpha
        rxe_del beta
        ip link del tb-alpha 2>/dev/null || true
        ip rule del pref 10 2>/dev/null || true
        ip rule del pref 11 2>/dev/null || true
        log "the pair removed after $((SECONDS - t0)) s"

        # No STP: ports forward at once. MTU 9000, as the pair: rxe runs 4096.
        # The ip commands go in batches, one process each: under TCG every
        # process costs about 0.1 s, and there are some 50.
        {
                echo "link add $BRIDGE mtu 9000 type bridge stp_state 0 forward_delay 0"
                echo "link set $BRIDGE up"
                for n in "${nodes[@]}"; do
                        echo "link add tb-$n mtu 9000 type veth peer name tb-$n-p mtu 9000"
                        echo "link set tb-$n-p master $BRIDGE"
                        echo "link set tb-$n-p up"
                done
        } | ip -batch -
        sysctls=()
        for n in "${nodes[@]}"; do
                sysctls+=("net.ipv4.conf.tb-$n.rp_filter=0" "net.ipv4.conf.tb-$n.accept_local=1")
        done
        sysctl -qw "${sysctls[@]}"
        for n in "${nodes[@]}"; do
                echo "addr add ${ADDR[$n]}/24 dev tb-$n"
                echo "link set tb-$n up"
        done | ip -batch -
        rps=$(printf '%x' $(((1 << $(nproc)) - 1)))
        for n in "${nodes[@]}"; do
                # One CPU per flow, as guest/rdma-setup.sh does for the pair.
                for q in /sys/class/net/tb-"$n"/queues/rx-* /sys/class/net/tb-"$n"-p/queues/rx-*; do
                        echo "$rps" >"$q/rps_cpus"
                done
        done
        declare -A mac
        for n in "${nodes[@]}"; do
                read -r "mac[$n]" <"/sys/class/net/tb-$n/address"
        done
        for n in "${nodes[@]}"; do
                echo "rule add pref ${PREF[$n]} iif lo from ${ADDR[$n]} lookup ${TABLE[$n]}"
                for m in "${nodes[@]}"; do
                        [[ $m == "$n" ]] && continue
                        echo "route replace ${ADDR[$m]} dev tb-$n src ${ADDR[$n]} table ${TABLE[$n]}"
                        echo "neigh replace ${ADDR[$m]} lladdr ${mac[$m]} dev tb-$n nud permanent"
                done
        done | ip -batch -
        log "links and routes after $((SECONDS - t0)) s"
        for n in "${nodes[@]}"; do
                rdma link add "rxe_$n" type rxe netdev "tb-$n"
        done
        log "rxe devices added after $((SECONDS - t0)) s"
        for _ in $(seq 300); do
                active=1
                for n in "${nodes[@]}"; do
                        [[ $(rdma link show "rxe_$n/1" 2>/dev/null) == *"state ACTIVE"* ]] || { active=0; break; }
                done
                if ((active)); then
                        log "${nodes[*]} ACTIVE on $BRIDGE after $((SECONDS - t0)) s"
                        return 0
                fi
                sleep 0.1
        done
        rdma link show >&2
        echo "fabric: rxe devices not ACTIVE after 30 s" >&2
        exit 1
}

case ${1:-} in
up) shift; up "$@" ;;
down) down ;;
*) echo "usage: fabric.sh up NODE... | down" >&2; exit 2 ;;
esac
