#!/usr/bin/env python3
"""Checks the monitoring assets in deploy/ against each other, promtool and a real xconnd.

  (a) deploy/prometheus/alerts.yml and deploy/grafana/xconn.json are read; every alert must have `for`, a
      severity label, summary, description and a runbook annotation naming a heading of docs/operations.md; the
      dashboard must have its datasource and plugin variables; every metric name their PromQL refers to is
      collected (histogram `_bucket`/`_sum`/`_count` series map to their family).
  (b) promtool checks the rules, runs their unit tests (deploy/prometheus/alerts_test.yml) and parses every
      dashboard expression (as rules of a scratch file). A missing promtool fails unless --allow-missing-promtool.
  (c) with --xconnd, --plugins and --load: a real xconnd on a free loopback port with a scratch store gets tool
      calls and inbound messages from xconn-load, a hot reload of echo and a configuration reload; then every
      referenced family must be in its /metrics: a series of that name, or for a name without a histogram suffix
      at least its `# TYPE` line; a histogram's `_bucket`/`_sum`/`_count` need their own series. `up` is
      Prometheus' own and is not looked for.

Each step has a deadline; the script prints what it checked and every problem, and exits 1 on any problem.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from xconn_process import Deadline, http_call, stop_gently  # noqa: E402

try:
    import yaml
except ImportError:  # Debian: python3-yaml
    sys.exit("check_deploy: PyYAML is needed (Debian package python3-yaml)")

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
SYNTHETIC = {"up"}  # written by Prometheus for each scrape, never exposed by a target
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "offset", "inf", "nan", "atan2"}
GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")


class Problems(list):
    def add(self, text):
        self.append(text)
        print("PROBLEM: " + text, flush=True)


# --- (a) reading the assets -----------------------------------------------------------------------------------


def metric_names(expr):
    """The metric names one PromQL expression selects (vector selectors, with or without a name matcher)."""
    names = set()
    for m in re.finditer(r'__name__\s*=\s*"([^"]+)"', expr):
        names.add(m.group(1))
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)  # string literals
    text = re.sub(r"\{[^{}]*\}", " ", text)                                      # label matchers
    text = re.sub(r"\[[^\[\]]*\]", " ", text)                                    # ranges and subqueries
    text = GROUPING.sub(" ", text)                                               # label lists
    for m in re.finditer(r"(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", text):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def family_of(name):
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix) and name != suffix:
            return name[: -len(suffix)], suffix
    return name, ""


def heading_anchors(markdown):
    """GitHub's anchors for the headings of a Markdown text."""
    anchors = set()
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            text = re.sub(r"`([^`]*)`", r"\1", m.group(1)).strip().lower()
            text = re.sub(r"[^\w\- ]", "", text)
            anchors.add(text.replace(" ", "-"))
    return anchors


def check_alerts(path, operations_md, problems, references):
    rules = yaml.safe_load(open(path, encoding="utf-8"))
    anchors = heading_anchors(open(operations_md, encoding="utf-8").read()) if os.path.exists(operations_md) else None
    if anchors is None:
        problems.add(f"{operations_md} is missing: the runbook annotations point into it")
    alerts = []
    for group in rules.get("groups") or []:
        for rule in group.get("rules") or []:
            if "alert" not in rule:
                continue
            name = rule["alert"]
            alerts.append(name)
            if "for" not in rule:
                problems.add(f"alert {name}: no `for`")
            if (rule.get("labels") or {}).get("severity") not in ("critical", "warning", "info"):
                problems.add(f"alert {name}: severity label must be critical, warning or info")
            annotations = rule.get("annotations") or {}
            for key in ("summary", "description", "runbook"):
                if not str(annotations.get(key, "")).strip():
                    problems.add(f"alert {name}: no {key} annotation")
            runbook = str(annotations.get("runbook", ""))
            m = re.fullmatch(r"docs/operations\.md#([\w\-]+)", runbook)
            if not m:
                problems.add(f"alert {name}: runbook {runbook!r} is not docs/operations.md#<section>")
            elif anchors is not None and m.group(1) not in anchors:
                problems.add(f"alert {name}: runbook section #{m.group(1)} is not a heading of docs/operations.md")
            for metric in metric_names(rule["expr"]):
                references.setdefault(metric, set()).add(f"alert {name}")
    if len(set(alerts)) != len(alerts):
        problems.add("alerts.yml: an alert name is used twice")
    return alerts


def dashboard_panels(panels):
    for panel in panels or []:
        yield panel
        yield from dashboard_panels(panel.get("panels"))


