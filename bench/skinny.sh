#!/bin/sh
# bench/skinny.sh - matrix-vector and skinny products, tendo against ggml's
# CPU backend, side by side, with the machine's read bandwidth.
#
#   bench/skinny.sh GGML_SRC_DIR [TENDO_BUILD_DIR]      (or: make bench-skinny GGML_SRC=DIR)
#
# GGML_SRC_DIR is a local checkout of ggml (github.com/ggml-org/ggml); this
# script fetches nothing.  It builds that ggml twice with cmake (Release,
# GGML_NATIVE=ON, CPU backend only, static), with GGML_LLAMAFILE=ON and =OFF,
# into $SKINNY_SCRATCH (default TENDO_BUILD_DIR/bench-ggml/{llamafile,plain};
# a build already there is reused), and compiles bench/ggml-skinny.c against
# each.  It makes bench/bench-skinny in TENDO_BUILD_DIR (default: .), a
# configured tendo build.  Then, in SKINNY_ROUNDS interleaved rounds (default
# 3), it measures the read bandwidth (bench-skinny --bandwidth: the faster
# of two ways of reading, rows side by side and one stream) and runs every
# case once in each of the four programs (tendo with W as [K,N] "kn" and as
# [N,K] viewed transposed "nkT", ggml, ggml+llamafile; the order rotates each
# round), one process at a time, and prints one table of the medians over
# rounds, in two regimes: "hot" (the same W every call) and "cold" (calls
# rotate among copies of W totalling > 4x the last-level cache).  %bw is W's
# bytes per second as a fraction of the read bandwidth at that thread count;
# "pairs" is the median over rounds of tendo's time / ggml+llamafile's in
# the same round (the two run one after the other, so a slow stretch of a
# shared machine weighs on both), and in how many rounds tendo was faster.
#
# Run it on a quiet machine: before each round it waits (up to SKINNY_WAIT
# seconds, default 600) until the CPUs are under 15% busy over a second; a
# case (all four programs) during which other processes took 10% or more of
# the CPUs is measured again (3 tries), and the output warns of any left so.
# Environment: SKINNY_PREPACK=1 (tendo's weights given to tensor_prepack
# first, as ggml repacks at load), SKINNY_ROUNDS, SKINNY_THREADS (default "1 2"), SKINNY_CASES
# (a file of "dtype M K N" lines instead of the built-in list), SKINNY_SCRATCH,
# SKINNY_LLC_BYTES (the cache size the cold regime is sized against),
# GGML_COMMIT (printed when GGML_SRC_DIR is not a git checkout), CC.  Each
# run's own figures are left in $SKINNY_SCRATCH/skinny-raw.txt.
# Differences to keep in mind: ggml's x and y are F32 whatever W's type
# (it converts x to W's type inside mul_mat); tendo's x and y are W's dtype.
# For M = 1 llamafile_sgemm declines (it takes 2 rows of x or more), so the
# "ggml" and "ggml+lf" columns of the matrix-vector cases run the same code,
# and their gap measures the machine's noise.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 GGML_SRC_DIR [TENDO_BUILD_DIR]" >&2
    exit 2
