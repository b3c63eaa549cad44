#!/usr/bin/env bash
# The package tests, as CI runs them after the Release tests (as root): build the .deb (tools/package.sh, reusing
# the Release build in build/ or the folder given), check it (check_package.sh) and against the Containerfile
# (check_containerfile.py), install, run, remove and purge it in a fresh Debian 12 chroot (chroot_install.sh),
# then build the container image's root from the Containerfile's own steps and run it as the StatefulSet would
# (image_emulation.sh).
# usage: tests/package/run.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
  echo "package tests: FAIL: need root (the chroot install)" >&2
  exit 2
fi
started=$(date +%s)
deb=$(tools/package.sh "$@" | tail -n1)
echo "package: $deb ($(($(date +%s) - started))s)"
tests/package/check_package.sh "$deb"
python3 tests/deploy/check_containerfile.py --deb "$deb"
tests/package/chroot_install.sh "$deb"
tests/package/image_emulation.sh "$deb"
echo "package tests: PASS ($(($(date +%s) - started))s)"
