#!/usr/bin/env python3
"""Replays kvframe-holdem's hand histories in PokerKit, an independent engine.

Reads a .phhs file written by `kvframe-holdem --hand-history FILE`, plays every
hand's actions in PokerKit (which checks each one against its own rules:
whose turn it is, minimum raises, reopened betting, side pots) and compares
PokerKit's stacks at the end of the hand with the `finishing_stacks` kvframe
recorded.

    python3 check_phh.py m.phhs            # a summary; exit 0 when every hand agrees
    python3 check_phh.py m.phhs --show 5   # and the first 5 differing hands

A hand differs either because PokerKit refused an action (a rules
disagreement) or because the chips ended elsewhere. Odd chips of split pots
are reported apart: kvframe deals them one each to the winners nearest the
button's left, as cardrooms do (Robert's Rules of Poker: the odd chip goes to
the first hand clockwise from the button); PokerKit 0.7.7 gives the whole
remainder to the first winner in PHH player order. A pot split three ways
with two odd chips therefore ends one chip apart.

PokerKit comes from PyPI (pokerkit==0.7.7, fetched by scripts/fetch-python-deps.sh);
put it on PYTHONPATH. Exit status: 0 all hands agree (odd chips aside),
1 usage or input error, 2 PokerKit missing, 3 some hand differs.
"""
import argparse
import sys
import warnings

try:
    from pokerkit import HandHistory
except ImportError:
    print("check_phh: PokerKit is not importable: run scripts/fetch-python-deps.sh and put the "
          "folder it prints on PYTHONPATH", file=sys.stderr)
    sys.exit(2)


def replay(history):
    """PokerKit's finishing stacks for one hand, or the error it raised."""
    with warnings.catch_warnings():
        # PokerKit warns about legal-but-odd moves (folding when checking is free).
        warnings.simplefilter("ignore")
        state = None
        for state in history:
            pass
    return list(state.stacks)


def is_odd_chip_split(history, theirs):
    """True when the hands differ only by odd chips among players who won a share."""
    ours = history.finishing_stacks
    delta = [a - b for a, b in zip(theirs, ours)]
    winners = sum(1 for s, f in zip(history.starting_stacks, ours) if f > s)
    return sum(delta) == 0 and max(abs(d) for d in delta) <= max(1, winners) and winners >= 2


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phhs", help="a .phhs file from kvframe-holdem --hand-history")
    parser.add_argument("--show", type=int, default=3, help="differing hands to print (default 3)")
    args = parser.parse_args()
    try:
        with open(args.phhs, "rb") as f:
            histories = list(HandHistory.load_all(f))
    except (OSError, ValueError) as e:
        print(f"check_phh: cannot read {args.phhs}: {e}", file=sys.stderr)
        return 1

    agree, odd_chips, refused, differ = 0, [], [], []
    for history in histories:
        try:
            theirs = replay(history)
        except (ValueError, AssertionError) as e:
            refused.append((history.hand, str(e)))
            continue
        if theirs == list(history.finishing_stacks):
            agree += 1
        elif is_odd_chip_split(history, theirs):
            odd_chips.append((history.hand, theirs, history.finishing_stacks))
        else:
            differ.append((history.hand, theirs, history.finishing_stacks))

    print(f"{len(histories)} hands replayed in PokerKit: {agree} identical, "
          f"{len(odd_chips)} differ by odd chips of a split pot only, "
          f"{len(differ)} differ otherwise, {len(refused)} refused by PokerKit")
    for hand, theirs, ours in (odd_chips + differ)[:args.show]:
        print(f"  hand {hand}: PokerKit {theirs}, kvframe {ours}")
    for hand, error in refused[:args.show]:
        print(f"  hand {hand}: PokerKit refused: {error}")
    return 0 if not differ and not refused else 3


if __name__ == "__main__":
    sys.exit(main())
