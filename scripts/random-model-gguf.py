#!/usr/bin/env python3
"""Write random-weight GGUF files at the real shapes of Qwen3-0.6B, Llama-3.2-1B,
Gemma-3-1B and Phi-4-mini, quantized to Q4_K_M by llama.cpp's own llama-quantize.

kvframe is compared with llama.cpp on these files (tests/runtime/model/
model_llama_cpp_test.cpp): the weights are random, the shapes, hyperparameters,
tensor names and quant mix are those of the real models, so every code path a
real file takes (QK norms, GQA ratios, head sizes of 64/128/256, llama3 RoPE
factors, sliding-window layers, Q4_K/Q6_K and their Q5_0/Q8_0 fallbacks on
rows that are not a multiple of 256) runs at full size.

  /tmp/refenv/bin/python scripts/random-model-gguf.py [--out-dir DIR] [--keep-f16]
      [--llama-bin DIR] [SHAPE ...]
      (SHAPE: qwen3-0.6b llama3.2-1b llama3.2-3b llama3.1-8b gemma3-1b phi4-mini
       phi4-mini-4l llama3.2-1b-text; default: the ones the llama.cpp reference
       test reads, qwen3-0.6b llama3.2-1b gemma3-1b phi4-mini-4l)

writes DIR/<shape>-random-q4_k_m.gguf (DIR: the model cache's random/ folder,
$KVFRAME_MODELS/random, else ~/.cache/kvframe/models/random, where the test
looks).
Needs numpy and gguf-py (a reference/data tool, not part of kvframe's build:
the stdlib-only scripts/device/random-model-gguf.py is the GPU-host one).
llama-quantize comes from --llama-bin, else from bench/peers/build-llama-cpp.sh
(which builds the pinned llama.cpp peer once). Fixed seeds: the F16 file is
identical on every run, and so is the quantized one for the same llama.cpp.

Weights. N(0, 1/fan_in) for every matrix, so each projection keeps its input's
RMS (about 0.02-0.03 at these widths; 1/sqrt(8192) = 0.011 for Llama's
ffn_down), q and k x1.5 so Llama's attention is not near-uniform (scores of
std ~2 rather than ~1: where it attends, RoPE and the masks matter; Qwen 3 and
Gemma 3 RMS-normalize q and k, which undoes the gain: their scores have std
~1 from the unit QK-norm gains); norm
gains 1.0 (for Gemma the file stores 1 + w, so 1.0 here is HF's w = 0), and
the (tied) embedding N(0, (4 / sqrt(n_embd))^2) so the logits have std ~4 and
llama.cpp's top few are separated by tenths to units, as a real model's are,
not the flat near-ties of a 0.02 embedding (logit std ~0.6). Gemma 3's post-
attention and post-FFN norm gains are 8.0: Gemma scales the embedding by
sqrt(n_embd) into the residual, and with the post norms' outputs held to RMS 1
that tied embedding stayed dominant to the last layer, so at half the
positions the top-1 token was the input token itself (logit ~19 against ~17
for the rest: a top-1 that cannot disagree). With gain 8 the layers' sum
outweighs it: measured on 64 random ids with llama.cpp on the F16 file, the
input token is top-1 at 1 of 64 positions, and the median gap between the top
two logits is 0.6 on all three shapes (top-1 ~18, logit std 4.0).

Tokenizer. Gemma 3: the real one, copied from the Gemma 3 270M file (same
tokenizer for the whole family) when it is in the cache. Qwen 3 and Llama 3.2:
synthetic GPT-2-style byte-level BPE vocabularies of the real size, the real
pre-tokenizer names (qwen2, llama-bpe) and the real special tokens at their
real ids: the 256 byte tokens, a few merged ones (and their merges: llama.cpp
requires the merges key, gguf-py refuses an empty array), "<tok_N>" fillers.
Text tokenizes into bytes and those few merges only; the fixtures feed random
token ids, so this is enough for both runtimes to load the file
(llama3.2-1b-text, for the game case, takes the default model's whole BPE
instead, so text is as many tokens as a real file makes of it). Phi-4-mini:
the same, under its real pre-tokenizer name (gpt-4o), which kvframe splits as
llama.cpp does (runtime/tokenizer/pre_tokenizer.cpp).

Phi-4-mini. phi4-mini is the whole shape (a Q4_K_M of ~2.4 GB whose F32 copy,
which the fixture script makes, is ~15 GB); phi4-mini-4l has the same tensors
at 4 of its 32 layers, small enough for a 24 GB machine shared with builds,
and is the one the reference test reads. Its LongRoPE factors are synthetic
(48 per set, short near 1, long growing to 40: the real files' lengths and
ranges), its attention factor the one convert_hf_to_gguf.py derives from
131072 / 4096.
"""
import argparse
import math
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import gguf

