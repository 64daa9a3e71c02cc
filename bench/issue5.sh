#!/usr/bin/env bash
# bench/issue5.sh - HotKV vs redis-server, side by side, in one run (issue #5:
# pub/sub, scripting).
#
# What it measures (for each server, and the ratio HotKV/redis):
#   1. Pub/sub delivery latency: hotkv-benchmark --pubsub, 64 publishers,
#      100 subscribers, 100 channels, 128-byte payloads, open loop at each
#      rate of PS_RATES (messages/s), STEP s per step after a 2 s warm-up,
#      PS_RUNS runs averaged.
#      Latency = receipt time - intended send time (the stamp in the
#      payload), so a stalled server cannot hide queueing.  Reported per
#      rate: p50/p99/p99.9 delivery (ms) and "held" (>= 97% of the
#      requested delivery rate).  Target: HotKV p99 <= redis p99 at every
#      rate redis-server holds.
#   2. EVALSHA of a 3-command script (INCR KEYS[1]; SET KEYS[2] ARGV[1];
#      GET KEYS[2]) on 100,000 key pairs: closed-loop throughput at pipeline
#      1 and 16 (50 connections, median of R runs), and user-space
#      instructions per EVALSHA under callgrind (CG_N calls after a warm-up).
#   3. Fan-out stall: bench/pubsub_fanout.py, FAN_SUBS subscribers of one
#      channel, FAN_MSGS messages 25 ms apart, a pinger on its own
#      connection: PING round trip p50/p99/max during the fan-out.
#
# Method: one server alive at a time, fresh, persistence off, pinned to core
# SERVER_CPU; generators on CLIENT_CPU (taskset).  HotKV runs with
# HOTKV_ARGS (default --threads 1: the same one core redis-server gets).
#
# Usage: bench/issue5.sh [-o FILE]
# Environment: HOTKV_BIN (build/hotkv-server), HOTKV_ARGS (--threads 1),
#   REDIS_BIN (redis-server), PS_RATES (10k,30k,60k,100k,150k,200k), STEP (5),
#   PS_RUNS (3), N (200000 EVALSHA calls per throughput cell), R (3),
#   CG_N (20000), FAN_SUBS (10000), FAN_MSGS (40), PARTS ("pubsub eval fanout"),
#   SERVER_CPU / CLIENT_CPU (0 / 1), KEEP=1 keeps the scratch dir.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
die() { echo "issue5.sh: error: $*" >&2; exit 1; }
log() { echo "[issue5 $(date +%H:%M:%S)] $*" >&2; }

CMDLINE=""
for v in HOTKV_BIN HOTKV_ARGS REDIS_BIN PS_RATES STEP PS_RUNS N R CG_N FAN_SUBS FAN_MSGS PARTS SERVER_CPU CLIENT_CPU; do
    [ -n "${!v+x}" ] && CMDLINE+="$v=$(printf '%q' "${!v}") "
