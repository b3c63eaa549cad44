#!/usr/bin/env python3
"""Measures what one xconnd process carries on this machine, for sizing pods (docs/scaling.md).

Each run starts a fresh xconnd (echo only, one I/O thread and one plugin thread per core, everything else its
default) and drives it with xconn-load on the same machine. Besides the load tool's own report it reads the
server's CPU time (utime + stime, /proc/PID/stat) before and after the run and its peak resident memory (VmHWM),
so that each rate comes with the server cores it used: "operations per server core-second" is what a CPU request
is sized from, and it holds up better than the rate itself on a machine the load tool shares.

  idle-sockets     10,000 sockets after their hellos, one channel each: memory per socket
  idle-channels    100,000 channels on 16 sockets: memory per channel; then kill -9 and a start on that store (a
                   lost node's replacement): the time until it listens and until /readyz answers 200
  invoke           tools/echo_reverse, 64 sockets, 8 in flight each; and the same frames against bench/ws_ceiling
                   (a WebSocket echo with no protocol work, started beside it), the baseline of the same run
  inbound          durable inbound (echo_burst, acked by the agent), 16 sockets
  outbound         finals with 2 deltas each, 16 sockets, 4 in flight each
  mixed            invoke, inbound and finals together, 16 sockets
  resident         a pod's day: 2,000 sockets with 10 channels each held open while 16 others run 1,000
                   invocations a second (paced): memory and CPU of a typical load rather than a peak

usage: tools/capacity.py [--build DIR] [--seconds S] [--only NAME,...] [--tag TAG]
Writes bench/results/capacity-DATE[-TAG].{md,json} and prints the table. Every run is bounded (the load tool's
--duration, and a timeout around it); loopback only.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15 of proc(5))


def server_memory(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                values[name] = int(rest.split()[0]) * 1024
    return values


def wait_listening(proc, console_path, label):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        with open(console_path) as c:
            m = re.search(r"listening on [^ ]*:(\d+)", c.read())
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    proc.kill()
    sys.exit(f"capacity: {label} did not start; its console: {console_path}")


class Server:
    """A fresh xconnd in its own folder, with the echo plugin only."""

    def __init__(self, bin_dir, plugins_dir, work, label):
        self.dir = os.path.join(work, label)
        os.makedirs(self.dir)
        cores = os.cpu_count() or 2
        config = os.path.join(self.dir, "xconnd.yaml")
        with open(config, "w") as f:
            f.write(f"""server:
  listen: "127.0.0.1:0"
  io_threads: {cores}
  max_connections: 12000
store:
  path: "{self.dir}/var"
  map_size_bytes: 8589934592
plugins:
  dir: "{plugins_dir}"
  watch: false
  allow: ["echo"]
  threads: {cores}
leases:
  max_temporary_per_connector: 200000
""")
        self.command = [os.path.join(bin_dir, "xconnd"), "--config", config]
        self.starts = 0
        self.start()
        with open(os.path.join(self.dir, "var", "api_key")) as k:
            self.key = k.readline().strip()

    def start(self):
        """Starts xconnd (again, on the same store); the seconds until it listened."""
        self.starts += 1
        self.console = open(os.path.join(self.dir, f"console-{self.starts}.log"), "w+")
        began = time.monotonic()
        self.proc = subprocess.Popen(self.command, stdout=self.console, stderr=subprocess.STDOUT)
        self.port = wait_listening(self.proc, self.console.name, f"xconnd ({os.path.basename(self.dir)})")
        return time.monotonic() - began

    def restart_after_kill(self):
        """kill -9 (a lost node), then a start on the same store: seconds to "listening" and to /readyz 200."""
        self.proc.kill()
        self.proc.wait()
        self.console.close()
        began = time.monotonic()
        listening = self.start()
        deadline = began + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=5) as answer:
                    if answer.status == 200:
                        return listening, time.monotonic() - began
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.005)
        sys.exit(f"capacity: xconnd was not ready 60 s after its restart; console: {self.console.name}")

    def target(self):
        return ["--server", f"127.0.0.1:{self.port}", "--key", self.key]

    def store_bytes(self):
        """The store file's blocks on disk (what a volume must hold), not its apparent size."""
        return os.stat(os.path.join(self.dir, "var", "data.mdb")).st_blocks * 512

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.console.close()


