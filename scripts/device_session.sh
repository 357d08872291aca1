#!/usr/bin/env bash
# What the lead runs on a lent GPU machine, in two calls (each call is limited to 10 minutes):
#   bash scripts/device_session.sh check OUT   build, make check (quick runs, validation, SASS rules),
#                                              planted faults on the GPU; logs packed into OUT/check.tgz
#   bash scripts/device_session.sh run OUT     make run: the full results, packed into OUT/results.tgz
#   bash scripts/device_session.sh all OUT     both in one call: make run first (results saved),
#                                              then make check within what is left of LIMIT seconds
#   bash scripts/device_session.sh probe OUT   build; 01's launch-size family, 02 at 4096x4096 (with the
#                                              read-only bound), 06 in full; 01's SASS and its rules: the
#                                              new measurements of a change, before the full run
#   bash scripts/device_session.sh headline OUT    short of a make run: build 01, 02 and 06; 01 in full (this
#                                              card's ceiling, in results/<gpu>/), 06 in full and 02 at
#                                              4096x4096, their output as 0N-*-<commit>.json/.txt in OUT
#                                              (beside the make run's files, never over them)
#   bash scripts/device_session.sh sanitize06 OUT   06-decode under compute-sanitizer's four tools, both
#                                              models (2 layers each under a sanitizer), side by side by
#                                              scripts/sanitize.sh within LIMIT seconds; build/sanitize
#                                              packed into OUT/sanitize06.tgz. All but the 8B's racecheck:
#                                              whole it takes ~650 s on an H100 (12 ring modes, ~50 s
#                                              each), more than a call, so it runs in two calls:
#   bash scripts/device_session.sh race8b-gohc OUT  the 8B's racecheck of the group_o/head_count ring kernels
#   bash scripts/device_session.sh race8b-base OUT  ... of the base ring kernel (compute-sanitizer's kernel
#                                              filter; the other kernels run uninstrumented). Packed into
#                                              OUT/<mode>.tgz. H100 at 507ffc4: 307 s and 491 s.
#   bash scripts/device_session.sh chainprobe OUT  02's chained-dependency probe (02-gemv/probes/chain_probe.cu),
#                                              set SET (default pipe), its output in OUT/chain_probe-SET.txt
#   bash scripts/device_session.sh chaincheck OUT   02 at 4096x4096 (make's build) and the chain probe's pipe set on
#                                              the same card, one call: does the probe's restatement of v4
#                                              r1 c8 pipelined chain like 02's own? OUT/02-gemv-4096-<commit>.*
#                                              and OUT/chain_probe-pipe.txt (32 copies of W), then
#                                              OUT/chain_probe-pipe-copiesN.txt (02's N copies: 02's harness)
#   bash scripts/device_session.sh datachain OUT   the data-carried chain, one call: the chain probe's data set (its
#                                              SASS rules; 32 copies), 02 --quick at 4096x4096 (the real chain
#                                              by the wait and by the data) and 02's SASS rules (the _data_pdl
#                                              kernels' among them), the probe again with 02's
#                                              copies; OUT/chain_probe-data*.txt, OUT/02-gemv-4096-quick-<commit>.*
#   bash scripts/device_session.sh releaseprobe OUT  05's release probe (05-sync/probes/release_probe.cu): a grid
#                                              barrier's arrival with bytes in flight; OUT/release_probe.txt
#                                              and its SASS (OUT/release_probe.sass)
#   bash scripts/device_session.sh workingset OUT  02 at SHAPE (default 4096x4096) twice, side by side: with the rule's
#                                              working set (4x the L2) and with --working-set 20 (the original's 32
#                                              copies of W on an H100), REPS rounds (default 1); the fastest chained
#                                              rows of each; OUT/02-gemv-SHAPE-ws{4,20}-<commit>[-round].{txt,json}
#   bash scripts/device_session.sh latencyprobe OUT  05's loaded-latency probe (05-sync/probes/loaded_latency.cu):
#                                              a dependent load's round trip, L2 hit and DRAM miss, on SMs that
#                                              stream and on SMs that do not; OUT/loaded_latency.txt
#   bash scripts/device_session.sh pdlprobe OUT  05's PDL-boundary-under-a-stream probe (05-sync/probes/pdl_loaded.cu):
#                                              an empty kernel chain's boundary beside a streamer holding every
#                                              SM; OUT/pdl_loaded.txt, its SASS and the SASS rules' verdict
#   bash scripts/device_session.sh pacedprobe OUT  06's paced-ring probe (06-decode/probes/paced_ring.cu): a layer's
#                                              chains with the ring's feed and with a pacing producer warp;
#                                              OUT/paced_ring.txt, its SASS and the SASS rules' verdict
#   bash scripts/device_session.sh h200 OUT      what waits for an H200, one call (exit 3 at once on any other
#                                              card, so a call that lands elsewhere costs only its start): all
#                                              (OUT/all, LIMIT less 100 s), then pdlprobe (OUT/pdl) and datachain
#                                              (OUT/dc) in what is left of LIMIT (575 s)
#   bash scripts/device_session.sh sparse OUT    05's sparse readiness (a consumer that waits for F neighbours, not all
#                                              blocks) beside ready_* and the barriers, and the straggler table (a
#                                              barrier, an all-to-all and a sparse exchange after one block's extra
#                                              work each generation), full sweep, boundaries left
#                                              out (OUT/05-sparse.{txt,json}); both planted faults carried by each
#                                              sparse form (each must exit 1); make check's 05 (--quick + SASS rules);
#                                              all of it packed into OUT/sparse.tgz (a call brings back 8 files)
#   bash scripts/device_session.sh preload OUT   02's v9 (the preloaded share): --quick at three shapes of K = 2048-8192
#                                              (validation, ring depths; PRELOAD_MORE=1 adds two), 4096x4096
#                                              --quick (PRELOAD_FULL=1: in full) beside every other rung,
#                                              02's SASS rules; packed into OUT/preload.tgz
#   bash scripts/device_session.sh attnfine OUT  06 built with DECODE_ATTN_FINE=1 (four more stamps inside the
#                                              attention item) beside the product's build; --quick --model all
#                                              twice with the knob and once without; OUT/{fine,prod}-N.{txt,json}
#   bash scripts/device_session.sh variants OUT  06 built several ways (the tree, a carried decode_base.cu, the ring's
#                                              2 KB and 1 KB pieces), interleaved runs on one card; OUT/variants.txt
# run and all pack results/<gpu>/ of the GPU they ran on (results.tgz), whichever it was.
set -u -o pipefail
cd "$(dirname "$0")/.."
mode=$1; out=$2
mkdir -p "$out"
# The lent machine's copy carries a .git of the session's first commit; the commit actually
# built travels in .git-commit / .git-dirty (written before each call). The Makefile stamps the
# binaries from them by itself (since bc4630e, so a make outside this script does too); here the
# commit only names the files of headline and chainprobe.
commit=$(cat .git-commit 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# ... and the Makefile takes the stamp from those files whatever the copy's .git holds (a copy
# whose .git held the commit built once stamped a clean tree dirty: results/h200/run-14dce4c).
export SUITE_STAMP_FROM_FILES=1
# The probes beside the experiments (NN-name/probes/NAME.cu, sm_90, not in make): build_probe NAME
# SRC builds build/NAME by the command in their headers; probe_out FILE CMD... runs CMD with the
# card, its clocks and the commit first, all of it into OUT/FILE and stdout; CMD's exit status.
build_probe() {
  mkdir -p build && nvcc -O3 -std=c++17 -arch=sm_90 -o "build/$1" "$2" > "$out/build.log" 2>&1 \
    || { tail -40 "$out/build.log"; exit 1; }
}
probe_out() {
  local file=$1; shift
  { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader; echo "commit $commit"; "$@"; } 2>&1 | tee "$out/$file"
  return "${PIPESTATUS[0]}"
}
# probe_sass NAME SRC: the built probe's SASS into OUT/NAME.sass, checked against the sass rules of
# SRC's NAME.rules (the CI checks its ptx rules), the verdict into OUT/NAME.asmcheck.txt and stdout;
# the check's exit status.
probe_sass() {
  { echo "// $1: SASS for sm_90 (cuobjdump -sass)"; cuobjdump -sass "build/$1"; } > "$out/$1.sass" 2>&1
  python3 tests/asmcheck.py --target sass --rules "${2%.cu}.rules" --asm "$out/$1.sass" --tag "$1" \
    > "$out/$1.asmcheck.txt" 2>&1
  local rc=$?
  echo "sass rules: $(tail -1 "$out/$1.asmcheck.txt")"; grep '^FAIL' "$out/$1.asmcheck.txt" | head -10
  return $rc
}
# sass_probe NAME SRC: build_probe, probe_sass, then probe_out NAME.txt (--quick when QUICK is
# set); the run's exit status if it failed, else the SASS check's (a failing rule must fail the
# call: release_probe's failed unnoticed while only the probe's status counted).
sass_probe() {
  build_probe "$1" "$2"
  probe_sass "$1" "$2"; local sass_rc=$?
  probe_out "$1.txt" "build/$1" ${QUICK:+--quick} || return $?
  return $sass_rc
}
# pack_out NAME: everything in OUT into OUT/NAME.tgz, the loose files then removed (a call brings
# back at most 8 files).
pack_out() {
  tar czf "$out/$1.tgz" -C "$out" $(cd "$out" && ls) && (cd "$out" && ls | grep -v "^$1.tgz\$" | xargs rm -f)
}
# run_copies JSON: how many rotating copies of W 02 used in that run (its default rotation: 20x the
# L2 since b26188c, the rule's 4x before): the smallest weight_copies of its rows (with
# --working-set under 20, the deep rotation's are larger); 0 if none.
run_copies() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(min(r['weight_copies'] for r in d['rows'] if r.get('weight_copies')))" \
    "$1" 2>/dev/null || echo 0
}
case $mode in
  check)
    make -j16 all > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    make check 2>&1 | tee "$out/check.txt"
    rc=${PIPESTATUS[0]}
    tar czf "$out/check.tgz" build/check 01-ceiling/ceiling.s 02-gemv/gemv.s 03-dlops/dlops.s 04-reduce/reduce.s 05-sync/sync.s 06-decode/decode.s 2>/dev/null
    exit $rc ;;
  run)
    make -j16 all > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    make run 2>&1 | tee "$out/run.txt" | grep -vE "^\[[0-9]{2}-" | tail -60
    rc=${PIPESTATUS[0]}
    tar czf "$out/results.tgz" "$(01-ceiling/ceiling --print-results-dir)"
    exit $rc ;;
  probe)
    make -j16 all > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    make 01-ceiling/ceiling.s > /dev/null 2>&1
    cp 01-ceiling/ceiling.s "$out/01-ceiling.s"
    python3 tests/asmcheck.py --target sass --rules 01-ceiling/asm.rules --asm 01-ceiling/ceiling.s | tail -3
    rc=0
    01-ceiling/ceiling --family launch --json "$out/01-launch.json" > "$out/01-launch.txt" || rc=1
    02-gemv/gemv --shape 4096x4096 --json "$out/02-4096.json" > "$out/02-4096.txt" || rc=1
    06-decode/decode --json "$out/06-decode.json" > "$out/06-decode.txt" || rc=1
    grep -A40 "launch size: back" "$out/01-launch.txt" | head -60
    grep -A16 "read-only bound" "$out/02-4096.txt"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: v for k, v in d['summary'].items() if 'persistent' in k or 'prediction' in k})" "$out/06-decode.json"
    exit $rc ;;
  all)
    t0=$(date +%s)
    make -j16 all > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    echo "built in $(( $(date +%s) - t0 ))s"
    make run > "$out/run.txt" 2>&1
    rc_run=$?
    tar czf "$out/results.tgz" "$(01-ceiling/ceiling --print-results-dir)"
    grep -E "^== |run_all|error|FAIL|report:" "$out/run.txt" | tail -30
    echo "make run rc=$rc_run after $(( $(date +%s) - t0 ))s"
    left=$(( ${LIMIT:-560} - ($(date +%s) - t0) ))
    if [ $left -gt 60 ]; then
      timeout $left make check > "$out/check.txt" 2>&1
      echo "make check rc=$? after $(( $(date +%s) - t0 ))s"
      grep -E "^(FAIL|SKIP)|check:|planted" "$out/check.txt" | head -30
      tar czf "$out/check.tgz" build/check build/faults_gpu.json 01-ceiling/ceiling.s 02-gemv/gemv.s 03-dlops/dlops.s 04-reduce/reduce.s 05-sync/sync.s 06-decode/decode.s 2>/dev/null
    fi
    exit $rc_run ;;
  headline)
    t0=$(date +%s)
    make -j16 01-ceiling/ceiling 02-gemv/gemv 06-decode/decode > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    echo "built in $(( $(date +%s) - t0 ))s"
    d=$(01-ceiling/ceiling --print-results-dir) || exit 1
    mkdir -p "$d"; rc=0
    01-ceiling/ceiling --json "$d/01-ceiling.json" > "$out/01-ceiling-$commit.txt" 2>&1 || rc=1
    cp "$d/01-ceiling.json" "$out/01-ceiling-$commit.json" 2>/dev/null
    echo "01 rc=$rc after $(( $(date +%s) - t0 ))s"; grep -E "ceiling_gbps" "$d/01-ceiling.json" | head -2
    06-decode/decode --json "$out/06-decode-$commit.json" > "$out/06-decode-$commit.txt" 2>&1 || rc=1
    echo "06 after $(( $(date +%s) - t0 ))s"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: v for k, v in d['summary'].items() if any(w in k for w in ('persistent_us', 'fraction', 'prediction', 'floor_us', 'engine', 'mode', 'ceiling'))})" "$out/06-decode-$commit.json"
    02-gemv/gemv --shape 4096x4096 --json "$out/02-gemv-4096-$commit.json" > "$out/02-gemv-4096-$commit.txt" 2>&1 || rc=1
    echo "02 after $(( $(date +%s) - t0 ))s"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print({k: v for k, v in d['summary'].items() if '4096' in k and 'us' not in k[:3]})" "$out/02-gemv-4096-$commit.json"
    exit $rc ;;
  sanitize06)
    t0=$(date +%s)
    make -j16 06-decode/decode > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    echo "built in $(( $(date +%s) - t0 ))s"
    # make sanitize's script, both models and all four tools side by side, within what is left of LIMIT
    SANITIZE_TIMEOUT=$(( ${LIMIT:-560} - ($(date +%s) - t0) )) bash scripts/sanitize.sh \
      $(for t in memcheck synccheck initcheck racecheck; do echo "06-decode/decode:$t"; done) \
      $(for t in memcheck synccheck initcheck; do echo "06-decode/decode@--model=8b:$t"; done)
    rc=$?
    tar czf "$out/sanitize06.tgz" build/sanitize
    exit $rc ;;
  chainprobe)
    build_probe chain_probe 02-gemv/probes/chain_probe.cu
    probe_sass chain_probe 02-gemv/probes/chain_probe.cu; sass_rc=$?
    probe_out "chain_probe-${SET:-pipe}.txt" build/chain_probe "${SET:-pipe}" || exit $?
    exit $sass_rc ;;
  chaincheck)
    t0=$(date +%s)
    make -j16 02-gemv/gemv > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    echo "built in $(( $(date +%s) - t0 ))s"
    rc=0
    02-gemv/gemv --shape 4096x4096 --json "$out/02-gemv-4096-$commit.json" > "$out/02-gemv-4096-$commit.txt" 2>&1 || rc=1
    grep -iE "pipelined|no wait|best" "$out/02-gemv-4096-$commit.txt" | grep -iE "chained|bound|best" | head -20
    build_probe chain_probe 02-gemv/probes/chain_probe.cu
    probe_out chain_probe-pipe.txt build/chain_probe pipe > /dev/null || rc=1
    grep -E "median" "$out/chain_probe-pipe.txt"
    # and with as many rotating copies of W as 02 used on this card: the same harness
    copies=$(run_copies "$out/02-gemv-4096-$commit.json")
    if [ "${copies:-0}" -ge 2 ]; then
      probe_out "chain_probe-pipe-copies$copies.txt" build/chain_probe pipe "$copies" > /dev/null || rc=1
      grep -E "copies|median" "$out/chain_probe-pipe-copies$copies.txt"
    fi
    exit $rc ;;
  datachain)
    build_probe chain_probe 02-gemv/probes/chain_probe.cu
    probe_sass chain_probe 02-gemv/probes/chain_probe.cu; rc=$?
    probe_out chain_probe-data.txt build/chain_probe data > /dev/null || rc=1
    grep -E "median|timeline|gave up" "$out/chain_probe-data.txt"
    make -j16 02-gemv/gemv 02-gemv/gemv.s > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    json="$out/02-gemv-4096-quick-$commit.json"
    02-gemv/gemv --quick --shape 4096x4096 --json "$json" > "${json%.json}.txt" 2>&1 || rc=1
    grep -E "^\| 4096" "${json%.json}.txt" | grep -E "real dependency|chained  " | head -12
    python3 tests/asmcheck.py --target sass --rules 02-gemv/asm.rules --asm 02-gemv/gemv.s --tag 02-gemv > "$out/02-gemv.asmcheck.txt" 2>&1 || rc=1
    echo "02 sass rules: $(tail -1 "$out/02-gemv.asmcheck.txt")"; grep '^FAIL' "$out/02-gemv.asmcheck.txt" | head -10
    # the probe again with as many rotating copies of W as 02 used on this card
    copies=$(run_copies "$json")
    if [ "${copies:-0}" -ge 2 ]; then
      probe_out "chain_probe-data-copies$copies.txt" build/chain_probe data "$copies" > /dev/null || rc=1
      grep -E "median|gave up" "$out/chain_probe-data-copies$copies.txt"
    fi
    exit $rc ;;
  releaseprobe)
    sass_probe release_probe 05-sync/probes/release_probe.cu
    exit $? ;;
  workingset)
    make -j16 02-gemv/gemv > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    rc=0; shape=${SHAPE:-4096x4096}
    for rep in $(seq "${REPS:-1}"); do
      for ws in 4 20; do
        f="$out/02-gemv-$shape-ws$ws-$commit${REPS:+-$rep}"
        02-gemv/gemv --shape "$shape" --no-vendor --working-set "$ws" --json "$f.json" > "$f.txt" 2>&1 || rc=1
        echo "== $shape, working set ${ws}x L2${REPS:+, round $rep}"; grep -E "^error" "$f.txt"
        python3 scripts/chained_top.py "$f.json" 6
      done
    done
    exit $rc ;;
  preload)
    t0=$(date +%s)
    make -j16 02-gemv/gemv 02-gemv/gemv.s > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    echo "built in $(( $(date +%s) - t0 ))s"
    rc=0
    # v9 at the other widths and ring depths first (K = 2048 / 8192; shares beyond one round)
    for sh in 2048x2048 2048x8192 6144x4096 ${PRELOAD_MORE:+3072x2048 8192x8192}; do
      02-gemv/gemv --quick --no-vendor --shape $sh --json "$out/02-$sh.json" > "$out/02-$sh.txt" 2>&1; r=$?
      [ $r -eq 0 ] || rc=1
      echo "$sh rc=$r: $(grep -E '\| 9 preloaded' "$out/02-$sh.txt" | awk -F'|' '{print $4, $5, $10}' | tr -s ' ' | paste -sd ';')"
    done
    echo "widths done after $(( $(date +%s) - t0 ))s"
    # 4096x4096 (--quick unless PRELOAD_FULL is set: the full sweep takes minutes): every chained
    # configuration of every rung beside v9's, one run
    q=quick; qflag=--quick; [ -z "${PRELOAD_FULL:-}" ] || { q=full; qflag=; }
    probe_out "02-gemv-4096-$q-$commit.txt" 02-gemv/gemv --shape 4096x4096 $qflag \
      --json "$out/02-gemv-4096-$q-$commit.json" > /dev/null || rc=1
    grep -E "\| chained +\|" "$out/02-gemv-4096-$q-$commit.txt" | sort -t'|' -k8 -n | head -12
    grep -E "preloaded" "$out/02-gemv-4096-$q-$commit.txt" | head -12
    grep -A12 '"summary"' "$out/02-gemv-4096-$q-$commit.json"
    echo "4096 done after $(( $(date +%s) - t0 ))s"
    # 02's SASS rules (what make check runs after --quick; the runs above validated every configuration)
    python3 tests/asmcheck.py --target sass --rules 02-gemv/asm.rules --asm 02-gemv/gemv.s --tag "02-gemv sass" \
      > "$out/02-gemv.sass-rules.txt" 2>&1 || rc=1
    echo "sass rules: $(tail -1 "$out/02-gemv.sass-rules.txt")"; grep -E '^FAIL|gemv_preload' "$out/02-gemv.sass-rules.txt" | head -24
    cp 02-gemv/gemv.s "$out/02-gemv.s" 2>/dev/null
    pack_out preload
    exit $rc ;;
  latencyprobe)
    sass_probe loaded_latency 05-sync/probes/loaded_latency.cu
    exit $? ;;
  pdlprobe)
    sass_probe pdl_loaded 05-sync/probes/pdl_loaded.cu
    exit $? ;;
  pacedprobe)
    sass_probe paced_ring 06-decode/probes/paced_ring.cu
    exit $? ;;
  sparse)
    make -j16 05-sync/sync 05-sync/sync.s > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    rc=0
    for sch in sparse8_acqrel sparse8_data; do
      for f in hang stale; do
        05-sync/sync --quick --only $sch --plant-fault $f > "$out/fault-$sch-$f.txt" 2>&1; r=$?
        echo "planted $f in $sch: exit $r (must be 1): $(grep -m1 '^error' "$out/fault-$sch-$f.txt")"
        [ $r -eq 1 ] || rc=1
      done
    done
    probe_out 05-sparse.txt 05-sync/sync --skip-boundaries --json "$out/05-sparse.json" \
      --only monotonic_acqrel,monotonic_relaxed,ready_acqrel,ready_relaxed,data_carried_padded,sparse2_relaxed,sparse2_acqrel,sparse8_relaxed,sparse8_acqrel,sparse32_relaxed,sparse32_acqrel,sparse2_data,sparse8_data,sparse32_data \
      > /dev/null || rc=1
    grep -A16 "^### headline" "$out/05-sparse.txt"; grep -A18 "^### a straggler" "$out/05-sparse.txt"
    grep -A22 '"summary"' "$out/05-sparse.json"
    GIT_COMMIT=$commit GIT_DIRTY=$(cat .git-dirty 2>/dev/null || echo 1) bash scripts/check.sh 05-sync/sync \
      | tee "$out/check-05.txt"; [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    cp build/check/05-sync.sass.txt "$out/" 2>/dev/null
    pack_out sparse
    exit $rc ;;
  h200)
    t0=$(date +%s)
    nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "h200: not an H200: nothing run"; exit 3; }
    rc=0; limit=${LIMIT:-575}
    mkdir -p "$out/pdl" "$out/dc" "$out/all"
    self=scripts/device_session.sh  # the working directory is the repository root (above)
    # make run and make check first (the issue's keys, over 02's 20x rotation since b26188c), the
    # probes in what is left
    LIMIT=$(( limit - 100 )) timeout $(( limit - 90 )) bash "$self" all "$out/all" > "$out/all/session.txt" 2>&1; r=$?
    [ $r -eq 0 ] || rc=1
    echo "all rc=$r after $(( $(date +%s) - t0 ))s"; tail -25 "$out/all/session.txt"
    for m in pdlprobe:pdl datachain:dc; do
      left=$(( limit - ($(date +%s) - t0) ))
      [ $left -gt 60 ] || { echo "h200: ${left}s of LIMIT left: ${m%%:*} not started"; rc=1; continue; }
      timeout "$left" bash "$self" "${m%%:*}" "$out/${m#*:}" > "$out/${m#*:}/session.txt" 2>&1; r=$?
      [ $r -eq 0 ] || rc=1
      echo "${m%%:*} rc=$r after $(( $(date +%s) - t0 ))s"
    done
    grep -E "^ +[0-9]+ " "$out/pdl/session.txt"; grep -E "median|sass rules|gave up" "$out/dc/session.txt" | head -40
    rm -f "$out"/*/*.sass
    exit $rc ;;
  attnfine)
    t0=$(date +%s)
    make -j8 06-decode/decode > "$out/build.log" 2>&1 &
    make -j8 O=build/fine/ XDEFS=-DDECODE_ATTN_FINE=1 build/fine/06-decode/decode > "$out/build-fine.log" 2>&1 &
    wait
    [ -x 06-decode/decode ] && [ -x build/fine/06-decode/decode ] || { tail -30 "$out"/build*.log; exit 1; }
    echo "built in $(( $(date +%s) - t0 ))s"
    rc=0
    for run in fine-1 prod-1 fine-2; do
      bin=06-decode/decode; [ "${run%-*}" = fine ] && bin=build/fine/06-decode/decode
      "$bin" --quick --model all --json "$out/$run.json" > "$out/$run.txt" 2>&1 || rc=1
      echo "$run: $(grep -E '^\| Llama-3\.[0-9]-[0-9]+B +\| persistent_ring +\|' "$out/$run.txt" | awk -F'|' '$4 + 0 > 1 {printf "%s %s us; ", $2, $4}')"
    done
    exit $rc ;;
  variants)
    # 06 built several ways, interleaved runs on one card. A variant: new (make's build of the
    # tree), base (06-decode/decode_base.cu when the call carries one: the code before a change,
    # built with the same flags), seg512 / seg256 (DECODE_RING_SEG: the ring's pieces 2 KB / 1 KB
    # wide instead of 4 KB, so fewer bytes in flight at the same slots). RUNS: lines "VARIANT
    # MODEL SLOTS" (default below, twice over). Each run's kept mode and median, and the best
    # median of each group_o family, into OUT/variants.txt; the outputs packed into
    # OUT/variants.tgz. Stops starting runs when LIMIT (560 s) is near.
    t0=$(date +%s)
    runs=${RUNS:-$(printf 'new 1b 2\nbase 1b 2\nseg512 1b 2\nseg256 1b 2\nseg256 1b 4\nnew 8b 2\nbase 8b 2\n%.0s' 1 2)}
    # the default list runs base only when the call carries its source; a RUNS naming it must
    if [ -z "${RUNS:-}" ] && [ ! -f 06-decode/decode_base.cu ]; then
      echo "variants: no 06-decode/decode_base.cu carried: the default runs without base"
      runs=$(echo "$runs" | grep -v '^base ')
    fi
    make -j16 06-decode/decode > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    for seg in 512 256; do
      echo "$runs" | grep -q "^seg$seg " && \
        make O=build/seg$seg/ XDEFS=-DDECODE_RING_SEG=$seg build/seg$seg/06-decode/decode > "$out/build-seg$seg.log" 2>&1 &
    done
    if echo "$runs" | grep -q "^base "; then
      [ -f 06-decode/decode_base.cu ] || { echo "variants: base asked for, no 06-decode/decode_base.cu carried"; exit 2; }
      mkdir -p build/base
      nvcc -O3 -std=c++17 -lineinfo -gencode=arch=compute_90,code=sm_90 -Xcompiler -Wall \
        -DSUITE_GIT_COMMIT="\"base-of-$commit\"" -DSUITE_GIT_DIRTY=1 -DSUITE_BUILD_ARCH='"sm_90"' \
        -o build/base/decode 06-decode/decode_base.cu > "$out/build-base.log" 2>&1 &
    fi
    wait
    bin_of() { case $1 in new) echo 06-decode/decode ;; base) echo build/base/decode ;; *) echo "build/$1/06-decode/decode" ;; esac; }
    while read -r v model slots; do [ -x "$(bin_of "$v")" ] || { echo "variants: $v did not build"; tail -30 "$out"/build*.log; exit 1; }; done <<< "$runs"
    echo "built in $(( $(date +%s) - t0 ))s"
    rc=0; n=0
    while read -r v model slots; do
      [ $(( $(date +%s) - t0 )) -lt $(( ${LIMIT:-560} - 45 )) ] || { echo "stopping: LIMIT near"; break; }
      n=$((n + 1)); f="$out/06-$model-$v-slots$slots-$n.txt"
      "$(bin_of "$v")" --model "$model" --ring-slots "$slots" > "$f" 2>&1 || rc=1
      name=$(grep -oE '\| Llama-3\.[0-9]+-[0-9]+B +\| persistent_ring +\| [0-9.]+' "$f" | head -1 | awk '{print $NF}')
      kept=$(grep -oE '\([0-9]+ waited at: [^)]*\)' "$f" | head -1 | sed 's/.*: //; s/)//')
      fam=$(for x in "group_o " "group_o+hold "; do
              m=$(grep -E "^\| Llama-3\.[0-9]+-[0-9]+B +\| [a-z_+]*${x//+/\\+}" "$f" | awk -F'|' 'NF == 8 && $4 ~ /^ *[0-9.]+ *$/ {print $4+0}' | sort -n | head -1)
              printf '%s%s ' "${x% }" "=${m:-none}"; done)
      echo "run $n $v $model slots $slots: kept $name us ($kept); best $fam; after $(( $(date +%s) - t0 ))s" | tee -a "$out/variants.txt"
    done <<< "$runs"
    for f in "$out"/06-*-slots*-*.txt; do
      kept=$(grep -oE '\([0-9]+ waited at: [^)]*\)' "$f" | head -1 | sed 's/.*: //; s/)//')
      echo "== $(basename "$f") ($kept)"
      grep -E "^\| Llama-3\.[0-9]+-[0-9]+B +\| $(echo "$kept" | sed 's/+/\\+/g') +\| [a-z_]+ +\|" "$f" | cut -d'|' -f4,6-13
    done >> "$out/variants.txt"
    tar czf "$out/variants.tgz" -C "$out" $(cd "$out" && ls 06-*-slots*-*.txt)
    rm -f "$out"/06-*-slots*-*.txt
    exit $rc ;;
  race8b-gohc|race8b-base)
    t0=$(date +%s)
    make -j16 06-decode/decode > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    echo "built in $(( $(date +%s) - t0 ))s"
    re='^decode_ring_hd128$'; [ "$mode" = race8b-gohc ] && re='decode_ring_(go|hc)_hd128'
    SANITIZE_ARGS="--kernel-name regex=$re" SANITIZE_TIMEOUT=$(( ${LIMIT:-560} - ($(date +%s) - t0) )) \
      bash scripts/sanitize.sh "06-decode/decode@--model=8b:racecheck"
    rc=$?
    tar czf "$out/$mode.tgz" build/sanitize
    exit $rc ;;
  *)
    echo "device_session: unknown mode $mode (check, run, all, probe, headline, sanitize06, race8b-gohc, race8b-base, chainprobe, chaincheck, datachain, releaseprobe, workingset, preload, latencyprobe, pdlprobe, pacedprobe, sparse, attnfine, h200, variants)" >&2; exit 2 ;;
esac
