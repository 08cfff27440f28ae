#!/usr/bin/env python3
"""Runs the CTest tests of a build one by one through scripts/run-case.sh: each with its own
time limit (its TIMEOUT property, else --limit) and its own log in OUTDIR, and a test still
running at its limit prints every thread's stack before it is killed. Prints one line per test
and exits 1 if any failed or timed out.

    scripts/run-ctest-cases.py BUILD_DIR OUTDIR [-R REGEX] [-L LABEL] [--limit SECONDS]
"""
import argparse
import json
import os
import re
import subprocess
import sys

RUN_CASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run-case.sh")


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


def verdict(rc, log_text, props):
    if rc == 124:
        return "TIMEOUT"
    skip = props.get("SKIP_RETURN_CODE")
    if skip is not None and rc == int(skip):
        return "skipped"
    # As CTest: a line the program prints where it cannot run skips it, whatever its exit code.
    if any(re.search(p, log_text) for p in props.get("SKIP_REGULAR_EXPRESSION", [])):
        return "skipped"
    for pattern in props.get("FAIL_REGULAR_EXPRESSION", []):
        if re.search(pattern, log_text):
            return "FAIL"
    passes = props.get("PASS_REGULAR_EXPRESSION")
    if passes:
        return "ok" if any(re.search(p, log_text) for p in passes) else "FAIL"
    return "ok" if rc == 0 else "FAIL"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("outdir")
    parser.add_argument("-R", dest="regex", default="")
    parser.add_argument("-L", dest="label", default="")
    parser.add_argument("--limit", type=int, default=300)
    args = parser.parse_args()
    selection = ["-R", args.regex] if args.regex else []
    selection += ["-L", args.label] if args.label else []
    listing = subprocess.run(["ctest", "--show-only=json-v1", *selection], cwd=args.build, check=True,
                             capture_output=True, text=True).stdout
    os.makedirs(args.outdir, exist_ok=True)
    dump = os.path.join(os.path.abspath(args.build), "tests", "libgddt_stack_dump.so")
    if os.path.exists(dump):
        os.environ.setdefault("STACK_DUMP_LIBRARY", dump)
    failed = 0
    for test in json.loads(listing)["tests"]:
        props = properties(test)
        env = dict(os.environ)
        for assignment in props.get("ENVIRONMENT", []):
            name, _, value = assignment.partition("=")
            env[name] = value
        log = os.path.join(args.outdir, re.sub(r"[^A-Za-z0-9._-]", "_", test["name"]) + ".log")
        limit = int(props.get("TIMEOUT", args.limit))
        rc = subprocess.run([RUN_CASE, log, str(limit), *test["command"]], env=env,
                            cwd=props.get("WORKING_DIRECTORY", args.build)).returncode
        with open(log, errors="replace") as f:
            result = verdict(rc, f.read(), props)
        failed += result in ("FAIL", "TIMEOUT")
        print(f"{result:8} {test['name']} (exit {rc}, log {log})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
