#!/bin/sh
# t/drivers/t-comm.sh - the collectives between processes: t/t-comm under
# mpirun with 4 ranks (every collective, dtype and layout, on the CPU over
# MPI and on each rank's cuda:0 over NCCL where there is one: the
# simulated device in CI), its values again with 2 ranks, with and
# without the agreement (TENDO_COMM_CHECK=0), with MPI started by the
# program at MPI_THREAD_FUNNELED (--funneled), its failing calls with 9
# ranks (which agree another way), then a job whose last rank exits in the
# middle of a collective: mpirun must end it, with an error, rather than
# leave the others waiting.  Each run is under `timeout`, so a hang fails here.
# Skips without mpirun or in a build without MPI.
: "${top_builddir:=.}"
prog="$top_builddir/t/t-comm"
mpi_early_leak_check=1 # t-comm checks before MPI_Finalize
. "${top_srcdir:-.}/t/lib/mpi-test.sh"

# ---- every collective with 4 ranks: t-comm's checks, numbered on ----
timeout 600 $mpi -np 4 "$prog" > "$tmp/out" 2> "$tmp/err"
status=$?
while IFS= read -r line; do
    case $line in
    "ok "*) ok 0 "${line#ok [0-9]* - }" ;;
    "not ok "*) ok 1 "${line#not ok [0-9]* - }" ;;
    "1.."*) ;;
    *) echo "$line" ;;
    esac
done < "$tmp/out"
sed 's/^/# /' "$tmp/err" | head -40
ok "$status" "t-comm under mpirun -np 4 exits 0 (status $status; 124: timed out)"

# One more job of t-comm, counted as one check: "$1" names it, "$2" is the
# fewest checks it must pass, the rest is its command line.
job() {
    what=$1 least=$2
    shift 2
    timeout 600 "$@" > "$tmp/job.out" 2> "$tmp/job.err"
    status=$?
    total=$(grep -c '^ok' "$tmp/job.out")
    bad=$(grep -c '^not ok' "$tmp/job.out")
    grep '^not ok' "$tmp/job.out" | head -20 | sed 's/^/# /'
    sed 's/^/# /' "$tmp/job.err" | head -20
    ok "$([ "$status" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$total" -ge "$least" ] && echo 0 || echo 1)" \
        "$what: $total checks passed, $bad failed (status $status)"
}

# ---- the values again with 2 ranks and no agreement (MPI's own calls):
# at least the 4 ranks' checks of the dtypes' values, which end "on <device>" ----
values=$(grep -cE '^ok .* on (cpu|cuda:0)$' "$tmp/out")
job "t-comm under mpirun -np 2 with TENDO_COMM_CHECK=0" "$values" \
    env TENDO_COMM_CHECK=0 $mpi -x TENDO_COMM_CHECK -np 2 "$prog"

# ---- and with 2 ranks and the agreement: small all_reduces carried in the
# records and summed as a pair (src/comm/fold.c's two blocks) ----
job "t-comm under mpirun -np 2" "$values" $mpi -np 2 "$prog"

# ---- a program that started MPI at MPI_THREAD_FUNNELED: collectives on
# its main thread work, on another fail on every rank without a hang ----
job "t-comm --funneled under mpirun -np 2" 6 $mpi -np 2 "$prog" --funneled

# ---- the calls that must fail, with 9 ranks: more than agree by exchanging
# records (src/comm/mpi.c's EXCHANGE_MAX_RANKS), so by one MPI_Allreduce ----
job "t-comm --agreement under mpirun -np 9" 10 $mpi -np 9 "$prog" --agreement

# ---- a rank that dies mid-job ----
start=$(date +%s)
timeout 120 $mpi -np 4 "$prog" --die 50 > "$tmp/die.out" 2>&1
status=$?
took=$(( $(date +%s) - start ))
sed 's/^/# /' "$tmp/die.out" | grep -v '^# *$' | head -12
ok "$([ "$status" -ne 0 ] && [ "$status" -ne 124 ] && echo 0 || echo 1)" \
    "a rank that exits mid-job ends the job with an error in ${took}s (mpirun status $status; 124: hung)"
echo "1..$n"
[ "$fails" -eq 0 ]
