#!/usr/bin/env python3
"""bench/bot_decisions.py's sums over a handful of hand-written decisions.

Standard library only: runs as a script (ctest bench_bot_aggregation) and
under pytest."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import bot_decisions as bd  # noqa: E402


def answer(mode, action, p=None, tokens=10):
    a = {"mode": mode, "action": action, "tokens_encoded": tokens}
    if p is not None:
        a["p"] = p
    return a


# block plays, full answers beside it. Decision by decision:
#  1  tag fold:  block raise, full fold (full leads by 0.6)
#  2  tag check: block raise, full check (full leads by 0.2)
#  3  tag check: block check, full check (full leads by 0.05)
#  4  tag raise: block raise, full raise (full leads by 1.0)
#  5  tag call:  block invalid, full call (no probabilities from block)
RECORDS = [
    {"tag": "fold", "modes": [answer("block", "raise", {"fold": 0.3, "call": 0.0, "raise": 0.7}, 50),
                              answer("full", "fold", {"fold": 0.8, "call": 0.0, "raise": 0.2}, 5000)]},
    {"tag": "check", "modes": [answer("block", "raise", {"fold": 0.0, "check": 0.4, "raise": 0.6}, 30),
                               answer("full", "check", {"fold": 0.0, "check": 0.6, "raise": 0.4}, 5100)]},
    {"tag": "check", "modes": [answer("block", "check", {"fold": 0.0, "check": 0.5, "raise": 0.5}, 40),
                               answer("full", "check", {"fold": 0.0, "check": 0.525, "raise": 0.475}, 5200)]},
    {"tag": "raise", "modes": [answer("block", "raise", {"fold": 0.0, "call": 0.0, "raise": 1.0}, 20),
                               answer("full", "raise", {"fold": 0.0, "call": 0.0, "raise": 1.0}, 5300)]},
    {"tag": "call", "modes": [answer("block", "invalid", None, 60),
                              answer("full", "call", {"fold": 0.1, "call": 0.9}, 5400)]},
]


class VersusTag(unittest.TestCase):
    def test_per_class_agreement_counts_invalid_as_missed(self):
        block = bd.versus_tag(RECORDS, "block")
        self.assertEqual((block["agree"], block["decisions"]), (2, 5))
        self.assertEqual(block["per_class"], {"fold": [0, 1], "check": [1, 2], "call": [0, 1], "raise": [1, 1]})
        full = bd.versus_tag(RECORDS, "full")
        self.assertEqual((full["agree"], full["decisions"]), (5, 5))


class CompareModes(unittest.TestCase):
    def setUp(self):
        self.c = bd.compare_modes(RECORDS, "full", "block")

    def test_direction_matrix_rows_are_the_measured_mode(self):
        self.assertEqual((self.c["same"], self.c["decisions"]), (2, 5))
        self.assertEqual(self.c["matrix"]["raise"]["fold"], 1)
        self.assertEqual(self.c["matrix"]["raise"]["check"], 1)
        self.assertEqual(self.c["matrix"]["invalid"]["call"], 1)
        self.assertEqual(self.c["directions"], {("raise", "fold"): 1, ("raise", "check"): 1, ("invalid", "call"): 1})

    def test_where_they_part_the_target_sides_with_one_or_neither(self):
        # decisions 1, 2 and 5 part: tag took full's fold, full's check and full's call
        self.assertEqual(self.c["sides"], {"block": 0, "full": 3, "neither": 0})
        parted = [{"tag": "raise", "modes": [answer("block", "raise"), answer("full", "check")]},
                  {"tag": "call", "modes": [answer("block", "raise"), answer("full", "fold")]},
                  {"tag": "fold", "modes": [answer("block", "fold"), answer("full", "fold")]}]
        self.assertEqual(bd.compare_modes(parted, "full", "block")["sides"], {"block": 1, "full": 0, "neither": 1})

    def test_kl_over_the_decisions_with_both_distributions(self):
        first = 0.8 * math.log(0.8 / 0.3) + 0.2 * math.log(0.2 / 0.7)
        second = 0.6 * math.log(0.6 / 0.4) + 0.4 * math.log(0.4 / 0.6)
        third = 0.525 * math.log(0.525 / 0.5) + 0.475 * math.log(0.475 / 0.5)
        kls = sorted([first, second, third, 0.0])
        self.assertEqual(self.c["kl"]["n"], 4)
        self.assertAlmostEqual(self.c["kl"]["mean"], sum(kls) / 4)
        self.assertAlmostEqual(self.c["kl"]["median"], kls[1])  # nearest rank: the 2nd of 4
        self.assertAlmostEqual(self.c["kl"]["p90"], kls[3])

    def test_margin_agreement_counts_where_the_reference_leads(self):
        # leads: 0.6, 0.2, 0.05, 1.0 (decision 5 has no block distribution)
        self.assertEqual(self.c["margins"][0.1], [1, 3])
        self.assertEqual(self.c["margins"][0.3], [1, 2])

    def test_tokens_encoded_per_decision(self):
        self.assertAlmostEqual(self.c["tokens_encoded"]["block"], 40.0)
        self.assertAlmostEqual(self.c["tokens_encoded"]["full"], 5200.0)

    def test_a_zero_probability_is_floored_not_infinite(self):
        self.assertTrue(math.isfinite(bd.kl({"fold": 1.0}, {"fold": 0.0, "raise": 1.0})))


class Report(unittest.TestCase):
    def test_names_the_one_sided_direction(self):
        # block played; full is still the reference of KL and margins
        text = bd.report_text(RECORDS, ["block", "full"])
        self.assertIn("`block` = `full`: 2 of 5 (40.0%)", text)
        self.assertIn("disagreements 3; the most one way: block raise where full fold, 1 (33% of them)", text)
        self.assertIn("KL(full || block) of the action kinds, nats, over 4 decisions", text)
        self.assertIn("where full's top action leads by >= 0.3: 1 of 2 (50.0%)", text)
        self.assertEqual(bd.reference_pair("full", "block"), ("full", "block"))


if __name__ == "__main__":
    unittest.main()
