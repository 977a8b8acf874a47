#!/bin/sh
# The testbed's scripts that speak the control protocol themselves (a perl
# WATCH in 95-local-users) must speak the daemon's CTL_VERSION: a bump
# that misses them fails them only in the guest, late. And xferctl(1)
# says which version it speaks: a bump that misses it misleads. TAP.
# Usage: test-ctl-version.sh SOURCE_ROOT
root=$1
want=$(sed -n 's/^#define CTL_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$root/common/ctl.h")
echo "1..3"
if [ -n "$want" ]; then echo "ok 1 - CTL_VERSION is $want"; else echo "not ok 1 - no CTL_VERSION in common/ctl.h"; fi
got=$(sed -n "s/.*pack('VvvVQ<', 0x4c544358, \([0-9]*\),.*/\1/p" "$root/tests/testbed/scenarios/95-local-users.sh")
if [ -n "$got" ] && [ "$got" = "$want" ]; then
        echo "ok 2 - 95-local-users' WATCH speaks version $got"
else
        echo "not ok 2 - 95-local-users' WATCH speaks version '$got', the daemon $want"
fi
man=$(sed -n 's/.*speaks control protocol version \([0-9]*\),.*/\1/p' "$root/doc/xferctl.1.scd")
if [ -n "$man" ] && [ "$man" = "$want" ]; then
        echo "ok 3 - xferctl(1) says version $man"
else
        echo "not ok 3 - xferctl(1) says control protocol version '$man', the daemon speaks $want"
fi
