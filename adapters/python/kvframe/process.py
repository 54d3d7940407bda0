"""Run a kvframe-serve process: for tests, examples and tools that bring their own server.

::

    with kvframe.ServerProcess(model="SmolLM2-135M-Instruct.Q4_1.gguf") as server:
        client = kvframe.Client.connect(server.endpoint)

The server binds ``tcp://127.0.0.1:0`` (any free port) unless told otherwise;
its endpoint is read from ``--ready-file`` when the binary has that option
(it writes the bound endpoint and a newline once it listens), else from its
``msg="listening" endpoint=...`` log line or its ``kvframe-serve listening on
...`` stdout line. Its stdout and stderr go to :attr:`ServerProcess.log_path`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = ["ServerProcess", "find_server", "server_places", "ServerStartError"]

_LISTENING = [re.compile(r'msg="listening" endpoint=(\S+)'), re.compile(r"kvframe-serve listening on (\S+)")]
_READY_FILE_SUPPORT: Dict[str, bool] = {}
# Where a CMake build folder has the server, and where `cmake --install` puts it by default.
BUILD_TREE_SERVER = Path("server") / "kvframe-serve"
CMAKE_DEFAULT_PREFIX = "/usr/local"


class ServerStartError(RuntimeError):
    """kvframe-serve did not start (the message carries the end of its log)."""


def find_server(extra: Sequence[os.PathLike] = ()) -> Optional[str]:
    """The kvframe-serve binary, or None; :func:`server_places` says where it looks, in order."""
    return server_places(extra)[0]


def server_places(extra: Sequence[os.PathLike] = ()) -> Tuple[Optional[str], List[str]]:
    """Where kvframe-serve is looked for, first hit wins: (the binary or None, a line per place looked).

    1. ``$KVFRAME_SERVE``: that file and nothing else;
    2. ``extra`` paths;
    3. ``$KVFRAME_BUILD``, a CMake build folder: its ``server/kvframe-serve`` and nothing else;
    4. ``kvframe-serve`` on ``PATH``;
    5. an install prefix's ``bin/``: this Python's (``sys.prefix``, e.g. a venv that
       ``cmake --install build --prefix .venv`` installed into), then CMake's default ``/usr/local``;
    6. ``build/server/kvframe-serve`` in the kvframe repository this package was installed from.

    A variable that is set but names no server stops the search there, so a typo never
    quietly runs some other kvframe-serve.
    """
    looked: List[str] = []

    def hit(path: Path, where: str) -> bool:
        ok = path.is_file() and os.access(path, os.X_OK)
        looked.append(f"{where}: {path}" + ("" if ok else " (not an executable file)"))
        return ok

    env = os.environ.get("KVFRAME_SERVE")
    if env:
        return (env if hit(Path(env), "$KVFRAME_SERVE") else None), looked
    looked.append("$KVFRAME_SERVE: not set")
    for path in extra:
        if hit(Path(path), "given"):
            return str(path), looked
    build = os.environ.get("KVFRAME_BUILD")
    if build:
        path = Path(build) / BUILD_TREE_SERVER
        return (str(path) if hit(path, "$KVFRAME_BUILD") else None), looked
    looked.append("$KVFRAME_BUILD: not set")
    on_path = shutil.which("kvframe-serve")
    looked.append(f"PATH: {on_path or 'no kvframe-serve in ' + os.environ.get('PATH', '')}")
    if on_path:
        return on_path, looked
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix, CMAKE_DEFAULT_PREFIX]):
        if hit(Path(prefix) / "bin" / "kvframe-serve", "install prefix"):
            return str(Path(prefix) / "bin" / "kvframe-serve"), looked
    repository = built_from()
    if repository is None:
        looked.append("the kvframe repository: unknown (this package was not built from one)")
    elif hit(repository / "build" / BUILD_TREE_SERVER, "the kvframe repository this package was installed from"):
        return str(repository / "build" / BUILD_TREE_SERVER), looked
    return None, looked


def built_from() -> Optional[Path]:
    """The kvframe repository this package was built from (setup.py records it), or None."""
    try:
        from ._built_from import REPOSITORY as repository
    except ImportError:  # not built by setup.py (a copy on PYTHONPATH): maybe inside the repository
        here = Path(__file__).resolve().parents[3]
        repository = str(here) if (here / "protocol" / "kvframe.fbs").is_file() else None
    return Path(repository) if repository else None


def not_found_message(looked: Sequence[str]) -> str:
    """ServerStartError's text when no kvframe-serve was found: every place looked, what to do."""
    return ("kvframe-serve not found. Looked at:\n  " + "\n  ".join(looked) + "\n"
            "Build it (cmake --build build --target kvframe-serve) and set KVFRAME_BUILD=/path/to/build, "
            "install it (cmake --install build --prefix PREFIX, then PREFIX/bin on PATH), "
            "or set KVFRAME_SERVE=/path/to/kvframe-serve")


