#!/usr/bin/env python3
"""The apps' tables from their CSV (apps/run.sh writes it): for each app and MPI stack, a row a
case and size with each version's time per iteration and share of communication and its speedup
over the baseline (the app's first version: def, hand or host), then a PASS/MISS line for each
target of issue 45 and a count of the rows whose check failed.

    summarize.py apps.csv [more.csv ...]
"""
import argparse
import collections
import csv
import sys

# app: the baseline and the versions with a target (the least speedup over the baseline).
BASELINE = {"stencil2d": "def", "halo3d": "hand", "fft": "hand", "himeno": "host"}
TARGETS = {
    "halo3d": {"p2p": 1.0, "neighbor": 1.0, "cartesian": 1.0},  # gddt >= 1.0x the hand-fused version
    "himeno": {"kernel": 1.0, "stream": 1.15},  # kernel-initiated >= 1.0x, stream-ordered >= 1.15x host-driven
}


def read(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            rows.extend(csv.DictReader(f))
    return rows


def cell(row):
    us = float(row["us_per_iteration"])
    share = row["comm_share"]
    return f"{us:.1f}" + (f" ({100 * float(share):.0f}%)" if share else "")


def summarize(rows):
    """Prints the tables and target lines; returns the number of MISS lines and failed checks."""
    misses = wrong = 0
    groups = collections.OrderedDict()
    for row in rows:
        groups.setdefault((row["app"], row["stack"]), []).append(row)
    for (app, stack), app_rows in groups.items():
        cases = collections.OrderedDict()
        for row in app_rows:
            cases.setdefault((int(row["ranks"]), row["case"], row["size"], row["mib_per_rank"]), {})[row["version"]] = row
        versions = list(dict.fromkeys(row["version"] for row in app_rows))
        baseline = BASELINE.get(app, versions[0])
        others = [v for v in versions if v != baseline]
        print(f"\n== {app}, {stack}: us per iteration (communication share), speedup over {baseline}")
        header = ["ranks", "case", "size", "MiB/rank"] + versions + [f"{v}/{baseline}" for v in others]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        verdicts = []
        for (ranks, case, size, mib), by_version in cases.items():
            cells = [str(ranks), case, size, f"{float(mib):.3g}"]
            cells += [cell(by_version[v]) if v in by_version else "-" for v in versions]
            speedups = {}
            for v in others:
                if v in by_version and baseline in by_version:
                    speedups[v] = float(by_version[baseline]["us_per_iteration"]) / float(by_version[v]["us_per_iteration"])
                cells.append(f"{speedups[v]:.2f}x" if v in speedups else "-")
            print("| " + " | ".join(cells) + " |")
            for v, row in by_version.items():
                if row["check"] != "ok":
                    wrong += 1
                    verdicts.append(f"WRONG {app} {stack} {ranks} ranks {case} {size}: {v} failed its check")
            for v, least in TARGETS.get(app, {}).items():
                if v in speedups:
                    verdict = "PASS" if speedups[v] >= least else "MISS"
                    misses += verdict == "MISS"
                    verdicts.append(f"{verdict} {app} {stack} {ranks} ranks {case} {size}: {v} {speedups[v]:.2f}x "
                                    f"{baseline} (target >= {least:.2f}x)")
        if verdicts:
            print("\n".join(verdicts))
    return misses, wrong


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    misses, wrong = summarize(read(parser.parse_args().csv))
    print(f"\ntargets missed: {misses}; checks failed: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
