#!/usr/bin/env python3
"""Copy a GGUF file's metadata (tokenizer, chat template, hyperparameters) without its tensors.

The GPU host takes at most 64 MiB per call and the default model is 94 MiB; the
GPU benchmarks run random-weight models of real shapes (--shape) and need only
the tokenizer and chat template of --model. Stdlib only: the device scripts run
before anything is installed.

usage: gguf-metadata-only.py IN.gguf OUT.gguf
"""
import struct
import sys

# GGUF value types -> struct format of the scalar ones (8: string, 9: array).
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def skip_value(buf, pos, vtype):
    if vtype in SCALARS:
        return pos + struct.calcsize("<" + SCALARS[vtype])
    if vtype == 8:
        (n,) = struct.unpack_from("<Q", buf, pos)
        return pos + 8 + n
    if vtype == 9:
        etype, n = struct.unpack_from("<IQ", buf, pos)
        pos += 12
        if etype in SCALARS:
            return pos + n * struct.calcsize("<" + SCALARS[etype])
        for _ in range(n):
            pos = skip_value(buf, pos, etype)
        return pos
    raise ValueError(f"unknown GGUF value type {vtype} at byte {pos}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    buf = open(sys.argv[1], "rb").read()
    magic, version, _n_tensors, n_kv = struct.unpack_from("<4sIQQ", buf, 0)
    if magic != b"GGUF" or version < 2:
        sys.exit(f"{sys.argv[1]}: not a GGUF v2/v3 file")
    pos = start = 24
    for _ in range(n_kv):
        (klen,) = struct.unpack_from("<Q", buf, pos)
        pos += 8 + klen
        (vtype,) = struct.unpack_from("<I", buf, pos)
        pos = skip_value(buf, pos + 4, vtype)
    with open(sys.argv[2], "wb") as out:
        out.write(struct.pack("<4sIQQ", magic, version, 0, n_kv))
        out.write(buf[start:pos])
    print(f"{sys.argv[2]}: {n_kv} metadata entries, {pos - start} bytes, no tensors")


if __name__ == "__main__":
    main()
