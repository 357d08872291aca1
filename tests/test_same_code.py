#!/usr/bin/env python3
"""scripts/same_code.py on kernels built here: a moved comment keeps every kernel's code, a
changed constant changes exactly one kernel's, a kernel added shows as one side only; the
revision mode builds two commits of a throwaway git repository. Needs nvcc (no GPU); without
it each test skips loudly."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "same_code.py")
fails = 0

BASE = """// kernels for the same_code test
__global__ void scale(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
__global__ void add(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
"""
MOVED = "// a comment that moves every line below\n\n" + BASE.replace("int n) {", "int n) {  // n: elements")
CHANGED = BASE.replace("y[i] += x[i]", "y[i] += 2.f * x[i]")
ADDED = BASE + "__global__ void zero(float* y) { y[threadIdx.x] = 0.f; }\n"


def check(name, cond, detail=""):
    global fails
    print(f"{'PASS' if cond else 'FAIL'} same_code:{name}" + (f" ({detail})" if detail and not cond else ""), flush=True)
    fails += not cond


def run(args, cwd=None):
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, cwd=cwd, timeout=600)


def main():
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    names = ["comment_moved_is_same", "one_kernel_changed", "kernel_added", "not_an_elf_exits_2",
             "revisions_same", "revisions_differ"]
    if not os.path.exists(nvcc):
        for n in names:
            print(f"SKIP same_code:{n}: nvcc not found", flush=True)
        return 0
    with tempfile.TemporaryDirectory() as d:
        def cubin(name, src):
            cu = os.path.join(d, name + ".cu")
            open(cu, "w").write(src)
            out = os.path.join(d, name + ".cubin")
            r = subprocess.run([nvcc, "-O3", "-lineinfo", "-arch=sm_90", "-cubin", "-o", out, cu], capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stderr)
            return out
        base, moved, changed, added = (cubin(n, s) for n, s in
                                       [("base", BASE), ("moved", MOVED), ("changed", CHANGED), ("added", ADDED)])
        r = run([base, moved])
        check(names[0], r.returncode == 0 and "2 kernels identical, 0 differ" in r.stdout, r.stdout + r.stderr)
        r = run([base, changed])
        diffs = [l for l in r.stdout.splitlines() if l.startswith("DIFF ")]
        check(names[1], r.returncode == 1 and len(diffs) == 1 and "add" in diffs[0] and "scale" not in diffs[0]
              and "1 kernels identical, 1 differ" in r.stdout, r.stdout + r.stderr)
        r = run([base, added])
        check(names[2], r.returncode == 1 and "zero" in r.stdout and "only in" in r.stdout, r.stdout + r.stderr)
        r = run([base, os.path.join(d, "base.cu")])
        check(names[3], r.returncode == 2 and "not a 64-bit" in r.stderr, r.stdout + r.stderr)
        # The revision mode: a throwaway repository with three commits.
        repo = os.path.join(d, "repo")
        os.makedirs(os.path.join(repo, "k"))
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
        subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
        revs = []
        for src in (BASE, MOVED, CHANGED):
            open(os.path.join(repo, "k", "k.cu"), "w").write(src)
            subprocess.run(git + ["add", "-A"], cwd=repo, check=True)
            subprocess.run(git + ["commit", "-qm", "x"], cwd=repo, check=True)
            revs.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip())
        r = run([revs[0], revs[1], "k/k.cu", "--nvcc", nvcc], cwd=repo)
        check(names[4], r.returncode == 0 and "2 kernels identical" in r.stdout, r.stdout + r.stderr)
        r = run([revs[0], "WORK", "k/k.cu", "--nvcc", nvcc], cwd=repo)
        check(names[5], r.returncode == 1 and "DIFF _Z3add" in r.stdout, r.stdout + r.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
