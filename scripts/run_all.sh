#!/usr/bin/env bash
# make run: every experiment on the local GPU, 01 first (its ceiling feeds the others),
# writing results/<gpu>/NN-name.json and NN-name.txt (the printed tables).
# QUICK=1: --quick everywhere, written under build/results-quick/<gpu>/ instead.
set -u -o pipefail
cd "$(dirname "$0")/.."
exps=("$@")
[ ${#exps[@]} -gt 0 ] || { echo "run_all: no experiments built" >&2; exit 2; }
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then
  export SUITE_RESULTS_ROOT=build/results-quick
  quick=--quick
else
  export SUITE_RESULTS_ROOT=results
  quick=
fi
dir=$("${exps[0]}" --print-results-dir)
rc=$?
if [ $rc -eq 77 ]; then echo "run_all: skipped: no GPU present" >&2; exit 77; fi
[ $rc -eq 0 ] || exit $rc
mkdir -p "$dir"
start=$(date +%s)
i=0
failed=0
for e in "${exps[@]}"; do
  i=$((i + 1))
  name=$(basename "$(dirname "$e")")
  echo "== [$i/${#exps[@]}] $name ($(( $(date +%s) - start ))s elapsed)" >&2
  # 06-decode checks the report's single-kernel prediction from this same run: write it first.
  if [ "$name" = 06-decode ]; then python3 scripts/report.py "$dir" >/dev/null || failed=$((failed + 1)); fi
  # An experiment that fails writes no JSON, and an earlier run's must not stand in for it: the
  # report (and 06's prediction, read from it) would mix another run's, perhaps another card's,
  # figures into this one's (make run of 2e25bfa: 02 stopped and 1b68669's 02-gemv.json was used).
  rm -f "$dir/$name.json"
  "$e" $quick --json "$dir/$name.json" > "$dir/$name.txt"
  rc=$?
  cat "$dir/$name.txt"
  if [ $rc -ne 0 ]; then
    echo "run_all: $name exited $rc" >&2
    failed=$((failed + 1))
  fi
done
python3 scripts/report.py "$dir" || failed=$((failed + 1))
echo "== done in $(( $(date +%s) - start ))s: results in $dir ($failed failed)" >&2
[ $failed -eq 0 ]
