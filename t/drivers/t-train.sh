#!/bin/sh
# t/drivers/t-train.sh - examples/tendo-train: a small decoder trained on
# the bytes of this project's README: the loss falls, loss.csv, the SVG plot
# and the Hugging Face checkpoint are written and tendo-generate loads it;
# a run stopped and resumed ends with the same parameters, bit for bit, as
# one that never stopped (f32 and bf16); a config with a field value
# tendo-train does not train, a text shorter than one sequence, a
# checkpoint of another shape, a full disk while saving (the old
# checkpoint intact), resuming with other options and a checkpoint whose
# files are of different steps are clear errors; on cuda:0 (where `tendo info` lists
# one: the simulated device in CI) the losses are the CPU's within 1e-4.
# Needs top_builddir and top_srcdir (make check exports them).
: "${top_builddir:=.}" "${top_srcdir:=.}"
train="$top_builddir/examples/tendo-train"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
ok() { # ok COND-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
text="$top_srcdir/README.md"
cat > "$tmp/cfg.json" <<'JSON'
{"model_type": "llama", "hidden_size": 64, "intermediate_size": 172, "num_attention_heads": 4,
 "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 256, "max_position_embeddings": 128,
 "rms_norm_eps": 1e-5, "tie_word_embeddings": true, "hidden_act": "silu"}
JSON
common="--batch 4 --seq 48 --lr 3e-3"
# the loss column of loss.csv (step, loss) without timings
losses() { cut -d, -f1,2 "$1/loss.csv"; }

# ---- training ----
mkdir "$tmp/a"
"$train" $common --steps 40 --plot "$tmp/a/loss.svg" "$tmp/cfg.json" "$text" "$tmp/a" > "$tmp/a.out" 2>&1
ok $? "tendo-train trains 40 steps"
sed 's/^/# /' "$tmp/a.out" | tail -3
rows=$(grep -c '^[0-9]' "$tmp/a/loss.csv")
falls=$(awk -F, 'NR == 2 { first = $2 } NR > 36 { last += $2; k++ } END { exit !(k > 0 && last / k < first - 1.0) }' \
    "$tmp/a/loss.csv" && echo 0 || echo 1)
ok "$falls" "the loss falls by more than 1 nat (loss.csv: $(sed -n 2p "$tmp/a/loss.csv" | cut -d, -f2) to $(tail -1 "$tmp/a/loss.csv" | cut -d, -f2))"
[ "$rows" -eq 40 ] && grep -q '^step,loss,val_loss,lr,grad_norm,tokens_per_s,seconds$' "$tmp/a/loss.csv" &&
    awk -F, 'NR > 1 && $3 != "" { v++ } END { exit !(v >= 4) }' "$tmp/a/loss.csv"
ok $? "loss.csv: a header, 40 rows, the validation loss every 4 steps ($rows rows)"
grep -q '<polyline' "$tmp/a/loss.svg" && grep -q '<circle' "$tmp/a/loss.svg"
ok $? "--plot writes the loss curves as SVG"
[ -s "$tmp/a/model.safetensors" ] && grep -q '"LlamaForCausalLM"' "$tmp/a/config.json" &&
    grep -q '"step": 40' "$tmp/a/trainer_state.json" && [ -s "$tmp/a/optimizer.safetensors" ]
ok $? "the checkpoint: config.json, model.safetensors, optimizer.safetensors, trainer_state.json"
# the prompt "The " as an i64 .npy (version 1.0: a 118-byte header, then the data)
{
    printf '\223NUMPY\001\000\166\000'
    printf "%-117s\n" "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }"
    for c in 124 150 145 040; do printf "\\$c\\000\\000\\000\\000\\000\\000\\000"; done
} > "$tmp/p.npy"
"$top_builddir/examples/tendo-generate" --tokens 8 "$tmp/a" "$tmp/p.npy" "$tmp/gen.npy" 2> "$tmp/gen.err"
ok $? "tendo-generate loads the checkpoint and continues a prompt"
sed 's/^/# /' "$tmp/gen.err"

# ---- resuming ----
has_bf16=no
"$top_builddir/tools/tendo" info 2>/dev/null | grep -q '^  bf16 ' && has_bf16=yes
for dt in f32 bf16; do
    if [ $dt = bf16 ] && [ $has_bf16 = no ]; then
        n=$((n + 1)); echo "ok $n # SKIP this build has no bf16"
        continue
    fi
    mkdir "$tmp/s-$dt" "$tmp/r-$dt"
    "$train" $common --quiet --steps 16 --dtype $dt "$tmp/cfg.json" "$text" "$tmp/s-$dt" &&
        "$train" $common --quiet --steps 16 --stop-after 7 --dtype $dt "$tmp/cfg.json" "$text" "$tmp/r-$dt" &&
        grep -q '"step": 7' "$tmp/r-$dt/trainer_state.json" &&
        "$train" $common --quiet --steps 16 --resume --dtype $dt "$tmp/cfg.json" "$text" "$tmp/r-$dt" &&
        cmp -s "$tmp/s-$dt/model.safetensors" "$tmp/r-$dt/model.safetensors" &&
        cmp -s "$tmp/s-$dt/optimizer.safetensors" "$tmp/r-$dt/optimizer.safetensors" &&
        [ "$(losses "$tmp/s-$dt")" = "$(losses "$tmp/r-$dt")" ]
    ok $? "$dt: stopped after step 7 and resumed: the losses, parameters and optimizer state of a run that never stopped"
done
if [ $has_bf16 = yes ]; then
    grep -q '"torch_dtype": "bfloat16"' "$tmp/r-bf16/config.json"
    ok $? "bf16: config.json says torch_dtype bfloat16"
else
    n=$((n + 1)); echo "ok $n # SKIP this build has no bf16"
fi

# ---- errors ----
sed 's/"silu"/"gelu"/' "$tmp/cfg.json" > "$tmp/gelu.json"
"$train" $common --steps 2 "$tmp/gelu.json" "$text" "$tmp/a" > "$tmp/err" 2>&1
[ $? -eq 1 ] && grep -q 'hidden_act is "gelu": tendo-train trains hidden_act "silu"' "$tmp/err"
ok $? "a config with hidden_act gelu: a clear error ($(cat "$tmp/err"))"
head -c 40 "$text" > "$tmp/short.txt"
"$train" $common --steps 2 "$tmp/cfg.json" "$tmp/short.txt" "$tmp/a" > "$tmp/err" 2>&1
[ $? -eq 1 ] && grep -q 'too short' "$tmp/err"
ok $? "a text shorter than one sequence: a clear error ($(cat "$tmp/err"))"
sed 's/"hidden_size": 64/"hidden_size": 32/' "$tmp/cfg.json" > "$tmp/narrow.json"
"$train" $common --steps 16 --resume "$tmp/narrow.json" "$text" "$tmp/r-f32" > "$tmp/err" 2>&1
[ $? -eq 1 ] && grep -q "model.embed_tokens.weight has shape \[256, 64\]; the config makes it \[256, 32\]" "$tmp/err"
ok $? "resuming a checkpoint of another shape: a clear error ($(cat "$tmp/err"))"
mkdir "$tmp/full"
"$train" $common --quiet --steps 8 --stop-after 4 "$tmp/cfg.json" "$text" "$tmp/full" && cp -r "$tmp/full" "$tmp/full4"
(ulimit -f 100; "$train" $common --quiet --steps 8 --resume "$tmp/cfg.json" "$text" "$tmp/full") > "$tmp/err" 2>&1
st=$?
[ $st -eq 1 ] && grep -q 'saving step 8' "$tmp/err" && cmp -s "$tmp/full/model.safetensors" "$tmp/full4/model.safetensors" &&
    cmp -s "$tmp/full/trainer_state.json" "$tmp/full4/trainer_state.json" && [ -z "$(ls "$tmp/full" | grep tmp)" ]
ok $? "a full disk while saving step 8: a clear error, the step-4 checkpoint intact, no temporary file left ($(head -1 "$tmp/err"))"
"$train" $common --quiet --steps 8 --resume "$tmp/cfg.json" "$text" "$tmp/full" &&
    [ "$(losses "$tmp/full" | wc -l)" -eq 9 ]
ok $? "... and resuming from it again trains steps 5 to 8, loss.csv holding each step once"

"$train" $common --quiet --steps 8 --resume --lr 1e-3 "$tmp/cfg.json" "$text" "$tmp/full" > "$tmp/err" 2>&1
[ $? -eq 1 ] && grep -q 'was made with lr 0.003, not 0.001' "$tmp/err"
ok $? "resuming with another learning rate: a clear error ($(cat "$tmp/err"))"
cp "$tmp/full4/model.safetensors" "$tmp/full/model.safetensors"
"$train" $common --quiet --steps 8 --resume "$tmp/cfg.json" "$text" "$tmp/full" > "$tmp/err" 2>&1
[ $? -eq 1 ] && grep -q 'is not of the step trainer_state.json names (8): a save was cut short' "$tmp/err"
ok $? "a checkpoint whose weights are of another step: a clear error ($(cat "$tmp/err"))"

# ---- on cuda:0 ----
if [ -x "$top_builddir/tools/tendo" ] && "$top_builddir/tools/tendo" info 2>/dev/null | grep -q '^  cuda:0 '; then
    mkdir "$tmp/gpu" "$tmp/cpu"
    "$train" $common --quiet --steps 6 --device cuda:0 "$tmp/cfg.json" "$text" "$tmp/gpu" &&
        "$train" $common --quiet --steps 6 "$tmp/cfg.json" "$text" "$tmp/cpu" &&
        paste -d, "$tmp/gpu/loss.csv" "$tmp/cpu/loss.csv" |
        awk -F, 'NR > 1 { d = $2 - $9; if (d < 0) d = -d; if (d > 1e-4 * $9) bad++ } END { exit bad > 0 }'
    ok $? "--device cuda:0: 6 steps, every loss the CPU's within 1e-4"
else
    n=$((n + 1)); echo "ok $n # SKIP no CUDA device (tendo info lists no cuda:0)"
fi
echo "1..$n"
[ $fails -eq 0 ]
