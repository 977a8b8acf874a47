#!/bin/bash
# xferctl send FILE... PEER:/PATH (client/sendland.c, landpath.c,
# landcred.c): what this first version of landing as yourself cannot go
# with, refused before anything is sent, each saying what instead; PATH's
# rules; a node without munged; PEERs without ":/" as
# they always were. Then, as root in a mount namespace of its own (a
# munged of the test's at libmunge's default socket, which the namespace's
# own /run holds), the SUBMIT xferctl makes, read by fake-submit: its
# flags, PATH in normal form, and a credential made as the user who ran
# xferctl that binds this job. TAP.
xferctl=${1:?usage: test-land-cli.sh XFERCTL FAKE-SUBMIT}
fake=${2:?usage: test-land-cli.sh XFERCTL FAKE-SUBMIT}
xferctl=$(realpath "$xferctl")
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
echo data >"$tmp/a"
echo more >"$tmp/b"
chmod 0644 "$tmp/a" "$tmp/b"
mkdir "$tmp/dir" && echo in >"$tmp/dir/f"
sock=$tmp/none.sock

# run ARGS...: xferctl send against a socket where none listens.
run() {
        "$xferctl" --socket "$sock" send "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        err=$(head -c 400 "$tmp/err")
}

# usage WANT ARGS...: exit 2, WANT said, nothing sent.
usage() {
        local want=$1
        shift
        run "$@"
        local args="$*"
        [[ $rc == 2 ]] && grep -qF -- "$want" "$tmp/err" && ! grep -q 'rdmaxferd' "$tmp/err"
        ok $? "${args:0:100} refused (exit $rc: ${err:0:300})"
}

usage '--json describes one job' -r --json "$tmp/dir" "$tmp/a" 10.0.0.2:/scratch/x
usage '-r with several sources to NODELIST:/PATH is not supported yet' -r "$tmp/dir" "$tmp/a" '10.0.0.[2-3]:/scratch/x'
usage '-r from PEER:/PATH takes the tree as it is there' -r --exclude '*.o' 10.0.0.1:/scratch/x 10.0.0.2:/scratch/y
usage '-r from PEER:/PATH takes the tree as it is there' -r --links all 10.0.0.1:/scratch/x 10.0.0.2:/scratch/y
usage '--to names a tree in' --to t "$tmp/a" 10.0.0.2:/scratch/x
usage '--as names a file in' --as n "$tmp/a" 10.0.0.2:/scratch/x
usage "--delete needs --sync or --skip-existing" -r --delete "$tmp/dir" 10.0.0.2:/scratch/x

usage "'..' is not allowed in PATH" "$tmp/a" 10.0.0.2:/scratch/../etc/x
usage "'/' itself is no place to land in" "$tmp/a" 10.0.0.2:/
usage "'/' itself is no place to land in" "$tmp/a" '10.0.0.2://./'
usage 'a component of PATH is longer than 255 bytes' "$tmp/a" "10.0.0.2:/scratch/$(printf 'x%.0s' {1..256})"
usage 'PATH is longer than 4095 bytes' "$tmp/a" "10.0.0.2:$(printf '/%0199d' $(seq 21))"
usage "bad peer list '': no host" "$tmp/a" :/scratch/x
usage "bad peer '10.0.0.2:x': port 'x' is not a number" "$tmp/a" 10.0.0.2:x:/scratch/x
# -X, -A: files that land as you, sent afresh to each node.
usage '--xattrs (-X): attributes go only with files that land as you (PEER:/PATH); the drop box sets its own' \
        -X "$tmp/a" 10.0.0.2
usage '-X and -A are not supported yet down a relay chain: add --parallel N' -X "$tmp/a" '10.0.0.[2-3]:/scratch/x/'

