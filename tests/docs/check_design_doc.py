#!/usr/bin/env python3
"""docs/design.md against the build: its layer table against src/CMakeLists.txt's gddt_layers (names,
order, folders, pages), its export table against src/gddt.map, every file the design pages name
in backticks against the tree, and its rule that no two units of one folder include each other,
so that the map cannot drift from the code.
  check_design_doc.py SOURCE_DIR"""
import os
import re
import sys
from pathlib import Path

root = Path(sys.argv[1])
failures = []


def table_rows(text, heading):
    """The rows (cells) of the first table under `heading`."""
    section = text.split(heading, 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # the header row is not data


design = (root / "docs/design.md").read_text()

built = re.search(r"set\(gddt_layers ([^)]*)\)", (root / "src/CMakeLists.txt").read_text()).group(1).split()
layers = table_rows(design, "## Layers")
documented = [row[0] for row in layers]
if documented != built:
    failures.append(f"layer table {documented} != the build's gddt_layers {built}")
for row in layers:
    if row[1] != f"`src/{row[0]}/`":
        failures.append(f"layer {row[0]}: folder {row[1]} is not `src/{row[0]}/`")
    if not (root / "docs/design" / f"{row[0]}.md").is_file():
        failures.append(f"layer {row[0]} has no page docs/design/{row[0]}.md")
for i, row in enumerate(layers):
    below = built[:i]
    allowed = "nothing of gddt" if not below else ("all" if i == len(built) - 1 else ", ".join(below))
    if row[3] not in (allowed, ", ".join(below)):
        failures.append(f"layer {row[0]} may include '{row[3]}', the build lets it include '{allowed}'")

exported = set(re.findall(r"^\s+([A-Za-z_*0-9]+);", (root / "src/gddt.map").read_text().split("local:")[0], re.M))
documented_exports = set()
for row in table_rows(design, "## Headers and exports"):
    documented_exports |= {p.strip("` ") for p in row[0].split(",")}
if documented_exports != exported:
    failures.append(f"export table {sorted(documented_exports)} != src/gddt.map's {sorted(exported)}")

# Names are of the tree's files, by path from the root or from src/, or bare; the MPI and CUDA
# headers are the libraries' own.
outside = {"mpi.h", "cuda.h", "cuda_runtime.h"}
paths = set()
for folder, subfolders, names in os.walk(root):
    subfolders[:] = [s for s in subfolders if not s.startswith((".", "build"))]  # git, build trees, .devdeps
    paths |= {(Path(folder) / n).relative_to(root).as_posix() for n in names}
known = outside | paths | {p[len("src/"):] for p in paths if p.startswith("src/")} | {p.rsplit("/", 1)[-1] for p in paths}
pages = [root / "docs/design.md"] + sorted((root / "docs/design").glob("*.md"))
for page in pages:
    for name in re.findall(r"`([\w./-]+\.(?:cpp|hpp|cu|cuh|h|def|txt|py|map|sh|cl))`", page.read_text()):
        if name not in known and not any(p.endswith("/" + name) for p in paths):
            failures.append(f"{page.relative_to(root)} names `{name}`, which is not in the tree")

# Within a folder no unit (a header and its source, by name) includes another that includes it
# back, directly or around a loop: each folder's units form a hierarchy a newcomer reads bottom up.
includes = {}
for path in (root / "src").rglob("*"):
    if path.suffix in (".cpp", ".hpp", ".cu", ".cuh", ".h", ".def"):
        unit = path.relative_to(root / "src").with_suffix("").as_posix()
        targets = {Path(t).with_suffix("").as_posix() for t in re.findall(r'#include "([^"]+)"', path.read_text())}
        includes.setdefault(unit, set()).update(t for t in targets if t != unit)


def folder(unit):
    return unit.rsplit("/", 1)[0]


def loop_from(start):
    """A path of same-folder includes from `start` back to itself, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        unit, trail = stack.pop()
        for target in includes.get(unit, ()):
            if folder(target) != folder(start):
                continue
            if target == start:
                return trail + [start]
            if target not in seen:
                seen.add(target)
                stack.append((target, trail + [target]))
    return None


reported = set()
for unit in sorted(includes):
    loop = loop_from(unit)
    if loop and frozenset(loop) not in reported:
        reported.add(frozenset(loop))
        failures.append("units of one folder include each other: " + " -> ".join(loop))

for failure in failures:
    print("FAIL:", failure)
print(f"docs/design.md: {len(layers)} layers, {len(documented_exports)} exports, {len(pages)} pages checked; "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
