#!/usr/bin/env python3
"""The training mix of a DAgger round (scripts/train-default-adapter.sh, stage 4).

The tuned LLM bot's own decisions (recorded with `kvframe-holdem --dataset`
while it played, the tight-aggressive bot's action as target) are the states
the first round never showed it. The mix keeps every decision of the LLM's
seat, a sample of the other seats' decisions from the same matches, a sample
of the first round's rule-bot decisions (so they are not forgotten) and the
MOBA records if any are given, shuffled. Writes OUT, with each MOBA file's
rules copied beside it; the Hold'em rules.json must already be there
(kvframe-holdem writes it beside its dataset, so put OUT in that folder).

    python3 scripts/onpolicy_mix.py --onpolicy D/decisions.jsonl --original H/train.jsonl \\
        --moba M/train.jsonl --out D/mix.jsonl
    # Hold'em only: no --moba
    python3 scripts/onpolicy_mix.py --onpolicy D/decisions.jsonl --original H/balanced.jsonl --out D/mix.jsonl
    # a MOBA-weighted mix: part of the LLM seat's decisions, two MOBA sets three times
    python3 scripts/onpolicy_mix.py ... --own-count 160 --moba M/train.jsonl --moba M8K/train.jsonl --moba-repeat 3
    # two rounds' own decisions, 80 of each situation and action class
    python3 scripts/onpolicy_mix.py --onpolicy R1/decisions.jsonl --onpolicy R2/decisions.jsonl --own-per-cell 80 ...

A bot that plays well meets some of the target's classes rarely (the
tight-aggressive bot calls on a few in a hundred of the states a good bot
reaches): --own-per-cell draws the LLM seat's decisions as
scripts/balance_actions.py --by situation does, so the round does not teach
it that the class is rare.
"""
import argparse
import json
import os
import random
import shutil
import sys

from balance_actions import balanced, class_weight, history_weight, with_long_history


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--onpolicy", required=True, action="append",
                   help="decisions of matches the LLM bot played (JSONL); repeat for several files")
    p.add_argument("--seat", default="p1", help="the LLM bot's seat id in those matches")
    own_draw = p.add_mutually_exclusive_group()
    own_draw.add_argument("--own-count", type=int, help="of the LLM seat's decisions, how many to keep (default: all)")
    own_draw.add_argument("--own-per-cell", type=int,
                          help="the LLM seat's decisions drawn this many times for each situation and target "
                               "action class (balance_actions.py --by situation)")
    p.add_argument("--class-weight", type=class_weight, action="append", default=[], metavar="CLASS=WEIGHT",
                   help="with --own-per-cell: draw CLASS WEIGHT times as often as the others (repeatable)")
    p.add_argument("--history-weight", type=history_weight, metavar="HANDS=WEIGHT",
                   help="with --own-per-cell: draw the decisions whose frame keeps more than HANDS finished "
                        "hands WEIGHT times as often (10=2)")
    p.add_argument("--others", type=int, default=500, help="decisions of the other seats to keep")
    p.add_argument("--original", required=True, help="the first round's Hold'em training data (JSONL)")
    p.add_argument("--original-count", type=int, default=500, help="of those, how many to keep")
    p.add_argument("--moba", action="append", default=[],
                   help="MOBA training data (JSONL; its rules.json beside it); repeat for several files")
    p.add_argument("--moba-repeat", type=int, default=2, help="times each MOBA record is in the mix")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", required=True, help="the mix (JSONL)")
    args = p.parse_args()
    rng = random.Random(args.seed)
    try:
        onpolicy = [line for path in args.onpolicy for line in open(path)]
        original = open(args.original).readlines()
        seat = f"-{args.seat}-"  # kvframe-holdem's ids: holdem-s<seed>-<hand>-<seat>-<n>
        own, others = [], []
        for line in onpolicy:
            (own if seat in json.loads(line)["id"] else others).append(line)
        moba = []
        for i, path in enumerate(args.moba):
            rules = "moba_rules.json" if i == 0 else f"moba_rules{i + 1}.json"
            shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(path)), "rules.json"),
                            os.path.join(os.path.dirname(os.path.abspath(args.out)), rules))
            moba += [json.dumps({**json.loads(line), "rules": rules}) + "\n" for line in open(path)]
        if args.own_count is not None:
            own = rng.sample(own, args.own_count)
        elif args.own_per_cell is not None:
            drawn, _, found = balanced([json.loads(line) for line in own], args.own_per_cell, "situation", rng,
                                     args.class_weight)
            print(f"onpolicy_mix: {args.seat}'s decisions: {found}", file=sys.stderr)
            if args.history_weight:
                drawn = with_long_history(drawn, args.history_weight, rng)
            own = [json.dumps(record) + "\n" for record in drawn]
        mix = own + rng.sample(others, args.others) + rng.sample(original, args.original_count) + moba * args.moba_repeat
        rng.shuffle(mix)
        with open(args.out, "w") as f:
            f.writelines(mix)
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write(f"onpolicy_mix: {e}\n")
        return 2
    print(f"onpolicy_mix: {len(own)} decisions of {args.seat}, {args.others} of other seats, {args.original_count} "
          f"original, {len(moba) * args.moba_repeat} MOBA: {len(mix)} records in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
