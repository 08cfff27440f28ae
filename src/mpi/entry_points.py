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
import pathlib
import sys

# The modules beside this script are imported from the source tree: the build leaves no
# __pycache__ there.
sys.dont_write_bytecode = True

from entry_check import check_library  # noqa: E402
from entry_docs import markdown  # noqa: E402
from entry_fortran import write_fortran  # noqa: E402
from entry_shims import write_shims  # noqa: E402
from entry_table import declared_functions, fail, read_table  # noqa: E402


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
