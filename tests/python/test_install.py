"""The build step: the protocol code comes from flatc, and without flatc the build says so."""

from __future__ import annotations

import os
import subprocess

from conftest import PACKAGE


def test_build_without_flatc_fails_clearly(venv_python, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "FLATC"}
    env["PATH"] = str(empty)  # no flatc anywhere
    done = subprocess.run([str(venv_python), "-m", "pip", "install", "--no-index", "--no-build-isolation",
                           "--no-deps", "--disable-pip-version-check", "--target", str(tmp_path / "site"),
                           str(PACKAGE)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0
    assert "kvframe build: error: flatc (the FlatBuffers compiler) is not on PATH" in done.stdout + done.stderr


def test_the_installed_package_carries_the_generated_code_and_py_typed():
    import kvframe
    from pathlib import Path

    root = Path(kvframe.__file__).parent
    assert (root / "py.typed").is_file()
    generated = sorted(p.name for p in (root / "protocol" / "fb").glob("*.py"))
    assert {"Message.py", "Frame.py", "Result.py", "ErrorCode.py", "Body.py"} <= set(generated)
