#!/usr/bin/env bash
# xconn's bench tools in one run: the Google Benchmark programs (each beside its baseline), then xconn-load
# against a fresh xconnd and against bench/ws_ceiling at N = 1, 4, 16, 64 sockets for every scenario (invoke also
# with 8 in flight per channel), invoke at half the load it reached at 64 sockets, the idle memory of 10,000
# signed-in channels, and file uploads and downloads at 1 and 4 sockets beside their ceilings (the store's disk
# writing one file fdatasync'd once; ws_ceiling serving the same bytes from memory); then the scale runs, each
# on a fresh xconnd: 1,000, 10,000 and 100,000 signed-in channels (memory per channel, set-up time), 10,000 sockets
# (memory per socket, the time to set them up) and invoke latency at a paced rate alone and while those idle.
# Writes bench/results/<date>.json, <date>.md and <date>-throughput.png, <date>-latency.png (gnuplot).
# Every step is bounded (a duration per run; the whole sweep takes a few minutes).
#
# Every load run is repeated (--repeat, 3 by default), the ceiling and xconnd taking turns, and the report keeps
# the median: these machines are shared and noisy.
#
# usage: tools/bench.sh [--seconds S] [--sockets "1 4 16 64"] [--repeat R] [--build DIR] [--no-micro] [--no-scale]
#                       [--no-sweep] [--tag NAME]
# --no-sweep skips the socket sweep (with the half-load and idle runs); --tag NAME writes <date>-NAME.* instead of
# the day's <date>.* (a partial run beside a full one).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=5
sweep="1 4 16 64"
repeat=3
build=build
micro=1
scale=1
sweeps=1
tag=
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --sockets) sweep=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --no-micro) micro=0; shift ;;
    --no-scale) scale=0; shift ;;
    --no-sweep) sweeps=0; shift ;;
    --tag) tag=-$2; shift 2 ;;
    *) echo "usage: tools/bench.sh [--seconds S] [--sockets \"1 4 16 64\"] [--repeat R] [--build DIR] [--no-micro] [--no-scale] [--no-sweep] [--tag NAME]" >&2
       exit 2 ;;
  esac
done