# xferctl get PEER:/PATH DEST: what it cannot do yet, and PATH's rules.
rget() {
        "$xferctl" --socket "$sock" get "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        err=$(head -c 400 "$tmp/err")
}
gusage() {
        local want=$1
        shift
        rget "$@"
        local args="$*"
        [[ $rc == 2 ]] && grep -qF -- "$want" "$tmp/err" && ! grep -q 'rdmaxferd' "$tmp/err"
        ok $? "get ${args:0:100} refused (exit $rc: ${err:0:300})"
}
gusage "is not PEER:/PATH" 10.0.0.2 "$tmp/in"
gusage "names a directory: -r fetches a tree" 10.0.0.2:/scratch/alice/ "$tmp/in"
gusage "'..' is not allowed in PATH" 10.0.0.2:/scratch/../etc/x "$tmp/in"
gusage "expected PEER:/PATH and DEST" 10.0.0.2:/scratch/x
gusage "DEST '$tmp/no/such/x': its directory: No such file or directory" 10.0.0.2:/scratch/x "$tmp/no/such/x"
gusage "several sources go into DEST, a directory here: '$tmp/none' is not there" 10.0.0.2:/scratch/x \
        10.0.0.3:/scratch/y "$tmp/none"
gusage "several sources go into DEST, a directory here: '$tmp/a' is no directory" 10.0.0.2:/scratch/x \
        10.0.0.3:/scratch/y "$tmp/a"
gusage "--json describes one job" --json 10.0.0.2:/scratch/x 10.0.0.3:/scratch/y "$tmp"
gusage "--delete is for a tree (-r) kept up to date (--sync or --skip-existing)" --delete --sync=size \
        10.0.0.2:/scratch/x "$tmp/in"
gusage "--delete is for a tree (-r) kept up to date (--sync or --skip-existing)" -r --delete 10.0.0.2:/scratch/x \
        "$tmp/in"
gusage "--skip-existing and --sync are one or the other" --skip-existing --sync=size 10.0.0.2:/scratch/x "$tmp"
gusage "--sync 'mtime': expected size or digest" --sync=mtime 10.0.0.2:/scratch/x "$tmp"

# PEERs without ":/" keep their errors.
usage "bad peer 'beta:': port '' is not a number" "$tmp/a" beta:
usage "bad peer 'beta:x/y': port 'x/y' is not a number" "$tmp/a" beta:x/y
run "$tmp/a" 10.0.0.2:7470
[[ $rc == 3 ]] && grep -q 'cannot connect to rdmaxferd' "$tmp/err"
ok $? "10.0.0.2:7470 is a peer with a port, on to the daemon (exit $rc: $err)"

# No munged at libmunge's socket: nothing submitted, said why.
if [[ -e /run/munge/munge.socket.2 ]]; then
        skip "a munged listens on this node (/run/munge/munge.socket.2)"
else
        run "$tmp/a" '[::1]:7471:/scratch/x'
        [[ $rc == 1 ]] && grep -qF "cannot land as yourself on [::1]:7471: no MUNGE credential: munged is not reachable" "$tmp/err" &&
                grep -q 'is munged running on this node?' "$tmp/err" && ! grep -q 'cannot connect' "$tmp/err"
        ok $? "no munged: said, nothing submitted (exit $rc: $err)"
fi

if [[ $(id -u) != 0 ]] || ! command -v munged >/dev/null || ! command -v unshare >/dev/null ||
        ! unshare -m --propagation private true 2>/dev/null; then
        skip "the SUBMIT and its credential need root, munged and a mount namespace (unshare -m)"
        tap_done
fi

