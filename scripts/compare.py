#!/usr/bin/env python3
"""make compare A=results/h200 B=results/<other>: headline figures side by side, with ratios.

Every numeric summary key present in both devices' NN-name.json (and report.json) is listed
with B/A. Keys present on one side only are listed with '-' on the other.
"""
import json
import os
import sys


def summaries(d):
    out = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".json") and name != "env.json":
            try:
                doc = json.load(open(os.path.join(d, name)))
            except (OSError, ValueError) as e:
                print(f"compare: cannot read {d}/{name}: {e}", file=sys.stderr)
                continue
            for k, v in (doc.get("summary") or {}).items():
                out[(doc.get("experiment", name[:-5]), k)] = v
    return out


def fmt(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None else str(v)[:40]
    return f"{v:.4g}"


def device(d):
    try:
        p = json.load(open(os.path.join(d, "01-ceiling.json")))["provenance"]
        return p["device_name"]
    except (OSError, ValueError, KeyError):
        return os.path.basename(os.path.normpath(d))


def main():
    if len(sys.argv) != 3 or not all(os.path.isdir(x) for x in sys.argv[1:]):
        print("usage: compare.py RESULTS_DIR_A RESULTS_DIR_B (make compare A=results/h200 B=results/other)", file=sys.stderr)
        return 2
    a, b = sys.argv[1], sys.argv[2]
    sa, sb = summaries(a), summaries(b)
    print(f"| experiment | key | A: {device(a)} | B: {device(b)} | B / A |")
    print("|---|---|---|---|---|")
    for key in sorted(set(sa) | set(sb)):
        va, vb = sa.get(key), sb.get(key)
        ratio = "-"
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (va, vb)) and va:
            ratio = f"{vb / va:.3f}"
        if isinstance(va, dict) or isinstance(vb, dict):
            continue
        print(f"| {key[0]} | {key[1]} | {fmt(va)} | {fmt(vb)} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
