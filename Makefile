# Batch-1 decode microbenchmarks: one source, CUDA (nvcc) and HIP (ROCm or Debian clang-19).
#
#   make                      every experiment for ARCH (binaries and their .s)
#   make 01-ceiling/ceiling   one experiment
#   make 02-gemv/gemv.s       its generated assembly: PTX (+ SASS where cuobjdump exists) or AMDGCN
#   make run [QUICK=1]        build, run every experiment on the local GPU, write results/<gpu>/
#   make counters             02-gemv's DRAM bytes counted by ncu / rocprofv3 against the declared
#   make test                 host tests, builds for sm_90 + sm_80 + gfx942, assembly checks (no GPU)
#   make check                on a GPU: every experiment in --quick mode, validation and SASS checks
#   make sanitize             on a GPU: every experiment --quick under compute-sanitizer (4 tools)
#   make compare A=results/h200 B=results/<other>   two devices' headline figures, with ratios, and 06's time beyond the floor
#   make clean
#
#   ARCH=sm_90 (default when nvcc is found) | sm_90a | sm_80 | sm_100 | gfx942 [ROCM=/opt/rocm]
#   O=build/sm_80/            put outputs under a prefix (make test uses it for extra archs)

EXPERIMENTS := 01-ceiling/ceiling 02-gemv/gemv 03-dlops/dlops 04-reduce/reduce 05-sync/sync 06-decode/decode
EXPS := $(foreach e,$(EXPERIMENTS),$(if $(wildcard $(e).cu),$(e)))

NVCC ?= $(shell command -v nvcc 2>/dev/null || (test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc))
CUOBJDUMP ?= $(shell command -v cuobjdump 2>/dev/null || (test -x /usr/local/cuda/bin/cuobjdump && echo /usr/local/cuda/bin/cuobjdump))
ROCM ?= /opt/rocm
HIPCC ?= $(shell test -x $(ROCM)/bin/hipcc && echo $(ROCM)/bin/hipcc)
CLANG_HIP ?= $(shell command -v clang++-19 2>/dev/null)
PYTHON ?= python3

ifeq ($(ARCH),)
  ARCH := $(if $(NVCC),sm_90,gfx942)
endif

# Provenance baked into every binary: commit and whether the tree had local changes.
# Outside a git checkout (a copied working tree) .git-commit / .git-dirty, if present, say it. So
# do they in a copy whose .git is older than its files (the lent GPU machine's: its .git is the
# session's first commit), found by .git-commit naming a commit that .git does not hold. (Until
# 1e41cd9 such a copy had to be told on make's command line, and a build started outside
# scripts/device_session.sh was stamped with the old commit, dirty.)
GIT_COPY := $(shell c=$$(cat .git-commit 2>/dev/null); test -n "$$c" && ! git cat-file -e "$$c^{commit}" 2>/dev/null && echo 1)
# scripts/device_session.sh sets SUITE_STAMP_FROM_FILES=1: on the lent machine the files decide
# even where the copy's .git holds the very commit built. At 14dce4c it did, and `git status` in
# that copy called the clean tree dirty, so a whole `make run` was stamped dirty.
ifeq ($(SUITE_STAMP_FROM_FILES)$(wildcard .git-commit),1.git-commit)
  GIT_COPY := 1
endif
ifeq ($(GIT_COPY),1)
  GIT_COMMIT := $(shell cat .git-commit)
  GIT_DIRTY := $(shell cat .git-dirty 2>/dev/null || echo 1)
