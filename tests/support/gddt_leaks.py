#!/usr/bin/env python3
"""Runs a command under LeakSanitizer and fails when a leak is gddt's own.

  gddt_leaks.py COMMAND [ARGS...]

MPI libraries leak at MPI_Init by design, and every MPI call a program makes passes through
gddt's shims, so a leak counts as gddt's when gddt allocated it itself: the first frame of its
allocation stack past the allocator (malloc, operator new, ...) is gddt's code (its source tree,
its library or its namespace). Allocations the MPI library made under a gddt call are the
library's. Prints every leak of gddt's with its stack, and a summary line.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ALLOCATORS = re.compile(r"\b(malloc|calloc|realloc|posix_memalign|aligned_alloc|memalign|valloc|strdup|"
                        r"operator new|__interceptor_\w+|__libc_\w+)\b")
FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ in (.*)$")
SOURCE_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def is_gddt(frame):
    return "libgddt" in frame or "gddt::" in frame or os.path.join(SOURCE_ROOT, "src") in frame


def leaks(output):
    """(header, frames) of each leak LeakSanitizer reported."""
    found, header, frames = [], None, []
    for line in output.splitlines():
        if re.match(r"^(Direct|Indirect) leak of", line):
            if header:
                found.append((header, frames))
            header, frames = line, []
        elif header and FRAME.match(line):
            frames.append(FRAME.match(line).group(2))
        elif header and not line.strip():
            found.append((header, frames))
            header, frames = None, []
    if header:
        found.append((header, frames))
    return found


def main():
    logs = tempfile.mkdtemp(prefix="gddt_leaks.")
    env = dict(os.environ)
    # One report file per process (ranks would interleave their lines), and the program's own exit
    # code kept: leaks alone do not fail the run, gddt's do.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=1",
                                                 f"log_path={logs}/report"]))
    env["LSAN_OPTIONS"] = ":".join(filter(None, [env.get("LSAN_OPTIONS", ""), "exitcode=0"]))
    run = subprocess.run(sys.argv[1:], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(run.stdout[-3000:])
    reported, ours = [], []
    for path in sorted(glob.glob(f"{logs}/report*")):
        with open(path, errors="replace") as report:
            reported += leaks(report.read())
        os.remove(path)
    os.rmdir(logs)
    for header, frames in reported:
        first = next((f for f in frames if not ALLOCATORS.search(f)), "")
        if is_gddt(first):
            ours.append((header, frames))
    for header, frames in ours:
        print(header)
        for i, frame in enumerate(frames):
            print(f"    #{i} {frame}")
    print(f"gddt_leaks: {len(reported)} leaks reported, {len(ours)} of them gddt's (command exit {run.returncode})")
    return run.returncode or (1 if ours else 0)


if __name__ == "__main__":
    sys.exit(main())