def check_dashboard(path, problems, references):
    """The dashboard's PromQL expressions, with Grafana's variables left in."""
    try:
        board = json.load(open(path, encoding="utf-8"))
    except ValueError as e:
        problems.add(f"{path}: not valid JSON: {e}")
        return []
    if not isinstance(board.get("schemaVersion"), int) or board["schemaVersion"] < 36:
        problems.add(f"{path}: schemaVersion {board.get('schemaVersion')!r}, expected a current one (39)")
    variables = {v.get("name"): v for v in (board.get("templating") or {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.add(f"{path}: no `datasource` variable of type datasource over prometheus")
    exprs = []
    for name, var in variables.items():
        if var.get("type") != "query":
            continue
        query = var.get("query")
        query = query.get("query", "") if isinstance(query, dict) else str(query or "")
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", query)
        if not m:
            problems.add(f"{path}: variable {name}: expected label_values(SELECTOR, LABEL), got {query!r}")
            continue
        exprs.append((f"variable {name}", m.group(1)))
        if name == "plugin" and (m.group(2) != "plugin" or "xconn_channels_open" not in metric_names(m.group(1))):
            problems.add(f"{path}: variable plugin must be label_values(xconn_channels_open…, plugin)")
    if "plugin" not in variables:
        problems.add(f"{path}: no `plugin` variable")
    ids = set()
    titles = []
    for panel in dashboard_panels(board.get("panels")):
        titles.append(panel.get("title", ""))
        if panel.get("id") in ids:
            problems.add(f"{path}: panel id {panel.get('id')} used twice")
        ids.add(panel.get("id"))
        if panel.get("type") == "row":
            continue
        if (panel.get("datasource") or {}).get("uid") != "${datasource}":
            problems.add(f"{path}: panel {panel.get('title')!r} does not use the ${{datasource}} variable")
        if not panel.get("targets"):
            problems.add(f"{path}: panel {panel.get('title')!r} has no query")
        for target in panel.get("targets") or []:
            if not str(target.get("expr", "")).strip():
                problems.add(f"{path}: panel {panel.get('title')!r} has a query without expr")
                continue
            exprs.append((f"panel {panel.get('title')!r}", target["expr"]))
    for where, expr in exprs:
        for metric in metric_names(expr):
            references.setdefault(metric, set()).add(f"dashboard {where}")
    return exprs


def grafana_to_promql(expr):
    """A dashboard expression with Grafana's variables replaced, so promtool can parse it."""
    for var, value in (("$__rate_interval", "5m"), ("$__interval", "1m"), ("$__range", "1h")):
        expr = expr.replace(var, value)
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


# --- (b) promtool -----------------------------------------------------------------------------------------------


def run_promtool(promtool, args, cwd, problems, what):
    try:
        result = subprocess.run([promtool, *args], cwd=cwd, capture_output=True, text=True,
                                timeout=within(30))
    except subprocess.TimeoutExpired:
        problems.add(f"promtool {what}: no answer in time")
        return
    output = (result.stdout + result.stderr).strip()
    print(f"promtool {' '.join(args)}: exit {result.returncode}\n  " + output.replace("\n", "\n  "), flush=True)
    if result.returncode != 0:
        problems.add(f"promtool {what} failed (exit {result.returncode})")


def check_with_promtool(promtool, prom_dir, dashboard_exprs, problems):
    run_promtool(promtool, ["check", "rules", "alerts.yml"], prom_dir, problems, "check rules alerts.yml")
    run_promtool(promtool, ["test", "rules", "alerts_test.yml"], prom_dir, problems, "test rules alerts_test.yml")
    with tempfile.TemporaryDirectory(prefix="xconn-deploy-") as scratch:
        rules = {"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:expr_{i}", "expr": grafana_to_promql(expr)}
            for i, (_, expr) in enumerate(dashboard_exprs)]}]}
        path = os.path.join(scratch, "dashboard_exprs.yml")
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump(rules, f, width=1000)
        run_promtool(promtool, ["check", "rules", path], scratch, problems,
                     f"check rules on the dashboard's {len(dashboard_exprs)} expressions")


# --- (c) a real xconnd ------------------------------------------------------------------------------------------


# The whole run's budget: every wait below is cut to what is left of it, so the script ends within about 45 s
# plus xconnd's shutdown (at most 15 s), whatever hangs.
RUN = Deadline(45)


def within(seconds):
    return max(0.1, min(seconds, RUN.left()))


def wait_for(predicate, seconds, step=0.02):
    """predicate() until it returns something true or the deadline passes; its last value."""
    deadline = Deadline(within(seconds))
    while True:
        value = predicate()
        if value or deadline.passed():
            return value
        time.sleep(min(step, deadline.left()))
        step = min(step * 2, 0.2)