else
  GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || cat .git-commit 2>/dev/null || echo unknown)
  GIT_DIRTY := $(shell if git rev-parse HEAD >/dev/null 2>&1; then test -z "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo 0 || echo 1; else cat .git-dirty 2>/dev/null || echo 1; fi)
endif
# XDEFS: extra defines for an experiment's build beside the product's (with O=build/<name>/),
# e.g. XDEFS=-DDECODE_RING_SEG=512: never in the product's own build.
XDEFS ?=
DEFS := -DSUITE_GIT_COMMIT='"$(GIT_COMMIT)"' -DSUITE_GIT_DIRTY=$(GIT_DIRTY) -DSUITE_BUILD_ARCH='"$(ARCH)"' $(XDEFS)

# Every header an experiment may include: common/ and the experiments' own (04-reduce includes
# 03-dlops/clocks.h), so a header change rebuilds what reads it.
COMMON_H := $(wildcard common/*.h) $(wildcard 0*/*.h)
O ?=

# Per-experiment link libraries (the vendor BLAS rungs of 02-gemv).
LIBS_02-gemv/gemv := -lcublas -lcublasLt

ifneq ($(filter sm_%,$(ARCH)),)
  # NVIDIA: sm_90 -> compute_90 / sm_90; sm_90a keeps its suffix.
  SMNUM := $(patsubst sm_%,%,$(ARCH))
  GENCODE := -gencode=arch=compute_$(SMNUM),code=sm_$(SMNUM)
  NVFLAGS := -O3 -std=c++17 -lineinfo $(GENCODE) -Xcompiler -Wall $(DEFS)
  BINS := $(addprefix $(O),$(EXPS))
  ASMS := $(addsuffix .s,$(BINS))
  ALL := $(BINS) $(ASMS)

$(BINS): $(O)%: %.cu $(COMMON_H)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -Xptxas -v -o $@ $< $(LIBS_$*) 2> $@.ptxas.log || { cat $@.ptxas.log; exit 1; }
	@grep -v "^ptxas info\|^    [0-9]* bytes stack\|^ptxas info    : Used" $@.ptxas.log | grep -v "^$$" || true
	@mv $@.ptxas.log $@.resources

$(addsuffix .ptx,$(BINS)): $(O)%.ptx: %.cu $(COMMON_H)
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 -lineinfo -arch=compute_$(SMNUM) $(DEFS) -ptx -o $@ $<

$(ASMS): $(O)%.s: $(O)%.ptx $(O)%
	@{ echo "// $*: PTX for $(ARCH)"; cat $<; \
	   if [ -n "$(CUOBJDUMP)" ]; then echo "// $*: SASS for $(ARCH) (cuobjdump -sass)"; $(CUOBJDUMP) -sass $(O)$*; \
	   else echo "// $*: no SASS: cuobjdump not found on this machine"; fi; } > $@
else ifeq ($(ARCH),gfx942)
  HIPFLAGS := -O3 -std=c++17 --offload-arch=gfx942 $(DEFS)
  ifneq ($(HIPCC),)
    # ROCm present: real binaries, and the .s from the same compiler.
    BINS := $(addprefix $(O),$(EXPS))
    ASMS := $(addsuffix .s,$(BINS))
    ALL := $(BINS) $(ASMS)
$(BINS): $(O)%: %.cu $(COMMON_H)
	@mkdir -p $(dir $@)
	$(HIPCC) -x hip $(HIPFLAGS) -o $@ $< $(subst -lcublasLt,-lhipblaslt,$(subst -lcublas,,$(LIBS_$*)))
$(ASMS): $(O)%.s: %.cu $(COMMON_H)
	@mkdir -p $(dir $@)
	$(HIPCC) -x hip $(HIPFLAGS) --cuda-device-only -S -o $@ $<
  else
    # No ROCm: Debian's clang-19 compiles the device code to gfx942 assembly only.
    BINS :=
    ASMS := $(addsuffix .s,$(addprefix $(O),$(EXPS)))
    ALL := $(ASMS)
$(ASMS): $(O)%.s: %.cu $(COMMON_H)
	@test -n "$(CLANG_HIP)" || { echo "ARCH=gfx942 needs ROCm ($(ROCM)/bin/hipcc) or clang++-19 with libamdhip64-dev"; exit 2; }
	@mkdir -p $(dir $@)
	$(CLANG_HIP) -x hip $(HIPFLAGS) --cuda-device-only -nogpulib -Wno-unused-result -S -o $@ $<
  endif
else
  $(error ARCH=$(ARCH) is not one of sm_80, sm_90, sm_90a, sm_100, gfx942)
endif

.PHONY: all run test check clean asm sanitize compare counters
.DEFAULT_GOAL := all
all: $(ALL)
	@$(if $(BINS),,echo "ARCH=$(ARCH): no ROCm found, built assembly only: $(ASMS)")
asm: $(ASMS)

# The main job: every experiment on the local GPU, 01 first (its ceiling feeds the rest).
run: $(BINS)
	QUICK=$(QUICK) ARCH=$(ARCH) bash scripts/run_all.sh $(EXPS)

# No GPU needed: host unit tests, builds for sm_90, sm_80 and gfx942, assembly checks,
# the no-GPU and bad-flag contract. Ends with "N passed, N failed".
test:
	$(PYTHON) tests/run_tests.py

# On a GPU: every experiment --quick with validation, then the SASS checks.
check: $(BINS) $(ASMS)
	ARCH=$(ARCH) GIT_COMMIT=$(GIT_COMMIT) GIT_DIRTY=$(GIT_DIRTY) bash scripts/check.sh $(EXPS)

# Two devices' headline figures side by side (and 06-decode's engines and ring modes as time beyond each card's floor): make compare A=results/h200 B=results/<other>
compare:
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=results/h200 B=results/<other>"; exit 2; }
	$(PYTHON) scripts/compare.py $(A) $(B)

# On a GPU, a separate run (never under the timings): the DRAM bytes each 02-gemv kernel moves
# at 4096x4096, counted by ncu (rocprofv3 on ROCm), against the declared bytes.
counters: $(O)02-gemv/gemv
	GIT_COMMIT=$(GIT_COMMIT) $(PYTHON) scripts/counters.py --binary $(O)02-gemv/gemv

# On a GPU: every experiment --quick under compute-sanitizer's four tools; zero errors.
sanitize: $(BINS)
	bash scripts/sanitize.sh $(EXPS)

clean:
	rm -rf build $(foreach e,$(EXPERIMENTS),$(e) $(e).s $(e).ptx $(e).resources) tests/unit_tests
