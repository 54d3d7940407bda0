#!/usr/bin/env python3
"""Regenerates the byte-level BPE reference fixtures from Hugging Face `tokenizers`.

    python3 -m venv /tmp/refenv
    /tmp/refenv/bin/pip install transformers tokenizers gguf sentencepiece torch
    /tmp/refenv/bin/python tests/runtime/tokenizer/make_tokenizer_fixture.py [MODEL.gguf]

MODEL.gguf defaults to kvframe's default model (SmolLM2-135M-Instruct.Q4_1.gguf,
found as tests/support/default_model.h does: $KVFRAME_MODEL, then
$KVFRAME_MODELS/, then ~/.cache/kvframe/models/; scripts/fetch-model.sh gets it).

The reference is `tokenizers` built from the vocabulary and merges in that file
with each model's own tokenizer.json configuration:
  smollm  Sequence[Digits(individual_digits), ByteLevel(use_regex)]   (SmolLM2)
  llama3  Sequence[Split(llama3 regex, isolated), ByteLevel], BPE ignore_merges (Llama 3)
  qwen2   NFC, Sequence[Split(qwen2 regex, isolated), ByteLevel]     (Qwen2 / Qwen2.5)
  gpt2    ByteLevel(use_regex)                                        (GPT-2)
It also loads the GGUF with transformers (AutoTokenizer gguf_file=) and reports
how often that agrees with the SmolLM2 reference (it ignores tokenizer.ggml.pre
and uses plain ByteLevel).

Writes into fixtures/:
  strings.json                  the strings (fixture_strings.py), which the other files index
  smollm2_reference.json        ids of every string, with and without special-token parsing
  pre_tokenizer_reference.json  piece lengths (bytes) of every string, per pre-tokenizer
  llama3_qwen2_reference.json   ids with the SmolLM2 vocabulary under Llama 3's and Qwen2's configs
"""

import json
import os
import sys
import tempfile
import unicodedata
from pathlib import Path

import gguf
import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers as pre

from fixture_strings import fixture_strings

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"

GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# The models' tokenizer.json pre-tokenizers.
PRE_TOKENIZERS = {
    "smollm": lambda: pre.Sequence([pre.Digits(individual_digits=True),
                                    pre.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)]),
    "llama3": lambda: pre.Sequence([pre.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
                                    pre.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)]),
    "qwen2": lambda: pre.Sequence([pre.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
                                   pre.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)]),
    "gpt2": lambda: pre.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
}


def default_model_path():
    if os.environ.get("KVFRAME_MODEL"):
        return os.environ["KVFRAME_MODEL"]
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if os.environ.get("KVFRAME_MODELS"):
        return os.path.join(os.environ["KVFRAME_MODELS"], name)
    return os.path.expanduser(f"~/.cache/kvframe/models/{name}")


def read_vocab(path):
    reader = gguf.GGUFReader(path)

    def strings(key):
        field = reader.fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    def ints(key):
        field = reader.fields[key]
        return [int(field.parts[i][0]) for i in field.data]

    tokens = strings("tokenizer.ggml.tokens")
    types = ints("tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in strings("tokenizer.ggml.merges")]
    return tokens, types, merges


def build_tokenizer(tokens, types, merges, pre_name):
    model = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges,
                       ignore_merges=(pre_name == "llama3"))
    tok = Tokenizer(model)
    if pre_name == "qwen2":
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = PRE_TOKENIZERS[pre_name]()
    tok.decoder = decoders.ByteLevel()
    # GGUF token type 3 (control) = HF special added token; 4 (user-defined) = non-special added token.
    tok.add_tokens([AddedToken(t, special=(ty == 3), normalized=False)
                    for t, ty in zip(tokens, types) if ty in (3, 4)])
    return tok


def encode_both(tok, text):
    """Ids with special tokens parsed (kvframe parse_special=true) and not."""
    tok.encode_special_tokens = False
    parsed = tok.encode(text, add_special_tokens=False).ids
    tok.encode_special_tokens = True
    plain = tok.encode(text, add_special_tokens=False).ids
    tok.encode_special_tokens = False
    return parsed, plain


