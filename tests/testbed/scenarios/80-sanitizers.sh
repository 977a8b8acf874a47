#!/bin/bash
# rdmaxferd and xferctl built with ASan+UBSan (tests/run's build-asan,
# staged by the testbed) through every way the daemon tears down: (a) start,
# transfers both ways, stop; (b) SIGTERM mid-transfer, receiving and sending;
# (c) a second SIGTERM while stopping with transfers live (the abort, exit
# 1); (d) a start-up that fails after the ring is registered. Each path must
# leave no ASan, LeakSanitizer or UBSan report, and teardown-audit.so (in
# each daemon) must see no verbs destroy fail and no verbs object or
# descriptor left at exit, which LSan cannot see. First each check is shown
# to fire here on a deliberate fault: a check that cannot fail proves nothing.
# testbed-timeout: 420
# shellcheck source=tests/testbed/lib.sh
. "$TESTBED_LIB"

[[ -n ${TESTBED_SANITIZE:-} ]] ||
        tb_skip "no sanitizer build staged (RDMAXFER_SANITIZE_BUILD_DIR; tests/run sets it)"

SAN=$TESTBED_SANITIZE
# The daemons run as root outside systemd (no unit sandbox to get in ASan's
# way, no LimitMEMLOCK), each with its own config, socket and directories.
W=/var/tmp/rdmaxfer-san
declare -A PID=() ERR=() ADDR=([alpha]=$ALPHA_ADDR [beta]=$BETA_ADDR)
declare -A NETDEV=([alpha]=$ALPHA_NETDEV [beta]=$BETA_NETDEV)
# LeakSanitizer cannot see a connection left alive (librdmacm's global table
# of cm_ids keeps it reachable) nor an open descriptor: this counts them.
AUDIT=$SAN/teardown-audit.so
LOG=""                          # the current path's sanitizer log directory
FINDINGS=()                     # "path: what", one per problem found
STOPPED=()                      # processes this script froze with SIGSTOP

