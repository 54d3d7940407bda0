"""Where kvframe.ServerProcess() finds kvframe-serve (kvframe.process.server_places): $KVFRAME_BUILD,
an install prefix, the repository the package was built from, and, when nowhere, a message
naming every place it looked. The last two tests start real servers: one from a build tree,
one installed by `cmake --install` into a venv used as the prefix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kvframe
import kvframe.process
from conftest import REPO, model_path


def stub_server(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def nowhere(monkeypatch, tmp_path):
    """No kvframe-serve in any place server_places() looks; each test puts one where it wants."""
    monkeypatch.delenv("KVFRAME_SERVE", raising=False)
    monkeypatch.delenv("KVFRAME_BUILD", raising=False)
    (tmp_path / "path").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path / "python"))
    monkeypatch.setattr(kvframe.process, "CMAKE_DEFAULT_PREFIX", str(tmp_path / "usr-local"))
    monkeypatch.setattr(kvframe.process, "built_from", lambda: tmp_path / "repo")
    return tmp_path


def test_kvframe_build_names_a_build_tree(nowhere, monkeypatch):
    serve = stub_server(nowhere / "build" / "server" / "kvframe-serve")
    monkeypatch.setenv("KVFRAME_BUILD", str(nowhere / "build"))
    assert kvframe.find_server() == str(serve)


def test_kvframe_build_without_a_server_stops_the_search(nowhere, monkeypatch):
    stub_server(nowhere / "path" / "kvframe-serve")  # would be found, were KVFRAME_BUILD not set
    monkeypatch.setenv("KVFRAME_BUILD", str(nowhere / "empty"))
    with pytest.raises(kvframe.ServerStartError) as failed:
        kvframe.ServerProcess()
    assert f"$KVFRAME_BUILD: {nowhere / 'empty' / 'server' / 'kvframe-serve'} (not an executable file)" \
        in str(failed.value)


def test_an_install_prefix(nowhere):
    serve = stub_server(nowhere / "venv" / "bin" / "kvframe-serve")  # cmake --install build --prefix VENV
    assert kvframe.find_server() == str(serve)
    serve.unlink()
    serve = stub_server(nowhere / "usr-local" / "bin" / "kvframe-serve")  # cmake --install build
    assert kvframe.find_server() == str(serve)


def test_the_repository_the_package_was_installed_from(nowhere):
    serve = stub_server(nowhere / "repo" / "build" / "server" / "kvframe-serve")
    assert kvframe.find_server() == str(serve)


def test_the_installed_package_knows_its_repository():
    assert kvframe.process.built_from() == REPO


def test_not_found_names_every_place_looked_and_what_to_do(nowhere):
    with pytest.raises(kvframe.ServerStartError) as failed:
        kvframe.ServerProcess()
    message = str(failed.value)
    for place in ["$KVFRAME_SERVE: not set", "$KVFRAME_BUILD: not set", f"PATH: no kvframe-serve in {nowhere / 'path'}",
                  f"install prefix: {nowhere / 'venv' / 'bin' / 'kvframe-serve'}",
                  f"install prefix: {nowhere / 'python' / 'bin' / 'kvframe-serve'}",
                  f"install prefix: {nowhere / 'usr-local' / 'bin' / 'kvframe-serve'}",
                  f"installed from: {nowhere / 'repo' / 'build' / 'server' / 'kvframe-serve'}",
                  "KVFRAME_BUILD=/path/to/build", "cmake --install build", "KVFRAME_SERVE=/path/to/kvframe-serve"]:
        assert place in message, (place, message)


# --- real servers ---------------------------------------------------------------------------

def build_dir() -> Path:
    """The CMake build this run tests (ctest passes KVFRAME_TEST_BUILD_DIR; by hand: REPO/build)."""
    build = Path(os.environ.get("KVFRAME_TEST_BUILD_DIR") or REPO / "build")
    if not (build / "server" / "kvframe-serve").is_file():
        pytest.skip(f"no {build}/server/kvframe-serve: build it, or set KVFRAME_TEST_BUILD_DIR")
    return build


def test_server_process_from_a_build_tree(monkeypatch):
    build = build_dir()
    monkeypatch.delenv("KVFRAME_SERVE", raising=False)
    monkeypatch.setenv("KVFRAME_BUILD", str(build))
    with kvframe.ServerProcess(model=model_path(), threads=1) as server:
        assert server.binary == str(build / "server" / "kvframe-serve")
        with kvframe.Client.connect(server.endpoint, client_name="pytest") as client:
            assert client.server_info.model


def test_server_process_after_cmake_install_into_a_venv(tmp_path):
    """`cmake --install build --prefix .venv --component server` puts kvframe-serve in the venv's
    bin/, where that venv's Python finds it without PATH, KVFRAME_SERVE or KVFRAME_BUILD."""
    build, model = build_dir(), model_path()
    cmake = shutil.which("cmake")
    if not cmake:
        pytest.skip("no cmake on PATH")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    done = subprocess.run([cmake, "--install", str(build), "--prefix", str(venv), "--component", "server"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("KVFRAME_SERVE", "KVFRAME_BUILD")}
    env["PATH"] = "/usr/bin:/bin"
    # The kvframe package the tests installed (conftest), imported by the new venv's Python.
    env["PYTHONPATH"] = str(Path(kvframe.__file__).parent.parent)
    script = ("import sys, kvframe\n"
              "with kvframe.ServerProcess(model=sys.argv[1], threads=1) as server:\n"
              "    with kvframe.Client.connect(server.endpoint) as client:\n"
              "        print(server.binary, client.server_info.model)\n")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", script, model], capture_output=True, text=True,
                          env=env, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    binary, served = done.stdout.split(maxsplit=1)
    assert binary == str(venv / "bin" / "kvframe-serve")
    assert served
