#!/usr/bin/env python3
"""Measures what a backlog of inbound messages costs xconnd in memory (docs/bench.md "Backlog memory").

  unread    one data-plane socket that never reads, 50 channels, 32 messages of 60 KB each injected: the server's
            memory once deliveries settle (before the fix, everything the windows allowed was queued on the socket),
            then the socket reads and acks everything (all must arrive)
  pending   3,200 messages of 60 KB for 4 closed channels (nothing can be delivered): memory after the emits, and
            after a restart on that store (the queues read back), then delivered and checked byte for byte

Each figure is the server's RSS and its anonymous part (RssAnon: heap, not the store's mapped pages) from
/proc/PID/status, as growth over the same process after its channels were opened. Every wait has a deadline;
loopback only.

usage: tools/backlog_memory.py [--build DIR] [--only unread,pending]
"""
import argparse
import base64
import json
import os
import socket
import struct
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capacity import Server, server_memory  # noqa: E402  (the same fresh echo-only xconnd as the capacity runs)

BODY = 60000
MIB = 1024 * 1024


class Socket:
    """A minimal data-plane WebSocket client (text frames, masked, no extensions)."""

    def __init__(self, port, key):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        nonce = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET /connectors/echo/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {nonce}\r\nSec-WebSocket-Version: 13\r\n"
                        f"Sec-WebSocket-Protocol: xagent.connector.packet.v1\r\nAuthorization: Bearer {key}\r\n\r\n")
                       .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.s.recv(4096)
            if not chunk:
                sys.exit("backlog_memory: the upgrade was refused")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            sys.exit(f"backlog_memory: no upgrade: {head[:200]!r}")
        self.n = 0

    def _frame(self, opcode, data):
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode])
        head += bytes([0x80 | n]) if n < 126 else (bytes([0x80 | 126]) + struct.pack("!H", n) if n < 65536
                                                   else bytes([0x80 | 127]) + struct.pack("!Q", n))
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def send(self, kind, payload, channel=None):
        self.n += 1
        packet = {"schema": "xagent.connector.packet/v1", "packet_id": f"pkt_{self.n}", "request_id": f"req_{self.n}",
                  "type": kind, "time": int(time.time() * 1000), "payload": payload}
        if channel:
            packet["connector_channel_id"] = channel
        self._frame(1, json.dumps(packet).encode())
        return packet["request_id"]

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def receive(self):
        """The next text packet, its fragments joined (pings answered on the way)."""
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            data = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 9:
                self._frame(10, data)
            elif opcode == 8:
                raise EOFError(f"closed by the server: {data[:2].hex()}")
            elif opcode in (0, 1):
                message += data
                if b0 & 0x80:  # FIN: the message is whole
                    return json.loads(message)

    def request(self, kind, payload, channel=None):
        rid = self.send(kind, payload, channel)
        while True:
            p = self.receive()
            if p.get("request_id") == rid:
                return p


def body(channel, i):
    head = f"c{channel}-m{i}-"
    return head + "x" * (BODY - len(head))


def inbound(server, key):
    with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{server.port}/connectors/echo/health",
                                                       headers={"Authorization": f"Bearer {server.key}"}),
                                timeout=10) as r:
        return json.loads(r.read())["inbound"].get(key, 0)


def inject(server, channel, text, msg_id):
    data = json.dumps({"connector_channel_id": channel, "text": text, "msg_id": msg_id}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}/connectors/echo/inject", data=data,
                                     method="POST", headers={"Authorization": f"Bearer {server.key}"})
    with urllib.request.urlopen(request, timeout=30) as r:
        if r.status != 202:
            sys.exit(f"backlog_memory: inject answered {r.status}")