# In the namespace: /run a tmpfs, munged on /run/munge/munge.socket.2,
# fake-submit on $tmp/ctl.sock, then each send; outputs in $tmp/N.*.
export xferctl fake tmp
# shellcheck disable=SC2016 # the inner bash expands them, from the environment
unshare -m --propagation private bash -c '
        mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -m 0755 /run/munge || exit 1
        head -c 1024 /dev/urandom >"$tmp/munge.key" && chmod 0600 "$tmp/munge.key"
        munged -F -f --socket=/run/munge/munge.socket.2 --key-file="$tmp/munge.key" \
                --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" --log-file=/dev/null &
        munged=$!
        "$fake" "$tmp/ctl.sock" "$tmp/log" &
        fake_pid=$!
        for _ in $(seq 100); do
                [[ -S /run/munge/munge.socket.2 && -S $tmp/ctl.sock ]] && munge -n >/dev/null 2>&1 && break
                sleep 0.05
        done
        send() {
                local i=$1
                shift
                "$@" >"$tmp/$i.out" 2>"$tmp/$i.err"
                echo $? >"$tmp/$i.rc"
                cat "$tmp/log" >"$tmp/$i.log" 2>/dev/null
                : >"$tmp/log"
        }
        send 1 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait "$tmp/a" 10.0.0.2:7471:/scratch/alice/x
        send 2 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait "$tmp/a" "[fd00::2]:/scratch//alice/./in/"
        send 3 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait "$tmp/a" "$tmp/b" 10.0.0.2:/scratch/alice/in
        send 5 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r "$tmp/dir" 10.0.0.2:/scratch/alice/run1
        send 4 setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
                "$xferctl" --socket "$tmp/ctl.sock" send --no-wait "$tmp/b" 10.0.0.2:/scratch/nobody/b
        mkdir -p "$tmp/in"
        send 6 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait 127.0.0.1:7471:/scratch/alice/a.bin "$tmp/in"
        kill "$fake_pid"
        wait "$fake_pid"
        rm -f "$tmp/ctl.sock"
        FAKE_LISTEN=10.9.9.9 "$fake" "$tmp/ctl.sock" "$tmp/log" &
        fake_pid=$!
        for _ in $(seq 100); do [[ -S $tmp/ctl.sock ]] && break; sleep 0.05; done
        (cd "$tmp/in" && send 7 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait --overwrite \
                127.0.0.1:/scratch/alice/a.bin ../new.bin)
        send 9 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait --parallel 2 "$tmp/a" "127.0.0.[1-2]:7471:/scratch/alice/in/"
        send 10 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait "$tmp/a" "127.0.0.[1-2]:7471:/scratch/alice/in/"
        send 8 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait 127.0.0.1:7471:/scratch/alice/a.bin \
                "127.0.0.2:7472:/scratch//alice/in/"
        send 11 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait -r 127.0.0.1:/scratch/alice/run/ "$tmp/in"
        send 13 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r "$tmp/dir" "$tmp/a" 10.0.0.2:/scratch/alice/in
        send 14 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait --sync=digest "$tmp/a" 10.0.0.2:/scratch/alice/in/
        send 15 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait --skip-existing "$tmp/a" 10.0.0.2:/scratch/alice/in/
        send 16 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r --sync=size "$tmp/dir" 10.0.0.2:/scratch/alice/
        send 17 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r --skip-existing "$tmp/dir" 10.0.0.2:/scratch/alice/
        send 18 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r --skip-existing --delete "$tmp/dir" 10.0.0.2:/scratch/alice/
        send 12 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r 127.0.0.1:/scratch/alice/run \
                127.0.0.2:/scratch/alice/copy
        send 19 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait 127.0.0.1:/scratch/alice/a.bin \
                127.0.0.2:7472:/scratch/alice/b.bin "$tmp/in"
        send 20 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait -r --sync=digest 127.0.0.1:/scratch/alice/run \
                "$tmp/in"
        send 21 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r --skip-existing 127.0.0.1:/scratch/alice/run \
                127.0.0.2:/scratch/alice/copy
        setfattr -n user.origin -v here "$tmp/a" 2>/dev/null
        send 22 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -X -A "$tmp/a" 10.0.0.2:/scratch/alice/in/
        send 23 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait -r --skip-existing --delete \
                127.0.0.1:/scratch/alice/run "$tmp/in"
        send 24 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait -r -X -A 127.0.0.1:/scratch/alice/run "$tmp/in"
        # More attributes than an entry carries (a file system that keeps
        # them: tmpfs since Linux 6.6, xfs; not ext4): sent without them.
        big=/dev/shm/test-land-cli.$$
        echo big >"$big" &&
                setfattr -n user.a -v "$(head -c 3000 /dev/zero | tr "\\0" a)" "$big" 2>/dev/null &&
                setfattr -n user.b -v "$(head -c 3000 /dev/zero | tr "\\0" b)" "$big" 2>/dev/null &&
                send 25 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -X "$big" 10.0.0.2:/scratch/alice/in/
        rm -f "$big"
        send 26 "$xferctl" --socket "$tmp/ctl.sock" send --no-wait -r -X -A --sync=size --delete "$tmp/dir" \
                10.0.0.2:/scratch/alice/
        send 27 "$xferctl" --socket "$tmp/ctl.sock" get --no-wait -r -X --sync=digest 127.0.0.1:/scratch/alice/run \
                "$tmp/in"
        send 28 "$xferctl" --socket "$tmp/ctl.sock" send -n -i -r --sync=size "$tmp/dir" 10.0.0.2:/scratch/alice/
        send 29 "$xferctl" --socket "$tmp/ctl.sock" send -n -r --sync=size --delete "$tmp/dir" 10.0.0.2:/scratch/alice/
        send 30 "$xferctl" --socket "$tmp/ctl.sock" send -n -i -r -X -A --sync=size "$tmp/dir" 10.0.0.2:/scratch/alice/
        kill "$fake_pid" "$munged"
        wait
