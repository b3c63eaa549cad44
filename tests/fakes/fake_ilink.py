#!/usr/bin/env python3
"""A fake WeChat iLink bot API and CDN on loopback, for the wechat plugin's tests: WeChat is outside this machine.

It speaks iLink's wire format: bot calls are POST /ilink/bot/<call> with JSON carrying base_info, and the headers
iLink-App-Id, iLink-App-ClientVersion, Content-Type, AuthorizationType, Authorization (Bearer) and X-WECHAT-UIN
(base64 of a uint32's decimal text); the QR login is POST get_bot_qrcode plus GET get_qrcode_status, scripted per
qrcode; getupdates long-polls with an opaque cursor; the CDN under /c2c takes AES-128-ECB ciphertext uploads (checked
against what getuploadurl announced) and serves downloads. A request that breaks the wire rules is recorded as a
violation and answered HTTP 400, as a careless client must not pass here. The test drives it through /control/* on
a plain-HTTP port of its own. Tokens are never printed.

Run: fake_ilink.py [CERT KEY] -> prints "PORT <api> CONTROL <control> REDIRECT <redirect>" once listening on
127.0.0.1 (API and redirect ports in HTTPS with that certificate when given), then serves until killed. The
redirect port is the "other data centre" of scaned_but_redirect: it serves the same routes.
"""
import base64
import binascii
import hashlib
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

QR_STEPS = {"wait", "scaned", "scaned_but_redirect", "expired", "need_verifycode", "verify_code_blocked",
            "binded_redirect", "confirmed", "http500", "drop", "slow"}
BOT_CALLS = {"getupdates", "sendmessage", "getuploadurl", "getconfig", "sendtyping", "msg/notifystart",
             "msg/notifystop"}
SLOW_SECONDS = 6  # past the plugin's 5 s QR-status timeout

lock = threading.Condition()
settings = {"qr_script": ["wait", "scaned", "confirmed"], "poll_hold_ms": 35000, "batch_size": 10,
            "upload_mode": "full"}
counters = {"qr": 0, "bot": 0, "upload": 0, "media": 0, "ticket": 0}
next_bot = []       # the bot the next confirm gives, when the test named one
bots = {}           # token -> {"bot_id", "user_id", "expired", "msgs": [WeixinMessage], "floor": absolute index}
qrcodes = {}        # qrcode -> {"steps", "at", "bot"}
pending_uploads = {}  # upload param -> what getuploadurl announced
media = {}          # download param -> {"body": bytes served}
faults = []         # [{"path", "kind", "times"}]
tickets = set()
record = {"sent": [], "typing": [], "configs": [], "uploads": [], "downloads": [], "qr_polls": [],
          "local_token_lists": [], "polls": {}, "notify": {"start": 0, "stop": 0}, "violations": []}
ports = {"api": 0, "redirect": 0, "scheme": "http"}


def base_url():
    return "%s://127.0.0.1:%d" % (ports["scheme"], ports["api"])


def aes_ecb(key, data, encrypt):
    cipher = Cipher(algorithms.AES(key), modes.ECB())
    if encrypt:
        padder = padding.PKCS7(128).padder()
        data = padder.update(data) + padder.finalize()
        op = cipher.encryptor()
        return op.update(data) + op.finalize()
    op = cipher.decryptor()
    plain = op.update(data) + op.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    return unpadder.update(plain) + unpadder.finalize()


def encode_cursor(index):
    return base64.b64encode(("c:%d" % index).encode()).decode()


def decode_cursor(text):
    """The absolute index a cursor names; None for "" or a cursor this fake never gave."""
    try:
        raw = base64.b64decode(text, validate=True).decode()
        return int(raw[2:]) if raw.startswith("c:") else None
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def uin_problem(value):
    if value is None:
        return "X-WECHAT-UIN missing"
    try:
        text = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return "X-WECHAT-UIN is not standard base64"
    if not text.isdigit() or int(text) > 0xFFFFFFFF or (len(text) > 1 and text[0] == "0"):
        return "X-WECHAT-UIN is not the decimal text of a uint32"
    return None


def new_bot(token, bot_id, user_id):
    bots[token] = {"bot_id": bot_id, "user_id": user_id, "expired": False, "msgs": [], "floor": 0}
    return bots[token]


