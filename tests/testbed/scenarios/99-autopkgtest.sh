#!/bin/bash
# The package's autopkgtest (debian/tests/send-file, as
# autopkgtest-virt-qemu would run it on an isolation machine): against the
# installed package, with its own veth pair, rxe devices, routes and
# rdmaxferd@ instances beside the testbed's, all removed at its end. It
# exits 77 only without rdma_rxe, which this guest has: here 77 fails.
. "$TESTBED_LIB"

t=/mnt/testbed/stage/debian-tests
[[ -x $t/send-file ]] || tb_fail "$t/send-file is not staged (tests/testbed/testbed stage_build)"
grep -q '^Tests: send-file' "$t/control" || tb_fail "debian/tests/control does not name send-file"
rc=0
"$t/send-file" || rc=$?
((rc == 0)) || tb_fail "debian/tests/send-file exited $rc"
rdma link show | grep -q rxe_rdx && tb_fail "the autopkgtest left its rxe devices behind"
ip link show rdx-a >/dev/null 2>&1 && tb_fail "the autopkgtest left its veth pair behind"
tb_log "pass"
