#!/bin/sh
# bench/ranks.sh TENDO_TRAIN TENDO_GENERATE [STEPS] - many processes against
# one (make bench-ranks), one run after the other, each rank one thread:
# - data-parallel training: tendo-train on examples/byte-llama.json with a
#   global batch of 8 windows of 256 bytes, one process, then mpirun -np 2
#   (4 rows per rank): each run's tokens/s (median of the steps after the
#   first 3), their ratio, and the share of the 2-rank run spent averaging
#   the gradients;
# - tensor-parallel decoding: tendo-generate of 64 tokens with a decoder of
#   94 M parameters (d 1024, 8 layers, 16 heads, 8 key-value heads, MLP
#   2816; made by one step of tendo-train), one process, then 2 ranks: the
#   time per token, their ratio, and the all_reduces' share of a token.
# Not a test.
train=${1:?usage: bench/ranks.sh TENDO_TRAIN TENDO_GENERATE [STEPS]}
gen=${2:?usage: bench/ranks.sh TENDO_TRAIN TENDO_GENERATE [STEPS]}
steps=${3:-30}
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

cat > "$tmp/big.json" <<'JSON'
{"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816, "num_attention_heads": 16,
 "num_key_value_heads": 8, "num_hidden_layers": 8, "vocab_size": 256, "max_position_embeddings": 512,
 "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "hidden_act": "silu"}
JSON
"$train" --batch 2 --seq 16 --steps 1 --val-batches 0 --quiet "$tmp/big.json" "$src/README.md" "$tmp/big" || exit 1
# the prompt "tendo " as i64 token ids (bytes), written as .npy by hand
{
    printf '\223NUMPY\001\000\166\000'
    printf "%-117s\n" "{'descr': '<i8', 'fortran_order': False, 'shape': (6,), }"
    for c in 116 101 110 100 111 32; do
        printf "$(printf '\\%03o' "$c")\000\000\000\000\000\000\000"
    done
} > "$tmp/prompt.npy"
OMP_NUM_THREADS=1 "$gen" --tokens 64 "$tmp/big" "$tmp/prompt.npy" "$tmp/o1.npy" 2> "$tmp/g1.err" || exit 1
OMP_NUM_THREADS=1 mpirun --oversubscribe --allow-run-as-root --bind-to none -x OMP_NUM_THREADS -np 2 \
    "$gen" --tokens 64 "$tmp/big" "$tmp/prompt.npy" "$tmp/o2.npy" 2> "$tmp/g2.err" || exit 1
a=$(sed -n 's/.* at \([0-9.]*\) ms each.*/\1/p' "$tmp/g1.err") b=$(sed -n 's/.* at \([0-9.]*\) ms each.*/\1/p' "$tmp/g2.err")
share=$(sed -n 's/.*ranks, \([0-9.]*\) % of each token.*/\1/p' "$tmp/g2.err")
echo "tendo-generate, 94 M parameters (f32), 64 tokens, time per token after the first"
echo "  1 process x 1 thread: $a ms"
echo "  2 ranks   x 1 thread: $b ms ($share % of it in the all_reduces)"
awk -v a="$a" -v b="$b" 'BEGIN { printf "  speed-up: %.2fx\n", a / b }'
cmp -s "$tmp/o1.npy" "$tmp/o2.npy" && echo "  the same 64 tokens" || echo "  the tokens differ"
