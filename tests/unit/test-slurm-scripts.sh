#!/bin/bash
# The Slurm prolog and epilog (contrib/slurm/rdmaxfer-slurm) run as the
# invoking user, who stands for the daemon's (RDMAXFER_USER; the script
# drops to it with setpriv only when it is someone else, as root under
# slurmd: the testbed's 93-slurm does that): the job directory made,
# idempotently; a tree as the network could write it (0555 and 0000
# directories, odd names, symlinks out) removed, and nothing outside it;
# a symlink in place of the job directory removed, not followed; bad
# SLURM_JOB_IDs and modes refused; a node without incoming_dir left
# alone, exit 0. TAP.
top=${1:?usage: test-slurm-scripts.sh SOURCE_ROOT}
. "$(dirname "$0")/tap.sh"

script=$top/contrib/slurm/rdmaxfer-slurm
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
in=$tmp/incoming
mkdir -p "$in" "$tmp/outside"
echo keep >"$tmp/outside/keep"
RDMAXFER_USER=$(id -un)
export RDMAXFER_USER RDMAXFER_INCOMING_DIR=$in
# No journal to log to here: logger would say so on stderr only.
export PATH

SLURM_JOB_ID=42 SLURM_JOB_USER=alice "$script" prolog 2>"$tmp/err"
rc=$?
[[ $rc == 0 && -d $in/slurm/42 && ! -L $in/slurm/42 ]] && grep -q "prolog: job 42 (user alice): made $in/slurm/42" "$tmp/err"
ok $? "prolog: the job directory made, logged (exit $rc)"
[[ $(stat -c %a "$in/slurm/42") == 750 ]]
ok $? "mode 0750, as incoming_dir (got $(stat -c %a "$in/slurm/42"))"
SLURM_JOB_ID=42 "$script" prolog 2>/dev/null
ok $? "prolog again: still 0"

d=$in/slurm/42
mkdir -p "$d/t/ro/deep" "$d/t/zero/deeper" && touch "$d/t/ro/deep/f" "$d/t/-rf" "$d/t/a"$'\n'"b" "$d/t/zero/deeper/g" &&
        ln -s "$tmp/outside" "$d/t/out" && ln -s / "$d/t/root" && ln -s "$tmp/outside/keep" "$d/t/keep" &&
        chmod 0555 "$d/t/ro/deep" "$d/t/ro" && chmod 0000 "$d/t/zero/deeper" "$d/t/zero"
SLURM_JOB_ID=42 "$script" epilog 2>"$tmp/err"
rc=$?
[[ $rc == 0 && ! -e $d && ! -L $d ]] && grep -q "epilog: job 42: removed $d" "$tmp/err"
ok $? "epilog: a tree with 0555 and 0000 directories, odd names and symlinks removed (exit $rc: $(head -c 300 "$tmp/err"))"
[[ -f $tmp/outside/keep && $(cat "$tmp/outside/keep") == keep ]]
ok $? "nothing a symlink pointed at was touched"
SLURM_JOB_ID=42 "$script" epilog 2>"$tmp/err"
rc=$?
[[ $rc == 0 ]] && grep -q "is not there: nothing to remove" "$tmp/err"
ok $? "epilog again: nothing to remove, 0 (exit $rc)"

ln -s "$tmp/outside" "$d"
SLURM_JOB_ID=42 "$script" epilog 2>/dev/null
rc=$?
[[ $rc == 0 && ! -L $d && -f $tmp/outside/keep ]]
ok $? "a symlink in place of the job directory: it is removed, not followed (exit $rc)"

for id in "" 0 012 ../1 1x 123456789012345678901; do
        SLURM_JOB_ID=$id "$script" epilog 2>"$tmp/err"
        rc=$?
        [[ $rc == 1 ]] && grep -q "SLURM_JOB_ID '$id' is\|is too long" "$tmp/err"
        ok $? "SLURM_JOB_ID='$id' refused (exit $rc)"
done
SLURM_JOB_ID=5 "$script" sideways 2>"$tmp/err"
[[ $? == 1 ]] && grep -q "unknown mode 'sideways'" "$tmp/err"
ok $? "an unknown mode refused"
ln -s "$(realpath "$script")" "$tmp/slurm-epilog"
SLURM_JOB_ID=42 "$script" prolog 2>"$tmp/err" && SLURM_JOB_ID=42 "$tmp/slurm-epilog" 2>>"$tmp/err" && [[ ! -e $d ]]
ok $? "run as slurm-epilog, it is the epilog ($(head -c 300 "$tmp/err" | tr "\n" " "))"

printf 'incoming_dir = "%s" ; a comment\n' "$in" >"$tmp/conf"
RDMAXFER_INCOMING_DIR='' RDMAXFER_CONF=$tmp/conf SLURM_JOB_ID=9 "$script" prolog 2>/dev/null && [[ -d $in/slurm/9 ]]
ok $? "incoming_dir read from RDMAXFER_CONF (quoted, with a comment)"

RDMAXFER_INCOMING_DIR=$tmp/none SLURM_JOB_ID=9 "$script" prolog 2>"$tmp/err"
rc=$?
[[ $rc == 0 ]] && grep -q "does not exist (rdmaxferd not set up on this node?)" "$tmp/err" && [[ ! -e $tmp/none ]]
ok $? "a node without incoming_dir: left alone, 0, said (exit $rc)"

rm -rf "$in/slurm" && echo x >"$in/slurm"
SLURM_JOB_ID=9 "$script" prolog 2>"$tmp/err"
rc=$?
[[ $rc == 1 ]] && grep -q "exists and is not a directory" "$tmp/err"
ok $? "prolog: slurm/ not a directory fails the prolog (exit $rc)"

tap_done
