#!/usr/bin/env python3
"""make test: everything that needs no GPU. Ends with the line 'N passed, N failed'.

  1. host unit tests of the harness (g++), and the JSON they write parses
  2. every experiment builds for sm_90 and sm_80 (nvcc) and its device code for gfx942
     (ROCm, or Debian clang++-19 with libamdhip64-dev); the probes (NN-name/probes/) for sm_90
  3. the assembly rules of each experiment (NN-name/asm.rules): PTX and ptxas resources
     of the sm_90 build, AMDGCN of the gfx942 build
  4. the binary contract without a GPU: no GPU -> 77 with one line, --help -> 0,
     --list -> 0, bad flags -> 2 with a message
  5. flag fuzzing: >= 1000 malformed invocations, each exit 2 with a message, none a crash
     or a hang
  6. planted faults that need no GPU (tests/planted_faults.py), when present
  7. the scripts' own tests: budget, reliability, counters, compare (06's time beyond the floor, card against card), same_code (per-kernel machine code
     compared across a change, nvcc only), asmcheck (its SASS flavour on a hand-written listing),
     and device_session.sh's modes (documented, listed, an unknown one exits 2, h200 elsewhere exits 3),
     run_all.sh's handling of a failed experiment (its earlier JSON removed, the run failed);
     and every relative link of README.md and the results pages resolves
"""
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(ROOT)
EXPERIMENTS = ["01-ceiling/ceiling", "02-gemv/gemv", "03-dlops/dlops", "04-reduce/reduce", "05-sync/sync", "06-decode/decode"]
EXPS = [e for e in EXPERIMENTS if os.path.exists(e + ".cu")]
JOBS = str(max(2, os.cpu_count() or 2))
results = {"passed": 0, "failed": 0, "skipped": 0}


def report(ok, name, detail=""):
    key = "passed" if ok else "failed"
    results[key] += 1
    print(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {detail}" if detail else ""), flush=True)
    return ok


def skip(name, why):
    results["skipped"] += 1
    print(f"SKIP {name}: {why}", flush=True)


def sh(cmd, timeout=1800, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, timeout=timeout, **kw)


def tail(s, n=15):
    return "\n".join(s.strip().splitlines()[-n:])


def unit_tests():
    r = sh(["g++", "-std=c++17", "-O1", "-Wall", "-Werror", "-o", "tests/unit_tests", "tests/unit_tests.cpp"])
    if not report(r.returncode == 0, "unit tests compile", tail(r.stderr)):
        return
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "u.json")
        r = sh(["tests/unit_tests", path], timeout=60)
        for line in r.stdout.splitlines():
            m = re.match(r"(PASS|FAIL) (unit:\S+)", line)
            if m:
                report(m.group(1) == "PASS", m.group(2))
            elif line.startswith("    "):
                print(line)
        try:
            doc = json.load(open(path))
            ok = doc["rows"][0]["name"] == 'q"uo\\te\n' and doc["rows"][0]["bad"] is None
            report(ok, "unit:json_output_parses", "escaped string and NaN->null round-trip")
        except Exception as e:  # noqa: BLE001
            report(False, "unit:json_output_parses", str(e))


def build(arch, prefix):
    args = ["make", "-j", JOBS, f"ARCH={arch}"] + ([f"O={prefix}"] if prefix else []) + ["all"]
    r = sh(args, timeout=3000)
    ok = r.returncode == 0
    report(ok, f"build {arch}", "" if ok else tail(r.stdout + r.stderr, 30))
    return ok


