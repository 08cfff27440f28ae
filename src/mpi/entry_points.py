#!/usr/bin/env python3
"""Everything gddt derives from its MPI entry-point table (entry_points.txt beside this file).

  entry_points.py shims --declared MPI_H_PREPROCESSED --cpp OUT.cpp --hpp OUT.hpp --names OUT.inc
                       --fortran OUT_FORTRAN.cpp
      the exported shims of the functions the MPI library's mpi.h declares, the declarations of
      gddt's implementations (gddt::mpi::entry) with a GDDT_HAVE_MPI_<name> macro per declared
      function, one GDDT_ENTRY_POINT(class, name, may block) line per declared function for the tests, and
      the Fortran entry points of those gddt does not forward that --fortran-library, the
      library's Fortran layer, defines where it calls PMPI_* itself
  entry_points.py markdown [--check DOC]
      docs/entry-points.md; with --check, fails when DOC differs from it
  entry_points.py check-library LIBRARY... [--gddt LIBGDDT --declared MPI_H_PREPROCESSED
                                            --fortran-library LIBMPI_MPIFH]
      fails when a library exports an MPI_* function that the table lacks, or (with --gddt)
      when libgddt does not export the shim of a declared function that has one, or exports
      other Fortran entry points than those of the library's Fortran layer that need them
"""
import argparse
import copy
import pathlib
import re
import subprocess
import sys

TABLE = pathlib.Path(__file__).with_name("entry_points.txt")
CLASSES = ("intercepted", "staged", "blocking", "checked", "made", "forward")
ROW = re.compile(r"^(\w+)\s+(MPI_\w+)(?:\((.*)\))?\s*(?:\|\s*(.*))?$")
BUFFER = re.compile(r"^(\w+):(\w+)(?:\[(peer|in|out)\])?(?:@(root|leaf))?$")
PER = {None: "kCall", "peer": "kPeer", "in": "kInNeighbor", "out": "kOutNeighbor"}
SIDE = {None: "kAny", "root": "kRoot", "leaf": "kLeaf"}
# A buffer of a staged row: direction, buffer, count (a parameter, an array indexed per segment, the
# entry of this rank, or the sum of the group's entries), datatype (one, or one per segment), and
# where segment i starts: at 0, i whole blocks further (/per), or at displacement array entry i
# (+name: in extents of the datatype, in bytes where the datatype is per segment).
STAGED_BUFFER = re.compile(r"^(in|out|inout)\s+(\w+):(\w+)(?:\[(peer|in|out|rank|sum)\])?\*(\w+)(?:\[(peer|in|out)\])?"
                           r"(?:/(peer|in|out)|\+(\w+))?(?:@(root|leaf))?$")
# The buffer of the *_end of a split collective file call: the one its *_begin staged.
BEGUN_BUFFER = re.compile(r"^(in|out|inout)\s+(\w+):begin$")
DIRECTIONS = {"in": "kIn", "out": "kOut", "inout": "kInOut"}
# The handle on whose error handler a refusal is raised, by parameter type.
TARGETS = {"MPI_Comm": "on_comm", "MPI_File": "on_file"}


