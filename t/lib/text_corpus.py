"""t/lib/text_corpus.py - varied lines of text, and tokenizers trained on them
with Hugging Face `tokenizers`, for the tokenizer tests (t/interop/t-tokenize-hf.sh).

    lines(n, seed)       n lines: several scripts, emoji, whitespace runs,
                         numbers, code, contractions, combining marks,
                         control characters, special tokens written out
    trained(kind, dir)   a Tokenizer of one of KINDS, trained on lines(...)
                         (no download), saved as dir/tokenizer.json

No line holds '\\n': the tools read one text per line.
"""
import json
import random

from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors,
                        trainers)

WORDS = {
    "latin": "the quick brown fox jumps over lazy dog tensor library kernel matrix vector gradient train model "
             "Paris London naïve café résumé coöperate façade Ångström Straße über Müller señor niño "
             "tokenizer ĳssel œuvre Łódź Dvořák".split(),
    "greek": "καλημέρα κόσμε Ελλάδα φιλοσοφία αλφάβητο".split(),
    "cyrillic": "привет мир Москва библиотека тензор ЁЖИК".split(),
    "arabic": "مرحبا بالعالم مكتبة العربية".split(),
    "hebrew": "שלום עולם ספרייה".split(),
    "devanagari": "नमस्ते दुनिया हिन्दी पुस्तकालय".split(),
    "cjk": "你好世界 日本語 東京 中文字符 漢字 한국어 안녕하세요 ひらがな カタカナ".split(),
    "thai": "สวัสดี ภาษาไทย".split(),
}
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "🇯🇵", "1️⃣", "❤️", "🤖", "🧑🏿‍💻", "✨", "🎉", "🐍", "☕"]
SPACES = [" ", "  ", "   ", "\t", " \t ", "\u00a0", "\u3000", "\u2009", "\u200b", "      "]
ODD = ["e\u0301", "n\u0303", "\u1100\u1161\u11a8", "ﬁ", "①", "Ｈｅｌｌｏ", "ᴴᴱᴸᴸᴼ", "\u00ad", "\ufeff", "\x00",
       "\x07", "\x1b[0m", "\r", "İstanbul", "ΣΊΣΥΦΟΣ", "ǅ", "ß", "ﬀ", "Ⅻ", "½", "²", "\u2028", "\u0085", "\U0001d400"]
CODE = ["for (int i = 0; i < n; i++) { x[i] += 1; }", "def f(x):    return x**2  # square",
        "<div class=\"a\">&amp;</div>", "{\"key\": [1, 2.5, null, true]}", "a->b = c ? d : e;",
        "SELECT * FROM t WHERE id=42;", "x := y << 3 | 0xFF", "if __name__ == '__main__':", "~/.config/app.toml",
        "https://example.com/path?q=1&r=two#frag", "user@example.org", "C:\\Windows\\System32"]
CONTRACTIONS = ["I'm", "don't", "they'll", "it's", "O'Neil", "IT'S", "We'VE", "you'd", "can't", "y'all",
                "rock 'n' roll", "’tis", "I’m"]
SPECIALS = ["[CLS]", "[SEP]", "[MASK]", "[UNK]", "<s>", "</s>", "<unk>", "<|endoftext|>", "<|im_start|>",
            "<|begin_of_text|>", "<|eot_id|>", "<mask>", "tendo"]


def _number(r):
    k = r.randrange(7)
    if k == 0:
        return str(r.randrange(10 ** r.randrange(1, 12)))
    if k == 1:
        return f"{r.uniform(-1e4, 1e4):.{r.randrange(5)}f}"
    if k == 2:
        return f"{r.randrange(1, 999)},{r.randrange(1000):03d},{r.randrange(1000):03d}"
    if k == 3:
        return "+1 (555) 0" + str(r.randrange(10 ** 6))
    if k == 4:
        return "٣٤٥"  # Arabic-Indic digits
    if k == 5:
        return "１２３"  # fullwidth
    return f"{r.randrange(100)}%"


def _word(r):
    k = r.random()
    if k < 0.55:
        return r.choice(WORDS[r.choice(list(WORDS))])
    if k < 0.62:
        w = r.choice(WORDS["latin"])
        return w.upper() if r.random() < 0.5 else w.capitalize()
    if k < 0.70:
        return _number(r)
    if k < 0.76:
        return r.choice(EMOJI)
    if k < 0.82:
        return r.choice(CONTRACTIONS)
    if k < 0.87:
        return r.choice(ODD)
    if k < 0.90:
        return r.choice(SPECIALS)
    if k < 0.95:
        return r.choice(".,;:!?()[]{}\"'-—–…«»¿¡/\\@#$%^&*_=+<>|~`")
    return "".join(chr(r.choice([r.randrange(0x20, 0x7f), r.randrange(0xa0, 0x250), r.randrange(0x370, 0x3ff),
                                 r.randrange(0x4e00, 0x4fff), r.randrange(0x1f600, 0x1f640)]))
                   for _ in range(r.randrange(1, 6)))


