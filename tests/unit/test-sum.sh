#!/bin/bash
# xferctl sum (client/sumcmd.c) against the recipe xferctl(1) documents:
# split into 64 MiB groups, each into 1 MiB blocks, xxh128sum each block,
# xxh128sum each group's hashes' bytes, xxh128sum the groups' hashes' bytes.
# Sizes around block and group boundaries; stdin; a missing file; --cached.
# TAP.
xferctl=${1:?usage: test-sum.sh XFERCTL}
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=$((1024 * 1024))
G=$((64 * B))

recipe() {
        split -b 64M --filter='split -b 1M --filter=xxh128sum | cut -c1-32 | tr a-f A-F | basenc --base16 -d | xxh128sum | cut -c1-32' "$1" |
                tr a-f A-F | basenc --base16 -d | xxh128sum | cut -c1-32
}

# The empty file's digest is fixed by the definition: XXH3-128 of nothing.
: >"$tmp/empty"
got=$("$xferctl" sum "$tmp/empty")
[[ $got == "99aa06d3014798d86001c324468d497f  $tmp/empty" ]]
ok $? "an empty file: XXH3-128 of nothing ($got)"

if ! command -v xxh128sum >/dev/null || ! command -v basenc >/dev/null; then
        skip "xxh128sum (package xxhash) or basenc (coreutils >= 8.31) missing: the recipe cannot run"
else
        # One pseudo-random stream, so every block differs from the others.
        head -c $((2 * G + 3 * B + 5)) /dev/urandom >"$tmp/data"
        all=0
        for size in 1 $((B - 1)) $B $((B + 1)) $((3 * B + 5)) $((G - 1)) $G $((G + 1)) $((2 * G + 3 * B + 5)); do
                head -c "$size" "$tmp/data" >"$tmp/f"
                want=$(recipe "$tmp/f")
                got=$("$xferctl" sum "$tmp/f" | cut -c1-32)
                if [[ $got != "$want" ]]; then
                        echo "# $size bytes: xferctl sum $got, the recipe $want"
                        all=1
                fi
        done
        ok $all "sizes 1, B-1, B, B+1, 3B+5, G-1, G, G+1, 2G+3B+5 (B = 1 MiB, G = 64 MiB): xferctl sum equals split + xxh128sum"
        want=$(recipe "$tmp/f")
        got=$("$xferctl" sum - <"$tmp/f")
        [[ $got == "$want  -" ]]
        ok $? "standard input: the same digest, named -"
        # Sparse files: holes (not read, hashed as zeros) at the start, in
        # the middle across a group boundary, off block boundaries, at the end.
        all=0
        rm -f "$tmp/s"
        truncate -s $((G + 7 * B + 100)) "$tmp/s"
        dd if="$tmp/data" of="$tmp/s" bs=64K iflag=count_bytes oflag=seek_bytes seek=$((3 * B + 12345)) \
                count=$((2 * B)) conv=notrunc status=none
        dd if="$tmp/data" of="$tmp/s" bs=64K iflag=skip_bytes,count_bytes oflag=seek_bytes skip=7 \
                seek=$((G - 1000)) count=5000 conv=notrunc status=none
        blocks=$(stat -c %b "$tmp/s")
        want=$(recipe "$tmp/s")
        got=$("$xferctl" sum "$tmp/s" | cut -c1-32)
        [[ $got == "$want" ]] || { echo "# sparse: xferctl sum $got, the recipe $want"; all=1; }
        truncate -s $((3 * B)) "$tmp/hole"
        [[ $("$xferctl" sum "$tmp/hole" | cut -c1-32) == "$(recipe "$tmp/hole")" ]] || all=1
        ok $all "a sparse file ($((blocks / 2)) KiB allocated of $(((G + 7 * B + 100) / 1024))) and one of nothing but a hole: as the recipe"
fi

out=$("$xferctl" sum "$tmp/empty" "$tmp/missing" 2>&1)
rc=$?
[[ $rc == 1 && $out == *"99aa06d3014798d86001c324468d497f  $tmp/empty"* &&
        $out == *"xferctl: $tmp/missing: No such file or directory"* ]]
ok $? "a missing file: said, the others still printed, exit 1 ($rc)"

"$xferctl" sum "$tmp" >/dev/null 2>&1
[[ $? == 1 ]]
ok $? "a directory: exit 1"

printf 'x' >"$tmp/cached"
if python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.rdmaxfer.digest", b"00112233445566778899aabbccddeeff")' \
        "$tmp/cached" 2>/dev/null; then
        got=$("$xferctl" sum --cached "$tmp/cached")
        [[ $got == "00112233445566778899aabbccddeeff  $tmp/cached" ]]
        ok $? "--cached prints the xattr, not the contents' digest"
        got=$("$xferctl" sum "$tmp/cached" | cut -c1-32)
        [[ $got != 00112233445566778899aabbccddeeff ]]
        ok $? "without --cached the file is read"
else
        skip "no user xattrs on $tmp's file system (or no python3): --cached not checked"
        skip "no user xattrs: --cached not checked"
fi

tap_done
