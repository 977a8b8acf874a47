#!/bin/bash
# A misbehaving or hostile peer cannot hurt the receiver: every violation
# gets a refusal with a logged reason, the daemon neither crashes nor
# restarts, nothing is published or written outside the incoming directory,
# and honest peers are still served (also while hostile ones hold slots).
# A tree's malformed pack (a ".." name, a size past its end, another pack
# hash than its offer's, a landing's attributes in the drop box) is refused
# whole and publishes nothing; so is a tree that sends an entry's
# attributes (XATTR parts) into the drop box.
# A session's pipelined next offer (version 8) is taken; a third file in
# flight is refused.
# The hostile peer is tests/tools/rawpeer, installed for the testbed.
# testbed-timeout: 600
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

RAWPEER=/usr/libexec/rdmaxfer-tests/rawpeer
BETA_STATE=/var/lib/rdmaxferd-beta
[[ -x $RAWPEER ]] || tb_fail "$RAWPEER is not installed (tests/tools)"

# A stalled sender is dropped after peer_timeout: 7 s rather than the
# default 30 s keeps the wait short. The offer deadline is 7 s too (it is
# the lesser of 10 s and peer_timeout): long enough that the four idle
# peers of the admission check still hold their places when the 9th
# connection comes, seconds later on a loaded host. names = utf8: the admin's choice
# that refuses a control character in a name (the default, any, takes
# every name the file system does).
peers_configure peer_timeout=7 names=utf8
start_peers
beta_pid=$(systemctl show -P MainPID "$BETA_UNIT")
state_before=$(ls -A "$BETA_STATE")
touch /run/hostile-marker

# beta_cursor: the journal position of beta's newest entry.
beta_cursor() {
        journalctl -u "$BETA_UNIT" -n 1 --no-pager -o export | sed -n 's/^__CURSOR=//p'
}

# beta_log_after CURSOR: beta's log lines after CURSOR.
beta_log_after() {
        journalctl -u "$BETA_UNIT" --no-pager -o cat --after-cursor "$1"
}

# beta_logged CURSOR REGEX: beta logged a line matching REGEX after CURSOR;
# the lines that match are left in BETA_SEEN (wait_for runs it in this shell).
beta_logged() {
        BETA_SEEN=$(beta_log_after "$1" | grep -E "$2")
}

# beta_unhurt MODE [ALLOWED...]: still the same running process, nothing
# published (but the ALLOWED names), nothing new beside the incoming directory.
beta_unhurt() {
        local mode=$1 unit
        shift
        # One systemctl call for the three (each is a round trip to PID 1, slow under TCG).
        unit=$'\n'$(systemctl show -p ActiveState -p MainPID -p NRestarts "$BETA_UNIT")$'\n'
        [[ $unit == *$'\nActiveState=active\n'* ]] || tb_fail "$mode: beta is $(systemctl is-active "$BETA_UNIT")"
        [[ $unit == *$'\nMainPID='"$beta_pid"$'\n'* ]] ||
                tb_fail "$mode: beta's MainPID changed (crash or watchdog restart)"
        [[ $unit == *$'\nNRestarts=0\n'* ]] || tb_fail "$mode: beta was restarted"
        incoming_clean "$BETA_IN" "$@"
        [[ $(ls -A "$BETA_STATE") == "$state_before" ]] ||
                tb_fail "$mode: $BETA_STATE changed: $(ls -A "$BETA_STATE" | tr '\n' ' ')"
        [[ ! -e $BETA_STATE/escape && ! -e /var/lib/escape ]] || tb_fail "$mode: a file escaped the incoming directory"
}

# hostile MODE LOG_REGEX [ALLOWED...]: rawpeer misbehaves as MODE against
# beta; it must see the reaction it expects, beta must log LOG_REGEX and
# stay unhurt, publishing nothing but the ALLOWED names.
hostile() {
        local mode=$1 regex=$2 cur rc=0
        shift 2
        cur=$(beta_cursor)
        tb_log "rawpeer $mode"
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" "$mode" 2>&1 | sed 's/^/    /' || rc=${PIPESTATUS[0]}
        ((rc == 0)) || tb_fail "$mode: the receiver did not react as it must (rawpeer exit $rc)"
        wait_for 15 beta_logged "$cur" "$regex" || {
                beta_log_after "$cur" | sed 's/^/    beta: /' >&2
                tb_fail "$mode: beta did not log /$regex/"
        }
        sed 's/^/    beta: /' <<<"$BETA_SEEN"
        beta_unhurt "$mode" "$@"
}

