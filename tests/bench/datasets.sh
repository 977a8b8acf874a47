#!/bin/bash
# The datasets benchmark, inside the testbed guest (tests/bench/bench
# --datasets runs it): whole trees rather than one file, by every tool in
# the same guest, interleaved in rounds as guest.sh does, so report-datasets
# can compute each ratio from the samples of one round.
#
#   (a) "small": 10,000 x 4 KiB files in 250 directories
#   (b) "mixed": about 2,000 files from 1 KiB to 64 MiB, about 1 GiB
#
# Tools: xferctl send -r, tar c | nc -> tar x over the same veth, rsync to an
# rsync daemon over TCP, and for (a) a loop of single-file xferctl send over
# a sample of the files (its files/s is the sample's, not the whole tree's),
# and tar x of a local archive of it (no network: the floor of creating its
# files in this guest, reported beside the targets). A single-file
# xferctl send of the same size as (b) is the reference for (b). Then the
# daemons' peak RSS after a 10,000-file and a 100,000-file job.
#
# Every step runs under a timeout (BENCH_DS_TIMEOUT); a step that fails or
# times out is recorded as "fail" with its reason and the bench goes on.
# Every received tree is checked (file count and a digest of every file
# under its name) before its figure counts. Rates are wall time of the
# whole command, MB/s = 10^6 bytes/s.
# testbed-timeout: 9000
# shellcheck source=tests/testbed/lib.sh
. "${TESTBED_LIB:?run me with tests/bench/bench --datasets}"
# shellcheck source=tests/testbed/xfer.sh
. "$(dirname "$TESTBED_LIB")/xfer.sh"

for a in "$@"; do
        [[ $a == BENCH_*=* ]] && export "${a?}"
done
# Settings, as BENCH_*=VALUE arguments (tests/bench/bench passes the
# environment's): rounds; (a)'s files and directories; (b)'s files and
# MiB; the reference file's MiB (default: (b)'s); the loop's sample; the
# timeout of each step, seconds; the 100,000-file RSS job (0 skips it);
# the reference file over one lane too (0 skips it); the seed of the trees.
REPS=${BENCH_DS_REPS:-3}
SMALL_FILES=${BENCH_DS_SMALL_FILES:-10000}
SMALL_DIRS=${BENCH_DS_SMALL_DIRS:-250}
SMALL_SIZE=4096
MIXED_FILES=${BENCH_DS_MIXED_FILES:-2000}
MIXED_MB=${BENCH_DS_MIXED_MB:-1024}
SINGLE_MB=${BENCH_DS_SINGLE_MB:-$MIXED_MB}
LOOP=${BENCH_DS_LOOP:-200}
TIMEOUT=${BENCH_DS_TIMEOUT:-900}
RSS_100K=${BENCH_RSS_100K:-1}
ONE_LANE=${BENCH_DS_ONE_LANE:-1}
SEED=${BENCH_DS_SEED:-20261202}
OUT=$TESTBED_SHARE/bench
mkdir -p "$OUT"
RES=$OUT/ds-results.tsv
LOGS=$OUT/ds-logs
mkdir -p "$LOGS"
: >"$RES"
ROUND=0

now() { date +%s.%N; }
# record METRIC VALUE [REASON]: one sample of the current round; a failed
# step records "fail" and why.
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$ROUND" "${3:-}" >>"$RES"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
per_s() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / s }'; }
mb_s() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f", n / s / 1e6 }'; }
hwm_mib() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# Sources and receivers all in tmpfs: the figures compare the tools, not
# the emulated disk (as guest.sh does for one file).
DS=/var/tmp/ds-src
SINK=/var/tmp/sink
mkdir -p "$DS" "$SINK" "$BETA_IN"
mount -t tmpfs -o size=40%,nr_inodes=0 tmpfs "$DS"
mount -t tmpfs -o size=40%,nr_inodes=0 tmpfs "$SINK"
mount -t tmpfs -o size=40%,nr_inodes=0,mode=0750 tmpfs "$BETA_IN"
chown rdmaxfer:rdmaxfer "$BETA_IN"

