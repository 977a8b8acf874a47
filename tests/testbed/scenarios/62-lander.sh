#!/bin/bash
# rdmaxfer-lander (issue 33) under real systemd with a real munged: users'
# credentials made by munge(1) as those users, the lander started by its
# socket, asked as rdmaxferd will ask it (tests/tools/lander-probe, as user
# rdmaxfer). Alice lands a file and directories in her scratch directory:
# they are hers, with the modes asked for, and nothing lands in the drop
# box; Bob cannot land in her 0700 directory (the error names the path);
# a symlink Bob planted on Alice's way is not followed; a DEST outside
# landing_roots, a forged credential, a credential replayed for another
# DEST, one made for another node, and root's are refused, saying why;
# Bob cannot read Alice's 0600 file and Alice can; with munged stopped
# the refusal says so and the lander keeps serving, and gets going again
# with it; a SIGKILLed lander is started again by its socket; nobody but
# rdmaxfer may connect. systemd-analyze security's view of the unit is
# printed.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

PROBE=/usr/libexec/rdmaxfer-tests/lander-probe
ALICE=tb-lalice BOB=tb-lbob
SCR=/scratch
WORK=/tmp/lander-test

cleanup() {
        systemctl stop rdmaxfer-lander.socket rdmaxfer-lander.service munge.service 2>/dev/null || true
        sed -i '/^landing_roots = /d' "$ALPHA_CONF"
        for u in "$ALICE" "$BOB"; do userdel -f "$u" 2>/dev/null || true; done
        rm -rf "$SCR" "$WORK"
}
cleanup
trap cleanup EXIT

useradd -M -s /usr/sbin/nologin "$ALICE"
useradd -M -s /usr/sbin/nologin "$BOB"
mkdir -m 1777 "$SCR"
install -d -m 0700 -o "$ALICE" -g "$ALICE" "$SCR/$ALICE"
install -d -m 0755 -o "$BOB" -g "$BOB" "$SCR/$BOB"
install -d -m 0755 "$WORK"
munge_up
echo "landing_roots = $SCR /tmp" >>"$ALPHA_CONF"
tb_run systemctl start rdmaxfer-lander.socket

# job USER DEST [--pull] [--addr A] -- PROBE-ARGS...: a credential USER
# makes with munge(1) for a job to DEST (a fresh token, this node's
# address unless --addr), then lander-probe land (or read with --pull) as
# rdmaxfer with it. Its output in OUT, its status in RC.
job() {
        local user=$1 dest=$2 cmd=land addr=$BETA_ADDR token
        shift 2
        while [[ $1 != -- ]]; do
                case $1 in
                --pull) cmd=read; shift ;;
                --addr) addr=$2; shift 2 ;;
                esac
        done
        shift
        token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
        TOKEN=$token
        "$PROBE" binding $([[ $cmd == read ]] && echo --pull) --dest "$dest" --token "$token" --addr "$addr" \
                >"$WORK/payload"
        chmod 0644 "$WORK/payload"
        as "$user" munge -i "$WORK/payload" >"$WORK/cred" || tb_fail "munge as $user failed"
        chmod 0644 "$WORK/cred"
        RC=0
        # read's stdout is the file: into $WORK/pulled.
        OUT=$(runuser -u rdmaxfer -- "$PROBE" "$cmd" --cred "$WORK/cred" --dest "$dest" --token "$token" \
                --addr "$addr" "$@" 2>&1 >"$([[ $cmd == read ]] && echo "$WORK/pulled" || echo /dev/stdout)") || RC=$?
}
# again DEST PROBE-ARGS...: the last credential once more, for DEST.
again() {
        local dest=$1
        shift
        RC=0
        OUT=$(runuser -u rdmaxfer -- "$PROBE" land --cred "$WORK/cred" --dest "$dest" --token "$TOKEN" \
                --addr "$BETA_ADDR" "$@" 2>&1) || RC=$?
}
expect_refusal() {
        local what=$1 pattern=$2
        ((RC == 1)) && grep -q -- "$pattern" <<<"$OUT" || tb_fail "$what: exit $RC, not refused with '$pattern': $OUT"
        tb_log "$what: $(grep '^lander:' <<<"$OUT")"
}

in_before=$(ls -A "$(node_in alpha)" | wc -l)
make_file "$WORK/data.bin" 300000
chmod 0644 "$WORK/data.bin"
job "$ALICE" "$SCR/$ALICE/run1" -- --mkdir "" --mkdir sub/deep --put "$WORK/data.bin" sub/data.bin
((RC == 0)) || tb_fail "alice's landing: exit $RC: $OUT"
tb_log "alice: $(tr '\n' ';' <<<"$OUT")"
same_file "$WORK/data.bin" "$SCR/$ALICE/run1/sub/data.bin"
[[ $(stat -c '%U %G %a' "$SCR/$ALICE/run1/sub/data.bin") == "$ALICE $ALICE 644" &&
   $(stat -c '%U %a' "$SCR/$ALICE/run1/sub/deep") == "$ALICE 755" ]] ||
        tb_fail "not alice's as asked: $(stat -c '%n %U %G %a' "$SCR/$ALICE/run1/sub/data.bin" "$SCR/$ALICE/run1/sub/deep")"
[[ $(ls -A "$(node_in alpha)" | wc -l) == "$in_before" ]] || tb_fail "something landed in the drop box"
journalctl -u rdmaxfer-lander.service --no-pager -o cat | grep -q "session .*: $ALICE (uid $(id -u "$ALICE")) lands in $SCR/$ALICE/run1" ||
        tb_fail "the lander's journal does not name alice's session"
tb_log "alice's file and directories are hers (644, 755), nothing in the drop box, the journal names her"

