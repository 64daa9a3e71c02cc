#!/usr/bin/env bash
# bench/suite.sh - the side-by-side benchmark suite of issue #3.
#
# One command runs HotKV, Debian's redis-server and (optionally) any other
# Redis-compatible server, one at a time, each pinned to the same core with
# persistence off, drives them with build/hotkv-benchmark pinned to another
# core, and writes a dated results directory (docs/benchmarks/suite-YYYYMMDD/)
# with results.md, results.json, PNG plots, the exact command lines, every
# server's INFO server and CONFIG GET * output, and the raw JSON of every run.
#
# Sections (see docs/benchmarks/README.md):
#   1. throughput: the twelve commands of ../shared/BENCHMARKS.md (SET GET
#      MGET SETNX APPEND INCR LPUSH RPUSH SADD HSET MSET PING, hotkv-benchmark's
#      named workloads) at pipeline 1 and 16, closed loop, 50 clients, 256-byte
#      values, 1,000,000-key space preloaded, median of TP_RUNS runs, ratio
#      against redis-server, generator CPU and saturation (>85%) flags;
#   2. fixed-rate latency sweep (open loop): GET only and 10:1 GET:SET, 48
#      connections, pipeline 1, p50/p99/p99.9 per rate step, held/NS; for each
#      server the sweep stops after NS_STOP consecutive NS steps;
#   3. pub/sub delivery latency: 64 publishers, 100 subscribers, 100 channels
#      (each message to one subscriber), 128-byte payload, fixed rates;
#   4. memory per key: RSS growth over loading 1,000,000 keys of 256 bytes;
#   5. plots: p99 vs requested rate per workload, throughput-ratio bars.
# Commands a server does not implement (HotKV: LPUSH RPUSH SADD HSET, pub/sub,
# for now) are probed first and reported as "n/a (not implemented)".
#
# Usage: bench/suite.sh [-h]
# Environment:
#   QUICK=1        smoke run (< 2 min): 20,000 keys, 1 run of 0.5 s per
#                  throughput cell, sweep 10k,40k of 1 s x 1 run, 1 pub/sub rate
#   OUT            results directory (default docs/benchmarks/suite-YYYYMMDD;
#                  with QUICK=1: /tmp/hotkv-suite-quick-YYYYMMDD-HHMMSS)
#   SERVERS        which servers, in order (default "hotkv redis" plus every
#                  extra server below); names: hotkv, redis, or an extra name
#   HOTKV_BIN      HotKV binary (default build/hotkv-server)
#   HOTKV_ARGS     HotKV arguments (default "--threads 1")
#   REDIS_BIN      redis-server binary (default redis-server)
#   REDIS_ARGS     redis arguments (default "--save '' --appendonly no"); also
#                  used for the extra servers
#   VALKEY_BIN     path of a valkey-server: adds server "valkey"
#   EXTRA_SERVERS  more servers, "name=/path/to/binary ..." (redis-style args)
#   BENCH_BIN      load generator (default build/hotkv-benchmark)
#   SERVER_CPU / CLIENT_CPU  cores to pin server / generator to (default 0 / 1)
#   GEN_THREADS    hotkv-benchmark --threads (default 1; all on CLIENT_CPU
#                  unless CLIENT_CPU names several cores, e.g. "1-3")
#   KEYS           key space / keys preloaded (default 1000000)
#   DSIZE          value size in bytes (default 256)
#   TP_RUNS        throughput runs per cell, median reported (default 3)
#   TP_SECONDS     length of one throughput run (default 2)
#   TP_PIPELINES   pipelines of the throughput table (default "1 16")
#   TP_CLIENTS     throughput connections (default 50)
#   COMMANDS       throughput workloads (default the twelve, lower case)
#   RATES          sweep rates (default 10k,20k,40k,60k,80k,100k,150k,200k,250k,300k,400k,500k)
#   STEP_SECONDS   length of one sweep step (default 5)
#   RUNS           runs of each sweep step, averaged (default 2)
#   SWEEP_CLIENTS  sweep connections (default 48)
#   NS_STOP        stop a server's sweep after this many NS steps in a row
#                  (default 2)
#   PUBSUB_RATES   pub/sub message rates (default 10k,30k); step = STEP_SECONDS
#   PARTS          subset of "memory sweep throughput pubsub" (default all;
#                  the 1M-key preload is always done)
#   KEEP=1         keep the scratch directory (server logs)
#   NO_INSTALL=1   do not try to install python3-matplotlib (plots are then
#                  skipped when it is missing)
set -uo pipefail

