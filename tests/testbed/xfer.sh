# shellcheck shell=bash
# Transfer helpers for the daemon scenarios, sourced after lib.sh:
#   . "$TESTBED_LIB"; . "$(dirname "$TESTBED_LIB")/xfer.sh"

ALPHA_IN=/var/lib/rdmaxferd/incoming
BETA_IN=/var/lib/rdmaxferd-beta/incoming
SRC=/var/tmp/rdmaxfer-src
mkdir -p "$SRC"

# start_peers: start both daemons the way an admin does and wait until ready.
start_peers() {
        tb_run systemctl start "$ALPHA_UNIT" "$BETA_UNIT" || {
                journalctl -b --no-pager -u "$ALPHA_UNIT" -u "$BETA_UNIT" | tail -n 40 >&2
                tb_fail "systemctl start failed"
        }
        # Type=notify: start returns only after READY=1.
        systemctl is-active --quiet "$ALPHA_UNIT" || tb_fail "$ALPHA_UNIT not active"
        systemctl is-active --quiet "$BETA_UNIT" || tb_fail "$BETA_UNIT not active"
        [[ -S $ALPHA_SOCK && -S $BETA_SOCK ]] || tb_fail "control sockets missing"
}

stop_peers() {
        systemctl stop "$ALPHA_UNIT" "$BETA_UNIT" || true
}

# restart_peers: after peers_configure changed the config.
restart_peers() {
        tb_run systemctl restart "$ALPHA_UNIT" "$BETA_UNIT" || tb_fail "restart failed"
}

# reload_applied UNIT... KEY: systemctl reload each UNIT (its ExecReload
# only sends SIGHUP; one systemctl call, so they reload side by side) and
# wait until every daemon logs that it applied KEY.
reload_applied() {
        local key=${*: -1} units=("${@:1:$#-1}") unit cur
        local -A curs=()
        for unit in "${units[@]}"; do
                curs[$unit]=$(journalctl -u "$unit" -n 1 --no-pager -o export | sed -n 's/^__CURSOR=//p')
        done
        tb_run systemctl reload "${units[@]}" || tb_fail "systemctl reload ${units[*]} failed"
        for unit in "${units[@]}"; do
                cur=${curs[$unit]}
                wait_for 15 bash -c "journalctl -u '$unit' --no-pager -o cat --after-cursor '$cur' |
                        grep -qE 'reloaded .*applied .*\\b$key\\b'" ||
                        tb_fail "$unit did not log that its reload applied $key"
        done
}

# make_file PATH SIZE: random contents (SIZE in bytes). shred's one random
# pass (a userspace PRNG seeded from getrandom) writes them 3.5 times as
# fast as /dev/urandom reads under TCG (256 MiB: 3.5 s, not 12.4 s).
make_file() {
        local path=$1 size=$2
        : >"$path"
        if ((size > 0)); then
                shred -n 1 -s "$size" "$path" || tb_fail "make_file $path: shred failed"
        fi
        [[ $(stat -c %s "$path") == "$size" ]] || tb_fail "make_file $path"
}

# make_zeros PATH SIZE: a file of SIZE bytes that costs no time to make or
# to read (blocks allocated but never written: all zeros), for transfers
# only ever cut off mid-way, whose contents are never compared. Not a hole:
# a sparse file's holes are never sent (wire.h, Sparse files), so a file of
# nothing but a hole would move no data at all.
make_zeros() {
        rm -f "$1"
        fallocate -l "$2" "$1" || tb_fail "make_zeros $1"
}

# send_ok FILE [xferctl send options...]: alpha sends FILE to beta; must succeed.
send_ok() {
        local file=$1 out
        shift
        out=$(xferctl send "$file" "$BETA_ADDR" "$@" 2>&1) || {
                printf '%s\n' "$out" >&2
                tb_fail "xferctl send $file failed"
        }
        printf '%s\n' "$out" | tail -n 1
}

# send_fails FILE PATTERN [options...]: the send must fail (exit 1) and say PATTERN.
send_fails() {
        local file=$1 pattern=$2 out rc=0
        shift 2
        out=$(xferctl send "$file" "$BETA_ADDR" "$@" 2>&1) || rc=$?
        printf '%s\n' "$out" | tail -n 2
        ((rc != 0)) || tb_fail "send of $file succeeded, expected failure ($pattern)"
        grep -qiE "$pattern" <<<"$out" || tb_fail "send of $file failed without saying '$pattern': $out"
}

# same_file A B: byte-identical.
same_file() {
        cmp -s "$1" "$2" || tb_fail "$2 differs from $1"
}

