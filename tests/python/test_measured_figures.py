"""One home for every figure: docs/measured.md holds each measured figure once, other docs quote it.

The rule, kept simple enough to apply by eye:

- A *figure* is a number written directly before a unit of measure: ms, µs, s,
  min, tok/s, tokens/s, decisions/s, frames/s, GFLOP/s, MB/s, ×, %, KB, MB,
  GB, KiB, MiB, GiB, bb/100, nats ("148 ms", "16.5×", "82.9%", "+11.6 bb/100";
  with or without a space, except × and %, which follow the number directly:
  "2 × layers" is a formula). A number without a unit (a count, a seed, a
  range's lower end) is not a figure.
- Only prose and tables count: fenced code blocks (commands, their output,
  schemas), inline code, link targets and HTML comments are left out.
- **Escape**: a number that is not a measurement — a setting, a default, a
  goal, a limit, an example value — goes in backticks (`--step-tokens 1024`,
  `300 ms`), which also shows the reader that it is a value, not a result.
- A doc (README.md, docs/*.md, examples/*/README.md, adapters/*/README.md)
  passes when every figure it states, with commas and a leading + left out
  and − read as -, is also stated in docs/measured.md, where it has its
  command, machine and date: as a figure, or as a number in a table row
  whose row or header names the unit (`| phase | kvframe tok/s |` above a
  row holding 1,968 holds "1,968 tok/s").
- docs/measured.md holds one value per measurement: its bold titles (each
  measurement's lead-in, `**Model runtime against llama.cpp**`; a bold
  sentence ending in a full stop or colon, `**What that says.**`, is prose)
  are unique, and
  so are the first two cells of each table row under one title (a row whose
  first cell is empty or "…" continues the row above and is not counted).
- Figures that docs stated before this check and measured.md does not hold yet
  are listed in tests/python/figures_pending.txt (doc, then figure). The list
  may only shrink: a figure it names that its doc no longer states fails the
  check until the line is removed; a new figure fails unless measured.md
  holds it.

    python3 tests/python/test_measured_figures.py            # the check (ctest measured_figures)
    python3 tests/python/test_measured_figures.py --missing  # what each doc states that measured.md lacks
    python3 tests/python/test_measured_figures.py --prune    # drop pending lines that are now held
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Set, Tuple

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ROOT / "docs" / "measured.md"
PENDING = ROOT / "tests" / "python" / "figures_pending.txt"

UNITS = r"(?:tok/s|tokens/s|decisions/s|frames/s|GFLOP/s|MB/s|bb/100|nats|ms|µs|min|s|×|%|KiB|MiB|GiB|KB|MB|GB)"
# × and % only right after the number ("16.5×", "82.9%"): "2 × layers" is a formula.
SPACED_UNITS = UNITS.replace("|×|%", "")
FIGURE = re.compile(r"(?<![\w.,/+−-])([+−-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[+−-]?\d+(?:\.\d+)?)"
                    r"(?:(×|%)|[ \u202f]?(" + SPACED_UNITS + r"))(?![\w/])")


def docs() -> List[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("examples/*/README.md")),
             *sorted(ROOT.glob("adapters/*/README.md"))]
    return [doc for doc in found if doc != MEASURED]


def unfenced_lines(text: str) -> List[Tuple[int, str]]:
    """(line number, text) of the lines outside fenced blocks, HTML comments taken out."""
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    kept, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append((number, line))
    return kept


def prose_lines(text: str) -> List[Tuple[int, str]]:
    """unfenced_lines with inline code (also over a line break) and link targets taken out too."""
    numbered = unfenced_lines(text)
    joined = "\n".join(line for _, line in numbered)
    joined = re.sub(r"`(?:[^`\n]|\n(?!\s*\n))*`", lambda m: " " + "\n" * m.group(0).count("\n"), joined)
    joined = re.sub(r"\]\([^)]*\)", "]", joined)
    return list(zip((number for number, _ in numbered), joined.split("\n")))


def normal(number: str, unit: str) -> str:
    number = number.replace(",", "").replace("−", "-").lstrip("+")
    return f"{number} {unit}"


def figures(text: str) -> List[Tuple[int, str]]:
    return [(number, normal(m.group(1), m.group(2) or m.group(3))) for number, line in prose_lines(text)
            for m in FIGURE.finditer(line)]


NUMBER = re.compile(r"(?<![\w.,/+−-])[+−-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")


def table_figures(text: str) -> Set[str]:
    """Numbers of table rows in the units their row or their table's header names
    (measured.md's tables put the unit in the header: | phase | kvframe tok/s |)."""
    out: Set[str] = set()
    header = None
    for _, line in prose_lines(text):
        if not line.startswith("|"):
            header = None
            continue
        if header is None:
            header = line
            continue
        units = set(re.findall(r"(?<![\w])" + UNITS + r"(?![\w/])", header + " " + line))
        for number in NUMBER.findall(line):
            out.update(normal(number, unit) for unit in units)
    return out


def held() -> Set[str]:
    text = MEASURED.read_text()
    return {figure for _, figure in figures(text)} | table_figures(text)


def pending() -> Set[Tuple[str, str]]:
    if not PENDING.exists():
        return set()
    rows = [line.split("\t") for line in PENDING.read_text().splitlines() if line and not line.startswith("#")]
    return {(doc, figure) for doc, figure in rows}


def missing() -> Dict[str, List[Tuple[int, str]]]:
    home = held()
    out: Dict[str, List[Tuple[int, str]]] = {}
    for doc in docs():
        lacking = [(n, f) for n, f in figures(doc.read_text()) if f not in home]
        if lacking:
            out[str(doc.relative_to(ROOT))] = lacking
    return out


def test_every_figure_of_the_docs_is_in_measured_md():
    allowed = pending()
    unheld = [f"{doc}:{n}: {figure}" for doc, found in missing().items() for n, figure in found
              if (doc, figure) not in allowed]
    assert not unheld, ("figures that docs/measured.md does not hold (add them there with their command, "
                        "machine and date, or put a number that is not a measurement in backticks):\n  "
                        + "\n  ".join(unheld))


def test_the_pending_list_only_shrinks():
    still = {(doc, figure) for doc, found in missing().items() for _, figure in found}
    gone = sorted(f"{doc}\t{figure}" for doc, figure in pending() - still)
    assert not gone, ("tests/python/figures_pending.txt names figures their doc no longer states, or that "
                      "measured.md now holds: remove these lines:\n  " + "\n  ".join(gone))


def measurement_keys(text: str) -> List[str]:
    """Each measurement's bold title, and each table row's first cell under its title."""
    keys: List[str] = []
    title = ""
    for _, line in unfenced_lines(text):
        if line.startswith("#"):
            title = line.strip("# ").strip()
            continue
        lead = re.match(r"\*\*([^*]+)\*\*", line.strip())
        if lead and not lead.group(1).rstrip().endswith((".", ":")):  # "**What that says.**" is prose
            title = lead.group(1).strip()
            keys.append(f"title: {title}")
            continue
        if line.startswith("|") and not re.fullmatch(r"[|\s:-]+", line):
            cells = [cell.strip() for cell in line.split("|")[1:-1]]
            if cells and cells[0] and not cells[0].startswith(("…", "...")):
                keys.append(f"row: {title} / {' / '.join(cells[:2])}")
    return keys


def test_measured_md_holds_one_value_per_measurement():
    # A table's header row is a row like the others: two tables under one title with the same
    # header are two homes for one measurement too.
    repeated = [key for key, count in Counter(measurement_keys(MEASURED.read_text())).items() if count > 1]
    assert not repeated, ("docs/measured.md names these measurements more than once (keep the newest, the "
                          "history is in git):\n  " + "\n  ".join(repeated))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from helpers import run_test_functions

    if "--prune" in sys.argv[1:]:  # drop the pending lines measured.md now holds (never adds one)
        still = {(doc, figure) for doc, found in missing().items() for _, figure in found}
        lines = PENDING.read_text().splitlines(keepends=True)
        PENDING.write_text("".join(line for line in lines if line.startswith("#") or not line.strip()
                                   or tuple(line.rstrip("\n").split("\t")) in still))
        sys.exit(0)
    if "--missing" in sys.argv[1:]:
        for doc, found in missing().items():
            for n, figure in found:
                print(f"{doc}:{n}\t{figure}")
        sys.exit(0)
    sys.exit(run_test_functions(globals()))
