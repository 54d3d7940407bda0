#!/usr/bin/env python3
"""A server beside a busy game: answer latency with 0, 1, 2 ... busy cores.

A game and its AI usually share a machine. This starts one `kvframe-serve`
(the default model) per configuration and busy core count, keeps that many
cores busy with other processes (each a Python loop that never sleeps, as a
game's main loop may), and plays the Python README's NPC snippet against the
server: each question sends the next state (the NPC's hit points change) and
asks for an action valid against the schema; its latency is from the state
sent to the parsed action. Configurations:

  fit      kvframe-serve's default: its threads fit the cores the other
           processes leave free, re-read as that changes
  1        --threads 1
  all      --threads <cores>: a thread per core, whatever else runs (the
           default before the fitting)

Configurations alternate per busy count, so they meet the same machine.
Prints a table (p50 / p99 per cell, and the ratios the issue asks for),
the CPU it ran on, and writes a PNG (gnuplot).

    python3 bench/bench_contention.py                       # busy 0,1,2; 12 questions a cell
    python3 bench/bench_contention.py --busy 0,1 --questions 20 --configs fit,1

Needs the kvframe Python package installed (adapters/python/README.md: a
venv; run this with its python). Exit codes: docs/tools.md (2: no kvframe package or
server binary, 3: a run failed).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

from bar_chart import bar_chart  # bench/bar_chart.py, beside this file
from sample_stats import percentile  # bench/sample_stats.py
import exit_codes  # bench/exit_codes.py

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["action", "target"],
          "properties": {"action": {"enum": ["attack", "flee", "trade"]}, "target": {"enum": ["player", "wolf"]}}}
QUESTION = "Bram is hurt and a wolf is near. What does he do?"
WARMUP = 2  # questions per cell not counted: the first encodes the whole state


def cpu_description():
    """'AMD EPYC 7B13, 2 cores, avx2 (no avx512)': the CPU a figure is from."""
    model, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
    except OSError:
        pass
    isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_tile") if f in flags]
    return f"{model}, {os.cpu_count()} cores, {' '.join(isa) or 'no avx2'}"


def client_for(program, serve):
    """The kvframe package, or None (said on stderr) when it or the `serve` binary is missing."""
    try:
        import kvframe
    except ImportError:
        print(f"{program}: the kvframe package is not importable: install ./adapters/python into a venv "
              "(adapters/python/README.md) and run this with the venv's python", file=sys.stderr)
        return None
    if not os.path.exists(serve):
        print(f"{program}: no {serve}: build first (cmake --build build) or pass --serve", file=sys.stderr)
        return None
    return kvframe


def busy_processes(count):
    """`count` processes that each keep a core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def server_args(config):
    if config == "fit":
        return []
    if config == "all":
        return ["--threads", str(os.cpu_count())]
    return ["--threads", config]


def run_cell(kvframe, serve, model, config, busy, questions, work):
    """Latencies (ms) of the counted questions, with `busy` cores kept busy."""
    log = os.path.join(work, f"serve-{config}-{busy}.log")
    server = kvframe.ServerProcess(serve, model=model, args=server_args(config), log_path=log)
    hogs = []
    try:
        server.start()
        hogs = busy_processes(busy)
        time.sleep(1.0)  # the server sees the new load within a quarter second
        latencies = []
        with kvframe.Client.connect(server.endpoint, request_timeout=300) as client:
            with client.open_session("tavern") as session:
                for i in range(WARMUP + questions):
                    state = {"npc": {"name": "Bram", "hp": 3 + i % 5}, "player": {"gold": 40}, "wolf": {"hp": 9}}
                    start = time.perf_counter()
                    session.send_state(state)
                    session.act(QUESTION, SCHEMA)
                    if i >= WARMUP:
                        latencies.append((time.perf_counter() - start) * 1000.0)
        return latencies
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--serve", default=os.path.join(ROOT, "build", "server", "kvframe-serve"),
                        help="the kvframe-serve binary (default: build/server/kvframe-serve)")
    parser.add_argument("--model", default=None, help="the GGUF model (default: the server's default)")
    parser.add_argument("--busy", default=",".join(str(n) for n in range(min(os.cpu_count(), 2) + 1)),
                        help="busy core counts, comma-separated (default: 0..min(cores, 2))")
    parser.add_argument("--configs", default="fit,1,all",
                        help="server configurations: fit (the default), all (a thread per core) or a thread count")
    parser.add_argument("--questions", type=int, default=12, help="counted questions per cell (default 12)")
    parser.add_argument("--plot", default="bench_contention.png", help="the PNG to write (default: ./bench_contention.png)")
    args = parser.parse_args()
    kvframe = client_for("bench_contention", args.serve)
    if kvframe is None:
        return exit_codes.BAD_INPUT
    busy_counts = [int(b) for b in args.busy.split(",")]
    configs = args.configs.split(",")
    for config in configs:
        if config not in ("fit", "all") and not (config.isdigit() and int(config) > 0):
            parser.error(f"--configs: {config!r} is not fit, all or a thread count")
    print(f"bench_contention: {cpu_description()}", flush=True)
    cells = {}
    with tempfile.TemporaryDirectory(prefix="bench-contention-") as work:
        for busy in busy_counts:
            for config in configs:
                try:
                    cells[config, busy] = run_cell(kvframe, args.serve, args.model, config, busy, args.questions, work)
                except Exception as e:  # a failed cell is reported, the others still run
                    print(f"bench_contention: {config} with {busy} busy failed: {e}", file=sys.stderr)
                    cells[config, busy] = []
                lat = cells[config, busy]
                print(f"  busy {busy}, {config:>4}: p50 {percentile(lat, 50):8.0f} ms  p99 {percentile(lat, 99):8.0f} ms",
                      flush=True)

    p50 = {key: percentile(lat, 50) for key, lat in cells.items()}
    p99 = {key: percentile(lat, 99) for key, lat in cells.items()}
    print()
    print("| busy cores | " + " | ".join(f"{c} p50 / p99 ms" for c in configs) + " | fit / 1 (p50) | fit / fit idle (p50) |")
    print("|---:|" + "---:|" * len(configs) + "---:|---:|")
    for busy in busy_counts:
        row = [f"{p50[c, busy]:,.0f} / {p99[c, busy]:,.0f}" for c in configs]
        versus_one = p50["fit", busy] / p50["1", busy] if ("fit", busy) in p50 and ("1", busy) in p50 else float("nan")
        versus_idle = p50["fit", busy] / p50["fit", 0] if ("fit", 0) in p50 and ("fit", busy) in p50 else float("nan")
        print(f"| {busy} | " + " | ".join(row) + f" | {versus_one:.2f}x | {versus_idle:.2f}x |")
    labels = [f"{b} busy" for b in busy_counts]
    ok = bar_chart(args.plot, f"Answer latency beside busy cores ({cpu_description()})", "ms, p50 (lower is better)",
                   labels, {c: [p50[c, b] for b in busy_counts] for c in configs}, logscale=True)
    if ok:
        print(f"\nbench_contention: wrote {args.plot}")
    failed = any(not lat for lat in cells.values())
    return exit_codes.RUN_FAILED if failed or not ok else exit_codes.OK


if __name__ == "__main__":
    sys.exit(main())
