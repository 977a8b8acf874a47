#!/bin/bash
# xferctl send to a NODELIST as a relay chain (client/fanout.c): the
# longest chain it takes, 512 peers, goes on to the daemon; 513 are
# refused before anything is sent, saying why. A tree (-r) is a chain
# too; sync and several plain FILEs go as a star (a line per peer). No
# daemon: the socket is a path where none listens, so a chain that passes
# ends at connecting. TAP.
xferctl=${1:?usage: test-chain-cli.sh XFERCTL}
. "$(dirname "$0")/tap.sh"

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

# A tree (-r) goes as a chain too: 513 peers are refused as a chain's are.
mkdir -p "$tmp/dir/sub"
echo a >"$tmp/dir/a"
echo b >"$tmp/dir/sub/b"
"$xferctl" --socket "$sock" send -r "$tmp/dir" '10.0.[0-1].[0-255],10.0.2.0' >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 2 ]] && grep -q 'a relay chain takes at most 512 peers, the NODELIST has 513' "$tmp/err"
ok $? "-r DIR to 513 peers: a chain, refused for its length (exit $rc)"

"$xferctl" --socket "$sock" send -r "$tmp/dir" "$tmp/file" --to set '10.0.0.[1-2]' >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 3 ]] && grep -q 'cannot connect to rdmaxferd' "$tmp/err" && ! grep -q '10.0.0.2: ' "$tmp/err"
ok $? "-r with several sources to 2 peers: one chain job, on to the daemon once (exit $rc)"

# Sync and several plain files go as a star: each peer's send its own,
# its lines named by it.
for opt in --skip-existing --sync=size --sync=digest; do
        "$xferctl" --socket "$sock" send -r "$opt" "$tmp/dir" '10.0.0.[1-2]' >"$tmp/out" 2>"$tmp/err"
        rc=$?
        grep -q 'xferctl: 10.0.0.2: ' "$tmp/err" && grep -q '^2 peers: 0 sent, 2 failed' "$tmp/out"
        ok $? "-r $opt to 2 peers: a star (exit $rc)"
done
"$xferctl" --socket "$sock" send --sync=size "$tmp/file" '10.0.0.[1-2]' >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q 'xferctl: 10.0.0.2: ' "$tmp/err"
ok $? "one FILE with --sync=size to 2 peers: a star (exit $rc)"
"$xferctl" --socket "$sock" send "$tmp/file" "$tmp/dir/a" '10.0.0.[1-2]' >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q 'xferctl: 10.0.0.2: ' "$tmp/err" && grep -q '^2 peers: 0 sent, 2 failed' "$tmp/out"
ok $? "several FILEs without -r to 2 peers: a star (exit $rc)"

tap_done
