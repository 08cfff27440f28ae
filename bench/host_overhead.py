#!/usr/bin/env python3
"""What gddt costs host-only traffic: gddt-bench-host without gddt, with libgddt preloaded, and
linked (gddt-bench-host-linked), as a table of ratios to the run without gddt.

  python3 bench/host_overhead.py [--build build/openmpi] [--launches 5] [--mpiexec CMD]
      timing: the three launches in turns, medians over the launches of each one's own
      medians; separate launches differ by a few percent on a quiet machine, more on a busy one
  python3 bench/host_overhead.py ... --gddt-env GDDT_CUDA=off
      the same with a gddt setting in the launches that load it: with GDDT_CUDA=off gddt never
      initializes the CUDA driver, which tells the driver's cost in a host-only program from gddt's
  python3 bench/host_overhead.py --callgrind [--build build/openmpi]
      instructions: each configuration under valgrind --tool=callgrind, counted inside the
      benchmark's two loops only; per call of each MPI function, the instructions spent in
      libgddt (its shims, its checks, its PLT stubs) and in the call as a whole, then the
      instructions of a whole short run (what loading gddt costs before the first message)

Open MPI as root needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and more
ranks than cores --mpiexec "mpiexec --oversubscribe".
"""
import argparse
import collections
import glob
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

CONFIGURATIONS = ("none", "preloaded", "linked")


def is_open_mpi(mpiexec):
    version = subprocess.run(shlex.split(mpiexec) + ["--version"], capture_output=True, text=True)
    return "Open MPI" in version.stdout + version.stderr or "OpenRTE" in version.stdout + version.stderr


def command_of(configuration, arguments, program_arguments, tool=()):
    launcher = shlex.split(arguments.mpiexec) + ["-n", "2"]
    if configuration == "preloaded":
        # into the ranks only, not the launcher: Open MPI's mpiexec passes a variable with -x,
        # MPICH's (hydra) with -genv
        flag = ["-x", f"LD_PRELOAD={arguments.library}"] if arguments.open_mpi else ["-genv", "LD_PRELOAD",
                                                                                    arguments.library]
        launcher += flag
    if configuration != "none":
        for setting in arguments.gddt_env:  # e.g. GDDT_CUDA=off, into the launches that load gddt
            name, value = setting.split("=", 1)
            launcher += ["-x", setting] if arguments.open_mpi else ["-genv", name, value]
    program = "gddt-bench-host-linked" if configuration == "linked" else "gddt-bench-host"
    return launcher + list(tool) + [os.path.join(arguments.build, "bench", program)] + program_arguments


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"host_overhead.py: {' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def result_of(output):
    for line in output.splitlines():
        if line.startswith("RESULT "):
            return {k: (v if k == "gddt" else float(v)) for k, v in (f.split("=") for f in line.split()[1:])}
    sys.exit("host_overhead.py: no RESULT line in\n" + output)


