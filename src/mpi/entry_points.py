#!/usr/bin/env python3
"""Everything gddt derives from its MPI entry-point table (entry_points.txt beside this file).

  entry_points.py shims --declared MPI_H_PREPROCESSED --cpp OUT.cpp --hpp OUT.hpp --names OUT.inc
      the exported shims of the functions the MPI library's mpi.h declares, the declarations of
      gddt's implementations (gddt::mpi::entry) with a GDDT_HAVE_MPI_<name> macro per declared
      function, and one GDDT_ENTRY_POINT(class, name) line per declared function for the tests
  entry_points.py markdown [--check DOC]
      docs/entry-points.md; with --check, fails when DOC differs from it
  entry_points.py check-library LIBRARY... [--gddt LIBGDDT --declared MPI_H_PREPROCESSED]
      fails when a library exports an MPI_* function that the table lacks, or (with --gddt)
      when libgddt does not export the shim of a declared function that has one
"""
import argparse
import pathlib
import re
import subprocess
import sys

TABLE = pathlib.Path(__file__).with_name("entry_points.txt")
CLASSES = ("intercepted", "blocking", "checked", "forward")
ROW = re.compile(r"^(\w+)\s+(MPI_\w+)(?:\((.*)\))?\s*(?:\|\s*(.*))?$")
BUFFER = re.compile(r"^(\w+):(\w+)(?:\[(peer|in|out)\])?(?:@(root|leaf))?$")
PER = {None: "kCall", "peer": "kPeer", "in": "kInNeighbor", "out": "kOutNeighbor"}
SIDE = {None: "kAny", "root": "kRoot", "leaf": "kLeaf"}
# The handle on whose error handler a refusal is raised, by parameter type.
TARGETS = {"MPI_Comm": "on_comm", "MPI_Win": "on_window", "MPI_File": "on_file"}


class Row:
    def __init__(self, kind, name, parameters, buffers, listed):
        self.kind, self.name = kind, name
        self.parameters = parameters  # list of (declaration, name), None for forward rows
        self.buffers = buffers  # (buffer, datatype, per, side) each
        self.listed = listed  # the buffers as the table writes them

    @property
    def short(self):
        return self.name[len("MPI_"):]

    def declaration(self):
        return ", ".join(d for d, _ in self.parameters) or "void"

    def arguments(self):
        return ", ".join(n for _, n in self.parameters)


def fail(message):
    sys.exit(f"entry_points.py: {message}")


def split_parameters(text, where):
    if text.strip() in ("", "void"):
        return []
    parameters = []
    for declaration in (p.strip() for p in text.split(",")):
        match = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", declaration)
        if not match:
            fail(f"{where}: cannot name the parameter '{declaration}'")
        parameters.append((declaration, match.group(1)))
    return parameters