def load_command(bin_dir, target, seconds, args):
    """xconn-load against target (["--server", ADDRESS, "--key", KEY] or ["--ceiling", ADDRESS]), JSON report."""
    return [os.path.join(bin_dir, "xconn-load"), *target, "--json", "--no-progress", "--duration", str(seconds), *args]


def load(bin_dir, server, seconds, args):
    """One xconn-load run with the server's CPU and memory around it; returns the merged report."""
    cmd = load_command(bin_dir, server.target(), seconds, ["--server-pid", str(server.proc.pid), *args])
    cpu_before, wall_before = server_cpu_seconds(server.proc.pid), time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 300)
    cpu = server_cpu_seconds(server.proc.pid) - cpu_before
    wall = time.monotonic() - wall_before
    if run.returncode != 0:
        sys.exit(f"capacity: xconn-load {' '.join(args)} failed ({run.returncode}): {run.stderr[-2000:]}")
    report = json.loads(run.stdout)
    report["server"] = {"cpu_s": cpu, "wall_s": wall, "cores_busy": cpu / wall, **server_memory(server.proc.pid),
                        "store_bytes": server.store_bytes()}
    return report


def per_core(report):
    """Operations per server core-second over the timed phase (set-up's CPU counted in, so a little low)."""
    cpu = report["server"]["cpu_s"]
    return report["operations"] / cpu if cpu > 0 else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--only", default="")
    p.add_argument("--tag", default="")
    p.add_argument("--no-build", action="store_true")
    o = p.parse_args()
    build = os.path.join(ROOT, o.build) if not os.path.isabs(o.build) else o.build
    if not o.no_build:
        subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", build, "-j", str(os.cpu_count()), "--target", "xconnd",
                        "xconn_plugin_echo", "xconn-load", "ws_ceiling"], check=True, stdout=subprocess.DEVNULL)
    bin_dir, plugins_dir = os.path.join(build, "bin"), os.path.join(build, "plugins")
    only = set(filter(None, o.only.split(",")))
    wanted = lambda name: not only or name in only  # noqa: E731
    work = tempfile.mkdtemp(prefix="xconn-capacity.")
    results = {}
    servers = []

    def fresh(label):
        s = Server(bin_dir, plugins_dir, work, label)
        servers.append(s)
        return s

    try:
        if wanted("idle-sockets"):
            s = fresh("idle-sockets")
            results["idle-sockets"] = load(bin_dir, s, 1, ["--scenario", "idle", "--sockets", "10000",
                                                           "--channels", "10000", "--threads", "2"])
            s.stop()
        if wanted("idle-channels"):
            s = fresh("idle-channels")
            results["idle-channels"] = load(bin_dir, s, 1, ["--scenario", "idle", "--sockets", "16",
                                                            "--channels", "100000", "--threads", "2"])
            listening, ready = s.restart_after_kill()
            results["idle-channels"]["restart"] = {"listening_s": listening, "ready_s": ready,
                                                   **server_memory(s.proc.pid)}
            s.stop()
        runs = [("invoke", ["--scenario", "invoke", "--sockets", "64", "--inflight", "8"]),
                ("inbound", ["--scenario", "inbound", "--sockets", "16"]),
                ("outbound", ["--scenario", "outbound", "--sockets", "16", "--inflight", "4"]),
                ("mixed", ["--scenario", "mixed", "--sockets", "16", "--inflight", "4"])]
        for name, args in runs:
            if wanted(name):
                s = fresh(name)
                results[name] = load(bin_dir, s, o.seconds, args)
                s.stop()
        if wanted("invoke"):
            console = os.path.join(work, "ceiling.log")
            with open(console, "w") as c:
                ceiling = subprocess.Popen([os.path.join(bin_dir, "ws_ceiling"), "--listen", "127.0.0.1:0",
                                            "--threads", str(os.cpu_count() or 2)], stdout=c, stderr=subprocess.STDOUT)
            try:
                port = wait_listening(ceiling, console, "ws_ceiling")
                run = subprocess.run(load_command(bin_dir, ["--ceiling", f"127.0.0.1:{port}"], o.seconds,
                                                  ["--sockets", "64", "--inflight", "8"]),
                                     capture_output=True, text=True, timeout=o.seconds + 120, check=True)
                results["invoke"]["ceiling"] = json.loads(run.stdout)
            finally:
                ceiling.kill()
                ceiling.wait()
        if wanted("resident"):
            s = fresh("resident")
            ready = os.path.join(work, "resident.ready")
            idle_cmd = load_command(bin_dir, s.target(), o.seconds + 30,
                                    ["--scenario", "idle", "--sockets", "2000", "--channels", "20000", "--threads", "2",
                                     "--ready-file", ready])
            idle = subprocess.Popen(idle_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 120
            while not os.path.exists(ready) and idle.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            if not os.path.exists(ready):
                idle.kill()
                sys.exit("capacity: the resident run's idle sockets were not set up in 120 s")
            results["resident"] = load(bin_dir, s, o.seconds, ["--scenario", "invoke", "--sockets", "16",
                                                               "--rate", "1000"])
            idle.send_signal(signal.SIGTERM)
            idle.communicate(timeout=60)
            s.stop()
    finally:
        for s in servers:
            s.stop()
    shutil.rmtree(work, ignore_errors=True)

    def memory(srv):
        return f"{srv['VmHWM'] / 1048576:.0f} ({srv['RssAnon'] / 1048576:.0f} + {srv['RssFile'] / 1048576:.0f})"

    def store(srv):
        return f"{srv['store_bytes'] / 1048576:.1f}"

    lines = [f"# xconnd capacity, {os.cpu_count()} cores, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             "", "tools/capacity.py: one fresh xconnd per run (echo only), xconn-load on the same machine.", "",
             "| run | rate | p99 ms | server cores busy | per server core-second | server RSS MiB: peak "
             "(anonymous + file-backed, at the end) | store on disk MiB | errors |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        srv = r["server"]
        if r["scenario"] == "idle":
            m = r.get("memory", {})
            each = (f"{m.get('per_socket_bytes', 0):,} B per socket (with its channel)" if name == "idle-sockets"
                    else f"{m.get('per_channel_bytes', 0):,} B per channel")
            rate = f"{r['sockets']:,} sockets, {r['channels']:,} channels set up in {r['setup_s']:.1f} s; {each}"
            lines.append(f"| {name} | {rate} | - | - | - | {memory(srv)} | {store(srv)} | {r['errors']} |")
            if "restart" in r:
                rs = r["restart"]
                lines.append(f"| restart | kill -9, then a start on that store: listening after {rs['listening_s'] * 1000:,.0f} ms, "
                             f"/readyz 200 after {rs['ready_s'] * 1000:,.0f} ms | - | - | - | {rs['VmRSS'] / 1048576:.0f} "
                             f"({rs['RssAnon'] / 1048576:.0f} + {rs['RssFile'] / 1048576:.0f}) | {store(srv)} | - |")
            continue
        unit = {"inbound": "msgs/s", "outbound": "finals/s"}.get(r["scenario"], "ops/s")
        rate = f"{r['ops_per_s']:,.0f} {unit}"
        if "ceiling" in r:
            rate += f" ({100 * r['ops_per_s'] / r['ceiling']['ops_per_s']:.0f} % of ws_ceiling's {r['ceiling']['ops_per_s']:,.0f})"
        lines.append(f"| {name} | {rate} | {r['latency_ms']['p99']:.2f} | {srv['cores_busy']:.2f} | {per_core(r):,.0f} | "
                     f"{memory(srv)} | {store(srv)} | {r['errors']} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = os.path.join(ROOT, "bench", "results")
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, f"capacity-{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}{'-' + o.tag if o.tag else ''}")
    with open(stem + ".md", "w") as f:
        f.write(text)
    with open(stem + ".json", "w") as f:
        json.dump(results, f, indent=1)
    failed = [n for n, r in results.items() if r["errors"]]
    if failed:
        sys.exit(f"capacity: errors in {', '.join(failed)}")


if __name__ == "__main__":
    main()