# mktree KIND DIR SEED ARGS...: a deterministic tree (the same SEED gives
# the same names, sizes and bytes). Each file is its own path, then bytes
# of a seeded 1 MiB pool from a seeded offset, so no two files are alike.
#   small DIR SEED NFILES NDIRS SIZE     NFILES of SIZE in NDIRS directories
#   mixed DIR SEED NFILES MIB            NFILES, MIB in all (below)
#   flat DIR SEED NFILES SIZE            NFILES of SIZE, 1,000 a directory
# mixed: n/250 (at least 1) large files log-uniform from 16 to 64 MiB, the
# largest exactly 64 MiB, and the rest log-uniform from 1 KiB up to a
# ceiling fitted so that the tree comes to MIB: 1 KiB to 64 MiB at about
# 2,000 files and 1 GiB, which a log-uniform draw over the whole range
# cannot be (its mean is 6 MB: 2,000 files would be 12 GB).
mktree() {
        perl -e '
use strict; use warnings;
my ($kind, $dir, $seed, @a) = @ARGV;
srand($seed);
my $pool = pack("N*", map { int(rand(4294967296)) } 1 .. 262144);
my $plen = length($pool);
sub put {
        my ($path, $size) = @_;
        open(my $fh, ">", "$dir/$path") or die "$dir/$path: $!\n";
        my $head = substr("$path\n", 0, $size);
        print $fh $head;
        my ($left, $off) = ($size - length($head), int(rand($plen)));
        while ($left > 0) {
                my $n = $plen - $off < $left ? $plen - $off : $left;
                print $fh substr($pool, $off, $n);
                ($left, $off) = ($left - $n, 0);
        }
        close($fh) or die "$dir/$path: $!\n";
}
sub mkd { my $d = "$dir/$_[0]"; -d $d or mkdir($d) or die "$d: $!\n"; }
if ($kind eq "small") {
        my ($n, $nd, $size) = @a;
        my $per = int(($n + $nd - 1) / $nd);
        for my $i (0 .. $n - 1) {
                my $d = sprintf("g%02d/d%03d", int($i / $per) % 10, int($i / $per));
                mkd((split m{/}, $d)[0]); mkd($d);
                put(sprintf("%s/f%05d.dat", $d, $i), $size);
        }
} elsif ($kind eq "flat") {
        my ($n, $size) = @a;
        for my $i (0 .. $n - 1) {
                my $d = sprintf("d%04d", int($i / 1000));
                mkd($d);
                put(sprintf("%s/f%06d", $d, $i), $size);
        }
} elsif ($kind eq "mixed") {
        my ($n, $mib) = @a;
        my ($kib, $total) = (1024, $mib * 1048576);
        my $nl = int($n / 250) || 1;
        my @large = map { int(16 * 1048576 * 4 ** rand()) } 2 .. $nl;
        push @large, 64 * 1048576;
        my @u = map { rand() } 1 .. $n - $nl;
        my $budget = $total;
        $budget -= $_ for @large;
        my $sum = sub { my $t = 0; $t += int($kib * ($_[0] / $kib) ** $_) for @u; $t };
        my ($lo, $hi) = ($kib, 64 * 1048576);
        if ($budget <= $sum->($lo)) { $hi = $lo; }
        elsif ($budget < $sum->($hi)) {
                for (1 .. 60) { my $m = ($lo + $hi) / 2; if ($sum->($m) > $budget) { $hi = $m } else { $lo = $m } }
        }
        my @sizes = ((map { int($kib * ($hi / $kib) ** $_) } @u), @large);
        # Sizes in a seeded order, over directories two deep.
        for my $i (0 .. $#sizes) { my $j = int(rand($i + 1)); @sizes[$i, $j] = @sizes[$j, $i]; }
        for my $i (0 .. $#sizes) {
                my $d = sprintf("m%02d/s%02d", $i % 10, int($i / 10) % 10);
                mkd((split m{/}, $d)[0]); mkd($d);
                put(sprintf("%s/file-%04d.bin", $d, $i), $sizes[$i]);
        }
        printf STDERR "mixed: %d files, %d bytes, small ones up to %d bytes\n", scalar(@sizes), eval { my $t = 0; $t += $_ for @sizes; $t }, int($hi);
} else { die "mktree: $kind?\n"; }
' "$@"
}

# manifest DIR: one line per regular file, digest and path, in a fixed
# order: two trees with equal manifests hold the same files, byte for byte.
manifest() {
        (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r xxh128sum)
}
# tree_check SRC_MANIFEST DIR: prints nothing if DIR holds exactly the
# manifest's files, else what is wrong (for the failure's reason).
tree_check() {
        local want=$1 dir=$2 got n m
        got=$(mktemp)
        manifest "$dir" >"$got" 2>/dev/null || true
        if ! cmp -s "$want" "$got"; then
                n=$(wc -l <"$want") m=$(wc -l <"$got")
                echo "received tree differs: $m files of $n, $( (diff "$want" "$got" || true) | grep -c '^[<>]') lines of the manifest differ"
        fi
        rm -f "$got"
}
tree_bytes() { find "$1" -type f -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }'; }
# fail_step METRIC LOG REASON: record the failure and show why.
fail_step() {
        local metric=$1 log=$2 reason=$3
        tb_log "$metric: FAILED: $reason"
        [[ -s $log ]] && tail -n 15 "$log" | sed 's/^/    | /'
        record "$metric" fail "$reason"
}
# rc_reason RC: what a timeout(1)-wrapped command's exit status means.
rc_reason() {
        case $1 in
        124|137) echo "timed out after ${TIMEOUT} s" ;;
        *) echo "exit status $1" ;;
        esac
}
# daemons_reset: after a failed xferctl step, so that a job left hanging
# in a daemon cannot slow or block the next step; the journal's tail says
# what the daemons thought happened.
daemons_reset() {
        journalctl -b --no-pager -o short-monotonic -u "$ALPHA_UNIT" -u "$BETA_UNIT" | tail -n 20 |
                sed 's/^/    journal| /'
        systemctl restart "$ALPHA_UNIT" "$BETA_UNIT" || tb_fail "daemons did not restart"
        find "$BETA_IN" -mindepth 1 -delete 2>/dev/null || true
}

