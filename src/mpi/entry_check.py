"""check-library: the table against the functions the MPI library and libgddt export."""
import re
import subprocess

from entry_fortran import FORTRAN_LAYERS, fortran_layer, fortran_name, fortran_rows
from entry_table import declared_functions


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
