#!/usr/bin/env python3
"""Prints what each failed test of a `go test -v` log said, last.

A long verbose run (the kind suite, Gateway API's conformance suite) puts
the failure's own lines somewhere in the middle of thousands, and CI shows
only the head and the tail of a run's output: e2e/kind/run.sh calls this
after a failed run so that the tail names each failed test and its errors.

Usage: test-failures.py LOG [LINES]   (LINES per failed test, default 30)

Lines are given to the test `go test -v` says is running: "=== RUN",
"=== CONT" and "=== NAME" switch it. Only the innermost failed tests are
printed, since a parent fails with each of its subtests.
"""
import re
import sys

MARK = re.compile(r"^=== (?:RUN|CONT|NAME|PAUSE)\s+(\S+)")
RESULT = re.compile(r"^\s*--- (FAIL|PASS|SKIP): (\S+)")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: test-failures.py LOG [LINES]")
    keep = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    said = {}
    failed = []
    current = None
    with open(sys.argv[1], errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            mark = MARK.match(line)
            if mark:
                current = mark.group(1)
                continue
            result = RESULT.match(line)
            if result:
                if result.group(1) == "FAIL":
                    failed.append(result.group(2))
                continue
            if current is not None:
                said.setdefault(current, []).append(line)
    leaves = [t for t in failed if not any(o.startswith(t + "/") for o in failed)]
    if not leaves:
        return
    print(f"\n=== {len(leaves)} failed test(s), each with its last {keep} lines")
    for test in leaves:
        print(f"\n--- FAIL: {test}")
        for line in said.get(test, [])[-keep:]:
            print(f"    {line.strip()}")


if __name__ == "__main__":
    main()
