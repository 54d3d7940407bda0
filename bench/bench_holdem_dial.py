#!/usr/bin/env python3
"""Block mode's fidelity dial on the Hold'em bot's own decisions: how far each
setting brings `block`'s actions to `full`'s, which way they still part, and
what it costs, at the history a game keeps (docs/finetune.md).

  1. The states: the LLM bot plays one match a seed in `block` mode
     (kvframe-holdem --dataset; --history, --lora, the knobs' defaults), and
     its seat's decisions are kept, the tight-aggressive bot's action as
     target.
  2. kvframe-finetune eval answers them in `full` once (the reference) and in
     `block` under each setting (--records), the decisions streamed through
     one session per mode as the bot streamed them.
  3. Per setting: `full` = `block` by the kind of move (fold, check, call,
     raise) and by the whole answer; each mode's agreement with the target,
     overall and by the target's class; every disagreement's direction
     (`block`'s move > `full`'s) and whose move the target took; tokens
     run through the model per decision against `full`'s.

    python3 bench/bench_holdem_dial.py      # 7001,7002 x 40 hands, history 30; heads:0,temp:1.15,heads:2,blend:0.15
    python3 bench/bench_holdem_dial.py --seeds 7003 --hands 20 --settings heads:0,temp:1.3 --work build/dial

A setting is heads:N, heads:all, blend:R, temp:T or several joined by +
(bench_fidelity.py's); heads:0 is plain block. The states and answers are
kept in --work, so a second run with other settings answers only those
(found by the model's and adapter's names and contents, so a retrained
adapter under the same name starts afresh; `--lora auto` by that word only:
clear --work after replacing the shipped adapter).
Prints a table and writes a PNG plot (gnuplot). Exit codes: docs/tools.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import exit_codes  # bench/exit_codes.py, beside this file
from bar_chart import gnuplot
from bench_fidelity import knob_args
from bot_decisions import KINDS, compare_modes, versus_tag
from kept_runs import file_identity

def kind(answer):
    """The kind of move of a JSON action ("invalid" if it is not one)."""
    try:
        action = json.loads(answer).get("action")
    except (ValueError, AttributeError):
        return "invalid"
    return action if action in KINDS else "invalid"


def run(cmd, what):
    """Runs a program, its progress (stderr) shown as it goes."""
    sys.stderr.write(f"[bench_holdem_dial] {what}\n")
    sys.stderr.flush()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.stderr.write(f"bench_holdem_dial: {' '.join(cmd)} exited {done.returncode}\n")
    return done.returncode == 0


def record_states(args, path):
    """The LLM seat's decisions of one block-mode match a seed, to `path`."""
    if os.path.exists(path):
        return True
    raw = path + ".all.jsonl"
    if os.path.exists(raw):  # a run cut short: kvframe-holdem appends, so start the matches over
        os.remove(raw)
    for seed in args.seeds.split(","):
        if not run([os.path.join(args.build, "tools", "kvframe-holdem"), "--bots", "llm,tag,station,random",
                    "--hands", str(args.hands), "--seed", seed, "--history", str(args.history), "--mode", "block",
                    "--commentary", "off", "--dataset", raw] + common_args(args),
                   f"seed {seed}: {args.hands} hands at {args.history} hands of history, block plays"):
            return False
    with open(raw) as f, open(path + ".part", "w") as out:
        out.writelines(line for line in f if "-p1-" in json.loads(line)["id"])  # the LLM bot sits at p1
    os.replace(path + ".part", path)
    return True


def common_args(args):
    return ["--lora", args.lora] + (["--model", args.model] if args.model else []) + \
        (["--threads", str(args.threads)] if args.threads else [])


def answers(args, states, modes, knob, path):
    """{id: (target, [answer dict per mode])} of kvframe-finetune eval --records, run once per `path`."""
    if not os.path.exists(path):
        if not run([os.path.join(args.build, "tools", "kvframe-finetune"), "eval", "--data", states, "--modes", modes,
                    "--game", "holdem", "--records", path + ".part"] + common_args(args) + knob,
                   f"eval --modes {modes} {' '.join(knob)}"):
            return None
        os.replace(path + ".part", path)
    with open(path) as f:
        return {r["id"]: (r["target"], r["answers"]) for r in map(json.loads, f)}


def compare(full, block):
    """The row of one setting: `block`'s answers against `full`'s and the target's, by kind of move
    (bot_decisions.py's sums, over the decisions both answered)."""
    ids = [i for i in full if i in block]
    records = [{"tag": kind(full[i][0]),
                "modes": [{"mode": mode, "action": kind(answers[i][1][-1]["text"]),
                           "tokens_encoded": answers[i][1][-1]["tokens_encoded"]}
                          for mode, answers in (("full", full), ("block", block))]} for i in ids]
    c = compare_modes(records, "full", "block")
    directions = sorted(c["directions"].items(), key=lambda kv: -kv[1])
    return {"decisions": c["decisions"], "same_kind": c["same"],
            "same_answer": sum(full[i][1][-1]["text"] == block[i][1][-1]["text"] for i in ids),
            "directions": [(f"{b}>{f}", n) for (b, f), n in directions], "sides": c["sides"],
            "block_target": versus_tag(records, "block"), "full_target": versus_tag(records, "full"),
            "tokens": c["tokens_encoded"]["block"], "full_tokens": c["tokens_encoded"]["full"]}


