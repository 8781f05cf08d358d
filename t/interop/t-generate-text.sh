#!/bin/sh
# t/interop/t-generate-text.sh - examples/tendo-generate against Hugging Face
# transformers on small random decoders made here (sharp attention, so that
# positions matter), with a byte-level BPE tokenizer trained here on
# README.md (tokenizers; nothing downloaded): Llamas with RoPE scaled
# llama3, linear (in transformers 4's rope_scaling layout, with attention
# and MLP biases), dynamic NTK (past max_position_embeddings) and YaRN (two
# ways); a Qwen2 (q/k/v biases, tied embeddings; and one whose second layer
# has a sliding window); a Mistral (head_dim of its own, a sliding window
# the prompt overflows).  Each: the prompt's logits within f32 tolerance and
# 24 greedy tokens equal to generate()'s from the prompt's ids; and, from
# the text (--prompt), the streamed text equal to generate()'s decoded, up
# to its EOS.  Then: greedy with --repeat-penalty against
# generate(repetition_penalty=...); sampling with a seed: the same text
# twice and on cuda:0 (where tendo info lists one), other seeds other
# texts, temperature 0, top-k 1 and top-p 0 the greedy text; the
# end-of-sequence list of generation_config.json; characters split across
# byte tokens streamed whole (a model that spells a chain of bytes); --chat
# against apply_chat_template with Llama 3, 3.1, ChatML (with and without a
# default system prompt), Mistral and Llama 2 templates, and status 2 for a
# template of another form or none.  The text checks skip in a build without
# tokenizers.  Skips, saying why, without a Python that has torch,
# transformers and tokenizers (TORCH_PYTHON, BENCH_PYTHON or PYTHON).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "torch, transformers, tokenizers" "torch, transformers and tokenizers"
text=0 cuda=0
grep -q '^#define TENDO_HAVE_TEXT 1' "$top_builddir/config.h" 2> /dev/null && text=1
"$top_builddir/tools/tendo" info 2> /dev/null | grep -q '^  cuda:0 ' && cuda=1
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - \
    "$top_builddir/examples/tendo-generate" "$tmp" "${top_srcdir:-.}/README.md" "$text" "$cuda" <<'PY'
import json, subprocess, sys, warnings
from tap import Tap
import numpy as np
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM, PreTrainedTokenizerFast,
                          Qwen2Config, Qwen2ForCausalLM)
from transformers.utils import logging

warnings.simplefilter("ignore")
logging.set_verbosity_error()
prog, tmp, corpus = sys.argv[1:4]
has_text, has_cuda = sys.argv[4] == "1", sys.argv[5] == "1"
tap = Tap()
ok = tap.ok
N = 24
PROMPT = "tendo is a C11 tensor library; naïve café, 東京 and 🙂"

# ---- a byte-level BPE of 512 ids with <s> added in front, as Llama 3's and Qwen2's files are made ----
SPECIALS = ["<s>", "</s>", "<|im_start|>", "<|im_end|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.train([corpus], trainers.BpeTrainer(vocab_size=512, special_tokens=SPECIALS, show_progress=False,
                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
BOS, EOS = tok.token_to_id("<s>"), tok.token_to_id("</s>")
tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", BOS)])
V = tok.get_vocab_size()


def run(args, **kw):
    return subprocess.run([prog] + args, capture_output=True, timeout=120, **kw)


def decode(ids):
    """generate()'s new ids as text: up to the first EOS, special tokens skipped."""
    ids = list(ids)
    return tok.decode(ids[:ids.index(EOS)] if EOS in ids else ids, skip_special_tokens=True)


def greedy(model, ids, n=N, **kw):
    """generate()'s n greedy tokens after ids, EOS or not (as tendo-generate's .npy mode gives them)."""
    model.generation_config.eos_token_id = None
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False, pad_token_id=EOS, **kw)
    return out[0, len(ids):].tolist()


def llama(**kw):
    cfg = dict(vocab_size=V, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
               num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-5, bos_token_id=BOS,
               eos_token_id=EOS, tie_word_embeddings=False)
    cfg.update(kw)
    return LlamaForCausalLM(LlamaConfig(**cfg))


def qwen2(**kw):
    return Qwen2ForCausalLM(Qwen2Config(vocab_size=V, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                        rms_norm_eps=1e-6, bos_token_id=BOS, eos_token_id=EOS,
                                        rope_parameters={"rope_type": "default", "rope_theta": 1e6}, **kw))


