#!/usr/bin/env python3
"""Assembly checks (principle 4): what each kernel's generated code must and must not contain.

Rules live next to each experiment in NN-name/asm.rules, one per line:

    target  kernel-regex  scope  op  pattern

  target   ptx     the PTX in NN-name/name.s (any sm_XX build)
           sass    the SASS in NN-name/name.s (only where cuobjdump ran: the H200)
           gfx942  the AMDGCN assembly of a gfx942 build
           res     ptxas's resource report (NN-name/name.resources; checked with --res only,
                   and a NOTE line counts the res rules left unchecked without it)
           any other target is a FAIL (a misspelt one would drop the rule from every run)
  kernel   a Python regex matched (search) against function names; it must match at least one
           function of the file, else the rule fails (a renamed kernel cannot pass silently)
  scope    kernel (the whole function) | loop (any loop body: the instructions between a label
           and a backward branch to it); a loop rule fails where the function has no loop,
           "lacks" included
  op       has P              at least one line matches P (loop: in some loop)
           lacks P            no line matches P (loop: in no loop)
           count>=N P | count<=N P | count==N P
                              the number of matching lines (loop: some loop satisfies it)
           before>=N A ;; B   at least N lines matching A come before the first line matching B
                              (B must be present; loop: some loop satisfies it)
           prev A ;; B        every line matching B is immediately preceded by an instruction
                              matching A, and B occurs at least once
           seq A ;; B ;; ...  lines matching A, B, ... occur in that order (others may lie
                              between; loop: some loop satisfies it)
           spill==0 / stack==0  (target res) no spill stores/loads / no stack frame
  pattern  a Python regex (the rest of the line)

Usage: asmcheck.py --target T --rules FILE --asm FILE [--res FILE] [--tag NAME]
Prints one PASS/FAIL line per (rule, function) and exits 1 if any failed.
"""
import argparse
import os
import re
import sys


def split_by_labels(lines, start_re, is_function, end_res):
    """{name: body lines}: a function starts at a line matching start_re (group 1 its name, kept
    when is_function(name)) and runs to the next start or to a line matching one of end_res."""
    funcs, name, body = {}, None, []
    for ln in lines:
        m = re.match(start_re, ln)
        if m and is_function(m.group(1)):
            if name:
                funcs[name] = body
            name, body = m.group(1), []
            continue
        if name is not None:
            if any(re.match(e, ln) for e in end_res):
                funcs[name] = body
                name = None
                continue
            body.append(ln)
    if name:
        funcs[name] = body
    return funcs


def split_functions(text, target):
    """Returns {name: [instruction lines]} for the assembly flavour."""
    funcs = {}
    lines = text.splitlines()
    if target == "ptx":
        name, body, depth = None, [], 0
        for ln in lines:
            if name is None:
                m = re.match(r"\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", ln)
                if m:
                    name, body, depth = m.group(1), [], 0
                    started = False
                continue
            if "{" in ln:
                depth += ln.count("{")
                started = True
            if "}" in ln:
                depth -= ln.count("}")
            body.append(ln)
            if started and depth <= 0:
                funcs[name] = body
                name = None
        return funcs
    if target == "sass":
        return split_by_labels(lines, r"\s*Function\s*:\s*(\S+)", lambda n: True, [r"\s*(Fatbin|\.section|=====)"])
    if target == "gfx942":
        return split_by_labels(lines, r"^([A-Za-z_][\w.$]*):\s*(;.*)?$", lambda n: not n.startswith(".L"),
                               [r"^\.Lfunc_end\d+:", r"^\s*\.size\s"])
    raise ValueError(target)


def instructions(body, target):
    """Drops comments, blank lines and SASS encoding lines; keeps labels (loops need them)."""
    out = []
    for ln in body:
        if target == "ptx":
            s = ln.split("//")[0]
        elif target == "gfx942":
            s = ln.split(";")[0]
        else:
            if re.match(r"^\s*/\* 0x[0-9a-f]+ \*/\s*$", ln):
                continue
            s = ln
        if s.strip():
            out.append(s.rstrip())
    return out