'
nobody=$(id -u nobody)

check() {
        local i=$1 submit=$2 what=$3
        local rc log
        rc=$(cat "$tmp/$i.rc" 2>/dev/null)
        log=$(cat "$tmp/$i.log" 2>/dev/null)
        [[ $rc == 0 && $(cat "$tmp/$i.out") == 7 ]] && grep -qxF "$submit" "$tmp/$i.log"
        ok $? "$what: submitted as '$submit' (exit $rc: $(head -c 300 "$tmp/$i.err"); ${log//$'\n'/ | })"
}
# cred N UID: the credential decoded, made by UID, restricted to root, binding this job.
cred() {
        local line
        line=$(grep '^CRED' "$tmp/$1.log" 2>/dev/null)
        [[ $line =~ ^CRED\ uid=$2\ ttl=([0-9]+)\ restriction=0\ binding=ok$ ]] && ((BASH_REMATCH[1] > 300))
        ok $? "its credential: uid $2, for root only, longer than munged's default 300 s, this job's ($line)"
}

check 1 'SUBMIT flags=LAND host=10.0.0.2 port=7471 name=a files=0 path=/scratch/alice/x' 'one file to PEER:PORT:/PATH'
cred 1 0
check 2 'SUBMIT flags=LAND,LAND_DIR host=fd00::2 port=0 name=a files=0 path=/scratch/alice/in' \
        "one file to [IPV6]:/PATH/, PATH normalised"
cred 2 0
check 3 'SUBMIT flags=LAND,LAND_DIR host=10.0.0.2 port=0 name=a files=2 path=/scratch/alice/in' \
        'two files: into PATH, a directory'
grep -qx 'FILE b' "$tmp/3.log"
ok $? "the second handed over after the SUBMIT"
cred 3 0
check 4 'SUBMIT flags=LAND host=10.0.0.2 port=0 name=b files=0 path=/scratch/nobody/b' 'as nobody'
cred 4 "$nobody"
check 5 'SUBMIT flags=LAND,TREE host=10.0.0.2 port=0 name=dir files=2 path=/scratch/alice/run1' \
        'a tree (-r DIR): DEST is its name, PATH where it lands'
