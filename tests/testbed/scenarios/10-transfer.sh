#!/bin/bash
# Files of 0 bytes, 1 byte, a non-multiple of the slot size and 136 MiB go
# from alpha to beta byte-identical, each with a journald entry on both
# sides whose numbers agree with each other and with the file. Small files
# go over one lane, 136 MiB (136 chunks of 1 MiB: two whole 64 MiB digest
# groups and a short third) over the default 4; a receiver configured for fewer lanes than the sender asks
# for grants its own number. The digest
# does not depend on the lanes: both sides', `xferctl sum` of the source,
# the received file's user.rdmaxfer.digest and the split + xxh128sum
# recipe of xferctl(1) all agree.
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"

# recipe_batched FILE: xferctl(1)'s split + xxh128sum recipe, the same
# arithmetic with one xxh128sum for all the 1 MiB pieces instead of a
# process each (136 of them take 14 s under TCG). The recipe itself is
# run as written on the files of one 64 MiB block; big.dat has three.
recipe_batched() {
        local d g
        d=$(mktemp -d)
        split -b 1M -a 5 -d "$1" "$d/c"
        if compgen -G "$d/c*" >/dev/null; then
                xxh128sum "$d"/c* | cut -c1-32 | tr a-f A-F |
                        awk -v d="$d" '{ print > (d "/g" sprintf("%05d", int((NR - 1) / 64))) }'
                for g in "$d"/g*; do
                        basenc --base16 -d <"$g" | xxh128sum | cut -c1-32
                done
        fi | tr a-f A-F | basenc --base16 -d | xxh128sum | cut -c1-32
        rm -rf "$d"
}

peers_configure
start_peers

slot=$((1024 * 1024))
declare -A sizes=([empty.dat]=0 [one.dat]=1 [odd.dat]=$((3 * slot + 12345)) [big.dat]=$((136 * 1024 * 1024)))
# Lanes: 1 until each of them would get 8 chunks and a 1 MiB block, then
# the configured 4.
declare -A lanes=([empty.dat]=1 [one.dat]=1 [odd.dat]=1 [big.dat]=4)
declare -A digest ids digs
for name in empty.dat one.dat odd.dat big.dat; do
        size=${sizes[$name]}
        make_file "$SRC/$name" "$size"
        tb_log "sending $name ($size bytes)"
        line=$(send_ok "$SRC/$name")
        tb_log "xferctl: $line"
        [[ $line == *"$size bytes"* ]] || tb_fail "summary line does not give the byte count: $line"
        same_file "$SRC/$name" "$BETA_IN/$name"

        # Published files belong to the daemon's user and are not world-readable.
        [[ $(stat -c %U "$BETA_IN/$name") == rdmaxfer ]] || tb_fail "$name not owned by rdmaxfer"

        ids=() digs=()
        for side in "$ALPHA_UNIT send" "$BETA_UNIT recv"; do
                unit=${side% *} dir=${side#* }
                jfields_wait "$unit" "$name"
                [[ ${JF[RDMAXFER_DIRECTION]:-} == "$dir" ]] || tb_fail "$unit: no $dir entry for $name"
                [[ ${JF[RDMAXFER_RESULT]:-} == ok ]] || tb_fail "$unit: $name result not ok"
                [[ ${JF[RDMAXFER_BYTES]:-} == "$size" ]] || tb_fail "$unit: $name byte count"
                got=${JF[RDMAXFER_LANES]:-}
                [[ $got == "${lanes[$name]}" ]] || tb_fail "$unit: $name went over ${got:-no} lanes, not ${lanes[$name]}"
                usec=${JF[RDMAXFER_USEC]:-}
                mbps=${JF[RDMAXFER_MBPS]:-}
                msg=${JF[MESSAGE]:-}
                tb_log "$unit: $msg"
                [[ $msg == *"$mbps MB/s"* ]] || tb_fail "$unit: MESSAGE and RDMAXFER_MBPS disagree"
                # MB/s = bytes / usec, to one decimal.
                want=$(awk -v b="$size" -v u="$usec" 'BEGIN { printf "%.1f", (u > 0 ? b / u : 0) }')
                [[ $mbps == "$want" ]] || tb_fail "$unit: RDMAXFER_MBPS $mbps, bytes/usec gives $want"
                ids[$dir]=${JF[RDMAXFER_ID]:-} digs[$dir]=${JF[RDMAXFER_DIGEST]:-}
        done
        [[ -n ${ids[send]} && ${ids[send]} == "${ids[recv]}" ]] ||
                tb_fail "transfer ids differ: ${ids[send]} vs ${ids[recv]}"
        sd=${digs[send]}
        [[ -n $sd && $sd == "${digs[recv]}" ]] || tb_fail "digests differ: $sd vs ${digs[recv]}"
        got=$(xferctl sum "$SRC/$name") || tb_fail "xferctl sum $name failed"
        [[ $got == "$sd  $SRC/$name" ]] || tb_fail "xferctl sum says '$got', the journal $sd"
        got=$(getfattr --only-values -n user.rdmaxfer.digest "$BETA_IN/$name") ||
                tb_fail "$name was published without user.rdmaxfer.digest"
        [[ $got == "$sd" ]] || tb_fail "$name: user.rdmaxfer.digest is '$got', the journal $sd"
        if ((size <= 64 * slot)); then
                got=$(split -b 64M --filter='split -b 1M --filter=xxh128sum | cut -c1-32 | tr a-f A-F |
                        basenc --base16 -d | xxh128sum | cut -c1-32' "$BETA_IN/$name" | tr a-f A-F |
                        basenc --base16 -d | xxh128sum | cut -c1-32)
        else
                got=$(recipe_batched "$BETA_IN/$name")
        fi
        [[ $got == "$sd" ]] || tb_fail "$name: the split + xxh128sum recipe gives '$got', the journal $sd"
        digest[$name]=$sd
done
got=$(xferctl sum --cached "$BETA_IN/big.dat" /nonexistent 2>&1) && tb_fail "xferctl sum of a missing file exited 0"
[[ $got == *"${digest[big.dat]}  $BETA_IN/big.dat"* && $got == *"/nonexistent: No such file"* ]] ||
        tb_fail "xferctl sum --cached: $got"
tb_log "digests: xferctl sum, the xattr and split + xxh128sum agree with the journal"
incoming_clean "$BETA_IN" empty.dat one.dat odd.dat big.dat
tb_log "all sizes transferred intact"

# The receiver grants at most its own lanes; the sender asks for 8.
sed -i '/^lanes/d' "$ALPHA_CONF" "$BETA_CONF"
echo "lanes = 8" >>"$ALPHA_CONF"
echo "lanes = 2" >>"$BETA_CONF"
reload_applied "$ALPHA_UNIT" "$BETA_UNIT" lanes
line=$(send_ok "$SRC/big.dat" --as big2.dat)
tb_log "xferctl: $line"
same_file "$SRC/big.dat" "$BETA_IN/big2.dat"
for unit in "$ALPHA_UNIT" "$BETA_UNIT"; do
        jfields_wait "$unit" big2.dat
        got=${JF[RDMAXFER_LANES]:-}
        [[ $got == 2 ]] || tb_fail "$unit: asked for 8 lanes, beta allows 2, got ${got:-none}"
        got=${JF[RDMAXFER_DIGEST]:-}
        [[ $got == "${digest[big.dat]}" ]] || tb_fail "$unit: the digest over 2 lanes ($got) is not that over 4"
done
tb_log "a receiver's lanes setting caps what a sender gets"
