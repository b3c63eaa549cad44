#!/usr/bin/env bash
# Soak (not in CI): xconnd under steady load for MINUTES at half the measured ceiling, with data-plane sockets
# churning and the echo plugin reloaded every minute. Every 10 s it samples xconnd's resident memory (VmRSS),
# its open descriptors (/proc/PID/fd) and the store's size (data.mdb: the file and its blocks on disk) into
# out/soak-<time>/samples.csv, plots them (soak.png, gnuplot) and ends with first/last/max of each and the
# slope of RSS per minute over the second half (summary.txt).
#
# usage: [SOAK_RELOAD_S=60] tools/soak.sh MINUTES [RATE]
#   RATE: operations per second of the steady load, `mixed` on 64 sockets; default 3476, half of what mixed
#   reached at 64 sockets in docs/bench.md's latest run (6,952/s). Churn: 4 more sockets, each with a new
#   connector and channel, opened, used and closed every few seconds. Records kept for a window (the inbound
#   msg_id window, completed finals, tool idempotency records, an offline connector's lease) are kept 2 minutes
#   here instead of an hour or a day, so that the run reaches its steady state within minutes: with the defaults
#   memory and store grow by design until the longest window has passed.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=${1:-}
rate=${2:-3476}
reload_every=${SOAK_RELOAD_S:-60}  # seconds between plugin reloads; 0: none (to tell their effect from the rest)
if ! [[ $minutes =~ ^[0-9]+$ ]] || ((minutes < 1 || minutes > 1440)) || ! [[ $rate =~ ^[0-9]+$ ]] || ((rate < 1)) ||
  ! [[ $reload_every =~ ^[0-9]+$ ]]; then
  echo "usage: tools/soak.sh MINUTES [RATE]   (1..1440 minutes; RATE ops/s, default 3476)" >&2
  exit 2
fi
command -v gnuplot > /dev/null || echo "soak.sh: gnuplot not found (apt-get install gnuplot-nox): no plot" >&2

build=build
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
fi
cmake --build "$build" -j"$(nproc)" --target xconnd xconn_plugin_echo xconn-load > /dev/null

