"""examples/python/holdem_pokerkit.py: a few hands of PokerKit's Hold'em played through kvframe."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "python" / "holdem_pokerkit.py"
DEPS = Path(os.environ.get("KVFRAME_PYTHON_DEPS") or Path.home() / ".cache" / "kvframe" / "python")


def run_example(venv_python, *args, timeout=240):
    return subprocess.run([str(venv_python), str(EXAMPLE), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "KVFRAME_PYTHON_DEPS": str(DEPS)})


def test_help_and_usage_errors(venv_python):
    done = run_example(venv_python, "--help")
    assert done.returncode == 0 and "--hands" in done.stdout and "--server" in done.stdout
    assert run_example(venv_python, "--hands", "0").returncode == 1
    assert run_example(venv_python, "--seats", "9").returncode == 1


def test_two_hands_with_no_invalid_action(venv_python, server):
    if not (DEPS / "site" / "pokerkit" / "__init__.py").is_file():
        pytest.skip(f"pokerkit is not in {DEPS}/site: run scripts/fetch-python-deps.sh (downloads PokerKit 0.7.7)")
    done = run_example(venv_python, "--hands", "2", "--server", server.endpoint, "--seed", "7")
    print(done.stdout[-3000:], done.stderr[-2000:])
    assert done.returncode == 0, done.stderr
    assert "invalid actions: 0" in done.stdout
    decisions = int(done.stdout.split("decisions: ")[1].split(",")[0])
    assert decisions >= 2
    assert "merge_patch" in done.stdout  # frames after a seat's first went as patches


def test_a_seat_past_its_deadline_plays_the_fallback_move(venv_python, server):
    if not (DEPS / "site" / "pokerkit" / "__init__.py").is_file():
        pytest.skip(f"pokerkit is not in {DEPS}/site: run scripts/fetch-python-deps.sh (downloads PokerKit 0.7.7)")
    # 1 ms is less than any answer takes: the server refuses each question at once (Deadline),
    # or the wait runs out, and the hand goes on with checks and calls.
    done = run_example(venv_python, "--hands", "1", "--server", server.endpoint, "--seed", "7", "--deadline-ms", "1")
    print(done.stdout[-3000:], done.stderr[-2000:])
    assert done.returncode == 0, done.stderr
    assert "invalid actions: 0" in done.stdout
    decisions = int(done.stdout.split("decisions: ")[1].split(",")[0])
    fallbacks = int(done.stdout.split("fallbacks: ")[1].split(",")[0])
    assert decisions >= 2 and fallbacks >= 1, done.stdout
    assert "no answer in time" in done.stderr
