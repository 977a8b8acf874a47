#!/bin/bash
# Two tree benchmarks of issue 34, inside the testbed guest (tests/bench/bench
# --trees runs it), sources and receiver in tmpfs (the tools, not the
# emulated disk), each received tree checked against its source:
#
#   (h) hard links: 1,000 files of 64 KiB and 500 more names of 500 of
#       them; the bytes beta's NIC receives against the distinct data
#       (target <= 1.05 x);
#   (s) sync: 10,000 files of 4 KiB sent into a new DEST ("again"), then,
#       1 % of them changed (100 grown by a byte, 50 gone, 50 new), sent with
#       --sync=size --delete into the DEST that has the old ones; the time
#       of the second against the first (target >= 5 x faster), each round.
# testbed-timeout: 3600
# shellcheck source=tests/testbed/lib.sh
. "${TESTBED_LIB:?run me with tests/bench/bench --trees}"
# shellcheck source=tests/testbed/xfer.sh
. "$(dirname "$TESTBED_LIB")/xfer.sh"

for a in "$@"; do
        [[ $a == BENCH_*=* ]] && export "${a?}"
done
REPS=${BENCH_TR_REPS:-2}
FILES=${BENCH_TR_FILES:-10000}
OUT=$TESTBED_SHARE/bench
mkdir -p "$OUT"
RES=$OUT/trees-results.tsv
: >"$RES"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

T=/var/tmp/tr-src
mkdir -p "$T" "$BETA_IN"
mount -t tmpfs -o size=30%,nr_inodes=0 tmpfs "$T"
mount -t tmpfs -o size=30%,nr_inodes=0,mode=0750 tmpfs "$BETA_IN"
chown rdmaxfer:rdmaxfer "$BETA_IN"
peers_configure overwrite=yes tree_delete=yes
start_peers

# files DIR N SIZE SEED: N files of SIZE random bytes in DIR/dNN/fNNNNN,
# 100 to a directory, no two alike.
files() {
        mkdir -p "$1" || tb_fail "mkdir $1"
        perl -e '
my ($dir, $n, $size, $seed) = @ARGV;
srand($seed);
my $pool = pack("N*", map { int(rand(4294967296)) } 1 .. 262144);
for my $i (0 .. $n - 1) {
        my $d = sprintf("%s/d%03d", $dir, $i / 100);
        -d $d or mkdir($d) or die "$d: $!\n";
        open(my $fh, ">", sprintf("%s/f%05d", $d, $i)) or die "$!\n";
        print $fh substr($pool, int(rand(length($pool) - $size)), $size);
        close($fh) or die "$!\n";
}' "$1" "$2" "$3" "$4"
}

# fpath DIR I: the path of file I of files().
fpath() { printf '%s/d%03d/f%05d' "$1" $(($2 / 100)) "$2"; }

# tree_digest DIR: every file's path and content digest, and every directory.
tree_digest() { (cd "$1" && find . -type f -printf '%p %n\n' | LC_ALL=C sort && find . -type f -exec md5sum {} + | LC_ALL=C sort -k2) | md5sum; }

# ---- (h) hard links ----
h=$T/links
files "$h" 1000 65536 11
mkdir -p "$h/more"
for ((i = 0; i < 500; i++)); do
        ln "$h/d$(printf %03d $((i / 100)))/f$(printf %05d "$i")" "$h/more/l$i"
done
distinct=$((1000 * 65536))
for ((r = 1; r <= REPS; r++)); do
        rm -rf "$BETA_IN/links"
        rx0=$(netdev_bytes "$BETA_NETDEV" rx)
        t0=$(now)
        xferctl send -r "$h" "$BETA_ADDR" >/dev/null || tb_fail "round $r: send -r of the linked tree failed"
        t1=$(now)
        rx=$(($(netdev_bytes "$BETA_NETDEV" rx) - rx0))
        [[ $(tree_digest "$h") == "$(tree_digest "$BETA_IN/links")" ]] || tb_fail "round $r: the linked tree differs"
        [[ $(stat -c %h "$BETA_IN/links/more/l7") == 2 ]] || tb_fail "round $r: l7 is not a second name"
        printf '%s\tlinks\t%s\t%s\n' "$r" "$(secs "$t0" "$t1")" "$rx" >>"$RES"
        tb_log "(h) round $r: $(secs "$t0" "$t1") s, $rx bytes on beta's NIC for $distinct distinct"
done

# ---- (s) sync --delete against sending again ----
s=$T/sync
for ((r = 1; r <= REPS; r++)); do
        rm -rf "$s" "$BETA_IN/sync" "$BETA_IN/again"
        files "$s" "$FILES" 4096 $((20 + r))
        xferctl send -r "$s" "$BETA_ADDR" >/dev/null || tb_fail "round $r: the first send failed"
        # 1 %: 100 grown, 50 gone (spread over the tree), 50 new.
        for ((i = 0; i < 100; i++)); do printf x >>"$(fpath "$s" $((i * (FILES / 100))))" || tb_fail "grow"; done
        for ((i = 0; i < 50; i++)); do rm "$(fpath "$s" $((i * (FILES / 50) + 1)))" || tb_fail "remove"; done
        files "$s/new" 50 4096 $((40 + r))
        t0=$(now)
        out=$(xferctl send -r "$s" "$BETA_ADDR" --sync=size --delete) || tb_fail "round $r: --sync=size --delete failed: $out"
        t1=$(now)
        [[ $(tree_digest "$s") == "$(tree_digest "$BETA_IN/sync")" ]] || tb_fail "round $r: the synced tree differs"
        [[ $out == *"50 deleted"* ]] || tb_fail "round $r: not 50 deleted: $out"
        t2=$(now)
        xferctl send -r "$s" "$BETA_ADDR" --to again >/dev/null || tb_fail "round $r: sending again failed"
        t3=$(now)
        [[ $(tree_digest "$s") == "$(tree_digest "$BETA_IN/again")" ]] || tb_fail "round $r: the tree sent again differs"
        printf '%s\tsync\t%s\t%s\n' "$r" "$(secs "$t0" "$t1")" "$(secs "$t2" "$t3")" >>"$RES"
        tb_log "(s) round $r: --sync=size --delete $(secs "$t0" "$t1") s, sent again $(secs "$t2" "$t3") s: $out"
done

awk -F'\t' -v distinct="$distinct" -v files="$FILES" '
function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$2 == "links" { lw[++nl] = $4 / distinct; lt[nl] = $3 }
$2 == "sync" { st[++ns] = $3; at[ns] = $4; ratio[ns] = $4 / $3 }
END {
        printf "trees-bench: (h) 1,000 files of 64 KiB, 500 more names: %.2f s, wire %.3f x the distinct data (target <= 1.05: %s)\n",
               median(lt, nl), median(lw, nl), (median(lw, nl) <= 1.05) ? "met" : "missed"
        printf "trees-bench: (s) %d files of 4 KiB, 1 %% changed: --sync=size --delete %.2f s, sent again %.2f s: %.1f x faster (target >= 5: %s)\n",
               files, median(st, ns), median(at, ns), median(ratio, ns), (median(ratio, ns) >= 5) ? "met" : "missed"
}' "$RES" | tee "$OUT/trees-report.txt"