# jfield UNIT FILE FIELD [RESULT]: FIELD of the newest transfer entry for FILE.
jfield() {
        local unit=$1 file=$2 field=$3
        journalctl -u "$unit" --no-pager -o export RDMAXFER_FILE="$file" |
                sed -n "s/^$field=//p" | tail -n 1
}

# jfields UNIT FILE: every field of UNIT's transfer entries for FILE into
# the associative array JF, each with the value jfield would give (the
# newest). One journalctl for all of them: under TCG each costs about half
# a second once the journal has grown.
declare -gA JF=()
jfields() {
        local line
        JF=()
        while IFS= read -r line; do
                if [[ $line == [A-Z_]*=* ]]; then JF[${line%%=*}]=${line#*=}; fi
        done < <(journalctl -u "$1" --no-pager -o export RDMAXFER_FILE="$2" | tr -d '\000')
}

# jfields_wait UNIT FILE: jfields, given up to 10 s for the entry with a
# RDMAXFER_RESULT to be in the journal (a daemon may log it a moment after
# xferctl returned). The caller checks what JF holds.
jfields_wait() {
        local i
        for ((i = 0; i < 50; i++)); do
                jfields "$1" "$2"
                if [[ -n ${JF[RDMAXFER_RESULT]:-} ]]; then return 0; fi
                sleep 0.2
        done
}

# stamp_mtimes DIR: a distinct mtime (ns too) on every entry beneath DIR
# and DIR itself, entries before their directories, symlinks themselves.
stamp_mtimes() {
        local n=0 p
        while read -r p; do
                n=$((n + 1))
                touch -h -d "@$((1500000000 + n * 1000)).$((n * 7919 % 1000000000))" "$p"
        done < <(find "$1" -depth)
}

# jobs_since UNIT SINCE DIRECTION: UNIT's transfer entries of DIRECTION
# (send, recv) since SINCE (journalctl's --since), as -o export without
# NULs, given up to 10 s for one with a RDMAXFER_RESULT to be there: a
# receiver logs its job a moment after the sender's xferctl returned, and
# journald writes what it is sent asynchronously.
jobs_since() {
        local i js
        for ((i = 0; i < 50; i++)); do
                js=$(journalctl -u "$1" --no-pager --since "$2" -o export RDMAXFER_DIRECTION="$3" | tr -d '\000')
                if grep -q '^RDMAXFER_RESULT=' <<<"$js"; then break; fi
                sleep 0.2
        done
        printf '%s\n' "$js"
}

# incoming_clean DIR [ALLOWED...]: nothing in DIR but the ALLOWED names
# (no temporary or partial files).
incoming_clean() {
        local dir=$1 f extra=()
        shift
        for f in $(ls -A "$dir"); do
                [[ " $* " == *" $f "* ]] || extra+=("$f")
        done
        ((${#extra[@]} == 0)) || tb_fail "unexpected files in $dir: ${extra[*]}"
}

# job_field JSON KEY: a value from xferctl --json output.
job_field() {
        sed -n "s/.*\"$2\": *\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$1" | head -n 1
}

# wait_state ID STATE TIMEOUT: wait until job ID on alpha is in STATE.
job_in_state() {
        xferctl status "$1" 2>/dev/null | grep -qiE "state:? *$2"
}

# beta_back SINCE: beta has logged, since SINCE (seconds since the epoch),
# that it listens on its RDMA device again (after losing it).
beta_back() {
        journalctl -u "$BETA_UNIT" --no-pager --since "@${1%.*}" | grep -q "is back: listening"
}

# as USER COMMAND...: COMMAND as USER, with USER's groups (what a login gives).
as() {
        local u=$1
        shift
        setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$@"
}

# munge_up: munged running, with the node's key (made here the first time:
# the guest's nodes are one host, so one key is the whole cluster's).
munge_up() {
        if [[ ! -s /etc/munge/munge.key ]]; then
                dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
                chown munge: /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
        fi
        tb_run systemctl start munge || tb_fail "munged did not start"
}

# restart_killed UNIT PID: UNIT back at once after its main process PID
# was killed, not after the unit's RestartSec (Restart=on-failure would
# start it 2 s later): once systemd has seen PID go, restart it unless it
# runs again already (a start would wait out the holdoff; a restart does
# not). Returns once it is ready (Type=notify).
restart_killed() {
        local unit=$1 pid=$2
        wait_for 10 bash -c "[[ \$(systemctl show -p MainPID --value '$unit') != '$pid' ]]" ||
                tb_fail "systemd did not see $unit's process $pid go"
        systemctl is-active --quiet "$unit" || tb_run systemctl restart "$unit" || tb_fail "restarting $unit failed"
}
