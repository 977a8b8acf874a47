#!/bin/bash
# A file that never answers does not freeze the daemon. stuckfs
# (tests/tools) is a FUSE file system whose files stop answering the
# daemon's user: xferctl (root) opens and stats them, the daemon's statx or
# reads then wait for ever. Meanwhile alpha answers `xferctl list` and
# sends another file; the stuck submit fails by io_timeout, the stuck job
# fails by io_timeout ("reading the file: no progress for 5 s") or is
# cancelled, and stop completes (once the kernel lets go of a read no one
# can interrupt). On beta, on a small tmpfs: an offer that would eat into
# min_free is refused with its reason before data moves, an overwrite
# replaces the file and leaves no .part, and a .part left by a crash is
# removed at start-up.
# testbed-timeout: 420
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

STUCKFS=/usr/libexec/rdmaxfer-tests/stuckfs
MNT=/run/stuckfs
T=5

[[ -x $STUCKFS ]] || tb_skip "stuckfs is not installed (built only with libfuse3-dev on the build host)"
modprobe fuse 2>/dev/null || true
[[ -c /dev/fuse ]] || tb_skip "no /dev/fuse in the guest"
daemon_uid=$(id -u rdmaxfer) || tb_fail "no rdmaxfer user"

sf_pid=
cleanup() {
        if [[ -n $sf_pid ]]; then
                kill -KILL "$sf_pid" 2>/dev/null || true
        fi
        umount -l "$MNT" 2>/dev/null || true
        stop_peers
        umount -l "$BETA_IN" 2>/dev/null || true
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
within() { awk -v t="$1" -v lim="$2" 'BEGIN { exit !(t <= lim) }'; }

# list_answers: alpha's control socket answers at once.
list_answers() {
        local t0 took
        t0=$(now)
        timeout 3 xferctl list >/dev/null || tb_fail "xferctl list did not answer within 3 s"
        took=$(secs "$t0" "$(now)")
        tb_log "xferctl list answered in ${took} s"
}

submit() {
        local id
        id=$(xferctl send "$@" --no-wait) || tb_fail "submit of $1 failed"
        printf '%s\n' "${id//[^0-9]/}"
}

reason() {
        xferctl status "$1" | grep -iE 'error|text|reason|failed|cancel' | head -n 1
}

mkdir -p "$MNT"
"$STUCKFS" "$MNT" "$daemon_uid" 2>/var/tmp/stuckfs.log &
sf_pid=$!
wait_for 10 test -e "$MNT/ok" || { cat /var/tmp/stuckfs.log; tb_fail "stuckfs did not mount"; }

peers_configure io_timeout=$T
# Beta receives on a 64 MiB tmpfs with a 40 MiB floor, overwriting.
printf 'min_free = 40M\noverwrite = yes\n' >>"$BETA_CONF"
mkdir -p "$BETA_IN"
mount -t tmpfs -o size=64M,mode=0750 rdmaxfer-test "$BETA_IN"
chown rdmaxfer:rdmaxfer "$BETA_IN"
# What a crash between an overwrite's link and rename leaves behind.
touch "$BETA_IN/.rdmaxfer-123.part" "$BETA_IN/.rdmaxfer-x.part"
chown rdmaxfer:rdmaxfer "$BETA_IN"/.rdmaxfer-*
start_peers

tb_log "a .part left by a crash is removed at start-up, and nothing else"
[[ ! -e $BETA_IN/.rdmaxfer-123.part ]] || tb_fail ".rdmaxfer-123.part is still there"
[[ -e $BETA_IN/.rdmaxfer-x.part ]] || tb_fail ".rdmaxfer-x.part (not our pattern) was removed"
journalctl -u "$BETA_UNIT" --no-pager | grep -q 'removed .rdmaxfer-123.part' ||
        tb_fail "beta did not log the removal"
rm -f "$BETA_IN/.rdmaxfer-x.part"

tb_log "a file whose stat never answers: the submit fails by io_timeout, alpha answers meanwhile"
t0=$(now)
xferctl send "$MNT/stuck-stat" "$BETA_ADDR" --no-wait >/var/tmp/stuck-stat.out 2>&1 &
spid=$!
sleep 1
list_answers
rc=0
wait "$spid" || rc=$?
took=$(secs "$t0" "$(now)")
cat /var/tmp/stuck-stat.out
((rc != 0)) || tb_fail "the submit of a file that never answers succeeded"
grep -q "checking the file: no answer within $T s" /var/tmp/stuck-stat.out ||
        tb_fail "the submit failed without the reason"
within "$took" $((T + 5)) || tb_fail "the submit took ${took} s to fail"
tb_log "the submit failed after ${took} s"

tb_log "the same file as the second of a job: its check never answers, the job fails by io_timeout"
t0=$(now)
rc=0
out=$(xferctl send "$MNT/ok" "$MNT/stuck-stat" "$BETA_ADDR" --retries 0 2>&1) || rc=$?
took=$(secs "$t0" "$(now)")
printf '%s\n' "$out"
((rc != 0)) || tb_fail "a job whose second file never answers succeeded"
grep -q "file 2: a file handed over did not answer a stat within io_timeout" <<<"$out" ||
        tb_fail "the job failed without the reason"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat | grep -q "a file of uid .* did not answer a stat within $T s" ||
        tb_fail "alpha did not log the file that did not answer"
within "$took" $((T + 15)) || tb_fail "the job took ${took} s to fail"
list_answers
rm -f "$BETA_IN/ok"
tb_log "the job failed after ${took} s"

tb_log "a read that never answers: the job fails by io_timeout; another transfer runs meanwhile"
t0=$(now)
id=$(submit "$MNT/stuck-read" "$BETA_ADDR")
wait_for 30 job_in_state "$id" sending || { xferctl status "$id"; tb_fail "job $id never started sending"; }
list_answers
make_file "$SRC/other.dat" 5000000
send_ok "$SRC/other.dat"
same_file "$SRC/other.dat" "$BETA_IN/other.dat"
wait_for $((T + 20)) job_in_state "$id" failed || { xferctl status "$id"; tb_fail "job $id did not fail"; }
took=$(secs "$t0" "$(now)")
xferctl status "$id" | grep -q "reading the file: no progress for $T s" ||
        { xferctl status "$id"; tb_fail "job $id failed without the reason"; }
tb_log "job $id failed after ${took} s: $(reason "$id")"
grep -q interrupted /var/tmp/stuckfs.log || tb_fail "the daemon's reads were not interrupted (cancelled)"

tb_log "a read that never answers: xferctl cancel ends the job"
id=$(submit "$MNT/stuck-read" "$BETA_ADDR" --as stuck2.dat)
wait_for 30 job_in_state "$id" sending || tb_fail "job $id never started sending"
t0=$(now)
tb_run xferctl cancel "$id" || tb_fail "cancel failed"
wait_for 15 job_in_state "$id" cancelled || { xferctl status "$id"; tb_fail "job $id not cancelled"; }
tb_log "cancelled after $(secs "$t0" "$(now)") s"

tb_log "min_free: an offer that would eat into the floor is refused before data moves"
make_file "$SRC/big.dat" $((30 * 1024 * 1024))
send_fails "$SRC/big.dat" "min_free"
[[ ! -e $BETA_IN/big.dat ]] || tb_fail "big.dat was published"
make_file "$SRC/fits.dat" $((10 * 1024 * 1024))
send_ok "$SRC/fits.dat"
same_file "$SRC/fits.dat" "$BETA_IN/fits.dat"

tb_log "overwrite: the name holds the new file, and no .part is left"
make_file "$SRC/dup1" 100000
make_file "$SRC/dup2" 200000
send_ok "$SRC/dup1" --as dup.dat
send_ok "$SRC/dup2" --as dup.dat
same_file "$SRC/dup2" "$BETA_IN/dup.dat"
incoming_clean "$BETA_IN" other.dat fits.dat dup.dat

tb_log "a read the kernel cannot interrupt: the job still fails by io_timeout, stop still ends"
id=$(submit "$MNT/hard-read" "$BETA_ADDR" --as hard.dat)
wait_for 30 job_in_state "$id" sending || tb_fail "job $id never started sending"
wait_for $((T + 20)) job_in_state "$id" failed || { xferctl status "$id"; tb_fail "job $id did not fail"; }
xferctl status "$id" | grep -q "reading the file: no progress for $T s" ||
        { xferctl status "$id"; tb_fail "job $id failed without the reason"; }
list_answers
send_ok "$SRC/dup1" --as after-hard.dat
pid=$(systemctl show -P MainPID "$ALPHA_UNIT")
t0=$(now)
tb_run systemctl stop --no-block "$ALPHA_UNIT"
# The daemon does its part within seconds and leaves the read to the kernel.
wait_for 20 bash -c "journalctl -u $ALPHA_UNIT --no-pager | grep -q 'not given up by the kernel'" ||
        tb_fail "alpha did not finish its teardown"
wait_for 10 bash -c "journalctl -u $ALPHA_UNIT --no-pager | grep -q 'rdmaxferd stopped'" ||
        tb_fail "alpha did not log its stop"
tb_log "alpha's teardown done after $(secs "$t0" "$(now)") s; process $pid $(kill -0 "$pid" 2>/dev/null &&
        echo "held by the kernel" || echo gone)"
tb_run kill -KILL "$sf_pid"
sf_pid=
umount -l "$MNT" 2>/dev/null || true
wait_for 30 bash -c "! systemctl is-active --quiet $ALPHA_UNIT" || tb_fail "alpha did not stop"
systemctl is-failed --quiet "$ALPHA_UNIT" && tb_fail "alpha stopped as failed"
tb_log "alpha stopped after $(secs "$t0" "$(now)") s"
tb_run systemctl start "$ALPHA_UNIT" || tb_fail "alpha did not start again"
send_ok "$SRC/dup1" --as after-restart.dat
same_file "$SRC/dup1" "$BETA_IN/after-restart.dat"
