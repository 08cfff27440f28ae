"""The C side of the table: the exported shims, the declarations of gddt's implementations and
the GDDT_ENTRY_POINT lines the tests read."""
import pathlib
import re

from entry_table import DIRECTIONS, PER, SIDE, blocks, file_handle, implementation_call

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
        root = "root" if "root" in names else "call_buffers::kNotRooted"
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


def narrowed_body(row, forward):
    """A _c form through its int call's implementation where every count fits an int (or is negative,
    which that call rejects as the library would), through the library where every buffer is host
    memory, else MPI_ERR_COUNT: gddt stages a message as one MPI_PACKED message of an int count."""
    counts = [n for d, n in row.parameters if d.split()[0] == "MPI_Count"]
    buffers = [n for d, n in row.parameters if d.replace("const ", "").startswith("void *")]
    narrowed = ", ".join(f"large_count::narrowed({n})" if n in counts else n for _, n in row.parameters)
    comm = "comm" if "comm" in {n for _, n in row.parameters} else "MPI_COMM_WORLD"
    return [f"  if ({' && '.join(f'large_count::int_call_takes({n})' for n in counts)})",
            f"    return {implementation_call(row.short[:-len('_c')], row.twin_fast, narrowed)};",
            f"  if ({' && '.join(f'large_count::library_takes({n})' for n in buffers)}) return {forward};",
            f"  return large_count::count_too_large({comm});"]


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
    elif row.kind == "narrowed":
        body = [f"  if (gddt::mpi::stepped_aside()) return {forward};", *narrowed_body(row, forward)]
    elif row.kind == "made":
        body = [f"  const int rc = {forward};",
                f"  if (rc == MPI_SUCCESS && !gddt::mpi::stepped_aside()) gddt::mpi::made_datatype(*{row.made});",
                "  return rc;"]
    else:
        body = []
        if row.kind == "blocking":
            body.append("  const gddt::mpi::BlockingCall blocking;")
        body.append(f"  return {forward};")
    return "\n".join([head, *body, "}"])


GENERATED = "// Generated by src/mpi/entry_points.py from src/mpi/entry_points.txt for this build's mpi.h: do not edit."


def write_shims(rows, declared, cpp, hpp, names):
    present = [r for r in rows if r.name in declared]
    fast = {r.name for r in rows if r.fast}
    for r in rows:
        r.twin_fast = r.kind == "narrowed" and r.name[:-len("_c")] in fast
    hpp_lines = [GENERATED, "#pragma once", "", "#include <mpi.h>", ""]
    hpp_lines += [f"#define GDDT_HAVE_{r.name} 1" for r in present]
    hpp_lines += ["", "// gddt's implementations of the intercepted functions, called by their shims.",
                  "namespace gddt::mpi::entry {", ""]
    hpp_lines += [f"int {r.short}({r.declaration()});" for r in present if r.kind == "intercepted"]
    hpp_lines += ["", "}  // namespace gddt::mpi::entry", ""]
    cpp_lines = [GENERATED, "#include <cstdint>", "", '#include "mpi/collective.hpp"',
                 '#include "mpi/entry_points.hpp"', '#include "mpi/fast_path.hpp"', '#include "mpi/call_buffers.hpp"',
                 '#include "mpi/interpose.hpp"', '#include "mpi/large_count.hpp"', "",
                 "using gddt::mpi::call_buffers::Per;", "using gddt::mpi::call_buffers::Side;",
                 "using gddt::mpi::collective::Direction;", "using gddt::mpi::collective::Segment;",
                 "namespace call_buffers = gddt::mpi::call_buffers;", "namespace large_count = gddt::mpi::large_count;", ""]
    cpp_lines += [shim(r) + "\n" for r in present if r.kind != "forward"]
    names_lines = [GENERATED] + [f"GDDT_ENTRY_POINT({r.kind}, {r.name}, {int(blocks(r))})" for r in present]
    for path, lines in ((hpp, hpp_lines), (cpp, cpp_lines), (names, names_lines)):
        text = "\n".join(lines) + "\n"
        path = pathlib.Path(path)
        if not path.exists() or path.read_text() != text:  # an unchanged file rebuilds nothing
            path.write_text(text)
