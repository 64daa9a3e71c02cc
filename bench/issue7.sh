#!/usr/bin/env bash
# bench/issue7.sh - the cache benchmark of issue #7 (maxmemory and eviction):
# HotKV vs redis-server, side by side, same maxmemory, allkeys-lru and
# allkeys-lfu.
#
# Workload (bench/cachebench.c, built here into build/cachebench): CLIENTS
# connections (50), PIPELINE requests in flight each (1), keys drawn from
# Zipf(ZIPF = 0.99) over N (10,000,000) distinct keys ("key:" + 16 hex
# digits, 20-byte names), each request GET k, and when the reply is nil the
# same connection SETs k to a VSIZE-byte (100) value.  Warm-up of
# WARMUP_GETS GET replies (default N: the same request sequence for both
# servers; or WARMUP seconds if WARMUP_GETS=0) at WARMUP_PIPELINE (16)
# requests in flight per connection, so that the cache fills quickly, then
# T seconds measured at PIPELINE: hit ratio, GET/s, all commands/s, GET
# p50/p99, and the CPU time of the server (us per command) and of the
# generator over the window.
#
# maxmemory = FRACTION (0.10) of the working set, the memory redis-server
# needs to hold all N keys: SAMPLE (500,000) keys of the same shape are
# loaded into a fresh redis-server and its used_memory growth is
# extrapolated to N (plus the empty server's used_memory).  MAXMEMORY=bytes
# skips the measurement.
#
# Method: one server alive at a time, fresh for every run, persistence off,
# pinned to core SERVER_CPU; cachebench on CLIENT_CPU.  HotKV runs with
# HOTKV_ARGS (default --threads 1: the one core redis-server gets).  For
# each of R runs (3), each policy, each server in turn; medians of the R
# runs.  Targets: HotKV hit ratio >= redis-server's, HotKV GET/s >= 1.3x
# redis-server's.
#
# INTERLEAVE=S (seconds) measures differently: in each run, for each
# policy, both servers are started (both pinned to SERVER_CPU, only one
# under load at a time) and warmed up, then measured in turns of S seconds
# (A B B A A B ..., a fresh cachebench seed per turn) until each had T
# seconds; a server's figures for the run are the totals of its turns
# (p50/p99: median over turns), and the report adds the GET/s ratio of each
# pair of neighbouring turns.  On a machine shared with other work this
# exposes both servers to the same background load, instead of to whatever
# load each run happened to meet.
#
# Usage: bench/issue7.sh [-o FILE] [-h]
#   -o FILE   also write the markdown report to FILE
#             (-o alone: docs/benchmarks/issue7-YYYY-MM-DD.md)
# Environment: HOTKV_BIN (build/hotkv-server), HOTKV_ARGS (--threads 1),
#   REDIS_BIN (redis-server), N (10000000), SAMPLE (500000), FRACTION (0.10),
#   MAXMEMORY (unset: measured), VSIZE (100), ZIPF (0.99), CLIENTS (50),
#   PIPELINE (1), SEED (7), WARMUP_GETS (N), WARMUP (60, seconds, used when
#   WARMUP_GETS=0), WARMUP_PIPELINE (16), T (30), R (3), INTERLEAVE (0),
#   POLICIES ("allkeys-lru allkeys-lfu"), SERVERS ("hotkv redis"), PORTS (LO-HI: server ports from this range;
#   default any free port), SERVER_CPU / CLIENT_CPU (0 / 1), KEEP=1 (keep
#   the scratch dir), QUICK=1 (N=1000000 SAMPLE=200000 T=10 R=1: a few
#   minutes; any variable set explicitly wins).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
die() { echo "issue7.sh: error: $*" >&2; exit 1; }
log() { echo "[issue7 $(date +%H:%M:%S)] $*" >&2; }

CMDLINE=""
for v in QUICK HOTKV_BIN HOTKV_ARGS REDIS_BIN N SAMPLE FRACTION MAXMEMORY VSIZE ZIPF CLIENTS PIPELINE SEED \
         WARMUP_GETS WARMUP WARMUP_PIPELINE T R INTERLEAVE POLICIES SERVERS PORTS SERVER_CPU CLIENT_CPU; do
    [ -n "${!v+x}" ] && CMDLINE+="$v=$(printf '%q' "${!v}") "
