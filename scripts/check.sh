#!/usr/bin/env bash
# make check (on a GPU): every experiment in --quick mode with its validation, then the
# SASS rules (tests/asmcheck.py --target sass) where cuobjdump put SASS into name.s.
# A missing GPU is reported as a skip, never as a pass.
set -u -o pipefail
cd "$(dirname "$0")/.."
export SUITE_RESULTS_ROOT=build/results-quick
mkdir -p build/check
# What was checked, where and when: the log carries it, not only the name it is saved under.
gpu=$(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader 2>/dev/null | head -1)
dirty=""; [ "${GIT_DIRTY:-1}" = 0 ] || dirty=" (dirty tree)"
echo "# make check of ${GIT_COMMIT:-unknown}$dirty on ${gpu:-no nvidia-smi}, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
pass=0; fail=0; skip=0
for e in "$@"; do
  name=$(basename "$(dirname "$e")")
  "$e" --quick --json "build/check/$name.json" > "build/check/$name.txt" 2> "build/check/$name.err"
  rc=$?
  # As in make run, the later experiments read 01's ceiling from the results directory
  # (build/results-quick/<gpu>/ here). Without it each measured its own with a short sweep of
  # single launches, below 01's launch-size ceiling: on an H100 (4122e3a) 02's PDL chain then ran
  # 2.7% above that stand-in and the check failed on a sound figure.
  if [ $rc -eq 0 ] && dir=$("$e" --print-results-dir 2>/dev/null); then
    mkdir -p "$dir" && cp "build/check/$name.json" "$dir/$name.json"
  fi
  case $rc in
    0) echo "PASS $name --quick (validated)"; pass=$((pass + 1)) ;;
    77) echo "SKIP $name: $(tail -1 build/check/$name.err)"; skip=$((skip + 1)) ;;
    *) echo "FAIL $name --quick exited $rc:"; tail -20 "build/check/$name.err"; fail=$((fail + 1)) ;;
  esac
  rules="$(dirname "$e")/asm.rules"
  if [ -f "$rules" ]; then
    if grep -q "SASS for" "$e.s" 2>/dev/null; then
      if python3 tests/asmcheck.py --target sass --rules "$rules" --asm "$e.s" --tag "$name sass" > "build/check/$name.sass.txt"; then
        echo "PASS $name SASS rules ($(tail -1 build/check/$name.sass.txt | sed 's/.*: //'))"; pass=$((pass + 1))
      else
        echo "FAIL $name SASS rules:"; grep ^FAIL "build/check/$name.sass.txt"; fail=$((fail + 1))
      fi
    else
      echo "SKIP $name SASS rules: no SASS in $e.s (cuobjdump not found)"; skip=$((skip + 1))
    fi
  fi
done
python3 tests/planted_faults.py gpu
case $? in
  0) pass=$((pass + 1)) ;;
  77) echo "SKIP planted faults (gpu): no GPU to run them on"; skip=$((skip + 1)) ;;
  *) fail=$((fail + 1)) ;;
esac
echo "check: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
