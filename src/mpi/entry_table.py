"""The entry-point table (entry_points.txt beside this file): its rows, parsed and checked, the
table notation's names in C++, what a row's function may wait for, and the functions a
preprocessed mpi.h declares."""
import pathlib
import re
import sys

TABLE = pathlib.Path(__file__).with_name("entry_points.txt")
CLASSES = ("intercepted", "narrowed", "staged", "blocking", "made", "forward")
ROW = re.compile(r"^(\w+)\s+(MPI_\w+)(?:\((.*)\))?\s*(?:\|\s*(.*))?$")
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
        self.twin_fast = False  # narrowed rows: whether their int call's row is fast

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
        if (kind == "staged") != bool(buffers):
            fail(f"{where}: staged rows list their buffers, intercepted rows may say `fast` or `blocking`, made "
                 "rows name their new datatype, the others say nothing")
        params = None if parameters is None else split_parameters(parameters, where)
        if kind == "narrowed" and not (name.endswith("_c") and any(d.split()[0] == "MPI_Count" for d, _ in params)):
            fail(f"{where}: a narrowed row is the _c form of a call, with MPI_Count parameters")
        if kind == "made" and f"MPI_Datatype *{made}" not in [d for d, _ in params]:
            fail(f"{where}: a made row names its `MPI_Datatype *` parameter after `|`")
        specs, staged, resumed = [], [], None
        for spec in (s.strip() for s in (buffers or "").split(",") if s.strip()):
            begun = BEGUN_BUFFER.match(spec)
            if begun:
                if begun.group(2) not in {n for _, n in params} or staged or resumed:
                    fail(f"{where}: '{spec}' is not the one buffer parameter of a split collective's end")
                resumed = begun.group(2)
                continue
            b = STAGED_BUFFER.match(spec)
            named = b and {b.group(2), b.group(3), b.group(5)} | ({b.group(8)} if b.group(8) else set())
            if not b or not named <= {n for _, n in params}:
                fail(f"{where}: '{spec}' is not a staged buffer of this function's parameters")
            staged.append(b.groups())
            direction, buffer, count, count_per, datatype, type_per, blocks, displs, side = b.groups()
            specs.append((buffer, datatype, type_per, side))
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


def file_handle(row):
    """The MPI_File parameter of a file call's row, or None."""
    return next((n for d, n in row.parameters or [] if d.split()[0] == "MPI_File"), None)


def blocks(row):
    """Whether a row's function may wait for another process: blocking rows, intercepted rows that say
    so, and staged collectives and file calls that return no request."""
    names = {n for _, n in row.parameters or []}
    return (row.kind == "blocking" or row.blocking or
            (row.kind == "staged" and "request" not in names and ("comm" in names or file_handle(row) is not None)))


def implementation_call(short, fast, arguments):
    """How generated code calls gddt's implementation of an intercepted row: a fast row's inline test
    first, which sends ordinary host traffic to the library (mpi/fast_path.hpp), so that no
    implementation repeats it."""
    call = f"gddt::mpi::entry::{short}({arguments})"
    return f"(gddt::mpi::fast::{short}({arguments}) ? PMPI_{short}({arguments}) : {call})" if fast else call
