#!/usr/bin/env python3
"""chained_top.py JSON [N]: the N fastest chained rows of a 02-gemv JSON (GB/s, fraction of that run's
ceiling, µs, rotating copies), for the side-by-side calls of scripts/device_session.sh."""
import json
import sys


def main(argv):
    if len(argv) < 2 or (len(argv) > 2 and not argv[2].isdigit()):
        print("usage: chained_top.py JSON [N]  (N: how many rows, a whole number)", file=sys.stderr)
        return 2
    n = int(argv[2]) if len(argv) > 2 else 6
    try:
        with open(argv[1]) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        print(f"chained_top.py: {argv[1]}: {e}", file=sys.stderr)
        return 1
    ceiling = d["summary"].get("ceiling_gbps") or 0
    rows = sorted((r for r in d["rows"] if r.get("mode") == "chained" and "gbps" in r), key=lambda r: -r["gbps"])
    for r in rows[:n]:
        frac = r["gbps"] / ceiling if ceiling else float("nan")
        print(f"  {r['shape']:>12} {r['kernel']:<34} {r['grid']:>6} x {r['threads']:<4} {r['gbps']:8.1f} GB/s "
              f"{frac:6.3f} {r['median_us']:9.2f} us  copies {r.get('weight_copies')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
