#!/usr/bin/env python3
"""Planted faults: deliberately broken variants of the experiments, each of which the right
check must catch. A fault is a textual patch of one experiment's source (or of a common
header), compiled into build/faults/<id>/ -- never part of a normal build.

  planted_faults.py ci    faults whose check needs no GPU (assembly rules, the size rule)
  planted_faults.py gpu   faults that need the GPU (NaN poison, ceiling, violations, timeout)

Each fault prints PASS (caught) or FAIL (missed), then 'planted faults caught: X of Y'.
Exit 0 when every fault of the mode was caught, 1 otherwise, 77 when none could run (no GPU).
"""
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(ROOT)
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
CLANG = shutil.which("clang++-19")
HIPCC = "/opt/rocm/bin/hipcc" if os.path.exists("/opt/rocm/bin/hipcc") else None

# id, description, mode, experiment source, file to patch, [(regex, replacement)], check
# check: ("asm", target, rules-regex-that-must-FAIL)  -- the asm rules must report a failure
#        ("unit", test-name)                          -- the host unit tests, built against the
#                                                        planted tree, must fail this test
#        ("run", args, expected_rc, stderr-regex)     -- the fault binary must fail this way
FAULTS = []


def fault(fid, desc, mode, exp, patches, check, patch_file=None):
    FAULTS.append(dict(id=fid, desc=desc, mode=mode, exp=exp, patches=patches, check=check,
                       patch_file=patch_file))


# 6. The working-set rule dropped (any size accepted): the host unit test that feeds it a
#    cache-resident working set (the H200's L2) must fail against the planted header.
fault("6-cache-resident-working-set", "the size rule accepting a working set that fits in the LLC", "ci",
      None, [(r"v\.ok = llc_bytes > 0 && v\.ratio \+ 1e-9 >= min_ratio;", "v.ok = llc_bytes > 0;")],
      ("unit", "working_set_rule_refuses_cache_resident"), patch_file="common/sizes.h")

# 7. Bytes miscounted (declared twice what moves): the achieved figure lands above the ceiling
#    and the run is rejected with exit 1.
fault("7-above-ceiling", "an achieved bandwidth above the ceiling is rejected (exit 1)", "gpu",
      "01-ceiling/ceiling",
      [(r"inline double stream_read_bytes\(size_t n_vec4\) \{ return 16\.0", "inline double stream_read_bytes(size_t n_vec4) { return 32.0")],
      ("run", ["--quick", "--family", "grid"], 1, r"above the measured ceiling"),
      patch_file="common/stream_read.h")

# Faults against the other experiments are registered in tests/faults_experiments.py when present.
if os.path.exists(os.path.join(ROOT, "tests", "faults_experiments.py")):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import faults_experiments  # noqa: E402
    faults_experiments.register(fault)


def make_tree(f):
    """A copy of the sources under build/faults/<id>/ with the patch applied; returns its root."""
    root = os.path.join("build", "faults", f["id"])
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    shutil.copytree("common", os.path.join(root, "common"))
    if f["exp"] is None:  # a fault in common/, checked by the host unit tests built against it
        os.makedirs(os.path.join(root, "tests"))
        shutil.copy("tests/unit_tests.cpp", os.path.join(root, "tests"))
    else:
        exp_dir = os.path.dirname(f["exp"])
        shutil.copytree(exp_dir, os.path.join(root, exp_dir), ignore=shutil.ignore_patterns(os.path.basename(f["exp"]), "*.s", "*.ptx", "*.resources"))
    for extra in ("03-dlops",):  # 04-reduce includes 03-dlops/clocks.h
        if os.path.isdir(extra) and not os.path.exists(os.path.join(root, extra)):
            shutil.copytree(extra, os.path.join(root, extra), ignore=shutil.ignore_patterns("dlops", "*.s", "*.ptx", "*.resources"))
    target = os.path.join(root, f["patch_file"] or f["exp"] + ".cu")
    text = open(target).read()
    for pat, rep in f["patches"]:
        new, n = re.subn(pat, rep, text)
        if n == 0:
            raise RuntimeError(f"patch /{pat}/ matched nothing in {target}: the fault no longer applies")
        text = new
    open(target, "w").write(text)
    return root


def compile_asm(root, f, target):
    src = os.path.join(root, f["exp"] + ".cu")
    out = os.path.join(root, f["exp"] + "." + target + ".s")
    if target == "ptx":
        cmd = [NVCC, "-O3", "-std=c++17", "-arch=compute_90", "-ptx", "-o", out, src]
    else:
        cc = HIPCC or CLANG
        if not cc:
            return None, "no gfx942 compiler (clang++-19 or ROCm)"
        cmd = [cc, "-x", "hip", "-O3", "-std=c++17", "--offload-arch=gfx942", "--cuda-device-only", "-S",
               "-Wno-unused-result", "-o", out, src] + ([] if HIPCC else ["-nogpulib"])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        return None, "fault variant does not compile: " + r.stderr.strip()[-400:]
    return out, ""


def compile_bin(root, f):
    src = os.path.join(root, f["exp"] + ".cu")
    out = os.path.join(root, f["exp"])
    libs = ["-lcublas", "-lcublasLt"] if "gemv" in f["exp"] else []
    cmd = [NVCC, "-O3", "-std=c++17", "-gencode=arch=compute_90,code=sm_90", "-o", out, src] + libs
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        return None, "fault variant does not compile: " + r.stderr.strip()[-400:]
    return out, ""


