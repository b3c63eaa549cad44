"""What the Python tests share about a real xconnd they start: a deadline, an HTTP call, a gentle stop.

Imported by tests/failover/failover_test.py and tests/deploy/check_deploy.py (each puts this folder on sys.path).
"""
import signal
import subprocess
import time
import urllib.error
import urllib.request


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return max(0.0, self.end - time.monotonic())

    def passed(self):
        return time.monotonic() >= self.end


def http_call(port, path, key=None, method="GET", body=None, timeout=5.0):
    """One request to 127.0.0.1:port; (status, body text), or (None, why) when no answer came."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return None, str(e)


def stop_gently(proc, log):
    """SIGTERM, SIGKILL after 10 s; the exit code, or None when the process had exited by itself. Closes log."""
    if proc.poll() is not None:
        log.close()
        return None
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
    log.close()
    return proc.returncode