class Daemon:
    def __init__(self, xconnd, plugins_dir, scratch):
        self.scratch = scratch
        self.store = os.path.join(scratch, "store")
        self.plugins = os.path.join(scratch, "plugins")
        os.makedirs(self.plugins)
        # Only echo, copied: a rebuild of the build tree's plugins cannot start a reload in the middle of the run.
        shutil.copy2(os.path.join(plugins_dir, "echo.so"), self.plugins)
        self.config = os.path.join(scratch, "xconnd.yaml")
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(f'server:\n  listen: "127.0.0.1:0"\n  io_threads: 2\n'
                    f'store:\n  path: "{self.store}"\n  map_size_bytes: 67108864\n'
                    f'plugins:\n  dir: "{self.plugins}"\n  watch: false\n  allow: [echo]\n  threads: 2\n')
        self.log_path = os.path.join(scratch, "xconnd.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([xconnd, "--config", self.config], stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=scratch)
        self.port = None
        self.key = None

    def console(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_ready(self, seconds):
        def listening():
            if self.proc.poll() is not None:
                return "exited"
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.console())
            return m and int(m.group(1))

        found = wait_for(listening, seconds)
        if not isinstance(found, int):
            return False
        self.port = found
        key_file = os.path.join(self.store, "api_key")
        self.key = wait_for(lambda: os.path.exists(key_file) and open(key_file).read().strip(), 5)
        return bool(self.key)

    def request(self, method, path, body=None, timeout=10):
        return http_call(self.port, path, self.key, method, body, within(timeout))

    def stop(self):
        return stop_gently(self.proc, self.log)


def run_load(load, daemon, args, seconds, problems, what):
    command = [load, "--server", f"127.0.0.1:{daemon.port}", "--key", daemon.key, "--no-progress", "--json", *args]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=within(seconds),
                                cwd=daemon.scratch)
    except subprocess.TimeoutExpired:
        problems.add(f"xconn-load {what}: not done within {within(seconds):.1f} s")
        return
    last = (result.stdout.strip().splitlines() or [""])[-1]
    print(f"xconn-load {what}: exit {result.returncode} {last[:300]}", flush=True)
    if result.returncode != 0:
        problems.add(f"xconn-load {what} failed (exit {result.returncode}): {result.stderr.strip()[-500:]}")


def echo_generation(daemon):
    status, body = daemon.request("GET", "/connectors")
    if status != 200:
        return None
    for connector in json.loads(body).get("connectors", []):
        if connector.get("plugin_id") == "echo":
            return connector
    return None


def drive_and_scrape(args, problems):
    """Starts xconnd, drives traffic and both reloads, and answers the text of /metrics (None when unreachable)."""
    scratch = tempfile.mkdtemp(prefix="xconn-deploy-")
    daemon = Daemon(args.xconnd, args.plugins, scratch)
    scrape = None
    try:
        if not daemon.wait_ready(15):
            code = daemon.proc.poll()
            problems.add((f"xconnd exited {code} before listening" if code is not None else
                          "xconnd did not start listening in time") + ":\n" + daemon.console()[-3000:])
            return None
        print(f"xconnd listening on 127.0.0.1:{daemon.port}", flush=True)
        run_load(args.load, daemon, ["--scenario", "invoke", "--sockets", "2", "--duration", "1", "--count", "2000"],
                 20, problems, "invoke")
        run_load(args.load, daemon, ["--scenario", "inbound", "--sockets", "2", "--channels", "2", "--burst", "20",
                                     "--duration", "1.5", "--count", "400"], 20, problems, "inbound")
        run_load(args.load, daemon, ["--scenario", "outbound", "--duration", "1", "--count", "100"], 20, problems,
                 "outbound")

        before = echo_generation(daemon) or {}
        status, body = daemon.request("POST", "/connectors/echo/reload")
        print(f"POST /connectors/echo/reload: {status} {body[:200]}", flush=True)
        if status != 202:
            problems.add(f"POST /connectors/echo/reload answered {status}, expected 202: {body[:300]}")
        else:
            after = wait_for(lambda: (c := echo_generation(daemon)) and c.get("generation") != before.get("generation")
                             and not c.get("reloading") and c.get("last_reload") and c, 10)
            if not after:
                problems.add("echo's hot reload did not finish within 10 s (GET /connectors)")
            else:
                print(f"echo reloaded: generation {before.get('generation')} -> {after.get('generation')}, "
                      f"last_reload {json.dumps(after.get('last_reload'))[:200]}", flush=True)

        status, body = daemon.request("POST", "/admin/reload")
        print(f"POST /admin/reload: {status} {body[:300]}", flush=True)
        if status != 200:
            problems.add(f"POST /admin/reload answered {status}, expected 200: {body[:300]}")

        status, scrape = daemon.request("GET", "/metrics")
        if status != 200:
            problems.add(f"GET /metrics answered {status}")
            scrape = None
        return scrape
    finally:
        running = daemon.proc.poll() is None
        code = daemon.stop()
        if not running and not problems:
            problems.add(f"xconnd exited {daemon.proc.returncode} by itself during the run")
        elif code not in (0, None):
            problems.add(f"xconnd exited {code} after SIGTERM")
        if problems and not args.keep:
            print("--- xconnd's console (last 3000 characters)\n" + daemon.console()[-3000:], flush=True)
        if args.keep:
            print(f"kept {scratch}", flush=True)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def scraped_families(text):
    """Sample names in a Prometheus text exposition, and the TYPE of each family."""
    samples, types = set(), {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                types[parts[2]] = parts[3]
        elif line and not line.startswith("#"):
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)", line)
            if m:
                samples.add(m.group(1))
    return samples, types