class Row:
    def __init__(self, kind, name, parameters, buffers, listed, flag=None):
        self.kind, self.name = kind, name
        self.fast = flag == "fast"  # the shim first asks gddt::mpi::fast::<short> whether to call the library at once
        self.blocking = flag == "blocking"  # an intercepted call that may wait for another process
        self.parameters = parameters  # list of (declaration, name), None for forward rows
        self.buffers = buffers  # (buffer, datatype, per, side) each
        self.staged = []  # staged rows: STAGED_BUFFER's groups for each buffer
        self.resumed = None  # the *_end of a split collective: its buffer parameter (BEGUN_BUFFER)
        self.listed = listed  # the buffers as the table writes them
        self.made = None  # made rows: the parameter that returns the new datatype

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
        flag = buffers.strip() if kind == "intercepted" and buffers is not None else None
        if flag in ("fast", "blocking"):
            buffers = None
        made = None
        if kind == "made":
            made, buffers = (buffers or "").strip(), None
        if (kind in ("checked", "staged") and not buffers) or (kind in ("intercepted", "forward") and buffers):
            fail(f"{where}: checked and staged rows list their buffers, blocking rows may, intercepted rows may "
                 "say `fast` or `blocking`, made rows name their new datatype, forward rows say nothing")
        params = None if parameters is None else split_parameters(parameters, where)
        if kind == "made" and f"MPI_Datatype *{made}" not in [d for d, _ in params]:
            fail(f"{where}: a made row names its `MPI_Datatype *` parameter after `|`")
        specs, staged, resumed = [], [], None
        for spec in (s.strip() for s in (buffers or "").split(",") if s.strip()):
            begun = BEGUN_BUFFER.match(spec) if kind == "staged" else None
            if begun:
                if begun.group(2) not in {n for _, n in params} or staged or resumed:
                    fail(f"{where}: '{spec}' is not the one buffer parameter of a split collective's end")
                resumed = begun.group(2)
                continue
            if kind == "staged":
                b = STAGED_BUFFER.match(spec)
                named = b and {b.group(2), b.group(3), b.group(5)} | ({b.group(8)} if b.group(8) else set())
                if not b or not named <= {n for _, n in params}:
                    fail(f"{where}: '{spec}' is not a staged buffer of this function's parameters")
                staged.append(b.groups())
                direction, buffer, count, count_per, datatype, type_per, blocks, displs, side = b.groups()
                specs.append((buffer, datatype, type_per, side))
                continue
            b = BUFFER.match(spec)
            if not b or params is None or not {b.group(1), b.group(2)} <= {n for _, n in params}:
                fail(f"{where}: '{spec}' does not name a buffer and a datatype parameter")
            specs.append(b.groups())
        row = Row(kind, name, params, specs, made or buffers or "", flag)
        row.staged = staged
        row.made = made
        row.resumed = resumed
        if resumed and staged:
            fail(f"{where}: a split collective's end has only the buffer its begin staged")
        rows.append(row)
    return rows


def declared_functions(preprocessed):
    """The MPI_* functions whose PMPI_* profiling twin the preprocessed mpi.h declares."""
    text = pathlib.Path(preprocessed).read_text(errors="replace")
    return {"MPI_" + m for m in re.findall(r"\bPMPI_(\w+)\s*\(", text)}


def guard(row, refusal="return refused;"):
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
        f"    if (refused != MPI_SUCCESS) {refusal}",
        "  }",
    ]


def staged_rewrite(spec):
    """The lambda that points a staged buffer's count, datatype and displacement parameters at its
    packed bytes (collective::PackedSegments)."""
    direction, buffer, count, count_per, datatype, type_per, blocks, displs, side = spec
    checks = [f"p.fit({count})"] + ([f"p.fit({displs})"] if displs else [])
    sets = [f"p.{'counts' if count_per else 'count'}(&{count});",
            f"p.{'datatypes' if type_per else 'datatype'}(&{datatype});"]
    if displs:
        sets.append(f"p.displacements(&{displs});")
    return (f"[&](gddt::mpi::collective::PackedSegments& p) {{ if (!({' && '.join(checks)})) return false; "
            f"{' '.join(sets)} return true; }}")


def staged_argument(spec, packable):
    """One collective::Argument of a staged row's buffer; only calls that move data without reducing
    it, and are not file calls (the library's datatype engine meets the file view there), have a
    packed path."""
    direction, buffer, count, count_per, datatype, type_per, blocks, displs, side = spec
    per = next((p for p in (count_per, type_per, blocks) if p in ("peer", "in", "out")), None)
    if count_per in ("peer", "in", "out"):
        count = f"{count}[i]"
    elif count_per == "rank":
        count = f"{count}[stand_ins.rank()]"
    elif count_per == "sum":
        count = f"gddt::mpi::collective::sum_of({count}, stand_ins.local_size())"
    if type_per:
        datatype = f"{datatype}[i]"
    unit = "Unit::kBytes" if type_per else "Unit::kExtents"
    displacement = f"i * std::int64_t{{{count}}}" if blocks else f"{displs}[i]" if displs else "0"
    segment = (f"[&](int i) {{ (void)i; return Segment{{std::int64_t{{{count}}}, {datatype}, "
               f"std::int64_t{{{displacement}}}, Segment::{unit}}}; }}")
    rewrite = f",\n       {staged_rewrite(spec)}" if packable else ""
    return (f"      {{Direction::{DIRECTIONS[direction]}, &{buffer}, Per::{PER[per]}, Side::{SIDE[side]},\n"
            f"       {segment}{rewrite}}},")


