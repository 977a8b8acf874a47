#!/bin/bash
# Guest side of the testbed, exec'd by the image's testbed-boot (from
# testbed.service) with the host's run directory mounted at /mnt/testbed:
#   plan          what to run (written by tests/testbed/testbed)
#   stage/        the project's .deb, tools/ (rawpeer, stuckfs) and
#                 debian-tests/ (the package's autopkgtest)
#   sanitize/     the ASan+UBSan build's programs, when staged (TESTBED_SANITIZE)
#   testbed/      a copy of tests/testbed (this file, lib.sh, ...)
#   scripts/N/    the scripts to run
#   out/          results: ready, status, timing, journal.txt, diag.txt, share/
# Script output goes to the virtio port testbed.out, which the host streams.
# Whatever happens, the unit's Success/FailureAction powers the guest off.
set -uo pipefail

T=/mnt/testbed
OUT=$T/out
# shellcheck source=/dev/null
. "$T/plan"

export ALPHA_ADDR=198.18.0.1 BETA_ADDR=198.18.0.2
export ALPHA_DEV=rxe_alpha BETA_DEV=rxe_beta
export ALPHA_NETDEV=tb-alpha BETA_NETDEV=tb-beta
export TESTBED_LIB=$T/testbed/lib.sh TESTBED_ACCEL=$TB_ACCEL
export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [[ -x $T/sanitize/rdmaxferd ]]; then
        export TESTBED_SANITIZE=$T/sanitize
fi

open_port() {
        local p n
        for _ in $(seq 50); do
                [[ -e /dev/virtio-ports/testbed.out ]] && { echo /dev/virtio-ports/testbed.out; return; }
                for n in /sys/class/virtio-ports/*/name; do
                        [[ -r $n && $(cat "$n") == testbed.out ]] || continue
                        p=/dev/$(basename "$(dirname "$n")")
                        [[ -e $p ]] && { echo "$p"; return; }
                done
                sleep 0.1
        done
        return 1
}
if port=$(open_port); then
        exec 3>"$port"
else
        echo "runner: virtio port testbed.out not found; output goes to the console only"
        exec 3>/dev/console
fi

cut -d' ' -f1 /proc/uptime >"$OUT/ready"
uptime_s() { cut -d' ' -f1 /proc/uptime; }
t_ready=$(uptime_s)

# Messages for the host: to the port (so they show on the host's stdout) and
# the console/journal. In TAP mode they must be TAP comments.
host_note() {
        if [[ $TB_MODE == tap ]]; then echo "# testbed: $*" >&3; else echo "testbed-guest: $*" >&3; fi
        echo "runner: $*"
}

finish() {
        local status=$1
        # Seconds under TCG, and the host keeps them only on failure (or KEEP).
        if [[ $status != 0 || -n $TB_KEEP ]]; then
                write_diagnostics
        fi
        echo "$status" >"$OUT/status.tmp" && mv "$OUT/status.tmp" "$OUT/status"
        sync
        exit 0
}

write_diagnostics() {
        {
                # A wedged RDMA stack blocks these in the kernel for ever.
                if [[ -s /run/testbed-wedged ]]; then
                        echo "== RDMA not queried: $(head -n 1 /run/testbed-wedged)"
                else
                        echo "== rdma link show"; rdma link show
                        echo "== ibv_devinfo"; ibv_devinfo
                fi
                echo "== ip -s link"; ip -s link
                echo "== ip rule / routes"; ip rule; ip route show table all
                echo "== systemctl --failed"; systemctl --failed --no-pager
                echo "== systemctl status rdmaxferd*"; systemctl status --no-pager 'rdmaxferd*'
        } >"$OUT/diag.txt" 2>&1
        journalctl -b --no-pager -o short-monotonic >"$OUT/journal.txt" 2>&1
}

# Install the package the way a user would: dpkg -i, whose maintainer
# scripts create the user (sysusers), the directories (tmpfiles), update the
# catalog (systemd's trigger) and reload systemd. The image already has the
# package's dependencies (the guest has no network). Then the testbed's own
# tools, which are no part of the package.
install_build() {
        local debs=("$T"/stage/*.deb)
        [[ -f ${debs[0]} ]] || { echo "nothing staged"; return 0; }
        echo "+ [$(uptime_s)] dpkg -i ${debs[*]##*/}"
        DEBIAN_FRONTEND=noninteractive dpkg -i "${debs[@]}" || return 1
        if compgen -G "$T/stage/tools/*" >/dev/null; then
                echo "+ [$(uptime_s)] test tools into /usr/libexec/rdmaxfer-tests"
                install -D -m 0755 -t /usr/libexec/rdmaxfer-tests "$T"/stage/tools/* || return 1
        fi
        echo "+ [$(uptime_s)] done"
}

rdma_up() {
        [[ $(rdma link show "$ALPHA_DEV/1" 2>/dev/null) == *"state ACTIVE"* &&
           $(rdma link show "$BETA_DEV/1" 2>/dev/null) == *"state ACTIVE"* ]]
}

rdma_setup() {
        /bin/bash "$T/testbed/guest/rdma-setup.sh"
}

setup_failed() {
        local what=$1 log=$2
        host_note "$what failed:"
        sed 's/^/#   /' "$log" | tail -n 40 >&3
        [[ $TB_MODE == tap ]] && echo "Bail out! testbed: $what failed" >&3
        finish 1
}

# Both take seconds under TCG and touch different things: run them side by side.
t0=$(uptime_s)
( rdma_setup; rc=$?; echo "rdma setup took $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN{printf "%.1f", b-a}')s"; exit $rc ) \
        >"$OUT/rdma-setup.log" 2>&1 &
rdma_pid=$!
install_build >"$OUT/install.log" 2>&1 || setup_failed "installing the build" "$OUT/install.log"
t1=$(uptime_s)
wait "$rdma_pid" || setup_failed "RDMA endpoint setup" "$OUT/rdma-setup.log"
t2=$(uptime_s)
echo "runner started at guest uptime ${t_ready}s; install $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')s;" \
     "$(tail -n 1 "$OUT/rdma-setup.log") (in parallel); ready for scripts $(awk -v a="$t0" -v b="$t2" 'BEGIN{printf "%.1f", b-a}')s after start" \
     >"$OUT/timing"

# Scenarios share one guest: after each, put back what the install left.
[[ -d /etc/rdmaxferd ]] && cp -a /etc/rdmaxferd /var/lib/testbed-etc-rdmaxferd
reset_state() {
        local f units
        systemctl stop 'rdmaxferd*' >/dev/null 2>&1
        systemctl reset-failed 'rdmaxferd*' >/dev/null 2>&1
        units=$(ls -d /etc/systemd/system/rdmaxferd* /run/systemd/system/rdmaxferd* 2>/dev/null)
        rm -rf /etc/rdmaxferd /var/lib/rdmaxferd* /run/rdmaxferd* $units
        [[ -d /var/lib/testbed-etc-rdmaxferd ]] && cp -a /var/lib/testbed-etc-rdmaxferd /etc/rdmaxferd
        for f in /usr/lib/tmpfiles.d/rdmaxfer*.conf; do
                [[ -e $f ]] && systemd-tmpfiles --create "${f##*/}" >/dev/null 2>&1
        done
        # Seconds under TCG: only when the scenario added units or drop-ins.
        [[ -n $units ]] && systemctl daemon-reload
        # A scenario that brought up more endpoints (lib.sh: nodes_up) moved
        # alpha and beta onto the fabric: take it down; rdma_setup puts the pair back.
        if [[ -e /sys/class/net/tb-fabric ]]; then
                /bin/bash "$T/testbed/guest/fabric.sh" down >>"$OUT/rdma-setup.log" 2>&1 ||
                        host_note "taking the fabric down failed"
        fi
        # ...and one that added a second rail (lib.sh: rails_up) takes it down too.
        if [[ -e /sys/class/net/tb-alpha2 ]]; then
                /bin/bash "$T/testbed/guest/rails.sh" down >>"$OUT/rdma-setup.log" 2>&1 ||
                        host_note "taking the second rail down failed"
        fi
        rdma_up || rdma_setup >>"$OUT/rdma-setup.log" 2>&1 || host_note "re-creating the RDMA endpoints failed"
}

