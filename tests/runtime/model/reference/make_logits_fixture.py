#!/usr/bin/env python3
"""Reference logits for kvframe's default model, from Hugging Face transformers.

Writes tests/runtime/model/fixtures/smollm2_logits.bin: for each prompt in
prompts/, the token ids, the top-16 logits at every position, all logits at the
last position and a 16-token greedy continuation, as computed by transformers
in fp32 on the CPU from the same GGUF file the C++ runtime loads. The C++ test
(tests/runtime/model/logits_fixture.h reads the file; its header documents the
format) feeds the stored ids to kvframe's model and compares.

Model: SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-model.sh). transformers
dequantizes every tensor to fp32 with gguf-py and undoes the GGUF converter's
Q/K row permutation; before computing anything this script checks, tensor by
tensor, that the loaded parameters are bit-identical to gguf-py's dequantized
GGUF tensors under the mapping in GGUF_TO_HF (q/k un-permuted), so a change of
transformers' GGUF loader cannot silently change the reference.

Prompts (prompts/; a file's text is the prompt, less one trailing newline):
  chat_npc       chat_npc.txt is a user message to a game NPC, rendered with the
                 model's own chat template (ChatML, add_generation_prompt=True;
                 the template adds its default system message)
  prose_en       English prose, ~150 tokens
  code_lua       Lua game code, ~150 tokens
  multilingual   accents, CJK, Cyrillic, emoji, digits, ~100 tokens
  gamecore_2k    a minified gamecore JSON of 1,800..2,300 tokens, cut from a
                 frame of kvframe's MOBA generator (see --gamecore-from)
Token ids come from the model's Hugging Face tokenizer (built from the GGUF).
No BOS token is added: the GGUF says tokenizer.ggml.add_bos_token = false, and
the script checks that the tokenizer's default encoding adds nothing.

Regenerate (CPU only, about two minutes; deterministic: the same inputs, package
versions and --threads give a byte-identical file):
  python3 -m venv /tmp/refenv
  /tmp/refenv/bin/pip install torch transformers accelerate gguf numpy
  /tmp/refenv/bin/python tests/runtime/model/reference/make_logits_fixture.py \
      --model ~/.cache/kvframe/models/SmolLM2-135M-Instruct.Q4_1.gguf

Rebuild prompts/gamecore_2k.json (only when changing it; the fixture must then
be regenerated too):
  build/tools/kvframe-stream -n 4 --frame-kb 64 --seed 1 --write /tmp/moba
  /tmp/refenv/bin/python tests/runtime/model/reference/make_logits_fixture.py \
      --gamecore-from /tmp/moba/frame_0003.json
"""

import argparse
import json
import os
import re
import struct
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
PROMPT_DIR = HERE / "prompts"
DEFAULT_OUT = HERE.parent / "fixtures" / "smollm2_logits.bin"
DEFAULT_MODEL = Path.home() / ".cache/kvframe/models/SmolLM2-135M-Instruct.Q4_1.gguf"

# (name stored in the fixture, file under prompts/, how the text becomes ids)
PROMPTS = [
    ("chat_npc", "chat_npc.txt", "chat"),
    ("prose_en", "prose_en.txt", "text"),
    ("code_lua", "code_lua.txt", "text"),
    ("multilingual", "multilingual.txt", "text"),
    ("gamecore_2k", "gamecore_2k.json", "text"),
]

FIXTURE_MAGIC = b"KVLG"
FIXTURE_VERSION = 1
NEAR_TIE = 1e-3  # top1 - top2 below this: an fp32 implementation may pick either

GAMECORE_TOKENS = (1800, 2300)  # allowed token count of gamecore_2k.json

# GGUF tensor name -> transformers parameter name ("{i}" is the layer index).
# lm_head is tied to model.embed_tokens.weight (the GGUF has no output.weight).
GGUF_TO_HF = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "blk.{i}.attn_norm.weight": "model.layers.{i}.input_layernorm.weight",
    "blk.{i}.attn_q.weight": "model.layers.{i}.self_attn.q_proj.weight",
    "blk.{i}.attn_k.weight": "model.layers.{i}.self_attn.k_proj.weight",
    "blk.{i}.attn_v.weight": "model.layers.{i}.self_attn.v_proj.weight",
    "blk.{i}.attn_output.weight": "model.layers.{i}.self_attn.o_proj.weight",
    "blk.{i}.ffn_norm.weight": "model.layers.{i}.post_attention_layernorm.weight",
    "blk.{i}.ffn_gate.weight": "model.layers.{i}.mlp.gate_proj.weight",
    "blk.{i}.ffn_up.weight": "model.layers.{i}.mlp.up_proj.weight",
    "blk.{i}.ffn_down.weight": "model.layers.{i}.mlp.down_proj.weight",
}


def log(message):
    print(message, file=sys.stderr, flush=True)


def load_tokenizer(model_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_path.parent), gguf_file=model_path.name)


def read_prompt(file_name):
    text = (PROMPT_DIR / file_name).read_text(encoding="utf-8")
    return text[:-1] if text.endswith("\n") else text