# ---- the data ------------------------------------------------------------------
t0=$(now)
mkdir -p "$DS/small" "$DS/mixed"
mktree small "$DS/small" "$SEED" "$SMALL_FILES" "$SMALL_DIRS" "$SMALL_SIZE" || tb_fail "mktree small"
mktree mixed "$DS/mixed" "$((SEED + 1))" "$MIXED_FILES" "$MIXED_MB" || tb_fail "mktree mixed"
make_file "$DS/single.bin" $((SINGLE_MB * 1048576))
manifest "$DS/small" >"$OUT/small.manifest"
manifest "$DS/mixed" >"$OUT/mixed.manifest"
SMALL_N=$(wc -l <"$OUT/small.manifest") SMALL_B=$(tree_bytes "$DS/small")
MIXED_N=$(wc -l <"$OUT/mixed.manifest") MIXED_B=$(tree_bytes "$DS/mixed")
SINGLE_B=$(stat -c %s "$DS/single.bin")
# (a) as one archive, for the floor below: made once, outside any timing.
tar c -C "$DS/small" -f "$DS/small.tar" . || tb_fail "tar c of (a)"
# The loop's sample: every k-th file of (a), spread over its directories.
mkdir -p "$DS/loop"
awk -v k=$((SMALL_N / LOOP > 0 ? SMALL_N / LOOP : 1)) -v n="$LOOP" \
        '(NR - 1) % k == 0 && c < n { print $2; c++ }' "$OUT/small.manifest" >"$OUT/loop.list"