def lines(n, seed):
    """n lines of varied text."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        k = r.random()
        if k < 0.12:
            line = r.choice(CODE)
        elif k < 0.15:
            line = ""
        elif k < 0.18:
            line = r.choice(SPACES) * r.randrange(1, 4)
        else:
            parts = []
            for _ in range(r.randrange(1, 16)):
                parts.append(_word(r))
                parts.append(r.choice(SPACES) if r.random() < 0.2 else ("" if r.random() < 0.1 else " "))
            line = "".join(parts)
            if r.random() < 0.1:
                line = r.choice(SPACES) + line
        out.append(line.replace("\n", " "))
    return out


LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")
KINDS = ["gpt2", "llama3", "qwen2", "wordpiece", "wordpiece-cased", "llama2-sp", "metaspace-nfkc", "mistral-sp",
         "wordlevel"]


def _template(tok, single, specials):
    tok.post_processor = processors.TemplateProcessing(
        single=single, special_tokens=[(s, tok.token_to_id(s)) for s in specials])


def _with_byte_tokens(tok, first):
    """tok (a BPE) with <0x00>..<0xFF> in its vocabulary after the first
    `first` ids, as SentencePiece conversions (Llama 2, Mistral) have them."""
    d = json.loads(tok.to_str())
    vocab = d["model"]["vocab"]
    shifted = {}
    for t, i in vocab.items():
        shifted[t] = i if i < first else i + 256
    for b in range(256):
        shifted.setdefault(f"<0x{b:02X}>", first + b)
    d["model"]["vocab"] = shifted
    for a in d["added_tokens"]:
        if a["id"] >= first:
            a["id"] += 256
    return Tokenizer.from_str(json.dumps(d))


def trained(kind, out_dir, n_train=3000, vocab_size=1500):
    """A tokenizer of kind, trained on n_train lines, saved in out_dir; returns it."""
    text = lines(n_train, seed=7)
    if kind in ("gpt2", "llama3", "qwen2"):
        tok = Tokenizer(models.BPE(ignore_merges=kind != "gpt2"))
        if kind == "gpt2":
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            specials = ["<|endoftext|>"]
        else:
            pattern = LLAMA3_SPLIT if kind == "llama3" else QWEN2_SPLIT
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
            specials = (["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"] if kind == "llama3"
                        else ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
            if kind == "qwen2":
                tok.normalizer = normalizers.NFC()
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
        tok.train_from_iterator(text, trainer)
        if kind == "llama3":
            _template(tok, "<|begin_of_text|> $A", ["<|begin_of_text|>"])
        else:
            tok.post_processor = processors.ByteLevel(trim_offsets=False)
    elif kind.startswith("wordpiece"):
        cased = kind.endswith("cased")
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=not cased, strip_accents=False if cased else None)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, limit_alphabet=300, show_progress=False,
                                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        tok.train_from_iterator(text, trainer)
        _template(tok, "[CLS] $A [SEP]", ["[CLS]", "[SEP]"])
        tok.add_tokens([AddedToken("tendo", single_word=True), AddedToken("<mask>", lstrip=True, rstrip=True),
                        AddedToken("Hello", normalized=True)])
    elif kind in ("llama2-sp", "mistral-sp", "metaspace-nfkc"):
        specials = ["<unk>", "<s>", "</s>"]
        tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=kind != "metaspace-nfkc"))
        scheme = "always" if kind == "metaspace-nfkc" else "first"
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme)
        if kind == "metaspace-nfkc":
            tok.normalizer = normalizers.NFKC()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, limit_alphabet=150,
                                      show_progress=False)
        tok.train_from_iterator(text, trainer)
        if kind != "metaspace-nfkc":
            tok = _with_byte_tokens(tok, len(specials))
        if kind == "llama2-sp":  # Llama 2's conversion: no pre-tokenizer, the spaces replaced by the normalizer
            tok.pre_tokenizer = None
            tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
            tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                             decoders.Strip(" ", 1, 0)])
        elif kind == "mistral-sp":
            tok.decoder = decoders.Sequence([decoders.Metaspace(prepend_scheme="first"), decoders.ByteFallback(),
                                             decoders.Fuse()])
        else:
            tok.decoder = decoders.Metaspace(prepend_scheme="always")
        _template(tok, "<s> $A", ["<s>"])
    elif kind == "wordlevel":
        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        # (U+0000 replaced: jansson, which reads tokenizer.json for tendo, takes no NUL in a vocabulary key)
        tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents(),
                                               normalizers.Strip(), normalizers.Replace("\x00", " ")])
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(),
                                                     pre_tokenizers.Digits(individual_digits=True),
                                                     pre_tokenizers.Punctuation()])
        trainer = trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=["[UNK]", "[SEP]"],
                                            show_progress=False)
        tok.train_from_iterator(text, trainer)
        _template(tok, "$A [SEP]", ["[SEP]"])
    else:
        raise ValueError(kind)
    tok.save(f"{out_dir}/tokenizer.json")
    return tok
