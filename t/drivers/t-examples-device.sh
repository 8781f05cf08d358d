#!/bin/sh
# t/drivers/t-examples-device.sh - examples/tendo-embed and tendo-generate on
# --device cuda:0 against the same programs on the CPU: small random BERT
# and Llama checkpoints written with numpy and safetensors (no torch), the
# embeddings equal within f32 tolerance (and bf16's, where the rounding of
# the weights and activations differs between the devices' kernels), the
# prompt logits within f32 tolerance and the 32 greedy tokens identical.
# Skips, saying why, without a CUDA device (`tendo info` lists none) or
# without a Python that has numpy and safetensors (BENCH_PYTHON, PYTHON).
: "${top_builddir:=.}"
if [ ! -x "$top_builddir/tools/tendo" ]; then
    echo "1..0 # SKIP tools/tendo is not built (it lists the devices)"
    exit 0
fi
if ! "$top_builddir/tools/tendo" info 2>/dev/null | grep -q '^  cuda:0 '; then
    echo "1..0 # SKIP no CUDA device (tendo info lists no cuda:0)"
    exit 0
fi
py=
for p in "${BENCH_PYTHON:-}" "${PYTHON:-}" python3; do
    [ -n "$p" ] && "$p" -c 'import numpy, safetensors' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then
    echo "1..0 # SKIP no Python with numpy and safetensors (set BENCH_PYTHON)"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/examples" "$tmp" <<'PY'
import json, subprocess, sys
from tap import Tap
import numpy as np
from safetensors.numpy import save_file

bindir, tmp = sys.argv[1], sys.argv[2]
tap = Tap()
ok = tap.ok
rng = np.random.default_rng(12)


def rand(*shape, scale=None):
    """Normal weights, scaled by 1/sqrt(fan-in) unless told otherwise."""
    s = scale if scale is not None else 1 / np.sqrt(shape[-1])
    return (rng.standard_normal(shape) * s).astype(np.float32)


