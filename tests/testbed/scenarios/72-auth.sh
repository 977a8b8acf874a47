#!/bin/bash
# Mutual, address-bound authentication (common/wire.h): with the same key on
# both sides a striped transfer succeeds; an offer replayed from another
# connection or relayed through a third host, a forged lane hello, an END
# without the session key's MAC and a later offer of a session without it
# are refused and nothing is published; a tree synced under the key (its
# index pack's NEED proves the key too) arrives; a
# "receiver" that cannot prove the key fails the sender's job with a clear
# reason before any data; a wrong key, or a key on one side only, is named
# on both sides. The hostile peer is tests/tools/rawpeer.
# testbed-timeout: 600
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

RAWPEER=/usr/libexec/rdmaxfer-tests/rawpeer
KEY=/etc/rdmaxferd/psk
OTHER_KEY=/etc/rdmaxferd/psk-other
RELAY_PORT=7999
[[ -x $RAWPEER ]] || tb_fail "$RAWPEER is not installed (tests/tools)"

# new_key FILE: 32 random bytes as hex, readable by the daemons only.
new_key() {
        (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1")
        chown rdmaxfer: "$1"
        chmod 0400 "$1"
}

beta_cursor() {
        journalctl -u "$BETA_UNIT" -n 1 --no-pager -o export | sed -n 's/^__CURSOR=//p'
}
beta_log_after() {
        journalctl -u "$BETA_UNIT" --no-pager -o cat --after-cursor "$1"
}
beta_logged() {
        beta_log_after "$1" | grep -qE "$2"
}

# beta_reload KEY=VALUE...: rewrite beta's config and wait for the reload.
beta_reload() {
        local cur
        cur=$(beta_cursor)
        _tb_write_conf "$BETA_CONF" "$BETA_ADDR" "$BETA_IN" "$BETA_SOCK" "$@"
        tb_run systemctl reload "$BETA_UNIT"
        wait_for 15 beta_logged "$cur" "reloaded" || tb_fail "beta did not reload"
}

# hostile MODE LOG_REGEX [rawpeer options...]: rawpeer must see the reaction
# it expects, beta must log LOG_REGEX, and nothing new may be published.
hostile() {
        local mode=$1 regex=$2 cur rc=0
        shift 2
        cur=$(beta_cursor)
        tb_log "rawpeer $mode $*"
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" "$@" "$mode" 2>&1 | sed 's/^/    /' ||
                rc=${PIPESTATUS[0]}
        ((rc == 0)) || tb_fail "$mode: the receiver did not react as it must (rawpeer exit $rc)"
        wait_for 15 beta_logged "$cur" "$regex" || {
                beta_log_after "$cur" | sed 's/^/    beta: /' >&2
                tb_fail "$mode: beta did not log /$regex/"
        }
        beta_log_after "$cur" | grep -E "$regex" | sed 's/^/    beta: /'
        incoming_clean "$BETA_IN" "${published[@]}"
}

# send_fails_fast PEER FILE PATTERN: alpha's send of FILE to PEER fails
# saying PATTERN within 15 s (peer_timeout is 30 s: it must not wait for it).
send_fails_fast() {
        local peer=$1 file=$2 pattern=$3 t0 t1 out rc=0
        t0=$(date +%s%N)
        out=$(xferctl send "$file" "$peer" 2>&1) || rc=$?
        t1=$(date +%s%N)
        printf '%s\n' "$out" | tail -n 2 | sed 's/^/    /'
        ((rc != 0)) || tb_fail "send of $file to $peer succeeded, expected: $pattern"
        grep -qiE "$pattern" <<<"$out" || tb_fail "send of $file failed without saying '$pattern'"
        tb_log "  failed after $(((t1 - t0) / 1000000)) ms"
        (((t1 - t0) / 1000000000 < 15)) || tb_fail "$file: took over 15 s to fail"
}

new_key "$KEY"
peers_configure key_file="$KEY"
start_peers
published=()

tb_log "the same key on both sides: a striped transfer succeeds"
# 67 chunks: more than one lane (8 chunks and a 1 MiB block a lane).
make_file "$SRC/keyed.dat" 70000000
send_ok "$SRC/keyed.dat"
same_file "$SRC/keyed.dat" "$BETA_IN/keyed.dat"
lanes=$(jfield "$BETA_UNIT" keyed.dat RDMAXFER_LANES)
tb_log "  over $lanes lanes"
((lanes > 1)) || tb_fail "keyed.dat went over $lanes lane(s): lane hellos were not exercised"
published+=(keyed.dat)

tb_log "rawpeer with the key: its offer, END and the receiver's ACCEPT and RESULT MACs all check"
published+=(rawpeer-honest.dat)
hostile honest "received rawpeer-honest\.dat" --key "$KEY"

tb_log "replayed and relayed offers, a forged lane, a forged END"
hostile replay-nonce "replay\.dat failed: authentication failed: pre-shared key proof does not match" --key "$KEY"
hostile relay-offer "relayed\.dat failed: authentication failed: pre-shared key proof does not match" --key "$KEY"
hostile bad-lane-mac "refused: lane 1 does not prove the session key" --key "$KEY"
hostile bad-end-mac "badmac\.dat failed: authentication failed: lane 0: END does not prove the session key" --key "$KEY"
published+=(sess-a.dat)
hostile next-bad-mac "sess-b\.dat failed: authentication failed: the offer of file 2 does not prove the session key" --key "$KEY"
hostile key-mismatch "refused: the sender has no pre-shared key, and key_file is set here"

tb_log "a relay: rawpeer stands in for a receiver at $BETA_ADDR:$RELAY_PORT, between alpha and beta"
cur=$(beta_cursor)
"$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" --listen-port "$RELAY_PORT" relay \
        >"$TESTBED_SHARE/relay.out" 2>&1 &
relay_pid=$!
wait_for 10 rdma_listening "$RELAY_PORT" || tb_fail "relay: rawpeer is not listening"
make_file "$SRC/relayed.dat" 3000000
# On a failure below, show what the relay saw.
trap 'sed "s/^/    relay: /" "$TESTBED_SHARE/relay.out" >&2' EXIT
send_fails_fast "$BETA_ADDR:$RELAY_PORT" "$SRC/relayed.dat" "receiver failed authentication"
rc=0
wait "$relay_pid" || rc=$?
sed 's/^/    /' "$TESTBED_SHARE/relay.out"
trap - EXIT
((rc == 0)) || tb_fail "relay: a relayed offer or an unproven accept got through (rawpeer exit $rc)"
wait_for 15 beta_logged "$cur" "relayed\.dat failed: authentication failed" ||
        tb_fail "relay: beta did not refuse the relayed offer"
beta_log_after "$cur" | grep -E "relayed\.dat" | sed 's/^/    beta: /'
incoming_clean "$BETA_IN" "${published[@]}"

tb_log "beta with another key: alpha's job fails, named, within the deadline"
new_key "$OTHER_KEY"
cur=$(beta_cursor)
beta_reload key_file="$OTHER_KEY"
make_file "$SRC/wrongkey.dat" 3000000
send_fails_fast "$BETA_ADDR" "$SRC/wrongkey.dat" "authentication failed: pre-shared key proof does not match"
wait_for 15 beta_logged "$cur" "wrongkey\.dat failed: authentication failed" ||
        tb_fail "beta did not log the wrong key"

tb_log "beta without a key: refused at connection, named on both sides"
cur=$(beta_cursor)
beta_reload
send_fails_fast "$BETA_ADDR" "$SRC/wrongkey.dat" "the receiver has no pre-shared key, and key_file is set here"
wait_for 15 beta_logged "$cur" "refused: the sender uses a pre-shared key, and key_file is not set here" ||
        tb_fail "beta did not name the key mismatch"

tb_log "alpha without a key, beta with one"
cur=$(beta_cursor)
beta_reload key_file="$KEY"
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK"
reload_applied "$ALPHA_UNIT" key_file
send_fails_fast "$BETA_ADDR" "$SRC/wrongkey.dat" "the receiver requires a pre-shared key, and key_file is not set here"
wait_for 15 beta_logged "$cur" "refused: the sender has no pre-shared key, and key_file is set here" ||
        tb_fail "beta did not name the key mismatch"
incoming_clean "$BETA_IN" "${published[@]}"

tb_log "and with the key back on alpha, transfers go through again"
_tb_write_conf "$ALPHA_CONF" "$ALPHA_ADDR" "$ALPHA_IN" "$ALPHA_SOCK" key_file="$KEY"
reload_applied "$ALPHA_UNIT" key_file
make_file "$SRC/again.dat" 2000000
send_ok "$SRC/again.dat"
same_file "$SRC/again.dat" "$BETA_IN/again.dat"
published+=(again.dat)
incoming_clean "$BETA_IN" "${published[@]}"
tb_log "a tree kept up to date under the key: its index pack's NEED carries a MAC too"
rm -rf "$SRC/kt" && mkdir -p "$SRC/kt"
for f in a b c; do make_file "$SRC/kt/$f" 3000; done
xferctl send -r "$SRC/kt" "$BETA_ADDR" --to kt >/dev/null 2>&1 || tb_fail "the first send of the tree kt failed"
make_file "$SRC/kt/d" 3000
out=$(xferctl send -r "$SRC/kt" "$BETA_ADDR" --to kt --sync=size 2>&1) || tb_fail "--sync=size of kt under the key: $out"
[[ $out == *"3 skipped"* ]] || tb_fail "the keyed sync did not skip the 3 files beta has: $out"
diff -r "$SRC/kt" "$BETA_IN/kt" >/dev/null || tb_fail "kt differs after the keyed sync"
rm -rf "$SRC/kt" "$BETA_IN/kt"
journalctl -u "$ALPHA_UNIT" -u "$BETA_UNIT" --no-pager -o cat | grep -iE "key|nonce|session" |
        grep -iE "[0-9a-f]{32}" && tb_fail "key material in the logs"
true
