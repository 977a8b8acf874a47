#!/bin/bash
# Slurm staging (issue 36, item 2) with a real slurmctld and slurmd
# (Debian's, started here; the image does not start them at boot). One
# Slurm node, alpha (slurmd -N alpha on this guest); the relay chain's
# nodes are the testbed's four daemons, each configured with allow_peers
# the fabric and relay left at its default (peers): nothing set for
# relaying, per node or per job. slurm.conf's
# Prolog/Epilog run the shipped /usr/lib/rdmaxfer/slurm-{prolog,epilog}
# once for each daemon's config, as each node's slurmd would.
#  1. The scripts' contract without Slurm: idempotent; the epilog removes
#     a tree the network could write (0555 and 0000 directories, a name
#     with a newline, a leading '-', symlinks out) and only it: a job
#     directory swapped for a symlink to a root-owned directory leaves
#     that directory whole; a bad SLURM_JOB_ID is refused. bcast outside
#     a job says what it lacks (exit 2).
#  2. sbatch as a user in group rdmaxfer: the prolog made slurm/JOBID on
#     all four nodes (SLURM_JOB_ID, SLURM_JOB_USER as Slurm gives them);
#     the job's `xferctl bcast FILE DEST` (nodes and job from Slurm's
#     environment: alpha, the node it runs on, sends to itself) and
#     `bcast -r --nodes beta,gamma,$SLURM_JOB_NODELIST,delta DIR DEST`
#     (a chain, alpha moved first) land in slurm/JOBID/DEST on every
#     node, identical; after the job the epilog removed every slurm/JOBID
#     (a read-only directory in the tree too) and logged it. A node
#     whose prolog did not run gets the directory from its daemon as it
#     publishes; the epilog removes it the same.
#  3. relay = peers refuses a chain whose sender is not in the relay's
#     relay_peers (gamma's, after a reload), the node before goes around
#     it, exit 23.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

PROLOG=/usr/lib/rdmaxfer/slurm-prolog
EPILOG=/usr/lib/rdmaxfer/slurm-epilog
NODES=(alpha beta gamma delta)
JOBUSER=tbslurm
WORK=/var/tmp/tb-slurm
[[ -x $PROLOG && -x $EPILOG ]] || tb_fail "the package did not install $PROLOG and $EPILOG"

nodes_up allow_peers=198.18.0.0/24 retry_max=0
for n in "${NODES[@]}"; do
        ! grep -q '^relay' "$(node_conf "$n")" || tb_fail "$n's config sets relay: the default is what is tested"
done
for n in "${NODES[@]}"; do
        printf '%s\t%s\n' "$(node_addr "$n")" "$n" >>/etc/hosts
done

# 1. The contract, straight.
J=900001
D=$(node_in alpha)/slurm/$J
SLURM_JOB_ID=$J $PROLOG || tb_fail "prolog failed"
SLURM_JOB_ID=$J $PROLOG || tb_fail "prolog run twice failed"
[[ -d $D && ! -L $D && $(stat -c %U "$D") == rdmaxfer ]] || tb_fail "$D is not rdmaxfer's directory"
setpriv --reuid=rdmaxfer --regid=rdmaxfer --clear-groups bash -c '
        cd "$1" && mkdir -p t/ro/deep t/zero/deeper && touch t/ro/deep/f t/-rf "t/a
b" t/zero/deeper/g && ln -s /etc t/etc && ln -s / t/root &&
        chmod 0555 t/ro/deep t/ro && chmod 0000 t/zero/deeper t/zero' sh "$D" ||
        tb_fail "could not make the hostile tree"
SLURM_JOB_ID=$J $EPILOG || tb_fail "epilog failed on a tree with read-only and unreadable directories"
[[ ! -e $D ]] || tb_fail "$D is still there"
[[ -s /etc/passwd ]] || tb_fail "the epilog followed a symlink out"
SLURM_JOB_ID=$J $EPILOG || tb_fail "epilog run twice failed"
mkdir -p "$WORK/rootdir" && echo keep >"$WORK/rootdir/x"
setpriv --reuid=rdmaxfer --regid=rdmaxfer --clear-groups ln -s "$WORK/rootdir" "$D" || tb_fail "ln -s"
SLURM_JOB_ID=$J $EPILOG || tb_fail "epilog failed on a job directory swapped for a symlink"
[[ ! -L $D && -f $WORK/rootdir/x ]] || tb_fail "the epilog did not remove just the symlink"
OUT=$(SLURM_JOB_ID=../1 $EPILOG 2>&1) && tb_fail "epilog took SLURM_JOB_ID=../1"
grep -q "is not a job id" <<<"$OUT" || tb_fail "no reason for a bad SLURM_JOB_ID: $OUT"
RC=0
OUT=$(env -u SLURM_JOB_ID -u SLURM_JOB_NODELIST xferctl bcast /etc/hostname x 2>&1) || RC=$?
if ((RC != 2)) || ! grep -q "not in a Slurm job" <<<"$OUT"; then
        tb_fail "bcast outside a job: exit $RC, $OUT"
