# bash completion for xferctl(1): commands, their options, local files for
# send's FILE, hosts for its PEER, and job IDs for status and cancel.
# Plain bash (compgen, compopt); bash-completion's helpers are not needed.

# Job IDs the daemon shows this user, from `xferctl list --json`. Every
# quote inside a JSON string is escaped (\"), so no job name can forge an
# "id": key. $1: the --socket given on the line, if any.
_xferctl_ids() {
        local sock=$1
        xferctl ${sock:+--socket "$sock"} list --json 2>/dev/null |
                grep -o '"id":[0-9][0-9]*' | cut -d: -f2
}

_xferctl() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        local i w cmd='' cmd_i=0 sock='' npos=0 opts

        COMPREPLY=()
        # Global options come before the command. "=" is a word of its own
        # in COMP_WORDS (COMP_WORDBREAKS): --socket=PATH is three words.
        for ((i = 1; i < COMP_CWORD; i++)); do
                w=${COMP_WORDS[i]}
                case $w in
                -s | --socket)
                        if [[ ${COMP_WORDS[i + 1]} == = ]]; then
                                ((i++))
                        fi
                        ((i + 1 < COMP_CWORD)) && sock=${COMP_WORDS[i + 1]}
                        ((i++))
                        ;;
                -*) ;;
                *)
                        cmd=$w
                        cmd_i=$i
                        break
                        ;;
                esac
        done

        if [[ -z $cmd ]]; then
                if [[ $prev == -s || $prev == --socket || ($prev == = && ${COMP_WORDS[COMP_CWORD - 2]} == --socket) ]]; then
                        compopt -o filenames 2>/dev/null
                        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                elif [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W '-s --socket -h --help -V --version' -- "$cur")
                else
                        mapfile -t COMPREPLY < <(compgen -W 'send list status cancel stats sum hosts bcast help' -- "$cur")
                fi
                return 0
        fi

        # Positional arguments before the current word (an option's argument is not one).
        for ((i = cmd_i + 1; i < COMP_CWORD; i++)); do
                w=${COMP_WORDS[i]}
                case $w in
                --as | --bwlimit | --retries | --sync | --exclude | --include | --exclude-from | --include-from | --peer-names | --nodes | --job)
                        [[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
                        ((i++))
                        ;;
                -*) ;;
                *) ((npos++)) ;;
                esac
        done

        case $cmd in
        send) opts='--as --bwlimit --retries --no-wait --json --parallel --peer-names -r --recursive --to --links -H --hard-links --no-hard-links -S --sparse --no-sparse --continue-on-error --skip-existing --sync --delete --delete-excluded -n --dry-run -i --itemize-changes --exclude --include --exclude-from --include-from -h --help' ;;
        list | stats | status) opts='--json -h --help' ;;
        cancel) opts='-h --help' ;;
        hosts) opts='--resolve --peer-names -h --help' ;;
        bcast) opts='-r --recursive --nodes --job --bwlimit --retries --no-wait --json --parallel --peer-names --links -H --hard-links --no-hard-links -S --sparse --no-sparse --continue-on-error --exclude --include --exclude-from --include-from -h --help' ;;
        sum) opts='--cached -h --help' ;;
        help) opts='' ;;
        *) return 0 ;;
        esac

        w=$prev
        [[ $prev == = ]] && w=${COMP_WORDS[COMP_CWORD - 2]}
        if [[ $cmd == bcast && ($w == --nodes || $w == --job || $w == --bwlimit || $w == --retries ||
                $w == --parallel || $w == --exclude || $w == --include) ]]; then
                return 0        # a hostlist, a job id, a rate, a count or a pattern
        fi
        if [[ $cmd == bcast ]]; then
                cmd=send        # the rest as send's: --links, --sync, -from files
        fi
        if [[ $cmd == send && ($w == --as || $w == --bwlimit || $w == --retries || $w == --to || $w == --parallel ||
                $w == --exclude || $w == --include) ]] || [[ $w == --peer-names ]]; then
                return 0        # a name, a rate, a count, a destination or a pattern of the user's choosing
        fi
        if [[ $cmd == send && ($w == --exclude-from || $w == --include-from) ]]; then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                return 0
        fi
        if [[ $cmd == send && $w == --links ]]; then
                mapfile -t COMPREPLY < <(compgen -W 'safe all none' -- "$cur")
                return 0
        fi
        if [[ $cmd == send && $w == --sync ]]; then
                mapfile -t COMPREPLY < <(compgen -W 'size digest' -- "$cur")
                return 0
        fi
        if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
                return 0
        fi
        case $cmd in
        bcast)
                # SRC... DEST: local files; DEST is the user's to name.
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                ;;
        send)
                if ((npos == 0)); then
                        compopt -o filenames 2>/dev/null
                        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                elif ((npos == 1)); then
                        mapfile -t COMPREPLY < <(compgen -A hostname -- "$cur")
                fi
                ;;
        sum)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                ;;
        status | cancel)
                ((npos == 0)) && mapfile -t COMPREPLY < <(compgen -W "$(_xferctl_ids "$sock")" -- "$cur")
                ;;
        help)
                ((npos == 0)) && mapfile -t COMPREPLY < <(compgen -W 'send list status cancel stats sum hosts bcast' -- "$cur")
                ;;
        esac
        return 0
}

complete -F _xferctl xferctl
