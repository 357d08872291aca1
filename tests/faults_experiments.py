"""Planted faults against the experiments' own sources (registered into tests/planted_faults.py).

Each patch is a regex on a copy of the source under build/faults/<id>/; if a patch no longer
matches (the code moved on), the fault FAILS loudly rather than passing unplanted.
"""


def register(fault):
    # 10. A probe measuring something else than it says: loaded_latency's chase through L1 (a
    #     plain load: its "L2 hop" could be an L1 hit), release_probe's arrival without release.
    fault("10-chase-through-l1", "loaded_latency's chase as a plain load (probe PTX rule)", "ci",
          "05-sync/probes/loaded_latency",
          [(r'asm volatile\("ld\.global\.cg\.u32 %0, \[%1\];"', 'asm volatile("ld.global.u32 %0, [%1];"')],
          ("asm", "ptx", r"ld\\\.global\\\.cg"), patch_file="common/probe.h")
    fault("10-token-before-wait", "pdl_loaded's link reading its predecessor's token before the wait (probe PTX rule)", "ci",
          "05-sync/probes/pdl_loaded",
          [(r'(  chain_release<PDL>\(\);\n)', r'  if (threadIdx.x == 0 && *(volatile unsigned*)(a.token + blockIdx.x) == ~0u) atomicAdd(a.bad, 1u);  // PLANTED FAULT\n\1')],
          ("asm", "ptx", r"before>=1 /griddepcontrol"))
    fault("10-data-x-through-l1", "chain_probe's data-carried chain polling x with a weak load (L1 may hold the poison; probe PTX rule)", "ci",
          "02-gemv/probes/chain_probe",
          [(r'asm volatile\("ld\.relaxed\.gpu\.global\.v4\.u32 ', 'asm volatile("ld.global.v4.u32 ')],
          ("asm", "ptx", r"ld\\\.relaxed\\\.gpu"), patch_file="common/chain.h")
    fault("10-arrival-without-release", "release_probe's arrival as a relaxed atomic without release (probe PTX rule)", "ci",
          "05-sync/probes/release_probe",
          [(r"else if \(ORDER != kFirst\) scope_release_increment_u64\(a\.counter\);",
            "else if (ORDER != kFirst) atomicAdd(a.counter, 1ull);  // PLANTED FAULT")],
          ("asm", "ptx", r"has /red\\\.release"))
    # 3. Device-scope loads in a barrier spin without their scope bits: the acquire load becomes a
    #    volatile one (sm_90), the agent-scope acquire a workgroup-scope one (gfx942, so no sc1).
    fault("3-spin-without-scope-ptx", "spin loads without .acquire.gpu (sm_90 PTX rule)", "ci", "05-sync/sync",
          [(r'else v = scope_acquire_load_u64\(p\);',
            'else asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");')],
          ("asm", "ptx", r"ld\\\.acquire\\\.gpu"))
    fault("3-spin-without-scope-gfx942", "spin loads without sc1 (gfx942 rule)", "ci", "05-sync/sync",
          [(r"return scope_acquire_load_u64\(p\);",
            "return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_WORKGROUP);"),
           (r"if \(O == kRelaxed\) return __hip_atomic_load\(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT\);",
            "if (O == kRelaxed) return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);")],
          ("asm", "gfx942", r"sc1"))
    # 8. A barrier that lets one block through early: block 1 never waits in any spin, so it
    #    reads payloads that other blocks have not yet published; the payload check must count it.
    fault("8-early-release", "a barrier that lets one block through early (violations counted, exit 1)", "gpu",
          "05-sync/sync",
          [(r"(unsigned long long g, int shift = 0, unsigned long long\* seen = nullptr\) \{\n)",
            r"\1  if (blockIdx.x == 1) return true;  // PLANTED FAULT\n")],
          ("run", ["--quick", "--only", "monotonic_acqrel", "--skip-boundaries"], 1, r"stale payload"))
    # 9. A spin barrier with a missing arrival: the last block never arrives from generation 2 on;
    #    the constant-rate-clock timeout must end the run with exit 1, and the GPU stay usable.
    fault("9-missing-arrival", "a missing arrival times out (exit 1, GPU usable after)", "gpu", "05-sync/sync",
          [(r"return a\.fault == kFaultHang && blockIdx\.x == a\.nblocks - 1 && g >= a\.fault_gen;",
            "return blockIdx.x == a.nblocks - 1 && g >= 2;  // PLANTED FAULT")],
          ("run", ["--quick", "--only", "monotonic_acqrel", "--skip-boundaries", "--timeout-ms", "500"], 1,
           r"timed out"))
    # 2. The cross-lane primitive not emitted: the warp sum's shuffles (sm_90) / DPP moves (gfx942)
    #    replaced by a cross-lane exchange through LDS-backed ds_bpermute or by nothing at all.
    fault("2-no-shfl-sm90", "the GEMV reduction without SHFL (sm_90 PTX rule)", "ci", "02-gemv/gemv",
          [(r"v \+= __shfl_xor_sync\(PORT_FULL_MASK, v, o\);", "v += 0.0f * o;  // PLANTED FAULT")],
          ("asm", "ptx", r"shfl\\\.sync\\\.bfly"))
    fault("2-no-dpp-gfx942", "the GEMV reduction without DPP (gfx942 rule)", "ci", "02-gemv/gemv",
          [(r"__builtin_amdgcn_update_dpp\(0, s, CTRL, ROWS, BANKS, BOUND\)", "__shfl_xor(s, 1)")],
          ("asm", "gfx942", r"row_shr|row_bcast|ds_swizzle\|ds_bpermute"))
    # 4. The dot product lowered to ordinary instructions: gfx942's v_dot2 replaced by conversions
    #    and multiply-adds; sm_90's FFMA replaced by separate (uncontracted) multiplies and adds.
    fault("4-dot2-lowered-gfx942", "v_dot2 lowered to ordinary instructions (gfx942 rule)", "ci", "02-gemv/gemv",
          [(r"return __builtin_amdgcn_fdot2\(__builtin_bit_cast\(gemv_half2_t, w\), __builtin_bit_cast\(gemv_half2_t, xv\), acc, false\);",
            "gemv_half2_t a = __builtin_bit_cast(gemv_half2_t, w), b = __builtin_bit_cast(gemv_half2_t, xv);\n"
            "  return acc + (float)a.x * (float)b.x + (float)a.y * (float)b.y;  // PLANTED FAULT")],
          ("asm", "gfx942", r"v_dot2"))
    fault("4-ffma-replaced-sm90", "FFMA replaced by separate multiplies and adds (sm_90 PTX rule)", "ci",
          "02-gemv/gemv",
          [(r"return fmaf\(wf\.y, xf\.y, fmaf\(wf\.x, xf\.x, acc\)\);",
            "return __fadd_rn(__fadd_rn(acc, __fmul_rn(wf.x, xf.x)), __fmul_rn(wf.y, xf.y));  // PLANTED FAULT")],
          ("asm", "ptx", r"fma\\\.rn\\\.f32"))
    # 5. A GEMV that never writes its last row: the NaN poison makes validation fail (exit 1).
    fault("5-gemv-last-row-unwritten", "a GEMV that never writes its last row (NaN poison, exit 1)", "gpu",
          "02-gemv/gemv",
          [(r"for \(int i = lane; i < n2; i \+= PORT_WARP_SIZE\) acc = dot2\(w\[i\], xw\[i\], acc\);\n    acc = warp_sum\(acc\);\n    if \(lane == 0\) y\[row\]",
            "for (int i = lane; i < n2; i += PORT_WARP_SIZE) acc = dot2(w[i], xw[i], acc);\n    acc = warp_sum(acc);\n"
            "    if (lane == 0 && row != N - 1) y[row]")],
          ("run", ["--quick"], 1, r"not written or not finite"))
    # 1. The reduction hoisted out of the timing loop: computed once from a loop-invariant input
    #    before the loop (what a compiler does to reduce(p) when the chain's dependence is lost;
    #    nvcc itself keeps convergent shuffles in place, so the fault plants the hoist), and the
    #    loop times nothing. The rule that the loop body holds the shuffles must fail.
    fault("1-reduction-hoisted", "the reduction hoisted out of the loop (sm_90 PTX rule)", "ci", "04-reduce/reduce",
          [(r"#pragma unroll 1\n  for \(int i = 0; i < iters; \+\+i\) \{\n#pragma unroll\n    for \(int u = 0; u < kUnroll; \+\+u\) x = M::op\(x\) \* scale \+ p;",
            "const float hoisted = M::op(p) * scale;  // PLANTED FAULT: computed once, outside the loop\n"
            "#pragma unroll 1\n  for (int i = 0; i < iters; ++i) {\n#pragma unroll\n"
            "    for (int u = 0; u < kUnroll; ++u) x = hoisted + x * 0.5f;")],
          ("asm", "ptx", r"reduce_butterfly: loop count>=20"))
