#!/usr/bin/env python3
"""Writes fixtures/dequant_reference.json: reference dequantizations from the
official gguf-py package (llama.cpp's gguf.quants.dequantize), which the C++
dequantization tests (dequantize_test.cpp, gguf_model_test.cpp) must match.

  cases   deterministic random blocks of every type kvframe dequantizes, with
          the fp16 scale fields set to finite values of sensible magnitude
          (plus a zero and a subnormal scale), and the floats gguf-py gives
  model   samples of a few tensors of the default model
          (SmolLM2-135M-Instruct.Q4_1.gguf), when the model is present
  gemma3_model
          the same for Gemma 3 270M (gemma-3-270m-q4_k_m.gguf: Q5_0, Q4_K,
          Q6_K and F32 tensors), when that file is present

Floats are stored as their IEEE-754 bit patterns (uint32), so the comparison
is exact. Regenerate (from the repository root):

  python3 -m venv /tmp/refenv
  /tmp/refenv/bin/pip install gguf numpy
  scripts/fetch-model.sh   # optional: the model samples
  /tmp/refenv/bin/python tests/runtime/gguf/make_dequant_fixture.py [MODEL_PATH [GEMMA_PATH]]

MODEL_PATH defaults to $KVFRAME_MODEL, else $KVFRAME_MODELS or
~/.cache/kvframe/models, + /SmolLM2-135M-Instruct.Q4_1.gguf. GEMMA_PATH
defaults to $KVFRAME_MODELS or ~/.cache/kvframe/models, +
/gemma-3-270m-q4_k_m.gguf (scripts/fetch-model.sh gemma3-270m puts it there).
"""
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGML_QUANT_SIZES, GGUFReader
from gguf.quants import dequantize

SEED = 20241121
OUT = Path(__file__).resolve().parent / "fixtures" / "dequant_reference.json"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
MODEL_TENSORS = ["token_embd.weight", "blk.0.attn_q.weight", "blk.29.ffn_down.weight",
                 "output_norm.weight"]
# Small enough to dequantize whole; Q5_0 (attn_q, attn_k, ffn_up), Q4_K, Q6_K, F32.
GEMMA_TENSORS = ["blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.17.ffn_up.weight",
                 "blk.0.attn_output.weight", "blk.0.ffn_down.weight", "blk.0.attn_q_norm.weight"]

# Byte offsets of fp16 scale fields in each block, and the range drawn for
# each: (offset, low, high).
SCALE_FIELDS = {
    T.Q4_0: [(0, -0.05, 0.05)],
    T.Q4_1: [(0, 0.0, 0.02), (2, -0.2, 0.2)],
    T.Q8_0: [(0, -0.01, 0.01)],
    T.Q4_K: [(0, 0.0, 0.005), (2, 0.0, 0.005)],
    T.Q5_K: [(0, 0.0, 0.005), (2, 0.0, 0.005)],
    T.Q6_K: [(208, -0.01, 0.01)],
    T.Q5_0: [(0, -0.05, 0.05)],
    T.Q5_1: [(0, 0.0, 0.02), (2, -0.2, 0.2)],
    T.Q2_K: [(80, 0.0, 0.005), (82, 0.0, 0.005)],   # after scales[16], qs[64]
    T.Q3_K: [(108, -0.005, 0.005)],                 # after hmask[32], qs[64], scales[12]
}
BLOCKS = {T.Q4_0: 16, T.Q4_1: 16, T.Q8_0: 16, T.Q4_K: 4, T.Q5_K: 4, T.Q6_K: 4,
          T.Q5_0: 16, T.Q5_1: 16, T.Q2_K: 4, T.Q3_K: 4}
# Types added after the first fixture draw from their own generator, seeded
# from SEED and the type, so the cases above keep their bytes.
SEPARATELY_SEEDED = [T.Q5_0, T.Q5_1, T.Q2_K, T.Q3_K]

F16_SPECIALS = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF,
                0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7D01, 0xFFFF, 0x3555]
BF16_SPECIALS = [0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x7F7F, 0x7F80,
                 0xFF80, 0x7FC0, 0x7FA1, 0xFFFF]


def float_bits(values):
    return np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).tolist()


