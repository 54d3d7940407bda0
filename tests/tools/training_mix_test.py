#!/usr/bin/env python3
"""scripts/balance_actions.py's draw, which the adapter recipes build their
Hold'em training mixes from: every situation's classes at the asked count,
a class weight scaling its own cells only, long-history frames weighted,
and a bad weight refused."""
import argparse
import collections
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from balance_actions import (action_of, balanced, class_weight, history_weight, situation_of,  # noqa: E402
                             with_long_history)


def decision(street, to_call, action):
    return {"frame": {"state": {"street": street}, "your_read": {"to_call": to_call}},
            "target": f'{{"action": "{action}"}}'}


RECORDS = ([decision("flop", 0, "check")] * 60 + [decision("flop", 0, "raise")] * 25
           + [decision("preflop", 10, "fold")] * 40 + [decision("preflop", 10, "call")] * 21
           + [decision("preflop", 10, "raise")] * 19 + [{"target": "a remark"}] * 3)


def cells(drawn):
    return collections.Counter((situation_of(r), action_of(r)) for r in drawn)


CHECKED_TO, FACING = "postflop, checked to", "preflop, facing a bet"


class BalancedDraw(unittest.TestCase):
    def test_each_situation_and_class_drawn_alike(self):
        drawn, others, _ = balanced(RECORDS, 30, "situation", random.Random(1))
        # preflop raises (19) are too few to repeat: left out
        self.assertEqual(cells(drawn), {(CHECKED_TO, "check"): 30, (CHECKED_TO, "raise"): 30,
                                        (FACING, "fold"): 30, (FACING, "call"): 30})
        self.assertEqual(len(others), 3, "records without an action target come back apart")

    def test_a_class_weight_scales_only_its_cells(self):
        drawn, _, found = balanced(RECORDS, 30, "situation", random.Random(1), [class_weight("check=2")])
        self.assertEqual(cells(drawn), {(CHECKED_TO, "check"): 60, (CHECKED_TO, "raise"): 30,
                                        (FACING, "fold"): 30, (FACING, "call"): 30})
        self.assertIn("check x2", found)

    def test_a_bad_weight_says_what_is_wanted(self):
        for text in ("chek=2", "check=0", "check=two", "check"):
            with self.assertRaisesRegex(argparse.ArgumentTypeError, "CLASS=WEIGHT"):
                class_weight(text)


class LongHistory(unittest.TestCase):
    def test_frames_past_the_hands_are_drawn_weight_times_in_all(self):
        def kept(hands):
            return {**decision("flop", 0, "check"), "frame": {"history": [{}] * hands}, "hands": hands}

        drawn = [kept(2)] * 10 + [kept(10)] * 10 + [kept(11)] * 6
        weighted = with_long_history(drawn, history_weight("10=3"), random.Random(1))
        self.assertEqual(collections.Counter(r["hands"] for r in weighted), {2: 10, 10: 10, 11: 18})
        self.assertEqual(with_long_history(drawn, history_weight("30=2"), random.Random(1)), drawn)

    def test_a_bad_history_weight_says_what_is_wanted(self):
        for text in ("10", "ten=2", "10=0.5", "-1=2"):
            with self.assertRaisesRegex(argparse.ArgumentTypeError, "HANDS=WEIGHT"):
                history_weight(text)


if __name__ == "__main__":
    unittest.main()