LOOP_N=$(wc -l <"$OUT/loop.list")
(cd "$DS/small" && xargs -r cat <"$OUT/loop.list") | xxh128sum | cut -d' ' -f1 >"$OUT/loop.digest"
LOOP_B=$(( LOOP_N * SMALL_SIZE ))
tb_log "data: small $SMALL_N files $SMALL_B bytes, mixed $MIXED_N files $MIXED_B bytes," \
        "single $SINGLE_B bytes, loop sample $LOOP_N files ($(secs "$t0" "$(now)") s to make)"
record small_files "$SMALL_N"
record small_bytes "$SMALL_B"
record mixed_files "$MIXED_N"
record mixed_bytes "$MIXED_B"
record single_bytes "$SINGLE_B"
record loop_files "$LOOP_N"
record timeout_s "$TIMEOUT"

# shellcheck disable=SC2119  # the defaults: no key=value
peers_configure
start_peers

tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }

# rsync's daemon on beta, writing as root into the sink like the others.
cat >/etc/rsyncd-bench.conf <<EOF
use chroot = no
uid = root
gid = root
[sink]
        path = $SINK
        read only = false
EOF
rsync --daemon --no-detach --config=/etc/rsyncd-bench.conf --address="$BETA_ADDR" --port=8730 \
        --log-file="$LOGS/rsyncd.log" &
RSYNCD=$!
wait_for 15 tcp_listening 8730 || tb_log "rsync daemon did not listen: the rsync steps will fail"

# ---- the steps; each records files/s and MB/s (or fail) ------------------------
# step_done SET TOOL T0 T1 DIR: check DIR against SET's manifest, record, clean.
step_done() {
        local set=$1 tool=$2 t0=$3 t1=$4 dir=$5 n b why s
        n=$([[ $set == small ]] && echo "$SMALL_N" || echo "$MIXED_N")
        b=$([[ $set == small ]] && echo "$SMALL_B" || echo "$MIXED_B")
        why=$(tree_check "$OUT/$set.manifest" "$dir")
        rm -rf "$dir"
        if [[ -n $why ]]; then
                fail_step "${set}_${tool}_fps" /dev/null "$why"
                record "${set}_${tool}_mbps" fail "$why"
                return
        fi
        s=$(secs "$t0" "$t1")
        record "${set}_${tool}_fps" "$(per_s "$n" "$s")"
        record "${set}_${tool}_mbps" "$(mb_s "$b" "$s")"
        tb_log "$set by $tool: $n files, $b bytes in $s s"
}
step_failed() {
        fail_step "$1_$2_fps" "$3" "$4"
        record "$1_$2_mbps" fail "$4"
}

# CPU seconds (user + system) of a process, or of the children this shell
# has waited for (xferctl, through timeout; $$, not the $(...) subshell):
# where a slow step's time went.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
child_ticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }
hz=$(getconf CLK_TCK)
cpu_s() { awk -v t="$1" -v h="$hz" 'BEGIN { printf "%.1f", t / h }'; }

run_xferctl() {
        local set=$1 dest=ds-$1-$ROUND log=$LOGS/xferctl-$1-$ROUND.log t0 t1 rc=0 a b ca cb cc
        a=$(systemctl show -P MainPID "$ALPHA_UNIT") b=$(systemctl show -P MainPID "$BETA_UNIT")
        ca=$(cpu_ticks "$a") cb=$(cpu_ticks "$b") cc=$(child_ticks)
        t0=$(now)
        timeout -k 10 "$TIMEOUT" xferctl send -r "$DS/$set" "$BETA_ADDR" --to "$dest" >"$log" 2>&1 || rc=$?
        t1=$(now)
        ca=$(cpu_s $(($(cpu_ticks "$a") - ca))) cb=$(cpu_s $(($(cpu_ticks "$b") - cb)))
        cc=$(cpu_s $(($(child_ticks) - cc)))
        record "${set}_xferctl_cpu_send" "$ca"
        record "${set}_xferctl_cpu_recv" "$cb"
        record "${set}_xferctl_cpu_client" "$cc"
        tb_log "xferctl send -r $set: $(secs "$t0" "$t1") s wall; CPU s: sender daemon $ca, receiver daemon $cb, xferctl $cc"
        if ((rc)); then
                step_failed "$set" xferctl "$log" "xferctl send -r: $(rc_reason "$rc")"
                daemons_reset
                return
        fi
        tb_log "xferctl: $(tail -n 1 "$log")"
        step_done "$set" xferctl "$t0" "$t1" "$BETA_IN/$dest"
}