def encode(tokenizer, kind, text):
    """Token ids of one prompt, exactly as the C++ test will feed them."""
    if kind == "chat":
        messages = [{"role": "user", "content": text}]
        rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tokenizer(rendered, add_special_tokens=False)["input_ids"]
        # The template's own tokenization must agree with encoding its text.
        direct = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        if not isinstance(direct, list):  # a BatchEncoding in some versions
            direct = direct["input_ids"]
        assert list(direct) == ids, "apply_chat_template(tokenize=True) differs from encoding its text"
        assert rendered.endswith("<|im_start|>assistant\n"), rendered[-40:]
    else:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    # add_bos_token is false for this model: the default encoding adds no BOS/EOS.
    assert tokenizer(text)["input_ids"] == tokenizer(text, add_special_tokens=False)["input_ids"]
    return ids


def unpermute_qk(w, n_head):
    """Undoes convert_hf_to_gguf.py's LlamaModel.permute on the rows of a Q or K
    weight: GGUF stores each head's rotary pairs as (0, d/2), (1, d/2+1), ...
    interleaved ((0,1), (2,3), ...); transformers wants them split in halves."""
    rows, dim = w.shape
    head_dim = rows // n_head
    return w.reshape(n_head, head_dim // 2, 2, dim).transpose(0, 2, 1, 3).reshape(rows, dim)


def check_weights(model, model_path):
    """Every GGUF tensor, dequantized by gguf-py, must equal (bit for bit) the
    transformers parameter GGUF_TO_HF maps it to, with Q/K rows un-permuted.
    Returns a short report of what was checked."""
    import gguf

    reader = gguf.GGUFReader(str(model_path))
    config = model.config
    heads = {"attn_q": config.num_attention_heads, "attn_k": config.num_key_value_heads}
    params = dict(model.named_parameters())
    lm_head = model.get_output_embeddings().weight
    assert lm_head.data_ptr() == params["model.embed_tokens.weight"].data_ptr(), "lm_head not tied"

    matched = set()
    permuted_differs = []
    for tensor in reader.tensors:
        layer = re.match(r"blk\.(\d+)\.", tensor.name)
        key = re.sub(r"^blk\.\d+\.", "blk.{i}.", tensor.name)
        if key not in GGUF_TO_HF:
            raise SystemExit(f"weight check: no mapping for GGUF tensor {tensor.name}")
        hf_name = GGUF_TO_HF[key].format(i=layer.group(1) if layer else "")
        w = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        kind = key.split(".")[2] if layer else ""
        if kind in heads:
            permuted_differs.append(not np.array_equal(w, params[hf_name].detach().numpy()))
            w = unpermute_qk(w, heads[kind])
        hf = params[hf_name].detach().numpy()
        if w.shape != hf.shape or not np.array_equal(w, hf):
            raise SystemExit(f"weight check: {tensor.name} != {hf_name}")
        matched.add(hf_name)
    unmatched = set(params) - matched
    if unmatched:
        raise SystemExit(f"weight check: parameters with no GGUF tensor: {sorted(unmatched)}")
    assert all(permuted_differs), "a Q/K tensor equals transformers' weight without un-permuting"
    return (f"weight check: {len(reader.tensors)} GGUF tensors == {len(params)} parameters bit for bit "
            f"(q/k rows un-permuted; {len(permuted_differs)} q/k tensors differ as stored)")


def top_k_rows(logits, k):
    """Top-k ids and logits per row, descending; equal logits in id order."""
    ids = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
    return ids.astype(np.int32), np.take_along_axis(logits, ids, axis=-1)


def run_prompt(model, tokenizer, ids, top_k, n_gen):
    from transformers import GenerationConfig

    input_ids = torch.tensor([ids], dtype=torch.long)
    with torch.no_grad():
        logits = model(input_ids=input_ids, use_cache=False).logits[0].float().numpy()
        # Plain greedy decoding; a fresh config so no model default (repetition
        # penalty, temperature, ...) applies. Stops early only at EOS.
        config = GenerationConfig(do_sample=False, num_beams=1, max_new_tokens=n_gen,
                                  eos_token_id=tokenizer.eos_token_id,
                                  pad_token_id=tokenizer.eos_token_id,
                                  output_logits=True, return_dict_in_generate=True)
        out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids),
                             generation_config=config)
    greedy = out.sequences[0, len(ids):].tolist()
    top_ids, top_logits = top_k_rows(logits, top_k)
    if greedy and greedy[0] != int(top_ids[-1, 0]):
        raise SystemExit("generate()'s first token is not the forward pass's argmax")
    step_logits = np.stack([step[0].float().numpy() for step in out.logits])
    return logits, top_ids, top_logits, greedy, step_logits


def margins(logits):
    """top1 - top2 per row."""
    part = -np.partition(-logits, 1, axis=-1)
    return part[:, 0] - part[:, 1]