cleanup() {
        local p
        for p in "${STOPPED[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
        for p in "${PID[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# Leaks are reported at exit; every report goes to a file in $LOG (one per
# process, named by pid) and the exit status 23 marks a process that made one.
san_path() {
        LOG=$W/logs/$1
        mkdir -p "$LOG"
        export ASAN_OPTIONS="detect_leaks=1:log_path=$LOG/asan:exitcode=23:abort_on_error=0:halt_on_error=1:handle_abort=1"
        export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$LOG/ubsan:exitcode=23"
        tb_log "---- path $1"
}

# Strings that mark a sanitizer finding (LSan's fatal error: it could not check).
SAN_PATTERN='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|LeakSanitizer has encountered a fatal error|Sanitizer CHECK failed'

finding() {
        tb_log "FINDING: $1: $2" >&2
        FINDINGS+=("$1: $2")
}

# san_check PATH: every sanitizer log in $LOG is a finding; shown here (the
# head of each and its summary) and kept in full in $TESTBED_SHARE.
san_check() {
        local path=$1 f pid who n
        shopt -s nullglob
        local logs=("$LOG"/asan.* "$LOG"/ubsan.*)
        shopt -u nullglob
        mkdir -p "$TESTBED_SHARE/$path"
        cp -a "$LOG/." "$TESTBED_SHARE/$path/"
        if ((${#logs[@]} == 0)); then
                tb_log "path $path: no sanitizer reports"
                return 0
        fi
        for f in "${logs[@]}"; do
                pid=${f##*.}
                who=$(sed -n "s/^$pid //p" "$LOG/pids" 2>/dev/null)
                n=$(grep -cE "$SAN_PATTERN" "$f" || true)
                finding "$path" "${who:-pid $pid}: $n sanitizer error(s) in ${f##*/}: $(grep -m1 '^SUMMARY' "$f" || grep -m1 -E "$SAN_PATTERN" "$f" || head -n 1 "$f")"
                sed -n '1,80{s/^/    | /;p}' "$f" >&2
                (($(wc -l <"$f") <= 80)) || tb_log "    ... $(wc -l <"$f") lines in all: $TESTBED_SHARE/$path/${f##*/}" >&2
        done
}

# The ASan xferctl, talking to daemon NAME.
xc() {
        local name=$1
        shift
        "$SAN/xferctl" --socket "$W/$name/control.sock" "$@"
}

# san_config NAME [key=value...]: NAME's config, listening on its address.
san_config() {
        local name=$1 kv
        shift
        mkdir -p "$W/$name/in"
        {
                echo "listen = ${ADDR[$name]:-$ALPHA_ADDR}"
                echo "incoming_dir = $W/$name/in"
                echo "control_socket = $W/$name/control.sock"
                for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}"; done
        } >"$W/$name/conf"
}

# san_start NAME...: start each daemon NAME in the background, then wait
# for their sockets (they come up side by side: an ASan daemon takes
# seconds to register its rings under TCG).
san_start() {
        local name
        for name; do
                # A socket left by an aborted run would look like readiness.
                rm -f "$W/$name/control.sock"
                ERR[$name]=$(mktemp "$LOG/$name.XXXX.stderr")
                LD_PRELOAD=$AUDIT "$SAN/rdmaxferd" --config "$W/$name/conf" >"${ERR[$name]}" 2>&1 &
                PID[$name]=$!
                echo "${PID[$name]} rdmaxferd $name" >>"$LOG/pids"
        done
        for name; do
                if ! wait_for 60 test -S "$W/$name/control.sock"; then
                        sed 's/^/    | /' "${ERR[$name]}" >&2
                        tb_fail "rdmaxferd $name did not come up"
                fi
        done
}

rc_note() {
        if (($1 == 23)); then echo " (23: it made a sanitizer report)"; fi
}

gone() {
        [[ ! -e /proc/$1 || $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) == Z ]]
}

# san_reap NAME WANT: wait for daemon NAME to exit; its status must be WANT.
san_reap() {
        local name=$1 want=$2 pid=${PID[$1]} rc=0
        wait_for 60 gone "$pid" || { kill -KILL "$pid"; finding "$CUR" "rdmaxferd $name did not exit within 60 s"; }
        wait "$pid" || rc=$?
        unset "PID[$name]"
        tb_log "rdmaxferd $name exited $rc"
        ((rc == want)) || finding "$CUR" "rdmaxferd $name exited $rc, expected $want$(rc_note "$rc")"
        audit_check "rdmaxferd $name" "${ERR[$name]}"
}

# audit_check WHO STDERR: teardown-audit's lines (and any verbs teardown error the
# daemon logged itself; it does not check ibv_dealloc_pd's result today).
audit_check() {
        local line
        while read -r line; do
                finding "$CUR" "$1: $line"
        done < <(grep -E 'teardown-audit:|ibv_dealloc_pd' "$2" || true)
}

# san_stop NAME WANT: SIGTERM, then san_reap.
san_stop() {
        tb_run kill -TERM "${PID[$1]}"
        san_reap "$1" "$2"
}

# rx_grown NAME FROM BYTES: NAME's netdev has received BYTES since its
# counter read FROM.
rx_grown() {
        (($(netdev_bytes "${NETDEV[$1]}" rx) - $2 >= $3))
}

# mid_transfer FROM TO FILE: FROM sends FILE to TO in the background (xferctl's
# pid in XPID, its output in XOUT) and at least 16 MiB have crossed on return.
# The wire is watched rather than the job: the ASan xferctl takes seconds to
# answer here, while 30 MB/s go by.
mid_transfer() {
        local from=$1 to=$2 file=$3 rx0
        XOUT=$LOG/xferctl-$from-to-$to.out
        rx0=$(netdev_bytes "${NETDEV[$to]}" rx)
        xc "$from" send "$file" "${ADDR[$to]}" >"$XOUT" 2>&1 &
        XPID=$!
        echo "$XPID xferctl send on $from" >>"$LOG/pids"
        wait_for 120 rx_grown "$to" "$rx0" $((16 << 20)) || tb_fail "$from: no transfer under way"
        tb_log "$from -> $to: $((($(netdev_bytes "${NETDEV[$to]}" rx) - rx0) >> 20)) MiB of $(($(stat -c %s "$file") >> 20)) MiB crossed"
}

# xferctl_failed: the background send must have failed (an interrupted transfer).
xferctl_failed() {
        local rc=0
        wait "$XPID" || rc=$?
        tb_log "xferctl: $(tail -n 1 "$XOUT") (exit $rc)"
        ((rc != 0)) || finding "$CUR" "the transfer finished before the signal: not a mid-transfer stop"
}

# stderr_has NAME PATTERN: in the stderr of daemon NAME's latest run.
stderr_has() {
        grep -qE "$2" "${ERR[$1]}"
}

systemctl stop 'rdmaxferd*' 2>/dev/null || true
rm -rf "$W"
mkdir -p "$W/src"

# ------------------------------------------------ the checks can fail
CUR=canary
san_path canary
for what in leak ub heap; do
        "$SAN/sanitizer-canary" "$what" >/dev/null 2>&1 || true
done
# (LSan off: libibverbs' own memory is left behind on purpose too.)
LD_PRELOAD=$AUDIT ASAN_OPTIONS=detect_leaks=0 "$SAN/sanitizer-canary" teardown >/dev/null 2>"$LOG/teardown.stderr" || true
for want in "ibv_dealloc_pd failed: Device or resource busy" "1 PD(s) still alive" "1 MR(s) still alive" \
            "still open at exit: /dev/null"; do
        grep -qF "$want" "$LOG/teardown.stderr" ||
                { cat "$LOG/teardown.stderr" >&2; tb_fail "teardown-audit.so did not report '$want' for sanitizer-canary teardown"; }
done
audit_check canary "$LOG/teardown.stderr" >/dev/null 2>&1
((${#FINDINGS[@]} == 4)) || tb_fail "the checks found ${#FINDINGS[@]} of sanitizer-canary's 4 teardown faults"
FINDINGS=()
for want in "ERROR: LeakSanitizer" "runtime error:" "ERROR: AddressSanitizer: heap-buffer-overflow"; do
        f=$(grep -lsE "$want" "$LOG"/asan.* "$LOG"/ubsan.* | head -n 1) || true
        [[ -n $f ]] ||
                tb_fail "sanitizer-canary's '$want' left no report in $LOG: the checks below would pass whatever happened"
        grep -qE "$SAN_PATTERN" "$f" || tb_fail "the checks do not recognise a '$want' report"
done
tb_log "leaks, UB, a heap overflow, verbs objects freed in the wrong order or never and an fd left open are all reported here, and the checks see them"

head -c $((1024 * 1024 * 3 + 12345)) /dev/urandom >"$W/src/odd.dat"
head -c $((24 * 1024 * 1024)) /dev/urandom >"$W/src/mid.dat"
# Sparse (holes left out, wire.h version 16): data at the start and at
# 13 MiB + 1000, holes between and after.
truncate -s $((40 * 1024 * 1024)) "$W/src/holes.dat"
head -c $((2 * 1024 * 1024)) /dev/urandom | dd of="$W/src/holes.dat" conv=notrunc status=none
head -c 70000 /dev/urandom | dd of="$W/src/holes.dat" bs=64K iflag=fullblock oflag=seek_bytes seek=$((13 * 1024 * 1024 + 1000)) conv=notrunc status=none
printf x >"$W/src/one.dat"
# Only ever cut off mid-way, so its contents do not matter: allocated, never
# written, free to read (not a hole: holes are not sent).
fallocate -l 1G "$W/src/big.dat"

# ------------------------------------------------ (a) start, transfers, stop
CUR="a-transfers"
san_path "$CUR"
# An interrupted transfer must fail, not be retried (97-retry retries).
san_config alpha retry_max=0
san_config beta retry_max=0 relay=yes tree_delete=yes
san_start alpha beta
for dir in "alpha beta" "beta alpha"; do
        from=${dir% *} to=${dir#* }
        for f in one.dat odd.dat mid.dat holes.dat; do
                out=$(xc "$from" send "$W/src/$f" "${ADDR[$to]}" --as "$from-$f" 2>&1) ||
                        { printf '%s\n' "$out" >&2; tb_fail "$from -> $to: sending $f failed"; }
                cmp -s "$W/src/$f" "$W/$to/in/$from-$f" || tb_fail "$to: $from-$f differs from $f"
        done
        tb_log "$from -> $to: $(printf '%s\n' "$out" | tail -n 1)"
        xc "$from" list >/dev/null || tb_fail "xferctl list on $from"
done
# A tree: packs (small files, a directory, symlinks; received into memory)
# and a file too large to pack, offered alone.
t=$W/src/tree
rm -rf "$t" && mkdir -p "$t/d/e"
for i in 1 2 3 4 5; do head -c $((i * 3001)) /dev/urandom >"$t/d/f$i"; done
head -c $((5 << 20)) /dev/urandom >"$t/large.bin"
ln -s d/f1 "$t/l1"
ln -s ../f2 "$t/d/e/l2"
out=$(xc alpha send -r "$t" "${ADDR[beta]}" --to san-tree 2>&1) ||
        { printf '%s\n' "$out" >&2; tb_fail "alpha -> beta: sending a tree failed"; }
diff -r --no-dereference "$t" "$W/beta/in/san-tree" >&2 || tb_fail "beta: san-tree differs from the source"
tb_log "alpha -> beta: $(printf '%s\n' "$out" | tail -n 1)"
# The same tree synced with --delete (recv-sync.c, incoming.c's keep and
# prune): a file added, one dropped, beta's own extras gone.
head -c 4000 /dev/urandom >"$t/d/new"
rm "$t/d/f5"
mkdir -p "$W/beta/in/san-tree/extra/sub"
echo x >"$W/beta/in/san-tree/extra/sub/x"
echo y >"$W/beta/in/san-tree/d/e/y"
# First a dry run of it (recv-dry.c, the GONEs): said, nothing moved.
out=$(xc alpha send -r "$t" "${ADDR[beta]}" --to san-tree --sync=size --delete -n -i 2>&1) ||
        { printf '%s\n' "$out" >&2; tb_fail "alpha -> beta: the dry run of syncing the tree failed"; }
[[ $(grep -c '^\*deleting ' <<<"$out") == 5 && -e $W/beta/in/san-tree/d/f5 && ! -e $W/beta/in/san-tree/d/new ]] ||
        tb_fail "alpha -> beta: the dry run did not list 5 deletions, or moved something: $out"
tb_log "alpha -> beta, --sync=size --delete -n -i: $(grep -c . <<<"$out") lines, nothing moved"
out=$(xc alpha send -r "$t" "${ADDR[beta]}" --to san-tree --sync=size --delete 2>&1) ||
        { printf '%s\n' "$out" >&2; tb_fail "alpha -> beta: syncing the tree with --delete failed"; }
diff -r --no-dereference "$t" "$W/beta/in/san-tree" >&2 || tb_fail "beta: san-tree differs from the source after --delete"
[[ $out == *"5 deleted"* ]] || tb_fail "alpha -> beta: --delete did not say 5 deleted (d/f5, d/e/y, extra and its 2): $out"
tb_log "alpha -> beta, --sync=size --delete: $(printf '%s\n' "$out" | tail -n 1)"
# A relay chain through beta and back to alpha (relay.c under the
# sanitizers): both publish it.
out=$(xc alpha send "$W/src/one.dat" "${ADDR[beta]},${ADDR[alpha]}" --as chain.dat 2>&1) ||
        { printf '%s\n' "$out" >&2; tb_fail "alpha -> beta -> alpha: the chain failed"; }
cmp -s "$W/src/one.dat" "$W/beta/in/chain.dat" && cmp -s "$W/src/one.dat" "$W/alpha/in/chain.dat" ||
        tb_fail "the chain's copies differ from one.dat"
tb_log "alpha -> beta -> alpha, a chain: $(printf '%s\n' "$out" | tail -n 1)"
# To a NODELIST as a star (the same peer twice): one send publishes, the
# other meets "exists"; partial, 23.
rc=0
out=$(xc alpha send "$W/src/one.dat" "${ADDR[beta]},${ADDR[beta]}" --parallel 2 --as fan.dat 2>&1) || rc=$?
((rc == 23)) || { printf '%s\n' "$out" >&2; tb_fail "a NODELIST with one peer refusing: exit $rc, not 23"; }
cmp -s "$W/src/one.dat" "$W/beta/in/fan.dat" || tb_fail "beta: fan.dat differs from one.dat"
tb_log "alpha -> beta twice: $(printf '%s\n' "$out" | tail -n 1)"
san_stop alpha 0
san_stop beta 0
san_check "$CUR"

# ------------------------------------------------ (b) SIGTERM mid-transfer
CUR="b-sigterm"
san_path "$CUR"
san_start alpha beta
tb_log "SIGTERM to the receiver mid-transfer"
mid_transfer alpha beta "$W/src/big.dat"
san_stop beta 0
xferctl_failed
san_start beta
tb_log "SIGTERM to the sender mid-transfer"
mid_transfer alpha beta "$W/src/big.dat"
san_stop alpha 0
xferctl_failed
# beta has seen its sender vanish; it must still stop cleanly.
san_stop beta 0
[[ ! -e $W/beta/in/big.dat ]] || tb_fail "beta published a cut-off transfer"
# A relay stopped mid-chain (alpha -> beta -> alpha): its receive fails,
# and the send it relays on is cancelled with it (relay.c).
san_start alpha beta
tb_log "SIGTERM to a relay mid-chain"
XOUT=$LOG/xferctl-chain.out
rx0=$(netdev_bytes "${NETDEV[beta]}" rx)
xc alpha send "$W/src/big.dat" "${ADDR[beta]},${ADDR[alpha]}" --as chain-big.dat >"$XOUT" 2>&1 &
XPID=$!
echo "$XPID xferctl send on alpha" >>"$LOG/pids"
wait_for 120 rx_grown beta "$rx0" $((16 << 20)) || tb_fail "alpha: no chain under way"
san_stop beta 0
xferctl_failed
san_stop alpha 0
[[ ! -e $W/beta/in/chain-big.dat && ! -e $W/alpha/in/chain-big.dat ]] || tb_fail "a cut-off chain published something"
san_check "$CUR"

# ------------------------------------------------ (c) a second SIGTERM: abort
# The peer is frozen (SIGSTOP) so that it cannot answer the hang-up: the
# stopping daemon waits for it (linger, seconds), which is when the second
# SIGTERM must land.
abort_while_stopping() {
        local victim=$1 peer=$2
        tb_run kill -STOP "${PID[$peer]}"
        STOPPED+=("${PID[$peer]}")
        tb_run kill -TERM "${PID[$victim]}"
        wait_for 30 stderr_has "$victim" 'stopping \(a second one exits at once\)' ||
                tb_fail "$victim did not start stopping"
        if gone "${PID[$victim]}"; then
                finding "$CUR" "$victim stopped before a second SIGTERM could reach it"
                san_reap "$victim" 0
        else
                tb_run kill -TERM "${PID[$victim]}"
                san_reap "$victim" 1
                stderr_has "$victim" 'TERM again while stopping' ||
                        finding "$CUR" "$victim did not take the abort path (no 'TERM again while stopping')"
        fi
        tb_run kill -CONT "${PID[$peer]}"
        STOPPED=()
        xferctl_failed
}

CUR="c-abort"
san_path "$CUR"
san_start alpha beta
tb_log "abort on the receiver (its sender frozen)"
mid_transfer alpha beta "$W/src/big.dat"
abort_while_stopping beta alpha
san_start beta
tb_log "abort on the sender (its receiver frozen)"
mid_transfer alpha beta "$W/src/big.dat"
abort_while_stopping alpha beta
# beta lost its sender mid-transfer; a normal stop of it must still be clean.
san_stop beta 0
san_check "$CUR"

# ------------------------------------------------ (d) start-up fails after registering
# control_new() runs after engine_new() registered the ring and jobs_new():
# a regular file where the socket should be fails it.
CUR="d-startfail"
san_path "$CUR"
san_config regfail
: >"$W/regfail/control.sock"
rc=0
ERR[regfail]=$LOG/regfail.stderr
LD_PRELOAD=$AUDIT "$SAN/rdmaxferd" --config "$W/regfail/conf" >"${ERR[regfail]}" 2>&1 || rc=$?
tb_log "rdmaxferd regfail exited $rc: $(grep -m1 'cannot open the control socket' "${ERR[regfail]}")"
stderr_has regfail 'receive ring .* send pool' ||
        { sed 's/^/    | /' "${ERR[regfail]}" >&2; tb_fail "regfail did not get as far as registering the ring"; }
stderr_has regfail 'control: .* exists and is not a socket' ||
        { sed 's/^/    | /' "${ERR[regfail]}" >&2; tb_fail "regfail did not fail on the control socket"; }
((rc == 1)) || finding "$CUR" "rdmaxferd regfail exited $rc, expected 1$(rc_note "$rc")"
audit_check "rdmaxferd regfail" "${ERR[regfail]}"
san_check "$CUR"

# ------------------------------------------------ verdict
rm -rf "$W"
if ((${#FINDINGS[@]})); then
        tb_log "findings (the logs come back in the run's share/out/share/):"
        printf '  %s\n' "${FINDINGS[@]}"
        tb_fail "${#FINDINGS[@]} finding(s)"
fi
tb_log "every path clean under ASan, LeakSanitizer, UBSan and teardown-audit"
