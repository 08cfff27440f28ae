#!/usr/bin/env python3
"""Lines of communication code of every app's versions (the MVAPICH2 paper's Table I counts
Stencil2D's, 245 against 158; GMPI's Table 5 Himeno's): each version's files, counted as code lines
(neither blank nor comment only) and as all lines. Code both versions share (the grid, the kernels,
the timing) is no version's. A hand-written version counts its pack kernels (common/box_copy.cpp),
a gddt version the datatype constructor it calls (common/subarray.cpp).

    count_lines.py [--markdown]
"""
import argparse
import os

APPS = os.path.dirname(os.path.abspath(__file__))

# app: [(version, files relative to apps/)], the baseline first.
VERSIONS = {
    "stencil2d": [("def", ["stencil2d/halo_def.cpp"]), ("gddt", ["stencil2d/halo_gddt.cpp"])],
    "halo3d": [
        ("hand", ["halo3d/exchange_hand.cpp", "common/box_copy.cpp"]),
        ("p2p", ["halo3d/exchange_p2p.cpp", "common/subarray.cpp"]),
        ("neighbor", ["halo3d/exchange_neighbor.cpp", "common/subarray.cpp"]),
        ("cartesian", ["halo3d/exchange_cartesian.cpp", "common/subarray.cpp"]),
    ],
    "fft": [
        ("hand", ["fft/transpose_hand.cpp", "common/box_copy.cpp"]),
        ("alltoallw", ["fft/transpose_gddt.cpp", "common/subarray.cpp"]),
    ],
    # Whole programs (GMPI's Table 5 counts programs): each version's file and the header the
    # three share.
    "himeno": [
        (version, [f"../bench/device_api/himeno_{version}.cu", "../bench/device_api/himeno_common.cuh"])
        for version in ("host", "stream", "kernel")
    ],
}


def count(path):
    """(code lines, all lines) of a C++ or CUDA file: comment-only and blank lines are not code."""
    code = total = 0
    in_block = False
    with open(os.path.join(APPS, path)) as source:
        for line in source:
            total += 1
            text = line.strip()
            if in_block:
                in_block = "*/" not in text
                text = text.split("*/", 1)[1].strip() if "*/" in text else ""
            elif text.startswith("/*"):
                in_block = "*/" not in text
                text = "" if in_block else text.split("*/", 1)[1].strip()
            if text and not text.startswith("//"):
                code += 1
    return code, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    markdown = parser.parse_args().markdown
    if markdown:
        print("| app | version | code lines | all lines | vs first | files |")
        print("|---|---|---|---|---|---|")
    else:
        print(f"{'app':<10} {'version':<10} {'code':>6} {'all':>6} {'vs first':>9}  files")
    for app, versions in VERSIONS.items():
        first = None
        for version, files in versions:
            counts = [count(path) for path in files]
            code, total = sum(c for c, _ in counts), sum(t for _, t in counts)
            first = first or code
            change = f"{100.0 * (code - first) / first:+.0f}%"
            names = ", ".join(os.path.relpath(os.path.join(APPS, path), os.path.dirname(APPS)) for path in files)
            if markdown:
                print(f"| {app} | {version} | {code} | {total} | {change} | {names} |")
            else:
                print(f"{app:<10} {version:<10} {code:>6} {total:>6} {change:>9}  {names}")


if __name__ == "__main__":
    main()
