"""The LLM bot's decisions as every mode answered them, added up.

kvframe-holdem --json writes, per LLM seat, `records`: each decision with the
tight-aggressive bot's action and, per mode, the action's kind and the action
kinds' probabilities at the answer's action choice (examples/holdem/
action_choice.h). The first mode played; the others answered the same states
beside it. From them, for any two modes (the reference and the one measured):
each mode's agreement with the tag bot per class, the direction of every
disagreement between the two (a matrix), KL(reference || mode) of the action
distributions, agreement where the reference's top action leads by a margin,
and the tokens each encoded per decision. bench/bench_bot.py prints it; run
alone, this prints it for records kept by bench_bot.py --records (several
runs' together: the same table over more decisions):

    python3 bench/bot_decisions.py --modes block,full run1.records.json run2.records.json
"""
import argparse
import json
import math

KINDS = ("fold", "check", "call", "raise")
MARGINS = (0.1, 0.3)
# A probability the report rounds to 0 (or a kind outside the 8 likeliest
# tokens) still has some: KL needs it finite.
FLOOR = 1e-6


def answer_of(record, mode):
    return next((a for a in record["modes"] if a["mode"] == mode), None)


def kl(p, q):
    """KL(p || q) in nats over the action kinds either names."""
    return sum(pk * math.log(pk / max(q.get(k, 0.0), FLOOR)) for k, pk in p.items() if pk > 0)


def percentile(values, share):
    """Nearest rank, as kvframe-holdem's report takes it."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = math.ceil(share * len(ordered))
    return ordered[min(len(ordered) - 1, max(0, rank - 1))]


def leader_margin(p):
    ranked = sorted(p.values(), reverse=True) + [0.0]
    return ranked[0] - ranked[1]


def versus_tag(records, mode):
    """The mode's agreement with the tag bot's action: overall and per class (the tag bot's action)."""
    per_class = {k: [0, 0] for k in KINDS}
    for record in records:
        answer = answer_of(record, mode)
        if answer is None or record["tag"] not in per_class:
            continue
        per_class[record["tag"]][1] += 1
        per_class[record["tag"]][0] += answer["action"] == record["tag"]
    agreed = sum(a for a, _ in per_class.values())
    total = sum(n for _, n in per_class.values())
    return {"agree": agreed, "decisions": total, "per_class": per_class}


def compare_modes(records, reference, mode):
    """`mode` against `reference` on the decisions both answered."""
    rows = KINDS + ("invalid",)
    matrix = {r: dict.fromkeys(rows, 0) for r in rows}  # matrix[mode's kind][reference's kind]
    same = 0
    sides = {mode: 0, reference: 0, "neither": 0}  # where they part: whose action the target took
    kls = []
    margins = {m: [0, 0] for m in MARGINS}
    tokens = {reference: [], mode: []}
    for record in records:
        ref, got = answer_of(record, reference), answer_of(record, mode)
        if ref is None or got is None:
            continue
        matrix[got["action"]][ref["action"]] += 1
        same += got["action"] == ref["action"]
        if got["action"] != ref["action"]:
            sides[mode if record["tag"] == got["action"] else reference if record["tag"] == ref["action"]
                  else "neither"] += 1
        tokens[reference].append(ref["tokens_encoded"])
        tokens[mode].append(got["tokens_encoded"])
        if "p" in ref and "p" in got:
            kls.append(kl(ref["p"], got["p"]))
            lead = leader_margin(ref["p"])
            for m in MARGINS:
                if lead >= m:
                    margins[m][1] += 1
                    margins[m][0] += got["action"] == ref["action"]
    compared = sum(sum(row.values()) for row in matrix.values())
    directions = {(g, r): n for g, row in matrix.items() for r, n in row.items() if g != r and n}
    return {"decisions": compared, "same": same, "matrix": matrix, "directions": directions, "sides": sides,
            "kl": {"n": len(kls), "mean": sum(kls) / len(kls) if kls else 0.0,
                   "median": percentile(kls, 0.5), "p90": percentile(kls, 0.9)},
            "margins": margins,
            "tokens_encoded": {m: sum(v) / len(v) if v else 0.0 for m, v in tokens.items()}}


def share(agreed, total):
    return f"{agreed} of {total} ({100 * agreed / total:.1f}%)" if total else "-"


def reference_pair(played, mode):
    """(reference, measured): `full` is the reference wherever it answered, so
    KL is KL(full || other) and margins are full's whichever mode played."""
    return (mode, played) if mode == "full" else (played, mode)


def report_text(records, modes):
    """The table bench_bot.py prints: modes[0] played, each other mode against it."""
    lines = []
    tag = {m: versus_tag(records, m) for m in modes}
    lines.append("the tight-aggressive bot's action, on the same decisions (by its class):")
    lines.append(f"  {'mode':<7}{'all':>22}" + "".join(f"{k:>20}" for k in KINDS))
    for m in modes:
        t = tag[m]
        lines.append(f"  {m:<7}{share(t['agree'], t['decisions']):>22}" +
                     "".join(f"{share(*t['per_class'][k]):>20}" for k in KINDS))
    for other in modes[1:]:
        ref, mode = reference_pair(modes[0], other)
        c = compare_modes(records, ref, mode)
        lines.append(f"\n`{mode}` = `{ref}`: {share(c['same'], c['decisions'])}")
        lines.append(f"  {mode} \\ {ref} " + "".join(f"{k:>8}" for k in KINDS + ('invalid',)))
        for row, counts in c["matrix"].items():
            if sum(counts.values()):
                lines.append(f"  {row:<{len(mode) + len(ref) + 3}} " + "".join(f"{n:>8}" for n in counts.values()))
        parted = c["decisions"] - c["same"]
        if parted:
            worst = max(c["directions"].items(), key=lambda kv: kv[1])
            lines.append(f"  disagreements {parted}; the most one way: {mode} {worst[0][0]} where {ref} "
                         f"{worst[0][1]}, {worst[1]} ({100 * worst[1] / parted:.0f}% of them)")
            lines.append("  where they part, the tight-aggressive bot's action is " +
                         ", ".join(f"{side}'s on {n}" for side, n in c["sides"].items()))
        k = c["kl"]
        lines.append(f"  KL({ref} || {mode}) of the action kinds, nats, over {k['n']} decisions: "
                     f"mean {k['mean']:.4f}, median {k['median']:.4f}, p90 {k['p90']:.4f}")
        for m, (agreed, total) in c["margins"].items():
            lines.append(f"  where {ref}'s top action leads by >= {m}: {share(agreed, total)}")
        lines.append("  tokens encoded per decision: " +
                     ", ".join(f"{m} {v:.1f}" for m, v in c["tokens_encoded"].items()))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description="bench_bot.py's per-decision table from kept records")
    p.add_argument("records", nargs="+", help="files bench_bot.py --records wrote")
    p.add_argument("--modes", default="block,full", help="as the runs were played: the first played")
    args = p.parse_args()
    records = []
    for name in args.records:
        with open(name) as f:
            records += json.load(f)
    print(f"{len(records)} decisions\n" + report_text(records, args.modes.split(",")))


if __name__ == "__main__":
    main()
