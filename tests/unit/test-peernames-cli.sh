#!/bin/bash
# xferctl's peer_names (client/peernames.c): which pattern applies
# (--peer-names over $RDMAXFER_PEER_NAMES over the daemon's, asked over the
# control socket only when a name needs it, once for a star), what
# `hosts` and `hosts --resolve` print, and send's errors naming both names.
# The daemon is fake-settings, which answers SETTINGS only; a name that
# must not resolve has a ".." in it (refused by the resolver itself, no
# DNS asked). TAP.
xferctl=${1:?usage: test-peernames-cli.sh XFERCTL FAKE-SETTINGS}
fake=${2:?usage: test-peernames-cli.sh XFERCTL FAKE-SETTINGS}
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
fake_pid=
stop_fake() {
        if [[ -n $fake_pid ]]; then
                kill "$fake_pid" 2>/dev/null
                wait "$fake_pid" 2>/dev/null
        fi
        fake_pid=
        rm -f "$tmp/ctl.sock"
}
trap 'stop_fake; rm -rf "$tmp"' EXIT
echo data >"$tmp/file"
unset RDMAXFER_PEER_NAMES
sock=$tmp/ctl.sock

# start_fake PATTERN: a daemon whose peer_names is PATTERN, its requests in $tmp/log.
start_fake() {
        stop_fake
        : >"$tmp/log"
        "$fake" "$sock" "$1" "$tmp/log" &
        fake_pid=$!
        for _ in $(seq 100); do
                [[ -S $sock ]] && return 0
                sleep 0.05
        done
        echo "# fake-settings did not start" >&2
        return 1
}
asked() { grep -c . "$tmp/log"; }

# run ARGS...: xferctl against $sock; stdout in $tmp/out (newlines as spaces in $out), stderr in $tmp/err.
run() {
        "$xferctl" --socket "$sock" "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        out=$(tr '\n' ' ' <"$tmp/out")
        out=${out% }
        err=$(head -c 300 "$tmp/err")
}

# The pattern from the command line or the environment: no daemon asked.
run hosts --peer-names %h-ib 'node[01-02],10.0.0.1,fd00::2'
[[ $rc == 0 && $out == "node01-ib node02-ib 10.0.0.1 fd00::2" && ! -s $tmp/err ]]
ok $? "--peer-names %h-ib, no daemon: names mapped, addresses kept (exit $rc: $out; $err)"
run hosts --peer-names %h-ib 'node[01-02]-ib:7471'
[[ $rc == 0 && $out == "node01-ib-ib:7471 node02-ib-ib:7471" ]]
ok $? "a list's port stays the port, after the mapped name ($out)"
RDMAXFER_PEER_NAMES='i%h' run hosts 'n[1-2]'
[[ $rc == 0 && $out == "in1 in2" && ! -s $tmp/err ]]
ok $? "RDMAXFER_PEER_NAMES=i%h (exit $rc: $out; $err)"
RDMAXFER_PEER_NAMES='i%h' run hosts --peer-names '%s.ib0%d' 'n1.example.org,n2'
[[ $rc == 0 && $out == "n1.ib0.example.org n2.ib0" ]]
ok $? "--peer-names wins over the environment ($out)"
RDMAXFER_PEER_NAMES='i%h' run hosts --peer-names %h 'n1'
[[ $rc == 0 && $out == "n1" && ! -s $tmp/err ]]
ok $? "--peer-names %h: names as given, whatever else says otherwise ($out; $err)"
run hosts --peer-names 'ib' n1
[[ $rc == 2 && ! -s $tmp/out && $err == *"--peer-names 'ib': names no host"* ]]
ok $? "a pattern without the name is a usage error (exit $rc: $err)"
RDMAXFER_PEER_NAMES='%x' run hosts n1
[[ $rc == 2 && $err == *"RDMAXFER_PEER_NAMES '%x': %x is not one of"* ]]
ok $? "so is a bad one in the environment (exit $rc: $err)"
RDMAXFER_PEER_NAMES='%h:1' run send "$tmp/file" n1
[[ $rc == 2 && $err == *"RDMAXFER_PEER_NAMES '%h:1': ':' cannot be part of a host name"* ]]
ok $? "and for send (exit $rc: $err)"

long=$(printf 'n%.0s' $(seq 251))
run hosts --peer-names %h-ib "$long"
[[ $rc == 2 && ! -s $tmp/out ]] && grep -q "its name by --peer-names %h-ib is longer than 253 bytes" "$tmp/err"
ok $? "a mapped name past 253 bytes: nothing printed, a usage error (exit $rc: ${err:0:80})"