fi
tb_log "contract: idempotent, a hostile tree removed and nothing beyond it, bad job ids refused"

# 2. A real slurmctld and slurmd.
if [[ ! -s /etc/munge/munge.key ]]; then
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
        chown munge: /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
fi
mkdir -p /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm "$WORK/out"
cat >/etc/slurm/slurm.conf <<EOF
ClusterName=tb
SlurmctldHost=$(hostname -s)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/linear
PrologFlags=Alloc
Prolog=/etc/slurm/tb-prolog
Epilog=/etc/slurm/tb-epilog
NodeName=alpha NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=1 RealMemory=64 State=UNKNOWN
PartitionName=tb Nodes=alpha Default=YES MaxTime=10 State=UP
EOF
for m in prolog epilog; do
        cat >/etc/slurm/tb-$m <<EOF
#!/bin/sh
# Each testbed daemon stands for a node: its slurmd would run the $m there.
env >$WORK/out/$m.env
for c in $(for n in "${NODES[@]}"; do printf '%s ' "$(node_conf "$n")"; done); do
        RDMAXFER_CONF=\$c /usr/lib/rdmaxfer/slurm-$m || exit 1
done
EOF
        chmod 0755 "/etc/slurm/tb-$m"
done
echo 'SLURMD_OPTIONS="-N alpha"' >/etc/default/slurmd
tb_run systemctl start munge slurmctld slurmd || {
        journalctl -b --no-pager -u munge -u slurmctld -u slurmd | tail -n 40 >&2
        tb_fail "starting munge, slurmctld and slurmd failed"
}
wait_for 30 bash -c '[[ $(sinfo -h -n alpha -o %t) == idle ]]' || {
        sinfo -N -l >&2 || :
        journalctl -b --no-pager -u slurmctld -u slurmd | tail -n 30 >&2
        tb_fail "slurmd's node alpha did not come up idle"
}
tb_log "slurmctld and slurmd up, alpha idle"

useradd -M -s /bin/bash -G rdmaxfer "$JOBUSER" || tb_fail "useradd $JOBUSER"
mkdir -p "$WORK/src/tree/a/b" "$WORK/src/tree/ro"
make_file "$WORK/src/data.bin" $((1024 * 1024))
make_file "$WORK/src/tree/a/b/c.bin" $((256 * 1024))
echo hello >"$WORK/src/tree/ro/f.txt"
chmod 0555 "$WORK/src/tree/ro"
chown -R "$JOBUSER:" "$WORK/src" "$WORK/out"
cat >"$WORK/job.sh" <<EOF
#!/bin/bash
out=$WORK/out
env | grep -E '^(SLURM_JOB_ID|SLURM_JOB_NODELIST|SLURMD_NODENAME)=' >\$out/job.env
xferctl bcast --retries 0 $WORK/src/data.bin one >\$out/bcast1.txt 2>&1 || exit 11
xferctl bcast -r --retries 0 --nodes "beta,gamma,\$SLURM_JOB_NODELIST,delta" $WORK/src/tree tree \
        >\$out/bcast2.txt 2>&1 || exit 12
# Held until the scenario has looked at every node's copy.
touch \$out/staged
for _ in \$(seq 300); do [[ -e \$out/release ]] && exit 0; sleep 0.2; done
exit 13
EOF
chmod 0755 "$WORK/job.sh"
JOB=$(runuser -u "$JOBUSER" -- sbatch --parsable -N 1 -o "$WORK/out/job.out" -D "$WORK/out" "$WORK/job.sh") ||
        tb_fail "sbatch failed"
