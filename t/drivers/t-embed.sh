#!/bin/sh
# t/drivers/t-embed.sh - examples/tendo-embed's input handling on a tiny
# random BERT (1 layer, hidden 8, 2 heads, 20 ids, 8 positions) with a
# WordPiece tokenizer.json of its own, every file written by the Python
# standard library (no numpy, no torch; t/interop/t-embed-hf.sh checks the
# numbers against sentence-transformers):
#   - token ids outside [0, vocab), from IDS.npy or from the tokenizer, are
#     refused (exit 1), naming the id and its (row, column);
#   - an all-padding row and a [2, 0] batch give zero vectors, never NaN;
#   - a bad number option is bad usage (exit 2), a bad config.json or
#     sentence_bert_config.json field exit 1 naming the field;
#   - text: cut to max_seq_length with [SEP] kept last, padding that does
#     not change a row, batches of 32, --file (CRLF, no final newline) the
#     same as the command line, stdout the same as --out to the bit, and
#     MODEL_DIR for the ids form.
# Skips without a python3; the text checks without tokenizers in the build.
: "${top_builddir:=.}"
py=
for p in "${PYTHON:-}" python3; do
    [ -n "$p" ] && "$p" -c 'import json, struct' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then
    echo "1..0 # SKIP no python3 (set PYTHON)"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
tokenizers=no
"$top_builddir/tools/tendo" info 2>/dev/null | grep -q 'tokenizers=yes' && tokenizers=yes
bf16=no
grep -q '^#define TENDO_HAVE_BF16 1' "$top_builddir/include/tendo/dtype.h" 2>/dev/null && bf16=yes
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/examples/tendo-embed" "$tmp" \
    "$tokenizers" "$bf16" <<'PY'
import ast, json, math, os, random, struct, subprocess, sys
from tap import Tap

prog, tmp, tokenizers, bf16 = sys.argv[1], sys.argv[2], sys.argv[3] == "yes", sys.argv[4] == "yes"
tap = Tap()
ok = tap.ok
rng = random.Random(7)
H, I, V, P, HEADS = 8, 16, 20, 8, 2


def save_safetensors(path, tensors):
    """tensors {name: (shape, floats)} as an F32 safetensors file."""
    header, data = {}, b""
    for name, (shape, values) in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [len(data), len(data) + 4 * len(values)]}
        data += struct.pack(f"<{len(values)}f", *values)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def save_ids(path, rows):
    """rows (lists of equal length) as an i64 [len(rows), len] .npy file."""
    shape = (len(rows), len(rows[0]) if rows else 0)
    head = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d, %d), }" % shape
    head += " " * (-(len(head) + 11) % 64) + "\n"
    flat = [x for r in rows for x in r]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + struct.pack(f"<{len(flat)}q", *flat))


def load_f32(path):
    """The rows of an f32 [n, k] .npy file."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<H", raw[8:10])[0]
    meta = ast.literal_eval(raw[10:10 + n].decode())
    assert meta["descr"] == "<f4" and len(meta["shape"]) == 2, meta
    rows, k = meta["shape"]
    flat = struct.unpack(f"<{rows * k}f", raw[10 + n:])
    return [list(flat[i * k:(i + 1) * k]) for i in range(rows)]


def rand(n, scale):
    return [rng.gauss(0, scale) for _ in range(n)]


def run(*args, stdin=None):
    """tendo-embed's exit status, stdout and stderr."""
    r = subprocess.run([prog, *args], input=stdin, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr.strip()


def close(a, b, tol):
    return len(a) == len(b) and all(len(x) == len(y) and all(abs(p - q) <= tol for p, q in zip(x, y)) for x, y in zip(a, b))


def unit(row):
    return all(math.isfinite(x) for x in row) and abs(math.sqrt(sum(x * x for x in row)) - 1) < 1e-3


# ---- the model directory: weights, config.json, sentence_bert_config.json, tokenizer.json ----
w = {"embeddings.word_embeddings.weight": ((V, H), rand(V * H, 1.0)),
     "embeddings.position_embeddings.weight": ((P, H), rand(P * H, 0.5)),
     "embeddings.token_type_embeddings.weight": ((2, H), rand(2 * H, 0.5)),
     "embeddings.LayerNorm.weight": ((H,), [1 + x for x in rand(H, 0.1)]),
     "embeddings.LayerNorm.bias": ((H,), rand(H, 0.1))}
p = "encoder.layer.0."
for name, (o, n) in {"attention.self.query": (H, H), "attention.self.key": (H, H), "attention.self.value": (H, H),
                     "attention.output.dense": (H, H), "intermediate.dense": (I, H), "output.dense": (H, I)}.items():
    w[p + name + ".weight"] = ((o, n), rand(o * n, n ** -0.5))
    w[p + name + ".bias"] = ((o,), rand(o, 0.1))
for name in ("attention.output.LayerNorm", "output.LayerNorm"):
    w[p + name + ".weight"] = ((H,), [1 + x for x in rand(H, 0.1)])
    w[p + name + ".bias"] = ((H,), rand(H, 0.1))
good = {"num_attention_heads": HEADS, "layer_norm_eps": 1e-12, "pad_token_id": 0, "max_position_embeddings": P}
words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", "far", "away", ",", ".",
         "##s", "caf", "##e", "big"]
