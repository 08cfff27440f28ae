#!/usr/bin/env python3
"""Plots the CSV of `gddt-bench --csv FILE`: for every (memory pair, type) table one PNG with
latency and bandwidth against the packed size, one line per method.

    python3 bench/p2p/plot_p2p.py results.csv --out docs/img
"""
import argparse
import collections
import csv
import math
import os
import re
import sys


def read_tables(path):
    """{(memory, type): {method: [(packed, latency_us or None, bandwidth_gbs or None)]}}, in file order."""
    tables = collections.OrderedDict()
    with open(path, newline="") as stream:
        for row in csv.DictReader(stream):
            if row["status"]:  # wrong data, crashed, n/a...: no number to draw
                continue
            methods = tables.setdefault((row["memory"], row["type"]), collections.OrderedDict())

            def number(field):
                return float(row[field]) if row[field] else None

            methods.setdefault(row["method"], []).append(
                (int(row["packed_bytes"]), number("latency_us"), number("bandwidth_gbs")))
    return tables


def size_label(value, _position=None):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if value >= scale:
            return f"{value / scale:g}{unit}"
    return f"{value:g}"


def file_name(prefix, memory, type_name):
    return prefix + "-" + re.sub(r"[^A-Za-z0-9]+", "-", f"{memory}-{type_name}").strip("-") + ".png"


def plot_table(plt, ticker, memory, type_name, methods, path):
    figure, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    panels = ((axes[0], 1, "latency (us, half round trip)"), (axes[1], 2, "bandwidth (GB/s of packed bytes)"))
    for axis, column, label in panels:
        drawn = False
        for method, points in methods.items():
            series = sorted((point[0], point[column]) for point in points
                            if point[column] is not None and math.isfinite(point[column]) and point[column] > 0)
            if series:
                axis.plot([x for x, _ in series], [y for _, y in series], marker="o", markersize=3, label=method)
                drawn = True
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.xaxis.set_major_formatter(ticker.FuncFormatter(size_label))
        axis.set_xlabel("packed bytes per message")
        axis.set_ylabel(label)
        axis.grid(True, which="major", alpha=0.3)
        if drawn:
            axis.legend(fontsize=8)
    figure.suptitle(f"gddt-bench: {type_name}, {memory} (rank 0 : rank 1 memory)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="the file written by gddt-bench --csv")
    parser.add_argument("--out", default=".", help="folder for the PNGs (default: here)")
    parser.add_argument("--prefix", default="p2p", help="file name prefix (default: p2p)")
    arguments = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        sys.exit("plot_p2p.py needs matplotlib (pip install matplotlib, or apt-get install python3-matplotlib)")
    tables = read_tables(arguments.csv)
    if not tables:
        sys.exit(f"{arguments.csv}: no measured rows")
    os.makedirs(arguments.out, exist_ok=True)
    for (memory, type_name), methods in tables.items():
        path = os.path.join(arguments.out, file_name(arguments.prefix, memory, type_name))
        plot_table(plt, ticker, memory, type_name, methods, path)
        print(path)


if __name__ == "__main__":
    main()
