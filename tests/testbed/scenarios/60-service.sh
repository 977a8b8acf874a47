#!/bin/bash
# The packaged service: notify-type start, its own user, hardening in force,
# memlock for the ring, a group-only control socket, clear config errors,
# and start on demand through rdmaxferd.socket.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure
start_peers

for unit in "$ALPHA_UNIT" "$BETA_UNIT"; do
        pid=$(systemctl show -P MainPID "$unit")
        [[ $(ps -o user= -p "$pid") == rdmaxfer ]] || tb_fail "$unit does not run as rdmaxfer"
        [[ $(systemctl show -P Type "$unit") == notify ]] || tb_fail "$unit is not Type=notify"
        [[ $(systemctl show -P ProtectSystem "$unit") == strict ]] || tb_fail "$unit: ProtectSystem"
        [[ $(systemctl show -P NoNewPrivileges "$unit") == yes ]] || tb_fail "$unit: NoNewPrivileges"
        [[ -n $(systemctl show -P SystemCallFilter "$unit") ]] || tb_fail "$unit: no SystemCallFilter"
        grep -q "^Seccomp:[[:space:]]*2" "/proc/$pid/status" || tb_fail "$unit: no seccomp filter in force"
        status=$(systemctl show -P StatusText "$unit")
        tb_log "$unit: STATUS=$status"
        [[ -n $status ]] || tb_fail "$unit sends no STATUS="
        grep -q "^Max locked memory *unlimited" "/proc/$pid/limits" || tb_fail "$unit: memlock limit"
done
[[ $(stat -c '%a %G' "$ALPHA_SOCK") == "660 rdmaxfer" ]] || tb_fail "control socket mode: $(stat -c '%a %G' "$ALPHA_SOCK")"

tb_log "a bad config names file, line and key"
printf 'listen = %s\nslot_size = 3M\n' "$BETA_ADDR" >/etc/rdmaxferd/bad.conf
out=$(rdmaxferd --config /etc/rdmaxferd/bad.conf --check-config 2>&1) && tb_fail "bad config accepted"
tb_log "$out"
[[ $out == *"/etc/rdmaxferd/bad.conf:2"*slot_size* ]] || tb_fail "error does not name file:line:key"
if systemctl start rdmaxferd@bad.service; then tb_fail "started with a bad config"; fi
journalctl -u rdmaxferd@bad.service --no-pager -o cat | grep -q "bad.conf:2" || tb_fail "journal lacks the config error"

tb_log "without the daemon, xferctl says so"
systemctl stop "$ALPHA_UNIT"
out=$(xferctl send /etc/hostname "$BETA_ADDR" 2>&1) && tb_fail "send without a daemon succeeded"
tb_log "$out"
[[ $out == *"rdmaxferd"* ]] || tb_fail "unclear error without a daemon"

tb_log "socket activation: the first xferctl starts the daemon"
systemctl is-active --quiet "$ALPHA_UNIT" && tb_fail "alpha should be stopped here"
tb_run systemctl start rdmaxferd.socket
make_file "$SRC/activated.dat" 123457
send_ok "$SRC/activated.dat" >/dev/null
systemctl is-active --quiet "$ALPHA_UNIT" || tb_fail "alpha was not started by its socket"
same_file "$SRC/activated.dat" "$BETA_IN/activated.dat"
