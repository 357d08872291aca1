#!/usr/bin/env python3
"""results/<gpu>/reliability.json: what the suite's checks caught, from the records of real runs.

Usage: reliability.py --count LOG   (the errors a log reports and how many are located in the
vendor library's kernels: what scripts/sanitize.sh records), or
       reliability.py --keep SRC DST   (the record to commit: SRC's .result files, and each
of its logs cut to its summary lines, the program's own errors and one "COUNT ========= at
KERNEL" line per kernel the reports point at; --count reads the same counts from either), or:
Inputs (all written by runs, none typed):
  --sanitize DIR [DIR ...]  sanitizer records, oldest first: each DIR holds <exp>.result lines
                            ("exp tool exit errors seconds [vendor]") and <exp>.<tool>.txt (the
                            summary lines and the kernels named in the reports, as kept from the
                            run's log). A later DIR's record of an (experiment, tool) replaces an
                            earlier one.
  --fuzz build/fuzz.json    make test's flag fuzzing
  --faults-ci build/faults_ci.json     make test's planted faults (no GPU)
  --faults-gpu FILE         make check's planted faults on the GPU (build/faults_gpu.json), or
                            a JSON record {"planted_faults_total", "planted_faults_caught", "source"}
A run counts as complete when the tool printed its summary and the program itself did not fail
(a timeout, a spin that timed out under instrumentation, a failed check): only complete runs
count towards sanitizer_errors. Reports located inside the vendor library's kernels (cuBLAS's
nvjet / cublasLt / cutlass) are counted apart, and so are reports the tool did not print.
"""
import argparse
import json
import os
import re
import sys

VENDOR = re.compile(r"(nvjet|cublasLt::|cublas|cutlass|xmma|gemv2|gemvx)")
EXPECTED_TOOLS = ["memcheck", "racecheck", "synccheck", "initcheck"]


def read_run(d, exp, tool, rc, secs):
    path = os.path.join(d, f"{exp}.{tool}.txt")
    r = parse_log(open(path).read() if os.path.exists(path) else "", rc)
    r.update({"experiment": exp, "tool": tool, "seconds": secs})
    return r


def parse_log(text, rc):
    """One sanitizer run's log (raw, or the kept summary lines) and the tool's exit code: the
    counts and the verdict. scripts/sanitize.sh asks for the counts through --count."""
    m = re.search(r"ERROR SUMMARY: (\d+) errors?\s*$", text, re.M) or re.search(r"RACECHECK SUMMARY: .*\((\d+) errors", text)
    errors = int(m.group(1)) if m else None
    unprinted = re.search(r"ERROR SUMMARY: (\d+) errors were not printed", text)
    unprinted = int(unprinted.group(1)) if unprinted else 0
    # Where each printed report points: kept summaries hold "COUNT ========= at KERNEL" lines
    # (uniq -c of the log); a raw log holds one "========= at KERNEL" line per report.
    loc = r"=========\s+(?:at |Error: Race reported between \w+ access at )(.*)$"
    located = [(int(n), w) for n, w in re.findall(r"^\s*(\d+) " + loc, text, re.M)]
    if not located:
        located = [(1, w) for w in re.findall(r"^" + loc, text, re.M)]
    vendor = sum(n for n, w in located if VENDOR.search(w))
    ours_printed = sum(n for n, w in located if not VENDOR.search(w))
    program_error = next(iter(re.findall(r"^error: (.*)$", text, re.M)), None)  # the program's own failure
    # --error-exitcode 99: any report exits 99; the program's own failures exit 1, a timeout 124
    # compute-sanitizer says "Target application returned an error" only when the program
    # itself exited non-zero (a report alone makes the tool, not the program, exit 99).
    failed = program_error is not None or "Target application returned an error" in text
    complete = errors is not None and rc in (0, 99) and not failed
    return {"exit": rc, "complete": complete,
            "errors_reported": errors, "errors_in_vendor_kernels": vendor, "errors_unprinted": unprinted,
            "errors_in_our_kernels": (errors - vendor - unprinted) if errors is not None else None,
            "program_error": program_error}


KEEP_LINE = re.compile(r"ERROR SUMMARY|RACECHECK SUMMARY|^error: |Target application returned an error")


