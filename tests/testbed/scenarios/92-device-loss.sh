#!/bin/bash
# The fabric fails under a running transfer, and the daemons ride it out
# with no restart (issues 12 item 2 and 15):
#  1. tb-beta goes down mid-transfer: the job fails on both sides at once,
#     with the port named; both daemons answer xferctl and reload meanwhile.
#     The link comes back with its routes and neighbours (as networkd would
#     put them back) and rxe_beta is re-created (on 6.1 rxe a link that
#     flapped under live queue pairs carries no CM traffic until then, as a
#     driver reload would): beta lets go of the old device, finds the new
#     one by itself, and the next transfer succeeds.
#  2. rxe_beta is removed with the link up (`rdma link del`): the removal
#     completes (beta lets go of the device; it blocks for as long as any
#     process holds it), a job submitted to beta meanwhile waits in the
#     queue, STATUS= says why, and when the device is back the queued job
#     goes out and transfers both ways succeed.
#  3. Part 1 ten times more (issue 32 R1), each drop landing at another
#     moment: 0.2 to 1 s into the data, or (every odd round) while the
#     lanes are going down already: beta's packets are dropped, alpha's
#     transfer fails on the silence (peer_timeout 3 s here), and the link
#     drops the moment alpha logs it, its connections going down with
#     their disconnects unanswered. That is the
#     order that once left ids in DREQ_SENT (a destroy while the port was
#     down) and `rdma link del` hanging. Every round the job fails, both
#     daemons answer, the device is removed and re-created with no wait
#     and beta comes back on it; the kernel logs no
#     cm_destroy_id_wait_timeout.
# Same PIDs and no restarts throughout; nothing partial is published.
# testbed-timeout: 420
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

T=10
# Each loss must fail its job, not be retried (97-retry rides a link flap out).
peers_configure peer_timeout=$T retry_max=0
start_peers
alpha_pid=$(systemctl show -P MainPID "$ALPHA_UNIT")
beta_pid=$(systemctl show -P MainPID "$BETA_UNIT")
nb=$BETA_NETDEV

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
beta_ctl() { xferctl --socket "$BETA_SOCK" "$@"; }

# rdma link del must return: it waits for every process to let go.
device_del() {
        local t0=$SECONDS
        rdma_link_del "$BETA_DEV" ||
                tb_fail "rdma link del $BETA_DEV did not return in 60 s: something still holds the device"
        tb_log "rdma link del took $((SECONDS - t0)) s"
}

device_add() {
        tb_run rdma link add "$BETA_DEV" type rxe netdev "$nb" || tb_fail "rdma link add"
        wait_for 30 rdma_active "$BETA_DEV" || tb_fail "$BETA_DEV not ACTIVE"
}


both_serve() {
        timeout 5 xferctl list >/dev/null || tb_fail "alpha's control socket did not answer"
        timeout 5 xferctl --socket "$BETA_SOCK" list >/dev/null || tb_fail "beta's control socket did not answer"
}

same_daemons() {
        [[ $(systemctl show -P MainPID "$ALPHA_UNIT") == "$alpha_pid" ]] || tb_fail "alpha was restarted"
        [[ $(systemctl show -P MainPID "$BETA_UNIT") == "$beta_pid" ]] || tb_fail "beta was restarted"
        [[ $(systemctl show -P NRestarts "$ALPHA_UNIT") == 0 && $(systemctl show -P NRestarts "$BETA_UNIT") == 0 ]] ||
                tb_fail "a daemon was restarted by systemd"
}

make_zeros "$SRC/big.dat" $((256 * 1024 * 1024))

