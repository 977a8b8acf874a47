#!/bin/sh
# The engine is a library with a one-way interface: nothing under
# daemon/engine/ may include the job, control or daemon layer's headers,
# and conn/io (below the transfers) may not include the engine's state.
# TAP, one test per rule.
top=${1:?usage: check-layering.sh SOURCE_ROOT}
fail=0
n=0
check() {
        n=$((n + 1))
        desc=$1
        shift
        hits=$(grep -nE "$@" 2>/dev/null)
        if [ -n "$hits" ]; then
                echo "not ok $n - $desc"
                echo "$hits" | sed 's/^/# /'
                fail=1
        else
                echo "ok $n - $desc"
        fi
}
check "daemon/engine/ includes nothing of jobs, control or the daemon" \
        '^#include "(jobs|ctl|control|control-socket|daemon)\.h"' "$top"/daemon/engine/*.[ch]
check "conn and io do not see the engine's state" \
        '^#include "(engine-private|xfer|recv|send)\.h"' \
        "$top/daemon/engine/conn.c" "$top/daemon/engine/conn.h" "$top/daemon/engine/io.c" "$top/daemon/engine/io.h"
check "the daemon layer uses only the engine's public header" \
        '^#include "(engine-private|xfer|recv|send|conn|io)\.h"' "$top"/daemon/*.[ch]
echo "1..$n"
exit $fail
