"""adapters/python/README.md's snippet, run exactly as written against a real server."""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

from helpers import fenced_block

README = Path(__file__).resolve().parents[2] / "adapters" / "python" / "README.md"
MARKER = "<!-- readme-snippet:"


def snippet() -> str:
    return fenced_block(README.read_text(), MARKER, "python")


def test_snippet_is_short():
    assert len(snippet().strip().splitlines()) <= 15


def test_snippet_runs_and_prints_a_schema_valid_action(venv_python, server, tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text(snippet())
    done = subprocess.run([str(venv_python), str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "KVFRAME_ENDPOINT": server.endpoint}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    action = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert set(action) == {"action", "target"}
    assert action["action"] in ("attack", "flee", "trade") and action["target"] in ("player", "wolf")
