#!/usr/bin/env python3
"""Hold'em LLM decision latency: frames sent with the question vs streamed ahead.

Runs kvframe-holdem (the LLM bot in block mode against rule bots, default
model, in-process server) once per pace and seed, alternating paces so both
see the same machine load, and reads every decision's latency from the
replay record:

  - pace 0: the bot sends its frame together with its question, so the
    decision pays for encoding what changed since its last decision;
  - pace N ms: the table pauses N ms after every deal and action, as a real
    game's animations do, and the bot streams each new state as a frame;
    the server encodes it while idle (warming), so the decision finds it
    ready.

Latency is from sending the decision's frame to the first answer token
(TTFT) and to the whole action (total), as the game sees it. With more
modes after -- (--mode block,full) every mode answers the same decisions
and each gets its rows, with its first token against the last mode's
(p50 over p50). Tokens per decision: those encoded at the decision and
those encoded ahead for the frames streamed before it
(Report.tokens_encoded_superseded), what a paced stream costs.

    python3 bench/bench_holdem_latency.py                 # paces 0,300; 3 seeds x 12 hands
    python3 bench/bench_holdem_latency.py --paces 0,150,300 --seeds 3001,3002 --hands 20
    python3 bench/bench_holdem_latency.py --paces 1000,3000 --seeds 6001 --hands 12 -- \
        --model llama3.2-1b-text-random-q4_k_m.gguf --mode block,full --history 10 --lora none --threads 2

Prints a table and writes a PNG plot (gnuplot). Exit codes: docs/tools.md (3: a run failed).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from bar_chart import bar_chart  # bench/bar_chart.py, beside this file
from sample_stats import percentile  # bench/sample_stats.py
import exit_codes  # bench/exit_codes.py



def run_match(holdem, pace, seed, hands, extra):
    """{mode: [sample, ...]} of one match, each mode's samples in decision order."""
    with tempfile.TemporaryDirectory() as work:
        page = os.path.join(work, "replay.html")
        cmd = [holdem, "--bots", "llm,tag,station,random", "--hands", str(hands), "--seed", str(seed),
               "--commentary", "off", "--pace-ms", str(pace), "--replay-html", page, "--json"] + extra
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(f"bench_holdem_latency: {' '.join(cmd)} exited {done.returncode}\n{done.stderr[-2000:]}\n")
            return None
        html = open(page).read()
    record = json.loads(re.search(r'<script id="record" type="application/json">(.*?)</script>', html, re.S).group(1))
    return {mode: [d["samples"][mode] for d in record["decisions"] if mode in d["samples"]] for mode in record["modes"]}


def plot(path, rows, modes):
    series = {f"{mode} first token p50": [r["ttft_p50"] for r in rows if r["mode"] == mode] for mode in modes}
    if len(modes) == 1:
        series.update({"whole action p50": [r["total_p50"] for r in rows],
                       "whole action p99": [r["total_p99"] for r in rows]})
    bar_chart(path, f"Hold'em LLM decision latency, {', '.join(modes)} (kvframe-holdem, CPU)",
              "ms (lower is better)", [f"pace {r['pace']} ms" for r in rows if r["mode"] == modes[0]], series,
              logscale=len(modes) > 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--holdem", default="build/tools/kvframe-holdem", help="the kvframe-holdem binary")
    parser.add_argument("--paces", default="0,300", help="pauses after each table event, ms (0: frame sent with the question)")
    parser.add_argument("--seeds", default="3001,3002,3003", help="one match per seed and pace")
    parser.add_argument("--hands", type=int, default=12, help="hands per match")
    parser.add_argument("--plot", default="bench_holdem_latency.png",
                        help="PNG to write (default: in the current folder; '' for none)")
    parser.add_argument("extra", nargs="*", help="more kvframe-holdem options after --, e.g. -- --dtype fp32")
    args = parser.parse_args()
    paces = [int(p) for p in args.paces.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]

    samples, modes = {p: {} for p in paces}, []
    for seed in seeds:
        for pace in paces:  # alternating: both paces meet the same machine load
            got = run_match(args.holdem, pace, seed, args.hands, args.extra)
            if got is None:
                return exit_codes.RUN_FAILED
            for mode, answers in got.items():
                samples[pace].setdefault(mode, []).extend(answers)
                if mode not in modes:
                    modes.append(mode)
            print(f"  seed {seed} pace {pace} ms: {len(next(iter(got.values()), []))} decisions", file=sys.stderr,
                  flush=True)

    rows = []
    baseline = modes[-1]
    print(f"{'pace ms':>8} {'mode':>6} {'decisions':>9} {'ttft p50':>9} {'ttft p99':>9} {'total p50':>10} "
          f"{'total p99':>10} {'tokens at decision':>18} {'streamed before':>15} {f'vs {baseline}':>9}")
    for pace in paces:
        base = percentile([s["ttft_ms"] for s in samples[pace].get(baseline, [])], 50)
        for mode in modes:
            got = samples[pace].get(mode, [])
            ttft = [s["ttft_ms"] for s in got]
            total = [s["total_ms"] for s in got]
            n = max(1, len(got))
            row = {"pace": pace, "mode": mode, "n": len(got), "ttft_p50": percentile(ttft, 50),
                   "ttft_p99": percentile(ttft, 99), "total_p50": percentile(total, 50),
                   "total_p99": percentile(total, 99), "encoded": sum(s["tokens_encoded"] for s in got) / n,
                   "superseded": sum(s["tokens_encoded_superseded"] for s in got) / n}
            rows.append(row)
            print(f"{pace:>8} {mode:>6} {row['n']:>9} {row['ttft_p50']:>7.0f}ms {row['ttft_p99']:>7.0f}ms "
                  f"{row['total_p50']:>8.0f}ms {row['total_p99']:>8.0f}ms {row['encoded']:>18.1f} "
                  f"{row['superseded']:>15.1f} {base / max(row['ttft_p50'], 1e-9):>8.1f}x")
    if args.plot:
        plot(args.plot, rows, modes)
        print(f"plot: {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
