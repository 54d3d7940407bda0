#!/usr/bin/env python3
"""Writes a reference fixture of llama.cpp's answers on one GGUF file, which
model_llama_cpp_test.cpp holds kvframe to (docs/models.md says the tolerances):

  prompts        the reference prompts (prompts/) tokenized by llama.cpp with
                 BOS, cut to 64, 256, 1,024 and 2,048 tokens; for every
                 position llama.cpp's top 5 tokens and logits (fp32 KV cache)
  generations    32 greedy tokens after the 64- and 1,024-token prompts
  tokenization   the tokenizer fixture strings (tokenizer/fixtures/strings.json)
                 as llama.cpp encodes them (no BOS, special tokens parsed)

llama.cpp is the peer bench/peers/build-llama-cpp.sh builds (libllama), driven
through the llama-cpp-python source it comes from. Regenerate (from the
repository root; the venv needs numpy, diskcache, jinja2, typing_extensions):

  bin=$(bench/peers/build-llama-cpp.sh)
  LLAMA_CPP_LIB_PATH=$bin PYTHONPATH=$bin/../../../.. \\
    /tmp/refenv/bin/python tests/runtime/model/reference/make_llama_cpp_fixture.py \\
    "$(scripts/fetch-model.sh gemma3-270m)" tests/runtime/model/fixtures/gemma3_270m_llama_cpp.json
"""
import argparse
import json
from pathlib import Path

import numpy as np
from llama_cpp import Llama

HERE = Path(__file__).resolve().parent
PROMPTS = [("chat_npc.txt", 64), ("prose_en.txt", 256), ("code_lua.txt", 1024), ("gamecore_2k.json", 2048)]
GENERATE_AFTER = {64, 1024}
GENERATED = 32
TOP = 5
GGML_F32 = 0


def prompt_ids(llm, name, length):
    text = (HERE / "prompts" / name).read_text(encoding="utf-8")
    ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    while len(ids) < length:  # a short text repeats until it is long enough
        ids += llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    return ids[:length]


def logits_of(llm, ids):
    llm.reset()
    llm.eval(ids)
    return np.array(llm.scores[: len(ids)], dtype=np.float32)


def greedy(llm, ids):
    llm.reset()
    llm.eval(ids)
    out = []
    for _ in range(GENERATED):
        token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        out.append(token)
        llm.eval([token])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    # An fp32 KV cache: llama.cpp's default fp16 one would add its own rounding.
    llm = Llama(model_path=args.model, n_ctx=2048 + GENERATED, n_batch=512, logits_all=True,
                n_threads=args.threads, type_k=GGML_F32, type_v=GGML_F32, verbose=False)
    prompts = []
    for name, length in PROMPTS:
        ids = prompt_ids(llm, name, length)
        scores = logits_of(llm, ids)
        top = np.argsort(-scores, axis=1)[:, :TOP]
        entry = {"name": name, "ids": ids, "top_ids": top.tolist(),
                 "top_logits": np.round(np.take_along_axis(scores, top, axis=1), 3).tolist()}
        if length in GENERATE_AFTER:
            entry["greedy"] = greedy(llm, ids)
        prompts.append(entry)
        print(f"{name}: {length} tokens", flush=True)
    strings = json.loads((HERE.parent.parent / "tokenizer" / "fixtures" / "strings.json").read_text(encoding="utf-8"))["texts"]
    tokenization = [{"text": s, "ids": llm.tokenize(s.encode("utf-8"), add_bos=False, special=True)}
                    for s in strings]
    Path(args.out).write_text(json.dumps({"model": Path(args.model).name, "prompts": prompts,
                                          "tokenization": tokenization}, ensure_ascii=False, separators=(",", ":")),
                              encoding="utf-8")


if __name__ == "__main__":
    main()
