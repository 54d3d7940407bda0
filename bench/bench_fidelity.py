#!/usr/bin/env python3
"""Block mode's fidelity dial: how close to `full` each setting of its knobs
brings the answers, and what it costs.

For each setting — `heads:N` (--block-heads, `all`: every token of the blocks
from the first change on), `blend:R` (--blend) or `temp:T`
(--block-temperature); the knobs: protocol/options.json — it runs, on the
default model (docs/block_attention.md):

  - MOBA frames at each --tokens size (bench_game_frames, every frame answered
    in `full` and `block`): tokens encoded per query against `full`'s, time
    to first token, the first token as `full`'s, KL(full || block) of it;
  - held-out Hold'em decisions (kvframe-finetune eval): the action as
    `full`'s, the first token as `full`'s, KL, tokens encoded per decision
    against `full`'s.

    python3 bench/bench_fidelity.py        # heads:0,temp:1.15,heads:2,blend:0.15,blend:0.3,heads:all; 4K, 8K
    python3 bench/bench_fidelity.py --settings heads:0,blend:0.5 --lora auto --frames 4 --holdem-limit 48

Prints a table and writes a PNG plot (gnuplot): agreement with `full` and
KL against cost, a line per game. Exit codes: docs/tools.md (1: a bad --settings or --tokens,
2: no Hold'em data, 3: a run failed).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import exit_codes  # bench/exit_codes.py, beside this file
from bar_chart import gnuplot

ALL = 1 << 20  # --block-heads beyond every block's length: every token of a changed block's successors


def knob_args(setting):
    """bench_game_frames / kvframe-finetune eval options for one setting ("heads:8", "blend:0.15",
    or several knobs at once: "temp:1.15+heads:2")."""
    if "+" in setting:
        return [arg for part in setting.split("+") for arg in knob_args(part)]
    knob, _, value = setting.partition(":")
    if knob == "heads":
        return ["--block-heads", str(ALL if value == "all" else int(value))]
    if knob == "blend":
        return ["--blend", str(float(value))]
    if knob == "temp":
        return ["--block-temperature", str(float(value))]
    raise ValueError(f"unknown setting {setting!r}: heads:N, heads:all, blend:R or temp:T")


def model_args(args):
    """--model (and --threads) for both programs; none: their own defaults (the default model)."""
    return (["--model", args.model] if args.model else []) + (["--threads", str(args.threads)] if args.threads else [])


def run_json(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(f"bench_fidelity: {' '.join(cmd)} exited {done.returncode}\n{done.stderr[-2000:]}\n")
        return None
    return json.loads(done.stdout)


def moba(build, knob, tokens, args):
    d = run_json([os.path.join(build, "bench", "bench_game_frames"), "--tokens", str(tokens), "--frames",
                  str(args.frames), "--full-every", "1", "--prefix-every", str(args.frames + 1), "--max-tokens", "4",
                  "--lora", args.lora, "--plot", "", "--json"] + model_args(args)
                 + (["--drop", args.drop] if args.drop else []) + knob)
    if d is None:
        return None
    block, full, agree = d["modes"]["block"], d["modes"]["full"], d["agreement_block_full"]
    return {"tokens": block["tokens_encoded_mean"], "full_tokens": full["tokens_encoded_mean"],
            "ttft": block["ttft_p50_ms"], "full_ttft": full["ttft_p50_ms"], "first": agree["first_token"],
            "frames": agree["frames"], "kl": agree["kl_first_token"]}


def holdem(build, knob, args):
    d = run_json([os.path.join(build, "tools", "kvframe-finetune"), "eval", "--lora", args.lora, "--data",
                  args.holdem_data, "--limit", str(args.holdem_limit), "--modes", "full,block", "--json"] + model_args(args) + knob)
    if d is None:
        return None
    full, block = d["modes"][0], d["modes"][1]
    return {"agree": block["agree"], "first": block["first_token_agree"], "answers": block["answers"],
            "kl": block["kl_mean"], "ms": block["ms_p50"], "full_ms": full["ms_p50"],
            "tokens": block["tokens_encoded_mean"], "full_tokens": full["tokens_encoded_mean"]}


def games(rows):
    """(name, key, agreement fraction, cost %) per game measured, in table order."""
    out = [(f"MOBA {t // 1024}K", f"moba{t}",
            lambda r, k=f"moba{t}": r[k]["first"] / r[k]["frames"]) for t in sorted(rows[0]["tokens"])]
    out.append(("Hold'em actions", "holdem", lambda r: r["holdem"]["agree"] / r["holdem"]["answers"]))
    return out


def plot(path, rows):
    """Agreement with full and KL(full || block) against tokens computed, a line per game."""
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "dial.dat")
        named = games(rows)
        with open(data, "w") as f:
            for _, key, agreement in named:
                for r in sorted(rows, key=lambda r: r[key]["tokens"] / r[key]["full_tokens"]):  # a line along cost
                    cost = 100 * r[key]["tokens"] / r[key]["full_tokens"]
                    f.write(f'{cost:.3f} {100 * agreement(r):.2f} {max(r[key]["kl"], 1e-6):.6f} "{r["label"]}"\n')
                f.write("\n\n")
        styles = [(i, name) for i, (name, _, _) in enumerate(named)]
        agree = ", \\\n     ".join(
            f'"{data}" index {i} using 1:2 with linespoints lw 2 pt {5 + 2 * i} title "{name}", '
            f'"" index {i} using 1:2:4 with labels offset 1,0.6 font ",8" notitle' for i, name in styles)
        kl = ", \\\n     ".join(
            f'"{data}" index {i} using 1:3 with linespoints lw 2 pt {5 + 2 * i} title "{name}", '
            f'"" index {i} using 1:3:4 with labels offset 1,0.6 font ",8" notitle' for i, name in styles)
        script = f"""
