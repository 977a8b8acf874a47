#!/bin/bash
# xferctl send -r's rules against rsync's own (client/filter.c, the walk of
# client/walk.c): for each set of --exclude/--include rules (and -from
# files), the entries the walk keeps beneath a tree are the entries
# rsync -r -l lists of it with the same rules. Hand-picked sets, then
# random ones from a fixed seed. Where xferctl(1) says it differs from
# rsync (several leading or trailing slashes, an empty pattern), no set
# goes. Needs rsync, else skipped. TAP.
walker=${1:?usage: test-filter-rsync.sh FILTER-WALK}
. "$(dirname "$0")/tap.sh"

if ! command -v rsync >/dev/null 2>&1; then
        skip "rsync is not installed: nothing to compare with"
        tap_done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t=$tmp/tree
mkdir -p "$t/.git/objects/ab" "$t/src/lib" "$t/build/sub" "$t/docs/build" "$t/logs/old" "$t/a/b/c/d" "$t/x/a/z" \
        "$t/a/z" "$t/sp ace" "$t/q" "$t/empty"
for f in .git/HEAD .git/objects/ab/cdef src/main.c src/main.o src/lib/util.c src/lib/util.o build/out.bin \
        build/sub/x.o docs/build/index.html logs/keep.log logs/run.log logs/old/keep.log logs/old/a.log notes.txt \
        a/b/c/d/z a/b/z a/z/k x/a/z/k 'sp ace/f' 'q/[x]' 'q/a*b' 'q/a\b' 'q/é' q/core build.o 'q/trail '; do
        echo "$f" >"$t/$f"
done
ln -s ../notes.txt "$t/src/link"
ln -s src "$t/linkdir"
printf '# a comment\n+ *.c\r\n; another\n\n*.o\n- z\nsrc/\n' >"$tmp/rules"
printf '*.o\n!\n- *.c\n' >"$tmp/clear"
printf 'trail \n' >"$tmp/trail"

# same RULES...: whether the walk with RULES keeps what rsync -r -l would
# copy (its --list-only: the sender's side, where the rules apply, in one
# process); a diff as TAP comments.
same() {
        local ours theirs
        ours=$("$walker" "$t" "$@" | LC_ALL=C sort) || return 1
        # "drwxr-xr-x 4,096 2024/01/02 03:04:05 NAME", "lrwx... NAME -> TARGET";
        # -8: bytes past 0x7f as they are.
        theirs=$(rsync -r -l -8 --list-only "$@" "$t/" |
                sed -E -e '/ \.$/d' -e 's/^(.)[^ ]* +[0-9,]+ [0-9/]+ [0-9:]+ /\1 /' -e 's/^-/f/' -e 's/^(l .*) -> .*/\1/' |
                LC_ALL=C sort) || return 1
        [[ $ours == "$theirs" ]] && return 0
        diff <(echo "$ours") <(echo "$theirs") | head -n 20 | sed 's/^/# /'
        return 1
}

while IFS= read -r line; do
        eval "set -- $line"
        same "$@"
        ok $? "as rsync: $line"
done <<'EOF'
--exclude .git/ --exclude '*.o' --exclude /build/ --include keep.log --exclude '*.log'
--exclude .git/ --include '*/' --include '*.c' --exclude '*'
--exclude 'a/**/z'
--exclude '**/z'
--exclude '**z'
--exclude 'a/**'
--exclude '/a/**'
--exclude '/**/z'
--exclude '**/b/**'
--exclude 'b/*/d'
--exclude '*/z'
--exclude '/*/z'
--exclude '*/*/k'
--exclude 'a*'
--exclude '/a*'
--exclude 'z/'
--exclude 'x/a/z/'
--exclude 'a/z'
--exclude 'a/z/k'
--exclude '/a/b'
--exclude 'a/***'
--exclude '/a/***'
--exclude 'a/****'
--exclude 'a***'
--exclude '***'
--exclude 'linkdir/'
--exclude 'linkdir'
--exclude 'empty/'
--exclude 'q/a\*b'
--exclude 'a\b'
--exclude 'q/a\b'
--exclude 'q/a\\b*'
--exclude 'a\b*'
--exclude '\[x]'
--exclude '[[]x]'
--exclude '[[:alpha:]]'
--exclude '[!a-m]*'
--exclude '[a-c]/[!x]*'
--exclude '*[[:digit:]]*'
--exclude '?'
--exclude '??'
--exclude 'é'
--exclude '?é'
--exclude 'sp ace/'
--exclude 'core'
--exclude 'build'
--exclude '- *.c'
--exclude '+ *.c' --exclude '*.c'
--include '- *.c'
--exclude '*.c' --exclude '!'
--exclude-from "$tmp/rules"
--include-from "$tmp/rules"
--exclude-from "$tmp/clear"
--exclude-from "$tmp/trail"
EOF

# Random sets of one to three rules from these pieces, from a fixed seed.
atoms=(a b z k c d q x src lib '*' '**' '?' '[a-c]' '[!a]' / . o log '***')
RANDOM=7
bad=0
for ((i = 0; i < 150; i++)); do
        args=()
        for ((j = RANDOM % 3; j >= 0; j--)); do
                p=''
                for ((k = RANDOM % 4; k >= 0; k--)); do
                        p+=${atoms[RANDOM % ${#atoms[@]}]}
                done
                ((RANDOM % 5 == 0)) && p=/$p
                ((RANDOM % 5 == 0)) && p+=/
                while [[ $p == *//* ]]; do p=${p//\/\//\/}; done
                [[ $p == / ]] && p=a
                if ((RANDOM % 3 == 0)); then args+=(--include "$p"); else args+=(--exclude "$p"); fi
        done
        if ! same "${args[@]}"; then
                echo "# differs: ${args[*]}"
                bad=$((bad + 1))
        fi
done
((bad == 0))
ok $? "150 random sets of rules: as rsync ($bad differ)"

tap_done
