#!/usr/bin/env bash
# bench/issue2.sh - HotKV vs redis-server, side by side, in one run (issue #2).
#
# What it measures (for each server, and the ratio HotKV/redis):
#   1. Throughput: requests/s from redis-benchmark for SET, GET, INCR,
#      MSET (10 keys), MGET (10 keys, custom command) and PING (PING_MBULK),
#      at pipeline 1 and 16; 50 connections, 256-byte values, key space of
#      KEYS (1,000,000) keys, preloaded so that GET/MGET hit. Median of R runs.
#      Higher is better.
#   2. CPU cost: user-space instructions (Ir) per request for GET and SET at
#      pipeline 16, counted with valgrind --tool=callgrind. We count
#      instructions because hardware counters (perf) are not available in
#      this environment, and because an instruction count is deterministic
#      where wall-clock numbers on a shared 2-core box are noisy. Startup is
#      excluded: after preload and a warm-up run the counters are zeroed with
#      `callgrind_control -z`, the measured run is driven, and
#      `callgrind_control -d` dumps; Ir = the dump's summary. It includes all
#      server threads and the server's timers during the run. Lower is better.
#   3. Memory: RSS (VmRSS) growth per key when KEYS keys (key:%012d, as
#      redis-benchmark -r generates them) with 256-byte values are loaded into
#      a fresh server with SET; overhead = bytes/key - (avg key length + 256).
#      Lower is better.
#
# Method: only one server is alive at a time, each started fresh on a free
# port with persistence off. Every server is pinned to core 0 and every load
# generator (redis-benchmark, the python loader) to core 1 (taskset), so the
# client never steals the server's CPU and both servers get the same single
# core. With R>1 the server order alternates per round to spread drift.
#
# Usage: bench/issue2.sh [-o [FILE]] [-h]
#   -o [FILE]   also write the report to FILE
#               (default docs/benchmarks/issue2-YYYY-MM-DD.md)
# Environment:
#   HOTKV_BIN   HotKV server binary          (default build/hotkv-server)
#   HOTKV_ARGS  extra HotKV args             (default: --threads 1;
#               redis args when HOTKV_BIN is a redis-server, for smoke tests)
#   REDIS_BIN   redis-server binary          (default redis-server)
#   N           requests per 1-key test at pipeline 16 (default 1000000);
#               pipeline 1 runs N/4, the 10-key MSET/MGET run N/10 (P16), N/40 (P1)
#   R           rounds per throughput/memory test, median reported (default 1)
#   KEYS        key space / keys loaded      (default 1000000)
#   CG_N        requests per callgrind run   (default 200000)
#   CG_KEYS     keys preloaded for callgrind (default 100000)
#   QUICK=1     smoke run: N=100000 KEYS=200000 CG_N=20000 CG_KEYS=20000
#   PARTS       subset of "throughput cpu memory" (default all; memory always
#               comes with throughput because it is the preload)
#   OUT         same as -o FILE (OUT=1: default file name)
#   SERVER_CPU / CLIENT_CPU   cores to pin to (default 0 / 1)
#   KEEP=1      keep the scratch directory (logs, callgrind dumps)
set -uo pipefail

START_TS=$(date +%s)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

die() { echo "issue2.sh: error: $*" >&2; exit 1; }
log() { echo "[issue2 $(date +%H:%M:%S)] $*" >&2; }

OUT_FILE=""
case "${OUT:-}" in
    "") ;;
    1|yes|true) OUT_FILE="docs/benchmarks/issue2-$(date +%F).md" ;;
    *) OUT_FILE="$OUT" ;;
esac
while [ $# -gt 0 ]; do
    case "$1" in
        -o) if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then OUT_FILE="$2"; shift
            else OUT_FILE="docs/benchmarks/issue2-$(date +%F).md"; fi ;;
        -o*) OUT_FILE="${1#-o}" ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try -h)" ;;
    esac
    shift
done

# ---------------------------------------------------------------- settings
if [ "${QUICK:-0}" = 1 ]; then
    : "${N:=100000}" "${KEYS:=200000}" "${CG_N:=20000}" "${CG_KEYS:=20000}"
fi
N=${N:-1000000}; R=${R:-1}; KEYS=${KEYS:-1000000}
CG_N=${CG_N:-200000}; CG_KEYS=${CG_KEYS:-100000}
PARTS=${PARTS:-throughput cpu memory}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
CONNS=50; DSIZE=256; PIPELINES="1 16"
HOTKV_BIN=${HOTKV_BIN:-build/hotkv-server}
REDIS_BIN=${REDIS_BIN:-redis-server}
RB=${REDIS_BENCHMARK:-redis-benchmark}
RCLI=${REDIS_CLI:-redis-cli}
PY=/usr/bin/python3
LOADER="$ROOT/bench/memkey.py"
BENCH_TIMEOUT=${BENCH_TIMEOUT:-600}   # seconds per redis-benchmark run

