#!/usr/bin/env python3
"""One row per model for docs/models.md: what a studio weighing kvframe
against llama.cpp asks first, measured side by side in one run.

For each GGUF (a path, or a name scripts/fetch-model.sh fetches):
  - file size, and the wall time and peak RSS of a one-token answer
    (kvframe-generate against llama.cpp's llama-bench on one token: both
    load the whole model, so the time is mostly loading);
  - prefill (512 and 2,048 tokens) and decode (64 tokens after 512) tokens/s,
    kvframe's bench_runtime and llama-bench alternating (bench/peers/
    bench_llama_cpp.py, which this reuses);
  - the game case: the LLM Hold'em bot at 10 hands of history, every decision
    answered in `block` and in `full` mode (kvframe-holdem --mode block,full):
    time to first token p50 of each, tokens encoded, and how often `full`
    picks `block`'s action.

    bench/bench_models.py smollm2-135m gemma3-270m
    bench/bench_models.py --hands 6 --threads 2 ~/.cache/kvframe/models/random/llama3.2-1b-q4_k_m.gguf

Prints a Markdown table and writes a PNG (block vs full time to first token).
Exit 0, 2 for a missing program or model, 3 when a benchmark failed.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "peers"))
from bar_chart import bar_chart  # noqa: E402  (bench/bar_chart.py)
from bench_llama_cpp import bench_runtime, llama_bench, log, run  # noqa: E402

MODEL_NAMES = {"smollm2-135m": "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma3-270m": "gemma-3-270m-q4_k_m.gguf"}


def model_path(name):
    if name in MODEL_NAMES:
        cache = os.environ.get("KVFRAME_MODELS", os.path.expanduser("~/.cache/kvframe/models"))
        return os.path.join(cache, MODEL_NAMES[name])
    return name


def time_and_rss(command):
    """Wall seconds and peak resident memory (MB) of `command` (GNU time's %e %M)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        log(f"failed: {' '.join(command)}")
        sys.exit(3)
    seconds, kb = done.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kb) / 1024


def holdem(binary, model, threads, hands, seed):
    report = json.loads(run([binary, "--model", model, "--bots", "llm,tag,station,random", "--hands", str(hands),
                             "--seed", str(seed), "--history", "10", "--mode", "block,full", "--commentary", "off",
                             "--lora", "none", "--threads", str(threads), "--json"]))
    modes = {m["mode"]: m for m in report["llm"][0]["modes"]}
    return modes["block"], modes["full"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="GGUF files or fetch-model.sh names")
    parser.add_argument("--build", default="build", help="kvframe's build folder")
    parser.add_argument("--llama-bin", default="", help="llama.cpp's bin folder (default: build-llama-cpp.sh's)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--hands", type=int, default=4, help="Hold'em hands per model")
    parser.add_argument("--seed", type=int, default=6001, help="Hold'em seed (held out from training)")
    parser.add_argument("--plot", default="bench_models.png")
    args = parser.parse_args()
    tools = {name: os.path.join(args.build, path) for name, path in
             (("generate", "tools/kvframe-generate"), ("holdem", "tools/kvframe-holdem"),
              ("runtime", "bench/bench_runtime"))}
    llama_bin = args.llama_bin or subprocess.run([os.path.join(HERE, "peers", "build-llama-cpp.sh")], check=True,
                                                 capture_output=True, text=True).stdout.strip()
    for path in list(tools.values()) + [model_path(m) for m in args.models]:
        if not os.path.exists(path):
            log(f"missing {path} (build kvframe; scripts/fetch-model.sh NAME fetches a named model)")
            return 2

    rows, labels, block_ttft, full_ttft = [], [], [], []
    for name in args.models:
        path = model_path(name)
        log(f"{name}: memory")
        load = time_and_rss([tools["generate"], "--model", path, "--prompt", "hi", "--max-tokens", "1",
                             "--threads", str(args.threads)])
        load_peer = time_and_rss([os.path.join(llama_bin, "llama-bench"), "-m", path, "-t", str(args.threads),
                                  "-p", "1", "-n", "1", "-r", "1"])
        log(f"{name}: prefill and decode against llama-bench")
        ours = bench_runtime(tools["runtime"], path, args.threads, [512, 2048], 512, 64)
        theirs = llama_bench(os.path.join(llama_bin, "llama-bench"), path, args.threads, [512, 2048], 512, 64)
        log(f"{name}: Hold'em, {args.hands} hands at 10 hands of history, block and full")
        block, full = holdem(tools["holdem"], path, args.threads, args.hands, args.seed)
        rows.append((os.path.basename(path), os.path.getsize(path) / 1e6, load, load_peer, ours, theirs, block, full))
        labels.append(os.path.basename(path))
        block_ttft.append(block["ttft_ms"]["p50"])
        full_ttft.append(full["ttft_ms"]["p50"])

    print(f"\n{args.threads} threads; prefill/decode tokens/s as kvframe / llama.cpp (ratio); Hold'em at 10 hands of "
          f"history, {args.hands} hands, seed {args.seed}, untuned (--lora none)\n")
    print("| model | file MB | one-token answer s, kvframe / llama.cpp | peak RSS MB, kvframe / llama.cpp | prefill 512 "
          "| prefill 2,048 | decode 64 after 512 | Hold'em TTFT p50 ms, block / full | tokens encoded, block / full "
          "| `full` = `block` |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for file, size, (seconds, rss), (seconds_peer, rss_peer), ours, theirs, block, full in rows:
        def speed(key):
            return f"{ours[key]:.0f} / {theirs[key]:.0f} ({ours[key] / theirs[key]:.2f}×)"
        print(f"| {file} | {size:.0f} | {seconds:.1f} / {seconds_peer:.1f} | {rss:.0f} / {rss_peer:.0f} | "
              f"{speed(('prefill', 512))} | "
              f"{speed(('prefill', 2048))} | {speed(('decode', 64))} | {block['ttft_ms']['p50']:.0f} / "
              f"{full['ttft_ms']['p50']:.0f} ({full['ttft_ms']['p50'] / block['ttft_ms']['p50']:.1f}×) | "
              f"{block['tokens_encoded']:.0f} / {full['tokens_encoded']:.0f} | "
              f"{full['agreement'] * 100:.0f}% of {full['decisions']} |")
    if args.plot and bar_chart(args.plot, "Hold'em decision at 10 hands of history: time to first token",
                               "ms (lower is better)", labels, {"block": block_ttft, "full": full_ttft},
                               logscale=True):
        log(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
