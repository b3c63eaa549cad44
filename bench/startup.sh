#!/usr/bin/env bash
# Time from exec to serving, and idle RSS, of xconnd with the echo plugin; the baseline in the same run is
# `xconnd --check-config` (process start + config load, no store, no plugins, no listener).
# usage: bench/startup.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/xconnd.yaml" <<YAML
server:
  listen: "127.0.0.1:0"
store:
  path: "$work/var"
plugins:
  dir: "$root/$build/plugins"
YAML
ms() { date +%s%N | awk '{printf "%d", $1/1000000}'; }
serve_total=0; check_total=0; rss=0
for ((i = 0; i < runs; i++)); do
  t0=$(ms); "$root/$build/bin/xconnd" --config "$work/xconnd.yaml" --check-config 2>/dev/null; t1=$(ms)
  check_total=$((check_total + t1 - t0))
  : > "$work/console"
  t0=$(ms)
  "$root/$build/bin/xconnd" --config "$work/xconnd.yaml" 2> "$work/console" &
  pid=$!
  for _ in $(seq 1 2000); do
    port=$(grep -o 'listening on [^ ]*' "$work/console" | sed 's/.*://' || true)
    if [ -n "$port" ] && curl -sf -o /dev/null "http://127.0.0.1:$port/connectors/echo/connector-card.json"; then break; fi
    sleep 0.005
  done
  t1=$(ms)
  serve_total=$((serve_total + t1 - t0))
  sleep 1  # idle
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  kill -TERM "$pid"; wait "$pid"
done
echo "start to serving (card answered): $((serve_total / runs)) ms mean over $runs runs"
echo "baseline --check-config:          $((check_total / runs)) ms mean"
echo "idle RSS after 1 s:               $((rss / 1024)) MiB"