START_TS=$(date +%s)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
die() { echo "suite.sh: error: $*" >&2; exit 1; }
log() { echo "[suite $(date +%H:%M:%S)] $*" >&2; }
case "${1:-}" in
    -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) die "unknown argument: $1 (try -h)" ;;
esac

# ---------------------------------------------------------------- settings
STAMP=$(date +%Y%m%d)
if [ "${QUICK:-0}" = 1 ]; then
    : "${KEYS:=20000}" "${TP_RUNS:=1}" "${TP_SECONDS:=0.5}" "${RATES:=10k,40k}"
    : "${STEP_SECONDS:=1}" "${RUNS:=1}" "${PUBSUB_RATES:=10k}"
    : "${OUT:=/tmp/hotkv-suite-quick-$(date +%Y%m%d-%H%M%S)}"
fi
KEYS=${KEYS:-1000000}; DSIZE=${DSIZE:-256}
TP_RUNS=${TP_RUNS:-3}; TP_SECONDS=${TP_SECONDS:-2}; TP_PIPELINES=${TP_PIPELINES:-1 16}
TP_CLIENTS=${TP_CLIENTS:-50}
COMMANDS=${COMMANDS:-set get mget setnx append incr lpush rpush sadd hset mset ping}
RATES=${RATES:-10k,20k,40k,60k,80k,100k,150k,200k,250k,300k,400k,500k}
STEP_SECONDS=${STEP_SECONDS:-5}; RUNS=${RUNS:-2}; SWEEP_CLIENTS=${SWEEP_CLIENTS:-48}
NS_STOP=${NS_STOP:-2}
PUBSUB_RATES=${PUBSUB_RATES:-10k,30k}
PARTS=${PARTS:-memory sweep throughput pubsub}
OUT=${OUT:-docs/benchmarks/suite-$STAMP}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}; GEN_THREADS=${GEN_THREADS:-1}
# Plots need Debian's python3-matplotlib: install it when missing and root
# (not with NO_INSTALL=1: a lent machine without a network or apt).
if [ "${NO_INSTALL:-0}" != 1 ] && command -v apt-get >/dev/null && ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null &&
    [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null 2>&1 ||
        echo "suite: could not install python3-matplotlib; plots will be skipped" >&2
fi

HOTKV_BIN=${HOTKV_BIN:-build/hotkv-server}
REDIS_BIN=${REDIS_BIN:-redis-server}
BENCH_BIN=${BENCH_BIN:-build/hotkv-benchmark}
RCLI=${REDIS_CLI:-redis-cli}
PY=/usr/bin/python3
REPORTER="$ROOT/bench/suite_report.py"

for v in KEYS DSIZE TP_RUNS RUNS SWEEP_CLIENTS TP_CLIENTS NS_STOP GEN_THREADS; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
for v in TP_SECONDS STEP_SECONDS; do
    [[ "${!v}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$v must be a number of seconds (got '${!v}')"
done
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

resolve() {  # path or PATH name -> absolute path, or empty
    local b=$1
    if [[ "$b" == */* ]]; then [ -x "$b" ] && [ -f "$b" ] && echo "$(cd "$(dirname "$b")" && pwd)/$(basename "$b")"
    else command -v "$b" 2>/dev/null; fi
}
declare -A BIN ARGS_STR
BIN[hotkv]=$(resolve "$HOTKV_BIN") || true
[ -n "${BIN[hotkv]}" ] || die "HotKV binary not found: '$HOTKV_BIN' (run make, or set HOTKV_BIN)"
BIN[redis]=$(resolve "$REDIS_BIN") || true
[ -n "${BIN[redis]}" ] || die "redis-server not found: '$REDIS_BIN' (set REDIS_BIN)"
BENCH=$(resolve "$BENCH_BIN") || true
[ -n "$BENCH" ] || die "load generator not found: '$BENCH_BIN' (run make)"
for t in "$RCLI" taskset timeout "$PY"; do
    command -v "$t" >/dev/null 2>&1 || die "required tool not found: $t"
done
[ -f "$REPORTER" ] || die "helper missing: $REPORTER"
ARGS_STR[hotkv]=${HOTKV_ARGS---threads 1}
REDIS_ARGS_STR=${REDIS_ARGS-"--save '' --appendonly no"}
ARGS_STR[redis]=$REDIS_ARGS_STR
DEFAULT_SERVERS="hotkv redis"
EXTRA=${EXTRA_SERVERS:-}
[ -n "${VALKEY_BIN:-}" ] && EXTRA="valkey=$VALKEY_BIN $EXTRA"
for e in $EXTRA; do
    n=${e%%=*}; p=${e#*=}
    [[ "$n" =~ ^[a-z][a-z0-9_-]*$ ]] && [ "$n" != "$e" ] || die "EXTRA_SERVERS entry must be name=path: '$e'"
    BIN[$n]=$(resolve "$p") || true
    [ -n "${BIN[$n]}" ] || die "$n binary not found: '$p'"
    ARGS_STR[$n]=$REDIS_ARGS_STR
    DEFAULT_SERVERS="$DEFAULT_SERVERS $n"
done
SERVERS=${SERVERS:-$DEFAULT_SERVERS}
for s in $SERVERS; do [ -n "${BIN[$s]:-}" ] || die "unknown server '$s' in SERVERS"; done

NCPU=$(nproc)
if [ "$NCPU" -lt 2 ]; then
    log "WARNING: only $NCPU CPU(s); server and generator share core $SERVER_CPU"
    CLIENT_CPU=$SERVER_CPU
fi

mkdir -p "$OUT/raw" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
CMDLOG="$OUT/commands.txt"
: >"$CMDLOG"
W=$(mktemp -d /tmp/hotkv-suite.XXXXXX) || die "mktemp failed"

# ---------------------------------------------------------------- servers
. "$ROOT/bench/lib.sh"
record_cmd() {  # SECTION ARGV... -> appends the exact command line to commands.txt
    local sec=$1; shift
    printf '[%s] %s\n' "$sec" "$(printf '%q ' "$@" | sed 's/ $//')" >>"$CMDLOG"
}

start_server() {  # NAME -> SRV_PID SRV_PORT SRV_LOG
    local name=$1 args i
    eval "args=(${ARGS_STR[$name]})"
    SRV_PORT=$(free_port) || die "could not find a free port"
    SRV_LOG="$W/$name.log"
    mkdir -p "$W/run-$name"
    local argv=(taskset -c "$SERVER_CPU" "${BIN[$name]}" --port "$SRV_PORT" --bind 127.0.0.1 "${args[@]}")
    record_cmd "server $name" "${argv[@]}"
    ( cd "$W/run-$name" && exec "${argv[@]}" ) >"$SRV_LOG" 2>&1 </dev/null &
    SRV_PID=$!
    SERVER_PIDS+=("$SRV_PID")
    for ((i = 0; i < 100; i++)); do
        if ! kill -0 "$SRV_PID" 2>/dev/null; then
            tail -n 20 "$SRV_LOG" >&2
            die "$name (${BIN[$name]}) exited during startup (log above)"
        fi
        if [ "$(timeout 2 "$RCLI" -h 127.0.0.1 -p "$SRV_PORT" PING 2>/dev/null)" = PONG ]; then
            owns_port "$SRV_PID" "$SRV_PORT" && return 0
        fi
        sleep 0.1
    done
    tail -n 20 "$SRV_LOG" >&2
    die "$name did not answer PING on port $SRV_PORT"
}
stop_server() {
    local pid=$1 i p keep=()
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { log "pid $pid ignored SIGTERM, killing"; kill -KILL "$pid" 2>/dev/null; }
    wait "$pid" 2>/dev/null
    for p in "${SERVER_PIDS[@]}"; do [ "$p" != "$pid" ] && keep+=("$p"); done
    SERVER_PIDS=("${keep[@]:-}")
}
alive() { kill -0 "$SRV_PID" 2>/dev/null; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
cli() { timeout 10 "$RCLI" -h 127.0.0.1 -p "$SRV_PORT" "$@" 2>&1; }

# bench SECTION JSONFILE TIMEOUT ARGS... -> runs hotkv-benchmark on CLIENT_CPU, rc in BENCH_RC
bench() {
    local sec=$1 json=$2 to=$3; shift 3
    local argv=(taskset -c "$CLIENT_CPU" "$BENCH" -h 127.0.0.1 -p "$SRV_PORT" --threads "$GEN_THREADS"
                --quiet --no-progress --json "$json" "$@")
    record_cmd "$sec" "${argv[@]}"
    timeout -k 5 "$to" "${argv[@]}" >"${json%.json}.txt" 2>&1
    BENCH_RC=$?
    [ $BENCH_RC -eq 0 ] || log "$sec: hotkv-benchmark exited $BENCH_RC ($(tail -n 1 "${json%.json}.txt"))"
}

# probe CMD -> prints "ok" or "n/a" (the server answers "unknown command")
probe() {
    local r
    case "$1" in
        set) r=$(cli SET suite:probe x) ;; get) r=$(cli GET suite:probe) ;;
        mget) r=$(cli MGET suite:probe suite:probe2) ;; setnx) r=$(cli SETNX suite:probe2 x) ;;
        append) r=$(cli APPEND suite:probe3 x) ;; incr) r=$(cli INCR suite:probe4) ;;
        lpush) r=$(cli LPUSH suite:probe5 x) ;; rpush) r=$(cli RPUSH suite:probe5 x) ;;
        sadd) r=$(cli SADD suite:probe6 x) ;; hset) r=$(cli HSET suite:probe7 f x) ;;
        mset) r=$(cli MSET suite:probe8 x suite:probe9 y) ;; ping) r=$(cli PING) ;;
        publish) r=$(cli PUBLISH suite:probe x) ;;
        *) r="" ;;
    esac
    if grep -qi "unknown command" <<<"$r"; then echo n/a; else echo ok; fi
}
cleanup_probe() {
    cli DEL suite:probe suite:probe2 suite:probe3 suite:probe4 suite:probe5 suite:probe6 \
        suite:probe7 suite:probe8 suite:probe9 >/dev/null
}

# ---------------------------------------------------------------- per server
sec2int() { awk -v s="$1" 'BEGIN {printf "%d", s + 0.999}'; }
TP_TO=$(( $(sec2int "$TP_SECONDS") * TP_RUNS + 60 ))
STEP_TO=$(( ($(sec2int "$STEP_SECONDS") + 12) * RUNS + 30 ))
RATE_LIST=${RATES//,/ }
PS_LIST=${PUBSUB_RATES//,/ }
log "servers: $SERVERS; out: $OUT"
log "KEYS=$KEYS DSIZE=$DSIZE TP_RUNS=$TP_RUNS TP_SECONDS=$TP_SECONDS RATES=$RATES STEP_SECONDS=$STEP_SECONDS RUNS=$RUNS PUBSUB_RATES=$PUBSUB_RATES"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
cpu_busy() {  # SECONDS -> % of all CPUs busy over that time (other load on the box)
    local a b
    a=$(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat); sleep "$1"
    b=$(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN {split(a, x, " "); split(b, y, " "); t = (y[1] - x[1]) + (y[2] - x[2]);
        printf "%.0f", (t > 0 ? 100 * (y[1] - x[1]) / t : 0)}'
}
BUSY_START=$(cpu_busy 2)
log "CPU busy before the run (other load): ${BUSY_START}%"

for s in $SERVERS; do
    D="$OUT/raw/$s"; mkdir -p "$D"
    log "$s: starting ${BIN[$s]} ${ARGS_STR[$s]}"
    start_server "$s"
    "${BIN[$s]}" --version >"$D/version.txt" 2>&1 </dev/null || true
    cli INFO server >"$OUT/info-server-$s.txt"
    cli CONFIG GET '*' >"$OUT/config-$s.txt"
    # command support
    : >"$D/support.txt"
    for c in $COMMANDS publish; do echo "$c $(probe "$c")" >>"$D/support.txt"; done
    cleanup_probe
    cli FLUSHALL >/dev/null
    supported() { awk -v c="$1" '$1 == c {print $2}' "$D/support.txt"; }
    log "$s: not implemented: $(awk '$2 == "n/a" {printf "%s ", $1}' "$D/support.txt")"

    # 4. memory + preload
    sleep 0.5
    before=$(rss_kb "$SRV_PID")
    t0=$(date +%s.%N)
    bench "preload $s" "$D/preload.json" 600 --workload ping --requests 1 --clients 50 \
        --preload --key-space "$KEYS" --data-size "$DSIZE"
    t1=$(date +%s.%N)
    alive || die "$s died during preload"
    sleep 1
    after=$(rss_kb "$SRV_PID")
    dbsize=$(cli DBSIZE)
    used=$(cli INFO memory | awk -F: '/^used_memory:/ {gsub("\r", "", $2); print $2}')
    printf '{"rss_before_kb": %s, "rss_after_kb": %s, "dbsize": "%s", "keys": %s, "value_size": %s, "key_len": 16, "used_memory": "%s", "preload_s": %s}\n' \
        "${before:-null}" "${after:-null}" "$dbsize" "$KEYS" "$DSIZE" "$used" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')" >"$D/memory.json"
    log "$s: loaded $KEYS keys; RSS $before -> $after kB; DBSIZE $dbsize"

    # 2. sweeps, on the freshly loaded data
    if want sweep; then
        for wl in get ratio; do
            if [ $wl = get ]; then wargs=(--workload get); else wargs=(--ratio 1:10); fi
            if [ "$(supported get)" = n/a ] || [ "$(supported set)" = n/a ]; then
                log "$s: sweep $wl not supported"; continue
            fi
            nsrun=0
            for r in $RATE_LIST; do
                f="$D/sweep-$wl-$r.json"
                bench "sweep $s $wl $r" "$f" "$STEP_TO" "${wargs[@]}" --clients "$SWEEP_CLIENTS" \
                    --key-space "$KEYS" --data-size "$DSIZE" --rate "$r" --test-time "$STEP_SECONDS" \
                    --runs "$RUNS" --drain-timeout 5
                alive || die "$s died during the sweep ($wl $r)"
                held=$("$PY" -c 'import json,sys
try: d=json.load(open(sys.argv[1])); s=d["summary"][0]; print("held" if s["held"] else "NS", "%.0f" % s["achieved_rps"], "p99=%s" % s.get("p99_ms"))
except Exception as e: print("NS error")' "$f")
                log "$s: sweep $wl $r: $held"
                if [ "${held%% *}" = held ]; then nsrun=0; else nsrun=$((nsrun + 1)); fi
                [ $nsrun -ge "$NS_STOP" ] && break
            done
        done
    fi

    # 1. throughput
    if want throughput; then
        for p in $TP_PIPELINES; do
            for c in $COMMANDS; do
                if [ "$(supported "$c")" = n/a ]; then
                    log "$s: $c -P $p: n/a (not implemented)"; continue
                fi
                f="$D/tput-$c-p$p.json"
                bench "throughput $s $c P$p" "$f" "$TP_TO" --workload "$c" --clients "$TP_CLIENTS" \
                    --pipeline "$p" --key-space "$KEYS" --data-size "$DSIZE" \
                    --test-time "$TP_SECONDS" --runs "$TP_RUNS"
                alive || die "$s died during throughput $c -P $p"
                log "$s: $c -P $p: $("$PY" -c 'import json,sys,statistics
try: d=json.load(open(sys.argv[1])); print("%.0f req/s (median), gen cpu %.0f%%" % (statistics.median(x["achieved_rps"] for x in d["steps"]), max(x["generator_cpu_pct"] for x in d["steps"])))
except Exception as e: print("FAILED")' "$f")"
                # keep the one-key collections from growing across cells
                case "$c" in lpush|rpush) cli DEL mylist >/dev/null ;; sadd) cli DEL myset >/dev/null ;;
                    hset) cli DEL myhash >/dev/null ;; append) cli DEL suite:none >/dev/null ;; esac
            done
        done
    fi

    # 3. pub/sub
    if want pubsub; then
        if [ "$(supported publish)" = n/a ]; then
            log "$s: pub/sub n/a (not implemented)"
        else
            for r in $PS_LIST; do
                f="$D/pubsub-$r.json"
                bench "pubsub $s $r" "$f" "$STEP_TO" --pubsub --publishers 64 --subscribers 100 \
                    --channels 100 --payload 128 --rate "$r" --test-time "$STEP_SECONDS" \
                    --runs "$RUNS" --drain-timeout 5
                alive || die "$s died during pub/sub"
            done
        fi
    fi
    stop_server "$SRV_PID"
    log "$s: done"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
BUSY_END=$(cpu_busy 2)

# ---------------------------------------------------------------- report
if hk_rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
    [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no -- src 2>/dev/null)" ] || hk_rev="$hk_rev + local changes"
else hk_rev="no commit"; fi
{
    printf '{\n'
    printf '  "date": "%s",\n' "$(date '+%F %H:%M:%S %Z')"
    printf '  "suite_command": "%s",\n' "$(echo "${SUITE_CMD:-bench/suite.sh}" | sed 's/"/\\"/g')"
    printf '  "repo_rev": "%s",\n' "$hk_rev"
    printf '  "host": "%s CPUs (%s), %s",\n' "$NCPU" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//; s/"//g')" "$(uname -sr)"
    printf '  "server_cpu": "%s", "client_cpu": "%s", "gen_threads": %s,\n' "$SERVER_CPU" "$CLIENT_CPU" "$GEN_THREADS"
    printf '  "load_start": "%s", "load_end": "%s",\n' "$LOAD_START" "$LOAD_END"
    printf '  "cpu_busy_start_pct": %s, "cpu_busy_end_pct": %s,\n' "$BUSY_START" "$BUSY_END"
    printf '  "elapsed_s": %s,\n' "$(( $(date +%s) - START_TS ))"
    printf '  "quick": %s,\n' "$([ "${QUICK:-0}" = 1 ] && echo true || echo false)"
    printf '  "settings": {"keys": %s, "dsize": %s, "tp_runs": %s, "tp_seconds": %s, "tp_pipelines": "%s", "tp_clients": %s, "commands": "%s", "rates": "%s", "step_seconds": %s, "runs": %s, "sweep_clients": %s, "ns_stop": %s, "pubsub_rates": "%s", "parts": "%s"},\n' \
        "$KEYS" "$DSIZE" "$TP_RUNS" "$TP_SECONDS" "$TP_PIPELINES" "$TP_CLIENTS" "$COMMANDS" "$RATES" "$STEP_SECONDS" "$RUNS" "$SWEEP_CLIENTS" "$NS_STOP" "$PUBSUB_RATES" "$PARTS"
    printf '  "servers": ['
    sep=""
    for s in $SERVERS; do
        printf '%s{"name": "%s", "bin": "%s", "args": "%s", "version": "%s"}' "$sep" "$s" "${BIN[$s]}" \
            "$(echo "${ARGS_STR[$s]}" | sed 's/"/\\"/g')" "$(head -n1 "$OUT/raw/$s/version.txt" | sed 's/"/\\"/g')"
        sep=", "
    done
    printf ']\n}\n'
} >"$OUT/raw/meta.json"
log "writing report"
"$PY" "$REPORTER" "$OUT" || die "report generation failed"
log "done in $(( $(date +%s) - START_TS ))s: $OUT/results.md"