tb_log "1. the link goes down mid-transfer"
id=$(xferctl send "$SRC/big.dat" "$BETA_ADDR" --no-wait) || tb_fail "submit failed"
id=${id//[^0-9]/}
wait_for 60 job_in_state "$id" sending || tb_fail "job never started sending"
sleep 1
t0=$(now)
tb_run ip link set "$nb" down
both_serve
tb_run systemctl reload "$BETA_UNIT" "$ALPHA_UNIT" || tb_fail "reload while the link is down"
wait_for $((T + 10)) job_in_state "$id" failed || { xferctl status "$id"; tb_fail "job $id did not fail"; }
took=$(secs "$t0" "$(now)")
text=$(xferctl status "$id")
tb_log "job $id failed after $took s: $(grep -E '^text:' <<<"$text")"
grep -qiE "went down|no progress|peer disconnected|device" <<<"$text" || { printf '%s\n' "$text"; tb_fail "no clear reason"; }
wait_for 20 bash -c "journalctl -u $BETA_UNIT -o export RDMAXFER_FILE=big.dat | grep -q '^RDMAXFER_RESULT='" ||
        tb_fail "beta logged no entry for the lost transfer"
[[ $(jfield "$BETA_UNIT" big.dat RDMAXFER_RESULT) != ok ]] || tb_fail "beta says ok"
journalctl -u "$BETA_UNIT" -u "$ALPHA_UNIT" --no-pager --since "@${t0%.*}" | grep -iE "went down|port" | head -n 4
both_serve

tb_log "link back up; the device re-created, as a driver reload would"
link_restore
t1=$(now)
device_del
device_add
wait_for 30 beta_back "$t1" || {
        journalctl -u "$BETA_UNIT" --no-pager --since "@${t0%.*}" | tail -n 20
        tb_fail "beta did not come back on the new $BETA_DEV"
}
tb_log "beta: $(journalctl -u "$BETA_UNIT" --no-pager --since "@${t1%.*}" -o cat | grep -E 'removed|released|is back' | tr '\n' '|')"
incoming_clean "$BETA_IN"
make_file "$SRC/after1.dat" 5000000
send_ok "$SRC/after1.dat"
same_file "$SRC/after1.dat" "$BETA_IN/after1.dat"
same_daemons

tb_log "2. the device is removed with the link up"
id=$(xferctl send "$SRC/big.dat" "$BETA_ADDR" --no-wait) || tb_fail "submit failed"
id=${id//[^0-9]/}
wait_for 60 job_in_state "$id" sending || tb_fail "job never started sending"
sleep 1
t2=$(now)
device_del
wait_for $((T + 10)) job_in_state "$id" failed || { xferctl status "$id"; tb_fail "job $id did not fail"; }
tb_log "job $id failed after $(secs "$t2" "$(now)") s: $(xferctl status "$id" | grep -E '^text:')"
wait_for 10 bash -c "journalctl -u $BETA_UNIT --no-pager --since @${t2%.*} | grep -q 'RDMA device $BETA_DEV removed'" ||
        tb_fail "beta did not log the removal"
status=$(systemctl show -P StatusText "$BETA_UNIT")
tb_log "beta STATUS=$status"
grep -q "no RDMA device" <<<"$status" || tb_fail "beta's STATUS= does not say the device is gone"
make_file "$SRC/queued.dat" 3000000
qid=$(beta_ctl send "$SRC/queued.dat" "$ALPHA_ADDR" --no-wait) || tb_fail "submit to beta failed while its device is gone"
qid=${qid//[^0-9]/}
sleep 2
beta_ctl status "$qid" | grep -qiE "state:? *queued" || { beta_ctl status "$qid"; tb_fail "beta's job did not wait in the queue"; }
both_serve
device_add
wait_for 30 beta_back "$t2" || tb_fail "beta did not come back"
wait_for 60 bash -c "xferctl --socket $BETA_SOCK status $qid | grep -qiE 'state:? *(done|failed)'" || tb_fail "beta's queued job never ran"
beta_ctl status "$qid" | grep -qiE "state:? *done" || { beta_ctl status "$qid"; tb_fail "beta's queued job failed"; }
same_file "$SRC/queued.dat" "$ALPHA_IN/queued.dat"
incoming_clean "$BETA_IN" after1.dat
make_file "$SRC/after2.dat" 4000000
send_ok "$SRC/after2.dat"
same_file "$SRC/after2.dat" "$BETA_IN/after2.dat"
same_daemons
rm -f "$SRC"/*.dat "$BETA_IN"/* "$ALPHA_IN"/queued.dat

tb_log "3. ten more link drops, each at another moment"
wedged() { dmesg | grep -c cm_destroy_id_wait_timeout || true; }
backs() { journalctl -u "$BETA_UNIT" --no-pager -o cat --since "@${t0%.*}" | grep -c "is back: listening" || true; }
backs_over() { (($(backs) > $1)); }
# alpha_gave_up ID: alpha logged that transfer ID failed; alpha_why ID: why.
alpha_log() { journalctl -u "$ALPHA_UNIT" --no-pager -o cat -n 30; }
alpha_gave_up() { [[ $(alpha_log) == *"transfer $1: send of r.dat to "*" failed: "* ]]; }
alpha_why() { alpha_log | sed -n "s/^transfer $1: send of r\.dat to .* failed: //p" | tail -n 1; }
wedges0=$(wedged)
# A deadline of 3 s: alpha gives up on a silent beta, and starts taking
# its connections down, 3 s after beta's packets stop.
sed -i "s/^peer_timeout = $T\$/peer_timeout = 3/" "$ALPHA_CONF" "$BETA_CONF"
reload_applied "$ALPHA_UNIT" "$BETA_UNIT" peer_timeout
make_file "$SRC/r.dat" $((64 * 1024 * 1024))
for ((round = 1; round <= 10; round++)); do
        # A new mtime: what beta kept of the last round is not resumed.
        touch "$SRC/r.dat"
        # 4 s at least, so that every drop lands inside the data.
        id=$(xferctl send "$SRC/r.dat" "$BETA_ADDR" --bwlimit 16M --no-wait) || tb_fail "round $round: submit failed"
        id=${id//[^0-9]/}
        wait_for 60 job_in_state "$id" sending || tb_fail "round $round: job never started sending"
        if ((round % 2)); then
                # beta's packets dropped: alpha's transfer fails on the
                # silence, and the link drops the moment alpha says so,
                # while its connections are going down with their
                # disconnects unanswered.
                tc qdisc add dev "$nb" root netem loss 100% || tb_fail "round $round: netem"
                wait_for 20 alpha_gave_up "$id" || tb_fail "round $round: alpha's transfer did not fail"
                ip link set "$nb" down
                how="as alpha's connections went down ($(alpha_why "$id"))"
                tc qdisc del dev "$nb" root
        else
                d=$(awk -v r="$round" 'BEGIN { printf "%.1f", r / 10 }')
                sleep "$d"
                ip link set "$nb" down
                how="$d s into the data"
        fi
        wait_for 20 job_in_state "$id" failed || { xferctl status "$id"; tb_fail "round $round: job $id did not fail"; }
        both_serve
        n=$(backs)
        link_restore
        device_del
        device_add
        wait_for 30 backs_over "$n" ||
                tb_fail "round $round: beta did not come back on the new $BETA_DEV"
        tb_log "round $round: link dropped $how; device re-created, beta back"
        # Where beta had all of it before its answers were lost, it published it.
        rm -f "$BETA_IN/r.dat"
done
n=$(($(wedged) - wedges0))
((n == 0)) || tb_fail "the kernel logged cm_destroy_id_wait_timeout $n time(s) in part 3: an id stuck in DREQ_SENT"
make_file "$SRC/after3.dat" 3000000
send_ok "$SRC/after3.dat"
same_file "$SRC/after3.dat" "$BETA_IN/after3.dat"
incoming_clean "$BETA_IN" after3.dat
same_daemons
rm -f "$SRC"/*.dat "$BETA_IN"/*
tb_log "kernel: $(wedged) cm_destroy_id_wait_timeout line(s) during the scenario"
tb_log "pass"
