#!/usr/bin/env bash
# make sanitize (on a GPU): every experiment in --quick mode under compute-sanitizer's
# memcheck, racecheck, synccheck and initcheck; counts the errors each tool reports and writes
# build/sanitize/summary.json ({"sanitizer_runs", "sanitizer_errors", "sanitizer_failed_runs"}).
# The experiments run side by side (one background job each, its four tools in turn): the
# sanitizers are mostly host-bound, and timings under them mean nothing anyway. A run that
# exceeds SANITIZE_TIMEOUT seconds (default 900) counts as failed, never as clean. 900: with all six
# experiments side by side on the H200 machine's 16 cores, 06's racecheck took 414 s and 02's ran past
# 420 s (273 s alone), so the old 400 s default failed runs that were only slow.
set -u -o pipefail
cd "$(dirname "$0")/.."
export SUITE_RESULTS_ROOT=build/results-quick
export SUITE_SANITIZE=1  # timing plans shrink to one launch (common/timing.h)
CS=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$CS" ] || { echo "sanitize: skipped: compute-sanitizer not found"; exit 77; }
TOOLS=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
mkdir -p build/sanitize
rm -f build/sanitize/*.result
# An argument: binary[@arg,arg][:tool,tool]. The @ arguments go to the binary after --quick
# (06-decode/decode@--model=8b) and name its records apart (06-decode-model-8b).
name_of() {
  local e=${1%%:*} args=""
  [[ $e == *@* ]] && args=${e#*@} && e=${e%%@*}
  echo "$(basename "$(dirname "$e")")${args:+$(echo "-$args" | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//')}"
}
one() {  # its tools in turn, one result line per tool
  local e=${1%%:*} tools=$TOOLS args="" name tool log rc n
  [ "$1" != "$e" ] && tools=${1#*:} && tools=${tools//,/ }
  [[ $e == *@* ]] && args=${e#*@} && args=${args//,/ } && e=${e%%@*}
  name=$(name_of "$1")
  for tool in $tools; do
    log=build/sanitize/$name.$tool.txt
    local t0=$(date +%s)
    local extra=""
    # racecheck of 02-gemv without the cuBLAS rungs: their split-K kernels report hazards of
    # NVIDIA's that we cannot act on, and take most of the run (memcheck and initcheck keep them).
    [ "$name:$tool" = "02-gemv:racecheck" ] && extra=--no-vendor
    # initcheck of 02-gemv: cuBLASLt's split-K reduce reports tens of thousands of reads; every
    # report is printed (not the default first 100) so each is attributed to its kernel.
    local csx=""
    [ "$name:$tool" = "02-gemv:initcheck" ] && csx="--print-limit 0"
    timeout "${SANITIZE_TIMEOUT:-900}" "$CS" --tool "$tool" --error-exitcode 99 $csx ${SANITIZE_ARGS:-} "$e" --quick $args $extra > "$log" 2>&1
    rc=$?
    # The errors the tool reports (-1: no summary line, the run did not finish) and how many of
    # them it locates inside the vendor library's own kernels (cuBLAS's nvjet/cublasLt/cutlass):
    # those are counted apart, never as ours. One parser for this and for reliability.json.
    read -r n v < <(python3 scripts/reliability.py --count "$log")
    echo "$name $tool $rc $n $(( $(date +%s) - t0 )) $v" >> "build/sanitize/$name.result"
  done
}
for e in "$@"; do one "$e" & done
wait
runs=0; bad=0; errors=0; skipped=0; vendor=0; records=""
# One tally per experiment, however many arguments named it (one per tool runs them side by side).
for name in $(for e in "$@"; do name_of "$e"; done | awk '!seen[$0]++'); do
  while read -r _ tool rc n secs v; do
    runs=$((runs + 1))
    ours=$n; [ "$n" -ge 0 ] && ours=$((n - v))
    vendor=$((vendor + v))
    records="$records${records:+, }{\"experiment\": \"$name\", \"tool\": \"$tool\", \"exit\": $rc, \"errors\": $n, \"vendor_errors\": $v, \"seconds\": $secs}"
    if [ "$rc" = 77 ]; then skipped=$((skipped + 1)); echo "SKIP $name $tool: no GPU"; continue; fi
    if [ "$ours" = 0 ] && { [ "$rc" = 0 ] || { [ "$rc" = 99 ] && [ "$v" -gt 0 ]; }; }; then
      note=""; [ "$v" -gt 0 ] && note=" ($v reported inside the vendor library kernels)"
      echo "PASS $name $tool: 0 errors in our kernels$note (${secs}s)"; continue
    fi
    bad=$((bad + 1))
    if [ "$ours" -gt 0 ] 2>/dev/null; then errors=$((errors + ours)); fi
    case $rc in 124) why="timed out after ${secs}s";; 99) why="$n errors";; *) why="exit $rc, ${n} errors";; esac
    echo "FAIL $name $tool: $why (build/sanitize/$name.$tool.txt)"
    grep -E "^========= (Invalid|Race|Barrier|Uninitialized|Error|Program hit)|ERROR" "build/sanitize/$name.$tool.txt" | head -4
    tail -3 "build/sanitize/$name.$tool.txt"
  done < "build/sanitize/$name.result"
done
if [ $skipped -eq $runs ] && [ $runs -gt 0 ]; then echo "sanitize: skipped: no GPU"; exit 77; fi
echo "{\"sanitizer_runs\": $runs, \"sanitizer_errors\": $errors, \"sanitizer_failed_runs\": $bad, \"sanitizer_vendor_errors\": $vendor, \"runs\": [$records]}" > build/sanitize/summary.json
echo "sanitize: $((runs - bad - skipped)) passed, $bad failed ($errors errors reported)"
[ $bad -eq 0 ]
