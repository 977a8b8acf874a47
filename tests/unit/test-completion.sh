#!/bin/bash
# Shell completion for xferctl (completions/): what <TAB> offers, as bash
# computes it with the completion function the package installs. A fake
# xferctl on PATH stands in for the daemon's job list. zsh: its file is
# checked to parse when zsh is installed (driving zsh's completion system
# needs a terminal), else skipped. TAP.
top=${1:?usage: test-completion.sh SOURCE_ROOT}
. "$(dirname "$0")/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The daemon as `xferctl list --json` shows it: a name that looks like an id
# must not become one. Records its arguments.
mkdir "$tmp/bin" "$tmp/files"
cat >"$tmp/bin/xferctl" <<'FAKE'
#!/bin/sh
echo "$*" >>"$XFERCTL_FAKE_LOG"
case "$*" in
*"list --json"*)
        printf '%s\n' '[{"id":1733000000000017,"state":"queued","name":"a\",\"id\":666,\"x"},{"id":42,"state":"sending","name":"b"}]' ;;
*) exit 3 ;;
esac
FAKE
chmod +x "$tmp/bin/xferctl"
export PATH="$tmp/bin:$PATH" XFERCTL_FAKE_LOG="$tmp/log"
touch "$tmp/files/data one.bin" "$tmp/files/data2.bin" "$tmp/files/other.txt"

# shellcheck source=../../completions/xferctl.bash
. "$top/completions/xferctl.bash"

# comp WORD...: complete the last word of "xferctl WORD..." (the cursor at
# its end); prints COMPREPLY sorted, one per line.
comp() {
        COMP_WORDS=(xferctl "$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        _xferctl xferctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
}

# expect WANT DESCRIPTION WORD...: the completions, one per line.
expect() {
        local want=$1 desc=$2 got
        shift 2
        got=$(comp "$@")
        [[ $got == "$want" ]]
        ok $? "$desc"
        [[ $got == "$want" ]] || printf '# got:  %s\n# want: %s\n' "${got//$'\n'/ }" "${want//$'\n'/ }"
}

complete -p xferctl >/dev/null 2>&1
ok $? "sourcing registers a completion for xferctl"
expect $'bcast\ncancel\nhelp\nhosts\nlist\nsend\nstats\nstatus\nsum' "xferctl <TAB>: the commands" ""
expect $'stats\nstatus' "xferctl st<TAB>" st
expect $'--help\n--socket\n--version\n-V\n-h\n-s' "xferctl -<TAB>: the global options" -
expect $'--as\n--bwlimit\n--continue-on-error\n--delete\n--delete-excluded\n--dry-run\n--exclude\n--exclude-from\n--hard-links\n--help\n--include\n--include-from\n--itemize-changes\n--json\n--links\n--no-hard-links\n--no-sparse\n--no-wait\n--parallel\n--peer-names\n--recursive\n--retries\n--skip-existing\n--sparse\n--sync\n--to' "xferctl send --<TAB>: send's options" send --
expect $'--help\n--json' "xferctl stats --<TAB>" stats --
expect $'--cached\n--help' "xferctl sum --<TAB>: its options" sum --
expect $'--help' "xferctl cancel --<TAB>" cancel --h
expect $'--help' "xferctl hosts --<TAB>" hosts --h
expect $'--help\n--peer-names\n--resolve' "xferctl hosts --<TAB>: its options" hosts --
expect "" "xferctl hosts --peer-names <TAB>: a pattern is the user's" hosts --peer-names ""
expect "" "xferctl send FILE --peer-names <TAB>: a pattern is the user's" send /etc/hostname --peer-names ""
expect $'1733000000000017\n42' "xferctl cancel <TAB>: the job IDs, none forged by a name" cancel ""
expect $'42' "xferctl status 4<TAB>" status 4
expect "" "xferctl cancel ID <TAB>: one ID only" cancel 42 ""
: >"$tmp/log"
comp --socket /run/rdmaxferd-ib1/control.sock status "" >/dev/null
grep -qx -- "--socket /run/rdmaxferd-ib1/control.sock list --json" "$tmp/log"
ok $? "the IDs come from the daemon named by --socket on the line"
: >"$tmp/log"
comp --socket = /run/x.sock cancel "" >/dev/null
grep -qx -- "--socket /run/x.sock list --json" "$tmp/log"
ok $? "and by --socket=PATH"
expect $'bcast\ncancel\nhosts\nlist\nsend\nstats\nstatus\nsum' "xferctl help <TAB>: the commands" help ""
expect "$tmp/files/data one.bin"$'\n'"$tmp/files/data2.bin" "xferctl send FILE<TAB>: local files" \
        send "$tmp/files/da"
expect "" "xferctl send FILE --as <TAB>: a name is the user's" send "$tmp/files/other.txt" --as ""
expect "" "xferctl send FILE --bwlimit <TAB>: a rate is the user's" send "$tmp/files/other.txt" --bwlimit ""
expect "" "xferctl send -r DIR --to <TAB>: a destination is the user's" send -r "$tmp/files" --to ""
expect $'all\nnone\nsafe' "xferctl send -r DIR --links <TAB>: which symlinks" send -r "$tmp/files" --links ""
expect $'digest\nsize' "xferctl send -r DIR --sync <TAB>: how" send -r "$tmp/files" --sync ""
expect "$tmp/files/data one.bin"$'\n'"$tmp/files/data2.bin" "xferctl send --retries N FILE<TAB>: N is not the FILE" \
        send --retries 3 "$tmp/files/da"
expect "" "xferctl send -r DIR --exclude <TAB>: a pattern is the user's" send -r "$tmp/files" --exclude ""
expect "" "xferctl send -r DIR --include=<TAB>: so is this one" send -r "$tmp/files" --include = ""
expect "$tmp/files/other.txt" "xferctl send -r DIR --exclude-from <TAB>: a file" send -r "$tmp/files" --exclude-from "$tmp/files/o"
expect "$tmp/files/other.txt" "xferctl send -r DIR --include-from=<TAB>: a file" send -r "$tmp/files" --include-from = "$tmp/files/o"
expect "$tmp/files/data one.bin"$'\n'"$tmp/files/data2.bin" "xferctl send -r --exclude PATTERN DIR<TAB>: PATTERN is not the DIR" \
        send -r --exclude '*.o' "$tmp/files/da"
expect "$tmp/files/other.txt" "xferctl --socket <TAB>: a path" --socket "$tmp/files/o"
expect "" "xferctl send FILE PEER <TAB>: nothing more" send x localhost ""
expect $'--job\n--json' "xferctl bcast --j<TAB>" bcast --j
expect $'--no-hard-links\n--no-sparse\n--no-wait\n--nodes' "xferctl bcast --no<TAB>" bcast --no
expect "" "xferctl bcast --nodes <TAB>: a hostlist is the user's" bcast --nodes ""
expect "" "xferctl bcast --job <TAB>: so is the job" bcast --job ""
expect "$tmp/files/data one.bin"$'\n'"$tmp/files/data2.bin" "xferctl bcast --job ID SRC<TAB>: local files" \
        bcast --job 7 "$tmp/files/da"
expect $'all\nnone\nsafe' "xferctl bcast -r DIR --links <TAB>: as send's" bcast -r "$tmp/files" --links ""

if command -v zsh >/dev/null 2>&1; then
        zsh -n "$top/completions/_xferctl"
        ok $? "zsh: _xferctl parses"
        head -n 1 "$top/completions/_xferctl" | grep -qx '#compdef xferctl'
        ok $? "zsh: it starts with #compdef xferctl"
else
        skip "zsh is not installed: _xferctl not checked"
fi

tap_done