vocab = {t: i for i, t in enumerate(words)}
vocab["zebra"] = V + 5  # the tokenizer knows an id the model lacks
tokenizer = {
    "added_tokens": [{"id": i, "content": t, "special": True} for i, t in enumerate(words[:4])],
    "normalizer": {"type": "BertNormalizer", "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "[CLS]"}}, {"Sequence": {"id": "A"}},
                                  {"SpecialToken": {"id": "[SEP]"}}],
                       "special_tokens": {"[CLS]": {"ids": [2]}, "[SEP]": {"ids": [3]}}},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "vocab": vocab}}


def model_dir(name, config=good, st_config={"max_seq_length": 6}, raw_config=None):
    """A model directory tmp/name: the weights, the tokenizer, config (or the text raw_config) and st_config."""
    d = f"{tmp}/{name}"
    os.mkdir(d)
    os.symlink(f"{tmp}/model.safetensors", f"{d}/model.safetensors")
    with open(f"{d}/tokenizer.json", "w") as f:
        json.dump(tokenizer, f)
    with open(f"{d}/config.json", "w") as f:
        f.write(raw_config if raw_config is not None else json.dumps(config))
    if st_config is not None:
        with open(f"{d}/sentence_bert_config.json", "w") as f:
            json.dump(st_config, f)
    return d


save_safetensors(f"{tmp}/model.safetensors", w)
base = model_dir("base")
weights = f"{base}/model.safetensors"

# ---- token ids out of range: refused, naming the id and where it is ----
for bad, where in ((-1, (1, 2)), (V, (0, 3)), (2 ** 40, (1, 0))):
    rows = [[2, 4, 5, 3], [2, 6, 7, 3]]
    rows[where[0]][where[1]] = bad
    save_ids(f"{tmp}/bad.npy", rows)
    rc, _, err = run(weights, f"{tmp}/bad.npy", f"{tmp}/out.npy")
    ok(rc == 1 and f"token id {bad} at ({where[0]}, {where[1]})" in err,
       f"id {bad} at {where} is refused (exit 1), naming the id and its position", f"exit {rc}: {err}")
save_ids(f"{tmp}/long.npy", [[2] + [4] * P + [3]])
rc, _, err = run(weights, f"{tmp}/long.npy", f"{tmp}/out.npy")
ok(rc == 1 and "positions" in err, f"a row longer than the {P} positions is refused (exit 1)", f"exit {rc}: {err}")

# ---- rows with no real token: zero vectors, never NaN ----
save_ids(f"{tmp}/allpad.npy", [[2, 4, 5, 3], [0, 0, 0, 0]])
save_ids(f"{tmp}/empty.npy", [[], []])
for dtype in ("f32", "bf16") if bf16 else ("f32",):
    rc, _, err = run("--dtype", dtype, weights, f"{tmp}/allpad.npy", f"{tmp}/out.npy")
    got = load_f32(f"{tmp}/out.npy") if rc == 0 else []
    ok(rc == 0 and len(got) == 2 and unit(got[0]) and got[1] == [0.0] * H,
       f"{dtype}: an all-padding row is the zero vector, the other a unit one", f"exit {rc}: {err} {got}")
    if os.path.exists(f"{tmp}/out.npy"):
        os.remove(f"{tmp}/out.npy")
    rc, _, err = run("--dtype", dtype, weights, f"{tmp}/empty.npy", f"{tmp}/out.npy")
    got = load_f32(f"{tmp}/out.npy") if rc == 0 else []
    ok(rc == 0 and got == [[0.0] * H] * 2, f"{dtype}: a [2, 0] batch gives two zero vectors", f"exit {rc}: {err} {got}")

