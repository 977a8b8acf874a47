#!/bin/bash
# Several transfers at once share the receive ring and all arrive intact;
# a transfer that had the ring to itself makes room for newcomers.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

peers_configure
start_peers

pids=()
for i in 1 2 3 4; do
        make_file "$SRC/c$i.dat" $((32 * 1024 * 1024 + i * 4097))
done
for i in 1 2 3 4; do
        xferctl send "$SRC/c$i.dat" "$BETA_ADDR" >"$SRC/c$i.out" 2>&1 &
        pids+=($!)
done
for i in 1 2 3 4; do
        wait "${pids[$((i - 1))]}" || { cat "$SRC/c$i.out" >&2; tb_fail "transfer $i failed"; }
        tb_log "$(tail -n 1 "$SRC/c$i.out")"
        same_file "$SRC/c$i.dat" "$BETA_IN/c$i.dat"
done

# More jobs than max_transfers: the rest queue on alpha and still complete.
# Six at once, 8 MiB each: under TCG the first four still run while the
# other two are submitted, with a quarter of the data of 32 MiB each.
make_file "$SRC/q.dat" $((8 * 1024 * 1024 + 4097))
pids=()
for i in 1 2 3 4 5 6; do
        xferctl send "$SRC/q.dat" "$BETA_ADDR" --as "q$i.dat" >"$SRC/q$i.out" 2>&1 &
        pids+=($!)
done
for i in 1 2 3 4 5 6; do
        wait "${pids[$((i - 1))]}" || { cat "$SRC/q$i.out" >&2; tb_fail "queued transfer $i failed"; }
        same_file "$SRC/q.dat" "$BETA_IN/q$i.dat"
done
incoming_clean "$BETA_IN" c1.dat c2.dat c3.dat c4.dat q1.dat q2.dat q3.dat q4.dat q5.dat q6.dat

# Lending: a lone transfer borrows most of both rings; two more arrive while
# it runs, start with the reserved slot each, and grow as it gives back.
make_file "$SRC/lone.dat" $((160 * 1024 * 1024 + 17))
xferctl send "$SRC/lone.dat" "$BETA_ADDR" >"$SRC/lone.out" 2>&1 &
lone=$!
wait_for 60 bash -c "xferctl list | grep -q sending" || tb_fail "lone transfer never started"
sleep 2
pids=()
for i in 1 2; do
        xferctl send "$SRC/c$i.dat" "$BETA_ADDR" --as "late$i.dat" >"$SRC/late$i.out" 2>&1 &
        pids+=($!)
done
for i in 1 2; do
        wait "${pids[$((i - 1))]}" || { cat "$SRC/late$i.out" >&2; tb_fail "late transfer $i failed"; }
        tb_log "$(tail -n 1 "$SRC/late$i.out")"
        same_file "$SRC/c$i.dat" "$BETA_IN/late$i.dat"
done
kill -0 "$lone" 2>/dev/null && tb_log "the lone transfer was still running when both newcomers finished"
wait "$lone" || { cat "$SRC/lone.out" >&2; tb_fail "lone transfer failed"; }
tb_log "$(tail -n 1 "$SRC/lone.out")"
same_file "$SRC/lone.dat" "$BETA_IN/lone.dat"
incoming_clean "$BETA_IN" c1.dat c2.dat c3.dat c4.dat q1.dat q2.dat q3.dat q4.dat q5.dat q6.dat \
        late1.dat late2.dat lone.dat