def file_handle(row):
    """The MPI_File parameter of a file call's row, or None."""
    return next((n for d, n in row.parameters or [] if d.split()[0] == "MPI_File"), None)


def blocks(row):
    """Whether a row's function may wait for another process: blocking rows, intercepted rows that say
    so, and staged collectives and file calls that return no request."""
    names = {n for _, n in row.parameters or []}
    return (row.kind == "blocking" or row.blocking or
            (row.kind == "staged" and "request" not in names and ("comm" in names or file_handle(row) is not None)))


def staged_shim(row, forward):
    names = {n for _, n in row.parameters}
    file = file_handle(row)
    body = [f"  if (gddt::mpi::stepped_aside()) return {forward};"]
    if blocks(row):
        body.append("  const gddt::mpi::BlockingCall blocking;")
    if file:
        body.append(f"  gddt::mpi::collective::StandIns stand_ins({file});")
    else:
        comm = "comm" if "comm" in names else "MPI_COMM_SELF"
        root = "root" if "root" in names else "guard::kNotRooted"
        persistent = row.name.endswith("_init") or row.name.endswith("_init_c")
        filled = ", gddt::mpi::collective::StandIns::Filled::kAtStart" if persistent else ""
        body.append(f"  gddt::mpi::collective::StandIns stand_ins({comm}, {root}{filled});")
    if row.resumed:
        body.append(f"  stand_ins.resume(&{row.resumed});")
    else:
        packable = "op" not in names and not file
        body += ["  const int made = stand_ins.make({",
                 *[staged_argument(spec, packable) for spec in row.staged],
                 "  });",
                 "  if (made != MPI_SUCCESS) return made;"]
    if "request" in names:
        body.append(f"  return stand_ins.track({forward}, request);")
    elif re.search(r"_begin(_c)?$", row.name):
        body.append(f"  return stand_ins.keep_until_end({forward});")
    else:
        body.append(f"  return stand_ins.finish({forward});")
    return body


def shim(row):
    head = f"GDDT_MPI_ENTRY int {row.name}({row.declaration()}) {{"
    forward = f"PMPI_{row.short}({row.arguments()})"
    if row.kind == "staged":
        return "\n".join([head, *staged_shim(row, forward), "}"])
    if row.kind == "intercepted" and row.fast:
        # The fast test reads a few globals and calls nothing, so both ways out are tail calls
        # with the caller's arguments still in their registers: ordinary host traffic pays a
        # handful of instructions, not a frame. The rest is the slow way, out of line.
        slow = f"gddt_slow_{row.name}"
        return "\n".join([
            f"namespace {{\n__attribute__((noinline)) int {slow}({row.declaration()}) {{",
            f"  if (gddt::mpi::stepped_aside()) return {forward};",
            f"  return gddt::mpi::entry::{row.short}({row.arguments()});",
            "}\n}  // namespace",
            head,
            f"  if (gddt::mpi::fast::{row.short}({row.arguments()})) return {forward};",
            f"  return {slow}({row.arguments()});",
            "}"])
    if row.kind == "intercepted":
        body = [f"  if (gddt::mpi::stepped_aside()) return {forward};"]
        if row.blocking:
            body.append("  const gddt::mpi::BlockingCall blocking;")
        body.append(f"  return gddt::mpi::entry::{row.short}({row.arguments()});")
    elif row.kind == "made":
        body = [f"  const int rc = {forward};",
                f"  if (rc == MPI_SUCCESS && !gddt::mpi::stepped_aside()) gddt::mpi::made_datatype(*{row.made});",
                "  return rc;"]
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
    cpp_lines = [GENERATED, "#include <cstdint>", "", '#include "mpi/collective.hpp"',
                 '#include "mpi/entry_points.hpp"', '#include "mpi/fast_path.hpp"', '#include "mpi/guard.hpp"',
                 '#include "mpi/interpose.hpp"', "", "using gddt::mpi::guard::Per;", "using gddt::mpi::guard::Side;",
                 "using gddt::mpi::collective::Direction;", "using gddt::mpi::collective::Segment;",
                 "namespace guard = gddt::mpi::guard;", ""]
    cpp_lines += [shim(r) + "\n" for r in present if r.kind != "forward"]
    names_lines = [GENERATED] + [f"GDDT_ENTRY_POINT({r.kind}, {r.name}, {int(blocks(r))})" for r in present]
    for path, lines in ((hpp, hpp_lines), (cpp, cpp_lines), (names, names_lines)):
        text = "\n".join(lines) + "\n"
        path = pathlib.Path(path)
        if not path.exists() or path.read_text() != text:  # an unchanged file rebuilds nothing
            path.write_text(text)


