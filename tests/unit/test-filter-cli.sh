#!/bin/bash
# xferctl send -r's --exclude, --include and their -from files
# (client/sendcmd.c, client/filter.c) as a user types them: what is a
# usage error, said how; what the rules leave out is not warned about
# and counts as nothing, while what they leave in is walked as ever. No
# daemon: the socket is a path where none listens, so a send that gets
# past counting the tree ends at connecting (exit 3). The entries that
# arrive are the testbed's to see (69-tree-filters.sh). TAP.
xferctl=${1:?usage: test-filter-cli.sh XFERCTL}
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sock=$tmp/none.sock
mkdir -p "$tmp/tree/build" "$tmp/tree/src"
echo a >"$tmp/tree/src/a.c"
echo o >"$tmp/tree/src/a.o"
echo h >"$tmp/tree/.hidden"
mkfifo "$tmp/tree/src/pipe"
echo b >"$tmp/tree/build/out"
echo f >"$tmp/file"

# send ARGS...: xferctl send ARGS... 10.0.0.1 into $tmp/out, $tmp/err; $rc.
# $as_user, when set, runs it ($xbin) as another user (below).
as_user=()
xbin=$xferctl
send() {
        "${as_user[@]}" "$xbin" --socket "$sock" send "$@" 10.0.0.1 >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
}
said() { head -c 300 "$tmp/err" | tr '\n' ' '; }

send -r "$tmp/tree"
[[ $rc == 3 ]] && ! grep -q 'hidden' "$tmp/err" && grep -q 'skipping .*pipe: it is a FIFO' "$tmp/err"
ok $? "without rules: a FIFO is skipped with a warning, a dotfile goes (exit $rc: $(said))"

send -r "$tmp/tree" --exclude '.*' --exclude pipe
[[ $rc == 3 ]] && ! grep -q skipping "$tmp/err"
ok $? "--exclude '.*' --exclude pipe: left out in silence, on to the daemon (exit $rc: $(said))"

printf '# the usual\n.*\r\n\n; a FIFO\npipe\n' >"$tmp/rules"
send -r "$tmp/tree" --exclude-from "$tmp/rules"
[[ $rc == 3 ]] && ! grep -q skipping "$tmp/err"
ok $? "--exclude-from FILE, comments, blank and CRLF lines (exit $rc: $(said))"

"$xferctl" --socket "$sock" send -r "$tmp/tree" --exclude-from - 10.0.0.1 >"$tmp/out" 2>"$tmp/err" <"$tmp/rules"
rc=$?
[[ $rc == 3 ]] && ! grep -q skipping "$tmp/err"
ok $? "--exclude-from - reads standard input (exit $rc: $(said))"

send -r "$tmp/tree" --include-from "$tmp/rules"
[[ $rc == 3 ]] && ! grep -q 'hidden' "$tmp/err" && grep -q 'skipping .*pipe' "$tmp/err"
ok $? "--include-from: the same lines include, and the rest is walked as ever (exit $rc: $(said))"

send -r "$tmp/tree" --include pipe --exclude '.*' --exclude pipe
[[ $rc == 3 ]] && grep -q 'skipping .*pipe: it is a FIFO' "$tmp/err" && ! grep -q hidden "$tmp/err"
ok $? "the first rule that matches decides: --include pipe before --exclude pipe (exit $rc: $(said))"

send -r "$tmp/tree" --exclude 'src/' --exclude '.*'
[[ $rc == 3 ]] && ! grep -q skipping "$tmp/err"
ok $? "an excluded directory is not walked: its FIFO goes unseen (exit $rc: $(said))"

send -r "$tmp/tree" --exclude '*'
[[ $rc == 2 ]] && grep -q 'no entry in it can be sent (after --exclude and --include)' "$tmp/err"
ok $? "--exclude '*': nothing left, a usage error that says why (exit $rc: $(said))"

send -r "$tmp/tree" "$tmp/file" --to set --exclude '*'
[[ $rc == 3 ]] && ! grep -q skipping "$tmp/err"
ok $? "several sources: each SRC itself is never left out (exit $rc: $(said))"

# An entry nobody but root may read stops the job, unless a rule leaves it out.
mkdir "$tmp/tree/locked"
chmod 000 "$tmp/tree/locked"
# Root reads a mode-000 directory: as root, xferctl runs as nobody here
# (mktemp's 0700 opened for it to look into), a copy of xferctl in it
# (the build directory's path may be closed to others).
if [[ $(id -u) == 0 ]]; then
        chmod 755 "$tmp"
        cp "$xferctl" "$tmp/xferctl"
        xbin=$tmp/xferctl
        as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
send -r "$tmp/tree" --exclude '.*' --exclude pipe
r1=$rc
send -r "$tmp/tree" --exclude '.*' --exclude pipe --exclude locked/
[[ $r1 == 1 && $rc == 3 ]] && ! grep -q locked "$tmp/err"
ok $? "an unreadable directory stops the job (exit $r1); excluded, it is never opened (exit $rc: $(said))"
as_user=()
xbin=$xferctl
rmdir "$tmp/tree/locked"

send "$tmp/file" --exclude '*.o'
[[ $rc == 2 ]] && grep -q 'are for a tree (-r)' "$tmp/err"
ok $? "--exclude without -r: a usage error (exit $rc: $(said))"

send "$tmp/file" --include-from "$tmp/rules"
[[ $rc == 2 ]] && grep -q 'are for a tree (-r)' "$tmp/err"
ok $? "--include-from without -r too (exit $rc)"

send -r "$tmp/tree" --exclude ''
[[ $rc == 2 ]] && grep -q "send: --exclude '': an empty pattern" "$tmp/err"
ok $? "an empty pattern: a usage error (exit $rc: $(said))"

