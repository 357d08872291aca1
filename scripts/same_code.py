#!/usr/bin/env python3
"""Is a kernel's machine code the same before and after a change? Compares the per-kernel
.text sections of two sm_90 cubins, byte for byte, with no GPU and no cuobjdump.

  same_code.py A.cubin B.cubin                  two cubins already built
  same_code.py REV_A REV_B NN-name/file.cu      builds file.cu at both git revisions (each tree
                                                taken whole by git archive) and compares them;
                                                REV_B may be WORK, the working tree as it is
  options: --arch sm_90 (default), --nvcc PATH

Exit 0: every kernel byte-identical (a comment or a host-only change). Exit 1: some kernel's
code differs, or exists on one side only (each named). Exit 2: bad usage, a build that failed,
a file that is not a 64-bit ELF.

Why: a timing belongs to the code that was measured. On Hopper, changes that leave the PTX
equivalent (virtual registers renumbered, a helper inlined) can still change ptxas's output,
and 06-decode has measured such changes moving a step by microseconds. A change that keeps
every .text section identical needs no new timing; one that does not must be measured again.
The .text sections hold instructions only (line tables live in other sections), so -lineinfo
and moved source lines leave them unchanged.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile


def usage(msg):
    print(f"same_code: {msg}\nusage:\n" + __doc__.split("\n\n")[1], file=sys.stderr)
    sys.exit(2)


def text_sections(path):
    """{kernel name: bytes} from the .text.<name> sections of a 64-bit little-endian ELF."""
    try:
        b = open(path, "rb").read()
    except OSError as e:
        usage(f"cannot read {path}: {e.strerror}")
    if len(b) < 64 or b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
        usage(f"{path} is not a 64-bit little-endian ELF (a cubin: nvcc -cubin -arch=sm_90)")
    shoff = struct.unpack_from("<Q", b, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    if shoff + shnum * shentsize > len(b) or shstrndx >= shnum:
        usage(f"{path}: truncated section table")
    hdr = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    names = hdr[shstrndx][4]
    out = {}
    for h in hdr:
        name = b[names + h[0]:b.index(b"\0", names + h[0])].decode(errors="replace")
        if name.startswith(".text."):
            out[name[len(".text."):]] = b[h[4]:h[4] + h[5]]
    return out


def compare(a_path, b_path, a_label, b_label):
    a, b = text_sections(a_path), text_sections(b_path)
    if not a and not b:
        usage("neither file holds a .text.<kernel> section: nothing to compare")
    same, differ = [], []
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            differ.append(f"{k}: only in {a_label if k in a else b_label}")
        elif a[k] != b[k]:
            n = sum(1 for i in range(0, min(len(a[k]), len(b[k])), 16) if a[k][i:i + 16] != b[k][i:i + 16])
            differ.append(f"{k}: {len(a[k])} -> {len(b[k])} bytes, {n} of {max(len(a[k]), len(b[k])) // 16} "
                          "16-byte instructions differ")
        else:
            same.append(k)
    for line in differ:
        print(f"DIFF {line}")
    print(f"same_code: {len(same)} kernels identical, {len(differ)} differ ({a_label} vs {b_label})")
    return 1 if differ else 0


def build(rev, src, out, arch, nvcc, tmp):
    tree = os.path.join(tmp, "tree-" + ("work" if rev == "WORK" else rev.replace("/", "_")))
    if rev == "WORK":
        tree = os.getcwd()
    else:
        os.makedirs(tree)
        arch_p = subprocess.run(["git", "archive", rev], capture_output=True)
        if arch_p.returncode != 0:
            usage(f"git archive {rev}: {arch_p.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", tree], input=arch_p.stdout, check=True)
    if not os.path.exists(os.path.join(tree, src)):
        usage(f"{src} does not exist at {rev}")
    r = subprocess.run([nvcc, "-O3", "-std=c++17", "-lineinfo", f"-arch={arch}", "-cubin", "-o", out, src],
                       cwd=tree, capture_output=True, text=True)
    if r.returncode != 0:
        usage(f"building {src} at {rev} failed:\n{r.stderr.strip()[-2000:]}")


def main(argv):
    arch, nvcc, args = "sm_90", shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc", []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if a in ("--arch", "--nvcc"):
            v = next(it, None)
            if v is None:
                usage(f"{a} needs a value")
            if a == "--arch":
                arch = v
            else:
                nvcc = v
        elif a.startswith("-"):
            usage(f"unknown option {a}")
        else:
            args.append(a)
    if len(args) == 2:
        return compare(args[0], args[1], args[0], args[1])
    if len(args) != 3:
        usage("give two cubins, or two revisions and a .cu file")
    if not os.path.exists(nvcc):
        usage(f"nvcc not found ({nvcc}); use --nvcc PATH")
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0:
        usage("not inside a git checkout")
    os.chdir(top.stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        outs = []
        for i, rev in enumerate(args[:2]):
            outs.append(os.path.join(tmp, f"{i}.cubin"))
            build(rev, args[2], outs[-1], arch, nvcc, tmp)
        return compare(outs[0], outs[1], args[0], args[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
