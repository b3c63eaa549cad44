#!/usr/bin/env python3
"""Gathers one tools/bench.sh run into bench/results/<date>.json, a Markdown table (<date>.md) and the data
gnuplot draws (<date>-plot.dat). Every xconnd figure is set beside the ceiling's at the same socket count."""
import argparse
import json
import os
import platform
import re
import statistics

SCENARIOS = ["invoke", "inbound", "outbound", "mixed"]
# The rows of the load table: (row, label of its runs, label of the ceiling runs beside them). invoke sends the
# ceiling's very frames: compared by operations; the others by frames per second.
ROWS = [("ceiling", "ceiling-invoke", "ceiling-invoke")] + [
    (s, f"xconnd-{s}", "ceiling-invoke") for s in SCENARIOS] + [
    ("ceiling, 8 in flight", "ceiling-invoke8", "ceiling-invoke8"),
    ("invoke, 8 in flight", "xconnd-invoke8", "ceiling-invoke8")]
# Each micro-benchmark beside its baseline: (what, measured, baseline). Time per iteration is compared.
PAIRS = [
    ("envelope decode vs a full Boost.JSON parse", "BM_decode_envelope", "BM_boost_json_parse"),
    ("packet encode vs appending the same bytes by hand", "BM_encode_ack", "BM_append_ack_baseline"),
    ("group commit (64 in flight) vs one transaction per write, per write", "BM_group_commit/64", "BM_write_sync_one_by_one"),
    ("idempotency lookup, hit, 100k records vs an unordered_map", "BM_tool_calls_hit/100000", "BM_unordered_map_hit/100000"),
    ("idempotency lookup, hit, 100k records vs the LMDB read alone", "BM_tool_calls_hit/100000", "BM_store_get_hit/100000"),
    ("inbound enqueue + ack, in memory vs a deque push/pop", "BM_inbound_in_memory", "BM_deque_push_pop"),
    ("inbound enqueue + ack, committed to LMDB vs in memory", "BM_inbound_with_store", "BM_inbound_in_memory"),
]


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_runs(folder):
    """Every run's report by label; repetitions (label-r1, -r2, ...) as a list in order."""
    runs = {}
    for name in sorted(os.listdir(folder), key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)]):
        if not name.endswith(".json"):
            continue
        label = re.sub(r"-r\d+$", "", name[:-5])
        runs.setdefault(label, []).append(read_json(os.path.join(folder, name)))
    return runs