def quantized_case(rng, qtype):
    block_size, type_size = GGML_QUANT_SIZES[qtype]
    n_blocks = BLOCKS[qtype]
    blocks = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
    for offset, low, high in SCALE_FIELDS[qtype]:
        scales = rng.uniform(low, high, size=n_blocks).astype(np.float16)
        scales[0] = 0.0                                 # a zero scale
        scales[1] = np.uint16(3).view(np.float16)       # a subnormal scale
        blocks[:, offset:offset + 2] = scales.view(np.uint8).reshape(n_blocks, 2)
    data = blocks.reshape(-1)
    return case(qtype, data, dequantize(data, qtype), n_blocks * block_size)


def float_case(rng, qtype, specials):
    random_bits = rng.integers(0, 1 << 16, size=240, dtype=np.uint16)  # every exponent
    bits = np.concatenate([np.array(specials, dtype=np.uint16), random_bits])
    data = bits.view(np.uint8)
    return case(qtype, data, dequantize(data, qtype), len(bits))


def f32_case(rng):
    values = np.concatenate([rng.normal(0, 1, 60).astype(np.float32),
                             np.array([0.0, -0.0, np.inf, 1e-40], dtype=np.float32)])
    data = values.view(np.uint8)
    return case(T.F32, data, dequantize(data, T.F32), len(values))


def case(qtype, data, expected, n_elements):
    expected = np.asarray(expected, dtype=np.float32).reshape(-1)
    assert expected.size == n_elements, (qtype.name, expected.size)
    return {"type": qtype.name, "ggml_type": int(qtype), "n_elements": n_elements,
            "data_hex": bytes(data).hex(), "expected_f32_bits": float_bits(expected)}


def model_path():
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    if os.environ.get("KVFRAME_MODEL"):
        return Path(os.environ["KVFRAME_MODEL"])
    models = os.environ.get("KVFRAME_MODELS") or Path.home() / ".cache" / "kvframe" / "models"
    return Path(models) / MODEL_FILE


def gemma_path():
    if len(sys.argv) > 2:
        return Path(sys.argv[2])
    models = os.environ.get("KVFRAME_MODELS") or Path.home() / ".cache" / "kvframe" / "models"
    return Path(models) / GEMMA_FILE


def file_identity(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return {"size": path.stat().st_size, "sha256": digest.hexdigest()}


def model_samples(path, names):
    """32 consecutive values at the start, middle and end of a few tensors."""
    reader = GGUFReader(path)
    tensors = {t.name: t for t in reader.tensors}
    samples = []
    for name in names:
        t = tensors[name]
        values = dequantize(t.data, t.tensor_type).reshape(-1)
        for start in [0, values.size // 2 // 32 * 32, values.size - 32]:
            samples.append({"tensor": name, "type": t.tensor_type.name, "start": int(start),
                            "expected_f32_bits": float_bits(values[start:start + 32])})
    return {"file": path.name, "samples": samples}


def main():
    rng = np.random.default_rng(SEED)
    cases = [f32_case(rng), float_case(rng, T.F16, F16_SPECIALS),
             float_case(rng, T.BF16, BF16_SPECIALS)]
    cases += [quantized_case(rng, q) for q in [T.Q8_0, T.Q4_0, T.Q4_1, T.Q4_K, T.Q5_K, T.Q6_K]]
    cases += [quantized_case(np.random.default_rng([SEED, int(q)]), q) for q in SEPARATELY_SEEDED]
    fixture = {"generated_by": "tests/runtime/gguf/make_dequant_fixture.py", "cases": cases}
    path = model_path()
    if path.exists():
        fixture["model"] = model_samples(path, MODEL_TENSORS)
    else:
        print(f"note: {path} not found; writing no model samples", file=sys.stderr)
    path = gemma_path()
    if path.exists():
        fixture["gemma3_model"] = {**model_samples(path, GEMMA_TENSORS), **file_identity(path)}
    else:
        print(f"note: {path} not found; writing no Gemma 3 samples", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w") as f:  # one case per line keeps diffs readable
        f.write(json.dumps(fixture, separators=(",", ":")).replace('{"type"', '\n{"type"')
                .replace('{"tensor"', '\n{"tensor"') + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
