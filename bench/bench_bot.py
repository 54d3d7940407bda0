#!/usr/bin/env python3
"""How well the LLM Hold'em bot plays, and whether block attention changes it.

Runs `kvframe-holdem --json` over held-out seeds (no training data came from
them) and adds up, for the LLM bot: its action mix; a confusion matrix of its
action against the tight-aggressive bot's on the same state at each decision,
with agreement overall and per class; bb/100 against each rule bot and over
the whole table, with 95% intervals; `full` = `block` agreement live (the
match plays `block`, `full` answers every same decision beside it), and
per decision (bot_decisions.py): each mode against the tight-aggressive bot
per class, the direction of every disagreement between the modes, KL(played
|| other) of the action kinds' probabilities and agreement where the played
mode's top action leads by a margin; invalid actions. `--modes full,block`
plays `full`, for both policies' play. With --tag-baseline the same seeds are played with the
tight-aggressive bot in the LLM's seat, for what a good bot wins there.
Prints a table and writes bench_bot.png (action mix beside the target's).

    python3 bench/bench_bot.py --seeds 6001-6004 --hands 500            # the tuned bot, default adapter
    python3 bench/bench_bot.py --seeds 6001-6004 --hands 500 --lora none --tag-baseline
    python3 bench/bench_bot.py --seeds 6001-6002 --jobs 2 --threads 1   # two matches at once, a core each
    python3 bench/bench_bot.py --seeds 6001-6002 --modes full,block --blend 0.25   # full plays: the same
                                                       # decisions for every fidelity setting of block
    python3 bench/bench_bot.py --seeds 6005-6008 --hands 500 --keep build/bench/bot   # resumable: a rerun
                                                       # plays only the matches not kept yet
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bar_chart import bar_chart  # noqa: E402
from bot_decisions import KINDS, compare_modes, reference_pair, report_text, versus_tag  # noqa: E402
import exit_codes  # noqa: E402 bench/exit_codes.py
from kept_runs import file_identity, kept  # noqa: E402


def seeds_of(text):
    out = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        out += list(range(int(first), int(last or first) + 1))
    return out


def play(args, seed, bots, modes):
    """A match's report, or the one --keep holds for the same match and settings."""
    knobs = [f"{flag}{getattr(args, flag)}" for flag in ("block_heads", "blend", "block_temperature")
             if getattr(args, flag) is not None]
    key = "-".join([bots, str(seed), f"h{args.hands}", f"hist{args.history}", modes, *args.files,
                    args.dtype or "dtype"] + knobs).replace(",", "_")
    return kept(args.keep, key, lambda: play_match(args, seed, bots, modes))


def play_match(args, seed, bots, modes):
    command = [args.holdem, "--bots", bots, "--hands", str(args.hands), "--seed", str(seed), "--history",
               str(args.history), "--commentary", "off", "--json", "--mode", modes, "--lora", args.lora]
    if args.model:
        command += ["--model", args.model]
    if args.threads:
        command += ["--threads", str(args.threads)]
    if args.dtype:
        command += ["--dtype", args.dtype]
    for flag in ("block_heads", "blend", "block_temperature"):
        if getattr(args, flag) is not None:
            command += ["--" + flag.replace("_", "-"), str(getattr(args, flag))]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 4):  # 4: played, with invalid actions (counted below)
        print(f"bench_bot: {' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}", file=sys.stderr)
        sys.exit(exit_codes.RUN_FAILED)
    if args.log:
        os.makedirs(args.log, exist_ok=True)
        with open(os.path.join(args.log, f"{bots.split(',')[0]}-{seed}.log"), "w") as f:
            f.write(done.stderr)
    return json.loads(done.stdout)