fi
ggml_src=$(cd "$1" && pwd)
build=$(cd "${2:-.}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
scratch=${SKINNY_SCRATCH:-$build/bench-ggml}
rounds=${SKINNY_ROUNDS:-3}
threads=${SKINNY_THREADS:-"1 2"}
cc=${CC:-cc}
jobs=2

[ -f "$ggml_src/include/ggml.h" ] || { echo "$0: $ggml_src has no include/ggml.h" >&2; exit 1; }
command -v cmake >/dev/null || { echo "$0: needs cmake (Debian: apt-get install cmake)" >&2; exit 1; }

# ---- build ggml twice -------------------------------------------------------
gen=
command -v ninja >/dev/null && gen="-G Ninja"
mkdir -p "$scratch"
for v in plain llamafile; do
    d=$scratch/$v
    if [ $v = llamafile ]; then lf=ON; else lf=OFF; fi
    if [ ! -f "$d/src/libggml-cpu.a" ] || [ ! -f "$d/src/libggml-base.a" ] || [ ! -f "$d/src/libggml.a" ]; then
        echo "== building ggml ($v, GGML_LLAMAFILE=$lf) in $d" >&2
        # shellcheck disable=SC2086
        cmake -S "$ggml_src" -B "$d" $gen -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_LLAMAFILE=$lf \
            -DBUILD_SHARED_LIBS=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DGGML_BLAS=OFF \
            -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_OPENCL=OFF -DGGML_CCACHE=OFF \
            >"$d.cmake.log" 2>&1 || { cat "$d.cmake.log" >&2; exit 1; }
        cmake --build "$d" -j $jobs --target ggml ggml-cpu ggml-base >"$d.build.log" 2>&1 ||
            { tail -40 "$d.build.log" >&2; exit 1; }
    fi
    grep -q "GGML_LLAMAFILE:BOOL=$lf" "$d/CMakeCache.txt" ||
        { echo "$0: $d was not configured with GGML_LLAMAFILE=$lf" >&2; exit 1; }
    "$cc" -O2 -std=c11 -I"$ggml_src/include" "$here/ggml-skinny.c" -o "$d/ggml-skinny" \
        "$d/src/libggml.a" "$d/src/libggml-cpu.a" "$d/src/libggml-base.a" -fopenmp -lstdc++ -lm -lpthread
done

# ---- build tendo's side -----------------------------------------------------
make -s -C "$build" bench/bench-skinny >&2
tendo=$build/bench/bench-skinny

# ---- cases ------------------------------------------------------------------
cases=$(mktemp)
res=$(mktemp)
snap0=$(mktemp)
snap1=$(mktemp)
trap 'rm -f "$cases" "$res" "$snap0" "$snap1"' EXIT INT TERM
if [ -n "${SKINNY_CASES:-}" ]; then
    grep -v '^[[:space:]]*\(#\|$\)' "$SKINNY_CASES" >"$cases"
else
    cat >"$cases" <<'EOF'
f32 1 4096 4096
f16 1 4096 4096
bf16 1 4096 4096
f32 1 4096 11008
f16 1 4096 11008
bf16 1 4096 11008
bf16 32 4096 4096
bf16 1024 1024 1024
f32 1024 1024 1024
EOF
fi

# ---- header -----------------------------------------------------------------
gcommit=$(git -C "$ggml_src" rev-parse HEAD 2>/dev/null || echo "${GGML_COMMIT:-unknown (not a git checkout; set GGML_COMMIT)}")
tsrc=$(sed -n 's/^abs_top_srcdir = //p' "$build/Makefile" 2>/dev/null || echo "?")
tcommit=$(git -C "$tsrc" describe --always --dirty 2>/dev/null || echo "not a git checkout")
echo "# bench/skinny.sh  $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cpus; llc: ${SKINNY_LLC_BYTES:-$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo '?')}"
echo "# ggml: $ggml_src @ $gcommit (Release, GGML_NATIVE=ON, OpenMP, x and y F32)"
echo "# tendo: $build (source $tsrc, $tcommit)"
echo "# rounds: $rounds; each figure is the median over rounds of each run's median ms per call"

# The percentage of CPU time busy over the next second (from /proc/stat).
busy_pct() {
    a=$(head -1 /proc/stat)
    sleep 1
    b=$(head -1 /proc/stat)
    printf '%s\n%s\n' "$a" "$b" | awk '{ t = 0; for (i = 2; i <= 9; i++) t += $i; tot[NR] = t; idle[NR] = $5 + $6 }
        END { dt = tot[2] - tot[1]; b = 0; if (dt > 0) b = 100 * (1 - (idle[2] - idle[1]) / dt); printf "%d\n", b }'
}
# Waits until the machine is quiet, at most SKINNY_WAIT seconds; prints the last busy %.
wait_quiet() {
    waited=0
    while :; do
        b=$(busy_pct)
        if [ "$b" -lt 15 ] || [ "$waited" -ge "${SKINNY_WAIT:-600}" ]; then
            echo "$b"
            return
        fi
        [ "$waited" -eq 0 ] && echo "   (CPUs $b% busy: waiting for a quiet machine)" >&2
        sleep 9
        waited=$((waited + 10))
    done
}

# Other processes' share of the CPUs between guard_start and guard_end, in %
# (guard_other; the snapshots must be taken in this shell, not a subshell):
# all the CPU time /proc/stat counts as busy, less what this script's own
# children (the programs measured) used, as `times` reports it.
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
guard_start() { times >"$snap0"; head -1 /proc/stat >>"$snap0"; }
guard_end() { times >"$snap1"; head -1 /proc/stat >>"$snap1"; }
guard_other() {
    awk -v hz="$hz" '
        function sec(x, a) { sub(/s$/, "", x); split(x, a, "m"); return a[1] * 60 + a[2] }
        FNR == 2 { kid[FILENAME == ARGV[1] ? 1 : 2] = sec($1) + sec($2) }
        FNR == 3 { f = FILENAME == ARGV[1] ? 1 : 2; t = 0; for (i = 2; i <= 9; i++) t += $i; tot[f] = t; busy[f] = t - $5 - $6 }
        END { dt = tot[2] - tot[1]; o = 0
              if (dt > 0) o = 100 * ((busy[2] - busy[1]) - hz * (kid[2] - kid[1])) / dt
              printf "%d\n", (o < 0 ? 0 : o) }' "$snap0" "$snap1"
}

# Runs "$@" (a group of measurements whose lines go to stdout) until other
# processes took under 10% of the CPUs meanwhile, at most 3 times, and
# appends the last try's lines to $res.
guarded() {
    try=1
    while :; do
        guard_start
        lines=$("$@")
        guard_end
        other=$(guard_other)
        if [ "$other" -lt 10 ] || [ $try -ge 3 ]; then
            break
        fi
        echo "   (other processes took $other% of the CPUs during: $*; again)" >&2
        wait_quiet >/dev/null
        try=$((try + 1))
    done
    [ "$other" -lt 10 ] || echo "# WARNING: other processes took $other% of the CPUs during: $*"
    printf '%s\n' "$lines" >>"$res"
}

measure_bw() {
    "$tendo" --bandwidth "$1" </dev/null | awk -v t="$1" '$1 == "bw" { print "bw -", t, $2 }'
}

# One case at one thread count, in each program, in the order given.
measure_case() {
    dt=$1 m=$2 k=$3 n=$4 t=$5
    shift 5
    for p in "$@"; do
        case $p in
        tendo-kn) out=$("$tendo" "$dt" "$m" "$k" "$n" "$t" kn </dev/null) ;;
        tendo-nkT) out=$("$tendo" "$dt" "$m" "$k" "$n" "$t" nkT </dev/null) ;;
        ggml) out=$("$scratch/plain/ggml-skinny" "$dt" "$m" "$k" "$n" "$t" </dev/null) ;;
        ggml-lf) out=$("$scratch/llamafile/ggml-skinny" "$dt" "$m" "$k" "$n" "$t" </dev/null) ;;
        esac
        echo "$out" | awk -v p="$p" -v c="$dt:$m:$k:$n" -v t="$t" \
            '$1 == "hot" { print p, c, t, $2, $4; if ($8 != "") print "call", c, t, $8 }'
    done
}