done
CMDLINE+="bench/issue5.sh"; [ $# -gt 0 ] && CMDLINE+="$(printf ' %q' "$@")"
OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) OUT_FILE="${2:-docs/benchmarks/issue5-$(date +%F).md}"; [ $# -ge 2 ] && shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done

HOTKV=$(readlink -f "${HOTKV_BIN:-build/hotkv-server}")
REDIS=$(command -v "${REDIS_BIN:-redis-server}")
BENCH=$(readlink -f build/hotkv-benchmark)
RCLI=${REDIS_CLI:-redis-cli}
PY=/usr/bin/python3
read -r -a HOTKV_EXTRA <<< "${HOTKV_ARGS:---threads 1}"
REDIS_ARGS=(--save "" --appendonly no --maxclients 20000)
HOTKV_EXTRA+=(--maxclients 20000)
PS_RATES=${PS_RATES:-10k,30k,60k,100k,150k,200k}; STEP=${STEP:-5}; PS_RUNS=${PS_RUNS:-3}
N=${N:-200000}; R=${R:-3}; CG_N=${CG_N:-20000}
FAN_SUBS=${FAN_SUBS:-10000}; FAN_MSGS=${FAN_MSGS:-40}
PARTS=${PARTS:-pubsub eval fanout}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
[ -x "$HOTKV" ] || die "no HotKV binary at ${HOTKV_BIN:-build/hotkv-server} (run make)"
[ -x "$BENCH" ] || die "no build/hotkv-benchmark (run make)"
[ -n "$REDIS" ] || die "redis-server not found"
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
W=$(mktemp -d /tmp/hotkv-issue5.XXXXXX)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
cli() { timeout 10 "$RCLI" -h 127.0.0.1 -p "$SRV_PORT" "$@" 2>&1; }
gen() { taskset -c "$CLIENT_CPU" "$@"; }

REPORT="$W/report.md"
{
    echo "# Issue 5 benchmarks: pub/sub delivery, EVALSHA, fan-out ($(date +%F))"
    echo
    echo "Command: \`$CMDLINE\`  "
    echo "HotKV: \`$HOTKV ${HOTKV_EXTRA[*]}\`; redis: \`$($REDIS --version | cut -d' ' -f1-3)\`  "
    echo "Machine: $(nproc) cores, load at start $(cut -d' ' -f1-3 /proc/loadavg); server on core $SERVER_CPU, generators on core $CLIENT_CPU."
    echo
} > "$REPORT"

SCRIPT='local n = redis.call("INCR", KEYS[1]) redis.call("SET", KEYS[2], ARGV[1]) return redis.call("GET", KEYS[2])'

# ------------------------------------------------------------ 1. pub/sub
if want pubsub; then
    for s in hotkv redis; do
        start_server "$s" pubsub
        gen "$BENCH" -p "$SRV_PORT" --pubsub --publishers 64 --subscribers 100 --channels 100 --payload 128 \
            --sweep "$PS_RATES" --test-time "$STEP" --runs "$PS_RUNS" --warmup 2 --threads 1 -q --json "$W/ps-$s.json" \
            > "$W/ps-$s.txt" 2>&1 || log "$s pubsub run reported an error (see $W/ps-$s.txt)"
        stop_server "$SRV_PID"
    done
fi

# ---------------------------------------------------------------- 2. eval
if want eval; then
    for s in hotkv redis; do
        start_server "$s" eval
        SHA=$(cli SCRIPT LOAD "$SCRIPT")
        [[ "$SHA" =~ ^[0-9a-f]{40}$ ]] || { log "$s: SCRIPT LOAD failed: $SHA"; stop_server "$SRV_PID"; continue; }
        echo "$SHA" > "$W/sha-$s"
        for p in 1 16; do
            : > "$W/ev-$s-$p.rps"
            for ((i = 0; i < R; i++)); do
                gen "$BENCH" -p "$SRV_PORT" --clients 50 --pipeline "$p" --requests "$N" --threads 1 -q \
                    --key-space 100000 --data-size 16 \
                    --command "EVALSHA $SHA 2 cnt:__rand_int__ val:__rand_int__ __data__" --json "$W/ev-$s-$p-$i.json" \
                    > "$W/ev-$s-$p-$i.txt" 2>&1
                $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["steps"][0] if "steps" in d else d["runs"][0]["steps"][0]; print(s["achieved_rps"])' \
                    "$W/ev-$s-$p-$i.json" >> "$W/ev-$s-$p.rps" 2>/dev/null || log "$s: no result for EVALSHA P$p run $i"
            done
        done
        stop_server "$SRV_PID"
        # callgrind: instructions per EVALSHA
        start_server "$s" evalcg valgrind --tool=callgrind --callgrind-out-file="$W/cg-$s.out"
        SHA=$(cli SCRIPT LOAD "$SCRIPT")
        gen "$BENCH" -p "$SRV_PORT" --clients 8 --pipeline 16 --requests $((CG_N / 10 + 16)) --threads 1 -q \
            --key-space 1000 --command "EVALSHA $SHA 2 cnt:__rand_int__ val:__rand_int__ __data__" >/dev/null 2>&1
        callgrind_control -z "$SRV_PID" >/dev/null 2>&1
        gen "$BENCH" -p "$SRV_PORT" --clients 8 --pipeline 16 --requests "$CG_N" --threads 1 -q \
            --key-space 1000 --command "EVALSHA $SHA 2 cnt:__rand_int__ val:__rand_int__ __data__" >/dev/null 2>&1
        callgrind_control -d "$SRV_PID" >/dev/null 2>&1
        sleep 1
        stop_server "$SRV_PID"
        ir=0
        for f in "$W"/cg-"$s".out*; do
            [ -f "$f" ] || continue
            v=$(awk '/^summary:/ {print $2}' "$f")
            [ -n "$v" ] && [ "$v" -gt "$ir" ] 2>/dev/null && ir=$v
        done
        echo "$ir" > "$W/ir-$s"
    done
fi

# -------------------------------------------------------------- 3. fanout
if want fanout; then
    for s in hotkv redis; do
        start_server "$s" fanout
        gen $PY bench/pubsub_fanout.py "$SRV_PORT" --subs "$FAN_SUBS" --msgs "$FAN_MSGS" --json "$W/fan-$s.json" \
            > "$W/fan-$s.txt" 2>&1 || log "$s fanout failed (see $W/fan-$s.txt)"
        stop_server "$SRV_PID"
    done
fi

# -------------------------------------------------------------- report
$PY - "$W" "$PARTS" "$N" "$R" "$CG_N" >> "$REPORT" <<'EOF'
import json, os, statistics, sys
W, parts, N, R, CG_N = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4], sys.argv[5]
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
def steps(d):
    # summary over runs: one entry per requested rate
    if d is None:
        return {}
    out = {}
    src = d.get("summary") or d.get("steps") or []
    for s in src:
        out[s.get("requested_rps")] = s
    return out