def loops(body, target):
    """Regions [label .. backward branch] of a function body, as lists of lines."""
    regions = []
    if target == "ptx":
        label_re, br_re = r"^\s*(\$L__\w+):", r"\bbra(?:\.uni)?\s+(\$L__\w+)\s*;"
    elif target == "gfx942":
        label_re, br_re = r"^(\.LBB\w+):", r"\bs_(?:c?branch\w*)\s+(\.LBB\w+)"
    else:  # sass: labels (.L_x_N:) or addresses (/*0170*/ ... BRA 0x90)
        label_re, br_re = r"^\s*(\.L_x_\d+):", r"\bBRA\s+(?:\S+\s+)?`?\(?(\.L_x_\d+)\)?`?"
    seen = {}
    for i, ln in enumerate(body):
        m = re.match(label_re, ln)
        if m:
            seen[m.group(1)] = i
        b = re.search(br_re, ln)
        if b and b.group(1) in seen:
            regions.append(body[seen[b.group(1)]:i + 1])
    if target == "sass" and not regions:
        addr = {}
        for i, ln in enumerate(body):
            m = re.match(r"\s*/\*([0-9a-f]{4,})\*/", ln)
            if m:
                addr[int(m.group(1), 16)] = i
            b = re.search(r"\bBRA\s+(?:\S+\s+)?0x([0-9a-f]+)", ln)
            if b and m:
                tgt = int(b.group(1), 16)
                if tgt <= int(m.group(1), 16) and tgt in addr:
                    regions.append(body[addr[tgt]:i + 1])
    return regions


def count(lines, pat):
    return sum(1 for ln in lines if re.search(pat, ln))


def check_region(op, arg, lines):
    if op == "has":
        return count(lines, arg) > 0, f"{count(lines, arg)} match"
    if op == "lacks":
        return count(lines, arg) == 0, f"{count(lines, arg)} match"
    m = re.match(r"count(>=|<=|==)(\d+)$", op)
    if m:
        c, n = count(lines, arg), int(m.group(2))
        ok = {">=": c >= n, "<=": c <= n, "==": c == n}[m.group(1)]
        return ok, f"{c} matches"
    m = re.match(r"before>=(\d+)$", op)
    if m:
        a, b = [x.strip() for x in arg.split(";;")]
        first_b = next((i for i, ln in enumerate(lines) if re.search(b, ln)), None)
        if first_b is None:
            return False, "no line matches B"
        c = count(lines[:first_b], a)
        return c >= int(m.group(1)), f"{c} before the first B"
    if op == "seq":
        # every pattern, in the order given, each on a later line than the one before
        pats, at = [x.strip() for x in arg.split(";;")], 0
        for k, pat in enumerate(pats):
            at = next((i + 1 for i in range(at, len(lines)) if re.search(pat, lines[i])), None)
            if at is None:
                return False, f"{k} of {len(pats)} in order"
        return True, f"{len(pats)} of {len(pats)} in order"
    if op == "prev":
        a, b = [x.strip() for x in arg.split(";;")]
        insn = [ln for ln in lines if not re.match(r"^\s*[\w$.]+:\s*$", ln)]
        hits = [i for i, ln in enumerate(insn) if re.search(b, ln)]
        if not hits:
            return False, "no line matches B"
        bad = [i for i in hits if i == 0 or not re.search(a, insn[i - 1])]
        return not bad, f"{len(hits) - len(bad)} of {len(hits)} preceded"
    return False, f"unknown op {op}"


