#!/usr/bin/env python3
"""make counters: the DRAM bytes each 02-gemv kernel actually moves at 4096x4096, counted by
the profiler, against the bytes the suite declares (common/sizes.h: 2NK + 2K read, 2N written, as
`02-gemv/gemv --list` states them).

A separate run: the timing runs never go under a profiler. Under SUITE_SANITIZE=1 every timing
plan of the binary shrinks to one replay, so each configuration is launched a few dozen times
instead of thousands; every configuration is still validated first. The profiler flushes the
caches before each kernel it profiles (ncu's default --cache-control all), so x is counted too.

  NVIDIA: ncu --clock-control none (clocks are never changed) with dram__bytes_read.sum,
          dram__bytes_write.sum and the L2 read requests and sectors from the SMs (how many
          requests a kernel's loads become: the tensor-core rungs' 64-byte row segments against
          rows in flight's 512 contiguous bytes).
  AMD:    rocprofv3 --pmc FETCH_SIZE WRITE_SIZE (KB), where ROCm is installed.
  Neither: "counters: skipped" and exit 77.

Writes build/counters/ (the profiler's raw output) and results/<gpu>/02-gemv-counters.json
and .txt: per kernel (and grid), the median counted bytes per launch, declared bytes, and the
ratio; a hand-written kernel whose counted reads are off by more than 3% is flagged, and the
exit is 1 (vendor kernels are reported, not judged: split-K workspaces are theirs to move).

  python3 scripts/counters.py [--binary 02-gemv/gemv] [--shape 4096x4096]
  python3 scripts/counters.py --parse-ncu CSV --shape NxK --out DIR   (no GPU: parse a saved run)
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

NCU_METRICS = [
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_requests_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "gpu__time_duration.sum",
]
TOLERANCE = 0.03
# Our helpers (fills, clock samples): profiled, not reported.
HELPERS = ("fill_", "const_clock_sample", "stream_check", "stream_read")


def declared(binary, n, k):
    """The bytes the suite declares for one GEMV, read apart from written, as the binary itself
    states them (`--list`, which needs no GPU; common/sizes.h gemv_read_bytes / gemv_write_bytes,
    the one declaration). Raises RuntimeError when the binary cannot say."""
    try:
        r = subprocess.run([binary, "--list", "--shape", f"{n}x{k}"], capture_output=True, text=True, timeout=120)
    except OSError as e:
        raise RuntimeError(f"cannot run {binary} --list for the declared bytes: {e} (build it: make 02-gemv/gemv)")
    m = re.search(r"^%dx%d: declared bytes per GEMV: read (\d+), written (\d+)$" % (n, k), r.stdout, re.M)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{binary} --list --shape {n}x{k} (exit {r.returncode}) did not state the declared bytes")
    return {"read": int(m.group(1)), "write": int(m.group(2))}


def number(s):
    s = (s or "").replace(",", "").strip()
    try:
        return float(s)
    except ValueError:
        return None


def parse_ncu_csv(text):
    """ncu --csv --print-units base: one row per (kernel launch, metric). Returns a list of
    launches: {"id", "kernel", "grid", "block", metric: value}."""
    start = text.find('"ID"')
    if start < 0:
        return []
    launches = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        lid = row.get("ID")
        name = row.get("Kernel Name") or ""
        metric = row.get("Metric Name")
        if lid is None or not metric:
            continue
        d = launches.setdefault(lid, {"id": int(lid), "kernel": name.split("(")[0].strip(),
                                      "grid": row.get("Grid Size", ""), "block": row.get("Block Size", "")})
        d[metric] = number(row.get("Metric Value"))
    return [launches[k] for k in sorted(launches, key=lambda x: int(x))]


def summarise(launches, dec):
    groups = {}
    for l in launches:
        if l["kernel"].startswith(HELPERS):
            continue
        groups.setdefault((l["kernel"], l["grid"], l["block"]), []).append(l)
    rows = []
    for (kern, grid, block), ls in sorted(groups.items()):
        def med(m):
            v = [x.get(m) for x in ls if x.get(m) is not None]
            return statistics.median(v) if v else None
        rd, wr = med("dram__bytes_read.sum"), med("dram__bytes_write.sum")
        ns = med("gpu__time_duration.sum")
        req, sec = med("lts__t_requests_srcunit_tex_op_read.sum"), med("lts__t_sectors_srcunit_tex_op_read.sum")
        ours = kern.startswith("gemv_")
        ratio = rd / dec["read"] if rd is not None else None
        rows.append({
            "kernel": kern, "grid": grid, "block": block, "launches_profiled": len(ls), "ours": ours,
            "dram_read_bytes": rd, "dram_write_bytes": wr, "declared_read_bytes": dec["read"],
            "declared_write_bytes": dec["write"], "read_over_declared": ratio,
            "l2_read_requests": req, "l2_read_sectors": sec,
            "sectors_per_request": (sec / req) if req and sec is not None else None,
            "ncu_time_us": ns / 1e3 if ns is not None else None,
            "within_3pct": (abs(ratio - 1) <= TOLERANCE) if ratio is not None else None,
        })
    return rows


def provenance():
    """Who counted: the commit (GIT_COMMIT as device_session.sh exports it from .git-commit on a
    lent machine, whose .git is not the commit built; else git), the GPU, the time."""
    def run(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return r.stdout.strip() if r.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            return None
    commit = os.environ.get("GIT_COMMIT") or run(["git", "rev-parse", "--short=12", "HEAD"])
    gpu = run(["nvidia-smi", "--query-gpu=name,pci.bus_id,driver_version", "--format=csv,noheader"])
    return {"git_commit": commit, "device": gpu.splitlines()[0] if gpu else None,
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write(rows, n, k, dec, tool, command, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    ours = [r for r in rows if r["ours"]]
    bad = [r for r in ours if r["within_3pct"] is False]
    doc = {
        "schema": 1, "experiment": "02-gemv-counters", "provenance": provenance(), "tool": tool, "command": command,
        "shape": f"{n}x{k}", "declared": dec, "tolerance": TOLERANCE,
        "summary": {
            "kernels_ours": len(ours), "kernels_ours_within_3pct": len(ours) - len(bad),
            "kernels_vendor": len(rows) - len(ours),
            "worst_ours_read_over_declared": max((abs(r["read_over_declared"] - 1), r["read_over_declared"])
                                                 for r in ours if r["read_over_declared"] is not None)[1] if ours else None,
        },
        "rows": rows,
    }
    with open(os.path.join(out_dir, "02-gemv-counters.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    def fmt(v, spec):
        return "-" if v is None else format(v, spec)
    lines = [f"# 02-gemv counters at {n}x{k} ({tool})", "", f"command: `{command}`", "",
             f"declared per launch: {doc['declared']['read']} bytes read (2NK + 2K), {doc['declared']['write']} written (2N)", "",
             "| kernel | grid | block | launches | DRAM read MB | read / declared | DRAM write KB | L2 read requests | sectors / request | within 3% |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['grid']} | {r['block']} | {r['launches_profiled']} | "
                     f"{fmt(r['dram_read_bytes'] and r['dram_read_bytes'] / 1e6, '.3f')} | {fmt(r['read_over_declared'], '.4f')} | "
                     f"{fmt(r['dram_write_bytes'] and r['dram_write_bytes'] / 1e3, '.1f')} | {fmt(r['l2_read_requests'], '.0f')} | "
                     f"{fmt(r['sectors_per_request'], '.2f')} | {'-' if not r['ours'] else ('yes' if r['within_3pct'] else 'NO')} |")
    lines += ["", "summary: " + json.dumps(doc["summary"])]
    with open(os.path.join(out_dir, "02-gemv-counters.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if bad or not ours else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="02-gemv/gemv")
    ap.add_argument("--shape", default="4096x4096")
    ap.add_argument("--parse-ncu", help="parse a saved ncu --csv output instead of running")
    ap.add_argument("--out", help="results directory (default: the binary's --print-results-dir)")
    a = ap.parse_args()
    try:
        n, k = (int(v) for v in a.shape.lower().split("x"))
    except ValueError:
        print(f"counters: --shape must be NxK, not '{a.shape}'", file=sys.stderr)
        return 2
    try:
        dec = declared(a.binary, n, k)
    except RuntimeError as e:
        print(f"counters: {e}", file=sys.stderr)
        return 1
    if a.parse_ncu:
        rows = summarise(parse_ncu_csv(open(a.parse_ncu).read()), dec)
        return write(rows, n, k, dec, "ncu", f"(parsed from {a.parse_ncu})", a.out or "build/counters")
    ncu, rocprof = shutil.which("ncu"), shutil.which("rocprofv3")
    if not ncu and not rocprof:
        print("counters: skipped: neither ncu nor rocprofv3 on PATH")
        return 77
    r = subprocess.run([a.binary, "--print-results-dir"], capture_output=True, text=True)
    if r.returncode == 77:
        print("counters: skipped: no GPU present")
        return 77
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        return r.returncode
    out_dir = a.out or r.stdout.strip()
    os.makedirs("build/counters", exist_ok=True)
    env = dict(os.environ, SUITE_SANITIZE="1")
    if ncu:
        raw = "build/counters/02-gemv-ncu.csv"
        cmd = [ncu, "--clock-control", "none", "--csv", "--print-units", "base", "--metrics", ",".join(NCU_METRICS),
               "--launch-count", "4000", a.binary, "--quick", "--shape", a.shape]
        command = "SUITE_SANITIZE=1 " + " ".join(cmd)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        with open(raw, "w") as f:
            f.write(p.stdout)
        if p.returncode != 0:
            print(p.stderr[-3000:], file=sys.stderr)
            print(f"counters: ncu exited {p.returncode} (raw output in {raw})", file=sys.stderr)
            return 1
        rows = summarise(parse_ncu_csv(p.stdout), dec)
        return write(rows, n, k, dec, "ncu", command, out_dir)
    # AMD: rocprofv3 counter collection; FETCH_SIZE / WRITE_SIZE are in KB per dispatch.
    cmd = [rocprof, "--pmc", "FETCH_SIZE", "WRITE_SIZE", "--output-format", "csv", "-d", "build/counters", "--",
           a.binary, "--quick", "--shape", a.shape]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    print(p.stdout[-2000:])
    if p.returncode != 0:
        print(p.stderr[-3000:], file=sys.stderr)
        return 1
    print("counters: rocprofv3 output in build/counters (not yet summarised: no AMD GPU was available to check its format)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
