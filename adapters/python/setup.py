"""Build step of the kvframe Python client: the protocol code is generated.

The flatbuffers classes under ``kvframe/protocol/fb/`` (and, beside them, a
copy of ``protocol/options.json``, the options ``kvframe.options`` reads) are never committed or
copied by hand: every build runs ``flatc --python --gen-object-api`` on the
one schema the server and the native client are built from,
``protocol/kvframe.fbs``, and puts the output into the build tree (or, for an
editable install, into the source tree, where .gitignore keeps it out of git).

Where the schema is looked for, first hit wins:
  1. ``$KVFRAME_FBS``
  2. ``kvframe.fbs`` next to this file (an sdist carries a copy made by ``sdist``)
  3. ``../../protocol/kvframe.fbs`` (this file inside the kvframe repository)

flatc is ``$FLATC`` or the ``flatc`` on PATH (Debian: ``apt install
flatbuffers-compiler``). Without it the build stops with a message saying so.

Beside it goes ``kvframe/_built_from.py``, the repository the build came from,
so that ``kvframe.ServerProcess()`` finds a server built there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent


class BuildError(SystemExit):
    """Stops the build with one clear line (pip shows it)."""

    def __init__(self, message: str) -> None:
        super().__init__("kvframe build: error: " + message)


def find_schema() -> Path:
    env = os.environ.get("KVFRAME_FBS")
    candidates = [Path(env)] if env else []
    candidates += [HERE / "kvframe.fbs", HERE.parent.parent / "protocol" / "kvframe.fbs"]
    for path in candidates:
        if path.is_file():
            return path
    raise BuildError(
        "protocol/kvframe.fbs not found (looked at " + ", ".join(str(p) for p in candidates) + "): "
        "build from a kvframe checkout (pip install ./adapters/python) or set KVFRAME_FBS=/path/to/kvframe.fbs"
    )


def find_options(schema: Path) -> Path:
    """protocol/options.json: the options the schema's OpenSession and Query carry, beside the schema."""
    path = schema.parent / "options.json"
    if not path.is_file():
        raise BuildError(f"{path} not found: protocol/options.json lies beside protocol/kvframe.fbs "
                         "(with KVFRAME_FBS, put it beside that file)")
    return path


def find_flatc() -> str:
    flatc = os.environ.get("FLATC") or shutil.which("flatc")
    if not flatc:
        raise BuildError(
            "flatc (the FlatBuffers compiler) is not on PATH; the protocol code is generated from "
            "protocol/kvframe.fbs at build time. Install it (Debian/Ubuntu: apt install flatbuffers-compiler) "
            "or set FLATC=/path/to/flatc"
        )
    return flatc


def generate_protocol(out_root: Path) -> None:
    """Writes ``out_root/kvframe/protocol/`` (the package ``kvframe.protocol.fb``)."""
    schema = find_schema()
    flatc = find_flatc()
    try:
        version = subprocess.run([flatc, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise BuildError(f"{flatc} --version failed: {e}") from e
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [flatc, "--python", "--gen-object-api", "-o", tmp, str(schema)]
        print("kvframe build:", " ".join(cmd), file=sys.stderr)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"flatc failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
        generated = Path(tmp) / "kvframe" / "protocol"
        if not (generated / "fb" / "Message.py").is_file():
            raise BuildError(f"flatc wrote no kvframe/protocol/fb/Message.py (namespace changed in {schema}?)")
        target = out_root / "kvframe" / "protocol"
        shutil.rmtree(target, ignore_errors=True)
        # Only kvframe/protocol/: flatc's empty kvframe/__init__.py must not replace ours.
        shutil.copytree(generated, target)
    # The session's and query's options (kvframe.options reads them), beside the schema they complete.
    shutil.copyfile(find_options(schema), target / "options.json")
    digest = hashlib.sha256(schema.read_bytes()).hexdigest()
    (target / "__init__.py").write_text(
        '"""Generated at build time by setup.py: do not edit, do not commit.\n\n'
        f"``fb`` is {version}'s ``--python --gen-object-api`` output for protocol/kvframe.fbs.\n"
        '"""\n\n'
        f"SCHEMA_SHA256 = {digest!r}\n"
        f"FLATC_VERSION = {version!r}\n"
    )


def record_repository(out_root: Path) -> None:
    """Writes ``out_root/kvframe/_built_from.py``: the kvframe repository this build came from (None
    for an sdist), where ``kvframe.find_server()`` looks for a server built there (build/server/)."""
    repository = HERE.parent.parent
    known = (repository / "protocol" / "kvframe.fbs").is_file()
    (out_root / "kvframe" / "_built_from.py").write_text(
        '"""Generated at build time by setup.py: do not edit, do not commit."""\n\n'
        f"REPOSITORY = {str(repository) if known else None!r}\n"
    )


class BuildPyWithProtocol(build_py):
    """build_py, then the protocol code generated into the build tree, and where it was built from."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            # pip builds in the source tree: no module left over from an earlier build may ship.
            shutil.rmtree(Path(self.build_lib) / "kvframe", ignore_errors=True)
        super().run()
        # An editable install imports from the source tree.
        out_root = HERE if getattr(self, "editable_mode", False) else Path(self.build_lib)
        generate_protocol(out_root)
        record_repository(out_root)


class SdistWithSchema(sdist):
    """An sdist carries the schema and the options table (not the generated code) so it builds anywhere
    flatc is."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        schema = find_schema()
        shutil.copyfile(schema, Path(base_dir) / "kvframe.fbs")
        shutil.copyfile(find_options(schema), Path(base_dir) / "options.json")


setup(cmdclass={"build_py": BuildPyWithProtocol, "sdist": SdistWithSchema})
