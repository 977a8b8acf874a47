#!/bin/bash
# A second rail for alpha and beta, on demand (lib.sh: rails_up):
#   rails.sh up     tb-alpha2 198.18.1.1/24 <-> tb-beta2 198.18.1.2/24, a
#                   veth pair beside the default one (guest/rdma-setup.sh),
#                   with rxe devices rxe_alpha2 and rxe_beta2
#   rails.sh down   remove it (the daemons must have let go of the devices)
# As for the pair, both ends stay in the initial namespace (rxe's UDP
# socket only lives there) and policy routing sends what each end
# originates to the other out of its own veth, consulted before the local
# table (rdma-setup.sh moved that to preference 100). The runner takes the
# rail down after the scenario (its reset_state).
set -euo pipefail

A=198.18.1.1 B=198.18.1.2 NA=tb-alpha2 NB=tb-beta2

rxe_del() {
        rdma link show "$1/1" >/dev/null 2>&1 || return 0
        timeout 60 rdma link del "$1"
}

down() {
        rxe_del rxe_alpha2
        rxe_del rxe_beta2
        ip link del "$NA" 2>/dev/null || true
        ip rule del pref 12 2>/dev/null || true
        ip rule del pref 13 2>/dev/null || true
        ip route flush table 103 2>/dev/null || true
        ip route flush table 104 2>/dev/null || true
}

# The routes and neighbours a link that went down took with it.
routes() {
        {
                echo "route replace $B dev $NA src $A table 104"
                echo "route replace $A dev $NB src $B table 103"
                echo "neigh replace $B lladdr $(cat "/sys/class/net/$NB/address") dev $NA nud permanent"
                echo "neigh replace $A lladdr $(cat "/sys/class/net/$NA/address") dev $NB nud permanent"
        } | ip -batch -
}

up() {
        local rps q
        modprobe rdma_rxe
        down
        {
                echo "link add $NA mtu 9000 type veth peer name $NB mtu 9000"
                echo "addr add $A/24 dev $NA"
                echo "addr add $B/24 dev $NB"
                echo "link set $NA up"
                echo "link set $NB up"
                echo "rule add pref 12 iif lo to $B lookup 104"
                echo "rule add pref 13 iif lo to $A lookup 103"
        } | ip -batch -
        sysctl -qw "net.ipv4.conf.$NA.rp_filter=0" "net.ipv4.conf.$NB.rp_filter=0" \
                "net.ipv4.conf.$NA.accept_local=1" "net.ipv4.conf.$NB.accept_local=1"
        # One CPU per flow, as rdma-setup.sh does for the pair.
        rps=$(printf '%x' $(((1 << $(nproc)) - 1)))
        for q in /sys/class/net/"$NA"/queues/rx-* /sys/class/net/"$NB"/queues/rx-*; do
                echo "$rps" >"$q/rps_cpus"
        done
        routes
        rdma link add rxe_alpha2 type rxe netdev "$NA"
        rdma link add rxe_beta2 type rxe netdev "$NB"
        for _ in $(seq 300); do
                if [[ $(rdma link show rxe_alpha2/1) == *"state ACTIVE"* &&
                      $(rdma link show rxe_beta2/1) == *"state ACTIVE"* ]]; then
                        return 0
                fi
                sleep 0.1
        done
        rdma link show >&2
        echo "rails: rxe_alpha2 and rxe_beta2 not ACTIVE after 30 s" >&2
        exit 1
}

case ${1:-} in
up) up ;;
down) down ;;
routes) routes ;;
*) echo "usage: rails.sh up | down | routes" >&2; exit 2 ;;
esac
