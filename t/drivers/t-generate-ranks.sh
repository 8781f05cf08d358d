#!/bin/sh
# t/drivers/t-generate-ranks.sh - examples/tendo-generate tensor-parallel
# under mpirun: a decoder trained here for a few seconds (4 heads, 4
# key-value heads, untied lm_head) generates from 2 and 4 ranks the tokens
# it generates from one process, with the prompt's logits within 1e-4 of
# one process's; a rank count that does not divide the heads is a clear
# error that ends the job.  Each run is under `timeout`.  Skips without
# mpirun or in a build without MPI.
: "${top_builddir:=.}" "${top_srcdir:=.}"
train="$top_builddir/examples/tendo-train"
gen="$top_builddir/examples/tendo-generate"
. "${top_srcdir:-.}/t/lib/mpi-test.sh"
cat > "$tmp/cfg.json" <<'JSON'
{"model_type": "llama", "hidden_size": 64, "intermediate_size": 172, "num_attention_heads": 4,
 "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 256, "max_position_embeddings": 128,
 "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "hidden_act": "silu"}
JSON
timeout 300 "$train" --batch 8 --seq 48 --steps 150 --lr 1e-2 --val-batches 0 --threads 1 --quiet \
    "$tmp/cfg.json" "$top_srcdir/README.md" "$tmp/model" > "$tmp/train.out" 2>&1
ok $? "a decoder to generate with (150 steps on README.md)"
# the prompt "tendo is a C" as i64 token ids (bytes), written as .npy by hand
prompt="$tmp/prompt.npy"
{
    printf '\223NUMPY\001\000\166\000'
    printf "%-117s\n" "{'descr': '<i8', 'fortran_order': False, 'shape': (12,), }"
    for c in 116 101 110 100 111 32 105 115 32 97 32 67; do
        printf "$(printf '\\%03o' "$c")\000\000\000\000\000\000\000"
    done
} > "$prompt"
timeout 300 "$gen" --tokens 24 --logits "$tmp/l1.npy" "$tmp/model" "$prompt" "$tmp/o1.npy" > "$tmp/g1.out" 2>&1
ok $? "one process generates 24 tokens"
for np in 2 4; do
    timeout 300 $mpi -np $np "$gen" --tokens 24 --logits "$tmp/l$np.npy" "$tmp/model" "$prompt" "$tmp/o$np.npy" \
        > "$tmp/g$np.out" 2>&1
    status=$?
    sed 's/^/# /' "$tmp/g$np.out" | head -6
    ok $status "mpirun -np $np: tensor-parallel generation runs (status $status)"
    cmp -s "$tmp/o1.npy" "$tmp/o$np.npy"
    ok $? "mpirun -np $np: the same 24 tokens as one process"
done
if [ -n "${BENCH_PYTHON:-}" ] && "$BENCH_PYTHON" -c 'import numpy' 2> /dev/null; then
    "$BENCH_PYTHON" - "$tmp" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
one = np.load(f"{d}/l1.npy")
out = np.load(f"{d}/o1.npy")
print("# generated:", repr(bytes(out.astype(np.uint8)).decode("latin-1")))
worst = max(float(np.max(np.abs(np.load(f"{d}/l{k}.npy") - one))) for k in (2, 4))
print(f"# largest logit difference from one process: {worst:.2g} (logits up to {float(np.max(np.abs(one))):.3g})")
sys.exit(0 if worst <= 1e-4 else 1)
PY
    ok $? "the prompt's logits of 2 and 4 ranks are one process's within 1e-4"
else
    echo "ok $((n = n + 1)) # SKIP no BENCH_PYTHON with numpy"
fi
timeout 120 $mpi -np 3 "$gen" --tokens 4 "$tmp/model" "$prompt" "$tmp/o3.npy" > "$tmp/g3.out" 2>&1
status=$?
grep -m1 'do not divide' "$tmp/g3.out" | sed 's/^/# /'
ok "$([ "$status" -ne 0 ] && [ "$status" -ne 124 ] && grep -q 'do not divide' "$tmp/g3.out" && echo 0 || echo 1)" \
    "3 ranks and 4 heads: a clear error, the job ends (status $status)"
echo "1..$n"
[ "$fails" -eq 0 ]
