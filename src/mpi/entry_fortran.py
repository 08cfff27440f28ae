"""The Fortran entry points gddt defines where the library's Fortran layer calls PMPI_* itself."""
import copy
import pathlib
import re
import subprocess

from entry_shims import GENERATED
from entry_table import PER, blocks, fail, implementation_call

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
    if row.kind in ("intercepted", "narrowed", "staged"):
        # Staged and narrowed rows call gddt's C shim of the function, which stages their buffers or
        # narrows their counts.
        target = None if row.kind == "intercepted" else f"::{row.name}"
        params, before, args, after, lengths = fortran_conversion(row)
        arguments = ", ".join(args)
        call = implementation_call(row.short, row.fast, arguments) if target is None else f"{target}({arguments})"
        signature = ", ".join(params + ["MPI_Fint* ierror"] + lengths)
        passed = ", ".join([p.split()[-1] for p in params] + ["ierror"] + [n.split()[-1] for n in lengths])
        body = ["  if (gddt::mpi::stepped_aside()) {",
                f"    {library}",
                f"    return library({passed});",
                "  }",
                *(["  const gddt::mpi::BlockingCall blocking;"] if row.blocking else []),
                *before,
                f"  const int rc = {call};",
                *after,
                "  if (ierror != nullptr) *ierror = rc;"]
    else:
        signature = forward_declared
        body = [f"  {library}"]
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
             '#include "mpi/entry_points.hpp"', '#include "mpi/fast_path.hpp"', '#include "mpi/fortran.hpp"',
             '#include "mpi/call_buffers.hpp"', '#include "mpi/interpose.hpp"', "",
             "using gddt::mpi::call_buffers::Per;", "",
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