def timing(arguments):
    results = collections.defaultdict(list)
    for launch in range(arguments.launches):
        order = CONFIGURATIONS[launch % 3:] + CONFIGURATIONS[:launch % 3]  # each goes first in turn
        for configuration in order:
            result = result_of(run(command_of(configuration, arguments, arguments.program_arguments)))
            if result["gddt"] != configuration:
                sys.exit(f"host_overhead.py: the {configuration} launch found gddt {result['gddt']}")
            results[configuration].append(result)
    base = {key: statistics.median(r[key] for r in results["none"]) for key in results["none"][0] if key != "gddt"}
    print(f"host-only 8-byte traffic, {arguments.launches} launches of each configuration in turns "
          "(medians over launches of each launch's median)")
    header = ("gddt", "ping-pong us", "vs none", "window Mmsg/s", "vs none", "in-run MPI/PMPI ping-pong", "window")
    print("  " + "  ".join(f"{h:>{w}}" for h, w in zip(header, (10, 12, 8, 13, 8, 24, 7))))
    for configuration in CONFIGURATIONS:
        rows = results[configuration]
        pingpong = statistics.median(r["pingpong_user_us"] for r in rows)
        window = statistics.median(r["window_user_mmps"] for r in rows)
        in_run_pingpong = statistics.median(r["pingpong_user_us"] / r["pingpong_library_us"] for r in rows)
        in_run_window = statistics.median(r["window_user_mmps"] / r["window_library_mmps"] for r in rows)
        cells = (configuration, f"{pingpong:.3f}", f"{(pingpong / base['pingpong_user_us'] - 1) * 100:+.1f}%",
                 f"{window:.3f}", f"{(window / base['window_user_mmps'] - 1) * 100:+.1f}%",
                 f"{(in_run_pingpong - 1) * 100:+.1f}%", f"{(in_run_window - 1) * 100:+.1f}%")
        print("  " + "  ".join(f"{c:>{w}}" for c, w in zip(cells, (10, 12, 8, 13, 8, 24, 7))))
    print("  every launch: " + "; ".join(
        f"{c} " + ", ".join(f"{r['pingpong_user_us']:.3f}" for r in results[c]) + " us" for c in CONFIGURATIONS))


class Profile:
    """Self costs and call edges of one callgrind output file (Ir only)."""

    def __init__(self, path):
        self.self_cost = collections.Counter()          # (object, function) -> Ir
        self.edges = collections.defaultdict(lambda: [0, 0])  # (caller, callee) -> [calls, inclusive Ir]
        self.total = 0
        names = {"ob": {}, "fn": {}}
        current_object = current_function = None
        callee_object = callee_function = None
        pending_calls = None

        def name(kind, text):
            match = re.match(r"\((\d+)\)\s*(.*)", text)
            if not match:
                return text
            if match.group(2):
                names[kind][match.group(1)] = match.group(2)
            return names[kind][match.group(1)]

        with open(path) as lines:
            for line in lines:
                line = line.rstrip("\n")
                if line.startswith("ob="):
                    current_object = name("ob", line[3:])
                elif line.startswith("fn="):
                    current_function = (current_object, name("fn", line[3:]))
                elif line.startswith("cob="):
                    callee_object = name("ob", line[4:])
                elif line.startswith("cfn="):
                    callee_function = name("fn", line[4:])
                elif line.startswith("calls="):
                    pending_calls = int(line[6:].split()[0])
                elif line and (line[0].isdigit() or line[0] in "+-*"):
                    fields = line.split()
                    cost = int(fields[1]) if len(fields) > 1 else 0
                    if pending_calls is not None:
                        callee = (callee_object or current_object, callee_function)
                        edge = self.edges[(current_function, callee)]
                        edge[0] += pending_calls
                        edge[1] += cost
                        pending_calls = None
                        callee_object = None
                    else:
                        self.self_cost[current_function] += cost
                        self.total += cost
                elif line.startswith("summary:") or line.startswith("totals:"):
                    pass
        self.callees = collections.defaultdict(list)
        for (caller, callee), (calls, inclusive) in self.edges.items():
            self.callees[caller].append((callee, calls, inclusive))

    def outside_share(self, function, inside, seen=()):
        """The share of `function`'s inclusive cost spent outside the objects `inside` says yes to."""
        if function in seen:
            return 0.0
        inclusive = self.self_cost[function]
        outside = 0.0
        for callee, _, cost in self.callees[function]:
            inclusive += cost
            if not inside(callee[0]):
                outside += cost
            else:
                outside += cost * self.outside_share(callee, inside, seen + (function,))
        return outside / inclusive if inclusive else 0.0


def short_function(name):
    return re.sub(r"\(.*", "", name).split("::")[-1]


