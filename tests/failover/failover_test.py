#!/usr/bin/env python3
"""Failover of one xconnd among several, with its store's volume moved (issue 26).

Three xconnd processes on loopback, each with its own folder, API key, store and plugin set:
  A  [echo]             driven by xconn-chaos (journaled mixed traffic: inbound with held acks, finals,
                        side-effect tools, uploads); the one that is killed
  B  [echo, webhook]    driven by xconn-load (mixed, paced) the whole time
  C  [echo, telegram]   driven by xconn-load (mixed, paced) the whole time
Each serves exactly its set (GET /readyz's plugins and GET /connectors are checked). While all three are under
load, A is killed with kill -9 after a random 1-3 s, its store folder is moved (rename) to a new parent folder
("another machine's volume"), the old path is checked gone, and A is started again from a new folder with a new
config naming the new store path, on a new port (asserted different from every earlier one). The chaos driver
runs its next epoch against the new process: hello with the journal's connector_id (checked to be the same), the
journaled channels reopened, unacked messages delivered again, then more load. This is repeated --kills times
(default 3); the last process gets a load epoch to its end and then `xconn-chaos verify`.

What it proves:
  * every fact A acknowledged before a kill is there after the move: no inbound answered 202 lost, no message
    delivered again once its ack was known durable, every unacked delivery delivered again, a final accepted once
    per message_id, a side-effect tool answered from its record, every upload intact by sha256, no expiry clock
    reset (xconn-chaos verify; exit 0 or the test fails);
  * the agent reconnects to the moved store under its old connector_id with its channels;
  * the neighbours B and C are not affected: their load runs span every kill and end with zero errors and zero
    unanswered operations, and both still answer /readyz 200 at the end.

What it measures (milliseconds, printed as one block at the end and as a FAILOVER_JSON line), per failover:
  (1) kill -9 -> the store folder moved (the process reaped, then the rename)
  (2) start of the new xconnd -> its "listening on HOST:PORT" line (the line's own timestamp)
  (3) -> GET /readyz answers 200 (polled every few ms)
  (4) -> the agent's hello answered with its old connector_id and every channel reopened (xconn-chaos --timings;
         itemized: the driver's own start, connect + hello, the channel.open calls)
  (5) the hello -> the first message delivered in an earlier epoch and never acked pushed again (from the hello,
      not from (4)'s end: a channel's waiting messages come as soon as that channel is reopened, while the agent
      may still be reopening others); and the hello -> the last of them pushed again
and the totals from kill -9 to (4) and to (5). Min, median and max over the failovers of the run.

--self-test restarts A on an empty store instead of the moved one and passes only when the test reports that
as a failure (it is caught when the agent's channels cannot be reopened).

Every wait has a deadline (the whole run: --budget seconds), every child is killed on every exit path, the scratch
folder (under /tmp) is removed on success (--keep keeps it). On a failure the step, the process and the tails of
the consoles are printed. Network only to 127.0.0.1.

usage: failover_test.py --xconnd BIN --load BIN --chaos BIN --plugins DIR [--kills N] [--seed S] [--keep]
       [--json-out FILE]
       [--self-test]   (one failover that loses the store: passes only when the test reports it as a failure)
"""

import argparse
import datetime
import json
import os
import random
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from xconn_process import Deadline, http_call, stop_gently  # noqa: E402


class Failure(Exception):
    """A failed step: what, and which process (its console tail is printed)."""

    def __init__(self, step, text, process=None):
        super().__init__(f"{step}: {text}")
        self.step, self.text, self.process = step, text, process


RUN = Deadline(240)  # replaced in main() by --budget


def within(seconds):
    return max(0.05, min(seconds, RUN.left()))


def wait_for(predicate, seconds, what, step=0.003, process=None):
    """predicate() until it returns something true; Failure after the deadline (cut to the run's budget)."""
    end = time.monotonic() + within(seconds)
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= end:
            raise Failure(what, f"not within {seconds} s", process)
        time.sleep(step)


def http_get(port, path, key=None, timeout=5.0):
    return http_call(port, path, key, timeout=within(timeout))


def tail(path, lines=25):
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return "(no file)"
    return "\n".join(text.splitlines()[-lines:])


LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z .*listening on 127\.0\.0\.1:(\d+)", re.M)


