#!/usr/bin/env python3
"""Tests of tools/xconnctl/xconnctl: each starts a real xconnd (loopback, a port it picks, a temporary store and
YAML) and drives the script as a subprocess, the way an operator does; a few use a small stub server for what a
healthy xconnd never does (a backup cut short, a server that never answers).

usage: xconnctl_test.py --xconnd PATH --plugins DIR --xconnctl PATH [unittest arguments, e.g. a class name]
"""
import argparse
import base64
import hashlib
import http.server
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

XCONND = XCONNCTL = PLUGINS = None  # set from the command line

START_DEADLINE_S = 15
RUN_DEADLINE_S = 30


def wait_until(what, check, deadline_s=10, pause=0.02):
    """Polls check() until it answers something true; fails with `what` at the deadline."""
    until = time.monotonic() + deadline_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= until:
            raise AssertionError(f"timed out after {deadline_s} s waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.2)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One xconnd on 127.0.0.1 with a port of its own choosing (listen ...:0, read from its "listening on" line)."""

    def __init__(self, root, store=None, echo_section=None, plugins_dir=None, allow='["echo"]'):
        self.root = root
        self.store = store or os.path.join(root, "store")
        self.config = os.path.join(root, "xconnd.yaml")
        self.log_path = os.path.join(root, "xconnd.log")
        self.plugins_dir = plugins_dir or PLUGINS
        self.allow = allow
        self.proc = None
        self.port = None
        self.write_config(echo_section)

    def write_config(self, echo_section=None, listen="127.0.0.1:0", raw=None):
        text = raw if raw is not None else (
            "server:\n"
            f"  listen: \"{listen}\"\n"
            "  io_threads: 2\n"
            "store:\n"
            f"  path: \"{self.store}\"\n"
            "  map_size_bytes: 67108864\n"
            "plugins:\n"
            f"  dir: \"{self.plugins_dir}\"\n"
            "  watch: false\n"
            f"  allow: {self.allow}\n"
            "  threads: 2\n"
            "connectors:\n"
            "  echo:\n"
            f"    config: {json.dumps(echo_section or {})}\n")
        with open(self.config, "w") as f:
            f.write(text)

    def start(self):
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([XCONND, "--config", self.config], stdout=log, stderr=subprocess.STDOUT,
                                         cwd=self.root, stdin=subprocess.DEVNULL)

        def listening():
            if self.proc.poll() is not None:
                raise AssertionError(f"xconnd ended with {self.proc.returncode}:\n{self.log()}")
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log()[offset:])
            return m and int(m.group(1))
        self.port = wait_until("xconnd's 'listening on' line", listening, START_DEADLINE_S)
        with open(os.path.join(self.store, "api_key")) as f:
            self.key = f.read().strip()
        wait_until("GET /connectors", lambda: self.get("/connectors")[0] == 200, START_DEADLINE_S)
        return self

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def get(self, path, method="GET"):
        req = urllib.request.Request(self.url + path, method=method, headers={"Authorization": "Bearer " + self.key})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, None
        except OSError:
            return 0, None

    def connector(self, plugin="echo"):
        status, body = self.get("/connectors")
        assert status == 200, status
        return next((c for c in body["connectors"] if c["plugin_id"] == plugin), None)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class WsClient:
    """The smallest WebSocket client the data plane needs (RFC 6455: client frames masked, text frames only)."""

    def __init__(self, port, key, plugin="echo"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        nonce = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /connectors/{plugin}/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {nonce}\r\nSec-WebSocket-Version: 13\r\n"
                           "Sec-WebSocket-Protocol: xagent.connector.packet.v1\r\n"
                           f"Authorization: Bearer {key}\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise AssertionError("the server closed during the WebSocket handshake")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        assert lines[0].split()[1] == "101", lines[0]
        accept = base64.b64encode(hashlib.sha1((nonce + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode())
                                  .digest()).decode()
        assert any(l.lower() == "sec-websocket-accept: " + accept.lower() for l in lines), lines
        self.counter = 0
        self.connector_id = None

    def _send_frame(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            header = bytes([0x80 | opcode, 0x80 | n])
        elif n < 65536:
            header = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
        else:
            header = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise AssertionError("the server closed the WebSocket")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._read(2), "big")
            elif n == 127:
                n = int.from_bytes(self._read(8), "big")
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = b0 & 0x0F
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode == 0x8:
                raise AssertionError(f"the server closed the WebSocket: {payload!r}")
            message += payload
            if b0 & 0x80:
                return json.loads(message)

    def request(self, type_, payload, channel=None):
        self.counter += 1
        packet = {"schema": "xagent.connector.packet/v1", "packet_id": f"pkt_ctl_{self.counter}",
                  "request_id": f"req_ctl_{self.counter}", "type": type_, "time": int(time.time() * 1000),
                  "payload": payload}
        if channel is not None:
            packet["connector_channel_id"] = channel
        self._send_frame(0x1, json.dumps(packet).encode())
        while True:
            answer = self.receive()
            if answer.get("request_id") == packet["request_id"]:
                return answer

    def hello(self, card_id="im.echo"):
        ack = self.request("connector.hello", {"connector_card_id": card_id, "connector_id": "",
                                               "protocol_version": "3.0",
                                               "supported_profiles": ["xagent.im.v1", "xagent.im.v2"]})
        assert ack["type"] == "connector.hello.ack", ack
        self.connector_id = ack["payload"]["connector_id"]
        return self

    def open_channel(self, token=None):
        ack = self.request("channel.open", {}, channel="")
        assert ack["type"] == "channel.open.ack", ack
        channel = ack["connector_channel_id"]
        if token is not None:
            ack = self.request("auth.start", {"flow_id": "echo_token", "input": {"token": token}}, channel=channel)
            assert ack["payload"].get("status") == "authenticated", ack
        return channel

    def close(self):
        try:
            self._send_frame(0x8, (1000).to_bytes(2, "big"))
        except OSError:
            pass
        self.sock.close()


class Stub:
    """A loopback HTTP server answering each request with handler(request_handler)."""

    def __init__(self, handler):
        self.requests = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                stub.requests.append((self.command, self.path, dict(self.headers)))
                handler(self)

            do_POST = do_GET

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def lmdb_like(size):
    """Bytes that start as an LMDB data file does (the meta page's magic at offset 16)."""
    head = bytearray(size)
    head[16:20] = (0xBEEFC0DE).to_bytes(4, "little")
    return bytes(head)


class Case(unittest.TestCase):
    """Each test gets a temporary folder and, when it asks, a daemon in it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="xconnctl-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.secrets = []  # never in any output of the script

    def daemon(self, name="d", **kw):
        root = os.path.join(self.tmp, name)
        os.makedirs(root, exist_ok=True)
        d = Daemon(root, **kw)
        self.addCleanup(d.stop)
        d.start()
        self.secrets.append(d.key)
        return d

    def env(self, daemon=None, **extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("XCONN")}
        if daemon:
            env["XCONN_URL"] = daemon.url
            env["XCONN_KEY_FILE"] = os.path.join(daemon.store, "api_key")
        env.update(extra)
        return env

    def ctl(self, *args, daemon=None, env=None, timeout=RUN_DEADLINE_S, cwd=None):
        run = subprocess.run([sys.executable, XCONNCTL, *args], capture_output=True, text=True, timeout=timeout,
                             env=env if env is not None else self.env(daemon), cwd=cwd or self.tmp)
        for secret in self.secrets:
            self.assertNotIn(secret, run.stdout + run.stderr, "the API key was printed")
        return run

    def assertExit(self, run, code):
        self.assertEqual(run.returncode, code, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}")


class FollowReader:
    """Lines of a running process's stdout, read on a thread, waited for with a deadline."""

    def __init__(self, proc):
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern, deadline_s=10):
        until = time.monotonic() + deadline_s
        while True:
            left = until - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line matching {pattern!r} within {deadline_s} s; saw {self.seen}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(line)
            if re.search(pattern, line):
                return line


# ---------------------------------------------------------------------------------------------------------------


class StatusTest(Case):
    def test_table_lists_each_plugin_in_aligned_columns(self):
        d = self.daemon()
        run = self.ctl("status", daemon=d)
        self.assertExit(run, 0)
        lines = run.stdout.splitlines()
        header = lines[0]
        for column in ("PLUGIN", "HEALTH", "GEN", "VERSION", "OPEN", "SIGNED-IN", "PENDING", "LAST RELOAD"):
            self.assertIn(column, header)
        row = next(l for l in lines[1:] if l.startswith("echo "))
        self.assertEqual(row.index("healthy"), header.index("HEALTH"))
        self.assertEqual(row.index("0.1.0"), header.index("VERSION"))
        # GEN is right-aligned: the number ends where the header does.
        self.assertEqual(row[header.index("GEN") + 2], "1")
        self.assertTrue(row.rstrip().endswith("-"), row)  # no reload yet

    def test_json_is_the_servers_listing_with_each_health(self):
        d = self.daemon()
        run = self.ctl("status", "--json", daemon=d)
        self.assertExit(run, 0)
        body = json.loads(run.stdout)
        self.assertEqual([c["plugin_id"] for c in body["connectors"]], ["echo"])
        self.assertEqual(body["connectors"][0]["generation"], 1)
        self.assertEqual(body["refused"], [])
        self.assertEqual(body["health"]["echo"]["status"], "ok")
        self.assertEqual(body["health"]["echo"]["channels"], {"open": 0, "authenticated": 0})
        # Global options are taken after the verb as well as before it.
        self.assertEqual(json.loads(self.ctl("--json", "status", daemon=d).stdout), body)

    def test_refused_files_are_listed_after_the_plugins(self):
        plugins = os.path.join(self.tmp, "plugins")
        os.makedirs(plugins)
        shutil.copy(os.path.join(PLUGINS, "echo.so"), plugins)
        with open(os.path.join(plugins, "broken.so"), "w") as f:
            f.write("not a shared object\n")
        d = self.daemon(plugins_dir=plugins, allow="[]")
        run = self.ctl("status", daemon=d)
        self.assertExit(run, 0)
        self.assertRegex(run.stdout, r"(?m)^refused:$")
        self.assertRegex(run.stdout, r"(?m)^\S*/broken\.so\s+broken\s+\S")
        body = json.loads(self.ctl("status", "--json", daemon=d).stdout)
        self.assertEqual([os.path.basename(r["file"]) for r in body["refused"]], ["broken.so"])

    def test_the_script_runs_by_itself_and_matches_xconnds_version(self):
        self.assertTrue(os.access(XCONNCTL, os.X_OK), "tools/xconnctl/xconnctl is not executable")
        with open(XCONNCTL) as f:
            self.assertEqual(f.readline().rstrip("\n"), "#!/usr/bin/env python3")
        run = subprocess.run([XCONNCTL, "--version"], capture_output=True, text=True, timeout=RUN_DEADLINE_S)
        self.assertExit(run, 0)
        daemon_version = subprocess.run([XCONND, "--version"], capture_output=True, text=True).stdout.split()[1]
        self.assertEqual(run.stdout.strip(), "xconnctl " + daemon_version)
        run = subprocess.run([XCONNCTL, "--help"], capture_output=True, text=True, timeout=RUN_DEADLINE_S)
        self.assertExit(run, 0)
        for code in range(7):
            self.assertRegex(run.stdout, rf"(?m)^  {code}  \w")


    def test_every_group_of_cases_has_its_ctest_entry(self):
        groups = sorted(name[:-4] for name, value in globals().items()
                        if isinstance(value, type) and issubclass(value, Case) and name.endswith("Test"))
        cmake = read_bytes(os.path.join(os.path.dirname(os.path.abspath(__file__)), "CMakeLists.txt")).decode()
        listed = re.search(r"foreach\(group ([^)]*)\)", cmake).group(1).split()
        self.assertEqual(sorted(listed), groups)


class ReloadTest(Case):
    def test_reload_plugin_raises_its_generation(self):
        d = self.daemon()
        run = self.ctl("reload", "echo", daemon=d)
        self.assertExit(run, 0)
        self.assertRegex(run.stdout, r"^echo: reloaded gen 1\u21922, pause \d+ ms")
        self.assertEqual(d.connector()["generation"], 2)
        run = self.ctl("reload", "echo", "--json", daemon=d)
        self.assertExit(run, 0)
        entry = json.loads(run.stdout)
        self.assertEqual(entry["generation"], 3)
        self.assertEqual(entry["last_reload"]["status"], "reloaded")
        table = self.ctl("status", daemon=d).stdout
        self.assertRegex(table, r"reloaded gen 2\u21923, pause \d+ ms at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d")

    def test_reload_plugin_takes_its_new_section_or_reports_the_refusal(self):
        d = self.daemon()
        digest = d.connector()["config_digest"]
        d.write_config({"sent_log_max": 50})
        run = self.ctl("reload", "echo", daemon=d)
        self.assertExit(run, 0)
        self.assertRegex(run.stdout, r"^echo: reloaded gen 1\u21922")
        self.assertNotEqual(d.connector()["config_digest"], digest)
        d.write_config({"bogus": 1})
        run = self.ctl("reload", "echo", daemon=d)
        self.assertExit(run, 1)
        self.assertRegex(run.stdout, r"^echo: refused: .*bogus")
        self.assertEqual(d.connector()["generation"], 2)  # the old one keeps serving

    def test_an_invalid_file_is_exit_6_with_file_and_line(self):
        d = self.daemon()
        text = read_bytes(d.config).decode().replace("  io_threads: 2\n", "  io_threads: 2\n  heartbeat_s: soon\n")
        d.write_config(raw=text)
        for args in (("reload", "echo"), ("reload",)):
            run = self.ctl(*args, daemon=d)
            self.assertExit(run, 6)
            self.assertIn(f"{d.config}:4: server.heartbeat_s", run.stderr)
        self.assertEqual(d.connector()["generation"], 1)

    def test_reload_all_names_what_it_reloads_and_waits_for_it(self):
        d = self.daemon()
        run = self.ctl("reload", daemon=d)
        self.assertExit(run, 0)
        self.assertIn(f"config: {d.config} (applied)", run.stdout)
        self.assertIn("reloading: none", run.stdout)
        self.assertIn("unchanged: echo", run.stdout)
        d.write_config({"sent_log_max": 7})
        run = self.ctl("reload", daemon=d)
        self.assertExit(run, 0)
        self.assertIn("reloading: echo", run.stdout)
        self.assertRegex(run.stdout, r"(?m)^echo: reloaded gen 1\u21922")
        d.write_config({"sent_log_max": 7}, listen=f"127.0.0.1:{free_port()}")
        run = self.ctl("reload", "--json", daemon=d)
        self.assertExit(run, 0)
        answer = json.loads(run.stdout)
        self.assertEqual(answer["reloading"], [])
        self.assertIn("server.listen", answer["restart_required"])
        run = self.ctl("reload", daemon=d)
        self.assertIn("restart_required: server.listen", run.stdout)

    def test_unknown_plugin_is_exit_5(self):
        d = self.daemon()
        run = self.ctl("reload", "nope", daemon=d)
        self.assertExit(run, 5)
        self.assertIn("unknown plugin 'nope'", run.stderr)


class EventsTest(Case):
    def test_a_reload_shows_as_adapter_loaded(self):
        d = self.daemon()
        self.assertExit(self.ctl("reload", "echo", daemon=d), 0)
        run = self.ctl("events", "echo", daemon=d)
        self.assertExit(run, 0)
        lines = run.stdout.splitlines()
        self.assertEqual(len(lines), 2, run.stdout)
        self.assertRegex(lines[0], r"^1  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  AdapterLoaded  -  generation=1 ")
        self.assertRegex(lines[1], r"^2  \S+  AdapterLoaded  -  generation=2 version=\S+ config_digest=")
        run = self.ctl("events", "echo", "--after", "1", daemon=d)
        self.assertEqual([l.split()[0] for l in run.stdout.splitlines()], ["2"])
        body = json.loads(self.ctl("events", "echo", "--json", daemon=d).stdout)
        self.assertEqual([e["event_type"] for e in body["events"]], ["AdapterLoaded", "AdapterLoaded"])
        self.assertEqual(body["next_after"], 2)

    def test_channel_events_name_their_session(self):
        d = self.daemon()
        ws = WsClient(d.port, d.key).hello()
        self.addCleanup(ws.close)
        channel = ws.open_channel(token="tok-events")
        run = self.ctl("events", "echo", "--after", "1", daemon=d)
        self.assertExit(run, 0)
        self.assertRegex(run.stdout, rf"(?m)^\d+  \S+  ChannelStatusChanged  {channel}  .*\bstatus=")

    def follow_then_signal(self, signum, json_lines):
        d = self.daemon()
        args = ["events", "echo", "--follow", "--after", "1"] + (["--json"] if json_lines else [])
        proc = subprocess.Popen([sys.executable, XCONNCTL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env(d), cwd=self.tmp)
        self.addCleanup(proc.stderr.close)
        self.addCleanup(proc.stdout.close)
        self.addCleanup(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
        reader = FollowReader(proc)
        # A reload makes event 2: the follower sees it whether it asks before or after (it asks past 1).
        d.get("/connectors/echo/reload", method="POST")
        if json_lines:
            line = reader.wait_for(r'"event_type":"AdapterLoaded"')
            self.assertEqual(json.loads(line)["payload"]["generation"], 2)
        else:
            reader.wait_for(r"^2  \S+  AdapterLoaded  -  generation=2 ")
        # Now it is held in the next long poll: the signal ends it at once, with status 0.
        proc.send_signal(signum)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            self.fail("xconnctl events --follow did not end on the signal")
        stderr = proc.stderr.read()
        self.assertEqual(proc.returncode, 0, stderr)
        self.assertNotIn("Traceback", stderr)
        self.assertNotIn(d.key, stderr)

    def test_follow_prints_new_events_and_ends_on_sigint(self):
        self.follow_then_signal(signal.SIGINT, json_lines=False)

    def test_follow_json_lines_and_sigterm(self):
        self.follow_then_signal(signal.SIGTERM, json_lines=True)

    def test_unknown_plugin_is_exit_5(self):
        d = self.daemon()
        self.assertExit(self.ctl("events", "nope", daemon=d), 5)
        self.assertExit(self.ctl("events", "nope", "--follow", daemon=d), 5)


class ChannelsTest(Case):
    def test_lists_open_and_signed_in_channels(self):
        d = self.daemon()
        ws = WsClient(d.port, d.key).hello()
        self.addCleanup(ws.close)
        signed = ws.open_channel(token="tok-secret-1")
        fresh = ws.open_channel()
        run = self.ctl("channels", "echo", daemon=d)
        self.assertExit(run, 0)
        lines = run.stdout.splitlines()
        header = lines[0]
        for column in ("CHANNEL", "CONNECTOR_ID", "SIGNED-IN", "ROUTED", "STATUS", "CREATED"):
            self.assertIn(column, header)
        rows = {l.split()[0]: l for l in lines[1:-1]}
        self.assertEqual(set(rows), {signed, fresh})
        self.assertEqual(rows[signed].split()[1:4], [ws.connector_id, "yes", "yes"])
        self.assertEqual(rows[fresh].split()[1:4], [ws.connector_id, "no", "yes"])
        self.assertEqual(rows[signed].index("yes"), header.index("SIGNED-IN"))
        self.assertEqual(lines[-1], "2 channels of echo: 1 signed in, 2 routed")
        self.assertNotIn("tok-secret-1", run.stdout)
        body = json.loads(self.ctl("channels", "echo", "--json", daemon=d).stdout)
        by_id = {c["connector_channel_id"]: c for c in body["channels"]}
        self.assertTrue(by_id[signed]["authenticated"])
        self.assertEqual(by_id[signed]["status"], "connected")
        self.assertFalse(by_id[fresh]["authenticated"])

    def test_unknown_plugin_is_exit_5(self):
        d = self.daemon()
        run = self.ctl("channels", "nope", daemon=d)
        self.assertExit(run, 5)
        self.assertIn("unknown plugin 'nope'", run.stderr)


class BackupTest(Case):
    def test_backup_then_restore_brings_the_channels_back(self):
        d = self.daemon()
        ws = WsClient(d.port, d.key).hello()
        channels = {ws.open_channel(token=f"tok-{i}") for i in range(2)}
        ws.close()
        target = os.path.join(self.tmp, "backups", "today")
        run = self.ctl("backup", target, daemon=d)
        self.assertExit(run, 0)
        self.assertIn("To restore:", run.stdout)
        self.assertIn("sealing_key", run.stdout)
        data = os.path.join(target, "data.mdb")
        record = json.loads(read_bytes(os.path.join(target, "backup.json")))
        content = read_bytes(data)
        self.assertEqual(record["sha256"], hashlib.sha256(content).hexdigest())
        self.assertEqual(record["bytes"], len(content))
        self.assertEqual(record["url"], d.url)
        self.assertEqual(record["xconnctl_version"], "0.1.0")
        self.assertRegex(record["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertFalse(os.path.exists(data + ".part"))
        # No second backup over the first without --force; with it, the new one replaces it.
        run = self.ctl("backup", target, daemon=d)
        self.assertExit(run, 1)
        self.assertIn("--force", run.stderr)
        self.assertExit(self.ctl("backup", target, "--force", daemon=d), 0)
        # Restore as the output says: data.mdb with the old sealing_key and api_key in a new store folder.
        store = os.path.join(self.tmp, "restored", "store")
        os.makedirs(store)
        shutil.copy(data, store)
        for name in ("sealing_key", "api_key"):
            shutil.copy(os.path.join(d.store, name), store)
            os.chmod(os.path.join(store, name), 0o600)
        d2 = self.daemon("restored", store=store)
        self.assertEqual(d2.key, d.key)
        run = self.ctl("channels", "echo", "--json", daemon=d2)
        self.assertExit(run, 0)
        restored = {c["connector_channel_id"]: c for c in json.loads(run.stdout)["channels"]}
        self.assertEqual(set(restored), channels)
        self.assertTrue(all(c["authenticated"] for c in restored.values()))

    def stub_backup(self, respond):
        key = "stub-key-0123456789abcdef"
        self.secrets.append(key)
        stub = Stub(respond)
        self.addCleanup(stub.close)
        target = os.path.join(self.tmp, "b")
        run = self.ctl("backup", target, env=self.env(XCONN_URL=stub.url, XCONN_API_KEY=key))
        self.assertEqual(stub.requests[0][1], "/admin/backup")
        self.assertEqual(stub.requests[0][2].get("Authorization"), "Bearer " + key)
        return run, target

    def test_a_chunked_body_cut_short_is_an_error_and_leaves_nothing(self):
        def respond(h):
            h.send_response(200)
            h.send_header("Content-Type", "application/octet-stream")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            h.wfile.write(b"1000\r\n" + lmdb_like(4096) + b"\r\n")  # and no last chunk
            h.wfile.flush()
            h.close_connection = True

        run, target = self.stub_backup(respond)
        self.assertExit(run, 1)
        self.assertIn("incomplete", run.stderr)
        self.assertEqual(os.listdir(target), [])

    def test_a_cut_inside_a_chunk_is_an_error_too(self):
        def respond(h):
            h.send_response(200)
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            h.wfile.write(b"2000\r\n" + lmdb_like(100))
            h.wfile.flush()
            h.close_connection = True

        run, target = self.stub_backup(respond)
        self.assertExit(run, 1)
        self.assertIn("incomplete", run.stderr)
        self.assertEqual(os.listdir(target), [])

    def test_a_complete_body_from_the_stub_is_kept(self):
        body = lmdb_like(10000)

        def respond(h):
            h.send_response(200)
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            for i in range(0, len(body), 4096):
                part = body[i:i + 4096]
                h.wfile.write(b"%x\r\n" % len(part) + part + b"\r\n")
            h.wfile.write(b"0\r\n\r\n")

        run, target = self.stub_backup(respond)
        self.assertExit(run, 0)
        self.assertEqual(read_bytes(os.path.join(target, "data.mdb")), body)

    def test_a_second_backup_running_is_the_servers_error(self):
        def respond(h):
            text = json.dumps({"error": {"code": "backup_running", "message": "a backup is running"}}).encode()
            h.send_response(409)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(text)))
            h.end_headers()
            h.wfile.write(text)

        run, target = self.stub_backup(respond)
        self.assertExit(run, 1)
        self.assertIn("409 backup_running: a backup is running", run.stderr)
        self.assertFalse(os.path.exists(os.path.join(target, "data.mdb")))


class CheckConfigTest(Case):
    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_valid_is_0_and_invalid_is_6_with_file_and_line(self):
        good = self.write("good.yaml", "server:\n  listen: \"127.0.0.1:0\"\n")
        bad = self.write("bad.yaml", "server:\n  listen: \"127.0.0.1:0\"\n  heartbeat_s: soon\n")
        self.assertExit(self.ctl("check-config", "--xconnd", XCONND, good), 0)
        run = self.ctl("check-config", "--xconnd", XCONND, bad)
        self.assertExit(run, 6)
        self.assertIn(f"{bad}:3: server.heartbeat_s", run.stderr)
        # xconnd found through XCONND, then beside the script.
        self.assertExit(self.ctl("check-config", bad, env=self.env(XCONND=XCONND)), 6)
        beside = os.path.join(self.tmp, "bin")
        os.makedirs(beside)
        shutil.copy(XCONNCTL, beside)
        os.symlink(XCONND, os.path.join(beside, "xconnd"))
        run = subprocess.run([sys.executable, os.path.join(beside, "xconnctl"), "check-config", good],
                             capture_output=True, text=True, env=self.env(PATH="/nonexistent"), timeout=RUN_DEADLINE_S)
        self.assertExit(run, 0)

    def test_no_xconnd_is_exit_1(self):
        run = self.ctl("check-config", "--xconnd", os.path.join(self.tmp, "missing"), "x.yaml")
        self.assertExit(run, 1)


class ErrorsTest(Case):
    def test_a_wrong_key_is_exit_4_and_never_printed(self):
        d = self.daemon()
        wrong = "wrong-key-0123456789abcdef"
        self.secrets.append(wrong)
        run = self.ctl("status", env=self.env(d, XCONN_API_KEY=wrong, XCONN_KEY_FILE=""))
        self.assertExit(run, 4)
        self.assertIn("401", run.stderr)
        key_file = os.path.join(self.tmp, "wrong_key")
        with open(key_file, "w") as f:
            f.write(wrong + "\n")
        self.assertExit(self.ctl("channels", "echo", "--key-file", key_file, daemon=d), 4)
        self.assertExit(self.ctl("status", "--key-file", os.path.join(self.tmp, "absent"), daemon=d), 4)
        # A key that could not be a header value is refused before it is sent, without being quoted.
        self.secrets.append("half-one")
        with open(key_file, "w") as f:
            f.write("half-one\nhalf-two\n")
        run = self.ctl("status", "--key-file", key_file, daemon=d)
        self.assertExit(run, 4)
        self.assertNotIn("Traceback", run.stderr)

    def test_the_key_is_found_in_the_store_folder(self):
        d = self.daemon()
        env = self.env(XCONN_URL=d.url)
        self.assertExit(self.ctl("status", "--store", d.store, env=env), 0)
        self.assertExit(self.ctl("status", env=dict(env, XCONN_STORE=d.store)), 0)
        self.assertExit(self.ctl("status", env=dict(env, XCONN_API_KEY=d.key)), 0)

    def test_a_key_in_a_server_message_is_not_printed(self):
        key = "stub-key-fedcba9876543210"
        self.secrets.append(key)

        def respond(h):
            text = json.dumps({"error": {"code": "internal_error", "message": f"odd: {key}"}}).encode()
            h.send_response(500)
            h.send_header("Content-Length", str(len(text)))
            h.end_headers()
            h.wfile.write(text)

        stub = Stub(respond)
        self.addCleanup(stub.close)
        run = self.ctl("status", env=self.env(XCONN_URL=stub.url, XCONN_API_KEY=key))
        self.assertExit(run, 1)
        self.assertIn("500 internal_error: odd: [redacted]", run.stderr)

    def test_unknown_plugin_is_exit_5(self):
        d = self.daemon()
        for verb in ("events", "channels", "reload"):
            self.assertExit(self.ctl(verb, "nope", daemon=d), 5)

    def test_server_down_or_silent_is_exit_3(self):
        env = self.env(XCONN_URL=f"http://127.0.0.1:{free_port()}", XCONN_API_KEY="k" * 32)
        run = self.ctl("status", env=env)
        self.assertExit(run, 3)
        self.assertIn("connection refused", run.stderr)
        # A listener that never answers: the connection is made (the kernel's backlog), no answer comes.
        silent = socket.socket()
        self.addCleanup(silent.close)
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        env["XCONN_URL"] = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        run = self.ctl("status", "--timeout", "0.5", env=env)
        self.assertExit(run, 3)
        self.assertIn("within 0.5 s", run.stderr)
        self.assertLess(time.monotonic() - started, 10)

    def test_bad_usage_is_exit_2(self):
        env = self.env(XCONN_API_KEY="k" * 32)
        for args in ([], ["frobnicate"], ["events"], ["channels"], ["backup"], ["status", "--timeout", "-1"],
                     ["events", "echo", "--after", "x"], ["--key", "k" * 32, "status"], ["--key=abc", "status"],
                     ["status", "--url", "ftp://127.0.0.1:1"]):
            run = self.ctl(*args, env=env)
            self.assertExit(run, 2)
            self.assertNotIn("Traceback", run.stderr)
        self.assertNotIn("k" * 32, self.ctl("--key", "k" * 32, "status", env=env).stderr)


def main():
    global XCONND, XCONNCTL, PLUGINS
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--xconnd", required=True)
    p.add_argument("--plugins", required=True)
    p.add_argument("--xconnctl", required=True)
    known, rest = p.parse_known_args()
    XCONND = os.path.abspath(known.xconnd)
    PLUGINS = os.path.abspath(known.plugins)
    XCONNCTL = os.path.abspath(known.xconnctl)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