tb_log "job $JOB submitted as $JOBUSER"
wait_for 60 test -e "$WORK/out/staged" || {
        cat "$WORK"/out/*.txt "$WORK/out/job.out" >&2 2>/dev/null || :
        scontrol show job "$JOB" >&2 || :
        tb_fail "job $JOB did not stage its files"
}
grep -qx "SLURM_JOB_ID=$JOB" "$WORK/out/prolog.env" || tb_fail "the prolog did not get SLURM_JOB_ID=$JOB"
grep -qx "SLURM_JOB_USER=$JOBUSER" "$WORK/out/prolog.env" || tb_fail "the prolog did not get SLURM_JOB_USER"
grep -qx "SLURM_JOB_NODELIST=alpha" "$WORK/out/job.env" || tb_fail "the job's SLURM_JOB_NODELIST is not alpha"
tb_log "bcast FILE DEST: $(tr '\n' ' ' <"$WORK/out/bcast1.txt")"
tb_log "bcast -r: $(tr '\n' ' ' <"$WORK/out/bcast2.txt")"
chmod 0755 "$WORK/src/tree/ro"
for n in "${NODES[@]}"; do
        d=$(node_in "$n")/slurm/$JOB
        [[ $(stat -c %U:%a "$d") == rdmaxfer:750 ]] || tb_fail "$n: $d is $(stat -c %U:%a "$d"), not rdmaxfer:750"
        if [[ $n == alpha ]]; then
                same_file "$WORK/src/data.bin" "$d/one/data.bin"
        fi
        diff -r "$WORK/src/tree" "$d/tree" >&2 || tb_fail "$n: $d/tree differs from the source"
        [[ $(stat -c %a "$d/tree/ro") == 555 ]] || tb_fail "$n: tree/ro arrived writable"
done
tb_log "prolog ran with the job's id and user; every node has slurm/$JOB/tree, alpha slurm/$JOB/one"
touch "$WORK/out/release"
wait_for 60 bash -c 'for n in alpha beta gamma delta; do
        d=/var/lib/rdmaxferd$([[ $n == alpha ]] || echo "-$n")/incoming/slurm/'"$JOB"'
        [[ ! -e $d ]] || exit 1; done' || tb_fail "the epilog did not remove every slurm/$JOB"
state=$(scontrol show job "$JOB" | grep -o 'JobState=[A-Z]*') || :
[[ $state == JobState=COMPLETED ]] || tb_fail "job $JOB: $state, not COMPLETED ($(cat "$WORK/out/job.out"))"
journalctl -t rdmaxfer-slurm --no-pager -o cat | grep -q "^epilog: job $JOB: removed " ||
        tb_fail "the epilog's removal is not in the journal"
systemctl stop slurmd slurmctld munge || :
tb_log "job $JOB completed; the epilog removed slurm/$JOB on all four nodes"

# A node whose prolog did not run: the daemon makes the job directory as
# it publishes (as any DEST's parents); the epilog removes it.
RC=0
OUT=$(xferctl bcast --job 999 --nodes beta --retries 0 "$WORK/src/data.bin" late 2>&1) || RC=$?
((RC == 0)) || tb_fail "bcast to a node without its job directory: exit $RC: $OUT"
same_file "$WORK/src/data.bin" "$(node_in beta)/slurm/999/late/data.bin"
SLURM_JOB_ID=999 RDMAXFER_CONF=$(node_conf beta) $EPILOG || tb_fail "beta's epilog for job 999 failed"
[[ ! -e $(node_in beta)/slurm/999 ]] || tb_fail "beta's slurm/999 is still there"
tb_log "no prolog on a node: the send made slurm/999 there, the epilog removed it"

# 3. relay = peers: a sender outside the relay's relay_peers.
echo "relay_peers = $GAMMA_ADDR, $DELTA_ADDR" >>"$(node_conf gamma)"
reload_applied "$(node_unit gamma)" relay_peers
make_file "$SRC/peers.dat" $((64 * 1024))
RC=0
OUT=$(xferctl send "$SRC/peers.dat" beta,gamma,delta --retries 0 2>&1) || RC=$?
((RC == 23)) || tb_fail "a chain through gamma, whose relay_peers lacks beta: exit $RC, not 23: $OUT"
grep -q "^xferctl: gamma: .*the sender is not in its relay_peers" <<<"$OUT" ||
        tb_fail "gamma's refusal is not said: $OUT"
same_file "$SRC/peers.dat" "$(node_in delta)/peers.dat"
[[ ! -e $(node_in gamma)/peers.dat ]] || tb_fail "gamma has the file it refused"
tb_log "relay = peers: gamma refused a sender outside its relay_peers, beta went around it, exit 23"
