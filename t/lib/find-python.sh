# t/lib/find-python.sh - sourced by the interop tests (t/interop/*.sh).
#
# find_python IMPORTS WHAT: sets py to the first of $TORCH_PYTHON,
# $BENCH_PYTHON, $PYTHON and python3 that can run "import IMPORTS", or
# prints the TAP plan that skips the test (no Python with WHAT) and exits.
# Then makes the scratch directory $tmp, removed on exit.
find_python() {
    py=
    for p in "${TORCH_PYTHON:-}" "${BENCH_PYTHON:-}" "${PYTHON:-}" python3; do
        [ -n "$p" ] && "$p" -c "import $1" 2>/dev/null && { py=$p; break; }
    done
    if [ -z "$py" ]; then
        echo "1..0 # SKIP no Python with $2 (set TORCH_PYTHON)"
        exit 0
    fi
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
}
