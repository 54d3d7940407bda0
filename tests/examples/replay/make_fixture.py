#!/usr/bin/env python3
"""A deterministic match record for the replay page test (replay_html.h format).

Three hands at a six-seat table, one LLM seat (p1 "Ada") whose decisions carry
samples for the modes "block" and "full"; comment steps; a showdown (hand 1),
a hand won without showdown that has a comment early on (hand 2), and a split
pot (hand 3). Chips are tracked for real: pot, stacks and bets add up.

    make_fixture.py OUT.json            the full record
    make_fixture.py --minimal OUT.json  no LLM seat, no decisions, no modes,
                                        no report, optional step fields left out

The test imports this module (record(), minimal_record(), EXPECT) rather than
running it; the command line is for looking at the fixture by hand.
"""
import json
import random
import sys

BIG_BLIND = 10
SMALL_BLIND = 5
START = 1000
MODES = ["block", "full"]

PLAYERS = [
    {"id": "p1", "name": "Ada", "kind": "llm"},
    {"id": "p2", "name": "Boris", "kind": "tag"},
    {"id": "p3", "name": "Chiara", "kind": "station"},
    {"id": "p4", "name": "Dmitri", "kind": "random"},
    {"id": "p5", "name": "Esme", "kind": "tag"},
    {"id": "p6", "name": "Farouk", "kind": "station"},
]

# What the test checks at given spots (hand is 1-based, step 0-based).
EXPECT = {
    "hand2_step5_comment": "Esme opens from early position",
    "hand1_escape_comment": "Ada thinks </script><!-- nothing closes here",
    "hand3_split_text": "Chiara and Esme split the pot",
}


class Hand:
    """Builds one hand's steps while keeping pot, stacks and bets consistent."""

    def __init__(self, number, button, stacks, hole, decisions, rng, llm_seat):
        self.number = number
        self.id = "hand_%04d" % number
        self.button = button
        self.start = list(stacks)
        self.stacks = list(stacks)
        self.hole = hole
        self.n = len(stacks)
        self.bets = [0] * self.n
        self.folded = [False] * self.n
        self.pot = 0
        self.board = []
        self.street = "preflop"
        self.steps = []
        self.decisions = decisions
        self.rng = rng
        self.llm_seat = llm_seat
        self._step("deal", "%s, %s on the button" % (self.id, PLAYERS[button]["id"]))

    def _step(self, kind, text, **extra):
        step = {"kind": kind, "street": self.street, "board": list(self.board), "pot": self.pot,
                "stacks": list(self.stacks), "bets": list(self.bets), "folded": list(self.folded),
                "text": text}
        step.update(extra)
        self.steps.append(step)
        return step

    def _put(self, seat, to):
        """Seat's bet this street becomes `to`; returns the chips added."""
        add = to - self.bets[seat]
        self.stacks[seat] -= add
        self.bets[seat] = to
        self.pot += add
        return add

    def blind(self, seat, amount, what):
        self._put(seat, amount)
        return self._step("action", "%s posts %s %d" % (PLAYERS[seat]["id"], what, amount),
                          seat=seat, action="post", amount=amount)

    def act(self, seat, action, to=0):
        if action == "fold":
            self.folded[seat] = True
            text = "%s folds" % PLAYERS[seat]["id"]
            amount = 0
        elif action == "check":
            text = "%s checks" % PLAYERS[seat]["id"]
            amount = 0
        elif action == "call":
            amount = self._put(seat, max(self.bets))
            text = "%s calls %d" % (PLAYERS[seat]["id"], amount)
        else:  # bet / raise: to a total of `to` this street
            self._put(seat, to)
            amount = to
            text = "%s %s %d" % (PLAYERS[seat]["id"], "raises to" if action == "raise" else "bets", to)
        extra = {"seat": seat, "action": action, "amount": amount}
        if seat == self.llm_seat:
            extra["decision"] = self._decision(seat, action, amount)
        return self._step("action", text, **extra)

    def _decision(self, seat, action, amount):
        rng = self.rng
        prompt = 2900 + 40 * len(self.steps) + rng.randint(0, 60)
        answer = json.dumps({"action": action, "amount": amount})
        block_ttft = round(70 + rng.random() * 45, 1)
        full_ttft = round(block_ttft + 180 + rng.random() * 160, 1)
        decode = round(250 + rng.random() * 120, 1)
        samples = {
            "block": {"ttft_ms": block_ttft, "total_ms": round(block_ttft + decode, 1),
                      "tokens_encoded": 60 + rng.randint(0, 70), "tokens_prompt": prompt,
                      "answer": answer, "valid": True},
            "full": {"ttft_ms": full_ttft, "total_ms": round(full_ttft + decode + rng.random() * 20, 1),
                     "tokens_encoded": prompt, "tokens_prompt": prompt,
                     "answer": answer, "valid": True},
        }
        self.decisions.append({"hand": self.number, "seat": seat, "street": self.street,
                               "action": action, "samples": samples, "agree": True})
        return len(self.decisions) - 1

    def next_street(self, street, cards):
        self.street = street
        self.board += cards
        self.bets = [0] * self.n
        return self._step("street", "%s: %s" % (street, " ".join(self.board)))

    def comment(self, text):
        return self._step("comment", text)

    def result(self, winners, text, showdown=False):
        share, rest = divmod(self.pot, len(winners))
        for i, w in enumerate(winners):
            self.stacks[w] += share + (1 if i < rest else 0)
        self.bets = [0] * self.n
        if showdown:
            self.street = "showdown"
        step = self._step("result", text, winners=list(winners))
        self.pot = 0
        return step

    def record(self):
        return {"number": self.number, "id": self.id, "button": self.button,
                "start_stacks": self.start, "hole": self.hole, "steps": self.steps,
                "net": [s - t for s, t in zip(self.stacks, self.start)]}