def wait_for(what, condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    sys.exit(f"backlog_memory: {what} within {seconds} s")


def open_channels(ws, count):
    ids = []
    for _ in range(count):
        cid = ws.request("channel.open", {}).get("connector_channel_id")
        ack = ws.request("auth.start", {"flow_id": "echo_token", "input": {"token": "tok-good-1"}}, cid)
        if ack.get("payload", {}).get("status") != "authenticated":
            sys.exit(f"backlog_memory: the channel did not sign in: {ack}")
        ids.append(cid)
    return ids


def mib(values):
    return {k: round(values[k] / MIB, 1) for k in ("VmRSS", "RssAnon")}


def growth(pid, base):
    now = server_memory(pid)
    return {f"{k}_growth": round((now[k] - base[k]) / MIB, 1) for k in ("VmRSS", "RssAnon")}


def drain(ws, ids, total):
    """Reads and acks until total messages arrived; checks each channel's order and bodies."""
    nxt = {cid: 0 for cid in ids}
    for _ in range(total):
        while True:
            p = ws.receive()
            if p.get("type") == "chat.message":
                break
        cid = p["connector_channel_id"]
        want = body(ids.index(cid), nxt[cid])
        if p["payload"].get("text") != want:
            sys.exit(f"backlog_memory: channel {ids.index(cid)} message {nxt[cid]} arrived wrong or out of order")
        nxt[cid] += 1
        ws.send("chat.message.ack", {"message_id": p["payload"]["message_id"], "status": "accepted"}, cid)


def run_unread(server):
    channels, per_channel = 50, 32
    ws = Socket(server.port, server.key)
    ws.request("connector.hello", {"connector_card_id": "im.echo", "connector_id": "", "protocol_version": "3.0",
                                   "supported_profiles": ["xagent.im.v2"]})
    ids = open_channels(ws, channels)
    base = server_memory(server.proc.pid)
    for i in range(per_channel):
        for ch, cid in enumerate(ids):
            inject(server, cid, body(ch, i), f"u{ch}-{i}")
    total = channels * per_channel
    # Settled: the sent counter did not move for 2 s.
    last = [-1, time.monotonic()]

    def settled():
        sent = inbound(server, "sent")
        if sent != last[0]:
            last[:] = [sent, time.monotonic()]
        return time.monotonic() - last[1] >= 2

    wait_for("the deliveries to settle", settled, 120)
    held = {"base": mib(base)} | growth(server.proc.pid, base)
    held["sent_while_unread"] = last[0]
    try:
        drain(ws, ids, total)
        wait_for("every message acked", lambda: inbound(server, "delivered") == total, 60)
        held["delivered"] = total
    except (EOFError, OSError) as e:
        held["delivered"] = f"no: {e}"
    return held


def run_pending(server):
    channels, per_channel = 4, 800
    ws = Socket(server.port, server.key)
    hello = ws.request("connector.hello", {"connector_card_id": "im.echo", "connector_id": "",
                                           "protocol_version": "3.0", "supported_profiles": ["xagent.im.v2"]})
    connector_id = hello["payload"]["connector_id"]
    ids = open_channels(ws, channels)
    for cid in ids:
        ws.request("channel.close", {}, cid)
    base = server_memory(server.proc.pid)
    for i in range(per_channel):
        for ch, cid in enumerate(ids):
            inject(server, cid, body(ch, i), f"p{ch}-{i}")
    total = channels * per_channel
    wait_for("every emit stored", lambda: inbound(server, "pending") == total, 60)
    out = {"base": mib(base), "after_emits": growth(server.proc.pid, base)}
    ws.s.close()
    server.stop()
    out["restart_listening_s"] = round(server.start(), 2)  # the queues are read before it listens
    wait_for("the backlog read back", lambda: inbound(server, "pending") == total, 60)
    restarted = server_memory(server.proc.pid)
    out["after_restart"] = mib(restarted)
    ws = Socket(server.port, server.key)
    ws.request("connector.hello", {"connector_card_id": "im.echo", "connector_id": connector_id,
                                   "protocol_version": "3.0", "supported_profiles": ["xagent.im.v2"]})
    for cid in ids:
        ws.request("channel.open", {}, cid)
    drain(ws, ids, total)
    wait_for("every message acked", lambda: inbound(server, "pending") == 0, 60)
    out["delivered"] = total
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--only", default="unread,pending")
    args = ap.parse_args()
    bin_dir, plugins = os.path.join(args.build, "bin"), os.path.join(args.build, "plugins")
    results = {}
    with tempfile.TemporaryDirectory(prefix="xconn-backlog-") as work:
        for name, run in (("unread", run_unread), ("pending", run_pending)):
            if name not in args.only.split(","):
                continue
            server = Server(bin_dir, plugins, work, name)
            try:
                results[name] = run(server)
            finally:
                server.stop()
            print(name, json.dumps(results[name]), flush=True)


if __name__ == "__main__":
    main()
