#!/usr/bin/env python3
"""Rust source files longer than a limit (600 lines by default).

Usage: python3 scripts/file_lengths.py [--max N] [ROOT ...]   (ROOT defaults to `.`)

Walks each ROOT for `.rs` files, skipping build output and what is not ours to split
(directories named `target`, `fuzz` or `node_modules`, and hidden ones), prints each file over
the limit with its length, longest first, and exits 1 if there is any. Python 3 standard
library only.
"""

import os
import sys

SKIPPED = {"target", "fuzz", "node_modules"}


def long_files(roots, limit):
    """(lines, path) of every `.rs` file under `roots` with more than `limit` lines."""
    found = []
    for root in roots:
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED and not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".rs"):
                    path = os.path.join(directory, name)
                    with open(path, encoding="utf-8") as f:
                        lines = sum(1 for _ in f)
                    if lines > limit:
                        found.append((lines, os.path.normpath(path)))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def main(argv):
    args, limit = argv[1:], 600
    if args[:1] == ["--max"]:
        if len(args) < 2 or not args[1].isdigit():
            print("usage: file_lengths.py [--max N] [ROOT ...]", file=sys.stderr)
            return 2
        limit, args = int(args[1]), args[2:]
    found = long_files(args or ["."], limit)
    for lines, path in found:
        print(f"{path}: {lines} lines")
    print(f"{len(found)} Rust file(s) over {limit} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
