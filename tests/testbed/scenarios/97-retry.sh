#!/bin/bash
# The sender retries by itself (issue 11 item 3), and nobody acts meanwhile:
#  a. the receiver is stopped: `xferctl send` waits in RETRYING (list and
#     status say why, which attempt, when the next), says each retry, and
#     completes by itself once beta is started; the journal has
#     RDMAXFER_ATTEMPT >= 2.
#  b. the link goes down for 10 s mid-transfer of 200 MiB and comes back
#     with its routes and neighbours (as networkd would put them back);
#     rxe_beta is re-created, as 92-device-loss does (6.1 rxe carries no CM
#     traffic after a flap under live queue pairs otherwise): the job
#     completes and the file is identical.
#  c. a permanent failure (file exists, overwrite off) fails at once, once.
#  d. cancel during RETRYING ends the job at once, and nothing more is
#     tried; --retries 0 makes a transient failure final.
#  e. a job of several files whose receiver is SIGKILLed after some were
#     published: it is retried from the first file not published (nothing
#     published is sent again) and completes once beta is back.
#  f. multi-rail failover (issue 35): alpha and beta on two rails each
#     (guest/rails.sh), the second rail's link goes down mid-transfer: its
#     lanes join the transfer again over the first rail and go on from
#     where beta has their runs; the transfer completes intact in its
#     first attempt, both journal entries name the lost rail
#     (RDMAXFER_RAILS_LOST); same PIDs. The rail comes back (routes, rxe
#     devices re-created as in b) and the next transfer goes over both.
#  h. the second rail's device removed on beta mid-transfer (rdma link
#     del): the same, RDMAXFER_RAILS_LOST on beta's entry; the device
#     re-created.
#  g. then the first rail, the one whose address alpha names beta by and
#     lane 0 goes over: lane 0 and the other lanes there join again over
#     the second rail, the transfer completes in its first attempt; a new
#     transfer while the rail is down sends lane 0 around it, by the rails
#     beta named in an earlier ACCEPT; same PIDs.
# b, f, h and g run last (b says why), in that order.
# testbed-timeout: 600
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

T=5
# Small delays keep it lean: 1 s, then 2 s between attempts.
peers_configure peer_timeout=$T retry_max=30 retry_window=180 retry_delay_max=2
start_peers
nb=$BETA_NETDEV

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# The id of the newest job on alpha named NAME.
job_id() {
        xferctl list --json | tr '{' '\n' | grep "\"name\":\"$1\"" | tail -n 1 |
                sed -n 's/^"id":\([0-9]*\),.*/\1/p'
}

has_job() { [[ -n $(job_id "$1") ]]; }

# rx_grown FROM BYTES [NETDEV]: beta's netdev (NETDEV: that one) has
# received BYTES since its counter read FROM.
rx_grown() {
        (($(netdev_bytes "${3:-$nb}" rx) - $1 >= $2))
}

# rail_send AS NETDEV MIB [OPTION...]: send big.dat as AS (its output in
# $SRC/AS.out, PID its xferctl) and return once MIB MiB of it crossed
# beta's NETDEV; T0 is then.
rail_send() {
        local as=$1 dev=$2 mib=$3 rx0
        shift 3
        rx0=$(netdev_bytes "$dev" rx)
        xferctl send "$@" "$SRC/big.dat" "$BETA_ADDR" --as "$as" >"$SRC/$as.out" 2>&1 &
        pid=$!
        wait_for 60 rx_grown "$rx0" $((mib << 20)) "$dev" || tb_fail "no lane of $as went over $dev"
        t0=$(now)
}