def to_transformers4(d):
    """config.json as transformers 4 writes it: rope_scaling and rope_theta beside it."""
    with open(f"{d}/config.json") as f:
        cfg = json.load(f)
    rp = cfg.pop("rope_parameters")
    cfg["rope_theta"] = rp.pop("rope_theta")
    cfg["rope_scaling"] = dict(rp, type=rp.pop("rope_type"))
    with open(f"{d}/config.json", "w") as f:
        json.dump(cfg, f)


cases = [
    ("llama3", lambda: llama(rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                              "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                              "original_max_position_embeddings": 64}), None),
    ("linear (rope_scaling), attention and MLP biases",
     lambda: llama(attention_bias=True, mlp_bias=True, rope_parameters={"rope_type": "linear", "factor": 2.0,
                                                                         "rope_theta": 10000.0}), to_transformers4),
    ("dynamic NTK, past max_position_embeddings 40",
     lambda: llama(max_position_embeddings=40, rope_parameters={"rope_type": "dynamic", "factor": 2.0,
                                                                "rope_theta": 10000.0}), None),
    ("yarn", lambda: llama(max_position_embeddings=128, rope_parameters={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32, "rope_theta": 10000.0}), None),
    ("yarn, mscale, beta 16/2, not truncated", lambda: llama(max_position_embeddings=128, rope_parameters={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32, "rope_theta": 10000.0,
        "mscale": 0.8, "mscale_all_dim": 0.5, "beta_fast": 16.0, "beta_slow": 2.0, "truncate": False}), None),
    ("qwen2, q/k/v biases, tied embeddings", lambda: qwen2(tie_word_embeddings=True), None),
    ("qwen2, sliding window 8 on layer 1", lambda: qwen2(use_sliding_window=True, sliding_window=8,
                                                         max_window_layers=1), None),
    ("mistral, head_dim 32, sliding window 8", lambda: MistralForCausalLM(MistralConfig(
        vocab_size=V, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=32, sliding_window=8, max_position_embeddings=256, rms_norm_eps=1e-5,
        bos_token_id=BOS, eos_token_id=EOS)), None),
]
prompt_ids = tok.encode(PROMPT).ids
dirs = {}
for i, (what, make, edit) in enumerate(cases):
    torch.manual_seed(i)
    model = make().eval()
    with torch.no_grad():  # random biases and norms (the initialisation leaves 0 and 1), sharp attention
        for name, p in model.named_parameters():
            if name.endswith(".bias") or "norm" in name:
                p.add_(torch.randn_like(p) * 0.3)
            if "q_proj.weight" in name or "k_proj.weight" in name:
                p.mul_(10)
    d = dirs[what] = f"{tmp}/m{i}"
    model.save_pretrained(d)
    tok.save(f"{d}/tokenizer.json")
    if edit:
        edit(d)
        model = type(model).from_pretrained(d).eval()
    np.save(f"{d}/prompt.npy", np.array([prompt_ids], dtype=np.int64))
    with torch.no_grad():
        ref_logits = model(torch.tensor([prompt_ids])).logits[0].numpy()
    ref = greedy(model, prompt_ids)
    r = run(["--tokens", str(N), "--logits", f"{d}/logits.npy", d, f"{d}/prompt.npy", f"{d}/out.npy"])
    if r.returncode != 0:
        ok(False, f"{what}: tendo-generate runs", r.stderr.decode(errors="replace"))
    else:
        got = np.load(f"{d}/logits.npy")
        err = float(np.abs(got - ref_logits).max()) if got.shape == ref_logits.shape else float("inf")
        scale = float(np.abs(ref_logits).max())
        toks = np.load(f"{d}/out.npy").tolist()
        ok(err <= 1e-4 * max(1.0, scale) and toks == ref,
           f"{what}: prompt logits within f32 tolerance (max abs error {err:.1e}) and {N} greedy tokens equal "
           f"generate()'s", f"tendo        {toks}\n# transformers {ref}")
    if has_text:
        want = decode(ref)
        r = run([d, "--prompt", PROMPT, "--tokens", str(N)])
        ok(r.returncode == 0 and r.stdout == want.encode() and b"tokens/s" in r.stderr,
           f"{what}: --prompt streams generate()'s text ({len(want)} characters"
           f"{', to the EOS at token ' + str(ref.index(EOS) + 1) if EOS in ref else ''}), tokens/s on stderr",
           f"status {r.returncode}, stderr {r.stderr.decode(errors='replace')}\n"
           f"tendo        {r.stdout.decode(errors='replace')!r}\n# transformers {want!r}")
if not has_text:
    print("# SKIP the text checks: this build has no tokenizers")

# ---- greedy with a repetition penalty, on the Qwen2 -------------------------------------------------
d = dirs["qwen2, q/k/v biases, tied embeddings"]
model = Qwen2ForCausalLM.from_pretrained(d).eval()
ref = greedy(model, prompt_ids, repetition_penalty=1.5)
r = run(["--tokens", str(N), "--repeat-penalty", "1.5", d, f"{d}/prompt.npy", f"{d}/pen.npy"])
toks = np.load(f"{d}/pen.npy").tolist() if r.returncode == 0 else r.stderr.decode(errors="replace")
ok(toks == ref, "--repeat-penalty 1.5, greedy: generate(repetition_penalty=1.5)'s tokens",
   f"tendo        {toks}\n# transformers {ref}")

if has_text:
    # ---- sampling, on the YaRN Llama ------------------------------------------------------------------
    d = dirs["yarn"]
    greedy_text = run([d, "--prompt", PROMPT, "--tokens", str(N)]).stdout
    flags = ["--temperature", "0.9", "--top-k", "40", "--top-p", "0.95", "--min-p", "0.01", "--repeat-penalty", "1.1"]
    a, b = (run([d, "--prompt", PROMPT, "--tokens", "16", "--seed", "42"] + flags) for _ in range(2))
    ok(a.returncode == 0 and a.stdout == b.stdout and a.stdout != greedy_text[:len(a.stdout)],
       "sampling with --seed 42: the same text twice, not the greedy one",
       f"{a.stderr}\n# {a.stdout!r}\n# {b.stdout!r}")
    others = {run([d, "--prompt", PROMPT, "--tokens", "16", "--seed", str(s)] + flags).stdout for s in (43, 44)}
    ok(a.stdout not in others and len(others) == 2, "seeds 42, 43 and 44 give three texts", repr(others))
    if has_cuda:
        c = run([d, "--prompt", PROMPT, "--tokens", "16", "--seed", "42", "--device", "cuda:0"] + flags)
        ok(c.returncode == 0 and c.stdout == a.stdout, "--device cuda:0 samples the CPU's text with --seed 42",
           f"{c.stderr}\n# cpu    {a.stdout!r}\n# cuda:0 {c.stdout!r}")
    else:
        print(f"ok {tap.n + 1} # SKIP no CUDA device (tendo info lists no cuda:0)")
        tap.n += 1
    for extra in (["--temperature", "0", "--seed", "42"], ["--top-k", "1", "--seed", "5"],
                  ["--top-p", "0", "--seed", "6"]):
        r = run([d, "--prompt", PROMPT, "--tokens", str(N)] + extra)
        ok(r.returncode == 0 and r.stdout == greedy_text, f"{' '.join(extra)}: the greedy text",
           f"{r.stdout!r}\n# greedy {greedy_text!r}")

    # ---- the end of the text: generation_config.json's eos_token_id list -------------------------------
    gen = greedy(LlamaForCausalLM.from_pretrained(d).eval(), prompt_ids)
    stop = next(k for k in range(3, len(gen)) if gen[k] not in gen[:k] and EOS not in gen[:k + 1])
    with open(f"{d}/generation_config.json", "w") as f:
        json.dump({"eos_token_id": [EOS, gen[stop]]}, f)
    want = tok.decode(gen[:stop], skip_special_tokens=True)
    r = run([d, "--prompt", PROMPT, "--tokens", str(N)])
    ok(r.returncode == 0 and r.stdout == want.encode(),
       f"generation_config.json's eos_token_id [{EOS}, {gen[stop]}]: the text stops after {stop} tokens",
       f"tendo {r.stdout!r}\n# want {want!r}")

    # ---- streaming: characters split across tokens are held back until whole -----------------------
    # A Llama whose attention and MLP add nothing (o_proj, down_proj zero) maps each token to the next
    # through lm_head alone; its rows make a chain through the single-byte tokens of CHAIN, then EOS.
    def byte_token(b):  # GPT-2's bytes_to_unicode: printable bytes stand for themselves
        keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
        return tok.token_to_id(chr(b) if b in keep else chr(256 + [c for c in range(256) if c not in keep].index(b)))
    CHAIN = "東京 🙂!"
    chain = [byte_token(b) for b in CHAIN.encode()]
    torch.manual_seed(99)
    model = llama(num_hidden_layers=1, num_key_value_heads=4).eval()
    start = tok.encode("x").ids
    with torch.no_grad():
        model.model.layers[0].self_attn.o_proj.weight.zero_()
        model.model.layers[0].mlp.down_proj.weight.zero_()
        e = model.model.embed_tokens.weight
        for a, b in zip(start[-1:] + chain, chain + [EOS]):
            model.lm_head.weight[b] = e[a] / e[a].pow(2).mean().sqrt()
    d = f"{tmp}/chain"
    model.save_pretrained(d)
    tok.save(f"{d}/tokenizer.json")
    hf = greedy(model, start, len(chain) + 1)
    for n in (N, 2):
        want = tok.decode(chain[:n], skip_special_tokens=True)
        r = run([d, "--prompt", "x", "--tokens", str(n)])
        ok(r.returncode == 0 and r.stdout == want.encode() and hf == chain + [EOS],
           f"--tokens {n}: the text of {min(n, len(chain))} byte tokens ({want!r}), split characters whole",
           f"{r.stderr}\n# tendo {r.stdout!r}\n# want  {want!r}\n# transformers' tokens {hf}, the chain {chain}")

    # ---- --chat --------------------------------------------------------------------------------------
    LLAMA3 = (r"{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
              r"'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
              r"'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
              r"{{ content }}{% endfor %}{% if add_generation_prompt %}"
              r"{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")
    LLAMA31 = (r'{{- bos_token }}{%- if not date_string is defined %}{%- set date_string = "26 Jul 2024" %}'
               r"{%- endif %}{%- if messages[0]['role'] == 'system' %}{%- set system_message = "
               r"messages[0]['content']|trim %}{%- set messages = messages[1:] %}{%- else %}"
               r'{%- set system_message = "" %}{%- endif %}{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}'
               r'{{- "Cutting Knowledge Date: December 2023\n" }}{{- "Today Date: " + date_string + "\n\n" }}'
               r'{{- system_message }}{{- "<|eot_id|>" }}{%- for message in messages %}'
               r"{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim"
               r" + '<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}"
               r"{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}")
    QWEN = (r"{%- if tools %}{{- '<|im_start|>system\n' }}{%- else %}{%- if messages[0]['role'] == 'system' %}"
            r"{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}{%- else %}"
            r"{{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
            r"<|im_end|>\n' }}{%- endif %}{%- endif %}{%- for message in messages %}{%- if message.role == 'user' %}"
            r"{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- endif %}"
            r"{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}")
    CHATML = (r"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
              r"'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
              r"{% endif %}")
    MISTRAL = (r"{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
               r"{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
               r"{{ message['content'] + eos_token}}{% endif %}{% endfor %}")
    LLAMA2 = (r"{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
              r"{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
              r"{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
              r"{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message"
              r" + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}"
              r"{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + "
              r"' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}"
              r"{% endif %}{% endfor %}")
    d = dirs["llama3"]
    model = LlamaForCausalLM.from_pretrained(d).eval()
    question = "  Hello there, tendo!\n"
    for what, tpl, file in (("Llama 3", LLAMA3, False), ("Llama 3.1 (dates)", LLAMA31, True),
                            ("ChatML, Qwen2.5's default system prompt", QWEN, False), ("ChatML", CHATML, True),
                            ("Mistral [INST]", MISTRAL, False), ("Llama 2 [INST]", LLAMA2, False)):
        fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", chat_template=tpl)
        ids = fast.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                       tokenize=True)
        ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
        want = decode(greedy(model, ids))
        with open(f"{d}/tokenizer_config.json", "w") as f:
            json.dump({"bos_token": "<s>", "eos_token": "</s>"} if file else
                      {"bos_token": {"content": "<s>"}, "eos_token": "</s>", "chat_template": tpl}, f)
        with open(f"{d}/chat_template.jinja", "w") as f:
            f.write(tpl if file else "")
        if not file:
            subprocess.run(["rm", "-f", f"{d}/chat_template.jinja"])
        r = run([d, "--prompt", question, "--chat", "--tokens", str(N)])
        ok(r.returncode == 0 and r.stdout == want.encode(),
           f"--chat, {what} template{' (chat_template.jinja)' if file else ''}: apply_chat_template's prompt, "
           f"generate()'s text", f"{r.stderr}\n# tendo        {r.stdout!r}\n# transformers {want!r}")
    with open(f"{d}/tokenizer_config.json", "w") as f:
        json.dump({"bos_token": "<s>", "chat_template": "{{ messages[0]['content'] }}"}, f)
    r = run([d, "--prompt", question, "--chat"])
    ok(r.returncode == 2 and b"cannot apply" in r.stderr, "--chat with a template of no known form: status 2, "
       "saying so", f"status {r.returncode}: {r.stderr}")
    with open(f"{d}/tokenizer_config.json", "w") as f:
        json.dump({"bos_token": "<s>"}, f)
    r = run([d, "--prompt", question, "--chat"])
    ok(r.returncode == 2 and b"no chat template" in r.stderr, "--chat without a template: status 2, saying so",
       f"status {r.returncode}: {r.stderr}")
tap.done()
PY