job "$BOB" "$SCR/$ALICE/bobs" -- --mkdir ""
expect_refusal "bob into alice's 0700 directory" "EACCES: $SCR/$ALICE/bobs: Permission denied"
[[ ! -e $SCR/$ALICE/bobs ]] || tb_fail "bob made something in alice's directory"

as "$BOB" ln -s "$SCR/$ALICE" "$SCR/evil"
job "$ALICE" "$SCR/evil/run2" -- --mkdir ""
expect_refusal "alice through bob's symlink" "EPERM: $SCR/evil: a symlink that neither you nor root owns"
[[ ! -e $SCR/$ALICE/run2 ]] || tb_fail "alice's landing followed bob's symlink"

job "$ALICE" /etc/rdmaxfer-x -- --mkdir ""
expect_refusal "a DEST outside landing_roots" "not beneath this node's landing_roots ($SCR /tmp)"

job "$ALICE" "$SCR/$ALICE/run3" -- --mkdir ""
((RC == 0)) || tb_fail "alice's run3: $OUT"
again "$SCR/$ALICE/run4" --mkdir ""
expect_refusal "her credential replayed for another DEST" "replayed"
[[ ! -e $SCR/$ALICE/run4 ]] || tb_fail "a replayed credential made run4"
echo "MUNGE:AwQFAAD3cfWmJvx+ckSAVt4RPs7yforgedforgedforged:" >"$WORK/cred"
again "$SCR/$ALICE/run5" --mkdir ""
expect_refusal "a forged credential" "MUNGE refused the credential"
job "$ALICE" "$SCR/$ALICE/run6" --addr 198.18.0.99 -- --mkdir ""
expect_refusal "a credential made for another node" "none of this node's addresses"
job root "$SCR/root-run" -- --mkdir ""
expect_refusal "root's credential" "allow_root_landing is off"

install -m 0600 -o "$ALICE" -g "$ALICE" "$WORK/data.bin" "$SCR/$ALICE/run1/private.bin"
chmod 0755 "$SCR/$ALICE"
job "$BOB" "$SCR/$ALICE/run1/private.bin" --pull --
expect_refusal "bob reading alice's 0600 file" "EACCES: $SCR/$ALICE/run1/private.bin"
job "$ALICE" "$SCR/$ALICE/run1/private.bin" --pull --
((RC == 0)) || tb_fail "alice reading her own file: $OUT"
same_file "$WORK/data.bin" "$WORK/pulled"
# The same credential again, for the same file: the job's retry, let in;
# for another file: refused.
RC=0
runuser -u rdmaxfer -- "$PROBE" read --cred "$WORK/cred" --dest "$SCR/$ALICE/run1/private.bin" --token "$TOKEN" \
        --addr "$BETA_ADDR" >"$WORK/pulled" 2>"$WORK/pull.err" || RC=$?
((RC == 0)) || tb_fail "the same pull again (a retry): $RC $(cat "$WORK/pull.err")"
same_file "$WORK/data.bin" "$WORK/pulled"
RC=0
OUT=$(runuser -u rdmaxfer -- "$PROBE" read --cred "$WORK/cred" --dest "$SCR/$ALICE/run1/sub/data.bin" \
        --token "$TOKEN" --addr "$BETA_ADDR" 2>&1 >/dev/null) || RC=$?
expect_refusal "her pull's credential for another file" "replayed"
job_pull_token=$TOKEN
tb_log "bob cannot read alice's 0600 file; alice can"

tb_run systemctl stop munge
job_out=$(as "$ALICE" munge -n 2>&1) && tb_fail "munge worked with munged stopped: $job_out"
echo "MUNGE:AwQFAAD3cfWmJvx+ckSAVt4RPs7y:" >"$WORK/cred"
again "$SCR/$ALICE/run7" --mkdir ""
expect_refusal "munged stopped" "munged is not reachable"
systemctl is-active --quiet rdmaxfer-lander.service || tb_fail "the lander stopped with munged"
tb_run systemctl start munge
job "$ALICE" "$SCR/$ALICE/run7" -- --mkdir ""
((RC == 0)) || tb_fail "munged back, alice's landing: $OUT"
tb_log "with munged stopped the lander says so and keeps serving; with it back, it lands again"

pid=$(systemctl show -P MainPID rdmaxfer-lander.service)
tb_run systemctl kill -s SIGKILL rdmaxfer-lander.service
wait_for 20 bash -c "[[ \$(systemctl show -P MainPID rdmaxfer-lander.service) != $pid ]]" || true
job "$ALICE" "$SCR/$ALICE/run8" -- --mkdir ""
((RC == 0)) || tb_fail "after the lander was killed: $OUT"
[[ $(systemctl show -P MainPID rdmaxfer-lander.service) != "$pid" ]] || tb_fail "the same lander?"
tb_log "a SIGKILLed lander: a new one serves the next connection"

RC=0
OUT=$(as "$ALICE" "$PROBE" land --cred "$WORK/cred" --dest "$SCR/$ALICE/x" --token "$job_pull_token" \
        --addr "$BETA_ADDR" 2>&1) || RC=$?
((RC == 1)) && grep -q "Permission denied" <<<"$OUT" || tb_fail "alice connected to the lander herself: $RC $OUT"
tb_log "alice cannot connect to the lander herself: $OUT"

# What systemd-analyze makes of both units, with what each still exposes.
for unit in rdmaxfer-lander.service "$ALPHA_UNIT"; do
        systemd-analyze security --no-pager "$unit" >"$TESTBED_SHARE/security-$unit.txt" 2>&1 || true
        tb_log "$unit: $(grep -o 'exposure level.*' "$TESTBED_SHARE/security-$unit.txt")"
        grep '✗' "$TESTBED_SHARE/security-$unit.txt" | sed 's/^ */    /' | cut -c1-110 || true
done