# rail_done AS WHAT: rail_send's job, after WHAT happened to a rail at T0,
# completed intact in its first attempt, the daemons the same (APID,
# BPID); what each said of the lanes it lost.
rail_done() {
        local as=$1 what=$2 rc=0
        timeout 120 tail --pid="$pid" -f /dev/null || tb_fail "the job was not done 120 s after $what"
        wait "$pid" || rc=$?
        sed 's/^/    | /' "$SRC/$as.out"
        ((rc == 0)) || tb_fail "xferctl send exited $rc: $as did not complete over the remaining rail"
        same_file "$SRC/big.dat" "$BETA_IN/$as"
        tb_log "done $(secs "$t0" "$(now)") s after $what; alpha's entries (attempt result): $(attempts_of "$as" | tr '\n' '|')"
        journalctl -u "$ALPHA_UNIT" --no-pager --since "@${t0%.*}" -o cat | grep -E "lost rail|goes on from|nothing more" |
                sed 's/^/    alpha: /' || true
        journalctl -u "$BETA_UNIT" --no-pager --since "@${t0%.*}" -o cat | grep -E "lost rail|joined again" |
                sed 's/^/    beta: /' || true
        [[ $(attempts_of "$as") == "1 ok" ]] ||
                tb_fail "$as did not complete in its first attempt: $(attempts_of "$as" | tr '\n' '|')"
        [[ $(systemctl show -P MainPID "$ALPHA_UNIT") == "$apid" && $(systemctl show -P MainPID "$BETA_UNIT") == "$bpid" ]] ||
                tb_fail "a daemon restarted"
}

# fresh_peers: the daemons restarted (APID, BPID theirs), then one
# transfer over both rails, for alpha to learn beta's. librdmacm's rescan
# (rdma_get_devices), when a daemon looks for a device again, opens every
# RDMA device of the machine, and closes one only when it next notices it
# gone; here the two nodes share one kernel, so a daemon that looked holds
# the other's devices too, and removing one would wait for it. On a real
# node a daemon sees its own devices only.
fresh_peers() {
        restart_peers
        apid=$(systemctl show -P MainPID "$ALPHA_UNIT")
        bpid=$(systemctl show -P MainPID "$BETA_UNIT")
        tb_log "$(send_ok "$SRC/again.dat")"
        jfields_wait "$ALPHA_UNIT" again.dat
        [[ ${JF[RDMAXFER_RAILS]:-} == "$ALPHA_DEV,$ALPHA2_DEV" ]] || tb_fail "again.dat went over '${JF[RDMAXFER_RAILS]:-}'"
        rm -f "$BETA_IN/again.dat"
}

# Alpha's sender entries for FILE: "attempt result" lines, oldest first.
attempts_of() {
        journalctl -u "$ALPHA_UNIT" --no-pager -o export RDMAXFER_FILE="$1" RDMAXFER_DIRECTION=send |
                awk -F= '/^RDMAXFER_ATTEMPT=/ { a = $2 } /^RDMAXFER_RESULT=/ { r = $2 }
                         /^$/ { if (r != "") print a, r; a = ""; r = "" } END { if (r != "") print a, r }'
}



tb_log "a. the receiver is stopped: the job retries until it is back"
tb_run systemctl stop "$BETA_UNIT"
make_file "$SRC/a.dat" 20000000
xferctl send "$SRC/a.dat" "$BETA_ADDR" >"$SRC/a.out" 2>&1 &
pid=$!
wait_for 20 has_job a.dat || tb_fail "no job for a.dat"
id=$(job_id a.dat)
wait_for 20 job_in_state "$id" retrying || { xferctl status "$id"; tb_fail "job $id never retried"; }
# Between its waits the job is briefly queued and connecting: one snapshot
# of all three views while it waits.
for _ in $(seq 50); do
        st=$(xferctl status "$id") lst=$(xferctl list) js=$(xferctl status "$id" --json)
        grep -q retrying <<<"$st" && grep -q retrying <<<"$lst" && grep -q '"retrying"' <<<"$js" && break
        sleep 0.2
done
printf '%s\n' "$st" "$lst" "$js" | sed 's/^/    /'
grep -qE "^attempt: +[0-9]+ of 31, starts (in [0-9]+ s|now)" <<<"$st" || tb_fail "status shows no attempt line"
grep -qiE "^failure: .*(refused|unreachable|no connection)" <<<"$st" || tb_fail "status shows no reason"
grep -qE "retrying .* retry [0-9]+/31 (in [0-9]+ s|now)" <<<"$lst" || tb_fail "list shows no retry"
grep -qE "^ +last failure: " <<<"$lst" || tb_fail "list shows no reason"
grep -qE '"state":"retrying".*"attempts":31,"retry_usec":[0-9]+' <<<"$js" || tb_fail "status --json shows no retry"
wait_for 10 bash -c "systemctl show -P StatusText $ALPHA_UNIT | grep -q retrying" ||
        tb_fail "alpha's STATUS= never says retrying"
