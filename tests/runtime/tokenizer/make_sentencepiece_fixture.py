#!/usr/bin/env python3
"""Regenerates the SentencePiece ('llama' vocabulary) reference fixtures.

    python3 -m venv /tmp/refenv
    /tmp/refenv/bin/pip install transformers tokenizers gguf sentencepiece torch
    /tmp/refenv/bin/python tests/runtime/tokenizer/make_sentencepiece_fixture.py

Trains a small SentencePiece BPE model (1500 pieces, byte_fallback, Llama 2's
normalization settings: identity rules, dummy prefix, whitespace kept) on the
fixture strings, writes it as a vocabulary-only GGUF (tokenizer.ggml.model =
"llama", tokens, scores, token types) and records the ids the sentencepiece
library gives each fixture string. It also loads the GGUF with transformers
(LlamaTokenizerFast via gguf_file=) and reports how often that agrees.

Writes into fixtures/:
  spm_bpe_1500.gguf              the vocabulary
  sentencepiece_reference.json   ids of every fixtures/strings.json string (sentencepiece, no bos)
"""

import json
import tempfile
from pathlib import Path

import gguf
import sentencepiece as spm

from fixture_strings import PROSE, CODE, fixture_strings

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GGUF_NAME = "spm_bpe_1500.gguf"

# sentencepiece piece kinds -> GGUF token types (llama.cpp's numbering).
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def train(workdir, strings):
    corpus = workdir / "corpus.txt"
    # Prose and code weigh more than the random mixes, as in a real corpus.
    lines = [line for s in strings + PROSE * 20 + CODE * 5 for line in s.split("\n") if line.strip()]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    prefix = workdir / "spm"
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(prefix), model_type="bpe", vocab_size=1500,
        byte_fallback=True, normalization_rule_name="identity", add_dummy_prefix=True,
        remove_extra_whitespaces=False, split_digits=True, allow_whitespace_only_pieces=True,
        character_coverage=0.9995, user_defined_symbols=["<sep>", "<|tool|>"],
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1, minloglevel=2)
    return spm.SentencePieceProcessor(model_file=str(prefix) + ".model")


def token_type(sp, i):
    if sp.IsUnknown(i):
        return UNKNOWN
    if sp.IsControl(i):
        return CONTROL
    if sp.IsByte(i):
        return BYTE
    if sp.IsUnused(i):
        return UNUSED
    # sentencepiece has no IsUserDefined; user symbols score 0 and are not normal pieces.
    if sp.IdToPiece(i) in ("<sep>", "<|tool|>"):
        return USER_DEFINED
    return NORMAL


def write_gguf(sp, path):
    writer = gguf.GGUFWriter(str(path), arch="llama")
    writer.add_tokenizer_model("llama")
    n = sp.GetPieceSize()
    writer.add_token_list([sp.IdToPiece(i) for i in range(n)])
    writer.add_token_scores([sp.GetScore(i) for i in range(n)])
    writer.add_token_types([token_type(sp, i) for i in range(n)])
    writer.add_unk_token_id(sp.unk_id())
    writer.add_bos_token_id(sp.bos_id())
    writer.add_eos_token_id(sp.eos_id())
    writer.add_add_space_prefix(True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def transformers_agreement(path, strings, expected):
    from transformers import AutoTokenizer
    try:
        hf = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    except Exception as e:  # noqa: BLE001 - reported, not fatal: sentencepiece is the reference
        return f"transformers could not load the GGUF: {e}"
    disagree = [s for s, ids in zip(strings, expected) if hf(s, add_special_tokens=False).input_ids != ids]
    return f"{len(disagree)} of {len(strings)} differ, e.g. {[d[:30] for d in disagree[:5]]}"


def main():
    strings = fixture_strings()
    with tempfile.TemporaryDirectory() as tmp:
        sp = train(Path(tmp), strings)
    FIXTURES.mkdir(exist_ok=True)
    path = FIXTURES / GGUF_NAME
    write_gguf(sp, path)
    ids = [sp.encode(s, out_type=int) for s in strings]
    agreement = transformers_agreement(path, strings, ids)
    print(f"sentencepiece: {len(strings)} strings, {sum(map(len, ids))} tokens; transformers: {agreement}")
    out = FIXTURES / "sentencepiece_reference.json"
    out.write_text(json.dumps({
        "about": f"Token ids (one list per strings.json text) from the sentencepiece library (bpe, byte_fallback) for {GGUF_NAME}, no bos. "
                 "Regenerate with make_sentencepiece_fixture.py.",
        "sentencepiece_version": spm.__version__,
        "transformers_agreement": agreement,
        "ids": ids,
    }, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size} bytes), {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