def write_fixture(path, n_vocab, top_k, records):
    out = bytearray()
    out += FIXTURE_MAGIC + struct.pack("<IIII", FIXTURE_VERSION, len(records), n_vocab, top_k)
    for name, ids, top_ids, top_logits, last_logits, greedy in records:
        name_bytes = name.encode("utf-8")
        out += struct.pack("<I", len(name_bytes)) + name_bytes
        out += struct.pack("<I", len(ids)) + np.asarray(ids, dtype="<i4").tobytes()
        for pos in range(len(ids)):
            out += top_ids[pos].astype("<i4").tobytes() + top_logits[pos].astype("<f4").tobytes()
        out += np.asarray(last_logits, dtype="<f4").tobytes()
        out += struct.pack("<I", len(greedy)) + np.asarray(greedy, dtype="<i4").tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    return len(out)


def make_fixture(args):
    import transformers
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(args.threads)
    model_path = args.model.expanduser().resolve()
    started = time.perf_counter()
    tokenizer = load_tokenizer(model_path)
    model = AutoModelForCausalLM.from_pretrained(
        str(model_path.parent), gguf_file=model_path.name, dtype=torch.float32,
        attn_implementation="eager")
    model.eval()
    load_s = time.perf_counter() - started
    config = model.config
    log(f"loaded in {load_s:.1f} s: {config.num_hidden_layers} layers, dim {config.hidden_size}, "
        f"{config.num_attention_heads}/{config.num_key_value_heads} heads, vocab {config.vocab_size}, "
        f"rope {getattr(config, 'rope_parameters', None) or config.rope_theta}, "
        f"rms eps {config.rms_norm_eps!r}")
    log(check_weights(model, model_path))

    records = []
    compute_s = 0.0
    for name, file_name, kind in PROMPTS:
        ids = encode(tokenizer, kind, read_prompt(file_name))
        if name == "gamecore_2k" and not GAMECORE_TOKENS[0] <= len(ids) <= GAMECORE_TOKENS[1]:
            raise SystemExit(f"gamecore_2k has {len(ids)} tokens, outside {GAMECORE_TOKENS}")
        started = time.perf_counter()
        logits, top_ids, top_logits, greedy, step_logits = run_prompt(
            model, tokenizer, ids, args.top_k, args.n_gen)
        seconds = time.perf_counter() - started
        compute_s += seconds
        records.append((name, ids, top_ids, top_logits, logits[-1], greedy))

        prompt_margins = margins(logits)
        step_margins = margins(step_logits)
        worst = int(np.argmin(prompt_margins))
        log(f"{name}: {len(ids)} tokens, {seconds:.1f} s; top1-top2 min {prompt_margins[worst]:.5f} "
            f"at position {worst}, {int((prompt_margins < NEAR_TIE).sum())} positions < {NEAR_TIE}; "
            f"greedy steps min {step_margins.min():.5f}, {int((step_margins < NEAR_TIE).sum())} < {NEAR_TIE}; "
            f"step-0 logits vs forward max |diff| {np.abs(step_logits[0] - logits[-1]).max():.2e}")
        log(f"  greedy {greedy} = {tokenizer.decode(greedy)!r}")

    size = write_fixture(args.out, config.vocab_size, args.top_k, records)
    log(f"wrote {args.out} ({size} bytes); transformers: load {load_s:.1f} s, "
        f"forward + generate {compute_s:.1f} s on {args.threads} threads "
        f"(torch {torch.__version__}, transformers {transformers.__version__})")


def make_gamecore(args):
    """Cuts prompts/gamecore_2k.json from a kvframe-stream frame: the match
    header (less match.server_time_ms, hidden by examples/moba/moba.rules.json)
    and a few of each entity kind, so the document stays realistic in shape."""
    with open(args.gamecore_from, encoding="utf-8") as f:
        frame = json.load(f)  # dicts keep the frame's key order
    match = {k: v for k, v in frame["match"].items() if k != "server_time_ms"}
    state = {
        "match": match,
        "heroes": frame["heroes"][:1],
        "units": frame["units"][:2],
        "towers": frame["towers"][:4],
        "events": frame["events"][-4:],
    }
    text = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
    n_tokens = len(load_tokenizer(args.model.expanduser())(text, add_special_tokens=False)["input_ids"])
    if not GAMECORE_TOKENS[0] <= n_tokens <= GAMECORE_TOKENS[1]:
        raise SystemExit(f"cut has {n_tokens} tokens, outside {GAMECORE_TOKENS}")
    (PROMPT_DIR / "gamecore_2k.json").write_text(text + "\n", encoding="utf-8")
    log(f"wrote {PROMPT_DIR / 'gamecore_2k.json'}: {len(text)} bytes, {n_tokens} tokens")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the GGUF file")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture to write")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--top-k", type=int, default=16, help="logits kept per position")
    parser.add_argument("--n-gen", type=int, default=16, help="greedy tokens per prompt")
    parser.add_argument("--gamecore-from", type=Path,
                        help="rebuild prompts/gamecore_2k.json from this frame and exit")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.gamecore_from:
        make_gamecore(args)
    else:
        make_fixture(args)


if __name__ == "__main__":
    main()
