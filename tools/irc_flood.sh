#!/bin/bash
# The IRC flood measurement (docs/irc.md "Flood"): the irc_flood test against this build and, when given, against
# another build folder (one from before the bound, with bin/xconnd and plugins/irc.so), each with the same number
# of PRIVMSG lines. Prints the daemon's RSS before and at its peak and the warning lines it logged.
# Usage: tools/irc_flood.sh [LINES] [OTHER_BUILD_DIR]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
lines=${1:-200000}
other=${2:-}
tests="$root/build/bin/xconn_integration_tests"
[ -x "$tests" ] || tests=$(find "$root/build" -name xconn_integration_tests -type f -perm -u+x | head -1)
run() {  # label, then the environment for the test
  local label=$1
  shift
  echo "== $label"
  env XCONN_IRC_FLOOD_LINES="$lines" "$@" timeout 600 "$tests" --gtest_filter='irc_flood.*' 2>&1 |
    grep -E '^irc flood:|FAILED|OK \]' || true
}
run "this build"
[ -n "$other" ] && run "$other" XCONN_IRC_FLOOD_BUILD="$other"
exit 0