# Fortran layers that call PMPI_* themselves, past any C interposer, need gddt's own Fortran
# functions: all of Open MPI's (mpif.h, `use mpi`, and through ompi_<name>_f also `use mpi_f08`),
# and MPICH's mpi_f08 procedures without choice buffers (mpi_<name>_f08_; those with one, and its
# mpif.h and `use mpi`, call MPI_*, which gddt's C shims serve). So gddt defines the functions of
# such a layer (the library's Fortran library, --fortran-library) whose rows are not forward:
# under Open MPI ompi_<name>_f and the four manglings of mpif.h and `use mpi`, under MPICH
# mpi_<name>_f08_. Intercepted functions convert their arguments (handles by the f2c/c2f
# functions, INTEGER status arrays, the layer's MPI_BOTTOM, MPI_IN_PLACE and MPI_STATUS(ES)_IGNORE,
# 1-based indices) and call gddt's implementation; staged ones (collectives) convert theirs the
# same way, their per-peer datatype arrays by the communicator's size, and call gddt's C shim;
# the others check their buffers like the C shims, start held sends where the row says blocking,
# and call the library's own function with their arguments untouched.
FORTRAN_LAYERS = {  # name of a function's Fortran symbol, and its aliases
    "open_mpi": (lambda name: f"ompi_{name}_f",
                 lambda name: [f"mpi_{name}", f"mpi_{name}_", f"mpi_{name}__", f"MPI_{name.upper()}"]),
    "mpich_f08": (lambda name: f"mpi_{name}_f08_", lambda name: []),
}
FORTRAN_LAYER_ENUMS = {None: "kNone", "open_mpi": "kOpenMpi", "mpich_f08": "kMpichF08"}  # fortran::Layer
FORTRAN_HANDLES = {"MPI_Datatype": "Type", "MPI_Comm": "Comm", "MPI_Request": "Request", "MPI_Message": "Message",
                   "MPI_Op": "Op", "MPI_Info": "Info", "MPI_Win": "Win", "MPI_Group": "Group", "MPI_File": "File",
                   "MPIO_Request": "Request"}
FORTRAN_NULLS = {"MPI_Datatype": "MPI_DATATYPE_NULL", "MPI_Comm": "MPI_COMM_NULL", "MPI_Request": "MPI_REQUEST_NULL",
                 "MPI_Message": "MPI_MESSAGE_NULL", "MPI_Win": "MPI_WIN_NULL", "MPIO_Request": "MPI_REQUEST_NULL"}
# Their handle argument is only written: the message of matched probes, the window of window constructors.
FORTRAN_OUT_HANDLES = {"MPI_Mprobe", "MPI_Improbe", "MPI_Win_create", "MPI_Win_create_c", "MPI_Win_allocate",
                       "MPI_Win_allocate_c", "MPI_Win_allocate_shared", "MPI_Win_allocate_shared_c",
                       "MPI_Win_create_dynamic"}
FORTRAN_INDICES = {"indx", "index"}


def fortran_name(row):
    return row.short.lower()


def fortran_hidden_lengths(row):
    return [n for d, n in row.parameters if "char" in d]


