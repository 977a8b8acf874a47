#!/bin/bash
# Local users share the control socket and cannot take it over or see into
# each other's jobs: a user sees only their own jobs (root and admin_group
# see all), a user over the per-user queue or connection limit gets a clear
# refusal while another still gets in, a connection with no request is
# closed after client_idle_timeout while one that watches a job is not, and
# a reload applies a new limit.
# Alpha's one transfer slot is held by a root job to a receiver stopped with
# SIGSTOP (its watchdog off for the scenario), so the users' jobs stay queued.
# testbed-timeout: 400
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

IDLE=5
ALICE=tb-alice BOB=tb-bob CAROL=tb-carol AUDIT=tb-audit
PEEK=$SRC/ctlpeek.pl
hold_pid=
idle_pid=
beta_pid=

# Also run first, in case an earlier run left users behind.
cleanup() {
        if [[ -n $beta_pid ]]; then kill -CONT "$beta_pid" 2>/dev/null || true; fi
        if [[ -n $hold_pid ]]; then kill "$hold_pid" 2>/dev/null || true; fi
        if [[ -n $idle_pid ]]; then kill "$idle_pid" 2>/dev/null || true; fi
        for u in "$ALICE" "$BOB" "$CAROL"; do
                userdel -f "$u" 2>/dev/null || true
        done
        groupdel "$AUDIT" 2>/dev/null || true
        rm -f "$SRC/hold.dat"
}
trap cleanup EXIT

# as USER COMMAND...: COMMAND as USER, with USER's groups (no PAM session).
# submit USER NAME: USER queues a small file to beta as NAME; prints the job id.
submit() {
        local out
        out=$(as "$1" xferctl send "$SRC/users.dat" "$BETA_ADDR" --as "$2" --no-wait) ||
                tb_fail "$1 could not queue $2"
        printf '%s\n' "${out//[^0-9]/}"
}

# listed USER: the job ids USER's `xferctl list` shows, one a line.
listed() {
        local out
        out=$(as "$1" xferctl list) || tb_fail "$1: xferctl list failed"
        awk 'NR > 1 { print $1 }' <<<"$out"
}

# sees USER ID... / sees_not USER ID...: USER's list shows (does not show) each ID.
sees() {
        local u=$1 ids id
        shift
        ids=$(listed "$u")
        for id in "$@"; do
                grep -qx "$id" <<<"$ids" || tb_fail "$u does not see job $id; list: $(tr '\n' ' ' <<<"$ids")"
        done
}
sees_not() {
        local u=$1 ids id
        shift
        ids=$(listed "$u")
        for id in "$@"; do
                grep -qx "$id" <<<"$ids" && tb_fail "$u sees job $id, which is not theirs"
        done
        return 0
}

# refused USER PATTERN COMMAND...: COMMAND as USER must fail and say PATTERN.
refused() {
        local u=$1 pattern=$2 out rc=0
        shift 2
        out=$(as "$u" "$@" 2>&1) || rc=$?
        tb_log "$u: ${*:1:2}: $out"
        ((rc != 0)) || tb_fail "$u: '$*' succeeded; expected a refusal saying '$pattern'"
        grep -qE "$pattern" <<<"$out" || tb_fail "$u: '$*' failed without saying '$pattern': $out"
}

# A raw client (perl-base is in every Debian): xferctl never holds a quiet
# connection or stays silent, so this plays the client that does.
cat >"$PEEK" <<'EOF'
use strict;
use warnings;
use Socket;
use IO::Handle;

my ($mode, $path, @arg) = @ARGV;

sub conn {
        socket(my $s, AF_UNIX, SOCK_SEQPACKET, 0) or die "socket: $!\n";
        connect($s, pack_sockaddr_un($path)) or die "connect: $!\n";
        return $s;
}

# "open", or "closed", each with ": ERROR CODE TEXT" when the daemon said so.
sub peek {
        my ($s) = @_;
        my $said = '';
        for (;;) {
                my $buf = '';
                my $r = recv($s, $buf, 4096, MSG_DONTWAIT);
                return ($!{EAGAIN} ? "open" : "closed") . $said if !defined $r;
                return "closed$said" if length($buf) == 0;
                my (undef, undef, $type) = unpack('VvvV', $buf);
                if ($type == 10) {
                        my ($code, $len) = unpack('l<v', substr($buf, 12, 6));
                        $said = ": ERROR $code " . substr($buf, 18, $len);
                }
        }
}

