#!/bin/bash
# Two SoftRoCE endpoints that really talk across a wire, inside one guest:
# a veth pair with both ends in the initial netns (rxe's UDP socket only
# lives there; rxe across two namespaces gets RDMA_CM_EVENT_UNREACHABLE), one
# rxe device per end, and policy routing so alpha->beta leaves by tb-alpha
# and arrives on tb-beta instead of short-cutting through the local table.
# Idempotent; the runner calls it at boot and between scenarios when an
# endpoint is gone. Uses ALPHA_/BETA_ ADDR, DEV and NETDEV from the runner.
set -euxo pipefail

a=$ALPHA_ADDR b=$BETA_ADDR na=$ALPHA_NETDEV nb=$BETA_NETDEV

modprobe rdma_rxe
rdma link del "$ALPHA_DEV" 2>/dev/null || true
rdma link del "$BETA_DEV" 2>/dev/null || true
ip link del "$na" 2>/dev/null || true
ip link add "$na" type veth peer name "$nb"
# MTU 9000 gives rxe an active MTU of 4096 and about twice the throughput.
ip link set "$na" mtu 9000
ip link set "$nb" mtu 9000
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
        net.ipv4.conf.all.accept_local=1
sysctl -qw "net.ipv4.conf.$na.rp_filter=0" "net.ipv4.conf.$nb.rp_filter=0" \
        "net.ipv4.conf.$na.accept_local=1" "net.ipv4.conf.$nb.accept_local=1"
ip addr add "$a/24" dev "$na"
ip addr add "$b/24" dev "$nb"
ip link set "$na" up
ip link set "$nb" up
# Each flow (rxe: one UDP source port per queue pair) to one CPU, as a real
# NIC's RSS does. Without it, a veth hands packets to the backlog of
# whichever CPU sent them, a queue pair's packets overtake each other, and
# rxe answers with go-back-N retransmissions and ACK timeouts (0.5 s each).
rps=$(printf '%x' $(((1 << $(nproc)) - 1)))
for q in /sys/class/net/"$na"/queues/rx-* /sys/class/net/"$nb"/queues/rx-*; do
        echo "$rps" >"$q/rps_cpus"
done

# Locally sent traffic to one endpoint goes out of the other one's veth end.
ip route replace "$b" dev "$na" src "$a" table 102
ip route replace "$a" dev "$nb" src "$b" table 101
ip rule del pref 10 2>/dev/null || true
ip rule del pref 11 2>/dev/null || true
ip rule add pref 10 iif lo to "$b" lookup 102
ip rule add pref 11 iif lo to "$a" lookup 101
# ...which needs the local table consulted after those rules, not first.
if ip rule show pref 0 | grep -q 'lookup local'; then
        ip rule add pref 100 lookup local
        ip rule del pref 0 lookup local
fi
ip neigh replace "$b" lladdr "$(cat "/sys/class/net/$nb/address")" dev "$na" nud permanent
ip neigh replace "$a" lladdr "$(cat "/sys/class/net/$na/address")" dev "$nb" nud permanent

rdma link add "$ALPHA_DEV" type rxe netdev "$na"
rdma link add "$BETA_DEV" type rxe netdev "$nb"
set +x
for _ in $(seq 300); do
        if [[ $(rdma link show "$ALPHA_DEV/1") == *"state ACTIVE"* &&
              $(rdma link show "$BETA_DEV/1") == *"state ACTIVE"* ]]; then
                rdma link show
                exit 0
        fi
        sleep 0.1
done
rdma link show
echo "rxe devices not ACTIVE after 30 s" >&2
exit 1