command -v gnuplot > /dev/null || echo "bench.sh: gnuplot not found (apt-get install gnuplot-nox): no plots" >&2
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DXCONN_BUILD_BENCH=ON > /dev/null
# Only what the run needs (the tests are not built here).
targets=(xconnd xconn_plugin_echo ws_ceiling xconn-load)
((micro)) && for src in bench/*_bench.cpp; do targets+=("$(basename "$src" .cpp)"); done
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

bin=$root/$build/bin
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

date=$(date -u +%Y-%m-%d)$tag
out=bench/results
mkdir -p "$out" "$work/micro" "$work/load"

# ---- micro-benchmarks ----
if ((micro)); then
  for program in "$bin"/*_bench; do
    name=$(basename "$program")
    echo "== $name" >&2
    (cd "$work" && timeout 600 "$program" --benchmark_format=json --benchmark_out="$work/micro/$name.json" \
      --benchmark_out_format=json > /dev/null)
  done
fi

# ---- servers: xconnd on a fresh store, the ceiling with as many I/O threads ----
# One I/O thread and one plugin thread per core: echo never blocks, and a pool larger than the machine only adds
# hand-offs (the default pool of 4 costs invoke about 15 % on 2 cores; docs/bench.md).
io_threads=$(nproc)
cat > "$work/xconnd.yaml" << YAML
server:
  listen: "127.0.0.1:0"
  io_threads: $io_threads
store:
  path: "$work/var"
  map_size_bytes: 17179869184  # room for the uploads: at most 6 runs of 1 GiB (--count 1024 files of 1 MiB)
plugins:
  dir: "$root/$build/plugins"
  watch: false
  threads: $io_threads
YAML
port_of() {  # waits for "listening on HOST:PORT" in a console file
  for _ in $(seq 1 400); do
    local port
    port=$(grep -o 'listening on [^ ]*' "$1" 2> /dev/null | head -1 | sed 's/.*://' || true)
    if [ -n "$port" ]; then echo "$port"; return; fi
    sleep 0.05
  done
  echo "bench.sh: no 'listening on' in $1" >&2; cat "$1" >&2; exit 1
}
"$bin/xconnd" --config "$work/xconnd.yaml" > "$work/xconnd.log" 2>&1 &
xconnd_pid=$!; pids+=("$xconnd_pid")
"$bin/ws_ceiling" --listen 127.0.0.1:0 --threads "$io_threads" > "$work/ceiling.log" 2>&1 &
pids+=("$!")
xconnd=127.0.0.1:$(port_of "$work/xconnd.log")
ceiling=127.0.0.1:$(port_of "$work/ceiling.log")
export XCONN_API_KEY
XCONN_API_KEY=$(head -1 "$work/var/api_key")

# One xconn-load run; its JSON report goes to $work/load/<label>.json. A failed run is kept and reported.
load() {
  local label=$1; shift
  echo "== $label" >&2
  timeout $((seconds * 3 + 360)) "$bin/xconn-load" --json --no-progress "$@" > "$work/load/$label.json" ||
    echo "bench.sh: $label reported errors (see the table)" >&2
}

if ((sweeps)); then
  # First, on the fresh server: what 10,000 signed-in channels cost in resident memory.
  load "xconnd-idle-10000" --server "$xconnd" --scenario idle --sockets 16 --channels 10000 --duration 1 \
    --server-pid "$xconnd_pid"
  for n in $sweep; do
    for ((r = 1; r <= repeat; r++)); do
      load "ceiling-invoke-$n-r$r" --ceiling "$ceiling" --sockets "$n" --duration "$seconds"
      for scenario in invoke inbound outbound mixed; do
        load "xconnd-$scenario-$n-r$r" --server "$xconnd" --scenario "$scenario" --sockets "$n" --duration "$seconds"
      done
      load "ceiling-invoke8-$n-r$r" --ceiling "$ceiling" --sockets "$n" --inflight 8 --duration "$seconds"
      load "xconnd-invoke8-$n-r$r" --server "$xconnd" --sockets "$n" --inflight 8 --duration "$seconds"
    done
  done
  top=$(echo "$sweep" | awk '{print $NF}')
  half=$(python3 -c "import glob, json, statistics
rates = [json.load(open(f))['ops_per_s'] for f in glob.glob('$work/load/xconnd-invoke-$top-r*.json')]
print(max(1, int(statistics.median(rates) / 2)))")
  for ((r = 1; r <= repeat; r++)); do
    load "xconnd-invoke-$top-half-r$r" --server "$xconnd" --sockets "$top" --rate "$half" --duration "$seconds"
  done
fi

# File transfers, 1 MiB files. The disk ceiling: dd writes 256 MiB beside the store and fdatasyncs once.
# Each starts with the page cache written out (sync): an earlier run's dirty pages must not slow the next one.
disk_ceiling() {  # label
  local line
  sync
  line=$(dd if=/dev/zero of="$work/var/disk-ceiling" bs=1M count=256 conv=fdatasync 2>&1 | grep 'bytes' || true)
  rm -f "$work/var/disk-ceiling"
  python3 -c "import json, re, sys
m = re.match(r'(\d+) bytes.*copied, ([0-9.]+) s', sys.argv[1])
print(json.dumps({'bytes_per_s': int(m.group(1)) / float(m.group(2)) if m else 0, 'dd': sys.argv[1]}))" "$line" \
    > "$work/load/$1.json"
}
for n in 1 4; do
  for ((r = 1; r <= repeat; r++)); do
    disk_ceiling "disk-ceiling-$n-r$r"
    sync
    load "xconnd-upload-$n-r$r" --server "$xconnd" --scenario upload --sockets "$n" --duration "$seconds" \
      --count 1024
    load "ceiling-download-$n-r$r" --ceiling "$ceiling" --scenario download --sockets "$n" --duration "$seconds"
    load "xconnd-download-$n-r$r" --server "$xconnd" --scenario download --sockets "$n" --duration "$seconds"
  done
done

# ---- scale: each on a fresh xconnd (its RSS starts from nothing), room for 10,000 sockets and 100,000 channels ----
scale_server() {  # label: starts it; sets scale_pid, scale_addr, scale_key
  local dir=$work/scale-$1
  mkdir -p "$dir"
  cat > "$dir/xconnd.yaml" << YAML
server:
  listen: "127.0.0.1:0"
  io_threads: $io_threads
  max_connections: 12000
store:
  path: "$dir/var"
plugins:
  dir: "$root/$build/plugins"
  watch: false
  allow: ["echo"]
  threads: $io_threads
leases:
  max_temporary_per_connector: 200000
YAML
  "$bin/xconnd" --config "$dir/xconnd.yaml" > "$dir/xconnd.log" 2>&1 &
  scale_pid=$!; pids+=("$scale_pid")
  scale_addr=127.0.0.1:$(port_of "$dir/xconnd.log")
  scale_key=$(head -1 "$dir/var/api_key")
}
scale_stop() { kill "$scale_pid" 2> /dev/null || true; wait "$scale_pid" 2> /dev/null || true; }
if ((scale)); then
  for channels in 1000 10000 100000; do
    scale_server "channels-$channels"
    load "scale-channels-$channels" --server "$scale_addr" --key "$scale_key" --scenario idle --sockets 16 \
      --channels "$channels" --duration 1 --threads 2 --server-pid "$scale_pid"
    scale_stop
  done
  # Invoke at a modest paced rate on 16 sockets, alone and then while 10,000 other sockets idle on the same server.
  scale_server sockets
  load "scale-invoke-alone" --server "$scale_addr" --key "$scale_key" --sockets 16 --rate 1000 --duration "$seconds"
  rm -f "$work/ready"
  load "scale-sockets-10000" --server "$scale_addr" --key "$scale_key" --scenario idle --sockets 10000 \
    --duration $((seconds + 5)) --threads 2 --server-pid "$scale_pid" --ready-file "$work/ready" &
  idle_load=$!
  for _ in $(seq 1 1200); do [ -f "$work/ready" ] && break; sleep 0.1; done  # the set-up: at most 2 minutes
  if [ -f "$work/ready" ]; then
    load "scale-invoke-while-10000-idle" --server "$scale_addr" --key "$scale_key" --sockets 16 --rate 1000 \
      --duration "$seconds"
  else
    echo "bench.sh: 10,000 sockets were not set up within 2 minutes" >&2
  fi
  wait "$idle_load" 2> /dev/null || true  # its idle window (5 s longer than the invoke run) ends by itself
  scale_stop
fi

python3 tools/bench_report.py --micro "$work/micro" --load "$work/load" --date "$date" --seconds "$seconds" \
  --out "$out"
if command -v gnuplot > /dev/null && [ "$(wc -l < "$out/$date-plot.dat")" -gt 1 ]; then  # a sweep to draw
  gnuplot -e "data='$out/$date-plot.dat'; prefix='$out/$date'" tools/bench_plots.gp
fi
rm -f "$out/$date-plot.dat"
echo "bench.sh: wrote $out/$date.json, $out/$date.md and the plots" >&2
