#!/usr/bin/env python3
"""compare.py's 06-decode table (time beyond the floor, and one card predicted from another) on
fixed documents whose answers are worked by hand below, then once on the committed results."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import compare  # noqa: E402
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402

checks = Checks("compare")


def check(name, cond, detail=""):
    if not cond and detail:
        print(f"  compare:{name}: {detail}")
    checks(bool(cond), name)


def near(a, b, eps=1e-9):
    return abs(a - b) <= eps * max(1.0, abs(b))


ENG = "engines: one decode step"
RING = "persistent_ring: piece assignment (whole pairs per warp, or balanced runs of pieces)"
A = {"rows": [
    {"family": ENG, "model": "M", "engine": "graph", "median_us": 100.0, "fraction_of_floor": 0.5},
    {"family": ENG, "model": "M", "engine": "persistent_ring", "ring_mode": "x", "median_us": 90.0, "fraction_of_floor": 0.6},
    {"family": RING, "model": "M", "mode": "pairs", "median_us": 90.0, "fraction_of_floor": 0.6},
    {"family": RING, "model": "M", "mode": "only_a", "median_us": 10.0, "fraction_of_floor": 0.5},
    {"family": RING, "model": "M", "mode": "broken", "median_us": 10.0, "fraction_of_floor": None},
    {"family": "timeline", "model": "M", "mode": "pairs", "median_us": 1.0, "fraction_of_floor": 1.0},
]}
B = {"rows": [
    {"family": ENG, "model": "M", "engine": "graph", "median_us": 80.0, "fraction_of_floor": 0.375},
    {"family": ENG, "model": "M", "engine": "persistent_ring", "ring_mode": "y", "median_us": 70.0, "fraction_of_floor": 0.5},
    {"family": RING, "model": "M", "mode": "pairs", "median_us": 70.0, "fraction_of_floor": 0.5},
    {"family": RING, "model": "M", "mode": "broken", "median_us": 10.0, "fraction_of_floor": 0.5},
]}
rows = compare.beyond_floor_table(A, B)
names = [r[1] for r in rows]
# Paired: graph, and ring mode pairs. Not: persistent_ring (each card kept another mode, x / y),
# only_a (B lacks it), broken (A's fraction missing), the timeline row (not an engine or mode).
check("pairs_only_like_with_like", names == ["graph", "ring pairs"], names)
g = rows[0]
# graph: A floor 100 x 0.5 = 50, beyond 50; B floor 80 x 0.375 = 30, beyond 50; B predicted 30 + 50 = 80, error 0.
check("graph_floors", near(g[3], 50.0) and near(g[6], 30.0), g)
check("graph_beyond", near(g[4], 50.0) and near(g[7], 50.0), g)
check("graph_prediction", near(g[8], 80.0) and near(g[9], 0.0), g)
p = rows[1] if len(rows) > 1 else (None,) * 10
# pairs: A floor 54, beyond 36; B floor 35, beyond 35; predicted 35 + 36 = 71; error (70 - 71) / 71.
check("pairs_prediction", p[8] is not None and near(p[8], 71.0) and near(p[9], -1.0 / 71.0), p)
check("empty_without_rows", compare.beyond_floor_table({"rows": []}, B) == [])

# 02-gemv: per shape and mode, the fastest configuration on each card, both timed on both.
EV = "every configuration (validated, then timed)"
def g(shape, mode, ver, var, grid, med, mbu):
    return {"family": EV, "shape": shape, "mode": mode, "version": ver, "variant": var, "grid": grid,
            "threads": 256, "median_us": med, "mbu": mbu}
GA = {"rows": [g("S", "chained", "4", "p", 512, 9.0, 0.8), g("S", "chained", "6", "q", 256, 8.0, 0.9),
               g("S", "isolated", "4", "p", 512, 10.0, 0.7), g("S", "no-wait bound", "4", "p", 512, 1.0, 1.0),
               g("S", "chained", "only_a", "-", 1, 1.0, 1.0)]}
GB = {"rows": [g("S", "chained", "4", "p", 512, 11.0, 0.9), g("S", "chained", "6", "q", 256, 12.0, 0.9),
               g("S", "isolated", "4", "p", 512, 12.0, 0.5)]}
gr = compare.gemv_best_table(GA, GB)
# chained: fastest on A is "6 q" (8.0; only_a is not on B), on B "4 p" (11.0): two rows, A's first.
# isolated: one configuration, fastest on both: one row. The no-wait bound is not a mode compared.
check("gemv_rows", [(r[1], r[2], r[3]) for r in gr] ==
      [("chained", "6 q 256 x 256", "A"), ("chained", "4 p 512 x 256", "B"), ("isolated", "4 p 512 x 256", "both")],
      [(r[1], r[2], r[3]) for r in gr])
# 6 q: A 8.0 at mbu 0.9 -> floor 7.2, beyond 0.8; B 12.0 at 0.9 -> floor 10.8, beyond 1.2.
check("gemv_beyond", len(gr) == 3 and near(gr[0][5], 0.8) and near(gr[0][7], 1.2), gr[:1])
# 4 p isolated: A 10 x (1 - 0.7) = 3.0 beyond; B 12 x (1 - 0.5) = 6.0.
check("gemv_isolated", len(gr) == 3 and near(gr[2][5], 3.0) and near(gr[2][7], 6.0), gr[2:])

# The committed results: an H200 and an H100 run side by side, the table printed.
root = os.path.join(HERE, "..")
a, b = os.path.join(root, "results", "h200"), os.path.join(root, "results", "h100-80gb-hbm3", "run-28c313b")
if os.path.exists(os.path.join(a, "06-decode.json")) and os.path.exists(os.path.join(b, "06-decode.json")):
    out = subprocess.run([sys.executable, os.path.join(root, "scripts", "compare.py"), a, b],
                         capture_output=True, text=True, timeout=60)
    check("committed_runs", out.returncode == 0 and "06-decode: time beyond the floor" in out.stdout
          and "| Llama-3.2-1B | ring pairs |" in out.stdout
          and "| 4096x4096 | chained |" in out.stdout, out.stderr[-300:])
else:
    print("SKIP compare:committed_runs: results/h200 or the H100 run's 06-decode.json absent")
out = subprocess.run([sys.executable, os.path.join(root, "scripts", "compare.py"), "/nonexistent"], capture_output=True, text=True)
check("bad_usage_exit_2", out.returncode == 2, out.returncode)

print(f"compare tests: {checks.failed} failed")
checks.exit()
