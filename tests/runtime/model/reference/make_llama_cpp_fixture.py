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
repository root; the venv needs numpy, diskcache, jinja2, typing_extensions, and
gguf for --random):

  bin=$(bench/peers/build-llama-cpp.sh)
  LLAMA_CPP_LIB_PATH=$bin PYTHONPATH=$bin/../../../.. \\
    /tmp/refenv/bin/python tests/runtime/model/reference/make_llama_cpp_fixture.py \\
    "$(scripts/fetch-model.sh gemma3-270m)" tests/runtime/model/fixtures/gemma3_270m_llama_cpp.json

With --random (the random-weight files of scripts/random-model-gguf.py, whose
text is meaningless) a smaller fixture:

  prompts        random token ids drawn from the whole vocabulary with a fixed
                 seed, 64 and 768 long (768 > Gemma 3's 512-token sliding
                 window), llama.cpp's top 5 at every position
  decode         llama.cpp's 16 greedy tokens after the 64-token prompt, fed
                 back one at a time, with its top 5 after each: kvframe's
                 decode step is compared on the same tokens, so a near-tie
                 cannot make the two sequences part
  tokenization   the first tokenizer fixture strings (4,000 bytes): the
                 synthetic vocabularies load and encode alike on both sides
  exact_*        llama.cpp again, on a copy of the file with every tensor
                 dequantized to F32 by gguf-py (made in a temporary folder
                 beside the model, then removed): the same weights without
                 the 8-bit rounding of activations llama.cpp's quantized
                 matmuls do. Per position its logits at the top 5 ids above
                 (exact_logits), its own top-1 id and the gap to its second
                 (exact_top1, exact_gap). That rounding moves the logits by
                 tenths (and flips near ties); without it llama.cpp and an
                 fp32 numpy forward agree to 1e-4, so kvframe is held to this
                 one tightly (model_llama_cpp_test.cpp).

  for m in qwen3-0.6b llama3.2-1b gemma3-1b; do
    LLAMA_CPP_LIB_PATH=$bin PYTHONPATH=$bin/../../../.. \\
      /tmp/refenv/bin/python tests/runtime/model/reference/make_llama_cpp_fixture.py --random \\
      ~/.cache/kvframe/models/random/$m-random-q4_k_m.gguf tests/runtime/model/fixtures/${m}_random_llama_cpp.json
  done

--n-ctx sets the context llama.cpp is configured with (written as "n_ctx",
which the test loads kvframe for) and --lengths the random prompts'. Past
Phi-4-mini's original 4,096 tokens llama.cpp rotates with the long LongRoPE
factors; the long fixture runs a prompt past it too:

  LLAMA_CPP_LIB_PATH=$bin PYTHONPATH=$bin/../../../.. \\
    /tmp/refenv/bin/python tests/runtime/model/reference/make_llama_cpp_fixture.py --random \\
    --n-ctx 4608 --lengths 64,4160 ~/.cache/kvframe/models/random/phi4-mini-4l-random-q4_k_m.gguf \\
    tests/runtime/model/fixtures/phi4-mini-4l_long_random_llama_cpp.json
"""
import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from llama_cpp import Llama

HERE = Path(__file__).resolve().parent
PROMPTS = [("chat_npc.txt", 64), ("prose_en.txt", 256), ("code_lua.txt", 1024), ("gamecore_2k.json", 2048)]
GENERATE_AFTER = {64, 1024}
GENERATED = 32
TOP = 5
GGML_F32 = 0
RANDOM_LENGTHS = [64, 768]
RANDOM_SEED = 54  # issue 54
RANDOM_DECODED = 16
RANDOM_TOKENIZED_BYTES = 4000


def prompt_ids(llm, name, length):
    text = (HERE / "prompts" / name).read_text(encoding="utf-8")
    ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    while len(ids) < length:  # a short text repeats until it is long enough
        ids += llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    return ids[:length]


def logits_of(llm, ids):
    """llama.cpp's logits at every position: a view of its scores, valid until the next eval."""
    llm.reset()
    llm.eval(ids)
    return np.asarray(llm.scores[: len(ids)], dtype=np.float32)


def by_rows(scores, f, rows=256):
    """f over row blocks of scores, stacked: a whole-matrix sort of a long
    prompt's logits (vocabularies of 200K) would take tens of GB."""
    return np.concatenate([f(scores[i : i + rows]) for i in range(0, len(scores), rows)])


def greedy(llm, ids):
    llm.reset()
    llm.eval(ids)
    out = []
    for _ in range(GENERATED):
        token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        out.append(token)
        llm.eval([token])
    return out


def top_of(scores):
    top = by_rows(scores, lambda block: np.argsort(-block, axis=1)[:, :TOP])
    return {"top_ids": top.tolist(), "top_logits": np.round(np.take_along_axis(scores, top, axis=1), 3).tolist()}


def random_fixture(llm, lengths):
    """Random ids, llama.cpp's top 5 at every position, and its greedy decode steps."""
    n_vocab = llm.n_vocab()
    prompts = []
    for length in lengths:
        ids = np.random.default_rng([RANDOM_SEED, length]).integers(0, n_vocab, size=length).tolist()
        entry = {"name": f"random_{length}", "ids": ids, **top_of(logits_of(llm, ids))}
        if length == lengths[0]:
            fed, tops = [], []
            for _ in range(RANDOM_DECODED):  # llm holds the prompt: eval() appends one token at a time
                fed.append(int(np.argmax(llm.scores[llm.n_tokens - 1])))
                llm.eval([fed[-1]])
                tops.append(np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32))
            entry["decode"] = {"ids": fed, **top_of(np.stack(tops))}
        prompts.append(entry)
        print(f"random_{length}: {length} tokens", flush=True)
    return prompts


