#!/usr/bin/env python3
"""Keyless body flood against a running xconnd on loopback: how much memory do callers without an API key make it hold?

Opens --connections connections at once (in --batch sized steps), each sending a request without an API key that
declares and sends --body-bytes of body to --path (a keyed route by default), reads the answer and closes. Reads the
daemon's VmRSS from /proc/<pid>/status before, at its peak during, and --settle seconds after the flood, and prints
one JSON object. Starts nothing: the daemon is already running (give its pid). Bounded by --timeout overall.

  tools/keyless_flood.py --url http://127.0.0.1:8840 --pid "$(pidof xconnd)" [--connections 2000]

The caller's open-file limit must cover the connections (ulimit -n), and the daemon's server.max_connections too.
"""
import argparse
import ipaddress
import json
import selectors
import socket
import sys
import time
import urllib.parse


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def loopback_target(url):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or parts.port is None:
        raise SystemExit("--url must be http://HOST:PORT")
    host = "127.0.0.1" if parts.hostname == "localhost" else parts.hostname
    if not ipaddress.ip_address(host).is_loopback:
        raise SystemExit("--url must name a loopback address")
    return host, parts.port


class Conn:
    def __init__(self, sock, request):
        self.sock = sock
        self.out = memoryview(request)
        self.sent = 0
        self.got = b""
        self.status = None
        self.error = None


def flood(host, port, args, pid, samples):
    head = (f"POST {args.path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {args.body_bytes}\r\n\r\n").encode("ascii")
    request = head + b" " * args.body_bytes  # one buffer every connection sends from
    sel = selectors.DefaultSelector()
    deadline = time.monotonic() + args.timeout
    opened, done = 0, []
    live = {}
    next_sample = 0.0

    def finish(c, error=None):
        if error and c.status is None:
            c.error = error
        sel.unregister(c.sock)
        c.sock.close()
        live.pop(id(c), None)
        done.append(c)

    while (opened < args.connections or live) and time.monotonic() < deadline:
        for _ in range(min(args.batch, args.connections - opened)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex((host, port))
            c = Conn(s, request)
            live[id(c)] = c
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
            opened += 1
        for key, events in sel.select(timeout=0.05):
            c = key.data
            if events & selectors.EVENT_WRITE and c.sent < len(c.out):
                try:
                    c.sent += c.sock.send(c.out[c.sent:c.sent + 262144])
                except BlockingIOError:
                    pass
                except OSError as e:  # the server answered and closed before taking the whole body
                    c.sent = len(c.out)
                    c.error = e.__class__.__name__
                if c.sent >= len(c.out):
                    sel.modify(c.sock, selectors.EVENT_READ, c)
            if events & selectors.EVENT_READ:
                try:
                    data = c.sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError as e:
                    finish(c, e.__class__.__name__)
                    continue
                c.got += data
                if c.status is None and b"\r\n" in c.got:
                    c.status = int(c.got.split(b" ", 2)[1])
                if not data or c.status is not None:
                    finish(c, None if data else "closed")
        now = time.monotonic()
        if now >= next_sample:
            samples.append(vm_rss_kib(pid))
            next_sample = now + 0.1
    for c in list(live.values()):
        sel.unregister(c.sock)
        c.sock.close()
        c.error = c.error or "timeout"
        done.append(c)
    return done


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True, help="http://127.0.0.1:PORT of the running xconnd")
    p.add_argument("--pid", type=int, required=True, help="the xconnd process whose VmRSS is read")
    p.add_argument("--path", default="/connectors/echo/inject", help="the route the keyless bodies are sent to")
    p.add_argument("--connections", type=int, default=2000)
    p.add_argument("--body-bytes", type=int, default=1048576)
    p.add_argument("--batch", type=int, default=200, help="connections opened per step")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole flood")
    p.add_argument("--settle", type=float, default=10.0, help="seconds after the flood before VmRSS is read again")
    args = p.parse_args()
    if not 1 <= args.connections <= 20000 or not 0 <= args.body_bytes <= 64 * 1048576:
        raise SystemExit("--connections 1..20000, --body-bytes 0..64 MiB")
    host, port = loopback_target(args.url)

    before = vm_rss_kib(args.pid)
    samples = [before]
    started = time.monotonic()
    done = flood(host, port, args, args.pid, samples)
    took = time.monotonic() - started
    end = time.monotonic() + args.settle
    while time.monotonic() < end:
        samples.append(vm_rss_kib(args.pid))
        time.sleep(0.2)
    after = vm_rss_kib(args.pid)

    statuses = {}
    for c in done:
        k = str(c.status) if c.status is not None else (c.error or "none")
        statuses[k] = statuses.get(k, 0) + 1
    result = {
        "connections": args.connections, "body_bytes": args.body_bytes, "path": args.path, "seconds": round(took, 2),
        "answers": statuses,
        "rss_before_mib": round(before / 1024, 1), "rss_peak_mib": round(max(samples) / 1024, 1),
        "rss_after_mib": round(after / 1024, 1),
        "peak_growth_mib": round((max(samples) - before) / 1024, 1),
        "growth_after_settle_mib": round((after - before) / 1024, 1),
    }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