def fortran_forward(row):
    """The library's own Fortran function, called with the caller's arguments."""
    types = ["void*"] * (len(row.parameters) + 1) + ["std::size_t"] * len(fortran_hidden_lengths(row))
    names = [f"a{i}" for i in range(len(types))]
    return ", ".join(types), ", ".join(f"{t} {n}" for t, n in zip(types, names)), ", ".join(names)


def fortran_conversion(row):
    """(Fortran parameters, code before the call, C arguments, code after the call)."""
    params, before, args, after, lengths = [], [], [], [], []
    count_name = next((n for d, n in row.parameters if d.startswith("int ") and n in ("count", "incount")), None)
    for declaration, name in row.parameters:
        base = declaration.replace("const ", "").split()[0]
        pointer = "*" in declaration
        array = "[]" in declaration
        if "char" in declaration:
            params.append(f"char* {name}")
            lengths.append(f"std::size_t {name}_length")
            before.append(f"  const std::string {name}_c = gddt::mpi::fortran::text({name}, {name}_length);")
            args.append(f"{name}_c.c_str()")
        elif base == "void":
            params.append(f"char* {name}")
            args.append(f"gddt::mpi::fortran::buffer({name})")
        elif base in ("int", "MPI_Aint") and array and row.kind == "staged":  # counts and displacements
            params.append(f"{'MPI_Fint' if base == 'int' else 'MPI_Aint'}* {name}")
            args.append(name)
        elif base == "MPI_Datatype" and array and row.kind == "staged":  # one per peer or neighbour
            per = next(per for _, datatype, per, _ in row.buffers if datatype == name)
            params.append(f"MPI_Fint* {name}")
            before.append(f"  const std::vector<MPI_Datatype> {name}_c = gddt::mpi::fortran::datatypes({name}, "
                          f"MPI_Comm_f2c(*comm), Per::{PER[per]});")
            args.append(f"{name}_c.data()")
        elif base == "int" and name == "array_of_indices":
            params.append(f"MPI_Fint* {name}")
            before.append(f"  std::vector<int> {name}_c(gddt::mpi::fortran::length(*{count_name}));")
            args.append(f"{name}_c.data()")
            after.append(f"  gddt::mpi::fortran::indices_out({name}_c.data(), outcount_c, {name});")
        elif base == "int" and array:  # input integers, as many as the row's first int says
            length_name = next(n for d, n in row.parameters if d == f"int {n}")
            params.append(f"MPI_Fint* {name}")
            before.append(f"  std::vector<int> {name}_c({name}, {name} + gddt::mpi::fortran::length(*{length_name}));")
            args.append(f"{name}_c.data()")
        elif base == "int" and pointer:
            params.append(f"MPI_Fint* {name}")
            before.append(f"  int {name}_c = static_cast<int>(*{name});")
            args.append(f"&{name}_c")
            after.append(f"  *{name} = gddt::mpi::fortran::{'index_out' if name in FORTRAN_INDICES else 'integer_out'}({name}_c);")
        elif base == "int":
            params.append(f"MPI_Fint* {name}")
            args.append(f"static_cast<int>(*{name})")
        elif base in ("MPI_Aint", "MPI_Offset"):
            params.append(f"{base}* {name}")
            args.append(name if pointer else f"*{name}")
        elif base == "MPI_Status":
            params.append(f"MPI_Fint* {name}")
            size = f", *{count_name}" if array else ""
            before.append(f"  gddt::mpi::fortran::Statuses {name}_c({name}{size});")
            args.append(f"{name}_c.data()")
            after.append(f"  {name}_c.out();")
        elif base in FORTRAN_HANDLES:
            kind = FORTRAN_HANDLES[base]
            params.append(f"MPI_Fint* {name}")
            if array:
                before.append(f"  gddt::mpi::fortran::Handles<{base}> {name}_c({name}, *{count_name}, "
                              f"[](MPI_Fint f) {{ return MPI_{kind}_f2c(f); }});")
                args.append(f"{name}_c.data()")
                after.append(f"  {name}_c.out([]({base} c) {{ return MPI_{kind}_c2f(c); }});")
            elif pointer:
                out_only = name.startswith("new") or row.name in FORTRAN_OUT_HANDLES or row.kind == "staged"
                start = FORTRAN_NULLS[base] if out_only else f"MPI_{kind}_f2c(*{name})"
                before.append(f"  {base} {name}_c = {start};")
                args.append(f"&{name}_c")
                after.append(f"  *{name} = MPI_{kind}_c2f({name}_c);")
            else:
                args.append(f"MPI_{kind}_f2c(*{name})")
        else:
            fail(f"{row.name}: no Fortran conversion for '{declaration}'")
    return params, before, args, after, lengths


