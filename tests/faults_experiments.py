"""Planted faults against the experiments' own sources (registered into tests/planted_faults.py).

Each patch is a regex on a copy of the source under build/faults/<id>/; if a patch no longer
matches (the code moved on), the fault FAILS loudly rather than passing unplanted.
"""


def register(fault):
    # 3. Device-scope loads in a barrier spin without their scope bits: the acquire load becomes a
    #    volatile one (sm_90), the agent-scope acquire a workgroup-scope one (gfx942, so no sc1).
    fault("3-spin-without-scope-ptx", "spin loads without .acquire.gpu (sm_90 PTX rule)", "ci", "05-sync/sync",
          [(r'else asm volatile\("ld\.acquire\.gpu\.global\.u64 %0, \[%1\];"',
            'else asm volatile("ld.volatile.global.u64 %0, [%1];"')],
          ("asm", "ptx", r"ld\\\.acquire\\\.gpu"))
    fault("3-spin-without-scope-gfx942", "spin loads without sc1 (gfx942 rule)", "ci", "05-sync/sync",
          [(r"return __hip_atomic_load\(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT\);",
            "return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_WORKGROUP);"),
           (r"if \(O == kRelaxed\) return __hip_atomic_load\(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT\);",
            "if (O == kRelaxed) return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);")],
          ("asm", "gfx942", r"sc1"))
    # 8. A barrier that lets one block through early: block 1 never waits in any spin, so it
    #    reads payloads that other blocks have not yet published; the payload check must count it.
    fault("8-early-release", "a barrier that lets one block through early (violations counted, exit 1)", "gpu",
          "05-sync/sync",
          [(r"(unsigned long long g, int shift = 0\) \{\n)", r"\1  if (blockIdx.x == 1) return true;  // PLANTED FAULT\n")],
          ("run", ["--quick", "--only", "monotonic_acqrel", "--skip-boundaries"], 1, r"stale payload"))
    # 9. A spin barrier with a missing arrival: the last block never arrives from generation 2 on;
    #    the constant-rate-clock timeout must end the run with exit 1, and the GPU stay usable.
    fault("9-missing-arrival", "a missing arrival times out (exit 1, GPU usable after)", "gpu", "05-sync/sync",
          [(r"return a\.fault == kFaultHang && blockIdx\.x == a\.nblocks - 1 && g >= a\.fault_gen;",
            "return blockIdx.x == a.nblocks - 1 && g >= 2;  // PLANTED FAULT")],
          ("run", ["--quick", "--only", "monotonic_acqrel", "--skip-boundaries", "--timeout-ms", "500"], 1,
           r"timed out"))
