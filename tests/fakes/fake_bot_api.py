#!/usr/bin/env python3
"""A fake Telegram Bot API on loopback, for the telegram plugin's tests: Telegram is outside this machine.

It speaks the real wire format (https://core.telegram.org/bots/api): POST or GET /bot<token>/<method> with JSON,
form or multipart bodies; answers {"ok": true, "result": ...} or {"ok": false, "error_code", "description",
"parameters": {"retry_after"}}; getUpdates long-polls with offset confirmation; files at /file/bot<token>/<path>.
The test drives it through /control/*: bots, chats, updates to deliver (an update_id of its own choosing too),
faults to answer, what was sent, and the last offsets each bot's getUpdates asked for.

Run: fake_bot_api.py [CERT KEY] -> prints "PORT <n>" once listening on 127.0.0.1 (HTTPS with that certificate
when given), then serves until killed.
"""
import warnings
warnings.filterwarnings("ignore", category=DeprecationWarning)
import base64
import cgi  # noqa: E402  (the stdlib multipart parser of Python 3.11)
import io
import json
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Condition()
bots = {}        # token -> {"id", "username", "first_name"}
chats = {}       # chat id -> chat object
updates = {}     # token -> [update]
next_update = {} # token -> next update_id
sent = []        # every message a bot sent: {"token_id", "method", "chat_id", "text", "message_id", ...}
polls = {}       # bot id -> {"calls", "active", "max_active"}
files = {}       # file_id -> {"path", "bytes"}
faults = []      # [{"method", "status", "description", "retry_after", "times"}]: answered before the real thing;
                 # method "*" meets every method, status 0 closes the connection without an answer (an outage)
calls = {}       # method -> the times (time.time()) of its last 100 calls, faults included
next_message_id = [1000]
api_port = [0]
connections = [0]  # TCP connections the Bot API side accepted (a client that reuses them opens few)


