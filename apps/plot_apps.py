#!/usr/bin/env python3
"""Draws the apps' CSV (apps/run.sh) as PNGs: for each app and MPI stack, time per iteration
against the problem size (MiB of one array a rank), a line a version, a panel a case and rank
count; files <out>/<prefix>-<app>-<stack>.png.

    plot_apps.py apps.csv [more.csv ...] --out docs/img [--prefix apps]
"""
import argparse
import collections
import csv
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLES = ["o-", "s--", "^-.", "v:"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--out", default="docs/img")
    parser.add_argument("--prefix", default="apps")
    args = parser.parse_args()
    # (app, stack) -> (ranks, case) -> version -> [(MiB, us)]
    series = collections.OrderedDict()
    for path in args.csv:
        with open(path) as f:
            for row in csv.DictReader(f):
                panels = series.setdefault((row["app"], row["stack"]), collections.OrderedDict())
                lines = panels.setdefault((int(row["ranks"]), row["case"]), collections.OrderedDict())
                lines.setdefault(row["version"], []).append((float(row["mib_per_rank"]), float(row["us_per_iteration"])))
    os.makedirs(args.out, exist_ok=True)
    for (app, stack), panels in series.items():
        columns = min(3, len(panels))
        rows = (len(panels) + columns - 1) // columns
        figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4 * rows), squeeze=False)
        for axis in axes.flat[len(panels):]:
            axis.set_visible(False)
        for axis, ((ranks, case), lines) in zip(axes.flat, panels.items()):
            for style, (version, points) in zip(STYLES * 4, lines.items()):
                points.sort()
                axis.plot([p[0] for p in points], [p[1] for p in points], style, label=version)
            axis.set_xscale("log")
            axis.set_yscale("log")
            axis.set_xlabel("MiB a rank (one array)")
            axis.set_ylabel("us per iteration")
            axis.set_title(f"{app}: {case}, {ranks} ranks")
            axis.grid(True, which="both", alpha=0.3)
            axis.legend()
        figure.suptitle(f"{app} on {stack}")
        figure.tight_layout()
        name = re.sub(r"[^A-Za-z0-9.]+", "-", f"{args.prefix}-{app}-{stack}").strip("-")
        figure.savefig(os.path.join(args.out, name + ".png"), dpi=110)
        plt.close(figure)
        print(os.path.join(args.out, name + ".png"))


if __name__ == "__main__":
    main()
