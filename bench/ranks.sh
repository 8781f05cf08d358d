#!/bin/sh
# bench/ranks.sh TENDO_TRAIN [STEPS] - data-parallel training throughput
# (make bench-train-ranks): tendo-train on examples/byte-llama.json with a
# global batch of 8 windows of 256 bytes, one process with one thread,
# then mpirun -np 2 with one thread each (4 rows per rank), one after the
# other; prints each run's tokens/s (median of the steps after the first
# 3), their ratio, and the share of the 2-rank run spent averaging the
# gradients.  Not a test.
train=${1:?usage: bench/ranks.sh TENDO_TRAIN [STEPS]}
steps=${2:-30}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_btl_vader_single_copy_mechanism
args="--batch 8 --seq 256 --steps $steps --val-batches 0 --threads 1 $src/examples/byte-llama.json $src/README.md"
median() { # tokens/s of loss.csv's steps after the third
    awk -F, 'NR > 4 { print $6 }' "$1/loss.csv" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
"$train" $args "$tmp/one" > "$tmp/one.out" || exit 1
mpirun --oversubscribe --allow-run-as-root --bind-to none -np 2 "$train" $args "$tmp/two" > "$tmp/two.out" || exit 1
one=$(median "$tmp/one") two=$(median "$tmp/two")
echo "tendo-train, byte-llama.json, global batch 8 x 256 bytes, $steps steps (median tokens/s after step 3)"
echo "  1 rank  x 1 thread: $one tokens/s"
echo "  2 ranks x 1 thread: $two tokens/s"
awk -v a="$one" -v b="$two" 'BEGIN { printf "  ratio: %.2fx\n", b / a }'
grep 'averaging the gradients' "$tmp/two.out" | sed 's/^tendo-train: /  /'