tb_run systemctl start "$BETA_UNIT"
t0=$(now)
rc=0
timeout 60 tail --pid="$pid" -f /dev/null || tb_fail "xferctl send still waits 60 s after beta came back"
wait "$pid" || rc=$?
sed 's/^/    | /' "$SRC/a.out"
((rc == 0)) || tb_fail "xferctl send exited $rc: the job did not complete by itself"
grep -qE "attempt 1 of 31 failed: .*; retrying (in [0-9]+ s|now)" "$SRC/a.out" || tb_fail "xferctl send did not say the retry"
same_file "$SRC/a.dat" "$BETA_IN/a.dat"
att=$(attempts_of a.dat | tail -n 1)
tb_log "done $(secs "$t0" "$(now)") s after beta started; alpha's entries (attempt result): $(attempts_of a.dat | tr '\n' '|')"
[[ ${att#* } == ok && ${att% *} -ge 2 ]] || tb_fail "the successful entry has RDMAXFER_ATTEMPT=${att% *}, expected >= 2"

tb_log "c. a permanent failure (file exists) is not retried"
t0=$(now)
send_fails "$SRC/a.dat" "exists"
took=$(secs "$t0" "$(now)")
id=$(job_id a.dat)
xferctl status "$id" | grep -qE "^attempt:" && tb_fail "a permanent failure shows an attempt count"
xferctl status "$id" --json | grep -q '"attempt":1,' || tb_fail "job $id is not at attempt 1"
[[ $(attempts_of a.dat | tail -n 1) == "1 file exists" ]] || tb_fail "alpha's entry: $(attempts_of a.dat | tail -n 1)"
awk -v t="$took" 'BEGIN { exit !(t < 10) }' || tb_fail "the refusal took $took s"
tb_log "refused after $took s, attempt 1 only"

tb_log "d. cancel while retrying; --retries 0"
tb_run systemctl stop "$BETA_UNIT"
# Longer waits from the 4th attempt on (4 s), so the cancel lands in one; a reload applies.
peers_configure peer_timeout=$T retry_max=30 retry_window=180 retry_delay_max=30
tb_run systemctl reload "$ALPHA_UNIT"
make_file "$SRC/c.dat" 1000000
id=$(xferctl send "$SRC/c.dat" "$BETA_ADDR" --no-wait) || tb_fail "submit failed"
id=${id//[^0-9]/}
wait_for 30 bash -c "xferctl status $id | grep -qE '^attempt: +4 of 31, starts in'" ||
        { xferctl status "$id"; tb_fail "job $id never waited for attempt 4"; }
t0=$(now)
tb_run xferctl cancel "$id" || tb_fail "cancel failed"
wait_for 2 job_in_state "$id" cancelled || { xferctl status "$id"; tb_fail "job $id not cancelled at once"; }
tb_log "cancelled $(secs "$t0" "$(now)") s after the request"
journalctl -u "$ALPHA_UNIT" --no-pager | grep -q "job $id: cancelled while retrying" ||
        tb_fail "alpha did not log the cancel while retrying"
n=$(attempts_of c.dat | wc -l)
sleep 4
[[ $(attempts_of c.dat | wc -l) == "$n" ]] || tb_fail "another attempt after the cancel"
t0=$(now)
send_fails "$SRC/c.dat" "refused|unreachable|no connection" --retries 0
took=$(secs "$t0" "$(now)")
awk -v t="$took" 'BEGIN { exit !(t < 10) }' || tb_fail "--retries 0 took $took s"
grep -q "retrying" <<<"$(xferctl list)" && tb_fail "a job is still retrying"
tb_run systemctl start "$BETA_UNIT"
sleep 2
[[ ! -e $BETA_IN/c.dat ]] || tb_fail "c.dat was published after its job was cancelled"
incoming_clean "$BETA_IN" a.dat
rm -f "$SRC"/*.dat "$SRC"/*.out "$BETA_IN"/a.dat

tb_log "e. several files, the receiver killed after some were published: the retry sends the rest"
mkdir -p "$SRC/multi"
for i in 1 2 3 4 5 6; do make_file "$SRC/multi/m$i.dat" $((12 * 1024 * 1024)); done
t0=$(now)
xferctl send "$SRC"/multi/m*.dat "$BETA_ADDR" --bwlimit 12M >"$SRC/m.out" 2>&1 &
pid=$!
wait_for 60 test -e "$BETA_IN/m2.dat" || tb_fail "m2.dat was never published"
tb_run systemctl kill -s SIGKILL "$BETA_UNIT"
published=$(cd "$BETA_IN" && ls m*.dat | tr '\n' ' ')
tb_log "beta killed with ${published}published"
tb_run systemctl restart "$BETA_UNIT"
rc=0
timeout 120 tail --pid="$pid" -f /dev/null || tb_fail "xferctl send still waits 120 s after beta came back"
wait "$pid" || rc=$?
sed 's/^/    | /' "$SRC/m.out"
((rc == 0)) || tb_fail "xferctl send exited $rc: the job of several files did not complete by itself"
for i in 1 2 3 4 5 6; do same_file "$SRC/multi/m$i.dat" "$BETA_IN/m$i.dat"; done
# The retry is a session of the files left: it starts past what was published.
again=$(journalctl -u "$ALPHA_UNIT" --no-pager --since "@${t0%.*}" -o cat |
        sed -n 's/.*: sending files \([0-9]*\) to 6 of m1.dat .*from \(m[0-9].dat\)).*attempt \([0-9]*\).*/\1 \2 \3/p' | head -n 1)
tb_log "alpha's retry: files ${again:-?} (first, its name, attempt)"
[[ -n $again ]] || tb_fail "alpha did not retry from a later file"
first=${again%% *}
for f in $published; do
        n=${f#m} n=${n%.dat}
        ((n < first)) || tb_fail "the retry started at file $first, yet $f was published before"
done
recv1=$(journalctl -u "$BETA_UNIT" --no-pager --since "@${t0%.*}" -o cat | grep -c ': receiving m1.dat ')
[[ $recv1 == 1 ]] || tb_fail "beta received m1.dat $recv1 times"
rm -rf "$SRC/multi" "$SRC/m.out" "$BETA_IN"/m*.dat
# b last: on 6.1 rxe the device's re-creation after a flap wedges in the
# kernel if an id was destroyed at the wrong time (lib.sh: rdma_link_del),
# and then nothing after it could run. The short delays of the start
# again (d lengthened them).
peers_configure peer_timeout=$T retry_max=30 retry_window=180 retry_delay_max=2
reload_applied "$ALPHA_UNIT" retry_delay_max
tb_log "b. the link goes down for 10 s mid-transfer"
make_file "$SRC/big.dat" $((200 * 1024 * 1024))
rx0=$(netdev_bytes "$nb" rx)
xferctl send "$SRC/big.dat" "$BETA_ADDR" >"$SRC/big.out" 2>&1 &
pid=$!
# 200 MiB take about 5 s here, and the daemons, busy moving them, answer
# xferctl late: watch the wire instead, and cut once 16 MiB have crossed.
wait_for 60 rx_grown "$rx0" $((16 << 20)) || tb_fail "the transfer never got under way"
t0=$(now)
tb_run ip link set "$nb" down
tb_log "link down after $((($(netdev_bytes "$nb" rx) - rx0) >> 20)) MiB crossed"
wait_for 20 has_job big.dat || tb_fail "no job for big.dat"
id=$(job_id big.dat)
# Retrying, or already on its next attempt (which fails too while the link is down).
wait_for $((T + 10)) bash -c "xferctl status $id --json | grep -qE '\"attempt\":([2-9]|[1-9][0-9]),'" ||
        { xferctl status "$id"; tb_fail "job $id was not retried"; }
tb_log "after $(secs "$t0" "$(now)") s: $(xferctl status "$id" | grep -E '^(state|attempt|failure):' | tr '\n' ' ')"
journalctl -u "$ALPHA_UNIT" --no-pager --since "@${t0%.*}" -o cat | grep -E "attempt 1 of" | sed 's/^/    alpha: /' || true
sleep "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { d = 10 - (b - a); print (d > 0 ? d : 0) }')"
link_restore
t1=$(now)
rdma_link_del "$BETA_DEV" || tb_fail "rdma link del $BETA_DEV did not return"
tb_run rdma link add "$BETA_DEV" type rxe netdev "$nb" || tb_fail "rdma link add"
wait_for 30 rdma_active "$BETA_DEV" || tb_fail "$BETA_DEV not ACTIVE"
wait_for 30 beta_back "$t1" || tb_fail "beta did not come back on the new $BETA_DEV"
tb_log "link down $(secs "$t0" "$t1") s; beta listening again $(secs "$t1" "$(now)") s later"
rc=0
timeout 180 tail --pid="$pid" -f /dev/null || { xferctl status "$id"; tb_fail "job $id still not done 180 s after the link came back"; }
wait "$pid" || rc=$?
sed 's/^/    | /' "$SRC/big.out"
((rc == 0)) || { xferctl status "$id"; tb_fail "xferctl send exited $rc: the job did not complete"; }
same_file "$SRC/big.dat" "$BETA_IN/big.dat"
tb_log "done $(secs "$t0" "$(now)") s after the link went down; alpha's entries (attempt result): $(attempts_of big.dat | tr '\n' '|')"
att=$(attempts_of big.dat | tail -n 1)
[[ ${att#* } == ok && ${att% *} -ge 2 ]] || tb_fail "the successful entry has RDMAXFER_ATTEMPT=${att% *}, expected >= 2"
rm -f "$BETA_IN/big.dat"

tb_log "f. one rail of two goes down mid-transfer"
rails_up
rails_configure 2 2 peer_timeout=$T retry_max=30 retry_window=180 retry_delay_max=2
restart_peers
apid=$(systemctl show -P MainPID "$ALPHA_UNIT")
bpid=$(systemctl show -P MainPID "$BETA_UNIT")
nb2=$BETA2_NETDEV
# 40 MiB over this rail, about 80 in all.
rail_send rail.dat "$nb2" 40
tb_run ip link set "$nb2" down
rail_done rail.dat "the rail went down"
jfields_wait "$ALPHA_UNIT" rail.dat
[[ ${JF[RDMAXFER_RAILS_LOST]:-} == "$ALPHA2_DEV" && ${JF[RDMAXFER_RAILS]:-} == "$ALPHA_DEV,$ALPHA2_DEV" ]] ||
        tb_fail "alpha's entry: rails '${JF[RDMAXFER_RAILS]:-}', lost '${JF[RDMAXFER_RAILS_LOST]:-}'"
jfields_wait "$BETA_UNIT" rail.dat
[[ ${JF[RDMAXFER_RAILS_LOST]:-} == "$BETA2_DEV" ]] || tb_fail "beta's entry names no lost rail: '${JF[RDMAXFER_RAILS_LOST]:-}'"
journalctl -u "$BETA_UNIT" --no-pager --since "@${t0%.*}" -o cat | grep -q "joined again over $BETA_DEV" ||
        tb_fail "beta did not say a lane joined again over $BETA_DEV"
# The rail comes back as in b: the link with its routes, the devices re-created.
tb_run ip link set "$nb2" up
tb_run bash "$(dirname "$TESTBED_LIB")/guest/rails.sh" routes
t1=$(now)
for dev in "$ALPHA2_DEV" "$BETA2_DEV"; do
        rdma_link_del "$dev" || tb_fail "rdma link del $dev did not return"
done
tb_run rdma link add "$ALPHA2_DEV" type rxe netdev "$ALPHA2_NETDEV" || tb_fail "rdma link add $ALPHA2_DEV"
tb_run rdma link add "$BETA2_DEV" type rxe netdev "$nb2" || tb_fail "rdma link add $BETA2_DEV"
wait_for 30 beta_back "$t1" || tb_fail "beta did not come back on the new $BETA2_DEV"
wait_for 30 bash -c "journalctl -u '$ALPHA_UNIT' --no-pager --since '@${t1%.*}' | grep -q 'is back: listening'" ||
        tb_fail "alpha did not come back on the new $ALPHA2_DEV"
make_file "$SRC/again.dat" $((16 * 1024 * 1024))
tb_log "$(send_ok "$SRC/again.dat")"
same_file "$SRC/again.dat" "$BETA_IN/again.dat"
jfields_wait "$ALPHA_UNIT" again.dat
[[ ${JF[RDMAXFER_RAILS]:-} == "$ALPHA_DEV,$ALPHA2_DEV" ]] ||
        tb_fail "after the rail came back, the next transfer went over '${JF[RDMAXFER_RAILS]:-}'"
rm -f "$BETA_IN/rail.dat" "$BETA_IN/again.dat"
# Both daemons looked for a device again: fresh ones before h removes one.
fresh_peers

tb_log "h. the second rail's device removed on beta mid-transfer"
# At 20 MB/s: the device's removal takes the kernel a few seconds, and
# the lanes on it must not have ended by then.
rail_send dev.dat "$nb2" 40 --bwlimit 20M
rdma_link_del "$BETA2_DEV" || tb_fail "rdma link del $BETA2_DEV did not return"
rail_done dev.dat "$BETA2_DEV went"
jfields_wait "$BETA_UNIT" dev.dat
[[ ${JF[RDMAXFER_RAILS_LOST]:-} == "$BETA2_DEV" ]] || tb_fail "beta's entry names lost rails '${JF[RDMAXFER_RAILS_LOST]:-}'"
t1=$(now)
tb_run rdma link add "$BETA2_DEV" type rxe netdev "$nb2" || tb_fail "rdma link add $BETA2_DEV"
wait_for 30 beta_back "$t1" || tb_fail "beta did not come back on the new $BETA2_DEV"
rm -f "$BETA_IN/dev.dat"
# Beta looked for a device again: fresh daemons before g removes one.
fresh_peers

tb_log "g. the first rail (the address alpha names beta by) goes down mid-transfer"
rail_send first.dat "$nb" 16
tb_run ip link set "$nb" down
rail_done first.dat "the first rail went down"
journalctl -u "$ALPHA_UNIT" --no-pager --since "@${t0%.*}" -o cat | grep -q "lane 0 lost rail $ALPHA_DEV .* joins again over $ALPHA2_DEV" ||
        tb_fail "alpha did not say lane 0 joined again over $ALPHA2_DEV"
jfields_wait "$ALPHA_UNIT" first.dat
[[ ${JF[RDMAXFER_RAILS_LOST]:-} == "$ALPHA_DEV" ]] || tb_fail "alpha's entry names lost rails '${JF[RDMAXFER_RAILS_LOST]:-}'"
# A new transfer while the first rail is down: lane 0 goes around it.
t0=$(now)
tb_log "$(send_ok "$SRC/again.dat" --as around.dat)"
same_file "$SRC/again.dat" "$BETA_IN/around.dat"
journalctl -u "$ALPHA_UNIT" --no-pager --since "@${t0%.*}" -o cat | grep -q "rail $ALPHA_DEV is down; connecting over $ALPHA2_DEV" ||
        tb_fail "alpha did not say it went around its first rail"
jfields_wait "$ALPHA_UNIT" around.dat
[[ ${JF[RDMAXFER_RAILS]:-} == "$ALPHA2_DEV" ]] || tb_fail "around.dat went over '${JF[RDMAXFER_RAILS]:-}', not $ALPHA2_DEV"
[[ $(systemctl show -P MainPID "$ALPHA_UNIT") == "$apid" && $(systemctl show -P MainPID "$BETA_UNIT") == "$bpid" ]] ||
        tb_fail "a daemon restarted"
link_restore
t1=$(now)
rdma_link_del "$BETA_DEV" || tb_fail "rdma link del $BETA_DEV did not return"
tb_run rdma link add "$BETA_DEV" type rxe netdev "$nb" || tb_fail "rdma link add"
wait_for 30 rdma_active "$BETA_DEV" || tb_fail "$BETA_DEV not ACTIVE"
wait_for 30 beta_back "$t1" || tb_fail "beta did not come back on the new $BETA_DEV"
rm -f "$SRC/big.dat" "$SRC/again.dat" "$BETA_IN/first.dat" "$BETA_IN/around.dat"

tb_log "pass"
