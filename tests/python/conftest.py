"""Fixtures of the Python client's tests: the package installed into a venv, a real kvframe-serve.

Run (from the repository root; nothing is downloaded):

    KVFRAME_SERVE=build/server/kvframe-serve /usr/bin/python3 -m pytest tests/python

Before any test, the package is installed the way a user installs it, with
Debian's pyzmq, flatbuffers and setuptools:

    /usr/bin/python3 -m venv --system-site-packages --without-pip VENV
    VENV/bin/python -m pip install --no-index --no-build-isolation ./adapters/python

(pip comes from the system site-packages). Then VENV's site-packages is put
on sys.path so these tests import the installed ``kvframe``; the README
snippet and the example run under VENV/bin/python.

Environment:
    KVFRAME_SERVE   the kvframe-serve binary (default: build/server/kvframe-serve)
    KVFRAME_MODEL   the GGUF model (default: ~/.cache/kvframe/models/SmolLM2-135M-Instruct.Q4_1.gguf)
    KVFRAME_PY_VENV where to make the venv (default: a temporary folder, removed afterwards)
    KVFRAME_PYTHON_DEPS  the example's dependency cache (scripts/fetch-python-deps.sh)
    KVFRAME_TEST_BUILD_DIR  the CMake build test_find_server.py finds and installs the server from
                    (default: build)
Tests that need the server skip, saying why, when the binary or the model is missing.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "adapters" / "python"
DEFAULT_MODEL = Path.home() / ".cache" / "kvframe" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _install_into_venv() -> Path:
    venv = os.environ.get("KVFRAME_PY_VENV")
    if venv:
        venv_path = Path(venv)
    else:
        venv_path = Path(tempfile.mkdtemp(prefix="kvframe-pytest-venv-"))
        atexit.register(shutil.rmtree, venv_path, True)
    python = venv_path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv_path)],
                       check=True)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation", "--disable-pip-version-check",
         "--no-warn-script-location", "--quiet", str(PACKAGE)],
        capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip install ./adapters/python failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # The installed package, ahead of anything else called kvframe.
    sys.path.insert(0, purelib)
    return python


VENV_PYTHON = _install_into_venv()

import kvframe  # noqa: E402  (the installed one)

assert str(Path(kvframe.__file__).resolve()).startswith(str(VENV_PYTHON.parent.parent.resolve())), kvframe.__file__


def server_binary() -> str:
    path = os.environ.get("KVFRAME_SERVE") or str(REPO / "build" / "server" / "kvframe-serve")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(f"kvframe-serve not found at {path}: build it (target kvframe-serve) or set KVFRAME_SERVE")
    return path


def model_path() -> str:
    path = os.environ.get("KVFRAME_MODEL") or str(DEFAULT_MODEL)
    if not os.path.isfile(path):
        pytest.skip(f"model {path} not found: run scripts/fetch-model.sh or set KVFRAME_MODEL")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(*args: str, bind: str = "tcp://127.0.0.1:0") -> "kvframe.ServerProcess":
    server = kvframe.ServerProcess(server_binary(), model=model_path(), bind=bind, args=list(args))
    server.start()
    return server


@pytest.fixture(scope="session")
def venv_python() -> Path:
    """The venv's python, with kvframe installed."""
    return VENV_PYTHON


@pytest.fixture(scope="session")
def server():
    """One kvframe-serve for the session's tests (port 0; its endpoint is server.endpoint)."""
    process = start_server()
    yield process
    process.stop()


@pytest.fixture
def client(server):
    with kvframe.Client.connect(server.endpoint, client_name="pytest") as c:
        yield c


# ctest: with KVFRAME_SKIP_RETURN_CODE=77 (and SKIP_RETURN_CODE 77 on the test) a run whose
# tests passed but some skipped (no server, no model, no PokerKit) shows as skipped, not passed.
_skipped = []


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    code = os.environ.get("KVFRAME_SKIP_RETURN_CODE")
    if code and _skipped and exitstatus == 0:
        session.exitstatus = int(code)
