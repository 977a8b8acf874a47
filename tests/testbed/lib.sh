# shellcheck shell=bash
# Helpers for testbed scenario scripts, sourced inside the guest:
#   . "${TESTBED_LIB:?run me with tests/testbed/testbed run}"
# The runner exports ALPHA_ADDR, BETA_ADDR, ALPHA_DEV, BETA_DEV, ALPHA_NETDEV,
# BETA_NETDEV and TESTBED_SHARE (writable; its contents come back to the host).
# A scenario exits 0 to pass, 77 to skip (tb_skip), anything else to fail.

set -euo pipefail
# A scenario that set -e ends names what failed, as tb_fail would: the
# command and its line (a failure inside a function ends it unnamed).
trap 'tb_log "FAIL: exit status $? of line $LINENO: $BASH_COMMAND" >&2' ERR

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

# rdma_link_del DEV: `rdma link del DEV`, which returns once every process
# has let go of the device. After 60 s it gives up with what the kernel
# says (a removal stuck in the kernel sleeps uninterruptibly: `timeout`
# could never end it, and the scenario would sit out its own timeout).
# When ib_cm is what waits (cm_destroy_id_wait_timeout: a connection
# manager MAD that rxe never completed, which Debian's 6.1 kernel does now
# when an established id is destroyed while its port is down or after a
# link flap; no process holds anything then), the guest's RDMA stack is
# wedged until reboot: the scenario fails with that reason (the daemon's
# reaper must keep ids until their port is ACTIVE or the device gone), and
# the runner fails the ones after it (guest/runner.sh); such scenarios get
# a guest boot of their own (meson.build: testbed_own_boot).
# Otherwise it returns 1: something in user space still holds the device.
rdma_link_del() {
        local pid i since
        since=$(cut -d' ' -f1 /proc/uptime)
        tb_log "+ rdma link del $1"
        rdma link del "$1" &
        pid=$!
        for ((i = 0; i < 300; i++)); do
                kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
                sleep 0.2
        done
        tb_log "rdma link del $1 still waits after 60 s: state $(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null), in $(cat "/proc/$pid/wchan" 2>/dev/null)"
        sed 's/^/    stack: /' "/proc/$pid/stack" 2>/dev/null
        rdma resource show cm_id 2>/dev/null | sed 's/^/    cm_id: /'
        # Who holds the device: each resource's process, and who has a uverbs file open.
        rdma resource show 2>/dev/null | sed 's/^/    res: /'
        for pid in $(pgrep -x rdmaxferd); do
                ls -l "/proc/$pid/fd" 2>/dev/null | grep -o 'uverbs[0-9]*' | sort | uniq -c |
                        sed "s/^/    pid $pid open: /"
        done
        ls -l /sys/class/infiniband_verbs/ 2>/dev/null | sed 's/^/    verbs: /'
        journalctl --no-pager -o short-monotonic -u "$BETA_UNIT" --since "-150s" 2>/dev/null | tail -n 40 |
                sed 's/^/    beta: /'
        journalctl --no-pager -o short-monotonic -u "$ALPHA_UNIT" --since "-150s" 2>/dev/null | tail -n 10 |
                sed 's/^/    alpha: /'
        dmesg | tail -n 8 | sed 's/^/    dmesg: /'
        if dmesg | awk -v t="$since" 'match($0, /^\[ *[0-9.]+\]/) && substr($0, 2, RLENGTH - 2) + 0 >= t &&
                /cm_destroy_id_wait_timeout/ { f = 1 } END { exit !f }'; then
                printf '%s\n' "kernel: rdma link del $1 hangs in ib_cm (cm_destroy_id_wait_timeout: a CM MAD that rxe never completed)" >/run/testbed-wedged
                # An id destroyed while its port was down, or after a flap:
                # the daemon's doing (reaper.c), not the machine's lack.
                tb_fail "$(cat /run/testbed-wedged); the guest's RDMA stack is wedged until reboot"
        fi
        return 1
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

# More endpoints, on demand (guest/fabric.sh): gamma and delta join alpha
# and beta on a bridge, one veth (NIC) and rxe device each. Scenarios that
# do not call nodes_up keep the default alpha-beta pair and pay nothing.
# The addresses are guest/fabric.sh's.
GAMMA_ADDR=198.18.0.3
DELTA_ADDR=198.18.0.4

# node_addr / node_unit / node_conf / node_sock / node_in NODE: the address,
# systemd unit, config file, control socket and incoming directory of
# alpha, beta, gamma or delta (alpha is rdmaxferd.service, the others
# rdmaxferd@NODE.service).
node_addr() {
        case $1 in
        alpha) echo "$ALPHA_ADDR" ;;
        beta) echo "$BETA_ADDR" ;;
        gamma) echo "$GAMMA_ADDR" ;;
        delta) echo "$DELTA_ADDR" ;;
        *) tb_fail "no node '$1' (alpha, beta, gamma, delta)" ;;
        esac
}
node_unit() { if [[ $1 == alpha ]]; then echo rdmaxferd.service; else echo "rdmaxferd@$1.service"; fi; }
node_conf() { if [[ $1 == alpha ]]; then echo "$ALPHA_CONF"; else echo "/etc/rdmaxferd/$1.conf"; fi; }
node_sock() { if [[ $1 == alpha ]]; then echo "$ALPHA_SOCK"; else echo "/run/rdmaxferd-$1/control.sock"; fi; }
node_in() {
        if [[ $1 == alpha ]]; then echo /var/lib/rdmaxferd/incoming; else echo "/var/lib/rdmaxferd-$1/incoming"; fi
}