def run(prog, args):
    r = subprocess.run([f"{bindir}/{prog}"] + args, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stderr.strip()


# ---- a BERT encoder: 2 layers, hidden 64, 4 heads, padded ids ----
H, I, V, P, layers = 64, 128, 100, 40, 2
w = {"embeddings.word_embeddings.weight": rand(V, H, scale=1.0),
     "embeddings.position_embeddings.weight": rand(P, H, scale=0.5),
     "embeddings.token_type_embeddings.weight": rand(2, H, scale=0.5),
     "embeddings.LayerNorm.weight": 1 + rand(H, scale=0.1), "embeddings.LayerNorm.bias": rand(H, scale=0.1)}
for i in range(layers):
    p = f"encoder.layer.{i}."
    for name, (o, n) in {"attention.self.query": (H, H), "attention.self.key": (H, H), "attention.self.value": (H, H),
                         "attention.output.dense": (H, H), "intermediate.dense": (I, H), "output.dense": (H, I)}.items():
        w[p + name + ".weight"] = rand(o, n)
        w[p + name + ".bias"] = rand(o, scale=0.1)
    for name in ("attention.output.LayerNorm", "output.LayerNorm"):
        w[p + name + ".weight"] = 1 + rand(H, scale=0.1)
        w[p + name + ".bias"] = rand(H, scale=0.1)
save_file(w, f"{tmp}/bert.safetensors")
with open(f"{tmp}/config.json", "w") as f:
    json.dump({"num_attention_heads": 4, "layer_norm_eps": 1e-12, "pad_token_id": 0}, f)
ids = rng.integers(1, V, size=(3, 13)).astype(np.int64)
ids[1, 9:] = 0   # padding
ids[2, 4:] = 0
np.save(f"{tmp}/ids.npy", ids)
for dtype, tol in (("f32", 1e-5), ("bf16", 2e-2)):
    outs = {}
    for dev in ("cpu", "cuda:0"):
        rc, err = run("tendo-embed", ["--dtype", dtype, "--device", dev, f"{tmp}/bert.safetensors", f"{tmp}/ids.npy",
                                      f"{tmp}/emb-{dtype}-{dev}.npy"])
        outs[dev] = np.load(f"{tmp}/emb-{dtype}-{dev}.npy") if rc == 0 else err
    if isinstance(outs["cpu"], str) or isinstance(outs["cuda:0"], str):
        ok(False, f"tendo-embed --dtype {dtype} runs on cpu and cuda:0", f"cpu: {outs['cpu']}\n# cuda:0: {outs['cuda:0']}")
        continue
    a, b = outs["cpu"], outs["cuda:0"]
    err = float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")
    ok(a.shape == (3, H) and err <= tol, f"tendo-embed --dtype {dtype}: cuda:0 equals the CPU "
       f"(max abs difference {err:.2e} <= {tol:g})", f"shapes {a.shape} {b.shape}")

# ---- a Llama decoder: 2 layers, 4 query heads over 2 kv heads, untied head ----
H, I, V, heads, kv, hd, layers = 64, 160, 256, 4, 2, 16, 2
w = {"model.embed_tokens.weight": rand(V, H, scale=1.0), "model.norm.weight": 1 + rand(H, scale=0.1),
     "lm_head.weight": rand(V, H)}
for i in range(layers):
    p = f"model.layers.{i}."
    w[p + "input_layernorm.weight"] = 1 + rand(H, scale=0.1)
    w[p + "post_attention_layernorm.weight"] = 1 + rand(H, scale=0.1)
    for name, (o, n) in {"self_attn.q_proj": (heads * hd, H), "self_attn.k_proj": (kv * hd, H),
                         "self_attn.v_proj": (kv * hd, H), "self_attn.o_proj": (H, heads * hd),
                         "mlp.gate_proj": (I, H), "mlp.up_proj": (I, H), "mlp.down_proj": (H, I)}.items():
        w[p + name + ".weight"] = rand(o, n)
d = f"{tmp}/llama"
subprocess.run(["mkdir", "-p", d], check=True)
save_file(w, f"{d}/model.safetensors")
with open(f"{d}/config.json", "w") as f:
    json.dump({"hidden_size": H, "intermediate_size": I, "num_attention_heads": heads, "num_key_value_heads": kv,
               "num_hidden_layers": layers, "vocab_size": V, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
               "tie_word_embeddings": False}, f)
np.save(f"{d}/prompt.npy", rng.integers(0, V, size=(1, 9)).astype(np.int64))
res = {}
for dev in ("cpu", "cuda:0"):
    rc, err = run("tendo-generate", ["--tokens", "32", "--device", dev, "--logits", f"{d}/logits-{dev}.npy", d,
                                     f"{d}/prompt.npy", f"{d}/out-{dev}.npy"])
    res[dev] = (np.load(f"{d}/logits-{dev}.npy"), np.load(f"{d}/out-{dev}.npy")) if rc == 0 else err
if isinstance(res["cpu"], str) or isinstance(res["cuda:0"], str):
    ok(False, "tendo-generate runs on cpu and cuda:0", f"cpu: {res['cpu']}\n# cuda:0: {res['cuda:0']}")
    ok(False, "tendo-generate: 32 greedy tokens", "did not run")
else:
    (la, ta), (lb, tb) = res["cpu"], res["cuda:0"]
    err = float(np.abs(la - lb).max()) if la.shape == lb.shape else float("inf")
    scale = float(np.abs(la).max())
    ok(err <= 1e-4 * max(1.0, scale), f"tendo-generate: cuda:0 prompt logits {lb.shape} equal the CPU's "
       f"(max abs difference {err:.2e}, largest |logit| {scale:.2f})", f"shapes {la.shape} {lb.shape}")
    ok(ta.shape == tb.shape and bool((ta == tb).all()), "tendo-generate: 32 greedy tokens on cuda:0 equal the CPU's",
       f"cpu {ta.tolist()}\n# cuda:0 {tb.tolist()}")
tap.done()
PY