# ---- interleaved rounds -----------------------------------------------------
progs="tendo-kn tendo-nkT ggml ggml-lf"
r=1
while [ $r -le "$rounds" ]; do
    b=$(wait_quiet)
    echo "== round $r/$rounds (CPUs $b% busy before it)" >&2
    echo "round $r" >>"$res"
    [ "$b" -lt 15 ] || echo "# WARNING: round $r started on a busy machine ($b% busy)"
    for t in $threads; do
        guarded measure_bw "$t"
    done
    # rotate the program order each round
    order=$(echo "$progs" | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }')
    while read -r dt m k n; do
        for t in $threads; do
            # shellcheck disable=SC2086
            guarded measure_case "$dt" "$m" "$k" "$n" "$t" $order
        done
    done <"$cases"
    r=$((r + 1))
done

cp "$res" "$scratch/skinny-raw.txt"   # the per-run figures, for a second look

# ---- table ------------------------------------------------------------------
awk -v progs="$progs" -v threads="$threads" '
function median(key,    n, i, j, tmp, a) {
    n = cnt[key]
    if (!n) return -1
    for (i = 1; i <= n; i++) a[i] = val[key, i]
    for (i = 2; i <= n; i++) { tmp = a[i]; for (j = i - 1; j >= 1 && a[j] > tmp; j--) a[j + 1] = a[j]; a[j + 1] = tmp }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(key, v) { val[key, ++cnt[key]] = v }
NR == FNR { ncase++; cs[ncase] = $1 ":" $2 ":" $3 ":" $4; next }
$1 == "round" { rnd = $2; next }
$1 == "bw" { add("bw" SUBSEP $3, $4); next }
$1 == "call" { call = $4; next }
{ add($1 SUBSEP $2 SUBSEP $3 SUBSEP "hot", $4); add($1 SUBSEP $2 SUBSEP $3 SUBSEP "cold", $5)
  one[$1, $2, $3, "hot", rnd] = $4; one[$1, $2, $3, "cold", rnd] = $5 }
# The median over rounds of program q'"'"'s time / ggml+llamafile'"'"'s in the same round (-1: none), and in
# wins[q] the rounds where q was the faster: a slow stretch of the machine falls on both of a round.
function paired(q, c, t, reg,    r, n, x, y) {
    n = 0; wins[q] = 0
    for (r = 1; r <= rnd; r++) {
        x = one[P[q], c, t, reg, r]; y = one["ggml-lf", c, t, reg, r]
        if (x > 0 && y > 0) { val["pair", ++n] = x / y; if (x < y) wins[q]++ }
    }
    cnt["pair"] = n; pairs = n
    return median("pair")
}
END {
    np = split(progs, P, " "); nt = split(threads, T, " ")
    printf "# read bandwidth (GB/s, median):"
    for (i = 1; i <= nt; i++) { bw[T[i]] = median("bw" SUBSEP T[i]); printf "  %s thread%s %.1f", T[i], (T[i] > 1 ? "s" : ""), bw[T[i]] }
    printf "\n# tendo calls: tensor_%s; ratio = tendo ms / ggml+llamafile ms (<1: tendo faster)\n", call == "" ? "matmul" : call
    printf "# %%bw = W bytes / time / read bandwidth at that thread count\n"
    printf "# pairs: the median over rounds of tendo ms / ggml+llamafile ms in the same round, and in how many\n"
    printf "# rounds tendo was the faster (a slow stretch of the machine falls on both programs of a round)\n"
    for (g = 1; g <= 2; g++) {
        reg = g == 1 ? "cold" : "hot"
        printf "\n%-20s %3s %-4s %9s %9s %9s %9s %6s %6s %5s %5s %5s %5s %11s %11s\n", "case dt:MxKxN", "thr", "reg",
            "tendo-kn", "tendo-nkT", "ggml", "ggml+lf", "kn/lf", "nkT/lf", "%bwKN", "%bwNT", "%bwG", "%bwLF",
            "kn:pairs", "nkT:pairs"
        for (c = 1; c <= ncase; c++) {
            split(cs[c], f, ":"); es = f[1] == "f32" ? 4 : 2; wb = f[3] * f[4] * es
            for (i = 1; i <= nt; i++) {
                t = T[i]
                for (q = 1; q <= np; q++) ms[q] = median(P[q] SUBSEP cs[c] SUBSEP t SUBSEP reg)
                printf "%-20s %3s %-4s", f[1] ":" f[2] "x" f[3] "x" f[4], t, reg
                for (q = 1; q <= np; q++) printf "%s", (ms[q] < 0 ? sprintf(" %9s", "-") : sprintf(" %9.3f", ms[q]))
                for (q = 1; q <= 2; q++)
                    printf "%s", (ms[q] < 0 || ms[4] <= 0 ? sprintf(" %6s", "-") : sprintf(" %6.2f", ms[q] / ms[4]))
                for (q = 1; q <= np; q++)
                    printf "%s", (ms[q] <= 0 || bw[t] <= 0 ? sprintf(" %5s", "-") : sprintf(" %4.0f%%", 100 * wb / (ms[q] * 1e-3) / (bw[t] * 1e9)))
                for (q = 1; q <= 2; q++) {
                    pr = paired(q, cs[c], t, reg)
                    printf "%s", (pr < 0 ? sprintf(" %11s", "-") : sprintf(" %4.2f %6s", pr, wins[q] "/" pairs))
                }
                printf "\n"
            }
        }
    }
}' "$cases" "$res"