def supports_ready_file(binary: str) -> bool:
    """Whether ``binary --help`` lists ``--ready-file`` (asked once per binary)."""
    if binary not in _READY_FILE_SUPPORT:
        try:
            done = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
            _READY_FILE_SUPPORT[binary] = "--ready-file" in done.stdout + done.stderr
        except (OSError, subprocess.SubprocessError):
            _READY_FILE_SUPPORT[binary] = False
    return _READY_FILE_SUPPORT[binary]


class ServerProcess:
    """A kvframe-serve child process (a context manager: started on enter, stopped on exit).

    Args:
        binary: the kvframe-serve executable (default: :func:`find_server`; when it finds
            none, :class:`ServerStartError` lists every place it looked).
        model: ``--model`` (default: the server's own default).
        bind: ``--bind``; default ``tcp://127.0.0.1:0`` (a free port).
        threads: ``--threads``: the server's CPU threads. Default (None): the server fits them to
            the cores other processes (your game among them) leave free, re-read as that changes;
            set it to pin a count, e.g. when the game and the server split the cores between them.
        args: more options (``["--mode", "block", "--step-tokens", "256"]``).
        log_path: where stdout and stderr go (default: a temporary file).
        start_timeout: seconds to wait for it to listen.
    """

    def __init__(self, binary: Optional[str] = None, *, model: Optional[str] = None,
                 bind: str = "tcp://127.0.0.1:0", threads: Optional[int] = None, args: Sequence[str] = (),
                 log_path: Optional[str] = None, start_timeout: float = 60.0,
                 env: Optional[Dict[str, str]] = None) -> None:
        if not binary:
            binary, looked = server_places()
            if not binary:
                raise ServerStartError(not_found_message(looked))
        self.binary = binary
        self.model = model
        self.bind = bind
        if threads is not None and int(threads) < 1:
            raise ValueError("threads is a count of CPU threads, at least 1 (None: fit to the free cores)")
        self.threads = threads
        self.args = list(args)
        self.start_timeout = start_timeout
        self.env = env
        self._tmp = tempfile.TemporaryDirectory(prefix="kvframe-serve-")
        self.log_path = log_path or os.path.join(self._tmp.name, "server.log")
        self.endpoint: Optional[str] = None
        self.process: Optional[subprocess.Popen] = None

    def command(self, ready_file: Optional[str]) -> List[str]:
        cmd = [self.binary, "--bind", self.bind]
        if self.model:
            cmd += ["--model", self.model]
        if ready_file:
            cmd += ["--ready-file", ready_file]
        if self.threads is not None:
            cmd += ["--threads", str(int(self.threads))]
        return cmd + self.args

    def start(self) -> str:
        """Starts the server and waits until it listens; returns its endpoint."""
        ready_file = None
        if supports_ready_file(self.binary):
            ready_file = os.path.join(self._tmp.name, f"ready-{time.monotonic_ns()}")
        log_file = open(self.log_path, "ab")
        offset = log_file.tell()
        try:
            self.process = subprocess.Popen(self.command(ready_file), stdin=subprocess.DEVNULL, stdout=log_file,
                                            stderr=subprocess.STDOUT, env=self.env)
        finally:
            log_file.close()
        deadline = time.monotonic() + self.start_timeout
        while True:
            endpoint = self._ready_endpoint(ready_file, offset)
            if endpoint:
                self.endpoint = endpoint
                return endpoint
            code = self.process.poll()
            if code is not None:
                raise ServerStartError(f"kvframe-serve exited with status {code} before listening:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise ServerStartError(f"kvframe-serve did not listen within {self.start_timeout:g} s:\n"
                                       f"{self.log_tail()}")
            time.sleep(0.02)

    def _ready_endpoint(self, ready_file: Optional[str], offset: int) -> Optional[str]:
        if ready_file:
            try:
                text = Path(ready_file).read_text()
            except OSError:
                return None
            return text.strip() if text.endswith("\n") and text.strip() else None
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return None
        for pattern in _LISTENING:
            match = pattern.search(text)
            if match:
                return match.group(1)
        return None

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """SIGTERM, then SIGKILL after ``timeout`` seconds; returns the exit status."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL at once (a crash, as far as clients can tell)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self, timeout: float = 10.0) -> str:
        """Stops the server and starts it again on the same endpoint (a fixed port is needed:
        with port 0 the new one may listen elsewhere); returns the endpoint."""
        if self.endpoint and self.bind.endswith(":0"):
            self.bind = self.endpoint
        self.stop(timeout)
        return self.start()

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> "ServerProcess":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        self._tmp.cleanup()