class Daemon:
    """One xconnd process of a node; a node (A) is started several times, each time from a new site folder."""

    def __init__(self, name, plugins, node_dir, plugin_source):
        self.name, self.plugins, self.node_dir, self.plugin_source = name, plugins, node_dir, plugin_source
        self.key = "xck_fo_" + secrets.token_hex(16)
        self.key_file = os.path.join(node_dir, "api_key")
        os.makedirs(node_dir)
        with open(os.open(self.key_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(self.key + "\n")
        self.proc = None
        self.log = None
        self.console = None
        self.port = None
        self.store = None
        self.starts = 0

    def label(self):
        return f"{self.name} [{', '.join(self.plugins)}]" + (f" on port {self.port}" if self.port else "")

    def start(self, xconnd, store):
        """Starts xconnd from a fresh site folder with its own plugin folder and config naming store."""
        self.starts += 1
        site = os.path.join(self.node_dir, f"site-{self.starts}")
        plugin_dir = os.path.join(site, "plugins")
        os.makedirs(plugin_dir)
        for plugin in self.plugins:  # copies: a rebuild of the build tree cannot start a reload mid-run
            shutil.copy2(os.path.join(self.plugin_source, f"{plugin}.so"), plugin_dir)
        config = os.path.join(site, "xconnd.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write('server:\n  listen: "127.0.0.1:0"\n  api_keys: ["${XCONN_FAILOVER_KEY}"]\n  io_threads: 1\n'
                    f'store:\n  path: "{store}"\n  map_size_bytes: 67108864\n'
                    f'plugins:\n  dir: "{plugin_dir}"\n  watch: false\n  allow: {json.dumps(self.plugins)}\n'
                    '  threads: 2\n')
        self.store = store
        self.console = os.path.join(site, "console.log")
        self.log = open(self.console, "wb")
        env = dict(os.environ, XCONN_FAILOVER_KEY=self.key)
        self.port = None
        self.started_wall = time.time()
        self.started = time.monotonic()
        self.proc = subprocess.Popen([xconnd, "--config", config], stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=site, env=env)
        return site

    def wait_listening(self, seconds=20):
        """The port, and when the "listening on" line was written (its timestamp, on the monotonic clock)."""
        def listening():
            with open(self.console, "rb") as f:
                m = LOG_TIME.search(f.read().decode("utf-8", "replace"))
            if m:
                return m
            if self.proc.poll() is not None:
                raise Failure("start", f"xconnd exited {self.proc.returncode} before listening", self)
            return None

        m = wait_for(listening, seconds, "waiting for the \"listening on\" line", process=self)
        seen = time.monotonic()
        self.port = int(m.group(2))
        logged = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        at = self.started + (logged - self.started_wall)
        return min(max(at, self.started), seen)  # the line's own time, within what was observed

    def wait_ready(self, seconds=20):
        """Polls GET /readyz (no key) until 200; checks its plugins are exactly this node's set."""
        self.not_ready = []  # the answers before the 200 (503, or None when refused)

        def ready():
            if self.proc.poll() is not None:
                raise Failure("readyz", f"xconnd exited {self.proc.returncode}", self)
            status, body = http_get(self.port, "/readyz", timeout=2)
            if status != 200:
                self.not_ready.append(status)
            return (time.monotonic(), body) if status == 200 else None

        at, body = wait_for(ready, seconds, "waiting for GET /readyz 200", process=self)
        plugins = sorted((json.loads(body).get("plugins") or {}).keys())
        if plugins != sorted(self.plugins):
            raise Failure("readyz", f"serves {plugins}, expected exactly {sorted(self.plugins)}: {body}", self)
        status, body = http_get(self.port, "/connectors", key=self.key)
        ids = sorted(c.get("plugin_id") for c in json.loads(body).get("connectors", [])) if status == 200 else None
        if ids != sorted(self.plugins):
            raise Failure("connectors", f"GET /connectors: {status} {ids}, expected {sorted(self.plugins)}", self)
        return at

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=within(10))
        self.log.close()

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s; the exit code (None when it had exited by itself)."""
        return None if self.proc is None else stop_gently(self.proc, self.log)


class Child:
    """A tool run in the background, its output in files."""

    def __init__(self, name, command, folder, cwd):
        self.name, self.command = name, command
        self.out_path = os.path.join(folder, f"{name}.out")
        self.err_path = os.path.join(folder, f"{name}.err")
        self.out, self.err = open(self.out_path, "wb"), open(self.err_path, "wb")
        self.proc = subprocess.Popen(command, stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL, cwd=cwd)

    def wait(self, seconds, step):
        try:
            code = self.proc.wait(timeout=within(seconds))
        except subprocess.TimeoutExpired:
            raise Failure(step, f"{self.name} not done within {seconds} s; stderr: {tail(self.err_path, 10)}")
        self.out.close()
        self.err.close()
        return code

    def stdout(self):
        with open(self.out_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)


def read_timings(path):
    """xconn-chaos --timings lines: name -> (monotonic seconds, detail)."""
    marks = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.split(maxsplit=2)
                if len(parts) >= 2:
                    marks[parts[0]] = (int(parts[1]) / 1e9, parts[2].strip() if len(parts) > 2 else "")
    except OSError:
        pass
    return marks


def journal_connector_id(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "setup":
                return fields[2]
    return None


STEPS = [
    ("kill_to_moved", "(1) kill -9 -> store folder moved"),
    ("moved_to_started", "    moved -> new xconnd started (site prepared)"),
    ("start_to_listening", "(2) xconnd started -> \"listening on\""),
    ("listening_to_ready", "(3) -> GET /readyz 200"),
    ("ready_to_reconnected", "(4) -> hello (old connector_id) + channels reopened"),
    ("ready_to_driver_start", "      of which the driver's own start (exec, journal)"),
    ("driver_start_to_hello", "      of which connect + hello answered"),
    ("hello_to_reconnected", "      of which every channel.open answered"),
    ("hello_to_first_redelivery", "(5) hello -> first unacked message redelivered"),
    ("hello_to_all_redelivered", "    hello -> every unacked message redelivered"),
    ("kill_to_reconnected", "total: kill -9 -> agent reconnected (4)"),
    ("kill_to_redelivery", "total: kill -9 -> first redelivery (5)"),
]

def ms(seconds):
    return round(seconds * 1000.0, 1)


def print_report(failovers, neighbours, wall, json_out=None):
    print("\n=== failover: step durations (ms) ===", flush=True)
    header = f"  {'step (ms)':52s}" + "".join(f"{'#' + str(i + 1):>9s}" for i in range(len(failovers))) + \
        f"{'min':>9s}{'median':>9s}{'max':>9s}"
    print(header)
    summary = {}
    for key, title in STEPS:
        values = [f.get(key) for f in failovers]
        present = [v for v in values if v is not None]
        cells = "".join(f"{v:9.1f}" if v is not None else f"{'n/a':>9s}" for v in values)
        if present:
            summary[key] = {"min": min(present), "median": round(statistics.median(present), 1), "max": max(present)}
            stats = f"{min(present):9.1f}{statistics.median(present):9.1f}{max(present):9.1f}"
        else:
            stats = f"{'n/a':>9s}" * 3
        print(f"  {title:52s}{cells}{stats}")
    print("  (5) is measured from the hello: the host pushes a channel's waiting messages as soon as that channel\n"
          "  is reopened, so redelivery overlaps (4)'s later channel.open calls.")
    for i, f in enumerate(failovers):
        print(f"  #{i + 1}: port {f['old_port']} -> {f['new_port']}, killed {f['kill_delay_s']:.2f} s into its "
              f"epoch; {f['channels']} channels; {f['unacked_before']} unacked before the kill, "
              f"{f['redelivered']} redelivered in the next epoch; /readyz answers before its 200: "
              f"{f['readyz_before_200'] or 'none'}")
    print("=== neighbours during the kills (xconn-load, mixed) ===")
    for n in neighbours:
        print(f"  {n['node']:22s} {n['operations']:8d} ops  {n['ops_per_s']:8.1f} ops/s  errors {n['errors']}  "
              f"unanswered {n['unanswered']}  p99 {n['p99_ms']:.2f} ms  max {n['max_ms']:.2f} ms")
    print(f"=== {len(failovers)} failover(s), test wall time {wall:.1f} s ===", flush=True)
    line = json.dumps({"failovers": failovers, "summary_ms": summary, "neighbours": neighbours,
                       "wall_s": round(wall, 1)}, sort_keys=True)
    print("FAILOVER_JSON " + line, flush=True)
    if json_out:
        with open(json_out, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def run(args, scratch, daemons, children):
    rng = random.Random(args.seed)
    a = Daemon("A", ["echo"], os.path.join(scratch, "A"), args.plugins)
    b = Daemon("B", ["echo", "webhook"], os.path.join(scratch, "B"), args.plugins)
    c = Daemon("C", ["echo", "telegram"], os.path.join(scratch, "C"), args.plugins)
    daemons.extend([a, b, c])
    volumes = {d.name: os.path.join(d.node_dir, "volume-0", "store") for d in daemons}
    for d in daemons:
        os.makedirs(os.path.dirname(volumes[d.name]))
        d.start(args.xconnd, volumes[d.name])
    for d in daemons:
        d.wait_listening()
        d.wait_ready()
        print(f"{d.label()}: ready", flush=True)

    chaos_dir = os.path.join(scratch, "chaos")
    os.makedirs(chaos_dir)
    journal = os.path.join(chaos_dir, "journal.tsv")

    def chaos(mode, port, extra=(), name=None):
        return Child(name or mode, [args.chaos, mode, "--port", str(port), "--key-file", a.key_file,
                                    "--journal", journal, *extra], chaos_dir, chaos_dir)

    setup = chaos("setup", a.port, ["--channels", str(args.channels)])
    if setup.wait(30, "xconn-chaos setup") != 0:
        raise Failure("xconn-chaos setup", f"exit {setup.proc.returncode}: {tail(setup.err_path, 10)}", a)
    connector_id = journal_connector_id(journal)

    # The neighbours' load spans every kill: each failover takes its random 1-3 s plus the restart.
    seconds = args.neighbour_seconds or (6 + 4.5 * args.kills)
    for d in (b, c):
        children.append(Child(f"load-{d.name}", [
            args.load, "--server", f"127.0.0.1:{d.port}", "--key-file", d.key_file, "--scenario", "mixed",
            "--sockets", "2", "--channels", "4", "--rate", str(args.rate), "--threads", "1",
            "--duration", str(seconds), "--json", "--no-progress"], d.node_dir, d.node_dir))
    neighbours = children[-2:]

    failovers = []
    pending_list = []  # (failover, its epoch's timings file): the redelivery counts, read once the epoch ended
    ports = [a.port]
    epoch = 1
    timings = os.path.join(chaos_dir, f"timings-{epoch}.txt")
    load = chaos("load", a.port, ["--seed", str(rng.randrange(1 << 31)), "--seconds", "60", "--timings", timings],
                 f"load-{epoch}")
    children.append(load)
    for kill in range(1, args.kills + 1):
        delay = rng.uniform(1.0, 3.0)
        started = read_timings(timings).get("start", (time.monotonic(),))[0]
        time.sleep(max(0.0, started + delay - time.monotonic()))
        for n in neighbours:
            if n.proc.poll() is not None:
                raise Failure(f"failover {kill}", f"{n.name} ended before the kill (exit {n.proc.returncode}); the "
                              f"run was slower than its {seconds:.0f} s: raise --neighbour-seconds")
        if load.proc.poll() is not None:
            raise Failure(f"failover {kill}", f"xconn-chaos load ended before the kill (exit "
                          f"{load.proc.returncode}): {tail(load.err_path, 10)}", a)
        old_port, old_store = a.port, a.store
        t_kill = time.monotonic()
        a.kill9()
        new_store = os.path.join(a.node_dir, f"volume-{kill}", "store")
        os.makedirs(os.path.dirname(new_store))
        # --self-test: the store is moved aside and A starts on an empty one, which the checks must catch.
        os.rename(old_store, os.path.join(a.node_dir, f"volume-{kill}", "abandoned") if args.self_test else new_store)
        t_moved = time.monotonic()
        if os.path.exists(old_store):
            raise Failure(f"failover {kill}", f"the old store path {old_store} still exists after the move")
        a.start(args.xconnd, new_store)
        t_listening = a.wait_listening()
        if a.port in ports:  # a port picked before: start once more (port 0 rarely gives the same one again)
            print(f"A: port {a.port} was used before; starting again", flush=True)
            a.stop()
            a.start(args.xconnd, new_store)
            t_listening = a.wait_listening()
        if a.port in ports:
            raise Failure(f"failover {kill}", f"the new port {a.port} is one used before ({ports})", a)
        ports.append(a.port)
        t_ready = a.wait_ready()
        # The killed epoch's driver ends on its own once its socket and calls fail.
        if load.wait(20, f"failover {kill}: the killed epoch's xconn-chaos load") != 0:
            raise Failure(f"failover {kill}", f"xconn-chaos load of epoch {epoch} failed (exit "
                          f"{load.proc.returncode}): {tail(load.err_path, 10)}", a)
        epoch += 1
        timings = os.path.join(chaos_dir, f"timings-{epoch}.txt")
        last = kill == args.kills
        load = chaos("load", a.port, ["--seed", str(rng.randrange(1 << 31)),
                                      "--seconds", str(args.last_epoch_seconds if last else 60),
                                      "--timings", timings], f"load-{epoch}")
        children.append(load)

        def reconnected():
            marks = read_timings(timings)
            if load.proc.poll() is not None and "channels" not in marks:
                raise Failure(f"failover {kill}", f"xconn-chaos load of epoch {epoch} ended (exit "
                              f"{load.proc.returncode}) before its channels were reopened: "
                              f"{tail(load.err_path, 10)}", a)
            return "channels" in marks and marks

        marks = wait_for(reconnected, 20, f"failover {kill}: the agent's hello and channels", step=0.01, process=a)
        if marks["hello"][1] != connector_id:
            raise Failure(f"failover {kill}", f"hello answered connector_id {marks['hello'][1]!r}, the journal's is "
                          f"{connector_id!r}", a)

        def redelivered():  # the first redelivery, or nothing to wait for (no message was left unacked)
            m = read_timings(timings)
            if "first_redelivery" in m or "redelivered" in m or m.get("unacked", (0, ""))[1] == "0":
                return m
            if load.proc.poll() is not None:
                raise Failure(f"failover {kill}", f"xconn-chaos load of epoch {epoch} ended (exit "
                              f"{load.proc.returncode}) with no redelivery: {tail(load.err_path, 10)}", a)
            return None

        marks = wait_for(redelivered, 15, f"failover {kill}: the first redelivery", step=0.01, process=a)
        f = {
            "old_port": old_port, "new_port": a.port, "kill_delay_s": round(delay, 2), "channels": args.channels,
            "kill_to_moved": ms(t_moved - t_kill),
            "moved_to_started": ms(a.started - t_moved),
            "start_to_listening": ms(t_listening - a.started),
            "listening_to_ready": ms(t_ready - t_listening),
            "ready_to_driver_start": ms(marks["start"][0] - t_ready),
            "ready_to_hello": ms(marks["hello"][0] - t_ready),
            "ready_to_reconnected": ms(marks["channels"][0] - t_ready),
            "driver_start_to_hello": ms(marks["hello"][0] - marks["start"][0]),
            "hello_to_reconnected": ms(marks["channels"][0] - marks["hello"][0]),
            "kill_to_reconnected": ms(marks["channels"][0] - t_kill),
            "hello_to_first_redelivery": None, "hello_to_all_redelivered": None, "kill_to_redelivery": None,
            "unacked_before": None, "redelivered": None, "readyz_before_200": a.not_ready,
        }
        if "first_redelivery" in marks:
            f["hello_to_first_redelivery"] = ms(marks["first_redelivery"][0] - marks["hello"][0])
            f["kill_to_redelivery"] = ms(marks["first_redelivery"][0] - t_kill)
        failovers.append(f)
        print(f"failover {kill}: A {old_port} -> {a.port}, store {old_store} -> {new_store}: "
              + ", ".join(f"{k} {f[k]}" for k, _ in STEPS) + " ms", flush=True)
        pending_list.append((f, timings))

    # The last epoch runs to its end; then every promise is checked against the last process.
    if load.wait(args.last_epoch_seconds + 30, "the last xconn-chaos load epoch") != 0:
        raise Failure("last epoch", f"xconn-chaos load exit {load.proc.returncode}: {tail(load.err_path, 10)}", a)
    for f, path in pending_list:
        marks = read_timings(path)
        counts = marks.get("redelivered", (0, ""))[1].split()
        if len(counts) == 2:
            f["redelivered"], f["unacked_before"] = int(counts[0]), int(counts[1])
        if "all_redelivered" in marks:
            f["hello_to_all_redelivered"] = ms(marks["all_redelivered"][0] - marks["hello"][0])
    verify = chaos("verify", a.port)
    code = verify.wait(150, "xconn-chaos verify")
    print("xconn-chaos verify:\n  " + (verify.stdout() + tail(verify.err_path, 40)).strip().replace("\n", "\n  "),
          flush=True)
    if code != 0:
        raise Failure("xconn-chaos verify", f"exit {code}: a promise of the host was broken across the failovers", a)

    results = []
    for n, d in zip(neighbours, (b, c)):
        code = n.wait(seconds + 60, f"{n.name}")
        out = n.stdout().strip().splitlines()
        try:
            report = json.loads(out[-1])
        except (IndexError, ValueError):
            raise Failure(n.name, f"exit {code}, no JSON report: {tail(n.err_path, 10)}", d)
        lat = report.get("latency_ms", {})
        results.append({"node": d.label(), "operations": report.get("operations", 0),
                        "ops_per_s": round(report.get("ops_per_s", 0.0), 1), "errors": report.get("errors"),
                        "unanswered": report.get("unanswered"), "p99_ms": lat.get("p99", 0.0),
                        "max_ms": lat.get("max", 0.0)})
        if code != 0 or report.get("errors") != 0 or report.get("unanswered") != 0 or not report.get("operations"):
            raise Failure(n.name, f"a neighbour was affected: exit {code}, {json.dumps(report)[:600]}", d)
        status, body = http_get(d.port, "/readyz")
        if status != 200 or d.proc.poll() is not None:
            raise Failure(n.name, f"after the run: /readyz {status} {body[:200]}", d)
    for d in daemons:
        code = d.stop()
        if code != 0:
            raise Failure("stop", f"xconnd {d.label()} exited {code} on SIGTERM", d)
    return failovers, results


def main():
    global RUN
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xconnd", required=True)
    parser.add_argument("--load", required=True, help="xconn-load")
    parser.add_argument("--chaos", required=True, help="xconn-chaos")
    parser.add_argument("--plugins", required=True, help="the folder holding echo.so, webhook.so, telegram.so")
    parser.add_argument("--kills", type=int, default=3, help="failovers of A in the run (default 3)")
    parser.add_argument("--channels", type=int, default=4, help="A's channels (xconn-chaos setup)")
    parser.add_argument("--rate", type=int, default=200, help="each neighbour's paced operations per second")
    parser.add_argument("--neighbour-seconds", type=float, default=0, help="B's and C's load (default 6 + 4.5/kill)")
    parser.add_argument("--last-epoch-seconds", type=int, default=2, help="the last chaos epoch, before verify")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--budget", type=float, default=240, help="the whole run's deadline, seconds")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder even on success")
    parser.add_argument("--json-out", help="append the FAILOVER_JSON object to this file (one line per run)")
    parser.add_argument("--self-test", action="store_true",
                        help="one failover that loses the store (A restarts on an empty one): passes only when the "
                             "test catches it")
    args = parser.parse_args()
    if args.self_test:
        args.kills = 1
    if not 1 <= args.kills <= 20:
        parser.error("--kills: 1..20")
    if args.seed is None:
        args.seed = secrets.randbelow(1 << 31)
    RUN = Deadline(args.budget)
    began = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="xconn-failover-")
    print(f"failover: seed {args.seed}, {args.kills} kill(s), scratch {scratch}", flush=True)
    daemons, children = [], []
    ok = False
    try:
        failovers, neighbours = run(args, scratch, daemons, children)
        if args.self_test:
            print("\nself-test FAILED: A restarted on an empty store and no check noticed", flush=True)
        else:
            print_report(failovers, neighbours, time.monotonic() - began, args.json_out)
            ok = True
    except Failure as e:
        print(f"\n{'self-test: caught as expected' if args.self_test else 'FAILED'} at step \"{e.step}\""
              + (f" (process {e.process.label()})" if e.process else "") + f": {e.text}", flush=True)
        ok = args.self_test
    except Exception as e:  # an unexpected error is a failure too, with the consoles
        print(f"\nFAILED: {type(e).__name__}: {e}", flush=True)
        raise
    finally:
        for child in children:
            child.kill()
        for d in daemons:
            if d.proc is not None and d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait(timeout=5)
        if not ok or args.self_test:
            for d in daemons:
                if d.console:
                    print(f"--- console of {d.label()} ({d.console}), last lines:\n{tail(d.console)}", flush=True)
            for child in children:
                print(f"--- {child.name} stderr, last lines:\n{tail(child.err_path, 10)}", flush=True)
        if ok and not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"failover: kept {scratch}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