out=out/soak-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out/plugins"
pids=()
cleanup() {
  # The load loops' own children (an xconn-load run) first, then the loops and xconnd.
  for p in "${pids[@]}"; do pkill -TERM -P "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$out/store" "$out/plugins"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp "$build/plugins/echo.so" "$out/plugins/"
key="xck_soak_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
(umask 077 && printf '%s\n' "$key" > "$out/api_key")
threads=$(nproc)
cat > "$out/xconnd.yaml" << YAML
server:
  listen: "127.0.0.1:0"
  api_keys: ["\${XCONN_SOAK_KEY}"]
  io_threads: $threads
store:
  path: "$out/store"
  map_size_bytes: 1073741824
plugins:
  dir: "$out/plugins"
  watch: false
  allow: ["echo"]
  threads: $threads
leases:
  connector_offline_s: 120
delivery:
  expiry_s: 120
  completed_ids_s: 120
tools:
  idempotency_s: 120
YAML
XCONN_SOAK_KEY=$key "$build/bin/xconnd" --config "$out/xconnd.yaml" > "$out/xconnd.log" 2>&1 &
xconnd_pid=$!
pids+=("$xconnd_pid")
port=""
for _ in $(seq 1 400); do  # at most 20 s for "listening on HOST:PORT"
  port=$(grep -o 'listening on [^ ]*' "$out/xconnd.log" 2> /dev/null | head -1 | sed 's/.*://' || true)
  [ -n "$port" ] && break
  kill -0 "$xconnd_pid" 2> /dev/null || break
  sleep 0.05
done
[ -n "$port" ] || { echo "soak.sh: xconnd did not come up" >&2; cat "$out/xconnd.log" >&2; exit 1; }
server=127.0.0.1:$port
load=("$build/bin/xconn-load" --server "$server" --key-file "$out/api_key" --no-progress)
end=$((SECONDS + minutes * 60))

# The steady load, in runs of at most an hour (xconn-load's bound), back to back.
(
  run=0
  while ((SECONDS < end)); do
    left=$((end - SECONDS)); ((left > 3600)) && left=3600
    ((left < 1)) && break
    run=$((run + 1))
    "${load[@]}" --scenario mixed --sockets 64 --rate "$rate" --duration "$left" > "$out/load-$run.txt" 2>&1 || true
  done
) &
pids+=("$!")
# The churn: 4 sockets (a new connector, a new signed-in channel each) for 5 s, closed, again.
(
  churns=0
  while ((SECONDS + 5 < end)); do
    churns=$((churns + 1))
    if ! "${load[@]}" --scenario invoke --sockets 4 --channels 4 --rate 40 --duration 5 > "$out/churn-last.txt" 2>&1
    then  # kept: the next churn overwrites churn-last.txt
      echo "churn $churns failed at $SECONDS s" >> "$out/churn-failures.txt"
      cp "$out/churn-last.txt" "$out/churn-failed-$churns.txt"
    fi
    echo "$churns" > "$out/churns.txt"
  done
) &
pids+=("$!")

echo "seconds,rss_kib,fds,store_file_bytes,store_disk_bytes,reloads,rss_anon_kib" > "$out/samples.csv"
sample() {
  local rss anon fds file disk
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$xconnd_pid/status")
  anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$xconnd_pid/status")
  fds=$(find "/proc/$xconnd_pid/fd" -mindepth 1 -maxdepth 1 2> /dev/null | wc -l)
  file=$(stat -c %s "$out/store/data.mdb")
  disk=$(($(stat -c %b "$out/store/data.mdb") * $(stat -c %B "$out/store/data.mdb")))
  echo "$1,$rss,$fds,$file,$disk,$reloads,$anon" >> "$out/samples.csv"
}
reloads=0
reload_failures=0
start=$SECONDS
next=$start
next_reload=$reload_every
echo "soak: $minutes min at $rate ops/s (mixed, 64 sockets) against xconnd on $server; samples in $out"
while :; do
  now=$((SECONDS - start))
  kill -0 "$xconnd_pid" 2> /dev/null || { echo "soak.sh: xconnd died at ${now} s" >&2; exit 1; }
  if ((reload_every > 0 && now >= next_reload)); then
    next_reload=$((next_reload + reload_every))
    code=$(curl -s -o /dev/null -w '%{http_code}' -m 10 -X POST -H "Authorization: Bearer $key" \
      "http://$server/connectors/echo/reload" || true)
    if [ "$code" = 202 ]; then reloads=$((reloads + 1)); else reload_failures=$((reload_failures + 1)); fi
  fi
  sample "$now"
  if ((SECONDS >= end)); then break; fi
  next=$((next + 10))
  # Pacing, not synchronisation: the next sample is due at a fixed time.
  if ((next > SECONDS)); then sleep $((next - SECONDS)); fi
done

wait "${pids[1]}" "${pids[2]}" 2> /dev/null || true
kill -TERM "$xconnd_pid"
wait "$xconnd_pid" || echo "soak.sh: xconnd did not stop cleanly" >&2
pids=()

if command -v gnuplot > /dev/null; then
  gnuplot -e "data='$out/samples.csv'; output='$out/soak.png'" tools/soak_plot.gp
fi
{
  echo "soak: $minutes min, $rate ops/s mixed on 64 sockets, $(cat "$out/churns.txt" 2> /dev/null || echo 0) churns of 4 sockets," \
    "$reloads reloads ($reload_failures failed)"
  awk -F, 'NR > 1 { i = n++; t[i] = $1; r[i] = $2; f[i] = $3; s[i] = $4; d[i] = $5; a[i] = $7 }
    END {
      if (n == 0) { print "no samples"; exit }
      for (i = 0; i < n; i++) { if (a[i] > ma) ma = a[i]; if (r[i] > mr) mr = r[i]; if (f[i] > mf) mf = f[i]; if (s[i] > ms) ms = s[i]; if (d[i] > md) md = d[i] }
      printf "RSS MiB first %.1f last %.1f max %.1f\n", r[0] / 1024, r[n-1] / 1024, mr / 1024
      printf "  of which anonymous (heap) MiB first %.1f last %.1f max %.1f; the rest is the store mapped\n", a[0] / 1024, a[n-1] / 1024, ma / 1024
      printf "open fds first %d last %d max %d\n", f[0], f[n-1], mf
      printf "data.mdb MiB first %.1f last %.1f max %.1f (on disk: first %.1f last %.1f max %.1f)\n",
        s[0] / 1048576, s[n-1] / 1048576, ms / 1048576, d[0] / 1048576, d[n-1] / 1048576, md / 1048576
      # least squares over the second half: RSS KiB against minutes
      h = int(n / 2); m = n - h
      for (i = h; i < n; i++) { x = t[i] / 60; sx += x; sxx += x * x; sy += r[i]; sxy += x * r[i]; sa += a[i]; sxa += x * a[i] }
      den = m * sxx - sx * sx
      if (m >= 2 && den != 0) printf "RSS slope over the second half: %+.1f KiB/min (anonymous: %+.1f KiB/min)\n",
        (m * sxy - sx * sy) / den, (m * sxa - sx * sa) / den
    }' "$out/samples.csv"
  for f in "$out"/load-*.txt; do [ -f "$f" ] && { echo "steady load ($(basename "$f")):"; tail -12 "$f"; }; done
  [ -f "$out/churn-failures.txt" ] && echo "churn failures: $(wc -l < "$out/churn-failures.txt")"
  true
} | tee "$out/summary.txt"