done
CMDLINE+="bench/issue7.sh"; [ $# -gt 0 ] && CMDLINE+="$(printf ' %q' "$@")"
OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then OUT_FILE=$2; shift
            else OUT_FILE="docs/benchmarks/issue7-$(date +%F).md"; fi ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done

if [ "${QUICK:-0}" = 1 ]; then
    N=${N:-1000000}; SAMPLE=${SAMPLE:-200000}; T=${T:-10}; R=${R:-1}
fi
HOTKV=$(readlink -f "${HOTKV_BIN:-build/hotkv-server}")
REDIS=$(command -v "${REDIS_BIN:-redis-server}")
RCLI=${REDIS_CLI:-redis-cli}
PY=/usr/bin/python3
read -r -a HOTKV_BASE <<< "${HOTKV_ARGS:---threads 1}"
N=${N:-10000000}; SAMPLE=${SAMPLE:-500000}; FRACTION=${FRACTION:-0.10}
VSIZE=${VSIZE:-100}; ZIPF=${ZIPF:-0.99}; CLIENTS=${CLIENTS:-50}; PIPELINE=${PIPELINE:-1}; SEED=${SEED:-7}
WARMUP_GETS=${WARMUP_GETS:-$N}; WARMUP=${WARMUP:-60}; WARMUP_PIPELINE=${WARMUP_PIPELINE:-16}; T=${T:-30}; R=${R:-3}; INTERLEAVE=${INTERLEAVE:-0}
POLICIES=${POLICIES:-allkeys-lru allkeys-lfu}; SERVERS=${SERVERS:-hotkv redis}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
[ -n "$REDIS" ] || die "redis-server not found"
case " $SERVERS " in *" hotkv "*) [ -x "$HOTKV" ] || die "no HotKV binary at ${HOTKV_BIN:-build/hotkv-server} (run make)" ;; esac
[ "$SAMPLE" -gt "$N" ] && SAMPLE=$N

# ---------------------------------------------------------- the generator
CB=$ROOT/build/cachebench
CB_SRCS=(bench/cachebench.c src/tools/benchmark/keydist.c src/tools/benchmark/hist.c
         src/tools/benchmark/rparse.c src/tools/benchmark/stamp.c)
