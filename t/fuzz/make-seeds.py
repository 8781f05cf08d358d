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