cred 5 0
# back N UID: the way back's credential, the same token, for this node and DEST.
back() {
        local line
        line=$(grep '^BACK' "$tmp/$1.log" 2>/dev/null)
        [[ $line =~ ^BACK\ uid=$2\ ttl=([0-9]+)\ restriction=0\ binding=ok$ ]]
        ok $? "and the way back's: uid $2, for root only, this job's DEST and token ($line)"
}
check 6 "SUBMIT flags=LAND,LAND_DIR,PULL host=127.0.0.1 port=7471 name=a.bin files=0 path=/scratch/alice/a.bin back=127.0.0.1:0:$tmp/in" \
        'get PEER:/PATH DIR: PATH read there, into DIR here, this node as the peer sees it'
cred 6 0
back 6 0
check 7 "SUBMIT flags=LAND,LAND_REPLACE,PULL host=127.0.0.1 port=0 name=a.bin files=0 path=/scratch/alice/a.bin back=10.9.9.9:0:$tmp/new.bin" \
        'get --overwrite PEER:/PATH ../NAME: DEST absolute, its directory real; back to where the daemon listens'
back 7 0
# checkall N NCRED WHAT LINE...: N exited 0 having submitted every LINE,
# with NCRED credentials, each of uid 0 binding its job.
checkall() {
        local i=$1 ncred=$2 what=$3 rc all=0 line
        shift 3
        rc=$(cat "$tmp/$i.rc" 2>/dev/null)
        for line; do grep -qxF "$line" "$tmp/$i.log" || all=1; done
        [[ $rc == 0 && $all == 0 ]] &&
                [[ $(grep -c '^CRED uid=0 ttl=[0-9]* restriction=0 binding=ok$' "$tmp/$i.log") == "$ncred" ]]
        ok $? "$what (exit $rc: $(head -c 300 "$tmp/$i.err"); $(tr '\n' ' ' <"$tmp/$i.log" 2>/dev/null))"
}
# Several peers: each its own job, straight to it, with a credential for it alone.
checkall 9 2 "a NODELIST:/PATH --parallel: one job a peer, each credential bound to its peer" \
        'SUBMIT flags=LAND,LAND_DIR host=127.0.0.1 port=7471 name=a files=0 path=/scratch/alice/in' \
        'SUBMIT flags=LAND,LAND_DIR host=127.0.0.2 port=7471 name=a files=0 path=/scratch/alice/in'
# One file to a NODELIST: a relay chain, one credential naming every node.
checkall 10 1 "a NODELIST:/PATH of one file: a chain, its credential naming both nodes" \
        'SUBMIT flags=LAND,LAND_DIR host=127.0.0.1 port=7471 name=a files=0 path=/scratch/alice/in' \
        'ROUTE 127.0.0.2:7471'
check 8 "SUBMIT flags=LAND,LAND_DIR,PULL host=127.0.0.1 port=7471 name=a.bin files=0 path=/scratch/alice/a.bin back=127.0.0.2:7472:/scratch/alice/in" \
        'send PEER_A:/PATH PEER_B:/PATH/: PEER_A asked to send it on to PEER_B, its port and PATH normalised'
cred 8 0
back 8 0
check 11 "SUBMIT flags=LAND,LAND_DIR,PULL,PULL_TREE host=127.0.0.1 port=0 name=run files=0 path=/scratch/alice/run back=10.9.9.9:0:$tmp/in" \
        'get -r PEER:/DIR/ DEST: a tree asked for, PATH without its slash'
cred 11 0
back 11 0
check 12 "SUBMIT flags=LAND,PULL,PULL_TREE host=127.0.0.1 port=0 name=run files=0 path=/scratch/alice/run back=127.0.0.2:0:/scratch/alice/copy" \
        'send -r PEER_A:/DIR PEER_B:/PATH: a tree PEER_A sends on to PEER_B, nothing walked here'
cred 12 0
# -r with several sources: each its own job into PATH, a directory as a tree.
checkall 13 2 "send -r DIR FILE PEER:/PATH: a tree and a file, each its own job into PATH, each its own credential" \
        'SUBMIT flags=LAND,LAND_DIR,TREE host=10.0.0.2 port=0 name=dir files=2 path=/scratch/alice/in' \
        'SUBMIT flags=LAND,LAND_DIR host=10.0.0.2 port=0 name=a files=0 path=/scratch/alice/in'