# Without a daemon to ask: hosts prints the names as given and says so; send cannot send anyway.
run hosts 'n[1-2]'
[[ $rc == 0 && $out == "n1 n2" && $err == *"cannot ask rdmaxferd at $sock for its peer_names"*"names are shown as given"* ]]
ok $? "no daemon: hosts prints names as given, and says why (exit $rc: $err)"
run hosts '10.0.0.[1-2]'
[[ $rc == 0 && $out == "10.0.0.1 10.0.0.2" && ! -s $tmp/err ]]
ok $? "no daemon, only addresses: nothing to ask, nothing said ($err)"

# The daemon's peer_names, when neither says otherwise.
start_fake '%s-ib%d'
run hosts 'n1.example.org,n2,198.18.0.2'
[[ $rc == 0 && $out == "n1-ib.example.org n2-ib 198.18.0.2" && ! -s $tmp/err && $(asked) == 1 ]]
ok $? "rdmaxferd's peer_names = %s-ib%d, asked once (exit $rc: $out; $err; asked $(asked))"
RDMAXFER_PEER_NAMES= run hosts n1
[[ $out == "n1-ib" ]]
ok $? "an empty RDMAXFER_PEER_NAMES counts as unset ($out)"
: >"$tmp/log"
RDMAXFER_PEER_NAMES=%h run hosts n1
[[ $out == "n1" && $(asked) == 0 ]]
ok $? "the environment wins over the daemon, which is not asked ($out, asked $(asked))"
run hosts '198.18.0.[1-2]'
[[ $out == "198.18.0.1 198.18.0.2" && $(asked) == 0 ]]
ok $? "addresses only: the daemon is not asked (asked $(asked))"

# --resolve: NAME ADDRESS a line, "-" and the reason on stderr for one
# that does not resolve, and exit 1 then.
run hosts --resolve --peer-names '%hhost' 'local,127.0.0.1'
grep -Eqx 'localhost (127\.0\.0\.1|::1)' "$tmp/out" && grep -qx '127.0.0.1 127.0.0.1' "$tmp/out" && [[ $rc == 0 ]]
ok $? "--resolve: local through %hhost is localhost, and its address; an address is itself (exit $rc: $out)"
run hosts --resolve --peer-names '%h..bad' 'n1,127.0.0.1'
[[ $rc == 1 && $out == "n1..bad - 127.0.0.1 127.0.0.1" &&
        $err == "xferctl: hosts: cannot resolve peer 'n1..bad' (from n1 by --peer-names %h..bad): "* ]]
ok $? "--resolve: one that does not resolve is '-', its reason names both names; exit 1 (exit $rc: $out; $err)"

# send: the daemon's pattern for one peer, a chain's and a star's, asked once.
start_fake '%h..bad'
run hosts --resolve 'n1'
[[ $rc == 1 && $out == "n1..bad -" && $err == *"(from n1 by rdmaxferd's peer_names = %h..bad)"* ]]
ok $? "the reason says where the pattern came from (exit $rc: $err)"
: >"$tmp/log"
run send "$tmp/file" n1
[[ $rc == 2 && $err == "xferctl: cannot resolve peer 'n1..bad' (from n1 by rdmaxferd's peer_names = %h..bad): "* &&
        $(asked) == 1 ]]
ok $? "send to one peer: its mapped name in the error, and the one it came from (exit $rc: $err)"
: >"$tmp/log"
run send "$tmp/file" '127.0.0.1,n2'
[[ $rc == 2 && $err == *"cannot resolve peer 'n2..bad' (from n2 by rdmaxferd's peer_names = %h..bad)"* &&
        $(asked) == 1 ]]
ok $? "a chain's hops are mapped too, the daemon asked once (exit $rc: $err; asked $(asked))"
: >"$tmp/log"
run send --parallel 2 "$tmp/file" 'n[1-2]'
grep -q "^xferctl: n1: cannot resolve peer 'n1..bad' (from n1 " "$tmp/err" &&
        grep -q "^xferctl: n2: cannot resolve peer 'n2..bad' (from n2 " "$tmp/err" && [[ $(asked) == 1 ]]
ok $? "a star: each peer's line names its mapped name; the daemon asked once, before the children (asked $(asked))"
: >"$tmp/log"
run send --peer-names '%h' "$tmp/file" 'n1..x'
[[ $rc == 2 && $err == "xferctl: cannot resolve peer 'n1..x': "* && $(asked) == 0 ]]
ok $? "--peer-names %h: not mapped, said as before, the daemon not asked (exit $rc: $err)"

# A daemon of the previous control protocol: hosts goes on unmapped, send stops.
start_fake -old
run hosts n1
[[ $rc == 0 && $out == "n1" && $err == *"another control protocol version"*"names are shown as given"* ]]
ok $? "an older daemon: hosts says so and prints names as given (exit $rc: $err)"
run send "$tmp/file" n1
[[ $rc == 3 && $err == *"another control protocol version"* ]]
ok $? "an older daemon: send stops, exit 3 (exit $rc: $err)"
stop_fake

tap_done
