#!/bin/bash
# What a receiver must refuse, it refuses with a clear reason, and nothing
# is published: a bad name, an existing file, a wrong pre-shared key, a peer
# outside allow_peers, a file over max_file_size.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure
start_peers
make_file "$SRC/r.dat" 100000

tb_log "a name with a path in it"
send_fails "$SRC/r.dat" "name" --as "../escape.dat"
[[ ! -e /var/lib/rdmaxferd-beta/escape.dat ]] || tb_fail "escaped the incoming directory"

tb_log "a dotfile arrives (names = utf8); the names the receiver keeps for itself do not"
send_ok "$SRC/r.dat" --as ".hidden" >/dev/null
same_file "$SRC/r.dat" "$BETA_IN/.hidden"
send_fails "$SRC/r.dat" "a name this receiver keeps for itself" --as ".rdmaxfer-stage-7"
[[ ! -e $BETA_IN/.rdmaxfer-stage-7 ]] || tb_fail "a peer's file took a staging directory's name"
rm -f "$BETA_IN/.hidden"

tb_log "names = strict, applied by a reload: a dotfile is refused, saying why"
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" names=strict
reload_applied "$BETA_UNIT" names
send_fails "$SRC/r.dat" "name starts with '\.' \(names = strict\)" --as ".strict"
[[ ! -e $BETA_IN/.strict ]] || tb_fail "names = strict published a dotfile"
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK"
reload_applied "$BETA_UNIT" names

tb_log "an existing file is not overwritten"
send_ok "$SRC/r.dat" >/dev/null
make_file "$SRC/r2.dat" 5000
send_fails "$SRC/r2.dat" "exists" --as r.dat
same_file "$SRC/r.dat" "$BETA_IN/r.dat"

tb_log "wrong pre-shared key"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >/etc/rdmaxferd/alpha.key
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >/etc/rdmaxferd/beta.key
chown rdmaxfer: /etc/rdmaxferd/alpha.key /etc/rdmaxferd/beta.key
chmod 0400 /etc/rdmaxferd/alpha.key /etc/rdmaxferd/beta.key
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK" key_file=/etc/rdmaxferd/alpha.key
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" key_file=/etc/rdmaxferd/beta.key
restart_peers
send_fails "$SRC/r2.dat" "key|auth" --as keyed.dat
[[ ! -e $BETA_IN/keyed.dat ]] || tb_fail "published despite a wrong key"
journalctl -u "$BETA_UNIT" --no-pager -o cat | grep -qiE "key|auth" || tb_fail "beta did not log the refusal"

tb_log "the right key"
cp /etc/rdmaxferd/beta.key /etc/rdmaxferd/alpha.key
restart_peers
send_ok "$SRC/r2.dat" --as keyed.dat >/dev/null
same_file "$SRC/r2.dat" "$BETA_IN/keyed.dat"

tb_log "a peer outside allow_peers"
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK"
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" allow_peers=192.0.2.0/24 max_file_size=1M
restart_peers
send_fails "$SRC/r2.dat" "allow|denied|not allowed" --as denied.dat

tb_log "over max_file_size, applied by a reload (SIGHUP), not a restart"
pid=$(systemctl show -P MainPID "$BETA_UNIT")
_tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" "allow_peers=$ALPHA_ADDR/32" max_file_size=64K
tb_run systemctl reload "$BETA_UNIT"
[[ $(systemctl show -P MainPID "$BETA_UNIT") == "$pid" ]] || tb_fail "reload restarted the daemon"
send_fails "$SRC/r.dat" "large|limit" --as large.dat
send_ok "$SRC/r2.dat" --as small.dat >/dev/null
incoming_clean "$BETA_IN" r.dat keyed.dat small.dat