def by_class(target):
    """fold / check / call / raise: the share of each class the mode matched."""
    return " / ".join(percent(*target["per_class"][k]).strip() for k in KINDS)


def percent(n, of):
    return f"{100 * n / of:5.1f}%" if of else "    -"


def table(rows):
    n = rows[0]["decisions"]
    print(f"{n} decisions; the target: the tight-aggressive bot's action; cost: tokens run through the model per "
          f"decision, % of full's ({rows[0]['full_tokens']:.0f})")
    print(f"{'setting':>16} | {'full = block':>12} {'same answer':>11} | {'block = target':>14} "
          f"{'fold / check / call / raise':>32} | {'cost':>6} | target = block / full / neither | "
          f"disagreements (block > full)")
    for r in rows:
        dirs = ", ".join(f"{d} {c}" for d, c in r["directions"]) or "-"
        sides = " / ".join(str(r["sides"][side]) for side in ("block", "full", "neither"))
        print(f"{r['label']:>16} | {percent(r['same_kind'], n):>12} {percent(r['same_answer'], n):>11} | "
              f"{percent(r['block_target']['agree'], n):>14} {by_class(r['block_target']):>32} | "
              f"{percent(r['tokens'], r['full_tokens']):>6} | {sides:>31} | {dirs}")
    full = rows[0]["full_target"]
    print(f"{'full':>16} | {'':>12} {'':>11} | {percent(full['agree'], n):>14} {by_class(full):>32} | "
          f"{'100.0%':>6} | {'':>31} |")


def plot(path, rows):
    """Per setting (its cost under its name): full = block and block = the target; full = the target dashed."""
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "dial.dat")
        with open(data, "w") as f:
            for i, r in enumerate(rows):
                f.write(f'{i} {100 * r["same_kind"] / r["decisions"]:.2f} '
                        f'{100 * r["block_target"]["agree"] / r["decisions"]:.2f} '
                        f'"{r["label"]}\\n{100 * r["tokens"] / r["full_tokens"]:.1f}% of full"\n')
        full = 100 * rows[0]["full_target"]["agree"] / rows[0]["decisions"]
        script = f"""
set terminal pngcairo size 900,520 font ",11" noenhanced
set output "{path}"
set title "Hold'em decisions: block mode's fidelity dial ({rows[0]['decisions']} decisions; cost: tokens per decision)"
set ylabel "% of decisions"
set yrange [50:100]
set bmargin 5
set xrange [-0.5:{len(rows) - 0.5}]
set grid ytics
set key bottom right
plot "{data}" using 1:2:xtic(4) with points pt 7 ps 1.8 title "full = block (kind of move)", \\
     "" using 1:3 with points pt 5 ps 1.5 title "block = the tight-aggressive bot", \\
     {full:.2f} with lines dt 2 lw 2 title "full = the tight-aggressive bot"
"""
        return gnuplot(script)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", default="build", help="the build folder (tools/)")
    p.add_argument("--settings", default="heads:0,temp:1.15,heads:2,blend:0.15",
                   help="knob settings, comma-separated (heads:N, heads:all, blend:R, temp:T, joined by +)")
    p.add_argument("--seeds", default="7001,7002", help="matches, one a seed (held out: no adapter trained on them)")
    p.add_argument("--hands", type=int, default=40, help="hands a match")
    p.add_argument("--history", type=int, default=30, help="finished hands the frames keep (kvframe-holdem's default)")
    p.add_argument("--lora", default="auto", help="auto (the Hold'em adapter with the default model), none or a file")
    p.add_argument("--model", default="", help="GGUF model (default: the programs' default model)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: the programs' default)")
    p.add_argument("--work", default="build/bench/holdem_dial",
                   help="where the states and answers are kept, a folder per seeds, hands, history, model and "
                        "adapter file (by name and content; --lora auto by that word)")
    p.add_argument("--plot", default="bench_holdem_dial.png", help="PNG plot (empty: none)")
    p.add_argument("--json", default="", help="also write the rows here")
    args = p.parse_args()
    try:
        settings = [(name, knob_args(name)) for name in args.settings.split(",")]
    except ValueError as e:
        sys.stderr.write(f"bench_holdem_dial: {e}\n")
        return exit_codes.USAGE
    tag = f"s{args.seeds.replace(',', '_')}-h{args.hands}-hist{args.history}-" + \
        "-".join(file_identity(x) for x in (args.model, args.lora))
    work = os.path.join(args.work, tag)
    os.makedirs(work, exist_ok=True)
    states = os.path.join(work, "states.jsonl")
    if not record_states(args, states):
        return exit_codes.RUN_FAILED
    full = answers(args, states, "full", [], os.path.join(work, "full.jsonl"))
    if full is None:
        return exit_codes.RUN_FAILED
    rows = []
    for name, knob in settings:
        block = answers(args, states, "block", knob, os.path.join(work, f"block-{name.replace(':', '_')}.jsonl"))
        if block is None:
            return exit_codes.RUN_FAILED
        rows.append({"label": name, **compare(full, block)})
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
    if not rows[0]["decisions"]:
        sys.stderr.write("bench_holdem_dial: the LLM bot met no decision; give more --hands\n")
        return exit_codes.RUN_FAILED
    table(rows)
    if args.plot and plot(args.plot, rows):
        print(f"plot: {args.plot}")
    return exit_codes.OK


if __name__ == "__main__":
    sys.exit(main())
