#!/bin/bash
# xferctl send to a NODELIST as a relay chain (client/fanout.c): the
# longest chain it takes, 512 peers, goes on to the daemon; 513 are
# refused before anything is sent, saying why. No daemon: the socket is a
# path where none listens, so a chain that passes ends at connecting. TAP.
xferctl=${1:?usage: test-chain-cli.sh XFERCTL}
n=0

ok() {
        n=$((n + 1))
        if [[ $1 == 0 ]]; then
                echo "ok $n - $2"
        else
                echo "not ok $n - $2"
        fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo data >"$tmp/file"
sock=$tmp/none.sock

# Numeric peers: nothing to resolve. 10.0.0.0 .. 10.0.1.255 is 512.
"$xferctl" --socket "$sock" send "$tmp/file" '10.0.[0-1].[0-255]' >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 3 ]] && grep -q 'cannot connect to rdmaxferd' "$tmp/err" && ! grep -q 'at most' "$tmp/err"
ok $? "512 peers make a chain: on to the daemon (exit $rc: $(head -c 200 "$tmp/err"))"

"$xferctl" --socket "$sock" send "$tmp/file" '10.0.[0-1].[0-255],10.0.2.0' >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 2 ]] && grep -q 'a relay chain takes at most 512 peers, the NODELIST has 513' "$tmp/err" &&
        ! grep -q 'cannot connect' "$tmp/err"
ok $? "513 peers are refused before anything is sent (exit $rc: $(head -c 200 "$tmp/err"))"

"$xferctl" --socket "$sock" send "$tmp/file" 'node[001-513]' >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 2 ]] && grep -q 'at most 512 peers, the NODELIST has 513' "$tmp/err"
ok $? "node[001-513] too, before any name is looked up (exit $rc)"

# --parallel sends to each directly: no chain, no such limit (nothing listens: it fails to connect).
"$xferctl" --socket "$sock" send --parallel 64 "$tmp/file" '10.0.[0-1].[0-255],10.0.2.0' >"$tmp/out" 2>"$tmp/err"
rc=$?
! grep -q 'at most 512' "$tmp/err"
ok $? "with --parallel, 513 peers are no chain and not refused for it (exit $rc)"

echo "1..$n"