def run_fault(f, compile_only=False):
    """compile_only: plant and build (returns True, "" when ready); else check (reusing a build)."""
    kind = f["check"][0]
    if compile_only:
        if kind != "run":
            return run_fault(f)  # asm and unit checks are quick: do them whole here
        root = make_tree(f)
        binary, why = compile_bin(root, f)
        return (True, "") if binary else (False, why)
    if kind == "unit":
        # The unit tests built against the planted tree: the named test must now fail.
        root = make_tree(f)
        exe = os.path.join(root, "tests", "unit_tests")
        r = subprocess.run(["g++", "-std=c++17", "-O1", "-o", exe, exe + ".cpp"], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            return False, "fault variant does not compile: " + r.stderr.strip()[-400:]
        r = subprocess.run([exe, os.path.join(root, "u.json")], capture_output=True, text=True, timeout=120)
        name = f["check"][1]
        if f"FAIL unit:{name}" in r.stdout:
            return True, f"FAIL unit:{name}"
        return False, f"unit:{name} " + ("still passed" if f"PASS unit:{name}" in r.stdout else "did not run")
    root = os.path.join("build", "faults", f["id"])
    if kind == "asm":
        root = make_tree(f)
        _, target, must_fail = f["check"]
        asm, why = compile_asm(root, f, target)
        if not asm:
            return False, why
        # an experiment's asm.rules, or a probe's own NAME.rules beside it (NN-name/probes/)
        rules = f["exp"] + ".rules" if os.path.exists(f["exp"] + ".rules") else os.path.join(os.path.dirname(f["exp"]), "asm.rules")
        r = subprocess.run([sys.executable, "tests/asmcheck.py", "--target", target, "--rules", rules, "--asm", asm],
                           capture_output=True, text=True, timeout=300)
        fails = [ln for ln in r.stdout.splitlines() if ln.startswith("FAIL") and re.search(must_fail, ln)]
        return r.returncode == 1 and bool(fails), (fails[0] if fails else "no rule matching /%s/ failed" % must_fail)
    if kind == "run":
        _, args, rc_expected, err_re = f["check"]
        binary = os.path.join(root, f["exp"])
        if not os.path.exists(binary):
            binary, why = compile_bin(make_tree(f), f)
            if not binary:
                return False, why
        env = dict(os.environ, SUITE_RESULTS_ROOT=os.path.join(root, "results"))
        try:
            r = subprocess.run([binary] + args, capture_output=True, text=True, timeout=300, env=env)
        except subprocess.TimeoutExpired:
            return False, "hung past 300 s"
        if r.returncode == 77:
            return None, "no GPU"
        ok = r.returncode == rc_expected and re.search(err_re, r.stderr + r.stdout) is not None
        return ok, f"exit {r.returncode}: " + (r.stderr.strip().splitlines() or [""])[-1][:200]
    return False, "unknown check"


def gpu_usable():
    """After the faults: the GPU still runs and validates a normal kernel."""
    r = subprocess.run(["01-ceiling/ceiling", "--quick", "--family", "bulk"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, SUITE_RESULTS_ROOT="build/results-quick"))
    return r.returncode == 0, f"01-ceiling --quick --family bulk exit {r.returncode}"


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "ci"
    chosen = [f for f in FAULTS if f["mode"] == mode]
    caught = skipped = 0
    # Plant and compile every fault in parallel (nvcc is slow), then check them one by one.
    from concurrent.futures import ThreadPoolExecutor

    def prepare(f):
        try:
            return run_fault(f, compile_only=True)
        except Exception as e:  # noqa: BLE001
            return False, f"could not plant: {e}"
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        prepared = list(pool.map(prepare, chosen))
    for f, prep in zip(chosen, prepared):
        try:
            ok, why = run_fault(f) if (f["check"][0] == "run" and prep[0] is True) else prep
        except Exception as e:  # noqa: BLE001
            ok, why = False, f"could not plant: {e}"
        if ok is None:
            skipped += 1
            print(f"SKIP fault {f['id']}: {why}")
            continue
        caught += bool(ok)
        print(f"{'PASS' if ok else 'FAIL'} fault {f['id']} ({f['desc']}): {'caught' if ok else 'MISSED'}: {why}")
    if chosen and skipped == len(chosen):
        # Nothing was planted and run (no GPU): a skip, never "caught 0 of 0".
        print(f"planted faults: skipped: {skipped} of {len(chosen)} need a GPU")
        return 77
    if mode == "gpu" and chosen and os.path.exists("01-ceiling/ceiling"):
        ok, why = gpu_usable()
        print(f"{'PASS' if ok else 'FAIL'} GPU usable after the faults: {why}")
        if not ok:
            caught -= 1
    total = len(chosen) - skipped
    print(f"planted faults caught: {caught} of {total}" + (f" ({skipped} skipped: no GPU)" if skipped else ""))
    os.makedirs("build", exist_ok=True)
    json.dump({"mode": mode, "planted_faults_total": total, "planted_faults_caught": caught,
               "faults": [f["id"] for f in chosen]}, open(f"build/faults_{mode}.json", "w"), indent=2)
    return 0 if caught == total else 1


if __name__ == "__main__":
    sys.exit(main())