if "pubsub" in parts:
    print("## 1. Pub/sub delivery latency (64 pub, 100 sub, 100 channels, 128 B)\n")
    h, r = steps(load(f"{W}/ps-hotkv.json")), steps(load(f"{W}/ps-redis.json"))
    print("| rate msg/s | HotKV p50 | p99 | p99.9 | held | redis p50 | p99 | p99.9 | held | p99 HotKV/redis |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rate in sorted(set(h) | set(r), key=lambda x: x or 0):
        a, b = h.get(rate, {}), r.get(rate, {})
        def f(x, k):
            v = x.get(k)
            return "-" if v is None else ("%.3f" % v if isinstance(v, float) else str(v))
        ratio = "-"
        if a.get("p99_ms") and b.get("p99_ms"):
            ratio = "%.2f" % (a["p99_ms"] / b["p99_ms"])
        print(f"| {rate} | {f(a,'p50_ms')} | {f(a,'p99_ms')} | {f(a,'p999_ms')} | {a.get('held','-')} | "
              f"{f(b,'p50_ms')} | {f(b,'p99_ms')} | {f(b,'p999_ms')} | {b.get('held','-')} | {ratio} |")
    print()
if "eval" in parts:
    print(f"## 2. EVALSHA of a 3-command script (50 conns, {N} calls, median of {R})\n")
    print("| | HotKV calls/s | redis calls/s | ratio |")
    print("|---|---|---|---|")
    for p in (1, 16):
        def med(s):
            try:
                v = [float(x) for x in open(f"{W}/ev-{s}-{p}.rps").read().split()]
                return statistics.median(v) if v else None
            except Exception:
                return None
        a, b = med("hotkv"), med("redis")
        ratio = "%.2f" % (a / b) if a and b else "-"
        print(f"| pipeline {p} | {a and round(a)} | {b and round(b)} | {ratio} |")
    def ir(s):
        try:
            return int(open(f"{W}/ir-{s}").read().strip())
        except Exception:
            return 0
    a, b = ir("hotkv"), ir("redis")
    n = int(CG_N)
    if a and b:
        print(f"\nInstructions per EVALSHA (callgrind, {n} calls, all threads): HotKV {a/n:.0f}, redis {b/n:.0f}, ratio {a/b:.2f}\n")
if "fanout" in parts:
    print("## 3. Fan-out stall: one channel, PING latency of another client during the fan-out\n")
    print("| | subscribers | delivered | PING p50 ms base | p50 during | p99 during | max during |")
    print("|---|---|---|---|---|---|---|")
    for s in ("hotkv", "redis"):
        d = load(f"{W}/fan-{s}.json")
        if not d:
            print(f"| {s} | - | - | - | - | - | - |")
            continue
        print(f"| {s} | {d['subs']} | {d['delivered_min']}..{d['delivered_max']} of {d['msgs']} | {d['ping_base_p50_ms']:.3f} | "
              f"{d['ping_fanout_p50_ms']:.3f} | {d['ping_fanout_p99_ms']:.3f} | {d['ping_fanout_max_ms']:.1f} |")
    print()
EOF
cat "$REPORT"
if [ -n "$OUT_FILE" ]; then
    mkdir -p "$(dirname "$OUT_FILE")"
    cp "$REPORT" "$OUT_FILE"
    log "report written to $OUT_FILE"
fi