def build_probes():
    """The probes beside the experiments (not in make): they must still build, by the command in
    their header, and their PTX must hold what each measures (NN-name/probes/NAME.rules, beside
    the source; a probe without one fails), with ptxas's report for the res rules."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    for src in sorted(glob.glob("0*/probes/*.cu")):
        name = os.path.splitext(os.path.basename(src))[0]
        out = os.path.join("build", "probes", name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        r = sh([nvcc, "-O3", "-std=c++17", "-arch=sm_90", "-Xptxas", "-v", "-o", out, src], timeout=600)
        report(r.returncode == 0, f"build probe {src}", "" if r.returncode == 0 else tail(r.stderr))
        with open(out + ".resources", "w") as f:
            f.write(r.stderr)
        rules = os.path.splitext(src)[0] + ".rules"
        if not os.path.exists(rules):
            report(False, f"asm ptx probe {src}", f"no {rules} beside the probe")
            continue
        p = sh([nvcc, "-O3", "-std=c++17", "-arch=compute_90", "-ptx", "-o", out + ".ptx", src], timeout=600)
        if p.returncode != 0:
            report(False, f"asm ptx probe {src}", tail(p.stderr))
            continue
        asmcheck(f"asm ptx probe {src}", ["--target", "ptx", "--rules", rules, "--asm", out + ".ptx",
                                          "--res", out + ".resources", "--tag", name])


def asmcheck(label, args):
    """tests/asmcheck.py with args, reported as one check: its summary, and its first FAIL lines."""
    r = sh([sys.executable, "tests/asmcheck.py"] + args, timeout=300)
    fails = [ln for ln in r.stdout.splitlines() if ln.startswith("FAIL")]
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()
    report(r.returncode == 0, label, summary.split(": ", 1)[-1] + ("\n  " + "\n  ".join(fails[:20]) if fails else ""))


def asm_checks(target, prefix, exps):
    for e in exps:
        rules = os.path.join(os.path.dirname(e), "asm.rules")
        asm = prefix + e + ".s"
        if not os.path.exists(rules):
            report(False, f"asm {target} {e}", "no asm.rules next to the experiment")
            continue
        if not os.path.exists(asm):
            report(False, f"asm {target} {e}", f"{asm} was not built")
            continue
        args = ["--target", target, "--rules", rules, "--asm", asm, "--tag", e]
        if target == "ptx":  # ptxas's report for the res rules; asmcheck fails if it is missing
            args += ["--res", prefix + e + ".resources"]
        asmcheck(f"asm {target} {e}", args)


def stamp():
    """The Makefile's provenance stamp: in a git checkout, git decides (a changed tracked file is
    dirty); with SUITE_STAMP_FROM_FILES=1 (scripts/device_session.sh), .git-commit and .git-dirty
    decide even when .git holds that commit."""
    with tempfile.TemporaryDirectory() as d:
        g = ["git", "-C", d, "-c", "user.name=t", "-c", "user.email=t@t"]
        with open(os.path.join(d, "a.txt"), "w") as f:
            f.write("a\n")
        for cmd in (["init", "-q"], ["add", "a.txt"], ["commit", "-q", "-m", "a"]):
            r = sh(g + cmd)
            if r.returncode != 0:  # the scratch repo's set-up: a failure only, never counted as a pass
                report(False, f"stamp: git {cmd[0]}", tail(r.stderr))
                return
        rev = sh(g + ["rev-parse", "--short=12", "HEAD"]).stdout.strip()
        for name, text in ((".git-commit", rev + "\n"), (".git-dirty", "0\n"), ("a.txt", "changed\n")):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        probe = ["make", "-s", "-C", d, "-f", os.path.join(ROOT, "Makefile"), "--eval",
                 "suite-stamp: ; @echo $(GIT_COMMIT) $(GIT_DIRTY)", "suite-stamp"]
        env = {k: v for k, v in os.environ.items() if k != "SUITE_STAMP_FROM_FILES"}
        for flag, want, what in (("", f"{rev} 1", "git decides: a changed tracked file is dirty"),
                                 ("1", f"{rev} 0", "SUITE_STAMP_FROM_FILES=1: .git-commit and .git-dirty decide")):
            r = sh(probe, env=dict(env, SUITE_STAMP_FROM_FILES=flag) if flag else env)
            got = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()[-200:]
            report(got == want, f"stamp: {what}", f"got '{got}', want '{want}'")


def gpu_present():
    return shutil.which("nvidia-smi") is not None and sh("nvidia-smi -L", timeout=30).returncode == 0


def contract(exps):
    for e in exps:
        if not os.path.exists(e):
            report(False, f"contract {e}", "binary not built")
            continue
        if gpu_present():
            skip(f"contract {e}: no GPU -> 77", "a GPU is present here")
        else:
            r = sh([e], timeout=60)
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            report(r.returncode == 77 and len(lines) == 1 and "skipped" in lines[0],
                   f"contract {e}: no GPU -> exit 77, one line", f"exit {r.returncode}: {r.stderr.strip()[:200]}")
        r = sh([e, "--help"], timeout=60)
        report(r.returncode == 0 and "--quick" in r.stdout and "--json" in r.stdout, f"contract {e}: --help -> 0")
        r = sh([e, "--list"], timeout=60)
        report(r.returncode == 0 and len(r.stdout.splitlines()) > 1, f"contract {e}: --list -> 0", f"exit {r.returncode}")
        # Each configuration it would run, named by what runs (its grid), once: a configuration
        # listed twice is timed twice (01's launch-size family was, until bd9bc3c).
        lines = [ln for ln in r.stdout.splitlines() if ln.strip() and not ln.startswith("#")]
        dups = sorted({ln for ln in lines if lines.count(ln) > 1})
        report(r.returncode == 0 and not dups, f"contract {e}: --list names each configuration once",
               f"{len(dups)} listed twice" + (f", e.g. {dups[0][:120]}" if dups else ""))
        for bad in (["--bogus"], ["--device", "x"], ["--device", "-1"], ["--json"], ["stray"], ["--quick=yes"],
                    ["--json", "/nonexistent-folder/out.json"]):
            r = sh([e] + bad, timeout=60)
            report(r.returncode == 2 and r.stderr.strip() != "", f"contract {e} {' '.join(bad)} -> 2",
                   f"exit {r.returncode}: {r.stderr.strip()[:160]}")


def fuzz(exps, total=1000, seed=None):
    """Random malformed command lines: each must end with exit 2 and a message."""
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    # Integer flags: every junk value below is malformed or out of range for them.
    numeric = ["--device", "--bytes"]
    junk_values = ["", "-1", "-99999999999999999999", "1e999", "nan", "0x10", "abc", "12abc", "9" * 40,
                   "1G1", "--", "-", " ", "\t", "%s%n", "\u00e9", "4096x", "x4096", "5000000000000G"]
    binaries = [e for e in exps if os.path.exists(e)]
    if not binaries:
        report(False, "fuzz flags", "no binaries")
        return
    crashes, wrong, hangs, n = 0, 0, 0, 0
    examples = []
    for i in range(total):
        b = binaries[i % len(binaries)]
        args = []
        for _ in range(rng.randint(0, 3)):  # some possibly valid flags first
            args.append(rng.choice(["--quick", "--list"]))
        kind = rng.randrange(6)
        if kind == 0:
            args.append("--" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz-_=") for _ in range(rng.randint(1, 12))))
        elif kind == 1:
            args += ["--device", rng.choice(junk_values + ["1024", "5000", "7", "63"])]
        elif kind == 2:
            args.append(rng.choice(numeric) + "=" + rng.choice(junk_values))
        elif kind == 3:
            args.append(rng.choice(junk_values[1:]) or "x")
        elif kind == 4:
            args += ["--json"]  # missing value at the end
        else:
            f = rng.choice(["--quick", "--list"])
            args += [f, f]  # repeated
        args = [a for a in args if a is not None]
        if kind == 1 and args[-1] in ("7", "63", "5000", "1024") and gpu_present():
            continue  # a device index that may exist on a GPU machine
        n += 1
        try:
            r = subprocess.run([b] + args, capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            hangs += 1
            examples.append(f"hang: {b} {args}")
            continue
        if r.returncode < 0 or r.returncode > 128:
            crashes += 1
            examples.append(f"crash {r.returncode}: {b} {args}")
        elif r.returncode != 2 or not r.stderr.strip():
            wrong += 1
            examples.append(f"exit {r.returncode}: {b} {args!r}: {r.stderr.strip()[:100]}")
    ok = crashes == 0 and wrong == 0 and hangs == 0 and n >= total * 0.9
    os.makedirs("build", exist_ok=True)
    json.dump({"fuzz_invocations": n, "fuzz_crashes": crashes + hangs, "fuzz_wrong_exit": wrong, "seed": seed},
              open("build/fuzz.json", "w"), indent=2)
    report(ok, f"fuzz flags: {n} malformed invocations (seed {seed})",
           f"{crashes} crashes, {hangs} hangs, {wrong} other exits" + ("\n  " + "\n  ".join(examples[:10]) if examples else ""))


def relay(cmd, name_re, what, timeout):
    """Runs a sub-suite that prints PASS/FAIL/SKIP lines and counts each line as a test here. A
    sub-suite that exits non-zero without a FAIL line (a crash: Python exits 1 on an uncaught
    exception too) or prints no test line at all is one FAIL more: tests that never ran are not
    passes."""
    r = sh(cmd, timeout=timeout)
    seen = failed = 0
    for line in r.stdout.splitlines():
        m = re.match(r"(PASS|FAIL|SKIP) (" + name_re + ")", line)
        if m and m.group(1) == "SKIP":
            skip(m.group(2).rstrip(":"), line.split(": ", 1)[-1])
        elif m:
            report(m.group(1) == "PASS", m.group(2))
        seen += bool(m)
        failed += bool(m) and m.group(1) == "FAIL"
    if r.returncode != 0 and not failed:
        report(False, what, f"exit {r.returncode} with no FAIL line (crashed?)\n" + tail(r.stderr))
    elif seen == 0:
        report(False, what, "no PASS, FAIL or SKIP line printed\n" + tail(r.stdout + r.stderr))


def device_session():
    """scripts/device_session.sh, the lead's script for the lent GPU: it parses, every mode its case
    handles is documented in its header and named by its unknown-mode message (and nothing else
    is), an unknown mode exits 2, and the h200 mode exits 3 at once where no H200 is seen."""
    path = "scripts/device_session.sh"
    text = open(path).read()
    report(sh(["bash", "-n", path]).returncode == 0, "device_session: parses (bash -n)")
    cases = set()
    for m in re.finditer(r"^  ([a-z0-9|-]+)\)$", text, re.M):
        cases.update(m.group(1).split("|"))
    documented = set(re.findall(r"^#\s+bash scripts/device_session\.sh (\S+) OUT", text, re.M))
    msg = re.search(r"unknown mode \$mode \(([^)]*)\)", text)
    listed = set(x.strip() for x in msg.group(1).split(",")) if msg else set()
    ok = bool(cases) and documented == cases
    report(ok, "device_session: every mode documented in its header",
           "" if ok else f"undocumented {sorted(cases - documented)}, no such mode {sorted(documented - cases)}")
    ok = bool(cases) and listed == cases
    report(ok, "device_session: every mode named by the unknown-mode message",
           "" if ok else f"missing {sorted(cases - listed)}, no such mode {sorted(listed - cases)}")
    with tempfile.TemporaryDirectory() as d:
        r = sh(["bash", path, "no-such-mode", d], timeout=60)
        ok = r.returncode == 2 and "unknown mode" in r.stderr
        report(ok, "device_session: an unknown mode exits 2", "" if ok else f"exit {r.returncode}: {tail(r.stderr, 2)}")
        # a stand-in nvidia-smi that names an H100 first on PATH, so the check is the same on any machine
        fake = os.path.join(d, "bin")
        os.mkdir(fake)
        with open(os.path.join(fake, "nvidia-smi"), "w") as f:
            f.write("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3'\n")
        os.chmod(os.path.join(fake, "nvidia-smi"), 0o755)
        out = os.path.join(d, "out")
        r = sh(["bash", path, "h200", out], timeout=60, env=dict(os.environ, PATH=fake + os.pathsep + os.environ["PATH"]))
        ok = r.returncode == 3 and os.path.isdir(out) and not os.listdir(out)
        report(ok, "device_session: h200 on an H100 exits 3 and runs nothing",
               "" if ok else f"exit {r.returncode}: {tail(r.stdout + r.stderr, 2)}")
    # the workingset mode's summary: the fastest chained rows of a committed 02 JSON, fastest first
    ref = "results/h100-80gb-hbm3/run-28c313b/02-gemv.json"
    r = sh([sys.executable, "scripts/chained_top.py", ref, "3"], timeout=60)
    rates = [float(m) for m in re.findall(r"([0-9.]+) GB/s", r.stdout)]
    ok = r.returncode == 0 and len(rates) == 3 and rates == sorted(rates, reverse=True)
    report(ok, "device_session: chained_top.py lists a run's fastest chained rows, fastest first",
           "" if ok else f"exit {r.returncode}: {tail(r.stdout + r.stderr, 3)}")


def gemv_rotation():
    """02's rotation of weight copies (b26188c): 20x the L2 by default, the issue's 4x with
    --working-set 4, less than 4x refused. Read from --list, which names the copies per shape."""
    e = "02-gemv/gemv"
    if not os.path.exists(e):
        report(False, "02-gemv rotation", "binary not built")
        return

    def listed(extra):  # --list's nominal L2 in MB (None with a GPU present) and 4096x4096's copies
        r = sh([e, "--list"] + extra, timeout=60)
        l2 = re.search(r"with ([0-9.]+) MB L2", r.stdout)
        c = re.search(r"^4096x4096: \d+ hand-written configurations, (\d+) weight copies", r.stdout, re.M)
        return r, float(l2.group(1)) * 1e6 if l2 else None, int(c.group(1)) if c else None

    for extra, lo, hi, what in (([], 19.5, 21.5, "the default rotation is 20x the L2"),
                                (["--working-set", "4"], 3.9, 5.0, "--working-set 4 gives the rule's 4x")):
        r, l2, copies = listed(extra)
        if r.returncode == 0 and copies and l2 is None:
            skip(f"02-gemv: {what}", "a GPU is present: --list prints no nominal L2 to hold the copies to")
            continue
        x = copies * 2 * 4096 * 4096 / l2 if copies and l2 else None
        report(r.returncode == 0 and x is not None and lo <= x <= hi, f"02-gemv: {what}",
               f"{copies} copies of 4096x4096, {x:.1f}x" if x is not None else f"exit {r.returncode}: {tail(r.stdout + r.stderr, 2)}")
    r = sh([e, "--list", "--working-set", "3"], timeout=60)
    report(r.returncode == 2 and "out of range" in r.stderr, "02-gemv: a rotation under the rule's 4x is refused (exit 2)",
           f"exit {r.returncode}: {r.stderr.strip()[:160]}")


def run_all_stale():
    """scripts/run_all.sh (make run) with stand-in experiments: the second fails, and the JSON an
    earlier run left for it must be gone, so that the report cannot take it for this run's."""
    with tempfile.TemporaryDirectory() as d:
        res = os.path.join(d, "res")
        os.mkdir(res)
        stale = os.path.join(res, "02-gemv.json")
        with open(stale, "w") as f:
            f.write('{"schema": 1, "experiment": "02-gemv", "summary": {"stale": true}}')
        exps = []
        for name, body in (("01-ceiling", 'echo \'{"schema": 1, "experiment": "01-ceiling", "provenance": {}, '
                                          '"rows": [], "summary": {"ceiling_gbps": 100}}\' > "$2"; exit 0'),
                           ("02-gemv", "echo 'error: a stand-in failure' >&2; exit 1")):
            os.mkdir(os.path.join(d, name))
            path = os.path.join(d, name, "bin")
            with open(path, "w") as f:
                f.write(f'#!/bin/sh\n[ "$1" = --print-results-dir ] && {{ echo {res}; exit 0; }}\n{body}\n')
            os.chmod(path, 0o755)
            exps.append(path)
        r = sh(["bash", "scripts/run_all.sh"] + exps, timeout=120)
        ok = (r.returncode != 0 and not os.path.exists(stale) and "run_all: 02-gemv exited 1" in r.stderr
              and os.path.exists(os.path.join(res, "01-ceiling.json")))
        report(ok, "run_all: a failed experiment leaves no earlier JSON behind, and the run fails",
               "" if ok else f"exit {r.returncode}, stale JSON {'still there' if os.path.exists(stale) else 'gone'}: "
               f"{tail(r.stderr, 3)}")


