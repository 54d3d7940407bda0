"""docs/contributing.md's module map (folder -> library -> depends on -> needs torch) against the CMakeLists files.

The map is read from the CMake files as they are: every library a folder
defines (kvframe_add_stage, kvframe_add_example, add_library) and the kvframe
libraries it links (their PUBLIC_DEPS / PRIVATE_DEPS, target_link_libraries),
whatever `if()` they sit under; "needs torch" follows the links down to
kvframe::torch. tests/ and bench/ are left out (they are not libraries a game
links). The test fails when a library, or a link between kvframe libraries,
is missing from the map or is there and no longer in CMake.

    python3 tests/python/test_readme_module_map.py           # the checks, without pytest
    python3 tests/python/test_readme_module_map.py --print   # the table to paste into docs/contributing.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "docs" / "contributing.md"  # the map's home (the name kept for the ctest)
MARKER = "<!-- module-map"
SKIPPED = ("build", "tests", "bench", "third_party", "shared", ".git")
TORCH = {"kvframe::torch", "kvframe_torch", "torch", "Torch::Torch"}
KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE", "LINK_INTERFACE_LIBRARIES"}


def cmake_files(root: Path = ROOT) -> dict[str, str]:
    """{folder (relative, with a trailing /): CMakeLists.txt text} for the library folders."""
    out = {}
    for path in sorted(root.rglob("CMakeLists.txt")):
        rel = path.relative_to(root)
        if rel.parts[0] in SKIPPED or rel.parts[0].startswith("build") or len(rel.parts) == 1:
            continue
        out[str(rel.parent) + "/"] = path.read_text()
    return out


def commands(text: str, names: tuple[str, ...]):
    """(command, [arguments]) for each call of one of `names`, comments stripped."""
    text = re.sub(r"#[^\n]*", "", text)
    for match in re.finditer(r"\b(" + "|".join(names) + r")\s*\(", text):
        depth, i = 1, match.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield match.group(1), re.findall(r'"[^"]*"|[^\s"]+', text[match.end():i - 1])


def libraries(files: dict[str, str]) -> dict[str, dict]:
    """{target: {"folder", "name" (the kvframe:: alias if any), "links" (every name it links), "sources"}}."""
    libs, aliases, links, extra_sources = {}, {}, [], []
    for folder, text in files.items():
        for command, args in commands(text, ("kvframe_add_stage", "kvframe_add_example", "add_library",
                                             "target_link_libraries", "target_sources")):
            if command in ("kvframe_add_stage", "kvframe_add_example"):
                target = "kvframe_" + args[0]
                deps, sources, on = [], [], False
                for arg in args[1:]:
                    if arg in ("SOURCES", "PUBLIC_DEPS", "PRIVATE_DEPS"):
                        on = arg != "SOURCES"
                    else:
                        (deps if on else sources).append(arg)
                libs[target] = {"folder": folder, "name": "kvframe::" + args[0], "links": [], "sources": sources}
                aliases["kvframe::" + args[0]] = target
                links.append((target, deps))
            elif command == "add_library":
                if len(args) > 2 and args[1] == "ALIAS":
                    aliases[args[0]] = args[2]
                elif "IMPORTED" not in args:
                    libs.setdefault(args[0], {"folder": folder, "name": args[0], "links": [],
                                              "sources": [a for a in args[1:] if a not in ("STATIC", "SHARED", "OBJECT")]})
            elif command == "target_sources":
                extra_sources.append((args[0], [a for a in args[1:] if a not in KEYWORDS]))
            else:
                links.append((args[0], [a for a in args[1:] if a not in KEYWORDS]))
    for target, sources in extra_sources:
        if target in libs:
            libs[target]["sources"] += sources
    for alias, target in aliases.items():
        if target in libs and alias.startswith("kvframe::"):
            libs[target]["name"] = alias
    for target, deps in links:
        if target in libs:
            libs[target]["links"] += [aliases.get(d, d) for d in deps]
    return libs


def module_map(files: dict[str, str] | None = None) -> dict[str, tuple[str, str, frozenset, bool]]:
    """{library name: (folder, name, kvframe libraries it links, needs torch)}."""
    libs = libraries(cmake_files() if files is None else files)

    def needs_torch(target, seen=()):
        lib = libs[target]
        return any(d in TORCH or d.startswith("torch::") or (d in libs and d not in seen and needs_torch(d, seen + (d,)))
                   for d in lib["links"])

    out = {}
    for target, lib in libs.items():
        deps = frozenset(libs[d]["name"] for d in lib["links"] if d in libs and d != target)
        out[lib["name"]] = (lib["folder"], lib["name"], deps, needs_torch(target, (target,)))
    return out


def table(mapping) -> str:
    rows = ["| folder | library (CMake target) | depends on (kvframe libraries) | needs torch |", "|---|---|---|---|"]
    for folder, name, deps, torch in sorted(mapping.values()):
        rows.append(f"| `{folder}` | `{name}` | {', '.join(f'`{d}`' for d in sorted(deps)) or '—'} | "
                    f"{'yes' if torch else 'no'} |")
    return "\n".join(rows)


def readme_map(text: str | None = None):
    """The map's table, parsed as module_map() returns it."""
    text = README.read_text() if text is None else text
    assert MARKER in text, f"docs/contributing.md has no {MARKER} ...--> comment before its module map table"
    lines = []
    for line in text[text.index(MARKER):].splitlines()[1:]:
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break  # the table's end
    out = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 4, f"module map row without 4 cells: {line}"
        folder, name = cells[0].strip("`"), cells[1].strip("`")
        deps = frozenset(d.strip().strip("`") for d in cells[2].split(",") if d.strip() not in ("", "—"))
        out[name] = (folder, name, deps, cells[3] == "yes")
    return out


