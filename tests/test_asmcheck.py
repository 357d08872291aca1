#!/usr/bin/env python3
"""tests/asmcheck.py on small hand-written listings, each rule with the verdict worked out by
hand: the SASS flavour above all, which otherwise runs only on a GPU machine (make check, where
cuobjdump is), and the rules that must fail rather than pass by default (an unknown target, a
loop rule on a function with no loop, a kernel regex that matches nothing)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
fails = 0

# A cuobjdump -sass listing in the shape make puts into name.s: the PTX part, then the SASS.
SASS = """// k: PTX for sm_90
.visible .entry ring(
)
{
	ret;
}
// k: SASS for sm_90 (cuobjdump -sass)

Fatbin elf code:
================
arch = sm_90
	code for sm_90
		Function : ring
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS"
        /*0000*/                   LDC R1, c[0x0][0x28] ;
                                                                      /* 0x000fe40000000f00 */
        /*0010*/                   S2R R0, SR_TID.X ;
.L_x_1:
        /*0020*/                   LDS.128 R4, [R0] ;
        /*0030*/                   FFMA R8, R4, R5, R8 ;
        /*0040*/                   FFMA R9, R6, R7, R9 ;
        /*0050*/                   SHFL.BFLY PT, R2, R8, 0x10, 0x1f ;
        /*0060*/               @P0 BRA `(.L_x_1) ;
        /*0070*/                   EXIT ;
		..........

		Function : straight
        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0010*/                   FFMA R8, R4, R5, R8 ;
        /*0020*/                   EXIT ;
		..........
"""

CASES = [  # (name, rule line, expected exit: 0 pass, 1 fail)
    ("sass_loop_count", "sass ^ring$ loop count>=2 \\bFFMA\\b", 0),
    ("sass_loop_count_too_few", "sass ^ring$ loop count>=3 \\bFFMA\\b", 1),
    ("sass_kernel_has", "sass ^straight$ kernel has LDG\\.E\\.128", 0),
    ("sass_kernel_lacks_fails", "sass ^ring$ kernel lacks SHFL\\.BFLY", 1),
    ("sass_before", "sass ^ring$ loop before>=1 LDS\\.128 ;; \\bFFMA\\b", 0),
    ("sass_encoding_lines_dropped", "sass ^ring$ kernel lacks 0x000fe40000000f00", 0),
    ("sass_loop_lacks_no_loop_fails", "sass ^straight$ loop lacks SHFL", 1),
    ("sass_loop_lacks_in_loop", "sass ^ring$ loop lacks \\bLDG\\b", 0),
    ("sass_loop_kernel_not_in_ptx_part", "sass ^ring$ kernel lacks \\bret\\b", 0),
    ("sass_seq_in_order", "sass ^ring$ loop seq LDS\\.128 ;; \\bFFMA\\b ;; \\bFFMA\\b ;; SHFL\\.BFLY", 0),
    ("sass_seq_out_of_order_fails", "sass ^ring$ loop seq SHFL\\.BFLY ;; \\bFFMA\\b", 1),
    ("sass_seq_one_too_many_fails", "sass ^ring$ loop seq \\bFFMA\\b ;; \\bFFMA\\b ;; \\bFFMA\\b", 1),
    ("unknown_target_fails", "pxt ^ring$ kernel has FFMA", 1),
    ("kernel_regex_matching_nothing_fails", "sass ^renamed$ kernel has FFMA", 1),
    ("other_target_ignored", "gfx942 ^ring$ kernel has v_dot2_f32_f16", 0),
]


def check(name, cond, detail=""):
    global fails
    print(f"{'PASS' if cond else 'FAIL'} asmcheck:{name}" + (f" ({detail})" if detail and not cond else ""), flush=True)
    fails += not cond


def main():
    with tempfile.TemporaryDirectory() as d:
        asm = os.path.join(d, "k.s")
        open(asm, "w").write(SASS)
        for name, rule, want in CASES:
            rules = os.path.join(d, name + ".rules")
            open(rules, "w").write("# one rule\n" + rule + "\n")
            r = subprocess.run([sys.executable, os.path.join(HERE, "asmcheck.py"), "--target", "sass", "--rules", rules,
                                "--asm", asm], capture_output=True, text=True, timeout=60)
            check(name, r.returncode == want, f"exit {r.returncode}, wanted {want}: {r.stdout.strip()[-300:]}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