def page_links():
    """Every relative link of README.md and the results pages (run directories' READMEs and
    reports included) names a file or directory that exists: a figure's raw output, command or
    plot that a page points to must be in the tree."""
    pages = ["README.md"] + sorted(glob.glob("results/**/*.md", recursive=True))
    n, broken = 0, []
    for page in pages:
        for m in re.finditer(r"\]\(([^)\s]+)\)", open(page).read()):
            target = m.group(1).split("#")[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            n += 1
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(page), target))):
                broken.append(f"{page} -> {m.group(1)}")
    report(n > 0 and not broken, f"page links: every relative link resolves ({n} in {len(pages)} pages)",
           "; ".join(broken[:8]) + (f" (and {len(broken) - 8} more)" if len(broken) > 8 else ""))


def readme_answers():
    """README's answers table is what scripts/answers.py reads from results/h200's JSON; it fails
    when a committed figure changes and the README does not (a copy of the directory with one
    summary value moved), and a key a run lacks reads 'not in this run', not a number."""
    r = sh([sys.executable, "scripts/answers.py", "results/h200", "--check", "README.md"], timeout=60)
    report(r.returncode == 0, "README: the answers table matches results/h200's JSON", tail(r.stderr, 3))
    with tempfile.TemporaryDirectory() as d:
        res = os.path.join(d, "results", "h200")
        os.makedirs(res)
        for f in glob.glob("results/h200/*.json"):  # the table reads only the run's JSON
            shutil.copy(f, res)
        doc = json.load(open(os.path.join(res, "05-sync.json")))
        doc["summary"]["pdl_boundary_us"] = doc["summary"]["pdl_boundary_us"] + 0.25
        del doc["summary"]["stream_boundary_us"]
        json.dump(doc, open(os.path.join(res, "05-sync.json"), "w"))
        readme = os.path.join(d, "README.md")
        shutil.copy("README.md", readme)
        moved = sh([sys.executable, os.path.abspath("scripts/answers.py"), "results/h200", "--check", readme], timeout=60, cwd=d)
        sh([sys.executable, os.path.abspath("scripts/answers.py"), "results/h200", "--readme", readme], timeout=60, cwd=d)
        text = open(readme).read()
        ok = moved.returncode == 1 and "not in this run" in text and "rewrite it with" in moved.stderr
        report(ok, "README: the answers check fails on a moved figure, and a missing key is said so",
               f"--check exit {moved.returncode}; 'not in this run' {'present' if 'not in this run' in text else 'absent'}")


