#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (docs/fuzzing.md).
#
#   tools/fuzz.sh list               the targets
#   tools/fuzz.sh TARGET SECONDS     build (if out of date) and fuzz one target for SECONDS
#   tools/fuzz.sh all SECONDS        every target in turn, SECONDS each
#
# The build is build-fuzz/ (clang, -DXCONN_FUZZ=ON, nothing but the targets and the core libraries they use). Each
# target fuzzes a working corpus under build-fuzz/fuzz-work/TARGET/, seeded from fuzz/corpus/TARGET/ (the
# repository's seeds are never written); it grows from run to run, XCONN_FUZZ_FRESH=1 starts again from the seeds.
# One summary line per target: executions, libFuzzer's final cov: and ft:, the corpus size. Exits non-zero when a
# target found a crash, a leak, a timeout or an out-of-memory; the input that did it is kept and its path printed.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-fuzz
work=$build/fuzz-work
jobs=${XCONN_FUZZ_JOBS:-2}

targets() {
  local f
  for f in fuzz/*_fuzz.cpp; do
    f=${f#fuzz/}
    echo "${f%_fuzz.cpp}"
  done
}

usage() {
  echo "usage: tools/fuzz.sh list | TARGET SECONDS | all SECONDS" >&2
  echo "targets: $(targets | tr '\n' ' ')" >&2
  exit 2
}

build_targets() {
  if [[ ! -f $build/CMakeCache.txt ]]; then
    CC=clang CXX=clang++ cmake -S . -B "$build" -DXCONN_FUZZ=ON -DXCONN_BUILD_TESTS=OFF -DXCONN_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g" >/dev/null
  fi
  local names=() t
  for t in "$@"; do names+=("${t}_fuzz"); done
  cmake --build "$build" -j "$jobs" --target "${names[@]}"
}

# Fuzzes one target; prints its summary line; returns 1 when it found something.
run_target() {
  local name=$1 seconds=$2
  local dir=$work/$name
  local corpus=$dir/corpus artifacts=$dir/artifacts log=$dir/fuzz.log
  if [[ ${XCONN_FUZZ_FRESH:-0} == 1 ]]; then rm -rf "$corpus"; fi
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  cp fuzz/corpus/"$name"/* "$corpus"/
  local extra=()
  if [[ -f fuzz/$name.dict ]]; then extra+=("-dict=fuzz/$name.dict"); fi

  local rc=0
  "$build/bin/${name}_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "${extra[@]}" "$corpus" >"$log" 2>&1 || rc=$?

  local execs cov ft corp last found
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
  found=$(find "$artifacts" -type f | sort | tr '\n' ' ')
  local status=ok
  if [[ $rc != 0 || -n $found ]]; then status="FOUND (exit $rc) ${found:-see $log}"; fi
  printf '%-10s %4ss  execs %-10s cov %-6s ft %-6s corpus %-14s %s\n' \
    "$name" "$seconds" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$status"
  if [[ $status != ok ]]; then
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*invariant broken)' "$log" | head -n 5 | sed 's/^/    /' || true
    return 1
  fi
}

[[ $# -ge 1 ]] || usage
case $1 in
  list)
    targets
    exit 0
    ;;
esac
[[ $# -eq 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage

if [[ $1 == all ]]; then
  mapfile -t chosen < <(targets)
elif [[ -f fuzz/$1_fuzz.cpp ]]; then
  chosen=("$1")
else
  echo "no such target: $1" >&2
  usage
fi

build_targets "${chosen[@]}"
failed=0
for t in "${chosen[@]}"; do
  run_target "$t" "$2" || failed=1
done
exit "$failed"