def f32_copy(model, out):
    """The GGUF at `model` with every tensor dequantized to F32 (gguf-py's dequantize), metadata as is."""
    import gguf
    from gguf.quants import dequantize

    reader = gguf.GGUFReader(model)
    writer = gguf.GGUFWriter(out, reader.fields["general.architecture"].contents())
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        vtype = field.types[0]
        if key == "general.file_type":
            value = int(gguf.LlamaFileType.ALL_F32)
        elif vtype == gguf.GGUFValueType.ARRAY:
            strings = field.types[1] == gguf.GGUFValueType.STRING
            value = [bytes(field.parts[i]) if strings else field.parts[i].tolist()[0] for i in field.data]
        elif vtype == gguf.GGUFValueType.STRING:
            value = bytes(field.parts[field.data[0]])
        else:
            value = field.parts[field.data[0]].tolist()[0]
        writer.add_key_value(key, value, vtype, sub_type=field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None)
    shapes = [[int(d) for d in reversed(t.shape)] for t in reader.tensors]
    for t, shape in zip(reader.tensors, shapes):
        writer.add_tensor_info(t.name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t, shape in zip(reader.tensors, shapes):
        writer.write_tensor_data(dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape))
    writer.close()


def add_exact(prompts, model, threads, n_ctx):
    """exact_logits / exact_top1 / exact_gap from llama.cpp on the F32 copy of `model`."""
    def exact(entry, scores):
        top2 = by_rows(scores, lambda block: -np.sort(-block, axis=1)[:, :2])
        entry["exact_logits"] = np.round(np.take_along_axis(scores, np.array(entry["top_ids"]), axis=1), 4).tolist()
        entry["exact_top1"] = scores.argmax(axis=1).tolist()
        entry["exact_gap"] = np.round(top2[:, 0] - top2[:, 1], 4).tolist()

    with tempfile.TemporaryDirectory(dir=Path(model).parent) as tmp:
        copy = str(Path(tmp) / "f32.gguf")
        f32_copy(model, copy)
        llm = Llama(model_path=copy, n_ctx=n_ctx, n_batch=512, logits_all=True, n_threads=threads,
                    type_k=GGML_F32, type_v=GGML_F32, verbose=False)
        for entry in prompts:
            exact(entry, logits_of(llm, entry["ids"]))
            if "decode" in entry:
                steps = []
                for token in entry["decode"]["ids"]:
                    llm.eval([token])
                    steps.append(np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32))
                exact(entry["decode"], np.stack(steps))
            print(f"{entry['name']}: F32 copy", flush=True)
        llm.close()


def tokenization_of(llm, limit=None):
    strings = json.loads((HERE.parent.parent / "tokenizer" / "fixtures" / "strings.json").read_text(encoding="utf-8"))["texts"]
    if limit is not None:
        kept, size = [], 0
        for s in strings:
            size += len(s.encode("utf-8"))
            if size > limit:
                break
            kept.append(s)
        strings = kept
    return [{"text": s, "ids": llm.tokenize(s.encode("utf-8"), add_bos=False, special=True)} for s in strings]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--random", action="store_true", help="random token ids (random-weight models)")
    parser.add_argument("--n-ctx", type=int, default=2048 + GENERATED, help="llama.cpp's context size")
    parser.add_argument("--lengths", default=",".join(map(str, RANDOM_LENGTHS)), help="--random prompts' lengths")
    args = parser.parse_args()
    # An fp32 KV cache: llama.cpp's default fp16 one would add its own rounding.
    llm = Llama(model_path=args.model, n_ctx=args.n_ctx, n_batch=512, logits_all=True,
                n_threads=args.threads, type_k=GGML_F32, type_v=GGML_F32, verbose=False)
    if args.random:
        # The file's size: the test refuses a file other than the one measured
        # (another llama.cpp's llama-quantize may choose another mix).
        fixture = {"model": Path(args.model).name, "model_bytes": Path(args.model).stat().st_size,
                   "n_ctx": args.n_ctx, "prompts": random_fixture(llm, [int(n) for n in args.lengths.split(",")]),
                   "tokenization": tokenization_of(llm, RANDOM_TOKENIZED_BYTES)}
        llm.close()  # one model in memory at a time
        add_exact(fixture["prompts"], args.model, args.threads, args.n_ctx)
        Path(args.out).write_text(json.dumps(fixture, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        return
    prompts = []
    for name, length in PROMPTS:
        ids = prompt_ids(llm, name, length)
        entry = {"name": name, "ids": ids, **top_of(logits_of(llm, ids))}
        if length in GENERATE_AFTER:
            entry["greedy"] = greedy(llm, ids)
        prompts.append(entry)
        print(f"{name}: {length} tokens", flush=True)
    tokenization = tokenization_of(llm)
    Path(args.out).write_text(json.dumps({"model": Path(args.model).name, "prompts": prompts,
                                          "tokenization": tokenization}, ensure_ascii=False, separators=(",", ":")),
                              encoding="utf-8")


if __name__ == "__main__":
    main()
