"""adapters/python/README.md's offline install block, run as written (Debian's python3 first on PATH,
in a temporary folder that sees the repository's adapters/): the venv it makes imports kvframe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from helpers import fenced_block

README = REPO / "adapters" / "python" / "README.md"
MARKER = "<!-- readme-install:"


def install_block() -> str:
    return fenced_block(README.read_text(), MARKER, "sh")


def test_the_offline_install_block_works_on_debians_python(tmp_path):
    (tmp_path / "adapters").symlink_to(REPO / "adapters")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", install_block()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    where = subprocess.run([str(tmp_path / ".venv" / "bin" / "python"), "-c", "import kvframe; print(kvframe.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert where.returncode == 0, where.stderr
    assert where.stdout.strip().startswith(str(tmp_path / ".venv")), where.stdout