def bot_public(token):
    return {"id": bots[token]["id"], "is_bot": True, "first_name": bots[token].get("first_name", "Bot"),
            "username": bots[token]["username"]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the test's output stays readable
        pass

    def setup(self):
        super().setup()
        if self.server.server_address[1] == api_port[0]:
            with lock:
                connections[0] += 1

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def fail(self, status, description, retry_after=None):
        body = {"ok": False, "error_code": status, "description": description}
        if retry_after is not None:
            body["parameters"] = {"retry_after": retry_after}
        self.answer(status, body)

    def params(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        kind = self.headers.get("Content-Type", "")
        if kind.startswith("application/json") and raw:
            query.update(json.loads(raw))
        elif kind.startswith("application/x-www-form-urlencoded"):
            query.update(dict(urllib.parse.parse_qsl(raw.decode())))
        elif kind.startswith("multipart/form-data"):
            form = cgi.FieldStorage(fp=io.BytesIO(raw), headers=self.headers,
                                    environ={"REQUEST_METHOD": "POST", "CONTENT_TYPE": kind})
            for key in form.keys():
                item = form[key]
                if item.filename:
                    query[key] = {"filename": item.filename, "type": item.type, "bytes": len(item.value)}
                else:
                    query[key] = item.value
        return query

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def route(self):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/control/"):
            return self.control(path[len("/control/"):])
        if path.startswith("/file/bot"):
            token, _, file_path = path[len("/file/bot"):].partition("/")
            return self.file(token, file_path)
        if path.startswith("/bot"):
            token, _, method = path[len("/bot"):].partition("/")
            return self.method(token, method)
        self.fail(404, "Not Found")

    def control(self, what):
        p = self.params()
        with lock:
            if what == "bot":
                bots[p["token"]] = {"id": int(p["id"]), "username": p["username"], "first_name": p.get("first_name", "Bot")}
                updates.setdefault(p["token"], [])
                next_update.setdefault(p["token"], 1)
                return self.answer(200, {"ok": True})
            if what == "chat":
                chats[int(p["id"])] = p
                return self.answer(200, {"ok": True})
            if what == "update":
                token = p["token"]
                update = p["update"]
                # An id of the test's choosing (INT64_MAX, say): later ones follow it, as Telegram's do.
                update["update_id"] = int(update["update_id"]) if "update_id" in update else next_update[token]
                next_update[token] = max(next_update[token], update["update_id"] + 1)
                updates[token].append(update)
                lock.notify_all()
                return self.answer(200, {"ok": True, "update_id": update["update_id"]})
            if what == "updates":  # many message updates at once (load measurements)
                token = p["token"]
                for message in p["messages"]:
                    updates[token].append({"update_id": next_update[token], "message": message})
                    next_update[token] += 1
                lock.notify_all()
                return self.answer(200, {"ok": True})
            if what == "file":
                files[p["file_id"]] = {"path": p["path"], "bytes": base64.b64decode(p["base64"])}
                return self.answer(200, {"ok": True})
            if what == "fault":
                faults.append(p)
                return self.answer(200, {"ok": True})
            if what == "clear_faults":  # the outage is over: every call is answered for real again
                faults.clear()
                return self.answer(200, {"ok": True})
            if what == "state":
                return self.answer(200, {"sent": sent, "connections": connections[0],
                                         "faults_left": sum(f.get("times", 1) for f in faults), "calls": calls, "polls": {str(k): v for k, v in polls.items()},
                                         "pending": {str(bots[t]["id"]): len(u) for t, u in updates.items() if t in bots}})
        self.fail(404, "Not Found")

    def file(self, token, file_path):
        with lock:
            found = [f for f in files.values() if f["path"] == file_path] if token in bots else []
        if not found:
            return self.fail(404, "Not Found")
        data = found[0]["bytes"]
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def fault_for(self, method):
        for f in faults:
            if f["method"] in (method, "*") and f.get("times", 1) > 0:
                f["times"] = f.get("times", 1) - 1
                return f
        return None

    def method(self, token, method):
        p = self.params()
        with lock:
            known = token in bots
            fault = self.fault_for(method)
            calls[method] = (calls.get(method, []) + [time.time()])[-100:]
        if fault and int(fault["status"]) == 0:
            # No answer at all: the connection is closed, as when the Bot API is down or cut off.
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if not known:
            return self.fail(401, "Unauthorized")
        if fault:
            return self.fail(int(fault["status"]), fault.get("description", "fault"), fault.get("retry_after"))
        bot = bots[token]
        if method == "getMe":
            return self.answer(200, {"ok": True, "result": bot_public(token)})
        if method == "getChat":
            chat_id = p.get("chat_id")
            try:
                chat = chats.get(int(chat_id))
            except (TypeError, ValueError):
                chat = None
            if chat is None:
                return self.fail(400, "Bad Request: chat not found")
            return self.answer(200, {"ok": True, "result": chat})
        if method == "getFile":
            f = files.get(p.get("file_id"))
            if f is None:
                return self.fail(400, "Bad Request: invalid file_id")
            return self.answer(200, {"ok": True, "result": {"file_id": p["file_id"], "file_unique_id": p["file_id"],
                                                            "file_size": len(f["bytes"]), "file_path": f["path"]}})
        if method == "getUpdates":
            return self.get_updates(token, p)
        if method in ("sendMessage", "sendPhoto", "sendDocument", "sendVideo", "editMessageText", "sendChatAction"):
            with lock:
                record = {"bot_id": bot["id"], "method": method, "at": time.time()}
                record.update({k: v for k, v in p.items()})
                if method != "sendChatAction" and method != "editMessageText":
                    next_message_id[0] += 1
                    record["message_id"] = next_message_id[0]
                sent.append(record)
            if method == "sendChatAction":
                return self.answer(200, {"ok": True, "result": True})
            message = {"message_id": record.get("message_id", p.get("message_id")), "date": int(time.time()),
                       "chat": chats.get(int(p["chat_id"]), {"id": int(p["chat_id"])}), "text": p.get("text", "")}
            return self.answer(200, {"ok": True, "result": message})
        self.fail(404, "Not Found: method not found")

    def get_updates(self, token, p):
        bot_id = bots[token]["id"]
        offset = int(p.get("offset", 0) or 0)
        timeout = min(int(p.get("timeout", 0) or 0), 50)
        deadline = time.time() + timeout
        with lock:
            stats = polls.setdefault(bot_id, {"calls": 0, "active": 0, "max_active": 0, "offsets": []})
            stats["calls"] += 1
            stats["offsets"] = (stats["offsets"] + [offset])[-50:]  # the last offsets asked for, oldest first
            stats["active"] += 1
            stats["max_active"] = max(stats["max_active"], stats["active"])
            try:
                # An offset confirms every update before it (Telegram forgets them).
                updates[token] = [u for u in updates[token] if u["update_id"] >= offset]
                while not updates[token] and time.time() < deadline:
                    lock.wait(max(0.0, deadline - time.time()))
                    updates[token] = [u for u in updates[token] if u["update_id"] >= offset]
                result = updates[token][:100]
            finally:
                stats["active"] -= 1
        self.answer(200, {"ok": True, "result": result})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if len(sys.argv) == 3:
        # The test keeps driving /control in plain HTTP on a port of its own.
        control = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        control.daemon_threads = True
        threading.Thread(target=control.serve_forever, daemon=True).start()
        print("CONTROL", control.server_address[1], flush=True)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    api_port[0] = server.server_address[1]
    print("PORT", server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
