"""The docs' shell and Python blocks run as written, or say that they are excerpts.

A block is a fenced block of README.md, docs/your_game.md, docs/tools.md,
docs/install.md, examples/*/README.md or adapters/*/README.md labelled sh, bash,
shell, console or python, or unlabelled with a first line that starts with "$ "
(a transcript: commands and what they print). Each must carry one marker, an
HTML comment on the line before its fence:

    <!-- run -->              run by this test (below)
    <!-- excerpt -->          shown, not run: a fragment, a bench of minutes, an
                              install as root, a server left running; a reason may
                              follow a colon: <!-- excerpt: needs a GPU -->
    <!-- readme-snippet: ...  run by test_readme.py
    <!-- readme-install: ...  run by test_readme_install.py

Without a build (ctest doc_blocks_marked, label unit) it checks the markers,
that shell blocks parse (bash -n) and that Python blocks compile, and prints how
many blocks run and how many are excerpts. With one (ctest doc_blocks_run,
label integration; KVFRAME_TEST_BUILD_DIR names the CMake build folder) it runs
every `run` block, each doc's in document order, in a scratch folder that holds
the repository's files (linked) with `build` standing for that build folder:
shell blocks under bash -euo pipefail, Python blocks under python3, and
transcripts command by command, each command's standard output compared with
the lines below it (a line "..." stands for any number of lines). Each block
has 300 s.

    python3 tests/python/test_doc_blocks.py            # markers, syntax, counts
    KVFRAME_TEST_BUILD_DIR=build python3 tests/python/test_doc_blocks.py --run
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
LABELS = {"sh", "bash", "shell", "console", "python"}
TESTED_ELSEWHERE = ("readme-snippet:", "readme-install:")
TIMEOUT_S = 300


def docs() -> List[Path]:
    return [ROOT / "README.md", ROOT / "docs" / "your_game.md", ROOT / "docs" / "tools.md",
            ROOT / "docs" / "install.md", *sorted(ROOT.glob("examples/*/README.md")),
            *sorted(ROOT.glob("adapters/*/README.md"))]


@dataclass
class Block:
    doc: Path
    line: int          # of the opening fence, 1-based
    label: str         # "" for a transcript
    marker: str        # "run", "excerpt", "elsewhere" or "" (none)
    text: str

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    @property
    def transcript(self) -> bool:
        return self.text.startswith("$ ")


def marker_of(line: str) -> str:
    comment = re.fullmatch(r"\s*<!--\s*(.*?)\s*-->\s*", line)
    if not comment:
        return ""
    body = comment.group(1)
    if body == "run":
        return "run"
    if body == "excerpt" or body.startswith("excerpt:"):
        return "excerpt"
    if body.startswith(TESTED_ELSEWHERE):
        return "elsewhere"
    return ""


def blocks_of(doc: Path) -> List[Block]:
    """The shell, Python and transcript blocks of a Markdown file, with their markers."""
    lines = doc.read_text().splitlines()
    found: List[Block] = []
    i = 0
    while i < len(lines):
        opening = re.fullmatch(r"(\s*)```(\S*)(.*)", lines[i])
        if not opening:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), len(lines))
        indent = len(opening.group(1))
        text = "\n".join(line[indent:] for line in lines[i + 1:end]) + "\n"
        label = opening.group(2)
        if label in LABELS or (label == "" and text.startswith("$ ")):
            before = lines[i - 1] if i > 0 else ""
            found.append(Block(doc, i + 1, label, marker_of(before), text))
        i = end + 1
    return found


def all_blocks() -> List[Block]:
    return [block for doc in docs() for block in blocks_of(doc)]


def counts() -> Dict[str, int]:
    tally = {"run": 0, "excerpt": 0, "elsewhere": 0, "": 0}
    for block in all_blocks():
        tally[block.marker] += 1
    return tally


def test_every_block_is_run_or_marked_an_excerpt():
    unmarked = [block.where for block in all_blocks() if not block.marker]
    assert not unmarked, ("blocks neither run nor marked <!-- excerpt --> (put the marker on the line "
                          "before the fence): " + ", ".join(unmarked))


def test_the_docs_have_blocks_that_run():
    assert counts()["run"] >= 10, counts()


def test_shell_blocks_parse_and_python_blocks_compile():
    for block in all_blocks():
        if block.label == "python":
            compile(block.text, block.where, "exec")
        elif not block.transcript and block.label != "console":
            done = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, f"{block.where}: bash -n: {done.stderr}"


# ---- running them --------------------------------------------------------------------------


def scratch_tree(build: Path) -> Path:
    """A folder with the repository's top-level entries linked in and `build` linked to the build folder."""
    tree = Path(tempfile.mkdtemp(prefix="kvframe-doc-blocks-"))
    for entry in ROOT.iterdir():
        if entry.name not in ("build", ".git"):
            (tree / entry.name).symlink_to(entry)
    (tree / "build").symlink_to(build.resolve())
    return tree


