# TAP for the shell tests, sourced: ok STATUS TEXT (STATUS 0 passes),
# skip WHY, and tap_done at the end (the plan; exit 1 if any failed).
n=0
tap_failed=0

ok() {
        n=$((n + 1))
        if [[ $1 == 0 ]]; then
                echo "ok $n - $2"
        else
                echo "not ok $n - $2"
                tap_failed=1
        fi
}

skip() {
        n=$((n + 1))
        echo "ok $n # SKIP $1"
}

tap_done() {
        echo "1..$n"
        exit "$tap_failed"
}
