#!/usr/bin/env python3
"""t/fuzz/make-seeds.py - writes the seed corpora t/fuzz/corpus/TARGET/ and
the regression inputs found by hand or by outside probes (the fuzzers'
own finds are copied into t/fuzz/regressions/ as they are).

Run from anywhere; it rewrites only the files it names.  Standard library
only (no numpy): the .npy and safetensors files are written byte by byte.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(kind, target, name, data):
    d = os.path.join(HERE, kind, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- npy ---------------------------------------------------------------------

def npy(descr, shape, data, fortran=False, version=1, header=None):
    if header is None:
        s = "(" + "".join("%d, " % n for n in shape).rstrip(" ")
        if len(shape) == 1:
            s = "(%d,)" % shape[0]
        elif len(shape) > 1:
            s = "(" + ", ".join(str(n) for n in shape) + ")"
        else:
            s = "()"
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, s)
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(header) + 1) % 64) % 64
    h = (header + " " * pad + "\n").encode("utf-8" if version == 3 else "latin-1")
    lenfield = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([version, 0]) + lenfield + h + data


f32 = lambda vals, e="<": struct.pack(e + "%df" % len(vals), *vals)
f16 = lambda vals, e="<": struct.pack(e + "%de" % len(vals), *vals)
six = [0.5, -1.0, 2.25, 3.0, float("inf"), float("nan")]

put("corpus", "npy", "f32-v1.npy", npy("<f4", (2, 3), f32(six)))
put("corpus", "npy", "f32-big.npy", npy(">f4", (2, 3), f32(six, ">")))
put("corpus", "npy", "f16-v1.npy", npy("<f2", (3, 2), f16(six)))
put("corpus", "npy", "f16-big.npy", npy(">f2", (6,), f16(six, ">")))
put("corpus", "npy", "f32-fortran.npy", npy("<f4", (2, 3), f32(six), fortran=True))
put("corpus", "npy", "f16-fortran-big-3d.npy", npy(">f2", (1, 2, 3), f16(six, ">"), fortran=True))
put("corpus", "npy", "f32-v2.npy", npy("<f4", (3, 2), f32(six), version=2))
put("corpus", "npy", "f32-v3.npy", npy("<f4", (2, 3), f32(six), version=3))
put("corpus", "npy", "f16-v3-big.npy", npy(">f2", (2, 3), f16(six, ">"), version=3))
put("corpus", "npy", "scalar.npy", npy("<f4", (), f32([7.0])))
put("corpus", "npy", "empty.npy", npy("<f4", (0,), b""))
put("corpus", "npy", "empty-3d.npy", npy("<f2", (3, 0, 2), b""))
put("corpus", "npy", "eight-dims.npy", npy("<f4", (1,) * 8, f32([1.0])))
put("corpus", "npy", "nine-dims.npy", npy("<f4", (1,) * 9, f32([1.0])))
put("corpus", "npy", "f8-unsupported.npy", npy("<f8", (2,), struct.pack("<2d", 1, 2)))
put("corpus", "npy", "short-data.npy", npy("<f4", (2, 3), f32(six[:5])))
put("corpus", "npy", "bool.npy", npy("|b1", (2,), b"\x00\x01"))

# a size past int64 (strtoll clamps it to INT64_MAX): the UBSan find
put("regressions", "npy", "shape-past-int64.npy",
    npy("<f4", None, b"", header="{'descr': '<f4', 'fortran_order': False, 'shape': (22222222222222222222, 1, 3), }"))
# numel fits, numel * elsize does not: the message once overflowed
put("regressions", "npy", "bytes-overflow.npy",
    npy("<f4", (9223372036854775807, 1), b"\0" * 8))
# more than 2^63-1 elements: TENDO_ERR_FORMAT naming the file, not _SHAPE
put("regressions", "npy", "numel-overflow.npy", npy("<f4", (4611686018427387904, 4), b"\0" * 8))
put("regressions", "npy", "numel-overflow-zero-dim.npy", npy("<f4", (0, 4611686018427387904, 4), b""))

# ---- safetensors ---------------------------------------------------------------

def st(tensors, metadata=None, pad_to=8, raw_header=None):
    """tensors: list of (name, dtype, shape, bytes)."""
    head, data = {}, b""
    if metadata is not None:
        head["__metadata__"] = metadata
    for name, dt, shape, b in tensors:
        head[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = raw_header if raw_header is not None else json.dumps(head).encode()
    if pad_to:
        h += b" " * ((pad_to - len(h) % pad_to) % pad_to)
    return struct.pack("<Q", len(h)) + h + data


bf16 = lambda vals: b"".join(struct.pack("<f", v)[2:] for v in vals)
sizes = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
         "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}
put("corpus", "safetensors", "f32.safetensors", st([("w", "F32", (2, 3), f32(six))]))
put("corpus", "safetensors", "f16.safetensors", st([("w", "F16", (3, 2), f16(six))]))
put("corpus", "safetensors", "bf16.safetensors", st([("w", "BF16", (6,), bf16(six))]))
for dt, n in sizes.items():
    if dt not in ("F32", "F16", "BF16"):
        put("corpus", "safetensors", "%s.safetensors" % dt.lower(), st([("x", dt, (2,), bytes(range(2 * n)))]))
put("corpus", "safetensors", "three-metadata.safetensors",
    st([("a", "F32", (2,), f32([1, 2])), ("b.weight", "F16", (1, 3), f16([1, 2, 3])),
        ("c", "BF16", (), bf16([5]))], metadata={"format": "pt", "note": "seed"}))
put("corpus", "safetensors", "unaligned-copy.safetensors",
    st([("odd", "F16", (1,), f16([1])), ("f", "F32", (2,), f32([3, 4]))]))
put("corpus", "safetensors", "empty-tensor.safetensors", st([("e", "F32", (0, 3), b""), ("s", "F32", (1,), f32([1]))]))
put("corpus", "safetensors", "no-tensors.safetensors", st([], metadata={"k": "v"}))
put("corpus", "safetensors", "null-metadata.safetensors",
    st([], raw_header=b'{"__metadata__":null}'))
put("corpus", "safetensors", "eight-dims.safetensors", st([("d", "F32", (1,) * 8, f32([2]))]))
put("corpus", "safetensors", "gap.safetensors",
    st([], raw_header=b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}') + b"\0" * 8)
put("corpus", "safetensors", "unicode-name.safetensors", st([("\u00e9\u4e2d", "F32", (1,), f32([1]))]))

# an empty name or metadata key: TENDO_ERR_FORMAT naming the file
put("regressions", "safetensors", "empty-name.safetensors", st([("", "F32", (1,), f32([1]))]))
put("regressions", "safetensors", "empty-metadata-key.safetensors", st([], metadata={"": "v"}))
put("regressions", "safetensors", "escape-name.safetensors", st([("\x1b[31mred", "F99", (1,), f32([1]))]))

# ---- dlpack (the byte layout of t/fuzz/fuzz-dlpack.c) -----------------------------

def dl(mode=0, ndim=2, major=1, minor=1, flags=0, code=2, bits=32, lanes=1, devtype=1, devid=0, boff=0,
       dims=((2, 3), (3, 1)), dataoff=0):
    b = bytes([mode, ndim & 0xff, 0 if major == 1 else 0xff])
    if major != 1:
        b += struct.pack(">I", major)
    b += bytes([minor, flags & 0xff])
    if flags & 0x80:
        b += bytes([flags >> 8])
    b += bytes([code, bits]) + struct.pack(">H", lanes) + bytes([devtype & 0xff, devid & 0xff])
    if boff < 0xf0:
        b += bytes([boff])
    else:
        b += b"\xf0" + struct.pack(">Q", boff)
    for size, stride in dims:
        for v, signed in ((size, False), (stride, True)):
            if 0 <= v < 9 or (signed and -9 < v < 0):
                b += bytes([v & 0xff])
            else:
                b += b"\xf0" + struct.pack(">q", v)
    return b + bytes([dataoff])


put("corpus", "dlpack", "f32-2x3", dl())
put("corpus", "dlpack", "f32-legacy", dl(mode=1))
put("corpus", "dlpack", "f16-transposed", dl(code=2, bits=16, dims=((3, 1), (2, 3))))
put("corpus", "dlpack", "bf16-negative-strides", dl(code=4, bits=16, dims=((2, -3), (3, -1)), dataoff=40))
put("corpus", "dlpack", "null-strides", dl(mode=4))
put("corpus", "dlpack", "null-data-empty", dl(mode=2, dims=((0, 1), (3, 1))))
put("corpus", "dlpack", "null-data", dl(mode=2))
put("corpus", "dlpack", "null-deleter", dl(mode=8))
put("corpus", "dlpack", "null-shape", dl(mode=32))
put("corpus", "dlpack", "scalar", dl(ndim=0, dims=()))
put("corpus", "dlpack", "nine-dims", dl(ndim=9, dims=((1, 1),) * 9))
put("corpus", "dlpack", "negative-ndim", dl(ndim=-1, dims=()))
put("corpus", "dlpack", "byte-offset", dl(boff=8))
put("corpus", "dlpack", "misaligned", dl(boff=2))
put("corpus", "dlpack", "huge-byte-offset", dl(boff=(1 << 64) - 8))
put("corpus", "dlpack", "huge-shape", dl(dims=((1 << 62, 1), (3, 1))))
put("corpus", "dlpack", "overflowing-strides", dl(dims=((2, 1 << 62), (3, 1 << 61))))
put("corpus", "dlpack", "stride-zero-huge", dl(dims=((1 << 40, 0), (3, 0))))
put("corpus", "dlpack", "read-only", dl(flags=1))
put("corpus", "dlpack", "copied", dl(flags=2))
put("corpus", "dlpack", "unknown-flag", dl(flags=0x80 | (40 << 8)))
put("corpus", "dlpack", "version-2", dl(major=2))
put("corpus", "dlpack", "float64", dl(bits=64))
put("corpus", "dlpack", "lanes", dl(lanes=4))
put("corpus", "dlpack", "bool", dl(code=6, bits=8))
put("corpus", "dlpack", "cuda", dl(devtype=2))
put("corpus", "dlpack", "cuda-host", dl(devtype=3))
put("corpus", "dlpack", "rocm", dl(devtype=10))
put("corpus", "dlpack", "device-type-negative", dl(devtype=-5))
put("corpus", "dlpack", "own-export", dl(mode=16, dims=((4, 2), (2, 1)), dataoff=16))
put("corpus", "dlpack", "own-export-outside", dl(mode=16, dims=((64, 1), (2, 1)), dataoff=16))

# ---- the tendo program (one argument a line) -----------------------------------------

argvs = {
    "info": "info", "version": "--version", "help": "help", "help-convert": "help\nconvert",
    "help-unknown": "help\nnope", "demo": "demo", "inspect-npy": "inspect\na.npy",
    "inspect-json": "inspect\n--json\nb.safetensors\na.npy", "inspect-no-stats": "inspect\n--no-stats\nb.safetensors",
    "inspect-missing": "inspect\nmissing.npy\na.npy", "inspect-dashdash": "inspect\n--\n--json",
    "convert-bf16": "convert\n--dtype\nbf16\nb.safetensors\nout.safetensors",
    "convert-f16-npy": "convert\n--dtype=f16\n--no-sync\na.npy\nout.npy",
    "convert-bad-dtype": "convert\n--dtype\nxx\na.npy\nb.npy", "convert-wrong-ext": "convert\n--dtype\nf16\na.npy\nx.safetensors",
    "convert-device": "convert\n--device\ncuda:3\n--dtype\nf32\na.npy\no.npy", "convert-no-value": "convert\n--dtype",
    "unknown-option": "--frobnicate", "inspect-help": "inspect\n-h",
}
for name, text in argvs.items():
    put("corpus", "cli", name, text.encode())

# ---- tokenizers: byte 0 even, a tokenizer.json; odd, text for a built-in one --------------

def tokenizer_json(model, **parts):
    d = dict(parts)
    d["model"] = model
    return json.dumps(d).encode()


bpe = {"type": "BPE", "vocab": {"h": 0, "i": 1, "\u0120": 2, "hi": 3, "\u0120hi": 4, "<|end|>": 5},
       "merges": ["h i", ["\u0120", "hi"]]}
wordpiece = {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1, "##b": 2, "[CLS]": 3}}
tokenizers = {
    "bytelevel.json": tokenizer_json(bpe, pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True},
                                     decoder={"type": "ByteLevel"},
                                     added_tokens=[{"id": 5, "content": "<|end|>", "special": True}]),
    "wordpiece.json": tokenizer_json(wordpiece, normalizer={"type": "BertNormalizer"},
                                     pre_tokenizer={"type": "BertPreTokenizer"},
                                     post_processor={"type": "BertProcessing", "sep": ["[CLS]", 3], "cls": ["[CLS]", 3]},
                                     decoder={"type": "WordPiece"}),
    "sequences.json": tokenizer_json(
        {"type": "WordLevel", "unk_token": "a", "vocab": {"a": 0, "b": 1}},
        normalizer={"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"},
                                                         {"type": "StripAccents"}, {"type": "Strip"},
                                                         {"type": "Replace", "pattern": {"Regex": "\\d+"},
                                                          "content": "0"}]},
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Whitespace"}, {"type": "Digits", "individual_digits": True},
            {"type": "Punctuation", "behavior": "Contiguous"},
            {"type": "Split", "pattern": {"String": "b"}, "behavior": "MergedWithNext", "invert": True},
            {"type": "Metaspace", "prepend_scheme": "never", "split": False}]},
        decoder={"type": "Sequence", "decoders": [{"type": "Strip", "content": "a", "start": 2, "stop": 1},
                                                  {"type": "BPEDecoder"}, {"type": "Fuse"}]},
        post_processor={"type": "Sequence", "processors": [
            {"type": "ByteLevel"}, {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A"}},
                                    {"SpecialToken": {"id": "b"}}], "special_tokens": {"b": {"ids": [1]}}}]}),
    "unigram.json": tokenizer_json({"type": "Unigram", "vocab": [["a", 0.0]]}),
    "no-merges.json": tokenizer_json({"type": "BPE", "vocab": {"a": 0}}),
}
for name, data in tokenizers.items():
    put("corpus", "tokenizer", name, b"\x00" + data)
texts = ["Hello, world! It's 2026.", "caf\u00e9 \u65e5\u672c\u8a9e \U0001f600 \u200b\u00a0x", "<|eot|>[CLS]ab xy!",
         "  \t\r ", "\u2581a\u2581", "e\u0301 \ufb01 \u2460", "ab" * 40]
for i, t in enumerate(texts):
    for which in range(3):
        put("corpus", "tokenizer", "text-%d-%d" % (which, i), bytes([2 * which + 1]) + t.encode())
put("corpus", "tokenizer", "text-invalid-utf8", b"\x01ab\xff\xfe c\xed\xa0\x80")

# ---- save: the target of a save (the byte layout of t/fuzz/fuzz-save.c) ------------------

SAVE_KINDS = ["new", "old", "link", "link-new", "chain", "link-dir", "link-fifo", "fifo", "fifo-alone", "devnull",
              "devfull", "dir", "slash", "below-file", "no-parent", "empty", "readonly-dir"]
NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789._-"
# the dtypes of a full build, in TENDO_FOREACH_DTYPE's order (a build with fewer picks others)
SAVE_DTYPES = ["f32", "f16", "bf16", "f64", "f8e4m3", "f8e5m2", "i8", "i16", "i32", "i64", "u8", "bool"]


def save_in(kind, flags=0, name="out.npy", mode=0o644, spec=0, old=b"old contents", tensors=(("f32", (2, 3)),),
            nlen=None):
    """kind (a SAVE_KINDS name); flags: 1 safetensors, 2 relative, 4 subdirectory, 8 relative link,
    16 transposed, 32 two tensors, 0xc0 durable; spec: the temporary neighbours (see fuzz-save.c)."""
    b = bytes([SAVE_KINDS.index(kind), flags, len(name) - 1 if nlen is None else nlen, mode & 0xff, mode >> 8])
    b += bytes(NAME_CHARS.index(c) for c in name)
    b += bytes([spec, len(old)]) + old
    for i, (dt, shape) in enumerate(tensors):
        b += bytes([SAVE_DTYPES.index(dt), len(shape)]) + bytes(shape)
        n = 1
        for d in shape:
            n *= d
        b += bytes((7 * i + 3 * j + 1) & 0xff for j in range(n * 8))
    return b


for kind in SAVE_KINDS:
    put("corpus", "save", "%s-npy" % kind, save_in(kind, spec=0x05))
    put("corpus", "save", "%s-safetensors-relative" % kind,
        save_in(kind, flags=1 | 2 | 32, name="m.safetensors", spec=0x01,
                tensors=(("bf16", (3,)), ("i64", (2, 2)))))
for kind in ("link", "chain", "link-new", "link-dir", "link-fifo"):
    put("corpus", "save", "%s-subdir-relative-link" % kind, save_in(kind, flags=4 | 8, spec=0x06))
    put("corpus", "save", "%s-subdir" % kind, save_in(kind, flags=1 | 4, spec=0x01, name="w"))
put("corpus", "save", "old-mode-600", save_in("old", mode=0o600, spec=0x0b))
put("corpus", "save", "old-mode-0", save_in("old", mode=0, old=b""))
put("corpus", "save", "old-locked-neighbour", save_in("old", spec=0x10 | 0x03))
put("corpus", "save", "old-own-pid-neighbours", save_in("old", spec=0x20 | 0x0f))
put("corpus", "save", "new-own-pid-fresh", save_in("new", spec=0x20 | 0x0c))
for h, name in ((0x40, "dir"), (0x80, "symlink"), (0xc1, "fifo")):
    put("corpus", "save", "old-hostile-%s" % name, save_in("old", spec=h))
for which in range(8):  # the old files whose names only look like a temporary file's
    spec = 0xc0 | (which >> 2) << 4 | (which & 3) << 2
    put("corpus", "save", "new-hostile-name-%d" % which, save_in("new", spec=spec))
    put("corpus", "save", "fifo-hostile-name-%d" % which, save_in("fifo", spec=spec))
put("corpus", "save", "long-name", save_in("new", name="a" * 240, nlen=255))
put("corpus", "save", "long-name-old", save_in("old", name="b" * 240, nlen=255))
put("corpus", "save", "dot-dot-name", save_in("new", name=".."))
put("corpus", "save", "relative-dot-durable", save_in("old", flags=2 | 0xc0, spec=0x01))
put("corpus", "save", "npy-bf16-unsupported", save_in("old", tensors=(("bf16", (2,)),)))
put("corpus", "save", "npy-f8-unsupported-fifo", save_in("fifo", tensors=(("f8e4m3", (2,)),)))
put("corpus", "save", "npy-transposed-3d", save_in("new", flags=16, tensors=(("i16", (2, 3, 4)),)))
put("corpus", "save", "npy-scalar", save_in("link", tensors=(("f64", ()),)))
put("corpus", "save", "npy-empty", save_in("fifo", tensors=(("u8", (0, 3)),)))
put("corpus", "save", "npy-bool", save_in("chain", tensors=(("bool", (4, 4)),)))
put("corpus", "save", "safetensors-transposed", save_in("devnull", flags=1 | 16, tensors=(("f16", (3, 4)),)))
put("corpus", "save", "safetensors-f8", save_in("readonly-dir", flags=1 | 32, spec=0x01,
                                                  tensors=(("f8e5m2", (4,)), ("i8", (0,)))))
for variant in range(3):  # slash after a file, a directory, a missing name
    put("corpus", "save", "slash-%d" % variant, save_in("slash", spec=variant))

# ---- examples: tendo-generate and tendo-embed (the modes of t/fuzz/fuzz-examples.c) ------

def npy_i64(shape, vals, descr="<i8"):
    return npy(descr, shape, struct.pack("<%dq" % len(vals), *vals) if descr == "<i8" else f32(vals))


def example(name, mode, data):
    put("corpus", "examples", name, bytes([mode]) + (data.encode() if isinstance(data, str) else data))


llama = {"model_type": "llama", "hidden_size": 16, "intermediate_size": 32, "num_attention_heads": 2,
         "num_key_value_heads": 1, "num_hidden_layers": 1, "vocab_size": 280, "max_position_embeddings": 128,
         "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False, "eos_token_id": 266}
gen_configs = {
    "valid": {}, "tied": {"tie_word_embeddings": True}, "qwen-window": {"sliding_window": 2, "use_sliding_window": True,
                                                                          "max_window_layers": 0},
    "layer-types": {"sliding_window": 3, "layer_types": ["sliding_attention"]},
    "mistral-window": {"sliding_window": 1},
    "rope-linear": {"rope_scaling": {"rope_type": "linear", "factor": 2.0}},
    "rope-dynamic": {"rope_scaling": {"type": "dynamic", "factor": 2.0}, "max_position_embeddings": 4},
    "rope-llama3": {"rope_parameters": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                        "high_freq_factor": 4.0, "original_max_position_embeddings": 8,
                                        "rope_theta": 500000.0}},
    "rope-yarn": {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32,
                                   "beta_fast": 16, "truncate": False, "mscale": 1, "mscale_all_dim": 0.5}},
    "rope-yarn-defaults": {"rope_scaling": {"rope_type": "yarn"}, "original_max_position_embeddings": 16},
    "rope-unknown": {"rope_scaling": {"rope_type": "longrope", "factor": 2}},
    "rope-no-factor": {"rope_scaling": {"rope_type": "linear"}},
    "rope-factor-zero": {"rope_scaling": {"rope_type": "dynamic", "factor": 0}},
    "rope-factor-huge": {"rope_scaling": {"rope_type": "dynamic", "factor": 1e308}},
    "rope-factor-nan-ish": {"rope_scaling": {"rope_type": "llama3", "factor": 2, "low_freq_factor": 1,
                                             "high_freq_factor": 1}},
    "partial-rotary": {"partial_rotary_factor": 0.5},
    "head-dim-odd": {"head_dim": 3}, "head-dim-huge": {"head_dim": 1 << 24},
    "hidden-string": {"hidden_size": "16"}, "hidden-fraction": {"hidden_size": 16.0},
    "hidden-huge": {"hidden_size": 1 << 24}, "hidden-past-int64": {"hidden_size": 1 << 40},
    "heads-zero": {"num_attention_heads": 0}, "kv-negative": {"num_key_value_heads": -1},
    "kv-not-divisor": {"num_key_value_heads": 3}, "layers-200": {"num_hidden_layers": 200},
    "layers-2": {"num_hidden_layers": 2}, "vocab-1": {"vocab_size": 1}, "vocab-bigger": {"vocab_size": 281},
    "eps-zero": {"rms_norm_eps": 0}, "eps-huge": {"rms_norm_eps": 1e300}, "eps-bool": {"rms_norm_eps": True},
    "max-pos-1": {"max_position_embeddings": 1}, "theta-zero": {"rope_theta": 0},
    "theta-negative": {"rope_theta": -5}, "eos-list": {"eos_token_id": [1, 2, -3, 1 << 62, "x", [4]]},
    "nulls": {"num_key_value_heads": None, "rope_scaling": None, "head_dim": None},
    "mlp-wrong": {"intermediate_size": 31},
}
for name, change in gen_configs.items():
    example("gen-config-%s" % name, 0, json.dumps(dict(llama, **change)))
for name, raw in (("not-object", "[1, 2]"), ("truncated", '{"hidden_size": 16,'), ("empty", ""),
                  ("nan", '{"hidden_size": 16, "rms_norm_eps": NaN}'), ("deep", "[" * 2000 + "]" * 2000)):
    example("gen-config-%s" % name, 0, raw)
for name, raw in (("valid", '{"eos_token_id": [266, 271, 268]}'), ("eos-int", '{"eos_token_id": 3}'),
                  ("eos-many", json.dumps({"eos_token_id": list(range(40))})), ("eos-string", '{"eos_token_id": "x"}'),
                  ("eos-nested", '{"eos_token_id": [[[[1]]], -1]}'), ("broken", '{"eos'), ("array", "[266]")):
    example("gen-genconfig-%s" % name, 1, raw)
example("gen-tokenizer-broken", 2, '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []')
example("gen-tokenizer-wordlevel", 2, json.dumps({"model": {"type": "WordLevel", "unk_token": "a",
                                                           "vocab": {"a": 0, "hello": 1, "world": 279}},
                                                 "pre_tokenizer": {"type": "Whitespace"}}))
example("gen-tokenizer-outside", 2, json.dumps({"model": {"type": "WordLevel", "unk_token": "a",
                                                         "vocab": {"a": 100000, "hello": 1}},
                                               "pre_tokenizer": {"type": "Whitespace"}}))
example("gen-tokenizer-empty-vocab", 2, json.dumps({"model": {"type": "BPE", "vocab": {}, "merges": []}}))
prompts = {"valid": npy_i64((3,), [265, 259, 264]), "row": npy_i64((1, 3), [265, 259, 264]),
           "two-rows": npy_i64((2, 2), [1, 2, 3, 4]), "negative": npy_i64((2,), [5, -1]),
           "past-vocab": npy_i64((2,), [5, 280]), "huge-id": npy_i64((1,), [1 << 62]), "empty": npy_i64((0,), []),
           "f32": npy("<f4", (2,), f32([1, 2])), "long": npy_i64((200,), [7] * 200),
           "scalar": npy_i64((), [4]), "big-endian": npy(">i8", (2,), struct.pack(">2q", 1, 2)),
           "fortran": npy("<i8", (1, 2), struct.pack("<2q", 1, 2), fortran=True)}
for name, data in prompts.items():
    example("gen-prompt-%s" % name, 3, data)
templates = {
    "chatml": "{{ '<|im_start|>system\\nYou are Qwen.<|im_end|>\\n' }}<|im_start|><|im_end|>",
    "chatml-no-system": "<|im_start|>user<|im_end|>",
    "llama3": "{{ bos_token }}<|start_header_id|>user<|end_header_id|>{{ content }}<|eot_id|>",
    "llama31": "{{ bos_token }}{% set date_string = \"26 Jul 2024\" %}{{ 'Cutting Knowledge Date: December 2023\\n' }}"
               "<|start_header_id|><|end_header_id|><|eot_id|>",
    "llama32-today": "{{- bos_token }}{%- set date_string = strftime_now(\"%d %b %Y\") %}"
                     "\"Cutting Knowledge Date: Dec 2023\\n\"<|start_header_id|><|end_header_id|><|eot_id|>",
    "inst": "{{ bos_token }}[INST] {{ message['content'] | trim }} [/INST]' [/INST]'",
    "inst-v3": "[INST]{{ message['content'] }}[/INST]",
    "unknown": "{{ messages }}", "quotes": "'<|im_start|>system\\n'<|im_end|>'<|im_start|>\\",
    "unterminated": "<|im_start|>'<|im_start|>system\\nabc",
}
for name, tpl in templates.items():
    example("gen-chat-tokconfig-%s" % name, 4, json.dumps({"bos_token": {"content": "<|begin_of_text|>"},
                                                            "chat_template": tpl}))
    example("gen-chat-jinja-%s" % name, 5, tpl)
example("gen-chat-tokconfig-named", 4, json.dumps({"chat_template": [{"name": "tool_use", "template": "x"},
                                                                     {"name": "default",
                                                                      "template": templates["chatml"]}]}))
example("gen-chat-tokconfig-none", 4, json.dumps({"bos_token": 5}))
example("gen-chat-tokconfig-number", 4, json.dumps({"chat_template": 7}))
for name, text in (("hello", "hello world"), ("empty", ""), ("specials", "<|begin_of_text|><|eot_id|> hi"),
                   ("utf8", "caf\u00e9 \u65e5\u672c \U0001f600"), ("long", "hello " * 200),
                   ("invalid-utf8", b"ab\xff\xfe\xc3")):
    example("gen-text-%s" % name, 6, text)
    example("gen-chat-text-%s" % name, 7, text)
gen_argvs = {
    "npy": "--tokens\n2\ngen\np.npy\nout.npy", "logits": "--tokens\n1\n--logits\nlogits.npy\ngen\np.npy\nout.npy",
    "sampled": "--seed\n3\n--temperature\n1.5\n--top-k\n2\n--top-p\n0.5\n--min-p\n0.2\ngen\n--prompt\nhello",
    "text": "gen\n--prompt\nhello world\n--tokens\n3", "chat": "gen\n--prompt\nhi\n--chat\n--tokens\n1",
    "too-many-tokens": "--tokens\n1000\ngen\np.npy\nout.npy", "tokens-zero": "--tokens\n0\ngen\np.npy\nout.npy",
    "tokens-junk": "--tokens\n2x\ngen\np.npy\nout.npy", "temperature-negative": "--temperature\n-1\ngen\n--prompt\na",
    "top-p-2": "--top-p\n2\ngen\n--prompt\na", "penalty-zero": "--repeat-penalty\n0\ngen\n--prompt\na",
    "penalty": "--repeat-penalty\n1e300\n--tokens\n3\ngen\n--prompt\nhello",
    "device-cuda": "--device\ncuda:0\ngen\np.npy\nout.npy", "device-junk": "--device\ntpu\ngen\np.npy\nout.npy",
    "chat-no-prompt": "--chat\ngen\np.npy\nout.npy", "missing": "gen", "extra": "gen\np.npy\nout.npy\nmore",
    "unknown-option": "--beam\n4\ngen\np.npy\nout.npy", "no-model": "bert\np.npy\nout.npy",
    "out-is-dir": "gen\np.npy\ngen", "out-over-input": "--tokens\n1\ngen\np.npy\np.npy",
    "nothing": "", "prompt-missing": "gen\n--prompt", "seed-huge": "--seed\n99999999999999999999\ngen\n--prompt\na",
}
for name, text in gen_argvs.items():
    example("gen-argv-%s" % name, 8, text)

bert = {"num_attention_heads": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0, "max_position_embeddings": 8}
bert_configs = {
    "valid": {}, "heads-1": {"num_attention_heads": 1}, "heads-8": {"num_attention_heads": 8},
    "heads-3": {"num_attention_heads": 3}, "heads-0": {"num_attention_heads": 0},
    "heads-string": {"num_attention_heads": "2"}, "heads-fraction": {"num_attention_heads": 2.0},
    "eps-zero": {"layer_norm_eps": 0}, "eps-negative": {"layer_norm_eps": -1e-5}, "eps-string": {"layer_norm_eps": "x"},
    "eps-huge": {"layer_norm_eps": 1e300}, "eps-tiny": {"layer_norm_eps": 5e-324},
    "pad-24": {"pad_token_id": 24}, "pad-negative": {"pad_token_id": -1}, "pad-huge": {"pad_token_id": 1 << 62},
    "positions-100": {"max_position_embeddings": 100}, "positions-2": {"max_position_embeddings": 2},
    "no-heads": {"num_attention_heads": None}, "no-eps": {"layer_norm_eps": None}, "no-pad": {"pad_token_id": None},
}
for name, change in bert_configs.items():
    cfg = {k: v for k, v in dict(bert, **change).items() if v is not None}
    example("bert-config-%s" % name, 9, json.dumps(cfg))
    example("bert-file-config-%s" % name, 15, json.dumps(cfg))
for name, raw in (("not-object", "[2]"), ("truncated", '{"num_attention_heads": 2,'), ("empty", "")):
    example("bert-config-%s" % name, 9, raw)
    example("bert-file-config-%s" % name, 15, raw)
for name, raw in (("valid", '{"max_seq_length": 6}'), ("one", '{"max_seq_length": 1}'),
                  ("two", '{"max_seq_length": 2}'), ("zero", '{"max_seq_length": 0}'),
                  ("past-positions", '{"max_seq_length": 100}'), ("string", '{"max_seq_length": "6"}'),
                  ("null", '{"max_seq_length": null}'), ("array", "[6]"), ("broken", "{")):
    example("bert-stconfig-%s" % name, 10, raw)
example("bert-tokenizer-broken", 11, "{")
example("bert-tokenizer-outside", 11, json.dumps({"model": {"type": "WordLevel", "unk_token": "the",
                                                           "vocab": {"the": 4, "cat": 1000}},
                                                 "pre_tokenizer": {"type": "Whitespace"}}))
example("bert-tokenizer-bytelevel", 11, json.dumps({"model": {"type": "BPE", "vocab": {"t": 4, "h": 5, "e": 6},
                                                             "merges": []}}))
ids = {"valid": npy_i64((2, 4), [2, 4, 5, 3, 2, 22, 3, 0]), "negative": npy_i64((1, 3), [2, -1, 3]),
       "past-vocab": npy_i64((1, 3), [2, 24, 3]), "all-pad": npy_i64((2, 2), [0, 0, 2, 3]),
       "empty-rows": npy_i64((2, 0), []), "no-rows": npy_i64((0, 3), []), "one-d": npy_i64((3,), [2, 4, 3]),
       "three-d": npy_i64((1, 1, 2), [2, 3]), "long": npy_i64((1, 9), [4] * 9),
       "f32": npy("<f4", (1, 2), f32([2, 3])), "huge": npy_i64((1, 1), [1 << 62])}
for name, data in ids.items():
    example("bert-ids-%s" % name, 12, data)
for name, text in (("valid", "the cat sat\r\nhello world\n"), ("empty", ""), ("blank-lines", "\n\n\n"),
                   ("long-line", "the cat " * 30), ("many", "a dog\n" * 70), ("invalid-utf8", b"the \xff\xfe cat"),
                   ("unknown", "zebra xylophone")):
    example("bert-sentences-%s" % name, 13, text)
embed_argvs = {
    "ids": "bert\nids.npy\nout.npy", "file-form": "b.safetensors\nids.npy\nout.npy",
    "file-form-flags": "--heads\n2\n--eps\n1e-12\n--pad\n0\nb.safetensors\nids.npy\nout.npy",
    "text": "bert\nthe cat\na dog", "text-out": "--out\nx.npy\nbert\nhello", "file": "bert\n--file\ns.txt",
    "stdin": "bert\n--file\n-", "repeat": "--repeat\n2\nbert\nids.npy\nout.npy",
    "repeat-huge": "--repeat\n2000000000\nbert\nids.npy\nout.npy", "bf16": "--dtype\nbf16\nbert\nthe cat",
    "f64": "--dtype\nf64\nbert\nthe cat", "heads-3": "--heads\n3\nbert\nids.npy\nout.npy",
    "pad-huge": "--pad\n99\nbert\nthe cat", "eps-junk": "--eps\nnan\nbert\nids.npy\nout.npy",
    "dashdash": "bert\n--\n--file", "missing-file": "bert\n--file\nnope.txt", "dir-as-file": "bert\n--file\ngen",
    "both": "bert\n--file\ns.txt\nmore", "model-missing": "nope\nids.npy\nout.npy", "gen-as-bert": "gen\nthe cat",
    "device": "--device\ncuda:1\nbert\nthe cat", "out-dir": "bert\nids.npy\nbert", "nothing": "",
    "ids-out-text": "bert\nids.npy\nout.txt",
}
for name, text in embed_argvs.items():
    example("bert-argv-%s" % name, 14, text)
