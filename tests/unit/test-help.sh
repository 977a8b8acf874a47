#!/bin/bash
# xferctl's help (client/xferctl.c): `help COMMAND` prints what
# `COMMAND --help` does, for every command, help itself included
# (`help --help`, `help help`); an unknown command is a usage error. No
# daemon. TAP.
xferctl=${1:?usage: test-help.sh XFERCTL}
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for cmd in send list status cancel stats sum hosts bcast help; do
        "$xferctl" help "$cmd" >"$tmp/help" 2>"$tmp/err"
        rc=$?
        "$xferctl" "$cmd" --help >"$tmp/own" 2>>"$tmp/err"
        rc2=$?
        [[ $rc == 0 && $rc2 == 0 && ! -s $tmp/err ]] && grep -q "^Usage: xferctl $cmd" "$tmp/help" &&
                cmp -s "$tmp/help" "$tmp/own"
        ok $? "help $cmd is $cmd --help (exit $rc, $rc2: $(head -c 200 "$tmp/err"))"
done

"$xferctl" help -h >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 0 ]] && cmp -s "$tmp/out" "$tmp/own"
ok $? "help -h is help --help (exit $rc)"

"$xferctl" help >"$tmp/out" 2>"$tmp/err"
rc=$?
"$xferctl" --help >"$tmp/own"
[[ $rc == 0 ]] && cmp -s "$tmp/out" "$tmp/own"
ok $? "help alone is xferctl --help (exit $rc)"

"$xferctl" help nosuch >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 2 && ! -s $tmp/out ]] && grep -q "no such command 'nosuch'" "$tmp/err"
ok $? "help of an unknown command: a usage error (exit $rc: $(head -c 200 "$tmp/err"))"

tap_done
