#!/bin/bash
# Several files in one job: `xferctl send FILE... PEER` is one session to
# the peer (its lanes stay connected from file to file, one transfer id on
# both sides), every file lands byte-identical under its own name, UTF-8
# names included; the job stops at the first file the receiver refuses,
# with what came before it published and nothing after. A directory, or
# two files of one name, are usage errors before anything is sent.
# (Trees, -r and a DEST inside the receiver's tree are not built yet.)
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure
start_peers

many=$SRC/many
rm -rf "$many" && mkdir -p "$many"
# 200 small files, an empty one, a UTF-8 name, and one of several chunks.
for i in $(seq -w 1 200); do
        head -c $((RANDOM % 20000)) /dev/urandom >"$many/f$i.bin"
done
: >"$many/empty.bin"
make_file "$many/données-été.txt" 7777
make_file "$many/odd.dat" $((3 * 1024 * 1024 + 12345))
nfiles=$(ls "$many" | wc -l)

tb_log "sending $nfiles files in one job"
t0=$(date +%s.%N)
since="@${t0%.*}"
out=$(xferctl send "$many"/* "$BETA_ADDR" 2>&1) || {
        printf '%s\n' "$out" >&2
        tb_fail "xferctl send of $nfiles files failed"
}
t1=$(date +%s.%N)
tb_log "xferctl: $(tail -n 1 <<<"$out") ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
[[ $out == *"sent $nfiles files"* ]] || tb_fail "summary does not count the files: $out"
for f in "$many"/*; do
        same_file "$f" "$BETA_IN/$(basename "$f")"
done
tb_log "all $nfiles files identical on beta"

# One session: beta logged every file under the one transfer id alpha sent.
ids=$(journalctl -u "$BETA_UNIT" --no-pager --since "$since" -o export RDMAXFER_DIRECTION=recv |
        sed -n 's/^RDMAXFER_ID=//p' | sort -u)
[[ $(wc -l <<<"$ids") == 1 ]] || tb_fail "beta saw several transfer ids for one job: $(tr '\n' ' ' <<<"$ids")"
got=$(journalctl -u "$BETA_UNIT" --no-pager --since "$since" -o export RDMAXFER_DIRECTION=recv RDMAXFER_RESULT=ok |
        grep -c '^RDMAXFER_FILE=')
[[ $got == "$nfiles" ]] || tb_fail "beta logged $got files received, not $nfiles"
# ... over one connection set-up: one "receiving" line, not one per file.
conns=$(journalctl -u "$BETA_UNIT" --no-pager --since "$since" -o cat | grep -c ': receiving ')
[[ $conns == 1 ]] || tb_fail "beta accepted $conns sessions, not 1"
id=$(journalctl -u "$ALPHA_UNIT" --no-pager --since "$since" -o cat | sed -n 's/^job \([0-9]*\): [0-9]* files.*/\1/p' | tail -n 1)
js=$(xferctl status "$id" --json)
[[ $(job_field "$js" files) == "$nfiles" && $(job_field "$js" files_total) == "$nfiles" ]] ||
        tb_fail "status --json does not count the files: $js"
tb_log "one session, one transfer id, files counted in status"

# Several lanes kept over the session: two files of several chunks each.
sed -i '/^lanes/d' "$ALPHA_CONF" "$BETA_CONF"
echo "lanes = 4" >>"$ALPHA_CONF"
echo "lanes = 4" >>"$BETA_CONF"
tb_run systemctl reload "$ALPHA_UNIT" "$BETA_UNIT"
mkdir -p "$SRC/lanes"
make_file "$SRC/lanes/a.dat" $((40 * 1024 * 1024 + 1))
make_file "$SRC/lanes/b.dat" 4097
make_file "$SRC/lanes/c.dat" $((24 * 1024 * 1024))
line=$(xferctl send "$SRC/lanes/a.dat" "$SRC/lanes/b.dat" "$SRC/lanes/c.dat" "$BETA_ADDR" 2>&1) ||
        tb_fail "send over 4 lanes failed: $line"
for f in a.dat b.dat c.dat; do
        same_file "$SRC/lanes/$f" "$BETA_IN/$f"
done
[[ $(jfield "$BETA_UNIT" c.dat RDMAXFER_LANES) == 4 ]] ||
        tb_fail "the session's last file did not keep its 4 lanes: $(jfield "$BETA_UNIT" c.dat RDMAXFER_LANES)"
tb_log "a small file between two large ones, over the session's 4 lanes: identical"

# A refusal stops the job: before it published, after it never offered.
mkdir -p "$SRC/stop"
for f in s1 s2 s3; do make_file "$SRC/stop/$f.dat" 1000; done
cp "$SRC/stop/s2.dat" "$BETA_IN/s2.dat"
rc=0
out=$(xferctl send "$SRC/stop/s1.dat" "$SRC/stop/s2.dat" "$SRC/stop/s3.dat" "$BETA_ADDR" 2>&1) || rc=$?
((rc == 1)) || tb_fail "a job with a refused file exited $rc, not 1: $out"
grep -qi "exists" <<<"$out" || tb_fail "the refusal does not say why: $out"
same_file "$SRC/stop/s1.dat" "$BETA_IN/s1.dat"
[[ ! -e $BETA_IN/s3.dat ]] || tb_fail "s3.dat was sent after the job failed"
tb_log "the job stopped at the refused file: $(tail -n 1 <<<"$out")"

# Usage errors, before anything is sent.
rc=0
out=$(xferctl send "$SRC/stop" "$SRC/stop/s1.dat" "$BETA_ADDR" 2>&1) || rc=$?
((rc == 2)) && grep -q "directory" <<<"$out" || tb_fail "a directory: exit $rc: $out"
rc=0
out=$(xferctl send "$SRC/stop/s1.dat" "$SRC/lanes/../stop/s1.dat" "$BETA_ADDR" 2>&1) || rc=$?
((rc == 2)) && grep -q "two files named" <<<"$out" || tb_fail "a name twice: exit $rc: $out"
rc=0
out=$(xferctl send "$SRC/stop/s1.dat" "$SRC/stop/s3.dat" "$BETA_ADDR" --as x 2>&1) || rc=$?
((rc == 2)) || tb_fail "--as with several files: exit $rc: $out"
[[ ! -e $BETA_IN/s3.dat ]] || tb_fail "a usage error sent something"
tb_log "a directory, a name twice, --as with several files: usage errors"