need_build=0
[ -x "$CB" ] || need_build=1
for f in "${CB_SRCS[@]}" src/tools/benchmark/*.h; do [ "$f" -nt "$CB" ] && need_build=1; done
if [ $need_build = 1 ]; then
    mkdir -p build
    ${CC:-cc} -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Isrc/tools/benchmark -o "$CB.tmp.$$" \
        "${CB_SRCS[@]}" -lm || die "could not build $CB"
    mv -f "$CB.tmp.$$" "$CB"
fi

W=$(mktemp -d /tmp/hotkv-issue7.XXXXXX)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
cli() { timeout 600 "$RCLI" -h 127.0.0.1 -p "$SRV_PORT" "$@" 2>&1; }
info_field() { cli INFO "$1" | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }
set_args() {  # extra server arguments...
    REDIS_ARGS=(--save "" --appendonly no --dir "$W" "$@")
    HOTKV_EXTRA=("${HOTKV_BASE[@]}" --save "" --appendonly no --dir "$W" "$@")
}
CB_COMMON=(--keys "$N" --zipf "$ZIPF" --data-size "$VSIZE" --seed "$SEED")

# ------------------------------------------------- working set, maxmemory
if [ -n "${MAXMEMORY:-}" ]; then
    WS_NOTE="maxmemory given: $MAXMEMORY bytes (not measured)"
    WS=""
else
    set_args
    start_server redis ws
    m0=$(info_field memory used_memory)
    taskset -c "$CLIENT_CPU" "$CB" -p "$SRV_PORT" "${CB_COMMON[@]}" --load "$SAMPLE" -c 8 -P 64 \
        > "$W/ws-load.txt" 2>&1 || { cat "$W/ws-load.txt" >&2; die "loading the sample failed"; }
    m1=$(info_field memory used_memory)
    k=$(cli DBSIZE)
    [ "$k" = "$SAMPLE" ] || die "redis holds $k keys after loading $SAMPLE"
    stop_server "$SRV_PID"
    read -r PER_KEY WS MAXMEMORY <<< "$($PY -c '
import sys
m0, m1, s, n, f = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
per = (m1 - m0) / s
ws = m0 + per * n
print("%.1f %d %d" % (per, ws, ws * f))' "$m0" "$m1" "$SAMPLE" "$N" "$FRACTION")"
    WS_NOTE="redis-server used_memory $m0 B empty, $m1 B with $SAMPLE keys: $PER_KEY B/key; working set for $N keys = $m0 + $PER_KEY x $N = $WS B ($(( WS / 1048576 )) MiB); maxmemory = $FRACTION x that = $MAXMEMORY B ($(( MAXMEMORY / 1048576 )) MiB)"
fi
log "$WS_NOTE"

# ------------------------------------------------------------------ runs
if [ "$WARMUP_GETS" -gt 0 ] 2>/dev/null; then WARM_ARGS=(--warmup-gets "$WARMUP_GETS"); WARM_DESC="$WARMUP_GETS GET replies"
else WARM_ARGS=(--warmup "$WARMUP"); WARM_DESC="$WARMUP s"; fi
WARM_ARGS+=(--warmup-pipeline "$WARMUP_PIPELINE"); WARM_DESC+=" at pipeline $WARMUP_PIPELINE"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$W/results.txt"
: > "$W/windows.txt"
# cb_run SERVER POLICY LABEL PORT PID cachebench-args... -> CB_LINE (the
# CACHEBENCH line plus the server's evicted/used_memory/keys and the load),
# empty on failure
cb_run() {
    local s=$1 pol=$2 label=$3 port=$4 pid=$5; shift 5
    local out="$W/cb-$s-$pol-$label.txt" la rc line ev um keys
    la=$(cut -d' ' -f1 /proc/loadavg)
    taskset -c "$CLIENT_CPU" "$CB" -p "$port" "${CB_COMMON[@]}" -c "$CLIENTS" -P "$PIPELINE" \
        --server-pid "$pid" "$@" > "$out" 2> "$out.err"
    rc=$?
    CB_LINE=""
    line=$(grep '^CACHEBENCH ' "$out")
    if [ -z "$line" ]; then
        log "$s $pol $label: no result (rc $rc)"; tail -n 5 "$out.err" "$out" >&2
        return 1
    fi
    [ $rc = 0 ] || log "$s $pol $label: rc $rc: $(grep -E '^(errors|bad values)' "$out" | tr '\n' ' ')"
    ev=$(SRV_PORT=$port info_field stats evicted_keys); um=$(SRV_PORT=$port info_field memory used_memory)
    keys=$(SRV_PORT=$port cli DBSIZE | tr -d '\r')
    CB_LINE="${line#CACHEBENCH } evicted=${ev:-nan} used_memory=${um:-nan} keys_held=${keys:-nan} load=$la"
    log "  $s $label:$(echo "$line" | grep -oE ' (hit_ratio|get_rps|ops_rps|p99_ms|client_cpu_pct|server_us_per_op)=[^ ]*' | tr -d '\n') evicted=$ev keys=$keys load=$la"
}
check_config() {  # NAME POLICY
    local mm pp
    mm=$(cli CONFIG GET maxmemory | sed -n 2p | tr -d '\r')
    pp=$(cli CONFIG GET maxmemory-policy | sed -n 2p | tr -d '\r')
    if [ "$mm" != "$MAXMEMORY" ] || [ "$pp" != "$2" ]; then
        log "$1: maxmemory $mm policy $pp (wanted $MAXMEMORY $2)"
    fi
}
for ((i = 1; i <= R; i++)); do
    for pol in $POLICIES; do
        if [ "$INTERLEAVE" = 0 ]; then
            for s in $SERVERS; do
                set_args --maxmemory "$MAXMEMORY" --maxmemory-policy "$pol"
                start_server "$s" "$pol-$i"
                check_config "$s" "$pol"
                log "run $i/$R $pol $s (port $SRV_PORT): warm-up $WARM_DESC, $T s measured"
                cb_run "$s" "$pol" "$i" "$SRV_PORT" "$SRV_PID" "${WARM_ARGS[@]}" -t "$T" --progress 10 \
                    --json "$W/cb-$s-$pol-$i.json" &&
                    echo "server=$s policy=$pol run=$i $CB_LINE" >> "$W/results.txt"
                stop_server "$SRV_PID"
            done
        else
            # every server alive (idle but one), each warmed up, then
            # measured in turns of INTERLEAVE seconds
            declare -A PORT_OF=() PID_OF=()
            for s in $SERVERS; do
                set_args --maxmemory "$MAXMEMORY" --maxmemory-policy "$pol"
                start_server "$s" "$pol-$i"
                check_config "$s" "$pol"
                PORT_OF[$s]=$SRV_PORT; PID_OF[$s]=$SRV_PID
                log "run $i/$R $pol $s (port $SRV_PORT): warm-up $WARM_DESC"
                cb_run "$s" "$pol" "$i-warm" "$SRV_PORT" "$SRV_PID" "${WARM_ARGS[@]}" -t 1 -q &&
                    echo "server=$s policy=$pol run=$i window=0 $CB_LINE" >> "$W/windows.txt"
            done
            nwin=$(( (T + INTERLEAVE - 1) / INTERLEAVE ))
            order=($SERVERS)
            for ((k = 1; k <= nwin; k++)); do
                for s in "${order[@]}"; do
                    cb_run "$s" "$pol" "$i-w$k" "${PORT_OF[$s]}" "${PID_OF[$s]}" --seed "$((SEED + 1000 * i + k))" \
                        --warmup 0.5 -t "$INTERLEAVE" -q &&
                        echo "server=$s policy=$pol run=$i window=$k $CB_LINE" >> "$W/windows.txt"
                done
                # ABBA: every round runs in the reverse order of the last
                rev=(); for ((j = ${#order[@]} - 1; j >= 0; j--)); do rev+=("${order[j]}"); done
                order=("${rev[@]}")
            done
            for s in $SERVERS; do stop_server "${PID_OF[$s]}"; done
            unset PORT_OF PID_OF
        fi
    done
done
if [ "$INTERLEAVE" != 0 ]; then  # windows -> one row per server, policy and run
    $PY - "$W/windows.txt" >> "$W/results.txt" <<'PYEOF'
import statistics, sys
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[1]) if l.strip()]
f = float
groups = {}
for r in rows:
    groups.setdefault((r["server"], r["policy"], r["run"]), []).append(r)
for (s, pol, run), g in groups.items():
    warm = [r for r in g if r["window"] == "0"]
    ws = [r for r in g if r["window"] != "0"]
    if not ws:
        continue
    gets = sum(int(r["gets"]) for r in ws); hits = sum(int(r["hits"]) for r in ws)
    sets = sum(int(r["sets"]) for r in ws); sec = sum(f(r["window_s"]) for r in ws)
    srv = sum(f(r["server_cpu_pct"]) * f(r["window_s"]) / 100 for r in ws)
    cli = sum(f(r["client_cpu_pct"]) * f(r["window_s"]) / 100 for r in ws)
    w0 = warm[0] if warm else ws[0]
    last = max(ws, key=lambda r: int(r["window"]))
    out = dict(server=s, policy=pol, run=run, gets=gets, hits=hits, misses=gets - hits, sets=sets,
               errors=sum(int(r["errors"]) for r in ws), bad_values=sum(int(r["bad_values"]) for r in ws),
               hit_ratio="%.3f" % (hits / gets if gets else 0), get_rps="%.0f" % (gets / sec),
               ops_rps="%.0f" % ((gets + sets) / sec),
               p50_ms="%.3f" % statistics.median(f(r["p50_ms"]) for r in ws),
               p99_ms="%.3f" % statistics.median(f(r["p99_ms"]) for r in ws),
               window_s="%.3f" % sec, warmup_gets=w0["warmup_gets"], warmup_s=w0["warmup_s"],
               warmup_hit_ratio=w0["warmup_hit_ratio"], client_cpu_pct="%.1f" % (100 * cli / sec),
               server_cpu_pct="%.1f" % (100 * srv / sec),
               server_us_per_op="%.3f" % (srv * 1e6 / (gets + sets) if gets + sets else -1),
               evicted=last["evicted"], used_memory=last["used_memory"], keys_held=last["keys_held"],
               load="%.2f" % statistics.mean(f(r["load"]) for r in ws), windows=len(ws))
    print(" ".join("%s=%s" % kv for kv in out.items()))
PYEOF
fi
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
REPORT="$W/report.md"
# The binary, not the tree, is what was measured: its build time and hash,
# and the checkout's HEAD at report time for reference.
HOTKV_REV="binary of $(stat -c %y "$HOTKV" 2>/dev/null | cut -d. -f1), sha1 $(sha1sum "$HOTKV" 2>/dev/null | cut -c1-12); HEAD now $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo "+dirty")"
{
    echo "# Issue 7 cache benchmark: Zipf GET-miss-then-SET under maxmemory ($(date +%F))"
    echo
    echo "Command: \`$CMDLINE\`  "
    echo "HotKV: \`$HOTKV ${HOTKV_BASE[*]} --save \"\" --appendonly no\` ($HOTKV_REV); redis: \`$($REDIS --version | cut -d' ' -f1-3) --save \"\" --appendonly no\`  "
    echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load $LOAD0 at start, $LOAD1 at end; server on core $SERVER_CPU, cachebench on core $CLIENT_CPU.  "
    echo "Workload: $CLIENTS connections, pipeline $PIPELINE, Zipf s = $ZIPF over $N keys (20-byte names), GET, then SET of a $VSIZE-byte value on a miss; warm-up $WARM_DESC, then $T s measured$( [ "$INTERLEAVE" != 0 ] && echo " per server in interleaved turns of $INTERLEAVE s (both servers alive, one loaded at a time)" || echo " (one server alive at a time)"); seed $SEED; $R run(s), median.  "
    echo "maxmemory: $WS_NOTE."
    echo
} > "$REPORT"
$PY - "$W/results.txt" "$R" "$W/windows.txt" >> "$REPORT" <<'EOF'
import statistics, sys
rows = []
for line in open(sys.argv[1]):
    d = dict(kv.split("=", 1) for kv in line.split())
    rows.append(d)
R = int(sys.argv[2])
def f(x):
    try:
        return float(x)
    except Exception:
        return float("nan")
def med(pol, srv, key):
    v = [f(r[key]) for r in rows if r["policy"] == pol and r["server"] == srv]
    v = [x for x in v if x == x]
    return statistics.median(v) if v else float("nan")
def nruns(pol, srv):
    return sum(1 for r in rows if r["policy"] == pol and r["server"] == srv)
pols = list(dict.fromkeys(r["policy"] for r in rows))
srvs = list(dict.fromkeys(r["server"] for r in rows))
name = {"hotkv": "HotKV", "redis": "redis-server"}
print("## Results (median of %d run%s)\n" % (R, "s" if R != 1 else ""))
print("| policy | server | hit ratio | GET/s | ops/s | GET p50 ms | GET p99 ms | server us/op | keys held | HotKV/redis |")
print("|---|---|---|---|---|---|---|---|---|---|")
verdicts = []
for pol in pols:
    for s in srvs:
        if not nruns(pol, s):
            continue
        extra = ""
        if s == "hotkv" and nruns(pol, "redis"):
            hr_h, hr_r = med(pol, "hotkv", "hit_ratio"), med(pol, "redis", "hit_ratio")
            g_h, g_r = med(pol, "hotkv", "get_rps"), med(pol, "redis", "get_rps")
            o_h, o_r = med(pol, "hotkv", "ops_rps"), med(pol, "redis", "ops_rps")
            u_h, u_r = med(pol, "hotkv", "server_us_per_op"), med(pol, "redis", "server_us_per_op")
            extra = "GET/s %.2fx, ops/s %.2fx, hit ratio %+.3f, server CPU/op %.2fx" % (
                g_h / g_r, o_h / o_r, hr_h - hr_r, u_h / u_r)
            verdicts.append((pol, hr_h, hr_r, g_h / g_r, u_r / u_h))
        elif s == "redis":
            extra = "(baseline)"
        print("| %s | %s | %.3f | %.0f | %.0f | %.3f | %.3f | %.2f | %.0f | %s |" % (
            pol, name.get(s, s), med(pol, s, "hit_ratio"), med(pol, s, "get_rps"),
            med(pol, s, "ops_rps"), med(pol, s, "p50_ms"), med(pol, s, "p99_ms"),
            med(pol, s, "server_us_per_op"), med(pol, s, "keys_held"), extra))
print()
if verdicts:
    print("## Targets\n")
    print("| policy | hit ratio HotKV >= redis | GET/s HotKV/redis >= 1.3 | (server commands per CPU-second, HotKV/redis) |")
    print("|---|---|---|---|")
    for pol, hh, hr, g, eff in verdicts:
        print("| %s | %s (%.3f vs %.3f) | %s (%.2fx) | %.2fx |" % (
            pol, "yes" if round(hh, 3) >= round(hr, 3) else "**no**", hh, hr,
            "yes" if g >= 1.3 else "**no**", g, eff))
    print()
wrows = []
try:
    wrows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[3]) if l.strip()]
except Exception:
    pass
wrows = [w for w in wrows if w.get("window", "0") != "0"]
if wrows:
    print("## Interleaved turns: GET/s ratio HotKV/redis per round\n")
    print("Each round pairs a HotKV turn with the redis-server turn next to it in time.\n")
    print("| policy | rounds | median ratio | min | max | server CPU/op redis/HotKV, median |")
    print("|---|---|---|---|---|---|")
    for pol in pols:
        rat, eff = [], []
        for run in sorted(set(w["run"] for w in wrows)):
            by = {}
            for w in wrows:
                if w["policy"] == pol and w["run"] == run:
                    by[(w["server"], w["window"])] = w
            for (srv, k), w in by.items():
                if srv == "hotkv" and ("redis", k) in by:
                    r = by[("redis", k)]
                    if f(r["get_rps"]) > 0:
                        rat.append(f(w["get_rps"]) / f(r["get_rps"]))
                    if f(w["server_us_per_op"]) > 0:
                        eff.append(f(r["server_us_per_op"]) / f(w["server_us_per_op"]))
        if rat:
            print("| %s | %d | %.2fx | %.2fx | %.2fx | %s |" % (pol, len(rat), statistics.median(rat), min(rat), max(rat),
                  "%.2fx" % statistics.median(eff) if eff else "n/a"))
    print()
print("## Every run\n")
print("| policy | server | run | hit ratio | GET/s | ops/s | GET p99 ms | errors | evicted | used_memory MiB | keys held | warm-up GETs (s, hit ratio) | server CPU % (us/op) | generator CPU % | load |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in sorted(rows, key=lambda r: (pols.index(r["policy"]), srvs.index(r["server"]), int(r["run"]))):
    sat = " (saturated)" if f(r["client_cpu_pct"]) > 85 else ""
    print("| %s | %s | %s | %s | %.0f | %.0f | %s | %s | %s | %.1f | %s | %s (%s s, %s) | %s (%s) | %s%s | %s |" % (
        r["policy"], name.get(r["server"], r["server"]), r["run"], r["hit_ratio"], f(r["get_rps"]),
        f(r["ops_rps"]), r["p99_ms"], r["errors"], r["evicted"], f(r["used_memory"]) / 1048576,
        r["keys_held"], r["warmup_gets"], r["warmup_s"], r["warmup_hit_ratio"],
        r["server_cpu_pct"], r["server_us_per_op"], r["client_cpu_pct"], sat, r.get("load", "")))
print()
print("Hit ratio = GET hits / GETs in the measured window; GET/s counts GET replies, ops/s GET + SET replies;")
print("latency is GET reply time - send time at the generator.  keys held, evicted_keys and used_memory")
print("are read from the server right after the window.  The throughput target is judged on GET/s")
print("(requests the cache answers); ops/s also counts the SETs that refill misses.  server us/op is the")
print("server process's CPU time (all threads, /proc/PID/stat) over the window divided by the commands")
print("answered in it: less sensitive than ops/s to other load on the machine and to a saturated")
print("generator (generator CPU above 85% of its core is marked saturated).  load: the machine's")
print("1-minute load average when the run started (other work on the machine competes for both cores).")
EOF
cat "$REPORT"
if [ -n "$OUT_FILE" ]; then
    mkdir -p "$(dirname "$OUT_FILE")"
    cp "$REPORT" "$OUT_FILE"
    log "report written to $OUT_FILE"
fi