# ---- numbers on the command line: parsed whole, else bad usage ----
save_ids(f"{tmp}/ids.npy", [[2, 4, 5, 6, 3], [2, 9, 10, 3, 0]])
for flag, value in (("--repeat", "0"), ("--repeat", "2x"), ("--repeat", "99999999999999999999"), ("--repeat", ""),
                    ("--heads", "-3"), ("--heads", "0"), ("--heads", " 2"), ("--heads", "2.0"), ("--eps", "abc"),
                    ("--eps", "-1e-5"), ("--eps", "0"), ("--eps", "nan"), ("--eps", "inf"), ("--eps", "1e999"),
                    ("--pad", "-1"), ("--pad", "1.5"), ("--device", "cuda:x"), ("--device", "gpu"),
                    ("--dtype", "f64")):
    rc, _, err = run(flag, value, weights, f"{tmp}/ids.npy", f"{tmp}/out.npy")
    ok(rc == 2 and "usage:" in err, f"{flag} '{value}' is bad usage (exit 2)", f"exit {rc}: {err}")
rc, _, err = run(weights, f"{tmp}/ids.npy", f"{tmp}/out.npy", "--heads")
ok(rc == 2 and "usage:" in err, "--heads without its value is bad usage (exit 2)", f"exit {rc}: {err}")
rc, _, err = run("--heads", "3", weights, f"{tmp}/ids.npy", f"{tmp}/out.npy")
ok(rc == 1 and "--heads 3" in err, f"--heads 3, which does not divide the hidden size {H}, is refused (exit 1)",
   f"exit {rc}: {err}")
rc, _, err = run("--repeat", "2", "--heads", "2", "--eps", "1e-12", "--pad", "0", weights, f"{tmp}/ids.npy",
                 f"{tmp}/out.npy")
ok(rc == 0 and "best of 2" in err, "good --repeat, --heads, --eps and --pad run", f"exit {rc}: {err}")

# ---- config.json and sentence_bert_config.json: every field read checked ----
cases = [("num_attention_heads", 3), ("num_attention_heads", 0), ("num_attention_heads", 2.0),
         ("num_attention_heads", "2"), ("layer_norm_eps", "1e-12"), ("layer_norm_eps", 0), ("layer_norm_eps", -1e-5),
         ("layer_norm_eps", True), ("pad_token_id", -1), ("pad_token_id", V), ("pad_token_id", "0")]
for i, (field, value) in enumerate(cases):
    d = model_dir(f"config{i}", dict(good, **{field: value}))
    rc, _, err = run(f"{d}/model.safetensors", f"{tmp}/ids.npy", f"{tmp}/out.npy")
    ok(rc == 1 and field in err, f"config.json {field} {json.dumps(value)} is refused (exit 1), naming the field",
       f"exit {rc}: {err}")
for i, raw in enumerate(("{\"num_attention_heads\": 2,", "[2]")):
    d = model_dir(f"raw{i}", raw_config=raw)
    rc, _, err = run(f"{d}/model.safetensors", f"{tmp}/ids.npy", f"{tmp}/out.npy")
    ok(rc == 1 and "config.json" in err, f"config.json {raw!r} is refused (exit 1), naming the file", f"exit {rc}: {err}")
d = model_dir("nopad", {k: v for k, v in good.items() if k != "pad_token_id"})
rc, _, err = run(f"{d}/model.safetensors", f"{tmp}/ids.npy", f"{tmp}/out.npy")
ok(rc == 2 and "pad_token_id" in err and "--pad" in err, "no pad_token_id and no --pad: exit 2 asking for --pad",
   f"exit {rc}: {err}")