def transcript_steps(text: str) -> List[tuple]:
    """(command, expected output lines) pairs of a transcript; a command may continue over
    lines ending in a backslash."""
    steps: List[tuple] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise AssertionError(f"a transcript line outside any command: {lines[i]!r}")
        command = [lines[i][2:]]
        while command[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        while expected and not expected[-1].strip():
            expected.pop()
        steps.append(("\n".join(command), expected))
    return steps


def matches(expected: List[str], actual: List[str]) -> bool:
    """Whether `actual` fits `expected`, where a line "..." stands for any number of lines."""
    if not expected:
        return not actual
    head = expected[0]
    if head.strip() == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and head.rstrip() == actual[0].rstrip() and matches(expected[1:], actual[1:])


def run_block(block: Block, tree: Path, env: Dict[str, str]) -> Optional[str]:
    """Runs one block in `tree`; returns what went wrong, or None."""
    if block.label == "python":
        done = subprocess.run([sys.executable, "-c", block.text], cwd=tree, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S)
        return None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-2000:]}"
    if not block.transcript:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=tree, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        return None if done.returncode == 0 else f"exit {done.returncode}: {done.stdout[-1000:]}{done.stderr[-2000:]}"
    for command, expected in transcript_steps(block.text):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=tree, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S)
        actual = done.stdout.splitlines()
        if not matches(expected, actual):
            return (f"$ {command}\nprinted:\n" + "\n".join(actual[:60]) + "\nexpected:\n" + "\n".join(expected)
                    + (f"\nstderr: {done.stderr[-1000:]}" if done.stderr else ""))
    return None


def run_all(build: Path) -> int:
    tree = scratch_tree(build)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    failed = ran = 0
    for block in all_blocks():
        if block.marker != "run":
            continue
        ran += 1
        problem = run_block(block, tree, env)
        print(f"{'FAIL' if problem else 'ok  '} {block.where} ({block.label or 'transcript'})")
        if problem:
            failed += 1
            print("    " + problem.replace("\n", "\n    "))
    print(f"{ran} blocks run, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from helpers import run_test_functions

    if "--run" in sys.argv[1:]:
        build_dir = os.environ.get("KVFRAME_TEST_BUILD_DIR")
        if not build_dir or not (Path(build_dir) / "tools" / "kvframe-blocks").exists():
            print(f"skipped: KVFRAME_TEST_BUILD_DIR ({build_dir}) is no build folder with tools/kvframe-blocks")
            sys.exit(int(os.environ.get("KVFRAME_SKIP_RETURN_CODE", "77")))
        sys.exit(run_all(Path(build_dir)))
    status = run_test_functions(globals())
    tally = counts()
    print(f"blocks: {tally['run']} run here, {tally['elsewhere']} run by test_readme*.py, "
          f"{tally['excerpt']} excerpts, {tally['']} unmarked")
    sys.exit(status)