FORTRAN_TARGETS = {"MPI_Comm": "Comm", "MPI_File": "File"}


def fortran_guard(row):
    """The C arguments the guard of `row` reads, made from the Fortran ones (a0...), then it."""
    named = {n: (i, d.replace("const ", "").split()[0]) for i, (d, n) in enumerate(row.parameters)}
    target = next((n for n, (_, base) in named.items() if base in FORTRAN_TARGETS), None)
    per_of = {datatype: per for _, datatype, per, _ in row.buffers}
    lines = []
    if target:
        i, base = named[target]
        lines.append(f"    const {base} {target} = MPI_{FORTRAN_TARGETS[base]}_f2c(*static_cast<MPI_Fint*>(a{i}));")
    if "root" in named:
        lines.append(f"    const int root = static_cast<int>(*static_cast<MPI_Fint*>(a{named['root'][0]}));")
    made = set()
    for buffer, datatype, per, _ in row.buffers:
        if buffer not in made:
            lines.append(f"    void* {buffer} = gddt::mpi::fortran::buffer(static_cast<char*>(a{named[buffer][0]}));")
        if datatype in made:
            continue
        made |= {buffer, datatype}
        i = named[datatype][0]
        if per_of[datatype]:
            lines.append(f"    const std::vector<MPI_Datatype> {datatype}_c = gddt::mpi::fortran::datatypes("
                         f"static_cast<MPI_Fint*>(a{i}), {target}, Per::{PER[per]});")
            lines.append(f"    const MPI_Datatype* {datatype} = {datatype}_c.data();")
        else:
            lines.append(f"    const MPI_Datatype {datatype} = MPI_Type_f2c(*static_cast<MPI_Fint*>(a{i}));")
    ierror = f"a{len(row.parameters)}"
    refusal = f"{{\n      if ({ierror} != nullptr) *static_cast<MPI_Fint*>({ierror}) = refused;\n      return;\n    }}"
    checks = ["  " + line for line in guard(row, refusal)]
    return ["  {", *lines, *checks, "  }"]


# Intercepted in C only: the communicator constructors and MPI_Init, where gddt agrees on its peer
# protocol (protocol/peer/peers.hpp). Their Fortran entry points call the library's own, as blocking
# rows do: a Fortran program never registers as a peer, so its communicators keep the raw format.
FORTRAN_AS_BLOCKING = {"MPI_Init", "MPI_Init_thread", "MPI_Comm_dup", "MPI_Comm_dup_with_info", "MPI_Comm_split",
                       "MPI_Comm_split_type", "MPI_Comm_create", "MPI_Comm_create_group", "MPI_Cart_create",
                       "MPI_Cart_sub", "MPI_Graph_create", "MPI_Dist_graph_create", "MPI_Dist_graph_create_adjacent",
                       "MPI_Intercomm_merge", "MPI_Comm_free", "MPI_Comm_disconnect"}