if tokenizers:
    for i, (st_config, config, field) in enumerate((({"max_seq_length": 0}, good, "max_seq_length"),
                                                    ({"max_seq_length": P + 1}, good, "max_seq_length"),
                                                    ({"max_seq_length": "6"}, good, "max_seq_length"),
                                                    (None, dict(good, max_position_embeddings=P + 1),
                                                     "max_position_embeddings"))):
        d = model_dir(f"len{i}", config, st_config)
        rc, _, err = run(d, "the cat")
        what = json.dumps(st_config) if st_config else f"config.json max_position_embeddings {P + 1}"
        ok(rc == 1 and field in err, f"{what} is refused (exit 1), naming the field", f"exit {rc}: {err}")

# ---- text ----
if not tokenizers:
    print("# this build has no tokenizers (PCRE2 and utf8proc): the text checks are skipped")
    tap.done()


def embed(*args, stdin=None):
    """The rows tendo-embed prints for args, each float read back to f32 (None when it fails)."""
    rc, out, err = run(*args, stdin=stdin)
    if rc != 0:
        print(f"# tendo-embed {' '.join(args)}: exit {rc}: {err}")
        return None
    rows = [line.split() for line in out.splitlines()]
    return [list(struct.unpack(f"<{len(r)}f", struct.pack(f"<{len(r)}f", *map(float, r)))) for r in rows]


sents = ["The cat sat on the mat.", "a dog", "", "Cafe, big cats ran far away", "the cat sat on the mat ran far away"]
argv = embed(base, *sents)
ok(argv is not None and len(argv) == 5 and all(unit(r) for r in argv), "5 sentences give 5 unit rows on stdout")
alone = [embed(base, s) for s in sents]
ok(argv is not None and None not in alone and close(argv, [a[0] for a in alone], 1e-5),
   "a sentence's row does not change with the padding of a batch (within 1e-5)")
cut = embed(base, "the cat sat on")
ok(alone[4] is not None and cut is not None and alone[4] == cut,
   "a sentence past max_seq_length 6 is cut to [CLS] + 4 ids + [SEP]: the same row as its first 4 words")
with open(f"{tmp}/sents.txt", "w", newline="") as f:
    f.write("\r\n".join(sents))
ok(embed("--file", f"{tmp}/sents.txt", base) == argv, "--file (CRLF, no final newline) gives the command line's rows")
ok(embed("--file", "-", base, stdin="\n".join(sents) + "\n") == argv, "--file - reads the standard input")
rc, _, err = run("--out", f"{tmp}/text.npy", base, *sents)
ok(rc == 0 and argv is not None and load_f32(f"{tmp}/text.npy") == argv, "--out holds stdout's rows, to the bit",
   f"exit {rc}: {err}")
many = [sents[i % 5] for i in range(35)]
rows = embed(base, *many)
ok(rows is not None and len(rows) == 35 and close(rows, [alone[i % 5][0] for i in range(35)], 1e-5),
   "35 sentences (two batches) give the rows of each alone")
rc, _, err = run(base, "the zebra")
ok(rc == 1 and f"token id {V + 5} at (0, 2)" in err, "an id of the tokenizer that the model lacks is refused (exit 1)",
   f"exit {rc}: {err}")
rc, _, err = run(base, "--", "-the cat")
ok(rc == 0, "-- lets a sentence start with -", f"exit {rc}: {err}")
with open(f"{tmp}/bad.txt", "wb") as f:
    f.write(b"the cat\nthe caf\xff\n")
rc, _, err = run("--file", f"{tmp}/bad.txt", base)
ok(rc == 1 and "sentence 2" in err, "a line that is not UTF-8 is refused (exit 1), naming it", f"exit {rc}: {err}")
for args, what in (((base,), "MODEL_DIR without sentences"), (("--file", f"{tmp}/sents.txt", base, "x"),
                   "--file with sentences too"), ((weights, "the cat"), "a .safetensors file with text")):
    rc, _, err = run(*args)
    ok(rc == 2 and "usage:" in err, f"{what} is bad usage (exit 2)", f"exit {rc}: {err}")
rc, _, err = run(base, f"{tmp}/ids.npy", f"{tmp}/dir.npy")
rc2, _, err2 = run(weights, f"{tmp}/ids.npy", f"{tmp}/file.npy")
ok(rc == 0 and rc2 == 0 and load_f32(f"{tmp}/dir.npy") == load_f32(f"{tmp}/file.npy"),
   "MODEL_DIR IDS.npy OUT.npy is MODEL_DIR/model.safetensors IDS.npy OUT.npy", f"exit {rc}, {rc2}: {err} {err2}")
tap.done()
PY
