#!/usr/bin/env python3
"""Draws the CSV of gddt-bench-pack (--csv FILE) as a PNG.

Vectors (the default): GB/s against block size, one line per method, one panel per packed size.
Other families (--family face|indexed|struct): GB/s against packed size, one panel per case.

    plot_pack.py pack.csv -o pack.png [--family vector] [--packed 16M,256M]
"""
import argparse
import collections
import csv
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

METHODS = {  # CSV name: (legend, style)
    "gddt_pack": ("gddt pack", "o-"),
    "gddt_unpack": ("gddt unpack", "s-"),
    "cpy2d": ("cudaMemcpy2DAsync", "^--"),
    "naive": ("naive kernel", "v--"),
    "d2d": ("D2D copy (roofline)", "k:"),
}


def size_label(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} B"


def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(float(text.rstrip("KMGkmg")) * scale)


def read(path, family):
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["family"] == family and row["method"] in METHODS:
                rows.append(row)
    return rows


def panels(rows, family, packed_filter):
    """{panel title: {method: [(x, GB/s)]}} and the x-axis label."""
    grouped = collections.defaultdict(lambda: collections.defaultdict(list))
    for row in rows:
        packed, block = int(row["packed_bytes"]), int(row["block_bytes"])
        if family == "vector":
            if packed_filter and packed not in packed_filter:
                continue
            grouped[(packed, f"{size_label(packed)} packed")][row["method"]].append((block, float(row["gbps"])))
        else:
            grouped[(row["case"], row["case"])][row["method"]].append((packed, float(row["gbps"])))
    ordered = {title: series for (_, title), series in sorted(grouped.items())}
    return ordered, "block size" if family == "vector" else "packed size"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("-o", "--output", default="pack.png")
    parser.add_argument("--family", default="vector", choices=["vector", "face", "indexed", "struct"])
    parser.add_argument("--packed", default="", help="vector panels to draw, e.g. 16M,256M (default all)")
    args = parser.parse_args()

    packed_filter = {parse_size(s) for s in args.packed.split(",") if s}
    groups, xlabel = panels(read(args.csv, args.family), args.family, packed_filter)
    if not groups:
        raise SystemExit(f"no {args.family} rows in {args.csv}")
    columns = min(3, len(groups))
    rows = math.ceil(len(groups) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4 * rows), squeeze=False)
    for ax, (title, series) in zip(axes.flat, groups.items()):
        for method, (legend, style) in METHODS.items():
            points = sorted(series.get(method, []))
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], style, label=legend, markersize=4)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted({p[0] for points in series.values() for p in points})
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_label(t) for t in ticks], rotation=45, fontsize=7)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("GB/s (packed bytes / time)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(f"gddt-bench-pack: {args.family}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
