#!/usr/bin/env python3
"""kvframe's runtime against llama.cpp on the same GGUF, side by side in one run.

Runs llama.cpp's own llama-bench (pinned source, built by build-llama-cpp.sh
in its best CPU configuration: GGML_NATIVE, Release) and kvframe's
bench_runtime with its default settings, alternating them `--rounds` times so
both see the same machine load, and keeps each side's best. Prints a table of
prefill and decode tokens/s with the kvframe / llama.cpp ratio and writes a
PNG bar chart (gnuplot).

  bench/peers/bench_llama_cpp.py --bench-runtime build/bench/bench_runtime
  bench/peers/bench_llama_cpp.py --threads 2 --lengths 512,2048,8192 --depth 512

Exit codes: 0 measured, 2 bad arguments or a missing program or model, 3 a
benchmark failed (its output is shown).
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bar_chart import bar_chart  # noqa: E402  (bench/bar_chart.py)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODEL = os.path.expanduser("~/.cache/kvframe/models/SmolLM2-135M-Instruct.Q4_1.gguf")


def log(message):
    print(f"[peers] {message}", file=sys.stderr, flush=True)


def run(command):
    log(" ".join(command))
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        log(f"failed with exit code {done.returncode}: {command[0]}")
        sys.exit(3)
    return done.stdout


def llama_bench(binary, model, threads, lengths, depth, decode):
    """tokens/s by phase: ('prefill', n) and ('decode', n)."""
    out = {}
    rows = json.loads(run([binary, "-m", model, "-t", str(threads), "-p", ",".join(map(str, lengths)), "-n", "0",
                           "-r", "2", "-o", "json"]))
    rows += json.loads(run([binary, "-m", model, "-t", str(threads), "-p", "0", "-n", str(decode), "-d", str(depth),
                            "-r", "2", "-o", "json"]))
    for row in rows:
        if row["n_prompt"] > 0:
            out[("prefill", row["n_prompt"])] = row["avg_ts"]
        else:
            out[("decode", row["n_gen"])] = row["avg_ts"]
    return out


def bench_runtime(binary, model, threads, lengths, depth, decode):
    # llama.cpp runs the file alone: so does kvframe (no game adapter on the fly).
    text = run([binary, "--model", model, "--threads", str(threads), "--lengths", ",".join(map(str, lengths)),
                "--decode", str(decode), "--decode-after", str(depth), "--reps", "2", "--lora", "none", "--plot", ""])
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(prefill|decode)\s+(\d+)\s+[\d.]+\s+([\d.]+)", line)
        if m:
            out[(m.group(1), int(m.group(2)))] = float(m.group(3))
    return out


def plot(path, labels, ours, theirs, title):
    return bar_chart(path, title, "tokens/s (higher is better)", labels,
                     {"kvframe (no adapter)": ours, "llama.cpp (llama-bench)": theirs}, logscale=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL, help="GGUF model (default: kvframe's default model)")
    parser.add_argument("--bench-runtime", default="build/bench/bench_runtime", help="kvframe's bench_runtime binary")
    parser.add_argument("--llama-bin", default="", help="llama.cpp's bin folder (default: build it, cached)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for both (default: all cores)")
    parser.add_argument("--lengths", default="512,2048,8192", help="prompt lengths to prefill")
    parser.add_argument("--depth", type=int, default=512, help="tokens in the context before decoding")
    parser.add_argument("--decode", type=int, default=64, help="tokens to decode")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds; each side's best is kept")
    parser.add_argument("--plot", default="bench_llama_cpp.png", help="PNG to write (empty: none)")
    args = parser.parse_args()

    for path, what in ((args.model, "the model (scripts/fetch-model.sh fetches the default)"),
                       (args.bench_runtime, "bench_runtime (build kvframe first)")):
        if not os.path.exists(path):
            log(f"missing {what}: {path}")
            return 2
    lengths = [int(x) for x in args.lengths.split(",")]
    llama_bin = args.llama_bin or subprocess.run([os.path.join(HERE, "build-llama-cpp.sh")], check=True,
                                                 capture_output=True, text=True).stdout.strip()

    ours, theirs = {}, {}
    for round_index in range(args.rounds):
        log(f"round {round_index + 1} of {args.rounds}")
        for best, measured in ((theirs, llama_bench(os.path.join(llama_bin, "llama-bench"), args.model, args.threads,
                                                    lengths, args.depth, args.decode)),
                               (ours, bench_runtime(args.bench_runtime, args.model, args.threads, lengths, args.depth,
                                                    args.decode))):
            for key, value in measured.items():
                best[key] = max(best.get(key, 0.0), value)

    keys = [("prefill", n) for n in lengths] + [("decode", args.decode)]
    labels, a, b = [], [], []
    print(f"\n{os.path.basename(args.model)} · {args.threads} threads · best of {args.rounds} alternating rounds")
    print(f"{'phase':<26} {'llama.cpp tok/s':>16} {'kvframe tok/s':>14} {'kvframe / llama.cpp':>20}")
    for phase, n in keys:
        if (phase, n) not in ours or (phase, n) not in theirs:
            log(f"no result for {phase} {n}")
            return 3
        label = f"prefill {n}" if phase == "prefill" else f"decode {n} after {args.depth}"
        ratio = ours[(phase, n)] / theirs[(phase, n)]
        print(f"{label:<26} {theirs[(phase, n)]:>16.1f} {ours[(phase, n)]:>14.1f} {ratio:>19.2f}x")
        labels.append(label)
        a.append(ours[(phase, n)])
        b.append(theirs[(phase, n)])
    if args.plot and plot(args.plot, labels, a, b, f"kvframe vs llama.cpp · {os.path.basename(args.model)} · "
                                                  f"{args.threads} threads"):
        log(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
