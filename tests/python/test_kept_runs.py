#!/usr/bin/env python3
"""bench/kept_runs.py: a kept result is read back, not computed again, and a
file's identity follows its content. Standard library only."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import kept_runs  # noqa: E402


class Kept(unittest.TestCase):
    def test_a_kept_result_is_read_back_instead_of_computed(self):
        calls = []

        def compute():
            calls.append(1)
            return {"hands": 2, "seats": ["llm", "tag"]}

        with tempfile.TemporaryDirectory() as folder:
            first = kept_runs.kept(folder, "match-1", compute)
            second = kept_runs.kept(folder, "match-1", compute)
            self.assertEqual(first, second)
            self.assertEqual(len(calls), 1)
            self.assertEqual(os.listdir(folder), ["match-1.json"])  # no .part left behind

    def test_without_a_folder_it_computes_every_time(self):
        calls = []
        kept_runs.kept("", "k", lambda: calls.append(1))
        kept_runs.kept("", "k", lambda: calls.append(1))
        self.assertEqual(len(calls), 2)


class FileIdentity(unittest.TestCase):
    def test_the_same_name_with_other_content_is_another_identity(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "adapter.gguf")
            with open(path, "wb") as f:
                f.write(b"round 10")
            before = kept_runs.file_identity(path)
            with open(path, "wb") as f:
                f.write(b"round 11")
            after = kept_runs.file_identity(path)
            self.assertTrue(before.startswith("adapter.gguf."))
            self.assertNotEqual(before, after)

    def test_words_that_name_no_file_are_kept_as_they_are(self):
        self.assertEqual(kept_runs.file_identity("auto"), "auto")
        self.assertEqual(kept_runs.file_identity(""), "default")


if __name__ == "__main__":
    unittest.main()
