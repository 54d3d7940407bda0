#!/usr/bin/env python3
"""Many matches against one kvframe-serve: decisions per second and latency.

Starts one `kvframe-serve` (the default model) per configuration and plays N
Hold'em matches at once against it (`kvframe-holdem --server`, the LLM bot
against the three rule bots, block mode, each match its own process and
seed), for N in --matches. Per N: decisions per second of all matches
together, each decision's latency (frame sent to whole action) p50 / p99,
and starvation (the slowest match's decision rate over the fastest's).
Configurations differ only in `--max-sessions-together`: 1 runs one
session's request per engine turn, more lets waiting sessions' answers
decode together (one pass a step for all). Configurations alternate per N so
they meet the same machine load.

    python3 bench/bench_serving.py                            # matches 1,2,4; together 1,8
    python3 bench/bench_serving.py --matches 1,4,8 --hands 4 --together 1,8

Prints a table and writes a PNG plot (gnuplot). Exit 0, or 1 when a run failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from bar_chart import bar_chart  # bench/bar_chart.py, beside this file
from sample_stats import percentile  # bench/sample_stats.py

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))



def start_server(serve, work, together, threads):
    ready = os.path.join(work, f"ready-{together}-{time.monotonic_ns()}")
    log = open(os.path.join(work, f"serve-{together}.log"), "a")
    process = subprocess.Popen([serve, "--bind", "tcp://127.0.0.1:0", "--ready-file", ready, "--threads", str(threads),
                                "--max-sessions-together", str(together)], stdout=log, stderr=log)
    deadline = time.time() + 120
    while not os.path.exists(ready):
        if process.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"kvframe-serve did not start (log in {work})")
        time.sleep(0.1)
    return process, open(ready).read().strip()


def play(holdem, endpoint, matches, hands, history, work, tag):
    """N matches at once; returns (wall seconds, per-match decision latencies)."""
    runs = []
    start = time.perf_counter()
    for m in range(matches):
        page = os.path.join(work, f"{tag}-{m}.html")
        cmd = [holdem, "--server", endpoint, "--bots", "llm,tag,station,random", "--hands", str(hands),
               "--history", str(history), "--seed", str(7000 + m), "--commentary", "off", "--replay-html", page, "--json"]
        runs.append((subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True), page))
    latencies, ends = [], []
    for process, page in runs:
        _, err = process.communicate()
        ends.append(time.perf_counter())
        if process.returncode != 0:
            raise RuntimeError(f"kvframe-holdem exited {process.returncode}: {err[-1000:]}")
        html = open(page).read()
        record = json.loads(re.search(r'<script id="record" type="application/json">(.*?)</script>', html, re.S).group(1))
        latencies.append([d["samples"]["block"]["total_ms"] for d in record["decisions"]])
    wall = max(ends) - start
    rates = [len(lat) / (end - start) for lat, end in zip(latencies, ends)]
    return wall, latencies, rates


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="kvframe's build folder")
    parser.add_argument("--matches", default="1,2,4", help="matches played at once")
    parser.add_argument("--together", default="1,8", help="--max-sessions-together values to compare")
    parser.add_argument("--hands", type=int, default=6, help="hands per match")
    parser.add_argument("--history", type=int, default=10, help="hands of history in the gamecore")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="server threads")
    parser.add_argument("--plot", default=os.path.join(ROOT, "docs", "plots", "bench_serving.png"),
                        help="PNG to write ('' for none)")
    args = parser.parse_args()
    serve = os.path.join(args.build, "server", "kvframe-serve")
    holdem = os.path.join(args.build, "tools", "kvframe-holdem")
    work = tempfile.mkdtemp(prefix="bench_serving-")
    together = [int(t) for t in args.together.split(",")]
    counts = [int(m) for m in args.matches.split(",")]

    rows = []
    for n in counts:
        for t in together:  # alternating: every configuration meets the same load
            server, endpoint = start_server(serve, work, t, args.threads)
            try:
                wall, latencies, rates = play(holdem, endpoint, n, args.hands, args.history, work, f"m{n}-t{t}")
            except RuntimeError as e:
                print(f"bench_serving: {e}", file=sys.stderr)
                return 1
            finally:
                server.terminate()
                server.wait(timeout=30)
            flat = [x for lat in latencies for x in lat]
            rows.append({"matches": n, "together": t, "decisions": len(flat), "per_s": len(flat) / wall,
                         "p50": percentile(flat, 50), "p99": percentile(flat, 99),
                         "starvation": min(rates) / max(rates) if max(rates) > 0 else float("nan")})
            print(f"  {n} matches, together {t}: {len(flat)} decisions in {wall:.1f} s", file=sys.stderr, flush=True)

    base = {r["together"]: r["per_s"] for r in rows if r["matches"] == counts[0]}
    print(f"{'matches':>7} {'together':>8} {'decisions':>9} {'dec/s':>7} {'vs 1 match':>10} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'slowest/fastest':>15}")
    for r in rows:
        print(f"{r['matches']:>7} {r['together']:>8} {r['decisions']:>9} {r['per_s']:>7.2f} "
              f"{r['per_s'] / base[r['together']]:>9.2f}x {r['p50']:>8.0f} {r['p99']:>8.0f} {r['starvation']:>15.2f}")
    if args.plot:
        labels = [f"{n} match{'es' if n > 1 else ''}" for n in counts]
        series = {f"decisions/s, together {t}": [r["per_s"] for r in rows if r["together"] == t] for t in together}
        bar_chart(args.plot, "Hold'em matches against one kvframe-serve (default model, CPU)", "decisions / s",
                  labels, series)
        print(f"plot: {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
