#!/usr/bin/env bash
# Builds xconn (Release) and starts xconnd on conf/xconnd.yaml: LMDB under ./var, the echo plugin, 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
exec ./build/bin/xconnd --config conf/xconnd.yaml