# --sync: files that differ are replaced, which the credential allows;
# --skip-existing replaces nothing.
check 14 'SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,SYNC_DIGEST host=10.0.0.2 port=0 name=a files=0 path=/scratch/alice/in' \
        'send --sync=digest FILE PEER:/PATH/: kept up to date, replacing what differs'
cred 14 0
check 15 'SUBMIT flags=LAND,LAND_DIR,SKIP_EXISTING host=10.0.0.2 port=0 name=a files=0 path=/scratch/alice/in' \
        'send --skip-existing FILE PEER:/PATH/: kept what is there, replacing nothing'
cred 15 0
# A tree kept up to date: the same, each file looked at there, the tree
# merged into the one there.
check 16 'SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,TREE,SYNC_SIZE host=10.0.0.2 port=0 name=dir files=2 path=/scratch/alice' \
        'send -r --sync=size DIR PEER:/PATH/: a tree kept up to date, replacing what differs'
cred 16 0
check 17 'SUBMIT flags=LAND,LAND_DIR,TREE,SKIP_EXISTING host=10.0.0.2 port=0 name=dir files=2 path=/scratch/alice' \
        'send -r --skip-existing DIR PEER:/PATH/: a tree merged into the one there, replacing nothing'
cred 17 0
check 18 'SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,TREE,SKIP_EXISTING,DELETE host=10.0.0.2 port=0 name=dir files=2 path=/scratch/alice' \
        'send -r --skip-existing --delete DIR PEER:/PATH/: the tree there replaced, what the source lacks deleted'
cred 18 0
# get --sync: the pull asks for it, and the way back's credential allows
# it here (replacing what differs).
check 20 "SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,PULL,PULL_TREE,SYNC_DIGEST host=127.0.0.1 port=0 name=run files=0 path=/scratch/alice/run back=10.9.9.9:0:$tmp/in" \
        'get -r --sync=digest PEER:/DIR DEST: a tree pulled and kept up to date here'
cred 20 0
back 20 0
check 21 "SUBMIT flags=LAND,PULL,PULL_TREE,SKIP_EXISTING host=127.0.0.1 port=0 name=run files=0 path=/scratch/alice/run back=127.0.0.2:0:/scratch/alice/copy" \
        'send -r --skip-existing PEER_A:/DIR PEER_B:/PATH: the copy kept up to date on PEER_B'
back 21 0
# -X, -A: the file's attributes (user.origin, 3 + 11 + 4 bytes where
# this machine's /tmp keeps user xattrs) in the SUBMIT.
if getfattr -n user.origin "$tmp/a" >/dev/null 2>&1; then
        check 22 'SUBMIT flags=LAND,LAND_DIR,XATTRS,ACLS host=10.0.0.2 port=0 name=a files=0 path=/scratch/alice/in xattrs=18' \
                'send -X -A FILE PEER:/PATH/: its attributes with it'
else
        check 22 'SUBMIT flags=LAND,LAND_DIR,XATTRS,ACLS host=10.0.0.2 port=0 name=a files=0 path=/scratch/alice/in xattrs=0' \
                'send -X -A FILE PEER:/PATH/ (this /tmp keeps no user xattrs): none with it'
fi
cred 22 0
# get -r --delete: the pull asks for it; the way back's credential
# replaces (what a mirror needs), even with --skip-existing.
check 23 "SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,PULL,PULL_TREE,SKIP_EXISTING,DELETE host=127.0.0.1 port=0 name=run files=0 path=/scratch/alice/run back=10.9.9.9:0:$tmp/in" \
        'get -r --skip-existing --delete PEER:/DIR DEST: a tree pulled and mirrored here'