if ($mode eq 'hold') {
        # N connections, each WATCHing JOB_ID; after SECONDS, how many are still open and clean.
        my ($n, $id, $secs) = @arg;
        my @s = map { conn() } 1 .. $n;
        # Header: magic, CTL_VERSION (common/ctl.h), type WATCH, length.
        for (@s) {
                defined(send($_, pack('VvvVQ<', 0x4c544358, 19, 4, 8, $id), 0)) or die "send: $!\n";
        }
        # Held once the daemon has answered each (its first JOB): a connect
        # is done before the daemon has accepted, and on a busy host that
        # can take a while.
        for (@s) {
                setsockopt($_, SOL_SOCKET, SO_RCVTIMEO, pack('l!l!', 20, 0)) or die "setsockopt: $!\n";
                my $buf = '';
                defined(recv($_, $buf, 4096, 0)) && length($buf) or die "no answer to WATCH: $!\n";
                # An ERROR (a CTL_VERSION this script does not speak, say): said, not held.
                my (undef, undef, $type) = unpack('VvvV', $buf);
                $type == 10 and die "WATCH refused: " . substr($buf, 18) . "\n";
        }
        print "held $n\n";
        STDOUT->flush;
        sleep $secs;
        my @states = map { peek($_) } @s;
        my $open = grep { $_ eq 'open' } @states;
        print "open $open of $n\n";
        print "$_\n" for grep { $_ ne 'open' } @states;
} elsif ($mode eq 'idle') {
        # One connection that never asks anything; what became of it after SECONDS.
        my ($secs) = @arg;
        my $s = conn();
        sleep $secs;
        print peek($s), "\n";
} else {
        die "usage: ctlpeek.pl hold SOCKET N JOB_ID SECONDS | idle SOCKET SECONDS\n";
}
EOF
chmod 0644 "$PEEK"

tb_log "users: $ALICE and $BOB in group rdmaxfer, $CAROL also in $AUDIT (admin_group)"
cleanup
groupadd "$AUDIT" || tb_fail "groupadd $AUDIT"
useradd -M -s /usr/sbin/nologin -G rdmaxfer "$ALICE" || tb_fail "useradd $ALICE"
useradd -M -s /usr/sbin/nologin -G rdmaxfer "$BOB" || tb_fail "useradd $BOB"
useradd -M -s /usr/sbin/nologin -G "rdmaxfer,$AUDIT" "$CAROL" || tb_fail "useradd $CAROL"
make_file "$SRC/users.dat" 100000
make_zeros "$SRC/hold.dat" $((1024 * 1024 * 1024))
chmod 0644 "$SRC/users.dat"

# Beta is stopped for most of the scenario: its watchdog must not restart it.
mkdir -p /run/systemd/system/rdmaxferd@beta.service.d
printf '[Service]\nWatchdogSec=0\n' >/run/systemd/system/rdmaxferd@beta.service.d/95-no-watchdog.conf
systemctl daemon-reload
peers_configure max_transfers=1 peer_timeout=3600 max_clients_per_user=3 max_queued_per_user=2 \
        client_idle_timeout=$IDLE admin_group=$AUDIT
start_peers
alpha_pid=$(systemctl show -P MainPID "$ALPHA_UNIT")
beta_pid=$(systemctl show -P MainPID "$BETA_UNIT")
((alpha_pid > 0 && beta_pid > 0)) || tb_fail "no MainPID"