def record():
    rng = random.Random(7)
    decisions = []
    stacks = [START] * 6

    def deal(number, button, hole):
        """A hand on the current stacks, Ada the LLM seat, blinds posted left of the button."""
        h = Hand(number, button, stacks, hole, decisions, rng, llm_seat=0)
        h.blind((button + 1) % len(stacks), SMALL_BLIND, "small blind")
        h.blind((button + 2) % len(stacks), BIG_BLIND, "big blind")
        return h

    # Hand 1: Ada (LLM) raises, two callers, a showdown with two pair.
    h = deal(1, 0, [["Ah", "Kd"], ["9c", "9d"], ["Qs", "Jh"], ["7s", "2c"], ["Tc", "8c"], ["5h", "5s"]])
    h.act(3, "fold")
    h.act(4, "call")
    h.act(5, "fold")
    h.act(0, "raise", 35)
    h.comment(EXPECT["hand1_escape_comment"])
    h.act(1, "call")
    h.act(2, "fold")
    h.act(4, "call")
    h.next_street("flop", ["As", "7c", "Kh"])
    h.act(1, "check")
    h.act(4, "check")
    h.act(0, "bet", 60)
    h.comment("Top two pair for Ada: the c-bet is for value.")
    h.act(1, "call")
    h.act(4, "fold")
    h.next_street("turn", ["2d"])
    h.act(1, "check")
    h.act(0, "bet", 150)
    h.act(1, "call")
    h.next_street("river", ["3h"])
    h.act(1, "check")
    h.act(0, "check")
    h.result([0], "Ada wins %d with two pair, aces and kings" % h.pot, showdown=True)
    hand1 = h.record()
    stacks = [s + n for s, n in zip(stacks, hand1["net"])]

    # Hand 2: Esme opens, the comment comes at step 4, Ada 3-bets, all fold.
    h = deal(2, 1, [["Qc", "Qd"], ["Ad", "Jc"], ["8h", "6h"], ["Ks", "4d"], ["3c", "3s"], ["Jd", "Td"]])
    h.act(4, "raise", 30)
    h.comment(EXPECT["hand2_step5_comment"] + ": a standard 3x raise.")
    h.act(5, "call")
    h.act(0, "raise", 110)
    h.comment("Ada squeezes with queens; Boris has to think.")
    h.act(1, "fold")
    h.act(2, "fold")
    h.act(3, "fold")
    h.act(4, "fold")
    h.act(5, "fold")
    h.result([0], "Ada wins %d uncontested" % h.pot)
    hand2 = h.record()
    stacks = [s + n for s, n in zip(stacks, hand2["net"])]

    # Hand 3: the board plays a straight, Chiara and Esme split.
    h = deal(3, 2, [["Kc", "2s"], ["4h", "4c"], ["Ac", "6d"], ["9h", "3d"], ["Kh", "6s"], ["8s", "8d"]])
    h.act(5, "fold")
    h.act(0, "call")
    h.act(1, "fold")
    h.act(2, "call")
    h.act(3, "fold")
    h.act(4, "check")
    h.next_street("flop", ["Ts", "Jd", "Qh"])
    h.act(4, "check")
    h.act(0, "check")
    h.act(2, "bet", 20)
    h.act(4, "call")
    h.act(0, "fold")
    h.next_street("turn", ["Kd"])
    h.comment("Broadway on board: whoever holds an ace takes it all.")
    h.act(4, "check")
    h.act(2, "check")
    h.next_street("river", ["As"])
    h.act(4, "check")
    h.act(2, "check")
    h.result([2, 4], EXPECT["hand3_split_text"] + " (%d), the board plays a straight" % h.pot, showdown=True)
    hand3 = h.record()

    hands = [hand1, hand2, hand3]
    # One decision where the modes chose differently, to exercise the chart.
    decisions[-1]["agree"] = False
    decisions[-1]["samples"]["full"]["answer"] = json.dumps({"action": "call", "amount": 20})

    net = [sum(hd["net"][i] for hd in hands) for i in range(6)]
    report = {
        "hands": len(hands), "seed": 7, "big_blind": BIG_BLIND,
        "standings": [{"seat": i, "id": p["id"], "name": p["name"], "kind": p["kind"], "net": net[i],
                       "bb_per_100": round(net[i] / BIG_BLIND * 100 / len(hands), 1)}
                      for i, p in enumerate(PLAYERS)],
        "llm": {"decisions": len(decisions), "agree_rate": round(
            sum(1 for d in decisions if d["agree"]) / len(decisions), 3),
            "modes": {m: {"ttft_ms_mean": round(sum(d["samples"][m]["ttft_ms"] for d in decisions) / len(decisions), 1),
                          "total_ms_mean": round(sum(d["samples"][m]["total_ms"] for d in decisions) / len(decisions), 1)}
                      for m in MODES}},
    }
    return {"title": "kvframe-holdem \u00b7 seed 7 \u00b7 3 hands", "seed": 7, "big_blind": BIG_BLIND,
            "modes": MODES, "players": PLAYERS, "hands": hands, "decisions": decisions, "report": report}


def minimal_record():
    """Rule bots only, and only the fields a page cannot do without."""
    full = record()
    players = [{"id": p["id"], "name": p["name"]} for p in PLAYERS]
    players[0]["kind"] = "tag"
    hands = []
    for hd in full["hands"]:
        steps = []
        for k, s in enumerate(hd["steps"]):
            keep = {key: s[key] for key in ("kind", "street", "text", "seat", "action", "winners") if key in s}
            if k % 3 == 0:  # now and then the full state, otherwise carried forward
                keep.update({key: s[key] for key in ("pot", "stacks", "board") if key in s})
            steps.append(keep)
        hands.append({"number": hd["number"], "steps": steps, "hole": hd["hole"]})
    return {"players": players, "hands": hands, "decisions": []}


def main(argv):
    minimal = "--minimal" in argv
    paths = [a for a in argv if not a.startswith("--")]
    if len(paths) != 1:
        sys.stderr.write("usage: make_fixture.py [--minimal] OUT.json\n")
        return 2
    with open(paths[0], "w", encoding="utf-8") as f:
        json.dump(minimal_record() if minimal else record(), f, indent=1, ensure_ascii=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