def callgrind(arguments):
    directory = tempfile.mkdtemp(prefix="gddt-host-callgrind-")
    loops = ("measured_pingpong_round", "measured_window_round")
    in_gddt = lambda obj: obj is not None and "libgddt" in obj
    print("instructions per call (callgrind, inside the benchmark's loops, both ranks; "
          "gddt = instructions in libgddt: shim, checks, PLT stubs)")
    per_call = {}
    for configuration in CONFIGURATIONS:
        tool = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={directory}/{configuration}.%p"]
        tool += [f"--toggle-collect=*{loop}*" for loop in loops]
        run(command_of(configuration, arguments, ["--rounds", "1", "--round-trips", "2000", "--windows", "40"], tool))
        calls = collections.defaultdict(lambda: [0, 0, 0.0])  # function -> calls, inclusive, in gddt
        for path in glob.glob(f"{directory}/{configuration}.*"):
            profile = Profile(path)
            for (caller, callee), (count, inclusive) in profile.edges.items():
                if caller is None or not any(loop in caller[1] for loop in loops):
                    continue
                name = short_function(callee[1])
                if not name.startswith(("MPI_", "PMPI_")):
                    continue
                entry = calls[name]
                entry[0] += count
                entry[1] += inclusive
                if in_gddt(callee[0]):
                    entry[2] += inclusive * (1 - profile.outside_share(callee, in_gddt))
        per_call[configuration] = calls
    names = sorted({n for c in per_call.values() for n in c if n.startswith("MPI_")})
    print(f"  {'function':<12}" + "".join(f"  {c + ' gddt':>15}  {c + ' whole':>16}" for c in CONFIGURATIONS))
    for name in names:
        cells = []
        for configuration in CONFIGURATIONS:
            # without gddt the program's MPI_X is the library's function, which callgrind names PMPI_X
            alias = "P" + name if configuration == "none" else name
            count, inclusive, gddt = per_call[configuration].get(alias, [0, 0, 0.0])
            cells.append(f"  {gddt / count if count else 0:>15.1f}  {inclusive / count if count else 0:>16.0f}")
        print(f"  {name:<12}" + "".join(cells))
    print("  (whole: the call's instructions in all, gddt's included; receives and waits include the library's "
          "polling, which varies with timing)")

    print("whole short run (MPI_Init to MPI_Finalize, 10 round trips, 1 window), instructions of rank 0 and 1:")
    for configuration in CONFIGURATIONS:
        tool = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={directory}/whole-{configuration}.%p"]
        run(command_of(configuration, arguments, ["--rounds", "1", "--round-trips", "10", "--windows", "1"], tool))
        totals = []
        for path in sorted(glob.glob(f"{directory}/whole-{configuration}.*")):
            profile = Profile(path)
            by_object = collections.Counter()
            for (obj, _), cost in profile.self_cost.items():
                by_object[os.path.basename(obj or "?")] += cost
            gddt = sum(cost for obj, cost in by_object.items() if "libgddt" in obj)
            loader = sum(cost for obj, cost in by_object.items() if obj.startswith("ld-linux"))
            totals.append(f"{profile.total / 1e6:.1f} M (libgddt {gddt / 1e6:.2f} M, dynamic loader {loader / 1e6:.2f} M)")
        print(f"  {configuration:<10} " + "; ".join(totals))
    print(f"callgrind files: {directory}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build/openmpi")
    parser.add_argument("--library", help="libgddt.so to preload (default: BUILD/src/libgddt.so)")
    parser.add_argument("--mpiexec", default="mpiexec", help="launcher command (default: mpiexec)")
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--gddt-env", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for the launches that load gddt (repeatable), e.g. GDDT_CUDA=off")
    parser.add_argument("program_arguments", nargs="*", help="passed to gddt-bench-host in timing mode")
    arguments = parser.parse_args()
    arguments.build = os.path.abspath(arguments.build)
    arguments.library = os.path.abspath(arguments.library or os.path.join(arguments.build, "src", "libgddt.so"))
    arguments.open_mpi = is_open_mpi(arguments.mpiexec)
    (callgrind if arguments.callgrind else timing)(arguments)


if __name__ == "__main__":
    main()
