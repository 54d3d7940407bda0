#!/usr/bin/env python3
"""Every script a reader may run by its path (a file starting with #! under
bench/, scripts/, examples/ or adapters/) is executable: the docs invoke
them so (bench/peers/bench_game_peer.py, scripts/onpolicy_mix.py), and
without the bit that reads "Permission denied" (issue 57).

    python3 tests/tools/scripts_executable_test.py [REPO]
"""
import os
import sys

SKIP = {"build", "__pycache__", ".venv", "node_modules"}


def scripts(repo):
    for top in ("bench", "scripts", "examples", "adapters"):
        for folder, dirs, files in os.walk(os.path.join(repo, top)):
            dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith(".")]
            for name in files:
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    if f.read(2) == b"#!":
                        yield path


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    found = list(scripts(repo))
    not_executable = [os.path.relpath(p, repo) for p in found if not os.access(p, os.X_OK)]
    for path in not_executable:
        print(f"not executable: {path} (git update-index --chmod=+x {path}; chmod +x {path})")
    print(f"{len(found) - len(not_executable)} of {len(found)} scripts with #! are executable")
    return 1 if not_executable or not found else 0


if __name__ == "__main__":
    sys.exit(main())