def phase(name, fn, *args):
    """One step of main; a hang (timeout) or a crash in it is a FAIL, and the run goes on to
    the summary line."""
    try:
        return fn(*args)
    except subprocess.TimeoutExpired as e:
        report(False, name, f"timed out after {e.timeout} s: {e.cmd if isinstance(e.cmd, str) else ' '.join(map(str, e.cmd))}")
    except Exception as e:  # noqa: BLE001
        report(False, name, f"{type(e).__name__}: {e}")
    return None


def main():
    print(f"make test: experiments present: {' '.join(EXPS)}", flush=True)
    phase("unit tests", unit_tests)
    phase("provenance stamp", stamp)
    phase("device session script", device_session)
    phase("run_all stale results", run_all_stale)
    phase("page links", page_links)
    phase("README answers", readme_answers)
    sm90 = phase("build sm_90", build, "sm_90", "")
    phase("build sm_80", build, "sm_80", "build/sm_80/")
    have_gfx = shutil.which("clang++-19") or os.path.exists("/opt/rocm/bin/hipcc")
    gfx = phase("build gfx942", build, "gfx942", "build/gfx942/") if have_gfx else report(False, "build gfx942", "neither ROCm nor clang++-19 found (.ci/run installs clang-19 and libamdhip64-dev)")
    if sm90:
        phase("build probes", build_probes)
        phase("asm ptx", asm_checks, "ptx", "", EXPS)
    if gfx:
        phase("asm gfx942", asm_checks, "gfx942", "build/gfx942/", EXPS)
    if sm90:
        phase("contract", contract, EXPS)
        phase("02-gemv rotation", gemv_rotation)
        phase("fuzz", fuzz, EXPS)
    for suite, name_re, what, timeout in [("tests/test_budget.py", r"budget:\S+", "budget tests ran", 120),
                                          ("tests/test_reliability.py", r"reliability:\S+", "reliability tests ran", 120),
                                          ("tests/test_counters.py", r"counters:\S+", "counters tests ran", 120),
                                          ("tests/test_compare.py", r"compare:\S+", "compare tests ran", 120),
                                          ("tests/test_same_code.py", r"same_code:\S+", "same_code tests ran", 600),
                                          ("tests/test_asmcheck.py", r"asmcheck:\S+", "asmcheck tests ran", 300)]:
        phase(what, relay, [sys.executable, suite], name_re, what, timeout)
    if os.path.exists("tests/planted_faults.py"):
        phase("planted faults runner", relay, [sys.executable, "tests/planted_faults.py", "ci"], r".*", "planted faults runner", 3000)
    line = f"{results['passed']} passed, {results['failed']} failed"
    if results["skipped"]:
        line += f", {results['skipped']} skipped"
    print(line)
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