cur0=$(beta_cursor)
tb_log "first an honest transfer from rawpeer itself, so its refusals below mean something"
hostile honest "received rawpeer-honest\.dat" rawpeer-honest.dat
[[ $(stat -c %s "$BETA_IN/rawpeer-honest.dat" 2>/dev/null) == 73728 ]] ||
        tb_fail "rawpeer's honest file was not published whole"
rm -f "$BETA_IN/rawpeer-honest.dat"

tb_log "connection set-up"
hostile bad-version "refused: protocol version mismatch"
hostile no-hello "refused: not an rdmaxfer peer"
hostile garbage-hello "refused: not an rdmaxfer peer"
hostile bogus-lane "refused: lane 1 of no transfer in progress"

tb_log "names that are not a leaf of the incoming directory"
hostile name-traversal "name not acceptable"
hostile name-slash "name not acceptable: name contains '/'"
hostile name-dotdot "name not acceptable: name is \"\.\" or \"\.\.\""
hostile name-control "name not acceptable: name contains a NUL, or a control character \(names = utf8\)"
hostile name-reserved "name not acceptable: a name this receiver keeps for itself"

tb_log "protocol violations"
hostile huge-offer "huge\.dat failed: file too large: more than 2\^32 chunks"
hostile tiny-chunk "tiny\.dat failed: protocol error: chunk size out of range"
hostile offer-twice "twice\.dat failed: protocol error: unexpected control message"
hostile garbage-ctrl "protocol error: undecodable control message"
hostile data-before-offer "protocol error: data outside a transfer"
hostile out-of-order "ooo\.dat failed: protocol error: data chunk out of sequence"
hostile lane-trespass "trespass\.dat failed: protocol error: data chunk out of sequence"
hostile bad-checksum "badsum\.dat failed: checksum mismatch"
hostile short "short\.dat failed: size mismatch"
hostile vanish "vanish\.dat (aborted|failed).*"
hostile oversize "oversize\.dat (aborted|failed).*"

tb_log "hostile trees: refused, nothing published, no staging directory left"
no_stage() { [[ -z $(find "$BETA_IN" -maxdepth 1 -name '.rdmaxfer-stage-*') ]]; }
ln -s /tmp "$BETA_IN/planted"
for m in tree-dest-dotdot tree-dest-abs tree-outside tree-dir-source tree-planted xattr-part; do
        rc=0
        tb_log "rawpeer $m"
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" "$m" 2>&1 | sed 's/^/    /' || rc=${PIPESTATUS[0]}
        ((rc == 0)) || tb_fail "$m: the receiver did not react as it must (rawpeer exit $rc)"
        wait_for 15 no_stage || tb_fail "$m: a staging directory stayed in $BETA_IN"
done
[[ ! -e /tmp/t/d && ! -e $BETA_IN/rawtree && ! -e $BETA_IN/other ]] ||
        tb_fail "a hostile tree published something (through the planted symlink?)"
rm -f "$BETA_IN/planted"
# A tree's own symlinks: never made where another entry is, never gone through.
echo "tree_symlinks = any" >>"$BETA_CONF"
tb_run systemctl reload "$BETA_UNIT"
rm -f /tmp/x
for m in tree-link-shadow tree-link-under; do
        rc=0
        tb_log "rawpeer $m"
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" "$m" 2>&1 | sed 's/^/    /' || rc=${PIPESTATUS[0]}
        ((rc == 0)) || tb_fail "$m: the receiver did not react as it must (rawpeer exit $rc)"
        wait_for 15 no_stage || tb_fail "$m: a staging directory stayed in $BETA_IN"