def parse_resources(text):
    res, cur = {}, None
    for ln in text.splitlines():
        m = re.search(r"Function properties for (\S+)", ln)
        if m:
            cur = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", ln)
        if m and cur:
            res[cur] = tuple(int(x) for x in m.groups())
            cur = None
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True, choices=["ptx", "sass", "gfx942"])
    ap.add_argument("--rules", required=True)
    ap.add_argument("--asm", required=True)
    ap.add_argument("--res")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    text = open(a.asm, errors="replace").read()
    if a.target in ("ptx", "sass"):
        # name.s holds the PTX then (where cuobjdump ran) the SASS: pick the part.
        parts = re.split(r"^// \S+: SASS for .*$", text, maxsplit=1, flags=re.M)
        text = parts[0] if a.target == "ptx" else (parts[1] if len(parts) > 1 else "")
    funcs = {k: instructions(v, a.target) for k, v in split_functions(text, a.target).items()}
    failed = passed = res_unchecked = 0
    tag = f"[{a.tag}] " if a.tag else ""
    res = {}
    if a.res and os.path.exists(a.res):
        res = parse_resources(open(a.res).read())
    elif a.res:  # asked for and absent: the res rules cannot run, which is a failure, not a skip
        print(f"FAIL {tag}--res {a.res}: no such file (ptxas -v's report, which the res rules read)")
        failed += 1
    for lineno, raw in enumerate(open(a.rules), 1):
        raw = raw.rstrip("\n")
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        fields = raw.split(None, 4)
        if len(fields) < 4:
            print(f"FAIL {tag}{a.rules}:{lineno}: malformed rule: {raw}")
            failed += 1
            continue
        tgt, kre, scope, op = fields[:4]
        arg = fields[4] if len(fields) > 4 else ""
        if tgt not in ("ptx", "sass", "gfx942", "res"):
            # A misspelled target would otherwise drop the rule from every run without a word.
            print(f"FAIL {tag}{a.rules}:{lineno}: unknown target {tgt!r} (ptx, sass, gfx942 or res)")
            failed += 1
            continue
        if tgt == "res":
            if a.target != "ptx":
                continue
            if not a.res:
                res_unchecked += 1
                continue
            names = [n for n in res if re.search(kre, n)]
            if not names:
                print(f"FAIL {tag}{a.rules}:{lineno}: no function in the resource report matches /{kre}/")
                failed += 1
                continue
            for n in names:
                stack, st, ld = res[n]
                ok = (st == 0 and ld == 0) if op == "spill==0" else (stack == 0) if op == "stack==0" else None
                if ok is None:
                    print(f"FAIL {tag}{a.rules}:{lineno}: unknown res op {op}")
                    failed += 1
                    break
                print(f"{'PASS' if ok else 'FAIL'} {tag}{n}: {op} (stack {stack}, spill stores {st}, spill loads {ld})")
                passed += ok
                failed += not ok
            continue
        if tgt != a.target:
            continue
        names = [n for n in funcs if re.search(kre, n)]
        if not names:
            print(f"FAIL {tag}{a.rules}:{lineno}: no {tgt} function matches /{kre}/ ({len(funcs)} functions read)")
            failed += 1
            continue
        for n in names:
            body = funcs[n]
            if scope == "kernel":
                ok, why = check_region(op, arg, body)
            elif scope == "loop":
                regs = loops(body, a.target)
                if not regs:
                    # "lacks" too: a rule about a loop that is gone must not pass by default.
                    ok, why = False, "no loop found"
                elif op == "lacks":
                    allr = [ln for r in regs for ln in r]
                    ok, why = count(allr, arg) == 0, f"{count(allr, arg)} matches in {len(regs)} loops"
                else:
                    results = [check_region(op, arg, r) for r in regs]
                    ok = any(r[0] for r in results)
                    why = "; ".join(r[1] for r in results[:4])
            else:
                ok, why = False, f"unknown scope {scope}"
            print(f"{'PASS' if ok else 'FAIL'} {tag}{n}: {scope} {op} /{arg}/ ({why})")
            passed += ok
            failed += not ok
    if res_unchecked:
        print(f"NOTE {tag}{res_unchecked} res rules not checked: no --res (ptxas -v report) given")
    print(f"asmcheck {tag}{a.asm}: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
