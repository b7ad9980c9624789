#!/usr/bin/env python3
"""The verdict on one run of the conformance suite against a requirement set: every scenario
that ran, scored or not, passes unless the baseline lists it, and a listed scenario that passes
is a stale entry. Prints the figures by kind (required, extension, pending, added after release)
and exits 1 on an unexpected failure or a stale entry.

The suite's own baseline check, under `--requirements`, judges only the required scenarios: a
failing extension or pending scenario does not fail its run. Here it does.

A scenario fails when one of its checks is FAILURE or WARNING (a SHOULD not met), as the
suite's baseline check counts it.

usage: verdict.py RESULTS_DIR REQUIREMENTS_YAML BASELINE_YAML LEG
  RESULTS_DIR        the suite's -o folder (one <leg>-<scenario>-<time>/checks.json each)
  REQUIREMENTS_YAML  the suite's requirements/<revision>.yaml
  BASELINE_YAML      the expected failures (`server:` / `client:` lists of scenario names)
  LEG                server or client
"""

import json
import os
import re
import sys

sys.dont_write_bytecode = True


def requirement_kinds(path, leg):
    """Scenario name -> 'required' or the not_scored reason, for `leg`. The requirement files
    are plain YAML: top-level lists of names, and not_scored entries of scenario/leg/reason."""
    kinds, section, entry = {}, None, None
    for line in open(path, encoding="utf-8"):
        line = line.split(" #", 1)[0].rstrip() if not line.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        top = re.match(r"^(\w+):\s*$", line)
        if top:
            section, entry = top.group(1), None
            continue
        item = re.match(r"^\s*-\s*(scenario:\s*)?(\S+)\s*$", line)
        if item and section == leg and not item.group(1):
            kinds[item.group(2)] = "required"
        elif item and section == "not_scored":
            entry = {"scenario": item.group(2)}
        elif section == "not_scored" and entry is not None:
            field = re.match(r"^\s+(leg|reason):\s*(\S+)\s*$", line)
            if field:
                entry[field.group(1)] = field.group(2)
                if "leg" in entry and "reason" in entry and entry["leg"] == leg:
                    kinds[entry["scenario"]] = entry["reason"]
    return kinds


def baseline(path, leg):
    """The scenario names listed under `leg:` in the expected-failures file."""
    names, section = set(), None
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("#") or not line.strip():
            continue
        top = re.match(r"^(\w+):\s*(\[\])?\s*$", line)
        if top:
            section = top.group(1)
            continue
        item = re.match(r"^\s*-\s*(\S+)\s*$", line)
        if item and section == leg:
            names.add(item.group(1))
    return names


def outcomes(results, leg):
    """Scenario name -> list of (check id, status, message) of the checks that did not pass."""
    found = {}
    for folder in sorted(os.listdir(results)):
        path = os.path.join(results, folder, "checks.json")
        if not os.path.isfile(path):
            continue
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", folder)
        if leg == "server":
            name = name.removeprefix("server-")
        checks = json.load(open(path, encoding="utf-8"))
        found[name] = [
            (c["id"], c["status"], (c.get("errorMessage") or "")[:200])
            for c in checks
            if c["status"] in ("FAILURE", "WARNING")
        ]
    return found


def main():
    results, requirements, baseline_path, leg = sys.argv[1:5]
    kinds = requirement_kinds(requirements, leg)
    expected = baseline(baseline_path, leg)
    ran = outcomes(results, leg)
    status = 0
    for name in sorted(set(kinds) - set(ran)):
        print(f"NOT RUN: {name} ({kinds[name]})")
        status = 1
    tally = {}
    for name, bad in sorted(ran.items()):
        kind = kinds.get(name, "not in the requirement set")
        passed, total = tally.get(kind, (0, 0))
        tally[kind] = (passed + (not bad), total + 1)
        if bad and name not in expected:
            status = 1
            print(f"FAILED: {name} ({kind})")
            for check, state, message in bad:
                print(f"    {state} {check}: {message}")
        elif bad:
            print(f"expected failure (baseline): {name} ({kind})")
        elif name in expected:
            status = 1
            print(f"STALE: {name} passes; remove it from {baseline_path}")
    for name in sorted(expected - set(ran)):
        print(f"STALE: {name} is in the baseline but did not run")
        status = 1
    figures = ", ".join(
        f"{kind} {passed} of {total}" for kind, (passed, total) in sorted(tally.items())
    )
    print(f"{leg} scenarios passed: {figures}")
    return status


if __name__ == "__main__":
    sys.exit(main())
