#!/usr/bin/env python3
"""Write a random-weight GGUF of a llama model's shape from a metadata-only GGUF.

Training speed does not depend on the weights' values, and the default model
(94 MiB) does not fit a GPU host's 64 MiB transfer: gguf-metadata-only.py
carries its metadata (hyperparameters, tokenizer, chat template) and this
script makes F16 weights of that shape on the host. Stdlib only; the values
repeat a pool of N(0, 0.02) draws, enough for timing, useless for answers.

usage: random-model-gguf.py METADATA.gguf OUT.gguf
"""
import random
import struct
import sys

from importlib.machinery import SourceFileLoader
from pathlib import Path

meta = SourceFileLoader("meta", str(Path(__file__).with_name("gguf-metadata-only.py"))).load_module()

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


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    magic, version, n_kv, kv_bytes, v = read_metadata(sys.argv[1])
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
    with open(sys.argv[2], "wb") as out:
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
    print(f"{sys.argv[2]}: {len(tensors)} random tensors, {offset / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
