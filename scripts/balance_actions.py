#!/usr/bin/env python3
"""Resamples Hold'em decisions so every target action class is equally common.

Rule-bot matches are mostly folds and checks; trained on them as they come,
a small model learns that folding is the commonest answer and never calls or
raises. PokerBench ("PokerBench: Training Large Language Models to become
Professional Poker Players", arXiv:2501.08328) balances its training spots
across fold, check, call and bet/raise; this does the same for
`kvframe-holdem --dataset` records: each class drawn to the same count
(without replacement while a class has enough, with it once exhausted).
Records without an action target (commentary) are kept as they are, up to
--other-share of the output. Writes OUT beside its inputs' rules.json.

    python3 scripts/balance_actions.py --data H/train.jsonl --per-class 400 --out H/balanced.jsonl
"""
import argparse
import collections
import json
import random
import sys

CLASSES = ("fold", "check", "call", "raise")
MIN_SITUATION_RECORDS = 20  # fewer in a situation's class: left out rather than repeated


def action_of(record):
    """The target's action class, or None for a record that is not a decision."""
    try:
        target = json.loads(record.get("target") or "")
    except (json.JSONDecodeError, TypeError):
        return None
    action = target.get("action") if isinstance(target, dict) else None
    return action if action in CLASSES else None


def situation_of(record):
    """Where the decision is taken: before or after the flop, facing a bet or
    checked to. The tight-aggressive bot decides differently in each, and a
    class balanced over all of them keeps each situation's own skew: most
    folds are preflop and most calls postflop, so "facing a bet after the
    flop" stays mostly calls, and a small model learns that prior instead of
    the read."""
    try:
        frame = record["frame"]
        street = "preflop" if frame["state"]["street"] == "preflop" else "postflop"
        facing = "facing a bet" if frame["your_read"]["to_call"] > 0 else "checked to"
    except (KeyError, TypeError):
        sys.exit(f"record {record.get('id')}: no state.street or your_read.to_call; --by situation needs "
                 "kvframe-holdem --dataset records")
    return f"{street}, {facing}"


def draw(pool, count, rng):
    """`count` records of `pool`: a shuffled sample, repeated once it runs out."""
    picked = []
    while len(picked) < count:
        order = pool[:]
        rng.shuffle(order)
        picked.extend(order[: count - len(picked)])
    return picked


def class_weight(text):
    """An argparse type: CLASS=WEIGHT, e.g. check=2."""
    action, _, weight = text.partition("=")
    try:
        value = float(weight)
    except ValueError:
        value = -1.0
    if action not in CLASSES or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: want CLASS=WEIGHT, CLASS one of {', '.join(CLASSES)}, "
                                         "WEIGHT a positive number (check=2)")
    return action, value


def history_weight(text):
    """An argparse type: HANDS=WEIGHT, e.g. 10=2."""
    hands, _, weight = text.partition("=")
    try:
        value = (int(hands), float(weight))
    except ValueError:
        value = (-1, -1.0)
    if value[0] < 0 or value[1] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: want HANDS=WEIGHT, HANDS the finished hands a frame keeps "
                                         "beyond which it weighs more, WEIGHT a number of 1 or more (10=2)")
    return value


def with_long_history(drawn, weight, rng):
    """`drawn`, with its decisions whose frame keeps more than `hands`
    finished hands in it `times` times in all ((hands, times) = `weight`):
    a causal pass over a long history is where `full` drifts from its target
    (docs/measured.md, round 11), so training leans there."""
    hands, times = weight
    long = [r for r in drawn if len((r.get("frame") or {}).get("history") or []) > hands]
    return drawn + draw(long, round((times - 1) * len(long)), rng)


def balanced(records, per_class, by, rng, weights=()):
    """The decisions among `records` drawn `per_class` times for each action
    class (with `by` "situation": for each situation and class; a cell with
    fewer than MIN_SITUATION_RECORDS is left out), 0 meaning the largest
    cell's count; `weights`, (class, weight) pairs, scale a class's count.
    Returns the draw, the records without an action target and a line saying
    what each cell held."""
    by_class = collections.defaultdict(list)
    others = []
    for record in records:
        action = action_of(record)
        if not action:
            others.append(record)
        else:
            by_class[(situation_of(record) if by == "situation" else "", action)].append(record)
    missing = [c for c in CLASSES if c not in {action for _, action in by_class}]
    if missing:
        sys.exit(f"no decisions whose target is {', '.join(missing)}: record more matches")
    cells = sorted((key for key in by_class if not key[0] or len(by_class[key]) >= MIN_SITUATION_RECORDS),
                   key=lambda cell: (cell[0], CLASSES.index(cell[1])))
    per_class = per_class or max(len(by_class[key]) for key in cells)
    weight = dict(weights)
    drawn = [r for key in cells for r in draw(by_class[key], round(per_class * weight.get(key[1], 1)), rng)]
    found = ", ".join(f"{' '.join(key).strip()} {len(by_class[key])}" for key in cells)
    scaled = "".join(f", {action} x{value:g}" for action, value in weight.items())
    return drawn, others, f"{found} -> {per_class} per class{scaled}"


def read_records(path):
    """The JSON records of a JSONL file; exits saying which line is not JSON."""
    records = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON ({e}); regenerate the file with kvframe-holdem --dataset")
    return records


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, action="append", help="decisions (JSONL); repeat for several files")
    p.add_argument("--per-class", type=int, default=0,
                   help="records per action class, or per situation and class with --by situation "
                        "(default: the largest one's count)")
    p.add_argument("--by", choices=("action", "situation"), default="action",
                   help="balance the action classes overall, or within each situation (preflop or postflop, "
                        "facing a bet or checked to)")
    p.add_argument("--class-weight", type=class_weight, action="append", default=[], metavar="CLASS=WEIGHT",
                   help="draw CLASS WEIGHT times as often as the others (repeatable): check=2 where the target "
                        "checks more often than it bets when checked to")
    p.add_argument("--other-share", type=float, default=0.05,
                   help="most share of the output that records without an action target may take")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--out", required=True, help="the balanced set (JSONL)")
    args = p.parse_args()
    rng = random.Random(args.seed)

    out, others, found = balanced([r for path in args.data for r in read_records(path)], args.per_class, args.by, rng,
                                 args.class_weight)
    other_count = min(len(others), int(args.other_share * len(out) / max(1e-9, 1 - args.other_share)))
    out += rng.sample(others, other_count)
    rng.shuffle(out)
    with open(args.out, "w", encoding="utf-8") as f:
        for record in out:
            f.write(json.dumps(record) + "\n")
    print(f"balanced: {found}, other {len(others)} -> + {other_count} other = {len(out)} records in {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