def byte_length(piece):
    """Bytes a ByteLevel piece stands for: ByteLevel writes one character per byte."""
    return len(piece)


def write_json(name, payload):
    FIXTURES.mkdir(exist_ok=True)
    path = FIXTURES / name
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n",
                    encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


def smollm2_fixture(model_path, tokens, types, merges, strings):
    tok = build_tokenizer(tokens, types, merges, "smollm")
    cases, n_tokens = [], 0
    for s in strings:
        parsed, plain = encode_both(tok, s)
        case = {"ids": parsed}
        if plain != parsed:
            case["ids_plain"] = plain
        cases.append(case)
        n_tokens += len(parsed)

    # Cross-check: transformers' own GGUF loading of the same file.
    from transformers import AutoTokenizer
    with tempfile.TemporaryDirectory() as tmp:
        link = Path(tmp) / Path(model_path).name
        link.symlink_to(Path(model_path).resolve())
        hf = AutoTokenizer.from_pretrained(tmp, gguf_file=link.name)
        disagree = [s for s in strings if hf(s, add_special_tokens=False).input_ids != tok.encode(s).ids]
    print(f"smollm2: {len(cases)} strings, {n_tokens} tokens; transformers' GGUF loader disagrees on "
          f"{len(disagree)}: {[d[:40] for d in disagree[:5]]}")
    write_json("smollm2_reference.json", {
        "about": "SmolLM2-135M-Instruct token ids (one case per strings.json text) from HF tokenizers (Digits + ByteLevel, SmolLM2's tokenizer.json) "
                 "on the vocabulary and merges of the GGUF; ids_plain: special tokens not parsed, when different. "
                 "Regenerate with make_tokenizer_fixture.py.",
        "model": Path(model_path).name,
        "tokenizers_version": tokenizers.__version__,
        "transformers_gguf_loader_disagreements": len(disagree),
        "cases": cases,
    })


def pre_tokenizer_fixture(strings):
    splits = {}
    for name, make in PRE_TOKENIZERS.items():
        p = make()
        splits[name] = [[byte_length(piece) for piece, _ in p.pre_tokenize_str(s)] for s in strings]
    write_json("pre_tokenizer_reference.json", {
        "about": "Piece lengths in bytes from HF tokenizers' pre-tokenizers (each model's tokenizer.json config). "
                 "Regenerate with make_tokenizer_fixture.py.",
        "tokenizers_version": tokenizers.__version__,
        "pieces": splits,
    })


def llama3_qwen2_fixture(tokens, types, merges, strings):
    payload = {
        "about": "Token ids with the SmolLM2 vocabulary and merges under Llama 3's pre-tokenizer and BPE "
                 "ignore_merges, and under Qwen2's NFC + pre-tokenizer. nfc: the text is not NFC, which Qwen2 "
                 "normalizes and kvframe does not. Regenerate with make_tokenizer_fixture.py.",
        "tokenizers_version": tokenizers.__version__,
    }
    for name in ("llama3", "qwen2"):
        tok = build_tokenizer(tokens, types, merges, name)
        payload[name] = [tok.encode(s, add_special_tokens=False).ids for s in strings]
    payload["not_nfc"] = [i for i, s in enumerate(strings) if unicodedata.normalize("NFC", s) != s]
    print(f"llama3/qwen2: {len(strings)} strings; {len(payload['not_nfc'])} are not NFC")
    write_json("llama3_qwen2_reference.json", payload)


def main():
    model_path = sys.argv[1] if len(sys.argv) > 1 else default_model_path()
    tokens, types, merges = read_vocab(model_path)
    strings = fixture_strings()
    write_json("strings.json", {"about": "The fixture strings (fixture_strings.py); the *_reference.json files "
                                         "hold one entry per string, in this order.", "texts": strings})
    smollm2_fixture(model_path, tokens, types, merges, strings)
    pre_tokenizer_fixture(strings)
    llama3_qwen2_fixture(tokens, types, merges, strings)


if __name__ == "__main__":
    main()
