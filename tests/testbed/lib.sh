# shellcheck shell=bash
# Helpers for testbed scenario scripts, sourced inside the guest:
#   . "${TESTBED_LIB:?run me with tests/testbed/testbed run}"
# The runner exports ALPHA_ADDR, BETA_ADDR, ALPHA_DEV, BETA_DEV, ALPHA_NETDEV,
# BETA_NETDEV and TESTBED_SHARE (writable; its contents come back to the host).
# A scenario exits 0 to pass, 77 to skip (tb_skip), anything else to fail.

set -euo pipefail

# Config files, units and control sockets of the two peers, for scenarios.
ALPHA_CONF=/etc/rdmaxferd/rdmaxferd.conf
BETA_CONF=/etc/rdmaxferd/beta.conf
# shellcheck disable=SC2034
ALPHA_UNIT=rdmaxferd.service
# shellcheck disable=SC2034
BETA_UNIT=rdmaxferd@beta.service
ALPHA_SOCK=/run/rdmaxferd/control.sock
BETA_SOCK=/run/rdmaxferd-beta/control.sock

_tb_t0=$(cut -d' ' -f1 /proc/uptime)

# tb_log MESSAGE...: a timestamped line (seconds since the script started).
tb_log() {
        printf '[%6.1f] %s\n' "$(awk -v a="$_tb_t0" '{print $1 - a}' /proc/uptime)" "$*"
}

# tb_fail MESSAGE...: fail the scenario.
tb_fail() {
        tb_log "FAIL: $*" >&2
        exit 1
}

# tb_skip REASON...: skip the scenario; REASON shows in the TAP line.
tb_skip() {
        tb_log "SKIP: $*"
        [[ -n ${TB_SKIP_FILE:-} ]] && printf '%s\n' "$*" >"$TB_SKIP_FILE"
        exit 77
}

# tb_run COMMAND...: log the command, then run it.
tb_run() {
        tb_log "+ $*"
        "$@"
}

# wait_for TIMEOUT_SECONDS COMMAND...: poll COMMAND every 0.2 s until it
# succeeds. Returns 1 (after saying what it waited for) on timeout.
wait_for() {
        local timeout=$1 deadline now
        shift
        deadline=$(awk -v t="$timeout" '{print $1 + t}' /proc/uptime)
        while ! "$@" >/dev/null 2>&1; do
                now=$(cut -d' ' -f1 /proc/uptime)
                if awk -v n="$now" -v d="$deadline" 'BEGIN { exit !(n >= d) }'; then
                        tb_log "timed out after ${timeout}s waiting for: $*" >&2
                        return 1
                fi
                sleep 0.2
        done
}

# _tb_write_conf FILE LISTEN INCOMING SOCKET [key=value...]
# partial_dir is INCOMING's sibling "partial", each peer its own.
_tb_write_conf() {
        local file=$1 listen=$2 incoming=$3 socket=$4 kv
        shift 4
        mkdir -p "$(dirname "$file")"
        {
                echo "# written by the testbed's peers_configure"
                echo "listen = $listen"
                echo "incoming_dir = $incoming"
                echo "partial_dir = $(dirname "$incoming")/partial"
                echo "control_socket = $socket"
                for kv in "$@"; do
                        [[ $kv == *=* ]] || tb_fail "peers_configure: '$kv' is not key=value"
                        echo "${kv%%=*} = ${kv#*=}"
                done
        } >"$file"
}

# peers_configure [key=value...]: write the config of alpha (rdmaxferd.service,
# $ALPHA_CONF) and beta (rdmaxferd@beta.service, $BETA_CONF). Each listens on
# its own endpoint; every other key keeps its default unless given here (the
# extra keys go to both files).
peers_configure() {
        _tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" /var/lib/rdmaxferd/incoming "$ALPHA_SOCK" "$@"
        _tb_write_conf "$BETA_CONF" "$BETA_ADDR" /var/lib/rdmaxferd-beta/incoming "$BETA_SOCK" "$@"
}

# rdma_active DEV: is port 1 of DEV ACTIVE?
rdma_active() {
        [[ $(rdma link show "$1/1" 2>/dev/null) == *"state ACTIVE"* ]]
}

# netdev_bytes NETDEV rx|tx: byte counter of a network device.
netdev_bytes() {
        cat "/sys/class/net/$1/statistics/$2_bytes"
}

# rdma_listening PORT: does an RDMA CM id listen on PORT?
rdma_listening() {
        rdma resource show cm_id 2>/dev/null | grep -E "state LISTEN .*src-addr [^ ]*:$1( |\$)" >/dev/null
}

# link_restore: both veth ends up again with the routes and neighbours a
# link-down took (guest/rdma-setup.sh's), as networkd would put them back.
link_restore() {
        tb_run ip link set "$BETA_NETDEV" up
        ip link set "$ALPHA_NETDEV" up
        ip route replace "$ALPHA_ADDR" dev "$BETA_NETDEV" src "$BETA_ADDR" table 101
        ip route replace "$BETA_ADDR" dev "$ALPHA_NETDEV" src "$ALPHA_ADDR" table 102
        ip neigh replace "$BETA_ADDR" lladdr "$(cat "/sys/class/net/$BETA_NETDEV/address")" \
                dev "$ALPHA_NETDEV" nud permanent
        ip neigh replace "$ALPHA_ADDR" lladdr "$(cat "/sys/class/net/$ALPHA_NETDEV/address")" \
                dev "$BETA_NETDEV" nud permanent
}
