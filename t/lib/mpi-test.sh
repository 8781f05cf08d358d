# t/lib/mpi-test.sh - what the shell tests run under mpirun share (sourced,
# after top_builddir is set): a TAP skip without mpirun or in a build
# without MPI; $tmp, a scratch directory removed at exit; $mpi, the mpirun
# command (oversubscribed: CI has 2 cores; as root in CI's containers; no
# single-copy mechanism, which containers often forbid); ok STATUS TEXT,
# which prints TAP and counts $n and $fails.
#
# Under ASan, the programs run under mpirun make no leak check at exit:
# Open MPI's plugins leak and are unloaded by then, so their leaks cannot be
# told from tendo's.  A test whose program checks for leaks itself before
# MPI is finalized (t/t-comm) sets mpi_early_leak_check=1 first: the check
# stays on, with Open MPI's own libraries suppressed and full stacks.
if ! command -v mpirun > /dev/null 2>&1; then
    echo "1..0 # SKIP no mpirun (Debian: apt-get install openmpi-bin)"
    exit 0
fi
if ! grep -q '^#define TENDO_HAVE_MPI 1' "$top_builddir/config.h"; then
    echo "1..0 # SKIP this build has no MPI"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_btl_vader_single_copy_mechanism
mpi="mpirun --oversubscribe --allow-run-as-root --bind-to none"
n=0 fails=0
ok() { # ok COND-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
if [ "${mpi_early_leak_check:-0}" = 1 ]; then
    LSAN_OPTIONS="suppressions=${top_srcdir:-.}/t/lib/lsan-mpi.supp:print_suppressions=0:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    export LSAN_OPTIONS
else
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export ASAN_OPTIONS
fi