# run_script INDEX SHAREDIR: run script INDEX under its timeout, in its own
# process group (leftover background processes are killed afterwards).
# Sets RC and SECONDS_TAKEN.
run_script() {
        local i=$1 share=$2 script=${TB_SCRIPTS[$1]} t=${TB_TIMEOUTS[$1]} pid s0 s1 filter=cat
        mkdir -p "$share"
        rm -f /run/testbed-skip
        [[ $TB_MODE == tap ]] && filter="sed -u s/^/#\x20/"
        s0=$(uptime_s)
        (
                cd /root || exit 1
                TESTBED_SHARE=$share TB_SKIP_FILE=/run/testbed-skip TB_NAME=${TB_NAMES[$i]} \
                        exec timeout -k 10 "$t" /bin/bash "$script" "${TB_ARGS[@]}"
        ) </dev/null > >($filter >&3) 2>&1 &
        pid=$!
        wait "$pid"
        RC=$?
        kill -KILL -- "-$pid" 2>/dev/null
        s1=$(uptime_s)
        SECONDS_TAKEN=$(awk -v a="$s0" -v b="$s1" 'BEGIN{printf "%.1f", b-a}')
        # Let the output filter drain before the verdict line.
        sleep 0.2
}

status=0
if [[ $TB_MODE == single ]]; then
        run_script 0 "$OUT/share"
        case $RC in
        124|137) host_note "${TB_NAMES[0]} timed out after ${TB_TIMEOUTS[0]} s"; status=124 ;;
        *) status=$RC ;;
        esac
        echo "runner: ${TB_NAMES[0]} exited $RC after $SECONDS_TAKEN s"
else
        echo "1..${#TB_SCRIPTS[@]}" >&3
        host_note "$(cat "$OUT/timing")"
        for i in "${!TB_SCRIPTS[@]}"; do
                n=$((i + 1)) name=${TB_NAMES[$i]}
                echo "# ---- $name" >&3
                # A scenario left the RDMA stack wedged in the kernel
                # (lib.sh: rdma_link_del): nothing after it can run, and
                # that is a failure (the scenario that did it failed too).
                if [[ -s /run/testbed-wedged ]]; then
                        echo "not ok $n - $name (not run: $(head -n 1 /run/testbed-wedged))" >&3
                        status=1
                        continue
                fi
                run_script "$i" "$OUT/share/$name"
                case $RC in
                0) echo "ok $n - $name" >&3 ;;
                77) echo "ok $n - $name # SKIP $(head -n 1 /run/testbed-skip 2>/dev/null || echo "exit status 77")" >&3 ;;
                124|137) echo "not ok $n - $name (timed out after ${TB_TIMEOUTS[$i]} s)" >&3; status=1 ;;
                *) echo "not ok $n - $name (exit status $RC)" >&3; status=1 ;;
                esac
                echo "# $name took $SECONDS_TAKEN s" >&3
                echo "runner: $name exited $RC after $SECONDS_TAKEN s"
                ((n < ${#TB_SCRIPTS[@]})) && [[ ! -s /run/testbed-wedged ]] && reset_state
        done
fi
finish "$status"