# The commands run by bash -c take their arguments as $1...: single quotes.
# shellcheck disable=SC2016
run_tar() {
        local set=$1 dir=$SINK/tar-$1-$ROUND log=$LOGS/tar-$1-$ROUND.log t0 t1 rc=0 rx rrc=0
        mkdir -p "$dir"
        timeout -k 5 "$TIMEOUT" bash -c 'nc -l "$1" 7429 | tar x -C "$2"' _ "$BETA_ADDR" "$dir" >"$log.rx" 2>&1 &
        rx=$!
        wait_for 10 tcp_listening 7429 || true
        t0=$(now)
        timeout -k 5 "$TIMEOUT" bash -c 'tar c -C "$1" . | nc -N -s "$2" "$3" 7429' _ "$DS/$set" \
                "$ALPHA_ADDR" "$BETA_ADDR" >"$log" 2>&1 || rc=$?
        wait "$rx" || rrc=$?
        t1=$(now)
        cat "$log.rx" >>"$log"
        if ((rc || rrc)); then
                rm -rf "$dir"
                step_failed "$set" tar "$log" "tar | nc: sender $(rc_reason "$rc"), receiver $(rc_reason "$rrc")"
                return
        fi
        step_done "$set" tar "$t0" "$t1" "$dir"
}

run_rsync() {
        local set=$1 log=$LOGS/rsync-$1-$ROUND.log t0 t1 rc=0
        t0=$(now)
        timeout -k 5 "$TIMEOUT" rsync -a --address="$ALPHA_ADDR" "$DS/$set/" \
                "rsync://$BETA_ADDR:8730/sink/rsync-$set-$ROUND/" >"$log" 2>&1 || rc=$?
        t1=$(now)
        if ((rc)); then
                rm -rf "$SINK/rsync-$set-$ROUND"
                step_failed "$set" rsync "$log" "rsync: $(rc_reason "$rc")"
                return
        fi
        step_done "$set" rsync "$t0" "$t1" "$SINK/rsync-$set-$ROUND"
}

# (a) copied locally, tmpfs to tmpfs, no network: bash -c SCRIPT with $1
# the tree, $2 its archive and $3 where it goes. Two floors of this guest:
# - untar: tar x of the archive (one process, no sender), what creating
#   the files alone costs any tool whose receiver makes them one by one;
# - copy: tar c | tar x (two processes and a pipe), the same with both
#   vCPUs: no tool that reads the files on one side and makes them on the
#   other, over any transport, can expect much more of them.
run_local() {
        local tool=$1 dir=$SINK/$1-$ROUND log=$LOGS/$1-$ROUND.log t0 t1 rc=0
        mkdir -p "$dir"
        t0=$(now)
        timeout -k 5 "$TIMEOUT" bash -o pipefail -c "$2" _ "$DS/small" "$DS/small.tar" "$dir" \
                >"$log" 2>&1 || rc=$?
        t1=$(now)
        if ((rc)); then
                rm -rf "$dir"
                step_failed small "$tool" "$log" "$2: $(rc_reason "$rc")"
                return
        fi
        step_done small "$tool" "$t0" "$t1" "$dir"
}

