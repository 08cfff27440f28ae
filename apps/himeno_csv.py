#!/usr/bin/env python3
"""Turns the output of bench/device_api/himeno_agree.sh (the three Himeno versions of one size and
the check of their residuals) into rows of the apps' CSV (apps/report.cpp's columns), so that
summarize.py and plot_apps.py treat Himeno like the other apps. Himeno does not time its
communication apart: those columns stay empty.

    himeno_csv.py LOG SIZE LABEL >> apps.csv
"""
import re
import sys

LINE = re.compile(r"^himeno (\S+) +grid (\d+)x(\d+)x(\d+) ranks (\d+) iterations \d+ .*? ([\d.]+) us/iteration")


def main():
    log, size, label = sys.argv[1:4]
    with open(log) as f:
        text = f.read()
    agree = re.search(r"^himeno residuals .* agree", text, re.MULTILINE) is not None
    for line in text.splitlines():
        match = LINE.match(line)
        if match is None:
            continue
        version, i, j, k, ranks, us = match.groups()
        mib = int(i) * int(j) * int(k) * 4 / int(ranks) / 1048576  # p, one array of floats
        print(f"himeno,{label},{ranks},{size},{i}x{j}x{k},{mib:.4f},{version},{us},,,,{'ok' if agree else 'WRONG'}")


if __name__ == "__main__":
    main()
