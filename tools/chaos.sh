#!/usr/bin/env bash
# Crash chaos: mixed load against xconnd (inbound bursts with acks, finals, side-effect tools, uploads, a third of
# them past files.max_bytes) and a kill -9 of the daemon at a random moment, N times (default 50; every fourth a
# clean stop, SIGTERM, instead), restarting it each time; every start must come up (an upload refused past the
# limit leaves free pages unwritten past the end of data.mdb, which a start once refused); then one more start
# and the check of what the host promises (tools/xconn-chaos verify): no inbound answered 202 lost, none
# delivered again once its ack was known durable, every unacked one delivered again, a final accepted once per
# message_id (a repeat answers duplicate), a side-effect tool answered from its record on a repeat, every
# uploaded file intact by sha256, no expiry clock reset. Prints the counts; exits non-zero on any violation.
#
# usage: tools/chaos.sh [N]       (CI runs N=10; CHAOS_KEEP=1 keeps build/chaos.*/ with the journal even on success,
#                                 and build/bin/xconn-chaos audit --journal FILE checks a kept journal again)
# Every wait is bounded: the daemon's start (20 s), each load epoch (its kill comes 0.05-2.5 s in; the driver
# stops by itself after 30 s), the verification (the driver's own deadlines).
set -euo pipefail
cd "$(dirname "$0")/.."

kills=${1:-50}
if ! [[ $kills =~ ^[0-9]+$ ]] || ((kills < 1 || kills > 10000)); then
  echo "usage: tools/chaos.sh [N]   (N kills, 1..10000, default 50)" >&2
  exit 2
fi

build=build
started=$SECONDS
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
fi
cmake --build "$build" -j"$(nproc)" --target xconnd xconn_plugin_echo xconn-chaos > /dev/null
echo "chaos: built in $((SECONDS - started)) s"

work=$(mktemp -d "$build/chaos.XXXXXX")
daemon_pid=""
load_pid=""
cleanup() {
  local rc=$?
  [ -n "$load_pid" ] && kill "$load_pid" 2> /dev/null || true  # timeout passes TERM on to the driver
  [ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2> /dev/null || true
  wait 2> /dev/null || true
  if ((rc == 0)) && [ -z "${CHAOS_KEEP:-}" ]; then rm -rf "$work"; else echo "chaos: kept $work (journal, consoles, store)" >&2; fi
}
trap cleanup EXIT

mkdir -p "$work/plugins"
cp "$build/plugins/echo.so" "$work/plugins/"
max_bytes=1048576
key="xck_chaos_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
(umask 077 && printf '%s\n' "$key" > "$work/api_key")
cat > "$work/xconnd.yaml" << YAML
server:
  listen: "127.0.0.1:0"
  api_keys: ["\${XCONN_CHAOS_KEY}"]
store:
  path: "$work/store"
  map_size_bytes: 67108864
files:
  max_bytes: $max_bytes
plugins:
  dir: "$work/plugins"
  watch: false
  allow: ["echo"]
YAML
driver=("$build/bin/xconn-chaos")
journal=$work/journal.tsv
port=""
starts=0

start_daemon() {  # starts xconnd and waits (20 s at most) for its "listening on HOST:PORT" line
  starts=$((starts + 1))
  local console=$work/console-$starts.log
  XCONN_CHAOS_KEY=$key "$build/bin/xconnd" --config "$work/xconnd.yaml" > "$console" 2>&1 &
  daemon_pid=$!
  port=""
  for _ in $(seq 1 400); do
    port=$(grep -o 'listening on [^ ]*' "$console" 2> /dev/null | head -1 | sed 's/.*://' || true)
    [ -n "$port" ] && return 0
    kill -0 "$daemon_pid" 2> /dev/null || break
    sleep 0.05
  done
  echo "chaos: VIOLATION xconnd did not come up after $((starts - 1)) kill(s); its console:" >&2
  tail -20 "$console" >&2
  exit 1
}

stops=0
stop_daemon() {  # SIGTERM, and 20 s at most for a clean exit
  stops=$((stops + 1))
  kill -TERM "$daemon_pid"
  for _ in $(seq 1 400); do
    kill -0 "$daemon_pid" 2> /dev/null || break
    sleep 0.05
  done
  if kill -0 "$daemon_pid" 2> /dev/null; then
    echo "chaos: VIOLATION xconnd did not stop within 20 s of SIGTERM (start $starts)" >&2
    exit 1
  fi
  wait "$daemon_pid" 2> /dev/null || true
}

start_daemon
"${driver[@]}" setup --port "$port" --key-file "$work/api_key" --journal "$journal" --channels 4

for ((i = 1; i <= kills; i++)); do
  ((i == 1)) || start_daemon
  timeout 60 "${driver[@]}" load --port "$port" --key-file "$work/api_key" --journal "$journal" \
    --seed "$RANDOM$RANDOM" --seconds 30 --max-bytes "$max_bytes" &
  load_pid=$!
  delay_ms=$((50 + RANDOM % 2450))
  sleep "$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))"
  if ((i % 4 == 0)); then
    stop_daemon
  else
    kill -9 "$daemon_pid"
    wait "$daemon_pid" 2> /dev/null || true
  fi
  daemon_pid=""
  # The driver sees its socket and its HTTP calls fail and ends its epoch (timeout bounds it all the same).
  if ! wait "$load_pid"; then
    echo "chaos: the load driver failed in epoch $i" >&2
    load_pid=""
    exit 1
  fi
  load_pid=""
  if ((i % 10 == 0)); then echo "chaos: $i/$kills kills ($((SECONDS - started)) s)"; fi
done

start_daemon
rc=0
"${driver[@]}" verify --port "$port" --key-file "$work/api_key" --journal "$journal" || rc=$?
kill -TERM "$daemon_pid"
wait "$daemon_pid" || { echo "chaos: xconnd did not stop cleanly after the verification" >&2; rc=1; }
daemon_pid=""
over_limit=$(grep -c '^over_limit' "$journal" || true)
echo "chaos: $starts starts ($((kills - stops)) after kill -9, $stops after a clean stop), every one came up;" \
  "$over_limit uploads past files.max_bytes"
echo "chaos: $kills kills, $((SECONDS - started)) s in all, $([ $rc -eq 0 ] && echo "no violation" || echo "VIOLATIONS")"
exit $rc