# The loop: one xferctl send per file of the sample, each its own job.
# shellcheck disable=SC2016
run_loop() {
        local log=$LOGS/loop-$ROUND.log t0 t1 rc=0 got s
        t0=$(now)
        timeout -k 10 "$TIMEOUT" bash -c '
                i=0
                while read -r f; do
                        xferctl send "$1/$f" "$2" --as "loop-$3-$(printf %05d $i).dat" || exit
                        i=$((i + 1))
                done <"$4"' _ "$DS/small" "$BETA_ADDR" "$ROUND" "$OUT/loop.list" >"$log" 2>&1 || rc=$?
        t1=$(now)
        got=$( (cat "$BETA_IN"/loop-"$ROUND"-*.dat 2>/dev/null || true) | xxh128sum | cut -d' ' -f1)
        s=$(find "$BETA_IN" -maxdepth 1 -name "loop-$ROUND-*.dat" | wc -l)
        rm -f "$BETA_IN"/loop-"$ROUND"-*.dat
        if ((rc)); then
                fail_step small_loop_fps "$log" "xferctl send loop: $(rc_reason "$rc") after $s of $LOOP_N files"
                daemons_reset
                return
        fi
        if [[ $s != "$LOOP_N" || $got != "$(cat "$OUT/loop.digest")" ]]; then
                fail_step small_loop_fps "$log" "loop: $s of $LOOP_N files received, or their bytes differ"
                return
        fi
        s=$(secs "$t0" "$t1")
        record small_loop_fps "$(per_s "$LOOP_N" "$s")"
        record small_loop_mbps "$(mb_s "$LOOP_B" "$s")"
        tb_log "loop of single-file sends: $LOOP_N files in $s s (a sample of $SMALL_N)"
}

# The reference for (b): one file of the same size, one xferctl send.
run_single() {
        local name=single-$ROUND.bin log=$LOGS/single-$ROUND.log t0 t1 rc=0
        t0=$(now)
        timeout -k 10 "$TIMEOUT" xferctl send "$DS/single.bin" "$BETA_ADDR" --as "$name" >"$log" 2>&1 || rc=$?
        t1=$(now)
        if ((rc)) || ! cmp -s "$DS/single.bin" "$BETA_IN/$name"; then
                rm -f "$BETA_IN/$name"
                fail_step single_mbps "$log" "xferctl send of one file: $(rc_reason "$rc")"
                ((rc)) && daemons_reset
                return
        fi
        rm -f "$BETA_IN/$name"
        record single_mbps "$(mb_s "$SINGLE_B" "$(secs "$t0" "$t1")")"
        record single_xferctl_mbps "$(sed -n 's/.*: \([0-9.]*\) MB\/s$/\1/p' "$log" | tail -n 1)"
        tb_log "single: $(tail -n 1 "$log")"
}

# The same file over one lane (lanes = 1 on both daemons, by reload):
# before wire version 13 every file of (b) was at most one 64 MiB digest
# block, and a file's lanes start on block boundaries, so each moved over
# one lane; with 1 MiB blocks they spread over every lane. This says how
# (b) compares with one queue pair's rate (doc/performance.md).
run_single_one_lane() {
        local name=single1-$ROUND.bin log=$LOGS/single1-$ROUND.log t0 t1 rc=0
        sed -i '/^lanes *=/d' "$ALPHA_CONF" "$BETA_CONF"
        echo "lanes = 1" | tee -a "$ALPHA_CONF" >>"$BETA_CONF"
        reload_applied "$ALPHA_UNIT" lanes
        reload_applied "$BETA_UNIT" lanes
        t0=$(now)
        timeout -k 10 "$TIMEOUT" xferctl send "$DS/single.bin" "$BETA_ADDR" --as "$name" >"$log" 2>&1 || rc=$?
        t1=$(now)
        sed -i '/^lanes *=/d' "$ALPHA_CONF" "$BETA_CONF"
        reload_applied "$ALPHA_UNIT" lanes
        reload_applied "$BETA_UNIT" lanes
        if ((rc)) || ! cmp -s "$DS/single.bin" "$BETA_IN/$name"; then
                rm -f "$BETA_IN/$name"
                fail_step single1_mbps "$log" "xferctl send of one file over one lane: $(rc_reason "$rc")"
                ((rc)) && daemons_reset
                return
        fi
        rm -f "$BETA_IN/$name"
        record single1_mbps "$(mb_s "$SINGLE_B" "$(secs "$t0" "$t1")")"
        tb_log "single, one lane: $(tail -n 1 "$log")"
}