from model_shapes import SHAPES  # scripts/model_shapes.py, beside this file

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("KVFRAME_MODELS") or Path.home() / ".cache/kvframe/models")  # as scripts/fetch-model.sh
SEED = 20260

# The shapes tests/runtime/model/model_llama_cpp_test.cpp compares; the
# larger Llama ones are for memory and speed (bench/bench_weights_memory.py).
DEFAULT_SHAPES = ["qwen3-0.6b", "llama3.2-1b", "gemma3-1b", "phi4-mini-4l"]

GEMMA_TOKENIZER_SOURCE = CACHE / "gemma-3-270m-q4_k_m.gguf"
TEXT_BPE_SOURCE = CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf"  # scripts/fetch-model.sh's default
QK_GAIN = 1.5
POST_NORM_GAIN = 8.0
LOGIT_STD = 4.0


def llama3_rope_factors(head_dim, base, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings):
    """HF's _compute_llama3_parameters as convert_hf_to_gguf.py writes it: one
    divisor per frequency (1 for short wavelengths, `factor` for long ones,
    a smooth blend between)."""
    low_wavelen = original_max_position_embeddings / low_freq_factor
    high_wavelen = original_max_position_embeddings / high_freq_factor
    factors = []
    for i in range(0, head_dim, 2):
        freq = 1.0 / (base ** (i / head_dim))
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            factors.append(1.0)
        elif wavelen > low_wavelen:
            factors.append(factor)
        else:
            smooth = (original_max_position_embeddings / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            factors.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(factors, dtype=np.float32)


def longrope(s):
    """Phi-3's LongRoPE: synthetic short and long factors (one per rotated
    pair) and the attention factor convert_hf_to_gguf.py derives."""
    pairs = s["rope_dims"] // 2
    ramp = np.linspace(0.0, 1.0, pairs, dtype=np.float32)
    short = (1.0 + 0.5 * ramp ** 4).astype(np.float32)
    long = (1.0 + 39.0 * ramp ** 2).astype(np.float32)
    scale = s["n_ctx"] / s["original_context"]
    return short, long, math.sqrt(1 + math.log(scale) / math.log(s["original_context"]))


def tensor_list(s):
    """(name, numpy shape (outermost first), kind) in the order convert_hf_to_gguf.py writes them."""
    e, q, kv, ff = s["n_embd"], s["n_head"] * s["head_dim"], s["n_head_kv"] * s["head_dim"], s["n_ff"]
    fused = s["arch"] == "phi3"
    out = [("token_embd.weight", (s["n_vocab"], e), "embd")]
    if "llama3_rope" in s:
        out.append(("rope_freqs.weight", (s["head_dim"] // 2,), "rope"))
    if fused:
        out += [("rope_factors_long.weight", (s["rope_dims"] // 2,), "rope_long"),
                ("rope_factors_short.weight", (s["rope_dims"] // 2,), "rope_short")]
    for l in range(s["n_layer"]):
        b = f"blk.{l}."
        out.append((b + "attn_norm.weight", (e,), "norm"))
        if fused:  # Q|K|V in one tensor: kind qkv scales its Q and K rows as "qk" does
            out.append((b + "attn_qkv.weight", (q + 2 * kv, e), "qkv"))
        else:
            out += [(b + "attn_q.weight", (q, e), "qk"), (b + "attn_k.weight", (kv, e), "qk"),
                    (b + "attn_v.weight", (kv, e), "mat")]
        out.append((b + "attn_output.weight", (e, q), "mat"))
        if s["arch"] in ("qwen3", "gemma3"):
            out += [(b + "attn_q_norm.weight", (s["head_dim"],), "norm"),
                    (b + "attn_k_norm.weight", (s["head_dim"],), "norm")]
        if s["arch"] == "gemma3":
            out.append((b + "post_attention_norm.weight", (e,), "post_norm"))
        out.append((b + "ffn_norm.weight", (e,), "norm"))
        if fused:  # gate rows, then up rows
            out.append((b + "ffn_up.weight", (2 * ff, e), "mat"))
        else:
            out += [(b + "ffn_gate.weight", (ff, e), "mat"), (b + "ffn_up.weight", (ff, e), "mat")]
        out.append((b + "ffn_down.weight", (e, ff), "mat"))
        if s["arch"] == "gemma3":
            out.append((b + "post_ffw_norm.weight", (e,), "post_norm"))
    out.append(("output_norm.weight", (e,), "norm"))
    if s.get("untied"):
        out.append(("output.weight", (s["n_vocab"], e), "embd"))
    return out


def tensor_data(name, shape, kind, s):
    if kind == "norm":
        return np.ones(shape, dtype=np.float32)
    if kind == "post_norm":
        return np.full(shape, POST_NORM_GAIN, dtype=np.float32)
    if kind == "rope":
        return llama3_rope_factors(s["head_dim"], s["rope_base"], **s["llama3_rope"])
    if kind in ("rope_short", "rope_long"):
        return longrope(s)[0 if kind == "rope_short" else 1]
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([SEED, zlib.crc32(name.encode())])))
    std = LOGIT_STD / math.sqrt(s["n_embd"]) if kind == "embd" else 1.0 / math.sqrt(shape[1])
    if kind == "qk":
        std *= QK_GAIN
    qk_rows = (s["n_head"] + s["n_head_kv"]) * s["head_dim"] if kind == "qkv" else 0
    out = np.empty(shape, dtype=np.float16)
    rows = max(1, (1 << 24) // shape[1])  # 16M values at a time
    for r in range(0, shape[0], rows):
        block = rng.standard_normal((min(rows, shape[0] - r), shape[1]), dtype=np.float32) * np.float32(std)
        gained = max(0, min(qk_rows - r, block.shape[0]))  # the fused tensor's Q and K rows
        block[:gained] *= np.float32(QK_GAIN)
        out[r:r + rows] = block
    return out


def byte_unicode():
    """GPT-2's printable stand-in for each byte (tokenizer.ggml.tokens spell byte-level tokens with it)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def text_tokens():
    """The default model's byte-level BPE tokens and merges, its control
    tokens turned into fillers (the shape's own specials come after them)."""
    if not TEXT_BPE_SOURCE.exists():
        sys.exit(f"{TEXT_BPE_SOURCE} is missing (its BPE is copied): run scripts/fetch-model.sh")
    fields = gguf.GGUFReader(TEXT_BPE_SOURCE).fields
    strings = lambda key: [bytes(fields[key].parts[i]).decode() for i in fields[key].data]
    kinds = fields["tokenizer.ggml.token_type"]
    control = [kinds.parts[i].tolist()[0] == gguf.TokenType.CONTROL for i in kinds.data]
    tokens = [f"<tok_{i}>" if c else t for i, (t, c) in enumerate(zip(strings("tokenizer.ggml.tokens"), control))]
    return tokens, strings("tokenizer.ggml.merges")


def synthetic_bpe(n_vocab, specials, text_bpe=False):
    """tokens, token types and merges of a byte-level BPE vocabulary of n_vocab
    entries: the 256 bytes, a few merges of common English pairs (or, with
    text_bpe, the default model's whole BPE), fillers, and `specials`
    ({id: text}) as control tokens at their ids."""
    if text_bpe:
        tokens, merges = text_tokens()
    else:
        chars = byte_unicode()
        tokens = [chars[b] for b in range(256)]
        pairs = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("e", "r"), ("a", "n"), ("o", "n"), ("r", "e"),
                 ("Ġ", "a"), ("Ġ", "s"), ("Ġ", "w"), ("o", "r"), ("e", "n"), ("Ġ", "c"), ("Ġ", "o"), ("l", "l")]
        merges = [f"{a} {b}" for a, b in pairs]
        tokens += [a + b for a, b in pairs]
    types = [gguf.TokenType.NORMAL] * len(tokens)
    first_special = min(specials)
    tokens += [f"<tok_{i}>" for i in range(len(tokens), first_special)]
    types += [gguf.TokenType.NORMAL] * (first_special - len(types))
    for i in range(first_special, n_vocab):
        if i in specials:
            tokens.append(specials[i])
            types.append(gguf.TokenType.CONTROL)
        else:  # as convert_hf_to_gguf.py pads a vocabulary to the model's size
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
    assert len(tokens) == n_vocab and len(set(tokens)) == n_vocab
    return tokens, [int(t) for t in types], merges


def add_tokenizer(w, s):
    if s["tokenizer"] == "gemma3":
        if not GEMMA_TOKENIZER_SOURCE.exists():
            sys.exit(f"{GEMMA_TOKENIZER_SOURCE} is missing (its tokenizer is copied): run scripts/fetch-model.sh gemma3-270m")
        reader = gguf.GGUFReader(GEMMA_TOKENIZER_SOURCE)
        for key, field in reader.fields.items():
            if not key.startswith("tokenizer."):
                continue
            vtype = field.types[0]
            if vtype == gguf.GGUFValueType.ARRAY:
                sub = field.types[1]
                if sub == gguf.GGUFValueType.STRING:
                    value = [bytes(field.parts[i]) for i in field.data]
                else:
                    value = [field.parts[i].tolist()[0] for i in field.data]
                w.add_key_value(key, value, vtype, sub_type=sub)
            elif vtype == gguf.GGUFValueType.STRING:
                w.add_key_value(key, bytes(field.parts[field.data[0]]), vtype)
            else:
                w.add_key_value(key, field.parts[field.data[0]].tolist()[0], vtype)
        return
    if s["tokenizer"] == "qwen2":  # Qwen3's control tokens (the rest of its specials are user-defined text)
        specials = {151643: "<|endoftext|>", 151644: "<|im_start|>", 151645: "<|im_end|>"}
        bos, eos, pad, add_bos = 151643, 151645, 151643, False
    elif s["tokenizer"] == "gpt-4o":  # Phi-4-mini's added tokens (its tokenizer_config.json)
        names = ["<|endoftext|>"] + [None] * 18 + ["<|endofprompt|>", "<|assistant|>", "<|end|>", "<|user|>",
                                                  "<|system|>", "<|tool|>", "<|/tool|>", "<|tool_call|>",
                                                  "<|/tool_call|>", "<|tool_response|>", "<|tag|>"]
        specials = {199999 + i: name for i, name in enumerate(names) if name}
        bos, eos, pad, add_bos = 199999, 199999, 199999, False
    else:  # llama-bpe: Llama 3's 256 reserved ids from 128000
        names = {0: "<|begin_of_text|>", 1: "<|end_of_text|>", 4: "<|finetune_right_pad_id|>",
                 6: "<|start_header_id|>", 7: "<|end_header_id|>", 8: "<|eom_id|>", 9: "<|eot_id|>",
                 10: "<|python_tag|>"}
        reserved = iter(range(256))
        specials = {128000 + i: names.get(i) or f"<|reserved_special_token_{next(reserved)}|>" for i in range(256)}
        bos, eos, pad, add_bos = 128000, 128009, None, True
    tokens, types, merges = synthetic_bpe(s["n_vocab"], specials, s.get("text_bpe", False))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(s["tokenizer"])
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    if pad is not None:
        w.add_pad_token_id(pad)
    w.add_add_bos_token(add_bos)


def write_f16(s, path):
    w = gguf.GGUFWriter(path, s["arch"])
    w.add_name(s["name"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_context_length(s["n_ctx"])
    w.add_embedding_length(s["n_embd"])
    w.add_block_count(s["n_layer"])
    w.add_feed_forward_length(s["n_ff"])
    w.add_head_count(s["n_head"])
    w.add_head_count_kv(s["n_head_kv"])
    w.add_layer_norm_rms_eps(s["rms_eps"])
    w.add_key_length(s["head_dim"])
    w.add_value_length(s["head_dim"])
    w.add_rope_freq_base(s["rope_base"])
    if s["arch"] == "llama":
        w.add_vocab_size(s["n_vocab"])
        w.add_rope_dimension_count(s["head_dim"])
    if "sliding_window" in s:
        w.add_sliding_window(s["sliding_window"])
    if s["arch"] == "phi3":  # as convert_hf_to_gguf.py's Phi3MiniModel
        w.add_rope_dimension_count(s["rope_dims"])
        w.add_rope_scaling_orig_ctx_len(s["original_context"])
        w.add_rope_scaling_attn_factors(longrope(s)[2])
        w.add_sliding_window(0)
    add_tokenizer(w, s)
    tensors = tensor_list(s)
    for name, shape, kind in tensors:
        dtype = np.float16 if kind in ("embd", "qk", "qkv", "mat") else np.float32
        w.add_tensor_info(name, shape, np.dtype(dtype), int(np.prod(shape)) * np.dtype(dtype).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for name, shape, kind in tensors:
        w.write_tensor_data(tensor_data(name, shape, kind, s))
    w.close()


def llama_bin(arg):
    if arg:
        return Path(arg)
    out = subprocess.run([str(REPO / "bench/peers/build-llama-cpp.sh")], check=True, stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", nargs="*", metavar="SHAPE",
                        help=" ".join(SHAPES) + " (default: " + " ".join(DEFAULT_SHAPES) + ")")
    parser.add_argument("--out-dir", type=Path, default=CACHE / "random")
    parser.add_argument("--keep-f16", action="store_true", help="keep the F16 file beside the Q4_K_M one")
    parser.add_argument("--llama-bin", help="directory of llama.cpp's llama-quantize (default: build-llama-cpp.sh's)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    if unknown := [s for s in args.shapes if s not in SHAPES]:
        parser.error(f"unknown shape {unknown[0]!r}: the shapes are {', '.join(SHAPES)}")
    quantize = llama_bin(args.llama_bin) / "llama-quantize"
    if not quantize.exists():
        sys.exit(f"{quantize} is missing: run bench/peers/build-llama-cpp.sh")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for shape in args.shapes or DEFAULT_SHAPES:
        s = SHAPES[shape]
        f16 = args.out_dir / f"{shape}-random-f16.gguf"
        out = args.out_dir / f"{shape}-random-q4_k_m.gguf"
        print(f"{shape}: writing {f16}", flush=True)
        write_f16(s, f16)
        run = subprocess.run([str(quantize), str(f16), str(out), "Q4_K_M", str(args.threads)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:  # it logs every tensor: show the end only
            sys.exit(f"{quantize} failed ({run.returncode}):\n" + "\n".join(run.stdout.splitlines()[-20:]))
        if not args.keep_f16:
            f16.unlink()
        print(f"{shape}: {out} ({out.stat().st_size / 2**20:.0f} MiB)", flush=True)


if __name__ == "__main__":
    main()
