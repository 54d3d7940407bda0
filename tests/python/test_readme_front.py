"""README.md as a front door: short, its two commands the ones CI runs, every figure with its command.

Also checks what it points to: links in README.md, docs/measured.md,
docs/tools.md, docs/contributing.md (the status table and module map that
left the README) and bench/README.md resolve, and every program or script their
commands name exists (a CMake executable, or a file). Runs with or without
pytest:

    python3 tests/python/test_readme_front.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MEASURED = ROOT / "docs" / "measured.md"
CONTRIBUTING = ROOT / "docs" / "contributing.md"
PAGES = [README, MEASURED, ROOT / "docs" / "tools.md", CONTRIBUTING, ROOT / "bench" / "README.md"]


def section_table(text: str, heading: str) -> list[list[str]]:
    """The rows (cells) of the first table under `## heading`, header and rule left out."""
    body = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]] for row in rows[2:]]


def test_fits_on_a_screen():
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; the front door is at most 150"


def test_opens_with_the_two_commands_ci_runs():
    text = README.read_text()
    block = text.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    commands = [line.split("#")[0].strip() for line in block]
    assert commands == ["./scripts/demo.sh", "./scripts/test.sh"], block
    for command in commands:
        script = ROOT / command
        assert script.is_file(), f"{command} does not exist"
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#")]
    assert ci[-1] == commands[1], f".ci/run ends with {ci[-1]!r}, not the README's test command {commands[1]!r}"


def test_three_figures_each_beside_its_command_and_machine():
    rows = section_table(README.read_text(), "Three figures")
    measured = MEASURED.read_text()
    assert len(rows) == 3, rows
    for figure, command, machine in rows:
        assert command.startswith("`") and command.endswith("`"), f"no command beside {figure!r}"
        assert command.strip("`") in measured, f"{command} is not in docs/measured.md"
        assert re.search(r"\d{4}-\d{2}-\d{2}", machine), f"no date in {machine!r}"
        for number in re.findall(r"\d[\d,.]*\d×?|\d×?", figure):
            assert number in measured, f"{number} (of {figure!r}) is not in docs/measured.md"


def test_status_rows_are_one_line_with_their_doc():
    rows = section_table(CONTRIBUTING.read_text(), "Status")
    assert rows
    for cells in rows:
        line = " | ".join(cells)
        assert len(line) <= 200, f"a status row of {len(line)} characters: {line}"
        assert re.search(r"\]\([^)]+\)", cells[-1]), f"a status row without its doc: {line}"


def test_links_resolve():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.exists(), f"{page.relative_to(ROOT)} links {target}, which does not exist"


def executables() -> set[str]:
    names = set()
    for cmake in ROOT.rglob("CMakeLists.txt"):
        if not cmake.relative_to(ROOT).parts[0].startswith("build"):
            names.update(re.findall(r"(?:add_executable|kvframe_add_bench)\(\s*([\w-]+)", cmake.read_text()))
    return names


def test_commands_name_programs_that_exist():
    built = executables()
    for page in PAGES:
        text = page.read_text()
        for name in re.findall(r"\bbuild/(?:bench|tools|server)/([\w-]+)(?![\w/-])", text):
            assert name in built, f"{page.relative_to(ROOT)}: build/.../{name} is no CMake executable"
        for path in re.findall(r"(?<![\w/.])((?:bench|scripts)/[\w/-]+\.(?:py|sh))", text):
            assert (ROOT / path).is_file(), f"{page.relative_to(ROOT)}: {path} does not exist"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from helpers import run_test_functions
    sys.exit(run_test_functions(globals()))