run_small_xferctl() { run_xferctl small; }
run_small_tar() { run_tar small; }
run_small_rsync() { run_rsync small; }
run_small_loop() { run_loop; }
# shellcheck disable=SC2016
run_small_untar() { run_local untar 'tar x -C "$3" -f "$2"'; }
# shellcheck disable=SC2016
run_small_copy() { run_local copy 'tar c -C "$1" . | tar x -C "$3"'; }
run_mixed_xferctl() { run_xferctl mixed; }
run_mixed_tar() { run_tar mixed; }
run_mixed_rsync() { run_rsync mixed; }
run_mixed_single() { run_single; }
run_mixed_single1() { run_single_one_lane; }

tools=(small_xferctl small_tar small_rsync small_loop small_untar small_copy mixed_xferctl mixed_tar mixed_rsync mixed_single)
((ONE_LANE)) && tools+=(mixed_single1)
for ((ROUND = 1; ROUND <= REPS; ROUND++)); do
        n=${#tools[@]}
        order=()
        for ((k = 0; k < n; k++)); do
                order+=("${tools[(k + ROUND - 1) % n]}")
        done
        tb_log "round $ROUND of $REPS: ${order[*]}"
        for t in "${order[@]}"; do
                "run_$t"
        done
done
ROUND=0
kill "$RSYNCD" 2>/dev/null; wait "$RSYNCD" 2>/dev/null || true
rm -rf "$DS/mixed" "$DS/single.bin" "$DS/small.tar" "${SINK:?}"/*

# ---- daemon RSS: fresh daemons, one job of 10,000 and one of 100,000 files -----
# rss_job TAG DIR: restart both daemons, send DIR as one job, record the
# peak RSS (VmHWM) of each.
rss_job() {
        local tag=$1 dir=$2 log=$LOGS/rss-$1.log a b rc=0 n
        systemctl restart "$ALPHA_UNIT" "$BETA_UNIT" || tb_fail "restart for RSS failed"
        a=$(systemctl show -P MainPID "$ALPHA_UNIT") b=$(systemctl show -P MainPID "$BETA_UNIT")
        timeout -k 10 "$TIMEOUT" xferctl send -r "$dir" "$BETA_ADDR" --to "rss-$tag" >"$log" 2>&1 || rc=$?
        if ((rc)); then
                fail_step "rss_${tag}_send" "$log" "xferctl send -r: $(rc_reason "$rc")"
                record "rss_${tag}_recv" fail "xferctl send -r: $(rc_reason "$rc")"
                daemons_reset
                return
        fi
        n=$(find "$BETA_IN/rss-$tag" -type f | wc -l)
        record "rss_${tag}_files" "$n"
        record "rss_${tag}_send" "$(hwm_mib "$a")"
        record "rss_${tag}_recv" "$(hwm_mib "$b")"
        tb_log "RSS after $n files: sender $(hwm_mib "$a") MiB, receiver $(hwm_mib "$b") MiB ($(tail -n 1 "$log"))"
        rm -rf "${BETA_IN:?}/rss-$tag"
}
rss_job 10k "$DS/small"
if ((RSS_100K)); then
        rm -rf "$DS/small"
        mkdir -p "$DS/flat"
        t0=$(now)
        mktree flat "$DS/flat" "$SEED" 100000 1 || tb_fail "mktree flat"
        tb_log "100,000 files of 1 byte made in $(secs "$t0" "$(now)") s"
        rss_job 100k "$DS/flat"
fi
stop_peers
tb_log "datasets benchmark done: $RES"
