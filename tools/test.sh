#!/usr/bin/env bash
# Builds xconn twice (Release, then ASan+UBSan) and runs the whole test suite on each; between them the crash chaos
# (10 kills under mixed load, tools/chaos.sh) and the Debian package (built, checked, installed into a scratch Debian
# root and run there: tests/package/run.sh); last every libFuzzer target for 30 s (tools/fuzz.sh). First of all,
# every stage's packages are checked (tools/setup.sh --check), so a gap fails here, not in the last stage.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --check
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
(cd build && ctest -j"$jobs" --timeout 300 --output-on-failure)
tools/chaos.sh 10
tests/package/run.sh build
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DXCONN_SANITIZE=ON -DXCONN_BUILD_BENCH=OFF
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest -j"$jobs" --timeout 600 --output-on-failure)
tools/fuzz.sh all 30