done
[[ ! -e $BETA_IN/rawlink && ! -e /tmp/x ]] || tb_fail "a tree with a hostile symlink published, or wrote through it"
# Issue 32 H1: a kept tree continued by a later attempt of the same job
# never makes an entry through a symlink an earlier attempt made (its
# target here: a directory of the daemon's own beside incoming_dir).
victim=/var/lib/rdmaxferd-beta/victim
rm -rf "$victim" && mkdir "$victim" && chown rdmaxfer: "$victim"
rc=0
tb_log "rawpeer tree-kept-link"
"$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" --target "$victim" tree-kept-link 2>&1 | sed 's/^/    /' ||
        rc=${PIPESTATUS[0]}
((rc == 0)) || tb_fail "tree-kept-link: the receiver did not react as it must (rawpeer exit $rc)"
[[ -z $(ls -A "$victim") && ! -e $BETA_IN/rawkept ]] ||
        tb_fail "a kept tree's later attempt wrote through its own symlink: $(ls -A "$victim")"
rm -rf "$victim" /var/lib/rdmaxferd-beta/partial/*
sed -i '/^tree_symlinks = /d' "$BETA_CONF"
tb_run systemctl reload "$BETA_UNIT"
incoming_clean "$BETA_IN"

# Hostile packs (wire.h "Packs"): received and verified like any file, then
# refused whole before anything is made; the tree is not published.
tb_log "hostile packs: refused, nothing published, no staging directory left"
for m in "pack-dotdot|a bad pack: an entry's name is not acceptable" \
         "pack-past-end|a bad pack: an entry's data past the end" "pack-hash|a bad pack: the pack hash does not match" \
         "pack-link-outside|symlink rawpack/d/l: it points outside the tree" \
         "pack-hard-dir|a hard link of the tree names no regular file of it" \
         "pack-hard-other|hard link rawpack/d/h: its file is not beneath the destination" \
         "pack-xattrs|rawpack/d/f: attributes the session does not carry"; do
        cur=$(beta_cursor)
        rc=0
        tb_log "rawpeer ${m%%|*}"
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" "${m%%|*}" 2>&1 | sed 's/^/    /' || rc=${PIPESTATUS[0]}
        ((rc == 0)) || tb_fail "${m%%|*}: the receiver did not react as it must (rawpeer exit $rc)"
        wait_for 15 beta_logged "$cur" "rawpack.*${m#*|}" || {
                beta_log_after "$cur" | sed 's/^/    beta: /' >&2
                tb_fail "${m%%|*}: beta did not log why"
        }
        sed 's/^/    beta: /' <<<"$BETA_SEEN"
        wait_for 15 no_stage || tb_fail "${m%%|*}: a staging directory stayed in $BETA_IN"
        [[ ! -e $BETA_IN/rawpack && ! -e $BETA_IN/f ]] || tb_fail "${m%%|*}: a hostile pack published something"
        beta_unhurt "${m%%|*}"
done

tb_log "relay chains (version 10): a route the offer does not name, or names another, or two"
hostile route-hash "routed\.dat failed: protocol error: the route is not the one the offer names"
hostile route-unnamed "routed\.dat failed: protocol error: a route, and an offer that names none"
hostile route-twice "connection refused: protocol error: unexpected control message"
tb_log "version 11: the rest of a long route, after the accept, out of order, not the hashed one, or missing"
echo "relay = yes" >>"$BETA_CONF"
reload_applied "$BETA_UNIT" relay
hostile route-rest-order "routed\.dat failed: protocol error: a part of the route out of order"
hostile route-rest-hash "routed\.dat failed: protocol error: the route is not the one the offer names"
hostile route-rest-missing "routed\.dat failed: protocol error: lane 0's END before the route's last part"
tb_log "issue 32 M3: a relay checks where it would pass the file on: loopback, a hop twice, relay_peers"
hostile route-loopback "routed\.dat failed: peer not allowed: the route's hop 1, 127\.0\.0\.1:7471, is a loopback address"
hostile route-repeat "routed\.dat failed: peer not allowed: the route names 198\.18\.0\.99:7471 twice"
echo "relay_peers = 198.18.0.1" >>"$BETA_CONF"
reload_applied "$BETA_UNIT" relay_peers
hostile route-outside "routed\.dat failed: peer not allowed: the route's hop 1, 198\.18\.0\.99:7471, is not in relay_peers here"
sed -i '/^relay_peers = /d' "$BETA_CONF"
sed -i '/^relay = yes$/d' "$BETA_CONF"
reload_applied "$BETA_UNIT" relay

tb_log "a session of several files that breaks its rules after a good first file (which stays)"
hostile next-wrong-file "sess-b\.dat failed: protocol error: offer of file 2 does not follow the session's" sess-a.dat
rm -f "$BETA_IN/sess-a.dat"
hostile next-more-bytes "sess-b\.dat failed: protocol error: file 2: more bytes than the job announced" sess-a.dat
rm -f "$BETA_IN/sess-a.dat"
tb_log "version 8: the next offer before the file's RESULT is taken; a third file in flight is refused"
hostile next-pipelined "received 2 files, the last sess-b\.dat" sess-a.dat sess-b.dat
rm -f "$BETA_IN/sess-a.dat" "$BETA_IN/sess-b.dat"
hostile next-third-offer "failed: protocol error: an offer while two files of the session are in flight" sess-a.dat
rm -f "$BETA_IN/sess-a.dat"

tb_log "peers that hold slots and do nothing; an honest send meanwhile"
cur=$(beta_cursor)
"$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" idle >"$TESTBED_SHARE/idle.out" 2>&1 &
idle_pid=$!
"$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" stall >"$TESTBED_SHARE/stall.out" 2>&1 &
stall_pid=$!
make_file "$SRC/meanwhile.dat" 3000000
sleep 2
send_ok "$SRC/meanwhile.dat"
same_file "$SRC/meanwhile.dat" "$BETA_IN/meanwhile.dat"
rc=0
wait "$idle_pid" || rc=$?
sed 's/^/    /' "$TESTBED_SHARE/idle.out"
((rc == 0)) || tb_fail "idle: the receiver did not drop a peer that never offered (rawpeer exit $rc)"
rc=0
wait "$stall_pid" || rc=$?
sed 's/^/    /' "$TESTBED_SHARE/stall.out"
((rc == 0)) || tb_fail "stall: the receiver did not drop a stalled sender (rawpeer exit $rc)"
wait_for 15 beta_logged "$cur" "no offer within 7 s" || tb_fail "idle: beta did not log the timeout"
wait_for 15 beta_logged "$cur" "stall\.dat failed: .*no progress from sender for 7 s" ||
        tb_fail "stall: beta did not log the stall"
beta_log_after "$cur" | grep -E "no offer|no progress" | sed 's/^/    beta: /'
beta_unhurt idle-stall meanwhile.dat

tb_log "admission after the offer: max_transfers (4) idle peers hold no share; an honest send still gets in"
cur=$(beta_cursor)
idle_pids=()
for i in 1 2 3 4; do
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" idle >"$TESTBED_SHARE/idle-$i.out" 2>&1 &
        idle_pids+=($!)
done
sleep 2
make_file "$SRC/admitted.dat" 4000000
send_ok "$SRC/admitted.dat"
same_file "$SRC/admitted.dat" "$BETA_IN/admitted.dat"
tb_log "a host may keep at most 8 connections without an offer: the 9th is refused as busy"
for i in 5 6 7 8 9; do
        "$RAWPEER" --src "$ALPHA_ADDR" --dst "$BETA_ADDR" idle >"$TESTBED_SHARE/idle-$i.out" 2>&1 &
        idle_pids+=($!)
        sleep 0.1
done
wait_for 15 beta_logged "$cur" "refused: 8 connections from this host have not made an offer yet" ||
        tb_fail "pending cap: beta did not refuse the 9th connection without an offer"
for p in "${idle_pids[@]}"; do wait "$p" || true; done
beta_log_after "$cur" | grep -E "have not made an offer" | sed 's/^/    beta: /'
beta_unhurt admission meanwhile.dat admitted.dat

tb_log "beta still serves honest peers"
make_file "$SRC/after.dat" 5000000
send_ok "$SRC/after.dat"
same_file "$SRC/after.dat" "$BETA_IN/after.dat"
beta_unhurt final meanwhile.dat admitted.dat after.dat
escaped=$(find /var /tmp /root /etc /run -newer /run/hostile-marker -name 'escape*' 2>/dev/null)
[[ -z $escaped ]] || tb_fail "files named escape appeared: $escaped"

tb_log "what beta logged about the hostile peers"
beta_log_after "$cur0" | grep -E "refused|failed|aborted" | sed 's/^/    /'
