#!/usr/bin/env bash
# make sanitize (on a GPU): every experiment in --quick mode under compute-sanitizer's
# memcheck, racecheck, synccheck and initcheck. Counts the errors each tool reports.
set -u -o pipefail
cd "$(dirname "$0")/.."
export SUITE_RESULTS_ROOT=build/results-quick
CS=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$CS" ] || { echo "sanitize: skipped: compute-sanitizer not found"; exit 77; }
mkdir -p build/sanitize
total=0; runs=0; bad=0
for e in "$@"; do
  name=$(basename "$(dirname "$e")")
  for tool in memcheck racecheck synccheck initcheck; do
    log=build/sanitize/$name.$tool.txt
    "$CS" --tool "$tool" --error-exitcode 99 ${SANITIZE_ARGS:-} "$e" --quick > "$log" 2>&1
    rc=$?
    n=$(grep -oE "ERROR SUMMARY: [0-9]+" "$log" | tail -1 | grep -oE "[0-9]+$" || echo "?")
    [ "$n" = "?" ] && n=$([ $rc -eq 0 ] && echo 0 || echo 1)
    runs=$((runs + 1)); total=$((total + n))
    if [ $rc -eq 77 ]; then echo "SKIP $name $tool: no GPU"; continue; fi
    if [ $rc -ne 0 ] || [ "$n" != 0 ]; then bad=$((bad + 1)); echo "FAIL $name $tool: exit $rc, $n errors"; tail -5 "$log";
    else echo "PASS $name $tool: 0 errors"; fi
  done
done
echo "{\"sanitizer_runs\": $runs, \"sanitizer_errors\": $total}" > build/sanitize/summary.json
echo "sanitize: $((runs - bad)) passed, $bad failed ($total errors)"
[ $bad -eq 0 ]