cred 23 0
back 23 0
# get -X -A: the pull asks for them (none of its own to carry).
check 24 "SUBMIT flags=LAND,LAND_DIR,PULL,PULL_TREE,XATTRS,ACLS host=127.0.0.1 port=0 name=run files=0 path=/scratch/alice/run back=10.9.9.9:0:$tmp/in xattrs=0" \
        'get -r -X -A PEER:/DIR DEST: a tree pulled with its attributes'
cred 24 0
back 24 0
# A file whose attributes take more than 4095 bytes: said, sent without
# them (the job queued: --no-wait's exit 0).
if [[ -e $tmp/25.rc ]]; then
        [[ $(cat "$tmp/25.rc") == 0 ]] &&
                grep -q "take 6018 bytes, more than the 4095 that go with an entry; sent without them" "$tmp/25.err" &&
                grep -q "^SUBMIT flags=LAND,LAND_DIR,XATTRS .* xattrs=0$" "$tmp/25.log"
        ok $? "send -X of a file with 6,000 bytes of attributes: said, sent without them ($(cat "$tmp/25.rc"): $(head -c 300 "$tmp/25.err"))"
fi
# -X, -A kept up to date: a file whose attributes differ is not kept.
grep -q "^SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,TREE,SYNC_SIZE,DELETE,XATTRS,ACLS host=10.0.0.2 .* xattrs=" "$tmp/26.log"
ok $? "send -r -X -A --sync=size --delete: submitted ($(cat "$tmp/26.rc"): $(head -c 300 "$tmp/26.err"); $(head -c 300 "$tmp/26.log"))"
grep -q "^SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,PULL,PULL_TREE,SYNC_DIGEST,XATTRS host=127.0.0.1 " "$tmp/27.log"
ok $? "get -r -X --sync=digest: submitted ($(cat "$tmp/27.rc"): $(head -c 300 "$tmp/27.err"); $(head -c 300 "$tmp/27.log"))"
# A dry run to PEER:/PATH: submitted as one, its credential saying so
# (the peer's lander then only looks). fake-submit answers SUBMITTED and
# no job: the wait that follows fails, which is not what is checked.
grep -q "^SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,TREE,SYNC_SIZE,DRY_RUN host=10.0.0.2 " "$tmp/28.log"
ok $? "send -n -i -r --sync=size DIR PEER:/PATH/: submitted ($(head -c 300 "$tmp/28.err"); $(head -c 300 "$tmp/28.log"))"
cred 28 0
# What deleting would remove, asked as alice: her dry run's credential
# says --delete (LANDMSG_SESSION_DELETE), or her lander would list nothing.
grep -q "^SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,TREE,SYNC_SIZE,DELETE,DRY_RUN host=10.0.0.2 " "$tmp/29.log"
ok $? "send -n -r --sync=size --delete DIR PEER:/PATH/: submitted ($(head -c 300 "$tmp/29.err"); $(head -c 300 "$tmp/29.log"))"
cred 29 0
grep -q "^SUBMIT flags=LAND,LAND_DIR,LAND_REPLACE,TREE,SYNC_SIZE,XATTRS,ACLS,DRY_RUN host=10.0.0.2 " "$tmp/30.log"
ok $? "send -n -i -r -X -A --sync=size DIR PEER:/PATH/: submitted ($(head -c 300 "$tmp/30.err"); $(head -c 300 "$tmp/30.log"))"
cred 30 0
# get of several sources (scp's host:a host:b DIR): a pull each, into DIR.
checkall 19 2 "get PEER:/A PEER2:/B DIR: a pull each, into DIR, each its own credentials" \
        "SUBMIT flags=LAND,LAND_DIR,PULL host=127.0.0.1 port=0 name=a.bin files=0 path=/scratch/alice/a.bin back=10.9.9.9:0:$tmp/in" \
        "SUBMIT flags=LAND,LAND_DIR,PULL host=127.0.0.2 port=7472 name=b.bin files=0 path=/scratch/alice/b.bin back=10.9.9.9:0:$tmp/in"

tap_done