def fortran_shim(row, layer):
    if row.name in FORTRAN_AS_BLOCKING:
        row = copy.copy(row)
        row.kind = "blocking"
    symbol_of, aliases_of = FORTRAN_LAYERS[layer]
    symbol = symbol_of(fortran_name(row))
    forward_types, forward_declared, forward_names = fortran_forward(row)
    library = f'static const auto library = gddt::mpi::fortran::library<void (*)({forward_types})>("{symbol}");'
    if row.kind in ("intercepted", "staged"):
        # Staged rows call gddt's C shim of the function, which stages their buffers.
        target = f"gddt::mpi::entry::{row.short}" if row.kind == "intercepted" else f"::{row.name}"
        params, before, args, after, lengths = fortran_conversion(row)
        signature = ", ".join(params + ["MPI_Fint* ierror"] + lengths)
        passed = ", ".join([p.split()[-1] for p in params] + ["ierror"] + [n.split()[-1] for n in lengths])
        body = ["  if (gddt::mpi::stepped_aside()) {",
                f"    {library}",
                f"    return library({passed});",
                "  }",
                *(["  const gddt::mpi::BlockingCall blocking;"] if row.blocking else []),
                *before,
                f"  const int rc = {target}({', '.join(args)});",
                *after,
                "  if (ierror != nullptr) *ierror = rc;"]
    else:
        signature = forward_declared
        body = [f"  {library}"]
        if row.buffers:
            body += fortran_guard(row)
        if blocks(row):
            body.append("  const gddt::mpi::BlockingCall blocking;")
        body.append(f"  library({forward_names});")
        if row.kind == "made":
            made = next(i for i, (_, n) in enumerate(row.parameters) if n == row.made)
            ierror = f"static_cast<MPI_Fint*>(a{len(row.parameters)})"
            body += [f"  if (({ierror} == nullptr || *{ierror} == MPI_SUCCESS) && !gddt::mpi::stepped_aside())",
                     f"    gddt::mpi::made_datatype(MPI_Type_f2c(*static_cast<MPI_Fint*>(a{made})));"]
    lines = [f"GDDT_FORTRAN_ENTRY void {symbol}({signature}) {{", *body, "}"]
    lines += [f'GDDT_FORTRAN_ALIAS("{symbol}") void {alias}({signature});' for alias in aliases_of(fortran_name(row))]
    return "\n".join(lines)


def fortran_layer(library):
    """Which kind of Fortran layer `library` is, and the functions it defines."""
    if not library:
        return None, set()
    listing = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    defined = {f[2] for f in (line.split() for line in listing.stdout.splitlines()) if len(f) == 3 and f[1] in "TWi"}
    if any(re.match(r"ompi_\w+_f$", name) for name in defined):
        return "open_mpi", defined
    if any(name.endswith("_f08_") for name in defined):
        return "mpich_f08", defined
    return None, defined


# Intercepted in C only: MPI_Type_get_contents returns arrays the conversions above do not write
# back. Open MPI returns new handles there, which need no bookkeeping; MPICH's mpi_f08 procedure
# calls PMPI itself, so there a Fortran program that frees the references it returned can still
# see its types refused (docs/usage.md, "Fortran callers"). MPI_Win_get_attr returns an
# attribute's value to Fortran, not a pointer: its Fortran callers see the library's window
# (docs/usage.md, "One-sided communication on device memory").
FORTRAN_LIBRARY_OWN = {"MPI_Type_get_contents", "MPI_Type_get_contents_c", "MPI_Win_get_attr"}


def fortran_rows(rows, declared, layer, defined):
    if layer is None:
        return []
    symbol_of = FORTRAN_LAYERS[layer][0]
    return [r for r in rows if r.kind != "forward" and r.name not in FORTRAN_LIBRARY_OWN and r.name in declared
            and symbol_of(fortran_name(r)) in defined]