set terminal pngcairo size 1200,520 font ",11" noenhanced
set output "{path}"
set multiplot layout 1,2 title "Block mode's fidelity dial (default model, no adapter, CPU)"
set xlabel "tokens computed per query, % of full's"
set logscale x
set arrow from 20, graph 0 to 20, graph 1 nohead dt 2 lc rgb "gray40"
set label "20% of full" at 20, graph 0.04 offset 0.5,0 textcolor rgb "gray40"
set key center right
set ylabel "agreement with full, % (MOBA: first token; Hold'em: action)"
set yrange [0:105]
plot {agree}
set ylabel "KL(full || block) of the first token, nats"
set logscale y
set yrange [*:*]
set key top right
plot {kl}
unset multiplot
"""
        return gnuplot(script)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", default="build", help="the build folder (bench/, tools/)")
    p.add_argument("--settings", default="heads:0,temp:1.15,heads:2,blend:0.15,blend:0.3,heads:all",
                   help="knob settings, comma-separated: heads:N, heads:all, blend:R, temp:T, or knobs joined by + "
                        "(temp:1.15+heads:2); heads:0 is plain block")
    p.add_argument("--lora", default="none", help="none (the untuned model), auto (the block-tuned adapter) or a file")
    p.add_argument("--tokens", default="4096,8192", help="MOBA frame sizes to aim at (bench_game_frames --tokens)")
    p.add_argument("--frames", type=int, default=8, help="MOBA frames per size, each answered in both modes")
    p.add_argument("--holdem-data", default="build/train-default/holdem/heldout.jsonl",
                   help="held-out Hold'em decisions (scripts/train-default-adapter.sh makes them)")
    p.add_argument("--holdem-limit", type=int, default=95, help="first N decisions")
    p.add_argument("--model", default="", help="GGUF model (default: the programs' default model)")
    p.add_argument("--drop", default="", help="more paths for the MOBA rules to drop (bench_game_frames --drop)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads of each run (0: the programs' default)")
    p.add_argument("--plot", default="bench_fidelity.png", help="PNG plot (empty: none)")
    p.add_argument("--json", default="", help="also write the rows here")
    args = p.parse_args()
    if not os.path.exists(args.holdem_data):
        sys.stderr.write(f"bench_fidelity: no {args.holdem_data}; run scripts/train-default-adapter.sh (its data "
                         "step) or give --holdem-data\n")
        return exit_codes.BAD_INPUT
    try:
        settings = [(name, knob_args(name)) for name in args.settings.split(",")]
        sizes = [int(t) for t in args.tokens.split(",")]
    except ValueError as e:
        sys.stderr.write(f"bench_fidelity: {e}\n")
        return exit_codes.USAGE

    rows = []
    for name, knob in settings:
        row = {"label": name, "tokens": sizes}
        for t in sizes:
            sys.stderr.write(f"[bench_fidelity] {name}: MOBA ~{t} tokens\n")
            row[f"moba{t}"] = moba(args.build, knob, t, args)
        sys.stderr.write(f"[bench_fidelity] {name}: Hold'em\n")
        row["holdem"] = holdem(args.build, knob, args)
        if any(v is None for v in row.values()):
            return exit_codes.RUN_FAILED
        rows.append(row)
        if args.json:  # after each setting: a long run keeps what it measured
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)

    print(f"lora {args.lora}; MOBA {args.frames} frames a size, Hold'em {rows[0]['holdem']['answers']} held-out "
          f"decisions; cost = tokens computed per query, % of full's")
    named = games(rows)
    print(f"{'setting':>10} | " + " | ".join(f"{n:^32}" for n, _, _ in named))
    print(f"{'':>10} | " + " | ".join(f"{'agree':>7} {'KL':>7} {'cost':>7} {'TTFT ms':>8}" for _ in named))
    for r in rows:
        cells = []
        for _, key, agreement in named:
            g = r[key]
            ms = g["ttft"] if "ttft" in g else g["ms"]
            cells.append(f"{100 * agreement(r):>6.1f}% {g['kl']:>7.3f} {100 * g['tokens'] / g['full_tokens']:>6.1f}% "
                         f"{ms:>8.0f}")
        print(f"{r['label']:>10} | " + " | ".join(cells))
    full = " | ".join(f"{n}: {rows[0][k]['full_tokens']:.0f} tokens, "
                      f"{rows[0][k]['full_ttft'] if 'full_ttft' in rows[0][k] else rows[0][k]['full_ms']:.0f} ms"
                      for n, k, _ in named)
    print(f"full: {full}  (Hold'em ms: whole query p50; MOBA: TTFT p50)")
    if args.plot and plot(args.plot, rows):
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