class Rate:
    """bb/100 over several matches: hands-weighted mean, intervals combined as independent."""

    def __init__(self):
        self.hands = 0
        self.sum = 0.0
        self.var = 0.0

    def add(self, hands, bb_per_100, ci95):
        self.hands += hands
        self.sum += hands * bb_per_100
        self.var += (hands * ci95 / 1.96) ** 2

    def text(self):
        if not self.hands:
            return "-"
        return f"{self.sum / self.hands:+.1f} ± {1.96 * math.sqrt(self.var) / self.hands:.1f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="6001-6002", help="match seeds, e.g. 6001-6004,7001")
    p.add_argument("--hands", type=int, default=200, help="hands per seed")
    p.add_argument("--bots", default="llm,tag,station,random", help="seat order; the LLM bot in the first seat")
    p.add_argument("--modes", default="block,full", help="the first plays, the others answer beside it")
    p.add_argument("--history", type=int, default=10)
    p.add_argument("--lora", default="auto", help="the in-process model's adapter (kvframe-holdem --lora)")
    p.add_argument("--model", default="", help="GGUF model (default: kvframe-holdem's)")
    p.add_argument("--threads", type=int, default=0, help="threads per match (0: kvframe-holdem's default)")
    p.add_argument("--jobs", type=int, default=1,
                   help="matches played at once; with --jobs N give each --threads (cores / N)")
    p.add_argument("--dtype", default="")
    p.add_argument("--block-heads", type=int, help="block mode's fidelity knobs (kvframe-holdem's; default: its own)")
    p.add_argument("--blend", type=float)
    p.add_argument("--block-temperature", type=float)
    p.add_argument("--tag-baseline", action="store_true", help="also play the seeds with tag in the LLM's seat")
    p.add_argument("--holdem", default="build/tools/kvframe-holdem")
    p.add_argument("--plot", default="bench_bot.png", help="'' for none")
    p.add_argument("--json", default="", help="also write the totals here")
    p.add_argument("--records", default="", help="also write every decision as each mode answered it here")
    p.add_argument("--keep", default="", help="keep each match's report in this folder and take it from there "
                   "on a rerun with the same settings: a run cut short resumes (clear it after rebuilding "
                   "kvframe-holdem, or replacing the adapter --lora auto takes)")
    p.add_argument("--log", default="", help="keep each match's play-by-play here (DIR/<first bot>-<seed>.log): "
                   "every LLM decision, and where another mode answered otherwise, its answer")
    args = p.parse_args()
    # The model and adapter by content, read once (a model file is hundreds of MB), for --keep's keys.
    args.files = [file_identity(args.model), file_identity(args.lora)] if args.keep else []

    seeds = seeds_of(args.seeds)
    opponents = {}
    table, baseline = Rate(), Rate()
    mix = dict.fromkeys(KINDS, 0)
    matrix = {want: dict.fromkeys(KINDS, 0) for want in KINDS}
    decisions = invalid = agree_full = agree_kind = compared_full = 0
    records = []
    started = time.time()
    done = 0

    def play_seed(seed):
        nonlocal done
        report = play(args, seed, args.bots, args.modes)
        tag = play(args, seed, args.bots.replace("llm", "tag", 1), args.modes) if args.tag_baseline else None
        done += 1
        print(f"[bench_bot] seed {seed} ({done}/{len(seeds)}): {report['llm'][0]['decisions']} decisions, "
              f"{time.time() - started:.0f} s", file=sys.stderr)
        return report, tag

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        played = list(pool.map(play_seed, seeds))
    for report, tag in played:
        llm = report["llm"][0]
        seat = llm["id"]
        standing = next(row for row in report["standings"] if row["id"] == seat)
        table.add(report["hands"], standing["bb_per_100"], standing["ci95"])
        for row in llm["vs"]:
            opponents.setdefault(row["kind"], Rate()).add(report["hands"], row["bb_per_100"], row["ci95"])
        for kind in KINDS:
            mix[kind] += llm["actions"][kind]
            for got in KINDS:
                matrix[kind][got] += llm["vs_tag"]["matrix"][kind][got]
        decisions += llm["decisions"]
        records += llm["records"]
        invalid += llm["invalid"]
        for mode in llm["modes"][1:]:  # agreement is a share of the mode's decisions, invalid answers included
            compared_full += mode["decisions"]
            agree_full += round(mode["agreement"] * mode["decisions"])
            agree_kind += round(mode["agreement_kind"] * mode["decisions"])
        if tag:
            row = next(r for r in tag["standings"] if r["id"] == seat)
            baseline.add(tag["hands"], row["bb_per_100"], row["ci95"])

    agreed = sum(matrix[k][k] for k in KINDS)
    compared = sum(sum(row.values()) for row in matrix.values())
    print(f"\n== the LLM bot over {len(seeds)} seeds x {args.hands} hands ({args.bots}, --lora {args.lora}) ==")
    print(f"decisions {decisions}, invalid actions {invalid}")
    print("actions: " + ", ".join(f"{k} {mix[k]}" for k in KINDS))
    print(f"the tight-aggressive bot's action: {agreed} of {compared} ({100 * agreed / max(1, compared):.1f}%)")
    print("\n  tag \\ llm " + "".join(f"{k:>8}" for k in KINDS) + "   agree")
    for want in KINDS:
        total = sum(matrix[want].values())
        share = f"{100 * matrix[want][want] / total:5.1f}%" if total else "    -"
        print(f"  {want:<9} " + "".join(f"{matrix[want][k]:>8}" for k in KINDS) + f"   {share}")
    print("\nbb/100 (95% interval):")
    print(f"  whole table  {table.text()}" + (f"   (tag in that seat: {baseline.text()})" if args.tag_baseline else ""))
    for kind, rate in opponents.items():
        print(f"  vs {kind:<9} {rate.text()}")
    if compared_full:
        print(f"\n`{args.modes.split(',')[1]}` = `{args.modes.split(',')[0]}`: {agree_full} of {compared_full} "
              f"({100 * agree_full / compared_full:.1f}%); the same kind of move (raise sizes aside): {agree_kind} "
              f"({100 * agree_kind / compared_full:.1f}%)")
    modes = args.modes.split(",")
    print("\n" + report_text(records, modes))

    totals = {"seeds": seeds, "hands": args.hands, "decisions": decisions, "invalid": invalid, "actions": mix,
              "matrix": matrix, "agreement_with_tag": agreed / max(1, compared), "table": table.text(),
              "vs": {k: r.text() for k, r in opponents.items()}, "tag_baseline": baseline.text(),
              "modes_agree": [agree_full, compared_full], "modes_agree_kind": [agree_kind, compared_full],
              "vs_tag_by_mode": {m: versus_tag(records, m) for m in modes},
              "compared": {m: {k: v for k, v in compare_modes(records, *reference_pair(modes[0], m)).items()
                               if k != "directions"} for m in modes[1:]}}
    if args.records:
        with open(args.records, "w") as f:
            json.dump(records, f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(totals, f, indent=1)
    if args.plot:
        target = {k: sum(matrix[k].values()) for k in KINDS}
        bar_chart(args.plot, f"LLM bot's actions against the tight-aggressive bot's ({decisions} decisions)",
                  "decisions", list(KINDS), {"LLM bot": [mix[k] for k in KINDS], "tag, same states": [target[k] for k in KINDS]})


if __name__ == "__main__":
    main()
