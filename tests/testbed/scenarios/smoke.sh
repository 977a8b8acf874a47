#!/bin/bash
# Smoke test of the testbed itself: both SoftRoCE endpoints are ACTIVE, and
# perftest moves real RDMA traffic from alpha to beta across the veth pair.
# testbed-timeout: 300
# shellcheck source=tests/testbed/lib.sh
. "${TESTBED_LIB:?run me with tests/testbed/testbed run}"

SIZE=1048576            # bytes per message
ITERS=64                # 64 MiB per test: a few seconds under TCG

tb_log "RDMA links:"
rdma link show
rdma_active "$ALPHA_DEV" || tb_fail "$ALPHA_DEV is not ACTIVE"
rdma_active "$BETA_DEV" || tb_fail "$BETA_DEV is not ACTIVE"
ibv_devices
for dev in "$ALPHA_DEV" "$BETA_DEV"; do
        ibv_devices | grep -qw "$dev" || tb_fail "ibv_devices does not list $dev"
        ibv_devinfo -d "$dev" | grep -E '^hca_id|state:|active_mtu'
done

# perf TOOL PORT: run TOOL's server on beta and its client on alpha, both
# through rdma_cm (-R); check the bytes really crossed tb-alpha -> tb-beta.
perf() {
        local tool=$1 port=$2 server tx0 tx1 rx0 rx1 min line
        local common=(-R -p "$port" -s "$SIZE" -n "$ITERS" -F)
        tx0=$(netdev_bytes "$ALPHA_NETDEV" tx)
        rx0=$(netdev_bytes "$BETA_NETDEV" rx)
        tb_log "$tool: server on $BETA_DEV ($BETA_ADDR), client on $ALPHA_DEV ($ALPHA_ADDR)"
        "$tool" "${common[@]}" -d "$BETA_DEV" --source_ip "$BETA_ADDR" \
                >"$TESTBED_SHARE/$tool-server.txt" 2>&1 &
        server=$!
        wait_for 30 rdma_listening "$port" || { cat "$TESTBED_SHARE/$tool-server.txt"; tb_fail "$tool server did not listen"; }
        "$tool" "${common[@]}" -d "$ALPHA_DEV" --source_ip "$ALPHA_ADDR" "$BETA_ADDR" \
                | tee "$TESTBED_SHARE/$tool-client.txt" \
                || { cat "$TESTBED_SHARE/$tool-server.txt"; tb_fail "$tool client failed"; }
        wait "$server" || { cat "$TESTBED_SHARE/$tool-server.txt"; tb_fail "$tool server failed"; }
        tx1=$(netdev_bytes "$ALPHA_NETDEV" tx)
        rx1=$(netdev_bytes "$BETA_NETDEV" rx)
        min=$((SIZE * ITERS))
        tb_log "$tool: $((tx1 - tx0)) bytes sent on $ALPHA_NETDEV, $((rx1 - rx0)) received on $BETA_NETDEV"
        ((tx1 - tx0 >= min && rx1 - rx0 >= min)) || tb_fail "$tool: traffic did not cross the veth pair"
        # "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]"
        line=$(awk -v s="$SIZE" '$1 == s && NF >= 4 { print; exit }' "$TESTBED_SHARE/$tool-client.txt")
        [[ -n $line ]] || tb_fail "$tool: no result line"
        read -r _ _ _ avg _ <<<"$line"
        echo "$tool -R ${SIZE}B x $ITERS alpha->beta: BW average $avg MB/sec (perftest MB = 2^20 bytes)" \
                | tee -a "$TESTBED_SHARE/smoke-results.txt"
}

perf ib_send_bw 18515
perf ib_write_bw 18516
tb_log "smoke: OK"