def differences(readme, cmake) -> list[str]:
    problems = []
    for name in sorted(set(cmake) - set(readme)):
        problems.append(f"{name} ({cmake[name][0]}) is a library in CMake but not in the module map")
    for name in sorted(set(readme) - set(cmake)):
        problems.append(f"{name} is in the module map but no CMakeLists.txt defines it")
    for name in sorted(set(readme) & set(cmake)):
        (rf, _, rd, rt), (cf, _, cd, ct) = readme[name], cmake[name]
        if rf != cf:
            problems.append(f"{name}: folder {rf} in the map, {cf} in CMake")
        for dep in sorted(cd - rd):
            problems.append(f"{name} links {dep} (CMake), which the module map does not list")
        for dep in sorted(rd - cd):
            problems.append(f"{name}: the module map says it depends on {dep}; its CMakeLists.txt does not link it")
        if rt != ct:
            problems.append(f"{name}: needs torch is {'yes' if ct else 'no'} by CMake, {'yes' if rt else 'no'} in the map")
    return problems


def test_cmake_is_read():
    mapping = module_map()
    assert mapping["kvframe::json_blocker"][0] == "json_blocker/", mapping.get("kvframe::json_blocker")
    assert not mapping["kvframe::json_blocker"][3], "json_blocker needs no torch"
    assert any(torch for _, _, _, torch in mapping.values()), "no library needs torch: the parser lost kvframe::torch"
    assert any(deps for _, _, deps, _ in mapping.values()), "no library links another: the parser lost the links"


def test_readme_module_map_matches_cmake():
    problems = differences(readme_map(), module_map())
    assert not problems, ("docs/contributing.md's module map is stale:\n  " + "\n  ".join(problems) +
                          "\nRegenerate it: python3 tests/python/test_readme_module_map.py --print")


def test_an_undeclared_dependency_fails():
    """The check itself: a link the table does not list is reported."""
    files = cmake_files()
    folder = module_map()["kvframe::json_blocker"][0]
    files[folder] += "\ntarget_link_libraries(kvframe_json_blocker PRIVATE kvframe::protocol)\n"
    problems = differences(readme_map(), module_map(files))
    assert any("kvframe::json_blocker links kvframe::protocol" in p for p in problems), problems


INCLUDE = re.compile(r'#\s*include\s+"kvframe/([a-z_]+)/[^"]+"')
LOCAL_INCLUDE = re.compile(r'#\s*include\s+"([^"/][^"]*)"')


def included_libraries(folder: Path, sources: list[str]) -> dict[str, str]:
    """{header folder under include/kvframe/: the first file including it} for a
    library's sources and the local headers they include, followed through."""
    out, seen, todo = {}, set(), [folder / s for s in sources if "$" not in s]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(errors="replace")
        for name in INCLUDE.findall(text):
            out.setdefault(name, str(path.relative_to(ROOT)))
        todo += [path.parent / local for local in LOCAL_INCLUDE.findall(text)]
    return out


def include_problems(files: dict[str, str] | None = None, root: Path = ROOT) -> list[str]:
    """A header folder include/kvframe/X/ is library kvframe::X's, and a
    library includes headers only of itself and the libraries it links."""
    libs = libraries(cmake_files(root) if files is None else files)
    names = {lib["name"] for lib in libs.values()}
    problems = []
    for header_folder in sorted(p.name for p in (root / "include" / "kvframe").iterdir() if p.is_dir()):
        if "kvframe::" + header_folder not in names:
            problems.append(f"include/kvframe/{header_folder}/ names no library: CMake defines no kvframe::{header_folder}")

    def reach(target, seen):
        for dep in libs[target]["links"]:
            if dep in libs and dep not in seen:
                seen.add(dep)
                reach(dep, seen)
        return seen

    for target, lib in sorted(libs.items()):
        if not lib["name"].startswith("kvframe::"):
            continue
        own = lib["name"].split("::")[1]
        allowed = {libs[t]["name"].split("::")[1] for t in reach(target, {target}) if libs[t]["name"].startswith("kvframe::")}
        # Its sources (relative to its folder) and its public headers (absolute paths: `/` keeps them whole).
        sources = lib.get("sources", []) + [str(h) for h in sorted((root / "include" / "kvframe" / own).glob("*.h*"))]
        for name, where in sorted(included_libraries(root / lib["folder"], sources).items()):
            if name not in allowed:
                problems.append(f"{lib['name']} includes kvframe/{name}/ ({where}) but does not link kvframe::{name}")
    return problems


def test_each_header_folder_is_a_library_and_includes_follow_links():
    problems = include_problems()
    assert not problems, "include paths and links disagree:\n  " + "\n  ".join(problems)


def test_an_include_without_its_link_fails():
    """The check itself: json_blocker including the protocol's header without linking it is reported."""
    files = cmake_files()
    folder = module_map()["kvframe::json_blocker"][0]
    source = ROOT / folder / "module_map_probe.cpp"
    source.write_text('#include "kvframe/protocol/protocol.h"\n')
    try:
        files[folder] += "\ntarget_sources(kvframe_json_blocker PRIVATE module_map_probe.cpp)\n"
        problems = include_problems(files)
    finally:
        source.unlink()
    assert any("kvframe::json_blocker includes kvframe/protocol/" in p for p in problems), problems


if __name__ == "__main__":
    if sys.argv[1:] == ["--print"]:
        print(table(module_map()))
        sys.exit(0)
    sys.path.insert(0, str(Path(__file__).parent))
    from helpers import run_test_functions
    sys.exit(run_test_functions(globals()))