for v in N R KEYS CG_N CG_KEYS; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
CG_N=$(( (CG_N + 15) / 16 * 16 ))   # redis-benchmark -P 16 sends whole batches
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
want throughput || want memory || want cpu || die "PARTS selects nothing: '$PARTS'"
if want throughput && ! want memory; then PARTS="$PARTS memory"; fi

# ---------------------------------------------------------------- binaries
resolve() {  # path or PATH name -> absolute path, or empty
    local b=$1
    if [[ "$b" == */* ]]; then [ -x "$b" ] && [ -f "$b" ] && echo "$(cd "$(dirname "$b")" && pwd)/$(basename "$b")"
    else command -v "$b" 2>/dev/null; fi
}
HOTKV=$(resolve "$HOTKV_BIN") || true
[ -n "$HOTKV" ] || die "HotKV binary not found or not executable: '$HOTKV_BIN' (build it, or set HOTKV_BIN)"
REDIS=$(resolve "$REDIS_BIN") || true
[ -n "$REDIS" ] || die "redis-server not found: '$REDIS_BIN' (set REDIS_BIN)"
for t in "$RB" "$RCLI" taskset timeout "$PY"; do
    command -v "$t" >/dev/null 2>&1 || die "required tool not found: $t"
done
if want cpu; then
    for t in valgrind callgrind_control; do
        command -v "$t" >/dev/null 2>&1 || die "required tool not found: $t (needed for PARTS=cpu)"
    done
fi
[ -f "$LOADER" ] || die "helper missing: $LOADER"
NCPU=$(nproc)
if [ "$NCPU" -lt 2 ]; then
    log "WARNING: only $NCPU CPU(s); server and client will share core $SERVER_CPU"
    CLIENT_CPU=$SERVER_CPU
fi

REDIS_ARGS=(--save "" --appendonly no)
SMOKE=0
if [ "$(readlink -f "$HOTKV")" = "$(readlink -f "$REDIS")" ] || [[ "$(basename "$HOTKV")" == redis-server* ]]; then
    SMOKE=1
fi
if [ -n "${HOTKV_ARGS+x}" ]; then
    eval "HOTKV_EXTRA=($HOTKV_ARGS)"
elif [ $SMOKE = 1 ]; then
    HOTKV_EXTRA=("${REDIS_ARGS[@]}")
else
    HOTKV_EXTRA=(--threads 1)
fi

W=$(mktemp -d /tmp/hotkv-issue2.XXXXXX) || die "mktemp failed"
mkdir -p "$W/res" "$W/run"

# ---------------------------------------------------------------- servers
. "$ROOT/bench/lib.sh"

alive_or_die() {  # NAME
    kill -0 "$SRV_PID" 2>/dev/null && return 0
    tail -n 20 "$SRV_LOG" >&2
    die "$1 died (log above: $SRV_LOG)"
}

client() { taskset -c "$CLIENT_CPU" "$@"; }
load_keys() {  # PORT NKEYS -> prints loader output
    client timeout "$BENCH_TIMEOUT" "$PY" "$LOADER" "$1" "$2" "$DSIZE"
}

# ---------------------------------------------------------------- tests
MGET_ARGS=(MGET); for _ in $(seq 10); do MGET_ARGS+=("key:__rand_int__"); done
TESTS="SET GET INCR MSET MGET PING"
RUN_ORDER="GET MGET PING SET INCR MSET"   # reads first, on the freshly loaded data
test_args() {  # TEST -> redis-benchmark selector
    case "$1" in
        SET) echo "-t set" ;; GET) echo "-t get" ;; INCR) echo "-t incr" ;;
        MSET) echo "-t mset" ;; PING) echo "-t ping_mbulk" ;; MGET) echo "MGET" ;;
    esac
}
test_n() {  # TEST PIPELINE -> request count
    local n=$N
    case "$1" in MSET|MGET) n=$((n / 10)) ;; esac
    [ "$2" = 1 ] && n=$((n / 4))
    [ $n -lt 1000 ] && n=1000
    echo $n
}
test_label() {
    case "$1" in MSET) echo "MSET (10 keys)" ;; MGET) echo "MGET (10 keys)" ;;
        PING) echo "PING (PING_MBULK)" ;; *) echo "$1" ;; esac
}

# bench PORT TEST PIPELINE N KEYSPACE -> prints requests/s (empty on failure)
bench() {
    local port=$1 t=$2 p=$3 n=$4 ks=$5 out sel
    local common=(-h 127.0.0.1 -p "$port" -c "$CONNS" -d "$DSIZE" -r "$ks" -P "$p" -n "$n" --csv)
    if [ "$t" = MGET ]; then
        out=$(client timeout "$BENCH_TIMEOUT" "$RB" "${common[@]}" "${MGET_ARGS[@]}" 2>>"$W/benchmark.err")
    else
        sel=$(test_args "$t")
        # shellcheck disable=SC2086
        out=$(client timeout "$BENCH_TIMEOUT" "$RB" "${common[@]}" $sel 2>>"$W/benchmark.err")
    fi
    local rc=$?
    [ $rc -eq 0 ] || { log "redis-benchmark $t -P $p failed (rc=$rc)"; return 0; }
    printf '%s\n' "$out" | awk -F'","' '/^"/ && $1 != "\"test" && NF > 1 {v = $2} END {if (v != "") print v}'
}

# sanity PORT -> prints problems (empty if all commands answer as expected)
sanity() {
    local port=$1 c=("$RCLI" -h 127.0.0.1 -p "$1") v
    v=$(printf 'x%.0s' $(seq $DSIZE))
    [ "$("${c[@]}" PING 2>&1)" = PONG ] || echo -n "PING "
    [ "$("${c[@]}" SET issue2:check "$v" 2>&1)" = OK ] || echo -n "SET "
    [ "$("${c[@]}" GET issue2:check 2>&1)" = "$v" ] || echo -n "GET "
    "${c[@]}" DEL issue2:counter >/dev/null 2>&1
    [ "$("${c[@]}" INCR issue2:counter 2>&1)" = 1 ] || echo -n "INCR "
    [ "$("${c[@]}" MSET issue2:a 1 issue2:b 2 2>&1)" = OK ] || echo -n "MSET "
    [ "$("${c[@]}" MGET issue2:a issue2:b issue2:none 2>&1 | tr '\n' ,)" = "1,2,," ] || echo -n "MGET "
    [ "$("${c[@]}" GET key:000000000000 2>&1)" = "$v" ] || echo -n "GET(preloaded key) "
    "${c[@]}" DEL issue2:check issue2:counter issue2:a issue2:b >/dev/null 2>&1
}

ratio() {  # A B -> A/B
    awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b}'
}
fmt_int() { awk -v a="$1" 'BEGIN {if (a == "") print "n/a"; else printf "%.0f\n", a}'; }
record() { echo "$3" >>"$W/res/$1.$2"; }   # SERVER KEY VALUE
result() { [ -f "$W/res/$1.$2" ] && grep -v '^$' "$W/res/$1.$2" | median; }

# ---------------------------------------------------------------- round: memory + throughput
round() {  # SERVER ROUND
    local s=$1 r=$2 before after loadout dbsize p t n v probs
    log "$s round $r: starting fresh server"
    start_server "$s" "r$r"
    local pid=$SRV_PID port=$SRV_PORT
    sleep 0.5
    before=$(rss_kb "$pid")
    log "$s round $r: loading $KEYS keys (RSS before: ${before} kB)"
    loadout=$(load_keys "$port" "$KEYS") || { alive_or_die "$s"; die "loader failed against $s: $loadout"; }
    sleep 1
    alive_or_die "$s"
    after=$(rss_kb "$pid")
    dbsize=$("$RCLI" -h 127.0.0.1 -p "$port" DBSIZE 2>/dev/null)
    record "$s" rss_before "$before"; record "$s" rss_after "$after"
    record "$s" dbsize "$dbsize"
    record "$s" keylen "$(sed -n 's/.*avg_key_len=\([0-9.]*\).*/\1/p' <<<"$loadout")"
    log "$s round $r: RSS after: ${after} kB, DBSIZE $dbsize"
    probs=$(sanity "$port")
    [ -n "$probs" ] && { log "$s: unexpected replies for: $probs"; echo "$s: $probs" >>"$W/res/sanity"; }
    if want throughput; then
        for p in $PIPELINES; do
            for t in $RUN_ORDER; do
                n=$(test_n "$t" "$p")
                v=$(bench "$port" "$t" "$p" "$n" "$KEYS")
                alive_or_die "$s"
                log "$s round $r: $t -P $p -n $n: ${v:-FAILED} req/s"
                record "$s" "tput.$t.$p" "$v"
            done
        done
    fi
    stop_server "$pid"
}

# ---------------------------------------------------------------- callgrind
cg_server() {  # SERVER
    local s=$1 out="$W/cg-$1.out" dumps=0 t v warm f ir
    log "$s: starting under callgrind (slow)"
    start_server "$s" cg valgrind --tool=callgrind --callgrind-out-file="$out"
    local pid=$SRV_PID port=$SRV_PORT
    log "$s: preloading $CG_KEYS keys under callgrind"
    load_keys "$port" "$CG_KEYS" >/dev/null || { alive_or_die "$s"; die "preload failed under callgrind ($s)"; }
    for t in GET SET; do
        warm=$(( (CG_N / 10 + 15) / 16 * 16 ))
        bench "$port" "$t" 16 "$warm" "$CG_KEYS" >/dev/null
        alive_or_die "$s"
        callgrind_control -z "$pid" >"$W/cgctl.log" 2>&1 || { cat "$W/cgctl.log" >&2; die "callgrind_control -z failed for $s"; }
        v=$(bench "$port" "$t" 16 "$CG_N" "$CG_KEYS")
        alive_or_die "$s"
        [ -n "$v" ] || die "callgrind $t run against $s failed"
        callgrind_control -d "$pid" >"$W/cgctl.log" 2>&1 || { cat "$W/cgctl.log" >&2; die "callgrind_control -d failed for $s"; }
        dumps=$((dumps + 1))
        f="$out.$dumps"
        for _ in $(seq 100); do grep -qs '^totals:' "$f" && break; sleep 0.1; done
        ir=$(awk '/^summary:/ {print $2; exit}' "$f")
        [ -n "$ir" ] || die "no callgrind summary in $f"
        echo "$ir" >"$W/res/$s.cg.$t"
        log "$s: $t x $CG_N under callgrind: $ir Ir, $(awk -v a="$ir" -v n="$CG_N" 'BEGIN {printf "%.0f", a / n}') Ir/request"
    done
    stop_server "$pid"
}

# ---------------------------------------------------------------- run
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "HotKV: $HOTKV$(printf ' %q' "${HOTKV_EXTRA[@]}")"
log "redis: $REDIS$(printf ' %q' "${REDIS_ARGS[@]}")"
log "N=$N R=$R KEYS=$KEYS CG_N=$CG_N CG_KEYS=$CG_KEYS PARTS='$PARTS' scratch=$W"
[ $SMOKE = 1 ] && log "NOTE: HOTKV_BIN is redis-server: smoke run, expect ratios near 1.0"

if want memory; then
    for ((r = 1; r <= R; r++)); do
        if ((r % 2)); then order="hotkv redis"; else order="redis hotkv"; fi
        for s in $order; do round "$s" "$r"; done
    done
fi
if want cpu; then
    for s in hotkv redis; do cg_server "$s"; done
fi
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(( $(date +%s) - START_TS ))

# ---------------------------------------------------------------- report
REPORT="$W/report.md"
{
    echo "# HotKV vs redis-server - issue #2 benchmark ($(date '+%F %H:%M'))"
    echo
    [ $SMOKE = 1 ] && { echo "**Smoke run: HOTKV_BIN is redis-server, so both columns are redis (ratios should be ~1.0).**"; echo; }
    if hk_rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
        [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] || hk_rev="$hk_rev + local changes"
    else
        hk_rev="no commit yet"
    fi
    echo "- HotKV: \`$HOTKV_BIN$(printf ' %q' "${HOTKV_EXTRA[@]}")\` (repo: $hk_rev)"
    echo "- redis: \`$REDIS_BIN$(printf ' %q' "${REDIS_ARGS[@]}")\` ($("$REDIS" --version 2>/dev/null | head -n1))"
    echo "- host: $NCPU CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(uname -sr); servers on core $SERVER_CPU, load generator on core $CLIENT_CPU; one server alive at a time"
    echo "- load average at start / end: $LOAD_START / $LOAD_END (other load on the box skews throughput, not Ir)"
    echo "- settings: N=$N R=$R KEYS=$KEYS CG_N=$CG_N CG_KEYS=$CG_KEYS${QUICK:+ QUICK=$QUICK}; runtime ${ELAPSED}s"
    if awk -v l="${LOAD_START%% *}" 'BEGIN {exit !(l > 1.0)}'; then
        echo "- **WARNING: the box was busy before the run started (1-min load ${LOAD_START%% *} on $NCPU CPUs): throughput numbers and ratios are unreliable; rerun on an idle machine and/or with R=3. Ir/request and memory are not affected.**"
    fi
    if [ -f "$W/res/sanity" ]; then
        echo "- **unexpected replies in the command check:** $(tr '\n' ';' <"$W/res/sanity")"
    fi
    echo
    if want throughput; then
        echo "## 1. Throughput (requests/s, median of $R; higher is better)"
        echo
        echo "redis-benchmark -c $CONNS -d $DSIZE -r $KEYS, key space preloaded with $KEYS keys (GET/MGET hit)."
        echo
        echo "| test | pipeline | requests | HotKV | redis | HotKV/redis |"
        echo "|---|---:|---:|---:|---:|---:|"
        for p in $PIPELINES; do
            for t in $TESTS; do
                a=$(result hotkv "tput.$t.$p"); b=$(result redis "tput.$t.$p")
                echo "| $(test_label "$t") | $p | $(test_n "$t" "$p") | $(fmt_int "$a") | $(fmt_int "$b") | $(ratio "$a" "$b") |"
            done
        done
        echo
    fi
    if want cpu; then
        echo "## 2. CPU instructions per request (callgrind Ir, pipeline 16; lower is better)"
        echo
        echo "valgrind --tool=callgrind; $CG_KEYS keys preloaded, warm-up run, counters zeroed, then $CG_N requests with redis-benchmark -P 16 -c $CONNS -r $CG_KEYS (GET hits, SET overwrites a 256-byte value). Counts user-space instructions of all server threads during the run."
        echo
        echo "| command | requests | HotKV Ir/req | redis Ir/req | HotKV/redis |"
        echo "|---|---:|---:|---:|---:|"
        for t in GET SET; do
            a=$(cat "$W/res/hotkv.cg.$t" 2>/dev/null); b=$(cat "$W/res/redis.cg.$t" 2>/dev/null)
            a=$(awk -v a="$a" -v n="$CG_N" 'BEGIN {if (a != "") printf "%.0f", a / n}')
            b=$(awk -v a="$b" -v n="$CG_N" 'BEGIN {if (a != "") printf "%.0f", a / n}')
            echo "| $t | $CG_N | ${a:-n/a} | ${b:-n/a} | $(ratio "$a" "$b") |"
        done
        echo
    fi
    if want memory; then
        echo "## 3. Memory per key (RSS growth, median of $R; lower is better)"
        echo
        echo "Fresh server, VmRSS before and after SETting $KEYS keys (key:%012d) with $DSIZE-byte values; overhead = bytes/key - (avg key length + $DSIZE)."
        echo
        declare -A M
        for s in hotkv redis; do
            b=$(result "$s" rss_before); a=$(result "$s" rss_after)
            kl=$(result "$s" keylen); M[$s.db]=$(result "$s" dbsize)
            M[$s.b]=$b; M[$s.a]=$a
            M[$s.bpk]=$(awk -v a="$a" -v b="$b" -v k="$KEYS" 'BEGIN {if (a != "" && b != "") printf "%.1f", (a - b) * 1024 / k}')
            M[$s.ovh]=$(awk -v x="${M[$s.bpk]}" -v kl="$kl" -v d="$DSIZE" 'BEGIN {if (x != "" && kl != "") printf "%.1f", x - kl - d}')
            M[$s.kl]=$kl
        done
        echo "| | HotKV | redis | HotKV/redis |"
        echo "|---|---:|---:|---:|"
        echo "| RSS before (kB) | ${M[hotkv.b]:-n/a} | ${M[redis.b]:-n/a} | |"
        echo "| RSS after (kB) | ${M[hotkv.a]:-n/a} | ${M[redis.a]:-n/a} | |"
        echo "| DBSIZE after load | ${M[hotkv.db]:-n/a} | ${M[redis.db]:-n/a} | |"
        echo "| bytes/key | ${M[hotkv.bpk]:-n/a} | ${M[redis.bpk]:-n/a} | $(ratio "${M[hotkv.bpk]}" "${M[redis.bpk]}") |"
        echo "| overhead bytes/key (minus ${M[redis.kl]:-16} + $DSIZE) | ${M[hotkv.ovh]:-n/a} | ${M[redis.ovh]:-n/a} | $(ratio "${M[hotkv.ovh]}" "${M[redis.ovh]}") |"
        echo
    fi
} >"$REPORT"

cat "$REPORT"
if [ -n "$OUT_FILE" ]; then
    mkdir -p "$(dirname "$OUT_FILE")" && cp "$REPORT" "$OUT_FILE" && log "report written to $OUT_FILE"
fi
log "done in ${ELAPSED}s"
