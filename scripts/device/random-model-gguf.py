#!/usr/bin/env python3
"""Write a random-weight GGUF of a llama model's shape from a metadata-only GGUF.

Training and serving speed do not depend on the weights' values, and the
default model (94 MiB) does not fit a GPU host's 64 MiB transfer:
gguf-metadata-only.py carries its metadata (hyperparameters, tokenizer, chat
template) and this script makes F16 weights of that shape on the host, or of
another Llama shape with --shape (scripts/model_shapes.py: llama3.1-8b,
llama3.2-3b, llama3.2-1b): its layers, widths, heads and RoPE base replace
the metadata's, the tokenizer and its vocabulary stay, and an untied shape
gets an output.weight of its own; --layers keeps the first N layers of it
(a check of the steps around a model, quick on a CPU). Stdlib only; the
values repeat a pool of N(0, 0.02) draws, enough for timing, useless for
answers.

usage: random-model-gguf.py [--shape NAME] [--layers N] METADATA.gguf OUT.gguf
"""
import argparse
import random
import struct

from importlib.machinery import SourceFileLoader
from pathlib import Path

meta = SourceFileLoader("meta", str(Path(__file__).with_name("gguf-metadata-only.py"))).load_module()
shapes = SourceFileLoader("shapes", str(Path(__file__).resolve().parent.parent / "model_shapes.py")).load_module()

F32, F16, ALIGN = 0, 1, 32


def read_metadata(path):
    buf = open(path, "rb").read()
    magic, version, _, n_kv = struct.unpack_from("<4sIQQ", buf, 0)
    pos, values = 24, {}
    for _ in range(n_kv):
        (klen,) = struct.unpack_from("<Q", buf, pos)
        key = buf[pos + 8:pos + 8 + klen].decode()
        (vtype,) = struct.unpack_from("<I", buf, pos + 8 + klen)
        start = pos + 12 + klen
        if vtype in (4, 5, 6):
            values[key] = struct.unpack_from("<" + meta.SCALARS[vtype], buf, start)[0]
        pos = meta.skip_value(buf, start, vtype)
    return magic, version, n_kv, buf[24:pos], values


def with_values(kv_bytes, n_kv, values):
    """The metadata entries with the scalar ones named in `values` re-packed (each keeps its type)."""
    out, pos, left = bytearray(), 0, dict(values)
    for _ in range(n_kv):
        (klen,) = struct.unpack_from("<Q", kv_bytes, pos)
        key = kv_bytes[pos + 8:pos + 8 + klen].decode()
        (vtype,) = struct.unpack_from("<I", kv_bytes, pos + 8 + klen)
        start = pos + 12 + klen
        end = meta.skip_value(kv_bytes, start, vtype)
        out += kv_bytes[pos:start]
        out += struct.pack("<" + meta.SCALARS[vtype], left.pop(key)) if key in left else kv_bytes[start:end]
        pos = end
    if left:
        raise SystemExit(f"the metadata has no {', '.join(left)} to set")
    return bytes(out)


def shape_values(name):
    """The metadata values of a Llama shape of scripts/model_shapes.py, and whether it is untied."""
    s = shapes.SHAPES.get(name)
    if s is None or s["arch"] != "llama" or s["head_dim"] * s["n_head"] != s["n_embd"]:
        llama = [n for n, s in shapes.SHAPES.items() if s["arch"] == "llama" and s["head_dim"] * s["n_head"] == s["n_embd"]]
        raise SystemExit(f"--shape {name}: this writer makes Llama shapes whose heads span the width: {', '.join(llama)}")
    return {"llama.block_count": s["n_layer"], "llama.embedding_length": s["n_embd"],
            "llama.feed_forward_length": s["n_ff"], "llama.attention.head_count": s["n_head"],
            "llama.attention.head_count_kv": s["n_head_kv"], "llama.rope.dimension_count": s["head_dim"],
            "llama.rope.freq_base": s["rope_base"]}, s.get("untied", False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", help="a Llama shape of scripts/model_shapes.py (default: the metadata's own)")
    parser.add_argument("--layers", type=int, help="keep the first N layers (default: all of the shape's)")
    parser.add_argument("metadata", metavar="METADATA.gguf")
    parser.add_argument("out", metavar="OUT.gguf")
    args = parser.parse_args()
    magic, version, n_kv, kv_bytes, v = read_metadata(args.metadata)
    values, untied = shape_values(args.shape) if args.shape else ({}, False)
    if args.layers:
        values["llama.block_count"] = args.layers
    if values:
        kv_bytes = with_values(kv_bytes, n_kv, values)
        v.update(values)
    n_embd, n_ff, n_layer = v["llama.embedding_length"], v["llama.feed_forward_length"], v["llama.block_count"]
    n_head, n_head_kv, n_vocab = v["llama.attention.head_count"], v["llama.attention.head_count_kv"], v["llama.vocab_size"]
    kv_dim = n_embd // n_head * n_head_kv
    tensors = [("token_embd.weight", (n_embd, n_vocab), F16)]  # GGUF dims: innermost first
    for l in range(n_layer):
        b = f"blk.{l}."
        tensors += [(b + "attn_norm.weight", (n_embd,), F32), (b + "attn_q.weight", (n_embd, n_embd), F16),
                    (b + "attn_k.weight", (n_embd, kv_dim), F16), (b + "attn_v.weight", (n_embd, kv_dim), F16),
                    (b + "attn_output.weight", (n_embd, n_embd), F16), (b + "ffn_norm.weight", (n_embd,), F32),
                    (b + "ffn_gate.weight", (n_embd, n_ff), F16), (b + "ffn_up.weight", (n_embd, n_ff), F16),
                    (b + "ffn_down.weight", (n_ff, n_embd), F16)]
    tensors.append(("output_norm.weight", (n_embd,), F32))
    if untied:
        tensors.append(("output.weight", (n_embd, n_vocab), F16))

    rng = random.Random(1)
    pool = struct.pack(f"<{1 << 16}e", *(rng.gauss(0, 0.02) for _ in range(1 << 16)))
    infos, offset = bytearray(), 0
    for name, dims, ttype in tensors:
        n = 1
        for d in dims:
            n *= d
        infos += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        infos += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", ttype, offset)
        offset += -(-n * (4 if ttype == F32 else 2) // ALIGN) * ALIGN
    with open(args.out, "wb") as out:
        out.write(struct.pack("<4sIQQ", magic, version, len(tensors), n_kv) + kv_bytes + infos)
        out.write(b"\0" * (-out.tell() % ALIGN))
        for name, dims, ttype in tensors:
            n = 1
            for d in dims:
                n *= d
            if ttype == F32:
                data = struct.pack(f"<{n}f", *([1.0] * n))  # RMS-norm gains
            else:
                data = (pool * (2 * n // len(pool) + 1))[:2 * n]
            out.write(data + b"\0" * (-len(data) % ALIGN))
    print(f"{args.out}: {len(tensors)} random tensors, {offset / 2**20:.0f} MiB"
          + (f" ({args.shape or 'the metadata'}'s shape: {n_layer} layers, width {n_embd}, {n_head}/{n_head_kv} heads, "
             f"FFN {n_ff})" if values else ""))


if __name__ == "__main__":
    main()