tb_log "root's job takes alpha's one slot and stays there"
r=$(xferctl send "$SRC/hold.dat" "$BETA_ADDR" --no-wait) || tb_fail "root could not submit"
r=${r//[^0-9]/}
wait_for 60 job_in_state "$r" sending || { xferctl status "$r"; tb_fail "root's job never started sending"; }
tb_run kill -STOP "$beta_pid"
sleep 1
job_in_state "$r" sending || { xferctl status "$r"; tb_fail "root's job ended before beta stopped"; }

a1=$(submit "$ALICE" a1.dat)
a2=$(submit "$ALICE" a2.dat)
b1=$(submit "$BOB" b1.dat)
tb_log "queued: $ALICE $a1 $a2, $BOB $b1, root $r running"
for id in "$a1" "$a2" "$b1"; do
        job_in_state "$id" queued || { xferctl status "$id"; tb_fail "job $id is not queued"; }
done

tb_log "each user sees only their own jobs"
sees "$ALICE" "$a1" "$a2"
sees_not "$ALICE" "$b1" "$r"
sees "$BOB" "$b1"
sees_not "$BOB" "$a1" "$a2" "$r"
refused "$ALICE" "no job $b1" xferctl status "$b1"
refused "$ALICE" "no job $b1" xferctl cancel "$b1"
refused "$BOB" "no job $r" xferctl status "$r"
job_in_state "$b1" queued || tb_fail "$ALICE's cancel reached $BOB's job"
as "$BOB" xferctl status "$b1" >/dev/null || tb_fail "$BOB cannot see his own job"

tb_log "root and admin_group see every job; only root cancels another user's"
sees root "$r" "$a1" "$a2" "$b1"
sees "$CAROL" "$r" "$a1" "$a2" "$b1"
as "$CAROL" xferctl status "$b1" >/dev/null || tb_fail "$CAROL (admin_group) cannot see $BOB's job"
refused "$CAROL" "belongs to another user" xferctl cancel "$b1"
job_in_state "$b1" queued || tb_fail "$CAROL's cancel reached $BOB's job"

tb_log "the queue limit is per user"
refused "$ALICE" "too many jobs queued for your user \(2\)" \
        xferctl send "$SRC/users.dat" "$BETA_ADDR" --as a3.dat --no-wait
b2=$(submit "$BOB" b2.dat)
tb_log "$BOB still queued $b2"
refused "$BOB" "too many jobs queued for your user \(2\)" \
        xferctl send "$SRC/users.dat" "$BETA_ADDR" --as b3.dat --no-wait

tb_log "the connection limit is per user, and a watching connection is not idle"
hold_out=$SRC/hold.out idle_out=$SRC/idle.out
rm -f "$hold_out" "$idle_out"
# setpriv execs perl: $! is the holder itself. Held as long as the idle
# client below waits to see its connection closed.
setpriv --reuid="$ALICE" --regid="$(id -g "$ALICE")" --init-groups -- \
        perl "$PEEK" hold "$ALPHA_SOCK" 3 "$a1" $((IDLE + 4)) >"$hold_out" 2>&1 &
hold_pid=$!
# Meanwhile (its wait overlaps the hold's) one of $BOB's connections asks
# nothing; checked below.
setpriv --reuid="$BOB" --regid="$(id -g "$BOB")" --init-groups -- \
        perl "$PEEK" idle "$ALPHA_SOCK" $((IDLE + 4)) >"$idle_out" 2>&1 &
idle_pid=$!
wait_for 20 grep -q "held 3" "$hold_out" || { cat "$hold_out"; tb_fail "$ALICE could not open 3 connections"; }
sleep 1
refused "$ALICE" "too many connections for your user \(3\)" xferctl list
refused "$ALICE" "too many connections for your user \(3\)" xferctl status "$a2"
sees "$BOB" "$b1"
sees root "$a1"
journalctl -u "$ALPHA_UNIT" --no-pager -o cat | grep -q "refusing client uid $(id -u "$ALICE")" ||
        tb_fail "alpha did not log the refusal"
wait "$hold_pid" || { cat "$hold_out"; tb_fail "the connections were broken"; }
hold_pid=
tb_log "$(tr '\n' ' ' <"$hold_out")"
grep -qx "open 3 of 3" "$hold_out" || tb_fail "watching connections were closed: $(cat "$hold_out")"
sees "$ALICE" "$a1"

tb_log "a connection that asks nothing is closed after client_idle_timeout ($IDLE s)"
wait "$idle_pid" || tb_fail "idle client failed: $(cat "$idle_out")"
idle_pid=
out=$(cat "$idle_out")
tb_log "$out"
[[ $out == "closed: ERROR "*"no request for $IDLE s"* ]] || tb_fail "idle connection: $out"

tb_log "a reload applies a new limit"
peers_configure max_transfers=1 peer_timeout=3600 max_clients_per_user=3 max_queued_per_user=3 \
        client_idle_timeout=$IDLE admin_group=$AUDIT
tb_run systemctl reload "$ALPHA_UNIT"
wait_for 15 as "$ALICE" xferctl send "$SRC/users.dat" "$BETA_ADDR" --as a3.dat --no-wait ||
        tb_fail "max_queued_per_user = 3 not applied by the reload"
ids=$(listed "$ALICE")
mapfile -t alice_ids <<<"$ids"
((${#alice_ids[@]} == 3)) || tb_fail "$ALICE should have 3 jobs: ${alice_ids[*]}"
sees_not "$BOB" "${alice_ids[@]}"

tb_log "root cancels everything, the queued jobs first; alpha never restarted"
ids=$(listed root)
mapfile -t all_ids < <(tac <<<"$ids")
for id in "${all_ids[@]}"; do
        xferctl cancel "$id" >/dev/null 2>&1 || true
done
kill -CONT "$beta_pid"
wait_for 60 job_in_state "$r" cancelled || { xferctl status "$r"; tb_fail "root's job was not cancelled"; }
[[ $(systemctl show -P MainPID "$ALPHA_UNIT") == "$alpha_pid" ]] || tb_fail "alpha was restarted"
[[ $(systemctl show -P MainPID "$BETA_UNIT") == "$beta_pid" ]] || tb_fail "beta was restarted"
systemctl is-active --quiet "$ALPHA_UNIT" || tb_fail "alpha is not active"