def median_run(reps, key):
    """The repetition whose key(run) is the median (the lower middle one of an even count)."""
    good = sorted((r for r in reps if r), key=key)
    return good[(len(good) - 1) // 2] if good else None


def frames_per_s(run):
    return (run["frames_sent"] + run["frames_received"]) / run["elapsed_s"] if run and run["elapsed_s"] else 0


def micro_rows(folder):
    rows = []
    for name in sorted(os.listdir(folder)) if folder and os.path.isdir(folder) else []:
        data = read_json(os.path.join(folder, name)) or {}
        for b in data.get("benchmarks", []):
            rows.append({"program": name[:-5], "name": b["name"], "real_time": b["real_time"],
                         "time_unit": b["time_unit"], "items_per_second": b.get("items_per_second")})
    return rows


def per_item_ns(row):
    """Nanoseconds per item: per iteration, or per write where a benchmark counts items (group commit)."""
    if row.get("items_per_second"):
        return 1e9 / row["items_per_second"]
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[row["time_unit"]]
    return row["real_time"] * scale


def micro_ratios(rows):
    def find(prefix):
        return next((r for r in rows if r["name"] == prefix or r["name"].startswith(prefix + "/")), None)
    out = []
    for what, measured, baseline in PAIRS:
        m, b = find(measured), find(baseline)
        if m and b:
            out.append({"what": what, "measured_ns": per_item_ns(m), "baseline_ns": per_item_ns(b),
                        "ratio": per_item_ns(m) / per_item_ns(b)})
    return out


def scale_lines(scale):
    """The scale runs as Markdown: memory per channel and per socket, set-up times, invoke latency beside idle sockets."""
    lines = []
    channels = [(k, r) for k, r in scale.items() if k.startswith("scale-channels-") and r and r.get("memory")]
    if channels:
        lines += ["", "Scale, each on a fresh xconnd (signed-in channels on 16 sockets; `RSS added` is after the set-up less "
                      "before it):", "", "| channels | set-up s | RSS added MiB | bytes per channel |", "|---:|---:|---:|---:|"]
        for _, r in sorted(channels, key=lambda kr: kr[1]["channels"]):
            m = r["memory"]
            lines.append(f"| {r['channels']:,} | {r['setup_s']:.1f} | "
                         f"{(m['rss_after_bytes'] - m['rss_before_bytes']) / 1048576:.1f} | {fmt(m['per_channel_bytes'])} |")
    sockets = scale.get("scale-sockets-10000")
    if sockets and sockets.get("memory"):
        m = sockets["memory"]
        lines += ["", f"{sockets['sockets']:,} sockets, each after its hello with one signed-in channel: set up in "
                      f"{sockets['setup_s']:.1f} s; {fmt(m['per_socket_bytes'])} bytes of RSS per socket (its channel "
                      "included)."]
    alone, beside = scale.get("scale-invoke-alone"), scale.get("scale-invoke-while-10000-idle")
    if alone and beside:
        a, b = alone["latency_ms"], beside["latency_ms"]
        lines += ["", f"invoke at {fmt(alone['rate'])}/s on 16 sockets: alone p50 {a['p50']:.3f} ms, p99 {a['p99']:.3f} ms; "
                      f"while 10,000 other sockets idle on the same server p50 {b['p50']:.3f} ms, p99 {b['p99']:.3f} ms "
                      f"(p99 {b['p99'] / a['p99']:.2f}x)." if a["p99"] else ""]
    return lines


def transfer_rows(runs):
    """Uploads against the disk ceiling (one file written and fdatasync'd once, run before each repetition),
    downloads against ws_ceiling's GET /bytes/N, bytes per second, the median share of the repetitions."""
    rows = []
    for label in sorted(k for k in runs if re.match(r"xconnd-(upload|download)-\d+$", k)):
        kind, n = re.match(r"xconnd-(upload|download)-(\d+)$", label).groups()
        reps = runs[label]
        ceilings = runs.get(f"disk-ceiling-{n}" if kind == "upload" else f"ceiling-download-{n}", [])
        shares = [100 * m["bytes_per_s"] / c["bytes_per_s"] for m, c in zip(reps, ceilings)
                  if m and c and c.get("bytes_per_s")]
        run = median_run(reps, lambda r: r["bytes_per_s"])
        ceiling = median_run(ceilings, lambda r: r["bytes_per_s"])
        if not run:
            continue
        rows.append({"scenario": kind, "sockets": int(n), "file_bytes": run["file_bytes"],
                     "bytes_per_s": run["bytes_per_s"], "bytes_per_s_each": [r["bytes_per_s"] for r in reps if r],
                     "ceiling": "disk, one file fdatasync'd once" if kind == "upload" else "ws_ceiling GET from memory",
                     "ceiling_bytes_per_s": ceiling["bytes_per_s"] if ceiling else None,
                     "percent_of_ceiling": statistics.median(shares) if shares else None,
                     "percent_of_ceiling_each": shares, "latency_ms": run["latency_ms"],
                     "failed_in_all_repetitions": sum(r["errors"] + r["unanswered"] for r in reps if r),
                     "client_cpu_share": run.get("client_cpu", {}).get("busiest_thread_share")})
    rows.sort(key=lambda r: (r["scenario"] != "upload", r["sockets"]))
    return rows


def transfer_lines(rows):
    if not rows:
        return []
    lines = ["", "File transfers (one HTTP connection per socket, one request at a time, each file "
                 f"{rows[0]['file_bytes']:,} bytes; an upload counts at its 201, once its bytes are durable; a download's "
                 "bytes are dropped as they arrive). The upload ceiling: the disk under the store, one file written with "
                 "`dd conv=fdatasync`; the download ceiling: ws_ceiling answering the same bytes from memory.", "",
             "| transfer | sockets | MB/s | ceiling MB/s | % of ceiling | p50 ms | p99 ms | failed or lost | client CPU % |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lat = r["latency_ms"]
        lines.append(f"| {r['scenario']} | {r['sockets']} | {fmt(r['bytes_per_s'] / 1e6, 1)} | "
                     f"{fmt(r['ceiling_bytes_per_s'] / 1e6 if r['ceiling_bytes_per_s'] else None, 1)} | "
                     f"{fmt(r['percent_of_ceiling'], 1)} | {lat['p50']:.3f} | {lat['p99']:.3f} | "
                     f"{r['failed_in_all_repetitions']} | "
                     f"{fmt(100 * r['client_cpu_share'] if r['client_cpu_share'] is not None else None)} |")
    return lines


def fmt(x, digits=0):
    return "–" if x is None else f"{x:,.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--micro", required=True)
    ap.add_argument("--load", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("--seconds", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    runs = load_runs(a.load)
    sockets = sorted({int(m.group(1)) for k in runs for m in [re.match(r"ceiling-invoke-(\d+)$", k)] if m})
    table = []
    for n in sockets:
        for scenario, label, ceiling_label in ROWS:
            reps, ceilings = runs.get(f"{label}-{n}", []), runs.get(f"{ceiling_label}-{n}", [])
            run = median_run(reps, lambda r: r["ops_per_s"])
            if not run:
                continue
            # Each repetition against the ceiling run just before it; the median of those shares.
            shares = []
            for mine, ceiling in zip(reps, ceilings):
                if not mine or not ceiling or label == ceiling_label:
                    continue
                if scenario.startswith("invoke") and ceiling["ops_per_s"]:
                    shares.append(100 * mine["ops_per_s"] / ceiling["ops_per_s"])
                elif frames_per_s(ceiling):
                    shares.append(100 * frames_per_s(mine) / frames_per_s(ceiling))
            share = 100.0 if label == ceiling_label else (statistics.median(shares) if shares else None)
            bad = sum(r["errors"] + r["unanswered"] + r["duplicates"] for r in reps if r)
            table.append({"scenario": scenario, "sockets": n, "repetitions": len(reps), "ops_per_s": run["ops_per_s"],
                          "frames_per_s": frames_per_s(run), "percent_of_ceiling": share,
                          "percent_of_ceiling_each": shares, "ops_per_s_each": [r["ops_per_s"] for r in reps if r],
                          "latency_ms": run["latency_ms"], "failed_in_all_repetitions": bad,
                          "client_cpu_share": run.get("client_cpu", {}).get("busiest_thread_share")})
    half_reps = next((v for k, v in runs.items() if k.endswith("-half")), [])
    half = median_run(half_reps, lambda r: r["latency_ms"]["p99"])
    idle = (runs.get("xconnd-idle-10000") or [None])[0]
    scale = {k: (v or [None])[0] for k, v in runs.items() if k.startswith("scale-")}
    result = {"date": a.date, "seconds_per_run": float(a.seconds), "cores": os.cpu_count(),
              "machine": platform.machine(), "micro": micro_rows(a.micro), "load": table,
              "micro_ratios": [],
              "invoke_half_load": half, "invoke_half_load_p99_each": [r["latency_ms"]["p99"] for r in half_reps if r],
              "idle": idle, "scale": scale, "transfers": transfer_rows(runs), "raw": runs}
    result["micro_ratios"] = micro_ratios(result["micro"])
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, f"{a.date}.json"), "w") as f:
        json.dump(result, f, indent=1)

    reps = max((r["repetitions"] for r in table), default=1)
    client_threads = sorted({r.get("threads", 1) for reps_ in runs.values() for r in reps_ if r and "threads" in r})
    threads_text = "/".join(str(t) for t in client_threads) or "1"
    md = [f"# xconn bench, {a.date}", "",
          f"{os.cpu_count()} cores; xconn-load with {threads_text} client thread(s), {a.seconds} s per run, each run {reps} times "
          "(the ceiling and xconnd taking turns) and the median shown; xconnd and "
          "ws_ceiling with one I/O thread per core, xconnd with one plugin thread per core. `% of ceiling`: invoke operations (the very same frames), "
          "other scenarios frames per second, against ws_ceiling at the same socket count in the same run.", "",
          "`client CPU`: the load tool's busiest thread's CPU time as a share of the run (near 100 %: the client, "
          "not the server, was the limit).", "",
          "| scenario | sockets | ops/s | % of ceiling | p50 ms | p90 ms | p99 ms | max ms | failed, lost or twice | client CPU % |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in table:
        lat = r["latency_ms"]
        bad = r["failed_in_all_repetitions"]
        md.append(f"| {r['scenario']} | {r['sockets']} | {fmt(r['ops_per_s'])} | {fmt(r['percent_of_ceiling'], 1)} | "
                  f"{lat['p50']:.3f} | {lat['p90']:.3f} | {lat['p99']:.3f} | {lat['max']:.3f} | {bad} | "
                  f"{fmt(100 * r['client_cpu_share'] if r['client_cpu_share'] is not None else None)} |")
    if half:
        lat = half["latency_ms"]
        each = ", ".join(f"{p:.3f}" for p in result["invoke_half_load_p99_each"])
        md += ["", f"invoke paced at half the rate the closed loop reached at {half['sockets']} sockets "
                   f"({fmt(half['rate'])}/s asked, {fmt(half['ops_per_s'])}/s done), the median run by p99: "
                   f"p50 {lat['p50']:.3f} ms, p99 {lat['p99']:.3f} ms, max {lat['max']:.3f} ms (p99 of each run: {each} ms)."]
    if idle and idle.get("memory"):
        m = idle["memory"]
        md += ["", f"idle: {idle['channels']:,} signed-in channels on {idle['sockets']} sockets raised xconnd's RSS "
                   f"from {m['rss_before_bytes'] / 1048576:.1f} MiB to {m['rss_after_bytes'] / 1048576:.1f} MiB: "
                   f"{fmt(m['per_channel_bytes'])} bytes per channel."]
    md += transfer_lines(result["transfers"])
    md += scale_lines(scale)
    if result["micro_ratios"]:
        md += ["", "| micro-benchmark beside its baseline | measured | baseline | ratio |", "|---|---:|---:|---:|"]
        for r in result["micro_ratios"]:
            md.append(f"| {r['what']} | {r['measured_ns']:,.1f} ns | {r['baseline_ns']:,.1f} ns | {r['ratio']:.2f}x |")
    micro = result["micro"]
    if micro:
        md += ["", "| micro-benchmark | time | items/s |", "|---|---:|---:|"]
        for b in micro:
            md.append(f"| {b['program']}: `{b['name']}` | {b['real_time']:,.1f} {b['time_unit']} | "
                      f"{fmt(b['items_per_second'])} |")
    with open(os.path.join(a.out, f"{a.date}.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    # gnuplot: sockets, then ops/s and p99 ms for ceiling and each scenario ("NaN" where a run is missing).
    with open(os.path.join(a.out, f"{a.date}-plot.dat"), "w") as f:
        f.write("# sockets " + " ".join(f"{s}_ops {s}_p99" for s in ["ceiling"] + SCENARIOS) + "\n")
        for n in sockets:
            cells = [str(n)]
            for s in ["ceiling"] + SCENARIOS:
                r = next((r for r in table if r["sockets"] == n and r["scenario"] == s), None)
                cells += [f"{r['ops_per_s']:.1f}", f"{r['latency_ms']['p99']:.3f}"] if r else ["NaN", "NaN"]
            f.write(" ".join(cells) + "\n")


if __name__ == "__main__":
    main()