# nodes_up [key=value...]: alpha, beta, gamma and delta on the fabric, each
# with its own config (listen, incoming_dir, control_socket, plus the keys
# given, for all four), started the way an admin does and ready. Call it
# before starting any daemon: alpha and beta move off their pair. The
# runner puts the pair back after the scenario.
nodes_up() {
        local n units=()
        tb_run bash "$(dirname "$TESTBED_LIB")/guest/fabric.sh" up gamma delta ||
                tb_fail "bringing up the fabric failed"
        for n in alpha beta gamma delta; do
                _tb_write_conf "$(node_conf "$n")" "$(node_addr "$n")" "$(node_in "$n")" \
                        "$(node_sock "$n")" "$@"
                units+=("$(node_unit "$n")")
        done
        tb_run systemctl start "${units[@]}" || {
                journalctl -b --no-pager "${units[@]/#/-u}" | tail -n 40 >&2
                tb_fail "systemctl start ${units[*]} failed"
        }
        for n in alpha beta gamma delta; do
                systemctl is-active --quiet "$(node_unit "$n")" || tb_fail "$(node_unit "$n") not active"
                [[ -S $(node_sock "$n") ]] || tb_fail "$n has no control socket"
        done
}

# A second rail (guest/rails.sh): alpha and beta each get another address
# on another veth pair and rxe device. Scenarios that do not call rails_up
# keep one rail and pay nothing; the runner takes it down afterwards.
ALPHA2_ADDR=198.18.1.1
BETA2_ADDR=198.18.1.2
ALPHA2_DEV=rxe_alpha2
BETA2_DEV=rxe_beta2
ALPHA2_NETDEV=tb-alpha2
BETA2_NETDEV=tb-beta2

# rails_up: bring up the second rail (before the daemons start), and let
# both daemons lock twice the memory (each rail registers both rings:
# rdmaxferd(8), Rails), as an admin's drop-in does.
rails_up() {
        local u
        tb_run bash "$(dirname "$TESTBED_LIB")/guest/rails.sh" up || tb_fail "bringing up the second rail failed"
        for u in "$ALPHA_UNIT" "$BETA_UNIT"; do
                mkdir -p "/etc/systemd/system/$u.d"
                printf '[Service]\nLimitMEMLOCK=384M\n' >"/etc/systemd/system/$u.d/rails.conf"
        done
        systemctl daemon-reload
}

# rails_configure ALPHA_RAILS BETA_RAILS [key=value...]: as peers_configure,
# alpha listening on its first ALPHA_RAILS addresses (1 or 2), beta on its
# first BETA_RAILS.
rails_configure() {
        local a=$ALPHA_ADDR b=$BETA_ADDR
        [[ $1 == 2 ]] && a="$ALPHA_ADDR $ALPHA2_ADDR"
        [[ $2 == 2 ]] && b="$BETA_ADDR $BETA2_ADDR"
        shift 2
        _tb_write_conf "$ALPHA_CONF" "$a" /var/lib/rdmaxferd/incoming "$ALPHA_SOCK" "$@"
        _tb_write_conf "$BETA_CONF" "$b" /var/lib/rdmaxferd-beta/incoming "$BETA_SOCK" "$@"
}

# tree_oracle [--base OLD] [--slack BYTES] SRC GOT [-- RSYNC-OPTION...]:
# GOT is what rsync -aHS makes of SRC, entry by entry (tests/testbed/
# tree-oracle says what is compared); else the differences, and a failure.
tree_oracle() {
        "$(dirname "$TESTBED_LIB")/tree-oracle" "$@" || tb_fail "tree-oracle $*: not what rsync makes (above)"
}

# link_cap RATE NODE...: shape each NODE's link to RATE (tc units: 120mbit is
# 15 MB/s) both ways, with a token bucket (tbf) on each end of its veth:
# tb-NODE holds what NODE sends, tb-NODE-p (the bridge's port) what it
# receives. The burst (256 KiB) is what a 4 ms tick needs at 500 Mbit/s;
# the queue (4 MiB) holds more than rxe keeps in flight per queue pair
# (64 packets), so the cap delays packets rather than dropping them. tbf
# counts whole frames: at rxe's 4096-byte MTU the payload gets ~98.5 %.
link_cap() {
        local rate=$1 node cmds=()
        shift
        for node; do
                cmds+=("qdisc replace dev tb-$node root tbf rate $rate burst 256kb limit 4mb"
                       "qdisc replace dev tb-$node-p root tbf rate $rate burst 256kb limit 4mb")
        done
        _tc_batch "${cmds[@]}"
}

# _tc_batch COMMAND...: tc commands in one tc process (each a process
# of its own costs about 0.1 s under TCG).
_tc_batch() {
        tb_log "+ tc -batch: $(printf '%s; ' "$@")"
        printf '%s\n' "$@" | tc -batch - || tb_fail "tc -batch failed: $*"
}

# link_stats NODE: log what the shaping did (tbf's sent, dropped and
# overlimits on both ends of NODE's veth) and rxe's own counters of
# NODE's device (retransmissions, timeouts, sequence errors), so that a
# capped rate out of its band can be told from drops and go-back-N.
link_stats() {
        local node=$1 dev
        for dev in "tb-$node" "tb-$node-p"; do
                tb_log "$dev: $(tc -s qdisc show dev "$dev" 2>&1 | tr -s ' \n' ' ')"
        done
        tb_log "rxe_$node: $(rdma statistic show link "rxe_$node/1" 2>&1 | tr -s ' \n' ' ')"
}

# link_uncap NODE...: remove link_cap's shaping.
link_uncap() {
        local node cmds=()
        for node; do
                cmds+=("qdisc del dev tb-$node root" "qdisc del dev tb-$node-p root")
        done
        _tc_batch "${cmds[@]}"
}
