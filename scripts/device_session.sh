#!/usr/bin/env bash
# What the lead runs on a lent GPU machine, in two calls (each call is limited to 10 minutes):
#   bash scripts/device_session.sh check OUT   build, make check (quick runs, validation, SASS rules),
#                                              planted faults on the GPU; logs packed into OUT/check.tgz
#   bash scripts/device_session.sh run OUT     make run: the full results, packed into OUT/results.tgz
set -u -o pipefail
cd "$(dirname "$0")/.."
mode=$1; out=$2
mkdir -p "$out"
case $mode in
  check)
    make -j16 all > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    make check 2>&1 | tee "$out/check.txt"
    rc=${PIPESTATUS[0]}
    tar czf "$out/check.tgz" build/check 01-ceiling/ceiling.s 02-gemv/gemv.s 03-dlops/dlops.s 04-reduce/reduce.s 05-sync/sync.s 2>/dev/null
    exit $rc ;;
  run)
    make -j16 all > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    make run 2>&1 | tee "$out/run.txt" | grep -vE "^\[[0-9]{2}-" | tail -60
    rc=${PIPESTATUS[0]}
    tar czf "$out/results.tgz" results/h200
    exit $rc ;;
esac
