#!/bin/bash
# xferctl bcast (client/bcastcmd.c) without a daemon: what it needs from
# Slurm's environment or its options, and the usage errors it says before
# anything is sent; a well-formed one goes on to the daemon (the socket is
# a path where none listens: exit 3). Which node goes first in the chain
# is the testbed's to see (93-slurm). TAP.
xferctl=${1:?usage: test-bcast-cli.sh XFERCTL}
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo data >"$tmp/file"
mkdir "$tmp/dir" && echo a >"$tmp/dir/a"
sock=$tmp/none.sock
unset SLURM_JOB_ID SLURM_JOB_NODELIST SLURMD_NODENAME

# run EXPECTED_RC GREP DESCRIPTION ARGS...: bcast ARGS, its exit status and stderr.
run() {
        local want=$1 pat=$2 desc=$3 rc
        shift 3
        "$xferctl" --socket "$sock" bcast "$@" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        [[ $rc == "$want" ]] && grep -q -- "$pat" "$tmp/err"
        ok $? "$desc (exit $rc: $(head -c 200 "$tmp/err"))"
}

run 2 'not in a Slurm job (\$SLURM_JOB_ID is not set)' "outside a job: the job is asked for" "$tmp/file" d
run 2 '\$SLURM_JOB_NODELIST is not set' "--job alone: the nodes are asked for" --job 7 "$tmp/file" d
SLURM_JOB_ID=7 run 2 '\$SLURM_JOB_NODELIST is not set' "\$SLURM_JOB_ID alone: so are they" "$tmp/file" d
run 2 "--job '07' is not a Slurm job id" "a job id with a leading zero" --job 07 --nodes n1 "$tmp/file" d
run 2 "--job '7/../8' is not a Slurm job id" "a job id that is a path" --job 7/../8 --nodes n1 "$tmp/file" d
SLURM_JOB_ID=x run 2 "\$SLURM_JOB_ID 'x' is not a Slurm job id" "a bad \$SLURM_JOB_ID" --nodes n1 "$tmp/file" d
run 2 "DEST '/tmp/d' is a path beneath the job's directory" "an absolute DEST" --job 7 --nodes n1 "$tmp/file" /tmp/d
run 2 "DEST comes last" "an option last" --job 7 --nodes n1 "$tmp/file" d --json
run 2 "expected SRC... and DEST" "DEST alone" --job 7 --nodes n1 d
run 2 "(not --to)" "--to is DEST's" --job 7 --nodes n1 --to x "$tmp/file" d
run 2 "(not --as)" "and --as" --job 7 --nodes n1 --as x "$tmp/file" d
run 2 "needs an argument" "--nodes without one" "$tmp/file" d --nodes
run 2 "bad node list 'n\[1-'" "a bad hostlist" --job 7 --nodes 'n[1-' "$tmp/file" d
run 2 "it is a directory (bcast -r sends a tree)" "a directory without -r" --job 7 --nodes 10.0.0.1 "$tmp/dir" d
run 2 "destination 'slurm/7/a/../b'" "DEST with .. is send's to refuse" --job 7 --nodes 10.0.0.1 "$tmp/file" a/../b
run 2 "DEST is too long" "a DEST past the name limit" --job 7 --nodes 10.0.0.1 "$tmp/file" "$(printf 'x%.0s' {1..5000})"
run 3 "cannot connect to rdmaxferd" "a file to two nodes: on to the daemon" --job 7 --nodes '10.0.0.[1-2]' "$tmp/file" d
run 3 "cannot connect to rdmaxferd" "-r DIR: on to the daemon" -r --job=7 --nodes=10.0.0.1 "$tmp/dir" d
SLURM_JOB_ID=12 SLURM_JOB_NODELIST='10.0.0.[1-4]' SLURMD_NODENAME=10.0.0.3 \
        run 3 "cannot connect to rdmaxferd" "in a job: nothing but SRC and DEST" "$tmp/file" d

"$xferctl" bcast --help >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc == 0 ]] && grep -q '^Usage: xferctl bcast' "$tmp/out" && grep -q 'slurm/JOBID/DEST' "$tmp/out"
ok $? "bcast --help (exit $rc)"

tap_done