def read_table():
    rows, seen = [], set()
    for number, line in enumerate(TABLE.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{TABLE.name}:{number}"
        match = ROW.match(line)
        if not match:
            fail(f"{where}: not a row: {line}")
        kind, name, parameters, buffers = match.groups()
        if kind not in CLASSES:
            fail(f"{where}: class '{kind}' is none of {', '.join(CLASSES)}")
        if name in seen:
            fail(f"{where}: {name} has a row already")
        seen.add(name)
        if (kind == "forward") != (parameters is None):
            fail(f"{where}: {'forward rows have no' if kind == 'forward' else 'a shim needs its'} parameters")
        if (kind == "checked" and not buffers) or (kind in ("intercepted", "forward") and buffers):
            fail(f"{where}: checked rows list their buffers, blocking rows may, other rows do not")
        params = None if parameters is None else split_parameters(parameters, where)
        specs = []
        for spec in (s.strip() for s in (buffers or "").split(",") if s.strip()):
            b = BUFFER.match(spec)
            if not b or params is None or not {b.group(1), b.group(2)} <= {n for _, n in params}:
                fail(f"{where}: '{spec}' does not name a buffer and a datatype parameter")
            specs.append(b.groups())
        rows.append(Row(kind, name, params, specs, buffers or ""))
    return rows


def declared_functions(preprocessed):
    """The MPI_* functions whose PMPI_* profiling twin the preprocessed mpi.h declares."""
    text = pathlib.Path(preprocessed).read_text(errors="replace")
    return {"MPI_" + m for m in re.findall(r"\bPMPI_(\w+)\s*\(", text)}


def guard(row):
    named = {d.split()[1] if d.startswith("const") else d.split()[0]: n for d, n in row.parameters}
    target, handle = next(((f, named[t]) for t, f in TARGETS.items() if t in named), (None, None))
    buffers = []
    for buffer, datatype, per, side in row.buffers:
        address = datatype if per else f"&{datatype}"
        buffers.append(f"{{{buffer}, {address}, Per::{PER[per]}, Side::{SIDE[side]}}}")
    listed = ", ".join(buffers)
    names = {n for _, n in row.parameters}
    if target == "on_comm":
        root = "root" if "root" in names else "guard::kNotRooted"
        call = f"guard::on_comm({handle}, {root}, {{{listed}}})"
    elif target:
        call = f"guard::{target}({handle}, {{{listed}}})"
    else:
        call = f"guard::on_comm(MPI_COMM_SELF, guard::kNotRooted, {{{listed}}})"
    return [
        "  if (!gddt::mpi::stepped_aside()) {",
        f"    const int refused = gddt::mpi::{call};",
        "    if (refused != MPI_SUCCESS) return refused;",
        "  }",
    ]


def shim(row):
    head = f"GDDT_MPI_ENTRY int {row.name}({row.declaration()}) {{"
    forward = f"PMPI_{row.short}({row.arguments()})"
    if row.kind == "intercepted":
        body = [f"  if (gddt::mpi::stepped_aside()) return {forward};",
                f"  return gddt::mpi::entry::{row.short}({row.arguments()});"]
    else:
        body = guard(row) if row.buffers else []
        if row.kind == "blocking":
            body.append("  const gddt::mpi::BlockingCall blocking;")
        body.append(f"  return {forward};")
    return "\n".join([head, *body, "}"])


GENERATED = "// Generated by src/mpi/entry_points.py from src/mpi/entry_points.txt for this build's mpi.h: do not edit."


def write_shims(rows, declared, cpp, hpp, names):
    present = [r for r in rows if r.name in declared]
    hpp_lines = [GENERATED, "#pragma once", "", "#include <mpi.h>", ""]
    hpp_lines += [f"#define GDDT_HAVE_{r.name} 1" for r in present]
    hpp_lines += ["", "// gddt's implementations of the intercepted functions, called by their shims.",
                  "namespace gddt::mpi::entry {", ""]
    hpp_lines += [f"int {r.short}({r.declaration()});" for r in present if r.kind == "intercepted"]
    hpp_lines += ["", "}  // namespace gddt::mpi::entry", ""]
    cpp_lines = [GENERATED, '#include "mpi/entry_points.hpp"', '#include "mpi/guard.hpp"',
                 '#include "mpi/interpose.hpp"', "", "using gddt::mpi::guard::Per;",
                 "using gddt::mpi::guard::Side;", "namespace guard = gddt::mpi::guard;", ""]
    cpp_lines += [shim(r) + "\n" for r in present if r.kind != "forward"]
    names_lines = [GENERATED] + [f"GDDT_ENTRY_POINT({r.kind}, {r.name})" for r in present]
    for path, lines in ((hpp, hpp_lines), (cpp, cpp_lines), (names, names_lines)):
        text = "\n".join(lines) + "\n"
        path = pathlib.Path(path)
        if not path.exists() or path.read_text() != text:  # an unchanged file rebuilds nothing
            path.write_text(text)


def markdown(rows):
    titles = {
        "intercepted": "Intercepted: gddt implements them",
        "blocking": "May block: held sends start first, freed requests finish after",
        "checked": "Checked: device data the library would pack with the CPU is refused",
        "forward": "Forwarded: no shim, the library's own function",
    }
    out = ["# MPI entry points", "",
           "Generated by `python3 src/mpi/entry_points.py markdown` from `src/mpi/entry_points.txt`, the one",
           "table of every MPI function gddt knows (MPI 4.1 with its `_c` forms, plus what Open MPI and",
           "MPICH export beyond it). A shim exists only where the MPI library's `mpi.h` declares the",
           "function. Buffers of blocking and checked calls are listed as `buffer:datatype`; see the",
           "table's header for the notation.", ""]
    for kind in CLASSES:
        chosen = [r for r in rows if r.kind == kind]
        out += [f"## {titles[kind]} ({len(chosen)})", ""]
        if kind in ("intercepted", "forward"):
            out += [", ".join(f"`{r.name}`" for r in chosen), ""]
            continue
        out += ["| function | buffers |", "|---|---|"]
        for r in chosen:
            out.append(f"| `{r.name}` | {r.listed} |")
        out.append("")
    return "\n".join(out)


def exported(library):
    listing = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    return {f[2] for f in (line.split() for line in listing.stdout.splitlines())
            if len(f) == 3 and f[1] in "TWi" and re.match(r"MPI_\w+$", f[2])}


def check_library(rows, libraries, gddt, declared):
    known = {r.name for r in rows}
    failed = False
    for library in libraries:
        functions = exported(library)
        missing = sorted(functions - known)
        print(f"{library}: {len(functions)} MPI_* functions exported, {len(missing)} without a row")
        for name in missing:
            print(f"  no row: {name}")
        failed = failed or bool(missing)
    if gddt:
        present = declared_functions(declared)
        shims = {r.name for r in rows if r.kind != "forward" and r.name in present}
        exports = exported(gddt)
        absent = sorted(shims - exports)
        print(f"{gddt}: {len(shims)} shims expected, {len(absent)} not exported")
        for name in absent:
            print(f"  not exported: {name}")
        extra = sorted(exports - shims)
        for name in extra:
            print(f"  exported without a row that makes a shim: {name}")
        failed = failed or bool(absent) or bool(extra)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("shims")
    s.add_argument("--declared", required=True)
    s.add_argument("--cpp", required=True)
    s.add_argument("--hpp", required=True)
    s.add_argument("--names", required=True)
    m = sub.add_parser("markdown")
    m.add_argument("--check")
    c = sub.add_parser("check-library")
    c.add_argument("libraries", nargs="+")
    c.add_argument("--gddt")
    c.add_argument("--declared")
    args = parser.parse_args()
    rows = read_table()
    if args.command == "shims":
        write_shims(rows, declared_functions(args.declared), args.cpp, args.hpp, args.names)
    elif args.command == "markdown":
        text = markdown(rows) + "\n"
        if not args.check:
            sys.stdout.write(text)
        elif pathlib.Path(args.check).read_text() != text:
            fail(f"{args.check} is out of date: python3 src/mpi/entry_points.py markdown > {args.check}")
    else:
        if args.gddt and not args.declared:
            fail("--gddt needs --declared")
        return check_library(rows, args.libraries, args.gddt, args.declared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
