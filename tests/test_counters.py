#!/usr/bin/env python3
"""Tests of scripts/counters.py's parser on a hand-made ncu --csv output: a kernel that reads
its declared bytes passes, one that reads 10% too few is flagged (exit 1), helpers are left
out, vendor kernels are reported but not judged; the declared bytes come from the binary's own
`--list` (the sm_90 build in the tree, which make test builds first), and a binary that cannot
state them stops the script. Prints PASS/FAIL counters:<name> lines."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "counters.py")
BINARY = os.path.join(HERE, "..", "02-gemv", "gemv")
check = Checks("counters")


N = K = 4096
READ = 2 * N * K + 2 * K
HEAD = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'


def rows(lid, kernel, grid, read, write, req, sec):
    out = ""
    for m, u, v in (("dram__bytes_read.sum", "byte", read), ("dram__bytes_write.sum", "byte", write),
                    ("lts__t_requests_srcunit_tex_op_read.sum", "", req),
                    ("lts__t_sectors_srcunit_tex_op_read.sum", "sector", sec), ("gpu__time_duration.sum", "ns", 9800)):
        out += (f'"{lid}","1","gemv","h","{kernel}","1","7","(256, 1, 1)","{grid}","0","9.0",'
                f'"Command line profiler metrics","{m}","{u}","{v:,}"\n')
    return out


def run(csv_text, d, binary=BINARY):
    p = os.path.join(d, "ncu.csv")
    with open(p, "w") as f:
        f.write("==PROF== Connected to process\n" + csv_text)
    r = subprocess.run([sys.executable, SCRIPT, "--binary", binary, "--parse-ncu", p, "--shape", f"{N}x{K}", "--out", d],
                       capture_output=True, text=True)
    j = os.path.join(d, "02-gemv-counters.json")
    doc = json.load(open(j)) if os.path.exists(j) else None
    return r.returncode, doc, r.stderr


with tempfile.TemporaryDirectory() as t:
    good = (HEAD + rows(0, "fill_half_kernel(__half *, unsigned long, unsigned long)", "(1024, 1, 1)", 0, 10**8, 1, 1)
            + rows(1, "gemv_rows_in_flight_r1(const __half *, const __half *, __half *, int, int)", "(256, 1, 1)",
                   READ + 300, 8192, 262144, 1048576)
            + rows(2, "gemv_rows_in_flight_r1(const __half *, const __half *, __half *, int, int)", "(256, 1, 1)",
                   READ - 100, 8192, 262144, 1048576)
            + rows(3, "nvjet_sm90_hsh_64x8_splitK", "(64, 1, 1)", int(READ * 1.2), 10**6, 300000, 1100000))
    rc, doc, err = run(good, t)
    check(doc is not None, "binary-states-declared-bytes")
    if doc is None:
        print(err[-400:])
        check.exit()
    check(doc["declared"] == {"read": READ, "write": 2 * N}, "declared-is-2NK+2K-read-2N-written")
    r = {x["kernel"]: x for x in doc["rows"]}
    check(rc == 0, "declared-bytes-pass")
    check("fill_half_kernel" not in r, "helpers-left-out")
    check(r["gemv_rows_in_flight_r1"]["launches_profiled"] == 2 and r["gemv_rows_in_flight_r1"]["within_3pct"], "median-of-launches")
    check(abs(r["gemv_rows_in_flight_r1"]["sectors_per_request"] - 4.0) < 1e-9, "sectors-per-request")
    check(not r["nvjet_sm90_hsh_64x8_splitK"]["ours"] and r["nvjet_sm90_hsh_64x8_splitK"]["within_3pct"] is False
          and doc["summary"]["kernels_ours_within_3pct"] == 1, "vendor-reported-not-judged")
    bad = HEAD + rows(1, "gemv_tensor_core_ks8(const __half *, const __half *, __half *, int, int)", "(256, 1, 1)",
                      int(READ * 0.9), 8192, 524288, 1048576)
    rc, doc, _ = run(bad, t)
    check(rc == 1 and doc["rows"][0]["within_3pct"] is False, "too-few-bytes-flagged")
    os.remove(os.path.join(t, "02-gemv-counters.json"))
    rc, doc, err = run(good, t, binary=os.path.join(t, "no-such-gemv"))
    check(rc == 1 and doc is None and "declared bytes" in err, "no-binary-no-figures")
    r = subprocess.run([sys.executable, SCRIPT, "--shape", "4096by4096"], capture_output=True, text=True)
    check(r.returncode == 2 and "NxK" in r.stderr, "bad-shape-exit-2")

check.exit()