send -r "$tmp/tree" --include '[[:nope:]]'
[[ $rc == 2 ]] && grep -q "send: --include '\[\[:nope:\]\]': an unknown character class" "$tmp/err"
ok $? "an unknown class: a usage error (exit $rc: $(said))"

send -r "$tmp/tree" --exclude-from "$tmp/none"
[[ $rc == 2 ]] && grep -q "send: --exclude-from '.*/none': No such file or directory" "$tmp/err"
ok $? "a -from FILE that cannot be opened: a usage error (exit $rc: $(said))"

printf 'ok\n\n/\n' >"$tmp/bad"
send -r "$tmp/tree" --exclude-from "$tmp/bad"
[[ $rc == 2 ]] && grep -q "send: --exclude-from '.*/bad': line 3: an empty pattern" "$tmp/err"
ok $? "a bad line: a usage error naming it (exit $rc: $(said))"

send -r "$tmp/tree" --exclude $'\033[31m[[:x:]]'
[[ $rc == 2 ]] && ! grep -q $'\033' "$tmp/err" && grep -qF "'\\x1b[31m[[:x:]]'" "$tmp/err"
ok $? "a pattern is escaped when said: no raw escape reaches the terminal (exit $rc: $(said))"

send -r "$tmp/tree" --exclude-from - --include-from -
[[ $rc == 2 ]] && grep -q 'standard input is read once' "$tmp/err"
ok $? "standard input twice: a usage error (exit $rc: $(said))"

"$xferctl" --socket "$sock" send -r "$tmp/tree" 10.0.0.1 --exclude >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 2 ]] && grep -q "needs an argument" "$tmp/err"
ok $? "--exclude without a PATTERN (exit $rc: $(said))"

head -c 5000 /dev/zero | tr '\0' a >"$tmp/long"
send -r "$tmp/tree" --exclude "$(cat "$tmp/long")"
[[ $rc == 2 ]] && grep -q 'a pattern of 5000 bytes: the most is 4095' "$tmp/err"
ok $? "a pattern of 5000 bytes: refused (exit $rc: $(said))"

seq 10001 | sed 's/^/x/' >"$tmp/many"
send -r "$tmp/tree" --exclude-from "$tmp/many"
[[ $rc == 2 ]] && grep -q 'line 10001: more than 10000 rules' "$tmp/err"
ok $? "10001 rules: refused (exit $rc: $(said))"

# A NODELIST: the star's children and the chain share the rules (read once).
"$xferctl" --socket "$sock" send -r "$tmp/tree" --exclude-from - --parallel 2 '10.0.0.[1-2]' \
        >"$tmp/out" 2>"$tmp/err" <"$tmp/rules"
rc=$?
grep -q '^2 peers: 0 sent, 2 failed' "$tmp/out" && ! grep -q skipping "$tmp/err"
ok $? "--parallel: every peer's send leaves out the same, from rules read once (exit $rc: $(said))"
"$xferctl" --socket "$sock" send -r "$tmp/tree" --exclude-from - '10.0.0.[1-2]' >"$tmp/out" 2>"$tmp/err" \
        <"$tmp/rules"
rc=$?
[[ $rc == 3 ]] && ! grep -q skipping "$tmp/err"
ok $? "a relay chain too (exit $rc: $(said))"

# --delete with an entry not sent (the FIFO): the receiver would remove
# its copy, so nothing is deleted, said; left out by a rule, it goes.
send -r "$tmp/tree" --sync=size --delete
[[ $rc == 3 ]] && grep -q 'skipping .*pipe: it is a FIFO' "$tmp/err" &&
        grep -q -- '--delete: 1 entry is not sent (above), and the receiver would remove its copy: nothing in tree is deleted' "$tmp/err"
ok $? "--delete with a FIFO skipped: nothing deleted, said (exit $rc: $(said))"
send -r "$tmp/tree" --sync=size --delete --exclude pipe --delete-excluded
[[ $rc == 3 ]] && ! grep -q -- '--delete:' "$tmp/err"
ok $? "--delete with the FIFO left out by a rule: deleting stays on (exit $rc: $(said))"

# --delete with rules (no --delete-excluded): they go with the job, for
# the receiver to keep what they leave out (on to the daemon); not to a
# PEER:/PATH yet, nor more of them than the 4095 bytes a job carries.
send -r "$tmp/tree" --sync=size --delete --exclude pipe --exclude '*.o'
[[ $rc == 3 ]] && ! grep -q -- '--delete' "$tmp/err"
ok $? "--delete --exclude: allowed, the rules go along (exit $rc: $(said))"
"$xferctl" --socket "$sock" send -r "$tmp/tree" --sync=size --delete --exclude pipe 10.0.0.1:/scratch/x \
        >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
[[ $rc == 2 ]] && grep -q -- '--delete-excluded' "$tmp/err" && grep -q 'PEER:/PATH' "$tmp/err"
ok $? "--delete --exclude to PEER:/PATH: a usage error naming --delete-excluded (exit $rc: $(said))"
for i in $(seq 1 300); do echo "- some/longer/pattern-$i"; done >"$tmp/many"
send -r "$tmp/tree" --sync=size --delete --exclude pipe --exclude-from "$tmp/many"
[[ $rc == 2 ]] && grep -q '4095 bytes' "$tmp/err" && grep -q -- '--delete-excluded' "$tmp/err"
ok $? "--delete with rules of more than 4095 bytes: a usage error that says so (exit $rc: $(said))"
send -r "$tmp/tree" --sync=size --delete --exclude pipe --exclude-from "$tmp/many" --delete-excluded
[[ $rc == 3 ]]
ok $? "... and with --delete-excluded they stay here: on to the daemon (exit $rc: $(said))"

tap_done