def write_fortran(rows, declared, library, cpp):
    layer, defined = fortran_layer(library)
    chosen = fortran_rows(rows, declared, layer, defined)
    lines = [GENERATED, "#include <cstddef>", "#include <string>", "#include <vector>", "",
             '#include "mpi/entry_points.hpp"', '#include "mpi/fortran.hpp"',
             '#include "mpi/guard.hpp"', '#include "mpi/interpose.hpp"', "",
             "using gddt::mpi::guard::Per;", "using gddt::mpi::guard::Side;",
             "namespace guard = gddt::mpi::guard;", "",
             "extern \"C\" {", ""]
    lines += [fortran_shim(r, layer) + "\n" for r in chosen]
    lines += ["}  // extern \"C\"", "",
              f"const int gddt::mpi::fortran::kEntryPoints = {len(chosen)};",
              f"const gddt::mpi::fortran::Layer gddt::mpi::fortran::kLayer = "
              f"gddt::mpi::fortran::Layer::{FORTRAN_LAYER_ENUMS[layer]};", ""]
    text = "\n".join(lines)
    path = pathlib.Path(cpp)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def markdown(rows):
    titles = {
        "intercepted": "Intercepted: gddt implements them",
        "staged": "Staged: device buffers go to the library as host stand-ins",
        "blocking": "May block: held sends start first, freed requests finish after",
        "checked": "Checked: device data the library would pack with the CPU is refused",
        "made": "Made: a new datatype, whose handle gddt forgets anything it knew of",
        "forward": "Forwarded: no shim, the library's own function",
    }
    out = ["# MPI entry points", "",
           "Generated by `python3 src/mpi/entry_points.py markdown` from `src/mpi/entry_points.txt`, the one",
           "table of every MPI function gddt knows (MPI 4.1 with its `_c` forms, plus what Open MPI and",
           "MPICH export beyond it). A shim exists only where the MPI library's `mpi.h` declares the",
           "function. Buffers of staged, blocking and checked calls are listed as the table writes them;",
           "see its header for the notation.", ""]
    for kind in CLASSES:
        chosen = [r for r in rows if r.kind == kind]
        out += [f"## {titles[kind]} ({len(chosen)})", ""]
        if kind in ("intercepted", "made", "forward"):
            out += [", ".join(f"`{r.name}`" for r in chosen), ""]
            continue
        out += ["| function | buffers |", "|---|---|"]
        for r in chosen:
            out.append(f"| `{r.name}` | {r.listed} |")
        out.append("")
    return "\n".join(out)


def exported(library, pattern=r"MPI_\w*[a-z]\w*$"):
    """The functions `library` defines whose names match `pattern` (by default the C MPI_*
    functions, which all have a lower-case letter, unlike the Fortran MPI_SEND and the like)."""
    listing = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    return {f[2] for f in (line.split() for line in listing.stdout.splitlines())
            if len(f) == 3 and f[1] in "TWi" and re.match(pattern, f[2])}


def check_library(rows, libraries, gddt, declared, fortran_library):
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
        layer, library_defined = fortran_layer(fortran_library)
        symbol_of = FORTRAN_LAYERS[layer][0] if layer else None
        wanted = {symbol_of(fortran_name(r)) for r in fortran_rows(rows, present, layer, library_defined)}
        defined = exported(gddt, r"(ompi_\w+_f|mpi_\w+_f08_)$")
        print(f"{gddt}: {len(wanted)} Fortran entry points expected ({layer or 'no Fortran layer that needs them'}), "
              f"{len(defined)} exported")
        for name in sorted(wanted ^ defined):
            print(f"  {'not exported' if name in wanted else 'exported though not expected'}: {name}")
        failed = failed or wanted != defined
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("shims")
    s.add_argument("--declared", required=True)
    s.add_argument("--cpp", required=True)
    s.add_argument("--hpp", required=True)
    s.add_argument("--names", required=True)
    s.add_argument("--fortran", required=True)
    s.add_argument("--fortran-library", help="the library's Fortran layer (libmpi_mpifh, libmpichfort), if any")
    m = sub.add_parser("markdown")
    m.add_argument("--check")
    c = sub.add_parser("check-library")
    c.add_argument("libraries", nargs="+")
    c.add_argument("--gddt")
    c.add_argument("--declared")
    c.add_argument("--fortran-library")
    args = parser.parse_args()
    rows = read_table()
    if args.command == "shims":
        declared = declared_functions(args.declared)
        write_shims(rows, declared, args.cpp, args.hpp, args.names)
        write_fortran(rows, declared, args.fortran_library, args.fortran)
    elif args.command == "markdown":
        text = markdown(rows) + "\n"
        if not args.check:
            sys.stdout.write(text)
        elif pathlib.Path(args.check).read_text() != text:
            fail(f"{args.check} is out of date: python3 src/mpi/entry_points.py markdown > {args.check}")
    else:
        if args.gddt and not args.declared:
            fail("--gddt needs --declared")
        return check_library(rows, args.libraries, args.gddt, args.declared, args.fortran_library)
    return 0


if __name__ == "__main__":
    sys.exit(main())
