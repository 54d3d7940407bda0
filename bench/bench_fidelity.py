#!/usr/bin/env python3
"""Block mode's fidelity dial: how close to `full` each setting of a knob
brings the answers, and what it costs.

For each `block_heads` setting (SessionParams::block_heads; docs/block_attention.md)
it runs, on the default model:

  - MOBA frames (bench_game_frames, every frame answered in `full` and
    `block`): tokens encoded per query against `full`'s, time to first
    token, the first token as `full`'s, KL(full || block) of the first token;
  - held-out Hold'em decisions (kvframe-finetune eval): the action as
    `full`'s, the first token as `full`'s, KL, query time against `full`'s.

    python3 bench/bench_fidelity.py                       # heads 0,2,8,all; no adapter
    python3 bench/bench_fidelity.py --heads 0,4 --lora auto --frames 8 --holdem-limit 48

Prints a table and writes a PNG plot (gnuplot) of KL against cost, one line
per game. Exit 0, or 1 when a run failed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ALL = 1 << 20  # block_heads beyond every block's length: every token of a changed block's successors


def run_json(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(f"bench_fidelity: {' '.join(cmd)} exited {done.returncode}\n{done.stderr[-2000:]}\n")
        return None
    return json.loads(done.stdout)


def moba(build, heads, args):
    d = run_json([os.path.join(build, "bench", "bench_game_frames"), "--tokens", str(args.tokens), "--frames",
                  str(args.frames), "--full-every", "1", "--prefix-every", str(args.frames + 1), "--max-tokens", "4",
                  "--lora", args.lora, "--block-heads", str(heads), "--plot", "", "--json"])
    if d is None:
        return None
    block, full, agree = d["modes"]["block"], d["modes"]["full"], d["agreement_block_full"]
    return {"tokens": block["tokens_encoded_mean"], "full_tokens": full["tokens_encoded_mean"],
            "ttft": block["ttft_p50_ms"], "full_ttft": full["ttft_p50_ms"], "first": agree["first_token"],
            "frames": agree["frames"], "kl": agree["kl_first_token"]}


def holdem(build, heads, args):
    d = run_json([os.path.join(build, "tools", "kvframe-finetune"), "eval", "--lora", args.lora, "--data",
                  args.holdem_data, "--limit", str(args.holdem_limit), "--modes", "full,block", "--block-heads",
                  str(heads), "--json"])
    if d is None:
        return None
    full, block = d["modes"][0], d["modes"][1]
    return {"agree": block["agree"], "first": block["first_token_agree"], "answers": block["answers"],
            "kl": block["kl_mean"], "ms": block["ms_p50"], "full_ms": full["ms_p50"]}


def plot(path, rows):
    """KL(full || block) against cost, a line per game, each point named by its setting."""
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "dial.dat")
        with open(data, "w") as f:
            for game, cost in (("moba", lambda r: 100 * r["moba"]["tokens"] / r["moba"]["full_tokens"]),
                               ("holdem", lambda r: 100 * r["holdem"]["ms"] / r["holdem"]["full_ms"])):
                for r in rows:
                    f.write(f'{cost(r):.3f} {r[game]["kl"]:.5f} "{r["label"]}"\n')
                f.write("\n\n")
        script = f"""
set terminal pngcairo size 900,520 font ",11" noenhanced
set output "{path}"
set title "Block mode's fidelity dial: block_heads (default model, CPU)"
set xlabel "cost, % of full (MOBA: tokens encoded per query; Hold'em: query time)"
set ylabel "KL(full || block) of the first token, nats"
set logscale y
set key top right
plot "{data}" index 0 using 1:2 with linespoints lw 2 pt 7 title "MOBA frames", \\
     "" index 0 using 1:2:3 with labels offset 1,0.6 notitle, \\
     "{data}" index 1 using 1:2 with linespoints lw 2 pt 5 title "Hold'em decisions", \\
     "" index 1 using 1:2:3 with labels offset 1,-0.6 notitle
"""
        done = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True) \
            if shutil.which("gnuplot") else None
        if done is None or done.returncode != 0:
            sys.stderr.write("bench_fidelity: no plot: gnuplot is missing or failed (scripts/setup.sh installs "
                             "gnuplot-nox)\n")
            return False
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", default="build", help="the build folder (bench/, tools/)")
    p.add_argument("--heads", default="0,2,8,all", help="block_heads settings, comma-separated; 'all' = every token")
    p.add_argument("--lora", default="none", help="none (the untuned model), auto (the block-tuned adapter) or a file")
    p.add_argument("--tokens", type=int, default=4096, help="MOBA frame size to aim at (bench_game_frames --tokens)")
    p.add_argument("--frames", type=int, default=16, help="MOBA frames, each answered in both modes")
    p.add_argument("--holdem-data", default="build/train-default/holdem/heldout.jsonl",
                   help="held-out Hold'em decisions (scripts/train-default-adapter.sh makes them)")
    p.add_argument("--holdem-limit", type=int, default=95, help="first N decisions")
    p.add_argument("--plot", default="bench_fidelity.png", help="PNG plot (empty: none)")
    p.add_argument("--json", default="", help="also write the rows here")
    args = p.parse_args()
    if not os.path.exists(args.holdem_data):
        sys.stderr.write(f"bench_fidelity: no {args.holdem_data}; run scripts/train-default-adapter.sh (its data "
                         "step) or give --holdem-data\n")
        return 1

    rows = []
    for name in args.heads.split(","):
        heads = ALL if name == "all" else int(name)
        sys.stderr.write(f"[bench_fidelity] block_heads {name}\n")
        m, h = moba(args.build, heads, args), holdem(args.build, heads, args)
        if m is None or h is None:
            return 1
        rows.append({"label": name, "block_heads": heads, "moba": m, "holdem": h})

    print(f"block_heads: lora {args.lora}; MOBA {args.frames} frames (~{args.tokens} tokens), "
          f"Hold'em {rows[0]['holdem']['answers']} held-out decisions")
    print(f"{'heads':>6} | {'MOBA tok/q':>10} {'of full':>8} {'TTFT ms':>8} {'1st tok':>8} {'KL':>7} | "
          f"{'action':>7} {'1st tok':>8} {'KL':>7} {'ms':>6} {'of full':>8}")
    for r in rows:
        m, h = r["moba"], r["holdem"]
        print(f"{r['label']:>6} | {m['tokens']:>10.0f} {100 * m['tokens'] / m['full_tokens']:>7.1f}% "
              f"{m['ttft']:>8.0f} {m['first']:>4}/{m['frames']:<3} {m['kl']:>7.3f} | "
              f"{h['agree']:>3}/{h['answers']:<3} {h['first']:>4}/{h['answers']:<3} {h['kl']:>7.3f} "
              f"{h['ms']:>6.0f} {100 * h['ms'] / h['full_ms']:>7.1f}%")
    m0, h0 = rows[0]["moba"], rows[0]["holdem"]
    print(f"full: MOBA {m0['full_tokens']:.0f} tokens/query, TTFT {m0['full_ttft']:.0f} ms; "
          f"Hold'em {h0['full_ms']:.0f} ms a decision")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.plot and plot(args.plot, rows):
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