def keep_log(text):
    """A raw sanitizer log cut to what parse_log reads: the same counts, a few lines long."""
    out = [l for l in text.splitlines() if KEEP_LINE.search(l)]
    where = {}
    for m in re.finditer(r"^(=========\s+(?:at |Error: Race reported between \w+ access at ))(.*)$", text, re.M):
        w = re.sub(r"\+0x[0-9a-fA-F]+.*$|\s+in\s+\S+$", "", m.group(2)).rstrip()
        key = "========= " + m.group(1).split("=========", 1)[1].strip() + " " + w
        where[key] = where.get(key, 0) + 1
    out += [f"{n:7d} {k}" for k, n in sorted(where.items())]
    return "\n".join(out) + "\n"


def keep(src, dst):
    os.makedirs(dst, exist_ok=True)
    for f in sorted(os.listdir(src)):
        if f.endswith(".result"):
            with open(os.path.join(src, f)) as i, open(os.path.join(dst, f), "w") as o:
                o.write(i.read())
        elif f.endswith(".txt") and f.count(".") == 2:  # <exp>.<tool>.txt
            with open(os.path.join(src, f), errors="replace") as i, open(os.path.join(dst, f), "w") as o:
                o.write(keep_log(i.read()))
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--keep":
        return keep(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "--count":  # "ERRORS VENDOR" of one log; -1: no summary
        r = parse_log(open(sys.argv[2], errors="replace").read(), 0)
        print(r["errors_reported"] if r["errors_reported"] is not None else -1, r["errors_in_vendor_kernels"])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--sanitize", nargs="*", default=[])
    ap.add_argument("--labels", nargs="*", default=[], help="one label per --sanitize DIR (when and at which commit)")
    ap.add_argument("--fuzz", required=True)
    ap.add_argument("--faults-ci", required=True)
    ap.add_argument("--faults-gpu", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    runs = {}
    for i, d in enumerate(a.sanitize):
        for f in sorted(os.listdir(d)):
            if not f.endswith(".result"):
                continue
            for line in open(os.path.join(d, f)):
                p = line.split()
                if len(p) < 5:
                    continue
                r = read_run(d, p[0], p[1], int(p[2]), int(p[4]))
                r["record"] = a.labels[i] if i < len(a.labels) else d
                runs[(p[0], p[1])] = r
    exps = sorted({e for e, _ in runs})
    missing = [f"{e} {t}" for e in exps for t in EXPECTED_TOOLS if (e, t) not in runs]
    done = [r for r in runs.values() if r["complete"]]
    incomplete = [f"{r['experiment']} {r['tool']}" for r in runs.values() if not r["complete"]] + missing
    fuzz, fci, fgpu = (json.load(open(x)) for x in (a.fuzz, a.faults_ci, a.faults_gpu))
    total = fci["planted_faults_total"] + fgpu["planted_faults_total"]
    caught = fci["planted_faults_caught"] + fgpu["planted_faults_caught"]
    summary = {
        "planted_faults_total": total,
        "planted_faults_caught": caught,
        "sanitizer_errors": sum(r["errors_in_our_kernels"] for r in done),
        "fuzz_invocations": fuzz["fuzz_invocations"],
        "fuzz_crashes": fuzz["fuzz_crashes"],
        "sanitizer_runs_expected": len(exps) * len(EXPECTED_TOOLS),
        "sanitizer_runs_complete": len(done),
        "sanitizer_incomplete": sorted(incomplete),
        "sanitizer_errors_in_vendor_kernels": sum(r["errors_in_vendor_kernels"] for r in done),
        "sanitizer_errors_unprinted": sum(r["errors_unprinted"] for r in done),
        "planted_faults_ci": f"{fci['planted_faults_caught']} of {fci['planted_faults_total']}",
        "planted_faults_gpu": f"{fgpu['planted_faults_caught']} of {fgpu['planted_faults_total']}",
        "planted_faults_gpu_source": fgpu.get("source", a.faults_gpu),
    }
    doc = {"schema": 1, "experiment": "reliability", "summary": summary,
           "sanitizer_runs": sorted(runs.values(), key=lambda r: (r["experiment"], r["tool"])),
           "planted_faults_ci": fci.get("faults", []), "fuzz": fuzz}
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
