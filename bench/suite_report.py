#!/usr/bin/python3
"""Build results.md, results.json and the PNG plots of bench/suite.sh.

usage: suite_report.py OUTDIR

Reads OUTDIR/raw/meta.json and OUTDIR/raw/<server>/*.json (hotkv-benchmark
--json files, memory.json, support.txt) and writes OUTDIR/results.md,
OUTDIR/results.json and OUTDIR/*.png (plots need python3-matplotlib; without
it they are skipped and results.md says so).  Standard library only otherwise.
"""
import json
import os
import statistics
import sys

COMMANDS_ORDER = ["set", "get", "mget", "setnx", "append", "incr", "lpush",
                  "rpush", "sadd", "hset", "mset", "ping"]
SAT = 85.0


def parse_rate(r):
    r = r.strip().lower()
    mult = 1
    if r.endswith("k"):
        mult, r = 1000, r[:-1]
    elif r.endswith("m"):
        mult, r = 1000000, r[:-1]
    return int(float(r) * mult)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fnum(x, digits=0):
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def fms(x):
    return "-" if x is None else f"{x:.3f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fratio(x):
    return "n/a" if x is None else f"{x:.2f}"


def main():
    out = sys.argv[1]
    raw = os.path.join(out, "raw")
    meta = load(os.path.join(raw, "meta.json"))
    st = meta["settings"]
    servers = [s["name"] for s in meta["servers"]]
    base = "redis" if "redis" in servers else servers[0]
    commands = st["commands"].split()
    pipelines = [int(p) for p in st["tp_pipelines"].split()]
    rates = [parse_rate(r) for r in st["rates"].split(",") if r.strip()]
    rate_names = [r.strip() for r in st["rates"].split(",") if r.strip()]
    ps_names = [r.strip() for r in st["pubsub_rates"].split(",") if r.strip()]
    parts = st["parts"].split()

    support = {}
    for s in servers:
        support[s] = {}
        try:
            with open(os.path.join(raw, s, "support.txt")) as f:
                for line in f:
                    k, v = line.split()
                    support[s][k] = v
        except OSError:
            pass

    res = {"meta": meta, "throughput": {}, "sweep": {}, "pubsub": {}, "memory": {}}
    notes = []

    # ------------------------------------------------------------ throughput
    tp = res["throughput"]
    for s in servers:
        tp[s] = {}
        for c in commands:
            for p in pipelines:
                key = f"{c}:P{p}"
                if support[s].get(c) == "n/a":
                    tp[s][key] = {"status": "not implemented"}
                    continue
                d = load(os.path.join(raw, s, f"tput-{c}-p{p}.json"))
                if not d or not d.get("steps"):
                    tp[s][key] = {"status": "not run" if "throughput" not in parts else "failed"}
                    continue
                steps = d["steps"]
                ach = [x["achieved_rps"] for x in steps]
                cpu = [x["generator_cpu_pct"] for x in steps]
                errs = sum(x["errors"] for x in steps)
                reqs = sum(x["requests"] for x in steps)
                sat = any(x.get("generator_saturated") or x["generator_cpu_pct"] > SAT for x in steps)
                tp[s][key] = {
                    "status": "ok", "median_rps": statistics.median(ach), "runs_rps": ach,
                    "generator_cpu_pct": statistics.median(cpu), "generator_cpu_max_pct": max(cpu),
                    "generator_saturated": sat, "errors": errs, "requests": reqs,
                    "p50_ms": statistics.median(x["p50_ms"] for x in steps),
                    "p99_ms": statistics.median(x["p99_ms"] for x in steps),
                    "first_error": next((x["first_error"] for x in steps if x.get("first_error")), None),
                }

    # ------------------------------------------------------------ sweep
    sw = res["sweep"]
    for wl in ("get", "ratio"):
        sw[wl] = {}
        for s in servers:
            sw[wl][s] = []
            for rn, r in zip(rate_names, rates):
                d = load(os.path.join(raw, s, f"sweep-{wl}-{rn}.json"))
                if not d or not d.get("summary"):
                    continue
                sm = d["summary"][0]
                steps = d["steps"]
                cpu = max(x["generator_cpu_pct"] for x in steps)
                lag = max((x.get("send_lag_p99_ms") or 0) for x in steps)
                sw[wl][s].append({
                    "requested_rps": r, "achieved_rps": sm["achieved_rps"], "held": bool(sm["held"]),
                    "p50_ms": sm.get("p50_ms"), "p99_ms": sm.get("p99_ms"), "p999_ms": sm.get("p999_ms"),
                    "max_ms": sm.get("max_ms"), "errors": sm.get("errors", 0),
                    "generator_cpu_pct": cpu, "send_lag_p99_ms": lag,
                    "generator_saturated": any(x.get("generator_saturated") for x in steps),
                })

    # ------------------------------------------------------------ pubsub
    ps = res["pubsub"]
    for s in servers:
        if support[s].get("publish") == "n/a":
            ps[s] = {"status": "not implemented"}
            continue
        ps[s] = {"status": "ok", "steps": []}
        for rn in ps_names:
            d = load(os.path.join(raw, s, f"pubsub-{rn}.json"))
            if not d or not d.get("summary"):
                continue
            sm = d["summary"][0]
            steps = d["steps"]
            ps[s]["steps"].append({
                "rate": parse_rate(rn), "requested_rps": sm["requested_rps"],
                "achieved_rps": sm["achieved_rps"], "held": bool(sm["held"]),
                "p50_ms": sm.get("p50_ms"), "p99_ms": sm.get("p99_ms"), "p999_ms": sm.get("p999_ms"),
                "max_ms": sm.get("max_ms"), "errors": sm.get("errors", 0),
                "generator_cpu_pct": max(x["generator_cpu_pct"] for x in steps),
                "generator_saturated": any(x.get("generator_saturated") for x in steps),
            })
        if not ps[s]["steps"]:
            ps[s]["status"] = "not run" if "pubsub" not in parts else "failed"

    # ------------------------------------------------------------ memory
    for s in servers:
        m = load(os.path.join(raw, s, "memory.json"))
        if not m or m.get("rss_after_kb") is None:
            res["memory"][s] = None
            continue
        bpk = (m["rss_after_kb"] - m["rss_before_kb"]) * 1024.0 / m["keys"]
        m["bytes_per_key"] = bpk
        m["overhead_per_key"] = bpk - m["key_len"] - m["value_size"]
        res["memory"][s] = m

    # ------------------------------------------------------------ plots
    plots = []
    plot_err = None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker  # noqa: F401
    except Exception as e:  # noqa: BLE001
        plt = None
        plot_err = f"plots skipped: matplotlib not available ({e}); apt-get install python3-matplotlib"
    if plt is not None:
        titles = {"get": "GET only", "ratio": "10:1 GET:SET"}
        for wl in ("get", "ratio"):
            if not any(sw[wl][s] for s in servers):
                continue
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for s in servers:
                pts = sw[wl][s]
                if not pts:
                    continue
                h = [(p["requested_rps"] / 1000, p["p99_ms"]) for p in pts if p["held"]]
                line = ax.plot([x for x, _ in h], [y for _, y in h], marker="o", label=f"{s} p99 (held)")
                ns = [p["requested_rps"] / 1000 for p in pts if not p["held"]]
                if ns:
                    ymark = max([y for _, y in h] or [1.0])
                    ax.scatter(ns, [ymark] * len(ns), marker="x", s=60, color=line[0].get_color(),
                               label=f"{s} NS (no latency)")
            ax.set_xlabel("requested rate (k req/s)")
            ax.set_ylabel("p99 latency (ms)")
            ax.set_yscale("log")
            fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
            ax.yaxis.set_major_formatter(fmt)
            ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
                lambda v, _: f"{v:g}" if f"{v:.1g}"[0] in "25" else ""))
            ax.set_title(f"p99 vs requested rate, {titles[wl]}, {st['sweep_clients']} conns, pipeline 1")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
            fn = f"p99-vs-rate-{wl}.png"
            fig.tight_layout()
            fig.savefig(os.path.join(out, fn), dpi=110)
            plt.close(fig)
            plots.append(fn)
        others = [s for s in servers if s != base]
        if others:
            fig, axes = plt.subplots(1, len(pipelines), figsize=(6 * len(pipelines), 4.5), squeeze=False)
            for ax, p in zip(axes[0], pipelines):
                width = 0.8 / len(others)
                for i, s in enumerate(others):
                    vals = []
                    for c in commands:
                        a = tp[s][f"{c}:P{p}"].get("median_rps")
                        b = tp[base][f"{c}:P{p}"].get("median_rps")
                        vals.append(ratio(a, b))
                    xs = [j + (i - (len(others) - 1) / 2) * width for j in range(len(commands))]
                    ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=f"{s}/{base}")
                    for x, v in zip(xs, vals):
                        if v is None:
                            ax.text(x, 0.02, "n/a", rotation=90, ha="center", va="bottom", fontsize=7)
                ax.axhline(1.0, color="black", linewidth=0.8)
                ax.set_xticks(range(len(commands)))
                ax.set_xticklabels([c.upper() for c in commands], rotation=45, fontsize=8)
                ax.set_ylabel(f"throughput ratio vs {base}")
                ax.set_title(f"pipeline {p}")
                ax.legend(fontsize=8)
            fig.suptitle(f"closed-loop throughput ratio vs {base} ({st['tp_clients']} clients, {st['dsize']}-byte values)")
            fig.tight_layout()
            fn = "throughput-ratio.png"
            fig.savefig(os.path.join(out, fn), dpi=110)
            plt.close(fig)
            plots.append(fn)
    res["plots"] = plots

    # ------------------------------------------------------------ markdown
    L = []
    L.append(f"# HotKV benchmark suite - {meta['date']}")
    L.append("")
    if meta.get("quick"):
        L.append("**QUICK=1 smoke run: tiny key space and steps; the figures are not meaningful.**")
        L.append("")
    L.append(f"- command: `{meta['suite_command']}` (repo {meta['repo_rev']}); runtime {meta['elapsed_s']} s")
    L.append(f"- host: {meta['host']}; servers pinned to core {meta['server_cpu']}, hotkv-benchmark "
             f"(--threads {meta['gen_threads']}) pinned to core {meta['client_cpu']}; one server alive at a time; "
             f"load average at start / end: {meta['load_start']} / {meta['load_end']}")
    for s in meta["servers"]:
        L.append(f"- {s['name']}: `{s['bin']} {s['args']}` ({s['version']}); "
                 f"[INFO server](info-server-{s['name']}.txt), [CONFIG GET *](config-{s['name']}.txt)")
    L.append(f"- settings: keys {st['keys']:,}, values {st['dsize']} B; throughput {st['tp_runs']} run(s) x "
             f"{st['tp_seconds']} s per cell, {st['tp_clients']} clients; sweep {st['sweep_clients']} conns, "
             f"steps of {st['step_seconds']} s x {st['runs']} run(s), rates {st['rates']} (a server's sweep "
             f"stops after {st['ns_stop']} NS step(s) in a row); pub/sub rates {st['pubsub_rates']}")
    L.append("- exact command lines: [commands.txt](commands.txt); raw hotkv-benchmark JSON: [raw/](raw/); "
             "all figures: [results.json](results.json)")
    L.append("- 2-core machine: server and generator each get one core; absolute numbers are small and noisy, "
             "compare the ratios. See [README](../README.md).")
    busy = meta.get("cpu_busy_start_pct")
    if busy is not None:
        L.append(f"- other load on the box (all CPUs busy, measured over 2 s with nothing of ours running): "
                 f"{busy}% before the run, {meta.get('cpu_busy_end_pct')}% after")
        if busy > 20 or (meta.get("cpu_busy_end_pct") or 0) > 20:
            L.append("- **WARNING: the box was busy with other work; throughput figures are unreliable, rerun.**")
    L.append("")

    # summary (filled after the sections are computed): placeholder index
    summary_at = len(L)

    # throughput table
    L.append(f"## 1. Throughput (closed loop, requests/s, median of {st['tp_runs']})")
    L.append("")
    L.append(f"hotkv-benchmark `--workload NAME --clients {st['tp_clients']} --pipeline P --data-size {st['dsize']} "
             f"--key-space {st['keys']} --test-time {st['tp_seconds']} --runs {st['tp_runs']}`, key space "
             f"preloaded. gen% = generator CPU (median of the runs); `!` = the generator passed {SAT:.0f}% "
             "CPU in a run (the figure measures the generator, treat it as a floor).")
    L.append("")
    hdr = "| command | P |"
    sep = "|---|---:|"
    for s in servers:
        hdr += f" {s} req/s | gen% |"
        sep += "---:|---:|"
    for s in servers:
        if s != base:
            hdr += f" {s}/{base} |"
            sep += "---:|"
    L.append(hdr)
    L.append(sep)
    errnotes = []
    for p in pipelines:
        for c in commands:
            row = f"| {c.upper()} | {p} |"
            for s in servers:
                e = tp[s][f"{c}:P{p}"]
                if e["status"] == "not implemented":
                    row += " n/a (not implemented) | |"
                elif e["status"] != "ok":
                    row += f" {e['status']} | |"
                else:
                    flag = "!" if e["generator_saturated"] else ""
                    err = " (errors)" if e["errors"] else ""
                    row += f" {fnum(e['median_rps'])}{err} | {e['generator_cpu_pct']:.0f}{flag} |"
                    if e["errors"]:
                        errnotes.append(f"{s} {c.upper()} P{p}: {e['errors']} errors of {e['requests']}, "
                                        f"first: {(e['first_error'] or '')[:80]}")
            for s in servers:
                if s != base:
                    r = ratio(tp[s][f"{c}:P{p}"].get("median_rps"), tp[base][f"{c}:P{p}"].get("median_rps"))
                    row += f" {fratio(r)} |"
            L.append(row)
    L.append("")
    for n in errnotes:
        L.append(f"- errors: {n}")
    if errnotes:
        L.append("")
    if "throughput-ratio.png" in plots:
        L.append("![throughput ratio](throughput-ratio.png)")
        L.append("")

    # sweep
    L.append("## 2. Fixed-rate latency sweep (open loop)")
    L.append("")
    L.append(f"hotkv-benchmark `--rate R --clients {st['sweep_clients']} --key-space {st['keys']} --data-size "
             f"{st['dsize']} --test-time {st['step_seconds']} --runs {st['runs']}`, pipeline 1, {st['keys']:,} keys "
             "preloaded; latency from each request's intended send time; figures averaged over the runs. "
             "held = achieved >= 97% of requested in every run; NS = not sustained, no latency shown. "
             "`-` = not run (the server's sweep had stopped: NS at a lower rate). gen% = generator CPU "
             f"(max over the runs), `!` = saturated (>{SAT:.0f}%).")
    L.append("")
    held_max = {}
    for wl, title in (("get", "GET only"), ("ratio", "10:1 GET:SET (`--ratio 1:10`)")):
        L.append(f"### {title}")
        L.append("")
        hdr = "| requested/s |"
        sep = "|---:|"
        for s in servers:
            hdr += f" {s} achieved/s | {s} p50 ms | {s} p99 ms | {s} p99.9 ms | gen% |"
            sep += "---:|---:|---:|---:|---:|"
        L.append(hdr)
        L.append(sep)
        held_max[wl] = {}
        for s in servers:
            hm = [p["requested_rps"] for p in sw[wl][s] if p["held"]]
            held_max[wl][s] = max(hm) if hm else None
        for r in rates:
            if not any(p["requested_rps"] == r for s in servers for p in sw[wl][s]):
                continue
            row = f"| {r:,} |"
            for s in servers:
                pt = next((p for p in sw[wl][s] if p["requested_rps"] == r), None)
                if pt is None:
                    if support[s].get("get") == "n/a":
                        row += " n/a (not implemented) | | | | |"
                    else:
                        row += " - | | | | |"
                    continue
                flag = "!" if pt["generator_saturated"] else ""
                if pt["held"]:
                    row += (f" {fnum(pt['achieved_rps'])} | {fms(pt['p50_ms'])} | {fms(pt['p99_ms'])} | "
                            f"{fms(pt['p999_ms'])} | {pt['generator_cpu_pct']:.0f}{flag} |")
                else:
                    row += f" {fnum(pt['achieved_rps'])} NS | | | | {pt['generator_cpu_pct']:.0f}{flag} |"
            L.append(row)
        L.append("")
        L.append("Highest rate held: " + "; ".join(
            f"{s} {fnum(held_max[wl][s]) if held_max[wl][s] else 'none'}" for s in servers) + ".")
        for s in servers:
            pts = sw[wl][s]
            if pts and pts[-1]["held"] and pts[-1]["requested_rps"] == max(rates):
                L.append(f"{s} held every rate tried: its ceiling is above {max(rates):,}/s (raise RATES).")
        L.append("")
        for s in servers:
            lagged = [p for p in sw[wl][s] if (p.get("send_lag_p99_ms") or 0) > 1.0]
            sat = [p for p in sw[wl][s] if p["generator_saturated"]]
            if lagged:
                L.append(f"- {s}: the generator's own send lag (p99, max over the runs) exceeded 1 ms at "
                         + ", ".join(f"{p['requested_rps']:,}/s ({p['send_lag_p99_ms']:.1f} ms)" for p in lagged)
                         + ": that delay is part of the latencies of those steps.")
            if sat:
                L.append(f"- {s}: generator saturated (>{SAT:.0f}% of its core) at "
                         + ", ".join(f"{p['requested_rps']:,}/s" for p in sat)
                         + ": latencies there include generator queueing; an NS there may be the generator's.")
        L.append("")
        if f"p99-vs-rate-{wl}.png" in plots:
            L.append(f"![p99 vs rate {wl}](p99-vs-rate-{wl}.png)")
            L.append("")
    res["held_max"] = held_max

    # pubsub
    L.append("## 3. Pub/sub delivery latency")
    L.append("")
    L.append("hotkv-benchmark `--pubsub --publishers 64 --subscribers 100 --channels 100 --payload 128 --rate R "
             f"--test-time {st['step_seconds']} --runs {st['runs']}`: each message to one subscriber; latency from "
             "the message's intended publish time to its delivery (same host, CLOCK_MONOTONIC).")
    L.append("")
    L.append("| server | msgs/s requested | delivered/s | held | p50 ms | p99 ms | p99.9 ms | max ms | gen% |")
    L.append("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for s in servers:
        e = ps[s]
        if e["status"] == "not implemented":
            L.append(f"| {s} | n/a (not implemented) | | | | | | | |")
            continue
        if e["status"] != "ok":
            L.append(f"| {s} | {e['status']} | | | | | | | |")
            continue
        for pt in e["steps"]:
            flag = "!" if pt["generator_saturated"] else ""
            if pt["held"]:
                L.append(f"| {s} | {pt['rate']:,} | {fnum(pt['achieved_rps'])} | held | {fms(pt['p50_ms'])} | "
                         f"{fms(pt['p99_ms'])} | {fms(pt['p999_ms'])} | {fms(pt['max_ms'])} | "
                         f"{pt['generator_cpu_pct']:.0f}{flag} |")
            else:
                L.append(f"| {s} | {pt['rate']:,} | {fnum(pt['achieved_rps'])} | NS | | | | | "
                         f"{pt['generator_cpu_pct']:.0f}{flag} |")
    L.append("")

    # memory
    L.append("## 4. Memory per key")
    L.append("")
    L.append(f"Fresh server, VmRSS before and after hotkv-benchmark `--preload` SETs {st['keys']:,} keys "
             f"(`key:%012d`, 16 bytes) with {st['dsize']}-byte values; overhead = bytes/key - (16 + {st['dsize']}). "
             "Lower is better.")
    L.append("")
    hdr = "| | " + " | ".join(servers) + " |"
    for s in servers:
        if s != base:
            hdr += f" {s}/{base} |"
    L.append(hdr)
    L.append("|---|" + "---:|" * (len(servers) + len([s for s in servers if s != base])))
    mem = res["memory"]

    def mrow(label, key, digits=0, with_ratio=False):
        row = f"| {label} |"
        for s in servers:
            v = mem[s].get(key) if mem[s] else None
            try:
                row += f" {fnum(float(v), digits)} |"
            except (TypeError, ValueError):
                row += f" {v if v else 'n/a'} |"
        for s in servers:
            if s != base:
                if with_ratio and mem[s] and mem[base]:
                    row += f" {fratio(ratio(mem[s].get(key), mem[base].get(key)))} |"
                else:
                    row += " |"
        L.append(row)
    mrow("RSS before (kB)", "rss_before_kb")
    mrow("RSS after (kB)", "rss_after_kb")
    mrow("DBSIZE after load", "dbsize")
    mrow("INFO used_memory (bytes)", "used_memory")
    mrow("preload time (s)", "preload_s", 2)
    mrow("bytes/key (RSS growth / keys)", "bytes_per_key", 1, True)
    mrow(f"overhead bytes/key (above 16 + {st['dsize']})", "overhead_per_key", 1, True)
    L.append("")

    # summary
    S = ["## Summary", ""]
    for s in servers:
        if s == base:
            continue
        for p in pipelines:
            rs = []
            for c in commands:
                r = ratio(tp[s][f"{c}:P{p}"].get("median_rps"), tp[base][f"{c}:P{p}"].get("median_rps"))
                if r is not None:
                    rs.append((c, r))
            if rs:
                gm = statistics.geometric_mean([r for _, r in rs])
                S.append(f"- throughput {s}/{base}, pipeline {p}: "
                         + ", ".join(f"{c.upper()} {r:.2f}" for c, r in rs)
                         + f" (geometric mean {gm:.2f} over {len(rs)} commands)")
        if mem.get(s) and mem.get(base):
            S.append(f"- memory per key {s}/{base}: {fratio(ratio(mem[s]['bytes_per_key'], mem[base]['bytes_per_key']))} "
                     f"({mem[s]['bytes_per_key']:.0f} vs {mem[base]['bytes_per_key']:.0f} bytes/key; overhead "
                     f"{mem[s]['overhead_per_key']:.0f} vs {mem[base]['overhead_per_key']:.0f})")
    for wl, title in (("get", "GET"), ("ratio", "10:1 GET:SET")):
        S.append(f"- highest rate held, {title}: " + "; ".join(
            f"{s} {fnum(held_max[wl][s]) if held_max[wl][s] else 'none'}"
            + (" (every rate tried)" if sw[wl][s] and sw[wl][s][-1]["held"] and sw[wl][s][-1]["requested_rps"] == max(rates) else "")
            for s in servers))
    S.append("")
    L[summary_at:summary_at] = S

    # notes
    L.append("## Notes and known gaps")
    L.append("")
    for s in servers:
        ni = [k.upper() for k, v in support[s].items() if v == "n/a"]
        if ni:
            L.append(f"- {s} does not implement {', '.join(ni)} yet (the server answered `unknown command`): "
                     "those cells are n/a.")
    if plot_err:
        L.append(f"- {plot_err}")
    L.append("- One 2-core VM: server on one core, generator on the other, so generator saturation caps the "
             "pipeline-1 and sweep figures of fast servers (see the gen% columns); absolute figures are not "
             "comparable with the big-machine figures of BENCHMARKS.md, only the ratios are.")
    L.append("- Sweep: once the single generator thread is saturated (gen% `!`) it sends late and in bursts, "
             "so held rates of hundreds of thousands/s here are burst-pipelined load, and the p99 at every step "
             "includes the generator's wake-up lateness on this VM (a few ms even at 10k/s); compare servers step "
             "by step, not with the published sub-ms figures (docs/benchmarks/README.md, the 2-core caveat).")
    L.append("- Throughput cells run in the order of the table on one server instance after the sweep; "
             "SET/SETNX/APPEND/INCR/MSET modify the preloaded key space (APPEND grows values), LPUSH/RPUSH/SADD/HSET "
             "keys are deleted after each cell.")
    for n in notes:
        L.append(f"- {n}")
    L.append("")

    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print("\n".join(L))


if __name__ == "__main__":
    main()
