#!/usr/bin/env bash
# Builds xconn (Release) and packs it as a Debian package (cmake/package.cmake, `cpack -G DEB`).
# usage: tools/package.sh [BUILD_DIR]
# BUILD_DIR (or $XCONN_BUILD_DIR) defaults to build/, the folder tools/test.sh builds: one configured there is
# reused with its options. Progress goes to stderr; stdout gets one line, the absolute path of the .deb.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${XCONN_BUILD_DIR:-build}}
fail() { echo "package.sh: $*" >&2; exit 1; }

[ -x tools/xconnctl/xconnctl ] || fail "tools/xconnctl/xconnctl is missing or not executable"
cache="$build/CMakeCache.txt"
if [ -f "$cache" ]; then
  type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")
  [ "$type" = Release ] || fail "$build is a '$type' build; package a Release build (give another BUILD_DIR)"
  ! grep -qE '^XCONN_(SANITIZE|FUZZ):BOOL=ON' "$cache" || fail "$build is a sanitizer or fuzz build"
fi
{
  # A configured folder is only built (which re-runs the configure itself when a CMake file changed): an
  # explicit configure would stamp a new build time and rebuild every plugin. A new one is configured as
  # tools/test.sh does it.
  [ -f "$cache" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j"$(nproc)"
} >&2
build=$(cd "$build" && pwd)
out="$build/deb"
rm -rf "$out"
(cd "$build" && cpack --config CPackConfig.cmake -G DEB -B "$out") >&2
shopt -s nullglob
debs=("$out"/*.deb)
((${#debs[@]} == 1)) || fail "cpack wrote ${#debs[@]} .deb files into $out, expected one"
echo "${debs[0]}"