def bot_for(token):
    return bots.get(token) or new_bot(token, "", "")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet, and no URL or header (a token) ever reaches the console
        pass

    def answer(self, status, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream" if isinstance(body, bytes) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def route(self, method):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        raw = self.body()
        if url.path.startswith("/control/"):
            if self.server.server_address[1] != ports["control"]:
                return self.answer(404, {"error": "not found"})
            return self.control(url.path[len("/control/"):], json.loads(raw or b"{}"))
        if url.path.startswith("/ilink/bot/"):
            name = url.path[len("/ilink/bot/"):]
        elif url.path.startswith("/c2c/"):
            name = url.path[1:]
        else:
            return self.answer(404, {"error": "not found"})
        if self.server.server_address[1] == ports["control"]:
            return self.answer(404, {"error": "not found"})
        if name == "get_bot_qrcode" and method == "POST":
            return self.get_bot_qrcode(query, raw)
        if name == "get_qrcode_status" and method == "GET":
            return self.get_qrcode_status(query)
        if name in BOT_CALLS and method == "POST":
            return self.bot_call(name, raw)
        if name == "c2c/upload" and method == "POST":
            return self.cdn_upload(name, query, raw)
        if name == "c2c/download" and method == "GET":
            return self.cdn_download(name, query)
        self.answer(404, {"error": "not found"})

    # ---- checks and faults ----

    def violation(self, path, what):
        with lock:
            record["violations"].append({"path": path, "what": what})
        self.answer(400, {"ret": -1, "errcode": -1, "errmsg": "bad request: " + what})

    def header_problem(self, wanted):
        h = self.headers
        if "app_id" in wanted and h.get("iLink-App-Id") != "bot":
            return "iLink-App-Id is not bot"
        if "version" in wanted and not (h.get("iLink-App-ClientVersion") or "").isdigit():
            return "iLink-App-ClientVersion is not a decimal number"
        if "content_type" in wanted and (h.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            return "Content-Type is not application/json"
        if "auth_type" in wanted and h.get("AuthorizationType") != "ilink_bot_token":
            return "AuthorizationType is not ilink_bot_token"
        if "uin" in wanted:
            problem = uin_problem(h.get("X-WECHAT-UIN"))
            if problem:
                return problem
        if "no_auth" in wanted and h.get("Authorization") is not None:
            return "Authorization sent on a QR call"
        return None

    def take_fault(self, name):
        """Applies the first fault meant for name; True when it answered (or dropped) the request itself."""
        with lock:
            fault = None
            for f in faults:
                if f["path"] in (name, "*") and f.get("times", 1) > 0:
                    f["times"] = f.get("times", 1) - 1
                    fault = f
                    break
        if fault is None:
            return False
        kind = fault["kind"]
        if kind == "slow":
            time.sleep(SLOW_SECONDS)
            return False
        if kind == "drop":
            self.drop()
        elif kind == "http500":
            self.answer(500, {"errmsg": "internal error"})
        elif kind == "http429":
            self.answer(429, {"errmsg": "too many requests"})
        elif kind.startswith("ret:"):
            code = int(kind[4:])
            self.answer(200, {"ret": code, "errcode": code, "errmsg": "fault %d" % code})
        else:
            self.answer(500, {"errmsg": "unknown fault kind"})
        return True

    # ---- QR login ----

    def get_bot_qrcode(self, query, raw):
        name = "get_bot_qrcode"
        problem = self.header_problem({"app_id", "version", "content_type", "auth_type", "uin", "no_auth"})
        if problem:
            return self.violation(name, problem)
        if query.get("bot_type") != "3":
            return self.violation(name, "bot_type is not 3")
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("local_token_list"), list):
            return self.violation(name, "local_token_list missing")
        if self.take_fault(name):
            return
        with lock:
            record["local_token_lists"].append(body["local_token_list"])
            counters["qr"] += 1
            code = "qr-%d" % counters["qr"]
            qrcodes[code] = {"steps": list(settings["qr_script"]), "at": 0, "bot": None}
        self.answer(200, {"ret": 0, "qrcode": code, "qrcode_img_content": "https://liteapp.weixin.qq.com/q/" + code})

    def get_qrcode_status(self, query):
        name = "get_qrcode_status"
        problem = self.header_problem({"app_id", "version"})
        if problem:
            return self.violation(name, problem)
        if self.take_fault(name):
            return
        code = query.get("qrcode", "")
        with lock:
            record["qr_polls"].append({"qrcode": code, "port": self.server.server_address[1]})
            qr = qrcodes.get(code)
            if qr is None:
                step = "expired"
            else:
                step = qr["steps"][min(qr["at"], len(qr["steps"]) - 1)]
                qr["at"] += 1
            if step == "confirmed" and qr["bot"] is None:
                if next_bot:
                    qr["bot"] = next_bot.pop(0)
                else:
                    counters["bot"] += 1
                    n = counters["bot"]
                    qr["bot"] = {"bot_token": "tok-%d" % n, "ilink_bot_id": "bot-%d@im.bot" % n,
                                 "ilink_user_id": "user-%d@im.wechat" % n}
                b = qr["bot"]
                bot = bot_for(b["bot_token"])
                bot["bot_id"], bot["user_id"] = b["ilink_bot_id"], b["ilink_user_id"]
            bot = qr["bot"] if qr else None
        if step == "http500":
            return self.answer(500, {"errmsg": "internal error"})
        if step == "drop":
            return self.drop()
        if step == "slow":
            time.sleep(SLOW_SECONDS)
            step = "wait"
        out = {"ret": 0, "status": step}
        if step == "scaned_but_redirect":
            out["redirect_host"] = "127.0.0.1:%d" % ports["redirect"]
        if step == "confirmed":
            out.update(bot)
            out["baseurl"] = base_url()
        self.answer(200, out)

    # ---- bot calls ----

    def bot_call(self, name, raw):
        problem = self.header_problem({"app_id", "version", "content_type", "auth_type", "uin"})
        auth = self.headers.get("Authorization") or ""
        if not problem and not auth.startswith("Bearer "):
            problem = "Authorization is not Bearer <token>"
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        if not problem and not isinstance(body, dict):
            problem = "body is not a JSON object"
        if not problem:
            info = body.get("base_info")
            if not isinstance(info, dict) or not isinstance(info.get("channel_version"), str) \
                    or not isinstance(info.get("bot_agent"), str):
                problem = "base_info with string channel_version and bot_agent missing"
        if problem:
            return self.violation(name, problem)
        token = auth[len("Bearer "):]
        with lock:
            bot = bots.get(token)
            if bot is None or bot["expired"]:
                bot = None
        if bot is None:
            return self.answer(200, {"ret": -14, "errcode": -14, "errmsg": "session timeout"})
        if self.take_fault(name):
            return
        handler = {"getupdates": self.getupdates, "sendmessage": self.sendmessage, "getuploadurl": self.getuploadurl,
                   "getconfig": self.getconfig, "sendtyping": self.sendtyping,
                   "msg/notifystart": self.notify, "msg/notifystop": self.notify}[name]
        handler(name, token, bot, body)

    def getupdates(self, name, token, bot, body):
        cursor = body.get("get_updates_buf", "")
        if not isinstance(cursor, str):
            return self.violation(name, "get_updates_buf is not a string")
        with lock:
            hold_ms = settings["poll_hold_ms"]
            stats = record["polls"].setdefault(bot["bot_id"], {"calls": 0, "active": 0, "max_active": 0, "cursors": []})
            stats["calls"] += 1
            stats["cursors"] = (stats["cursors"] + [cursor])[-50:]
            stats["active"] += 1
            stats["max_active"] = max(stats["max_active"], stats["active"])
            deadline = time.time() + hold_ms / 1000.0
            try:
                asked = decode_cursor(cursor) if cursor else None

                def start():
                    total = bot["floor"] + len(bot["msgs"])
                    at = bot["floor"] if asked is None else min(max(asked, bot["floor"]), total)
                    # A cursor past messages commits them: later polls never see them again.
                    del bot["msgs"][:at - bot["floor"]]
                    bot["floor"] = at
                    return at

                start()
                while not bot["msgs"] and not bot["expired"] and time.time() < deadline:
                    lock.wait(max(0.0, deadline - time.time()))
                    start()
                expired = bot["expired"]
                batch = [dict(m) for m in bot["msgs"][:settings["batch_size"]]]
                next_cursor = encode_cursor(bot["floor"] + len(batch))
            finally:
                stats["active"] -= 1
        if expired:
            return self.answer(200, {"ret": -14, "errcode": -14, "errmsg": "session timeout"})
        self.answer(200, {"ret": 0, "errcode": 0, "msgs": batch, "get_updates_buf": next_cursor,
                          "longpolling_timeout_ms": hold_ms})

    def sendmessage(self, name, token, bot, body):
        msg = body.get("msg")
        if not isinstance(msg, dict) or not isinstance(msg.get("item_list"), list) or not msg.get("to_user_id"):
            return self.violation(name, "msg with to_user_id and item_list missing")
        with lock:
            record["sent"].append({"bot": bot["bot_id"], "to_user_id": msg.get("to_user_id"),
                                   "context_token": msg.get("context_token"), "client_id": msg.get("client_id"),
                                   "message_type": msg.get("message_type"), "message_state": msg.get("message_state"),
                                   "item_list": msg["item_list"], "at": time.time()})
        self.answer(200, {"ret": 0})

    def getuploadurl(self, name, token, bot, body):
        def is_hex(v, n):
            return isinstance(v, str) and len(v) == n and all(c in "0123456789abcdefABCDEF" for c in v)
        if not isinstance(body.get("filekey"), str) or not body["filekey"]:
            return self.violation(name, "filekey missing")
        if body.get("media_type") not in (1, 2, 3, 4):
            return self.violation(name, "media_type is not 1-4")
        for field in ("rawsize", "filesize"):
            if not isinstance(body.get(field), int) or body[field] < 0:
                return self.violation(name, field + " is not a size")
        if not is_hex(body.get("rawfilemd5"), 32):
            return self.violation(name, "rawfilemd5 is not 32 hex digits")
        if not is_hex(body.get("aeskey"), 32):
            return self.violation(name, "aeskey is not 32 hex digits")
        with lock:
            counters["upload"] += 1
            param = "up-%d" % counters["upload"]
            pending_uploads[param] = {k: body.get(k) for k in ("filekey", "media_type", "to_user_id", "rawsize",
                                                              "rawfilemd5", "filesize", "aeskey", "no_need_thumb")}
            mode = settings["upload_mode"]
        if mode == "param":
            return self.answer(200, {"ret": 0, "upload_param": param})
        query = urllib.parse.urlencode({"encrypted_query_param": param, "filekey": body["filekey"]})
        self.answer(200, {"ret": 0, "upload_full_url": base_url() + "/c2c/upload?" + query})

    def getconfig(self, name, token, bot, body):
        with lock:
            counters["ticket"] += 1
            ticket = base64.b64encode(b"ticket-%d-" % counters["ticket"] + os.urandom(8)).decode()
            tickets.add(ticket)
            record["configs"].append({"bot": bot["bot_id"], "ilink_user_id": body.get("ilink_user_id"),
                                      "context_token": body.get("context_token"), "typing_ticket": ticket})
        self.answer(200, {"ret": 0, "typing_ticket": ticket})

    def sendtyping(self, name, token, bot, body):
        with lock:
            record["typing"].append({"bot": bot["bot_id"], "ilink_user_id": body.get("ilink_user_id"),
                                     "typing_ticket": body.get("typing_ticket"), "status": body.get("status"),
                                     "ticket_known": body.get("typing_ticket") in tickets, "at": time.time()})
        self.answer(200, {"ret": 0})

    def notify(self, name, token, bot, body):
        with lock:
            record["notify"]["start" if name.endswith("start") else "stop"] += 1
        self.answer(200, {"ret": 0})

    # ---- CDN ----

    def cdn_upload(self, name, query, raw):
        if self.take_fault(name):
            return
        param = query.get("encrypted_query_param", "")
        with lock:
            announced = pending_uploads.get(param)
        reason = None
        if announced is None:
            reason = "unknown upload param"
        elif query.get("filekey") != announced["filekey"]:
            reason = "filekey differs from getuploadurl's"
        elif (self.headers.get("Content-Type") or "") != "application/octet-stream":
            reason = "Content-Type is not application/octet-stream"
        elif len(raw) != announced["filesize"]:
            reason = "body is %d bytes, filesize announced %d" % (len(raw), announced["filesize"])
        else:
            try:
                plain = aes_ecb(bytes.fromhex(announced["aeskey"]), raw, encrypt=False)
            except ValueError:
                plain = None
            if plain is None:
                reason = "does not decrypt with the announced aeskey"
            elif len(plain) != announced["rawsize"]:
                reason = "plaintext is %d bytes, rawsize announced %d" % (len(plain), announced["rawsize"])
            elif hashlib.md5(plain).hexdigest() != announced["rawfilemd5"].lower():
                reason = "plaintext md5 differs from rawfilemd5"
        with lock:
            entry = {"param": param, "ok": reason is None, "reason": reason or "", "bytes": len(raw)}
            if announced:
                entry.update({"to_user_id": announced["to_user_id"], "media_type": announced["media_type"],
                              "filekey": announced["filekey"], "rawsize": announced["rawsize"]})
            if reason is None:
                counters["media"] += 1
                download = "dl-%d" % counters["media"]
                media[download] = {"body": raw}
                entry["download_param"] = download
                del pending_uploads[param]
            record["uploads"].append(entry)
        if reason is not None:
            return self.answer(400, {"errmsg": reason}, {"x-error-message": reason})
        self.answer(200, b"", {"x-encrypted-param": download})

    def cdn_download(self, name, query):
        if self.take_fault(name):
            return
        param = query.get("encrypted_query_param", "")
        with lock:
            found = media.get(param)
            record["downloads"].append(param)
        if found is None:
            return self.answer(404, {"errmsg": "no such media"})
        self.answer(200, found["body"])

    # ---- control ----

    def control(self, what, p):
        with lock:
            if what == "qr_script":
                steps = [str(s) for s in p.get("steps", [])]
                if not steps or any(s not in QR_STEPS for s in steps):
                    return self.answer(400, {"error": "unknown or no step"})
                settings["qr_script"] = steps
            elif what == "bot":
                b = {"bot_token": p["bot_token"], "ilink_bot_id": p["ilink_bot_id"], "ilink_user_id": p["ilink_user_id"]}
                next_bot.append(b)
                bot = bot_for(b["bot_token"])  # valid at once, so messages can wait for it before the scan
                bot["bot_id"], bot["user_id"] = b["ilink_bot_id"], b["ilink_user_id"]
            elif what == "poll_hold_ms":
                settings["poll_hold_ms"] = int(p["ms"])
            elif what == "batch_size":
                settings["batch_size"] = max(1, int(p["n"]))
            elif what == "upload_mode":
                if p.get("mode") not in ("full", "param"):
                    return self.answer(400, {"error": "mode is full or param"})
                settings["upload_mode"] = p["mode"]
            elif what in ("message", "messages"):
                bot = bot_for(p["bot_token"])
                for m in ([p["message"]] if what == "message" else p["messages"]):
                    m = dict(m)
                    m.setdefault("seq", bot["floor"] + len(bot["msgs"]) + 1)
                    bot["msgs"].append(m)
                lock.notify_all()
            elif what == "media":
                data = base64.b64decode(p["bytes_b64"])
                form = p.get("key_form", "raw")
                counters["media"] += 1
                param = "dl-%d" % counters["media"]
                out = {"encrypt_query_param": param, "encrypt_type": 1}
                key_hex = ""
                if form == "none":
                    media[param] = {"body": data}
                elif form in ("raw", "hex"):
                    key = os.urandom(16)
                    key_hex = key.hex()
                    media[param] = {"body": aes_ecb(key, data, encrypt=True)}
                    out["aes_key"] = base64.b64encode(key if form == "raw" else key_hex.encode()).decode()
                else:
                    return self.answer(400, {"error": "key_form is raw, hex or none"})
                return self.answer(200, {"media": out, "aeskey_hex": key_hex})
            elif what == "fault":
                faults.append({"path": p["path"], "kind": p["kind"], "times": int(p.get("times", 1))})
            elif what == "clear_faults":
                faults.clear()
            elif what == "expire_token":
                bot_for(p["bot_token"])["expired"] = True
                lock.notify_all()
            elif what == "state":
                out = dict(record)
                out["qr_created"] = counters["qr"]
                return self.answer(200, json.loads(json.dumps(out)))
            else:
                return self.answer(404, {"error": "unknown control"})
        self.answer(200, {"ok": True})


def serve(server):
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main():
    api = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    redirect = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    control = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if len(sys.argv) == 3:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(sys.argv[1], sys.argv[2])
        api.socket = tls.wrap_socket(api.socket, server_side=True)
        redirect.socket = tls.wrap_socket(redirect.socket, server_side=True)
        ports["scheme"] = "https"
    ports["api"] = api.server_address[1]
    ports["redirect"] = redirect.server_address[1]
    ports["control"] = control.server_address[1]
    serve(redirect)
    serve(control)
    print("PORT %d CONTROL %d REDIRECT %d" % (ports["api"], ports["control"], ports["redirect"]), flush=True)
    api.daemon_threads = True
    api.serve_forever()


if __name__ == "__main__":
    main()
