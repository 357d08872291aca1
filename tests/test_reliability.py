#!/usr/bin/env python3
"""Tests of scripts/reliability.py on hand-made sanitizer records: an error in our kernel
counts, one inside cuBLAS does not, a run whose program failed or timed out is incomplete,
and the planted-fault totals add up. Prints PASS/FAIL reliability:<name> lines."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "reliability.py")
check = Checks("reliability")


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


with tempfile.TemporaryDirectory() as t:
    s = os.path.join(t, "san")
    os.makedirs(s)
    write(s, "01-a.result", "01-a memcheck 0 0 3 0\n01-a racecheck 99 2 9 0\n01-a synccheck 124 -1 400 0\n01-a initcheck 1 0 4 0\n")
    write(s, "01-a.memcheck.txt", "========= ERROR SUMMARY: 0 errors\n")
    write(s, "01-a.racecheck.txt", "========= Error: Race reported between Read access at nvjet_sm90_x+0x10\n"
          "========= Error: Race reported between Write access at my_kernel+0x20\n"
          "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n")
    write(s, "01-a.synccheck.txt", "[01-a 3/9]\n")
    write(s, "01-a.initcheck.txt", "error: validation failed\n========= Target application returned an error\n"
          "========= ERROR SUMMARY: 0 errors\n")
    for name, rec in (("fuzz.json", {"fuzz_invocations": 1000, "fuzz_crashes": 0}),
                      ("ci.json", {"planted_faults_total": 8, "planted_faults_caught": 7}),
                      ("gpu.json", {"planted_faults_total": 4, "planted_faults_caught": 4})):
        write(t, name, json.dumps(rec))
    out = os.path.join(t, "rel.json")
    r = subprocess.run([sys.executable, SCRIPT, "--sanitize", s, "--fuzz", os.path.join(t, "fuzz.json"),
                        "--faults-ci", os.path.join(t, "ci.json"), "--faults-gpu", os.path.join(t, "gpu.json"),
                        "--out", out], capture_output=True, text=True)
    check(r.returncode == 0 and os.path.exists(out), "runs")
    if os.path.exists(out):
        sm = json.load(open(out))["summary"]
        check(sm["sanitizer_errors"] == 1, "our-kernel-error-counts")
        check(sm["sanitizer_errors_in_vendor_kernels"] == 1, "vendor-error-apart")
        check(sm["sanitizer_runs_complete"] == 2, "complete-runs")
        check(sorted(sm["sanitizer_incomplete"]) == ["01-a initcheck", "01-a synccheck"], "failed-and-timed-out-are-incomplete")
        check(sm["planted_faults_total"] == 12 and sm["planted_faults_caught"] == 11, "fault-totals")
        check(sm["fuzz_invocations"] == 1000 and sm["fuzz_crashes"] == 0, "fuzz-copied")
# --keep: the committed record of a raw log gives the counts the raw log gives.
with tempfile.TemporaryDirectory() as t:
    src, dst = os.path.join(t, "raw"), os.path.join(t, "kept")
    os.makedirs(src)
    write(src, "02-b.result", "02-b initcheck 99 3 5 2\n")
    write(src, "02-b.initcheck.txt", "========= Uninitialized __global__ memory read of size 4 bytes\n"
          "=========     at void cublasLt::splitKreduce_kernel<(int)32>(T1 *)+0x1a30\n"
          "=========     by thread (0,0,0) in block (0,0,0)\n"
          "=========     at void cublasLt::splitKreduce_kernel<(int)32>(T1 *)+0x1b40\n"
          "=========     at gemv_v1(const __half *, int)+0x70 in /x/gemv.cu:12\n"
          "========= ERROR SUMMARY: 3 errors\n")
    r = subprocess.run([sys.executable, SCRIPT, "--keep", src, dst], capture_output=True, text=True)
    counts = [subprocess.run([sys.executable, SCRIPT, "--count", os.path.join(d, "02-b.initcheck.txt")],
                             capture_output=True, text=True).stdout.split() for d in (src, dst)]
    kept = open(os.path.join(dst, "02-b.initcheck.txt")).read() if os.path.exists(os.path.join(dst, "02-b.initcheck.txt")) else ""
    check(r.returncode == 0 and counts[0] == ["3", "2"] and counts[1] == counts[0] and len(kept.splitlines()) == 3
          and os.path.exists(os.path.join(dst, "02-b.result")), "keep-preserves-counts")
print(f"reliability tests: {'0 failed' if not check.failed else str(check.failed) + ' failed'}")
check.exit()