def check_scrape(text, references, problems):
    samples, types = scraped_families(text)
    missing = []
    for name in sorted(references):
        if name in SYNTHETIC:
            continue
        family, suffix = family_of(name)
        if suffix and f"{family}_bucket" in samples:
            if types.get(family) != "histogram":
                problems.add(f"{family} is used as a histogram but its TYPE is {types.get(family)!r}")
            if name not in samples:
                missing.append(name)
            continue
        if name in samples:
            continue
        if not suffix and name in types:
            # Declared with no series yet: a family whose lines come with events this run did not cause
            # (xconn_plugin_events_total for a plugin that counts nothing).
            print(f"note: {name} is declared (# TYPE {types[name]}) but has no series in this scrape", flush=True)
            continue
        missing.append(name)
    for name in missing:
        problems.add(f"metric {name} is referenced by {', '.join(sorted(references[name]))} "
                     f"but xconnd's /metrics has no such series")
    families = {family_of(n)[0] for n in references if n not in SYNTHETIC}
    print(f"/metrics: {len(samples)} sample names; {len(families)} referenced families, "
          f"{len(missing)} referenced names missing", flush=True)


# --- main -------------------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--source", default=os.path.normpath(os.path.join(here, "..", "..")),
                        help="the repository root (default: two folders up from this script)")
    parser.add_argument("--promtool", default=os.environ.get("PROMTOOL") or shutil.which("promtool"))
    parser.add_argument("--allow-missing-promtool", action="store_true",
                        help="skip (b) when promtool is not installed instead of failing")
    parser.add_argument("--skip-promtool", action="store_true", help="do not run (b) at all")
    parser.add_argument("--xconnd", help="the xconnd binary: run (c)")
    parser.add_argument("--plugins", help="the folder holding echo.so (with --xconnd)")
    parser.add_argument("--load", help="the xconn-load binary (with --xconnd)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder of (c)")
    args = parser.parse_args()
    if args.xconnd and not (args.plugins and args.load):
        parser.error("--xconnd needs --plugins and --load")

    started = time.monotonic()
    problems = Problems()
    prom_dir = os.path.join(args.source, "deploy", "prometheus")
    references = {}
    alerts = check_alerts(os.path.join(prom_dir, "alerts.yml"), os.path.join(args.source, "docs", "operations.md"),
                          problems, references)
    exprs = check_dashboard(os.path.join(args.source, "deploy", "grafana", "xconn.json"), problems, references)
    print(f"alerts.yml: {len(alerts)} alerts; xconn.json: {len(exprs)} expressions; "
          f"{len(references)} metric names referenced:", flush=True)
    for name in sorted(references):
        print(f"  {name}  ({len(references[name])} uses)", flush=True)
    unexpected = [n for n in references if n not in SYNTHETIC and not n.startswith("xconn_")]
    for name in unexpected:
        problems.add(f"{name} (in {', '.join(sorted(references[name]))}) is neither xconnd's nor Prometheus' own")

    if not args.skip_promtool:
        if args.promtool and os.access(args.promtool, os.X_OK):
            check_with_promtool(args.promtool, prom_dir, exprs, problems)
        elif args.allow_missing_promtool:
            print("promtool not found: (b) skipped (--allow-missing-promtool)", flush=True)
        else:
            problems.add("promtool not found (Debian package prometheus; or set PROMTOOL / --promtool); "
                         "pass --allow-missing-promtool to skip the rule checks")

    if args.xconnd:
        scrape = drive_and_scrape(args, problems)
        if scrape is not None:
            check_scrape(scrape, references, problems)

    print(f"{len(problems)} problem(s) in {time.monotonic() - started:.1f} s", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
