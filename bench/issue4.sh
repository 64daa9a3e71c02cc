#!/usr/bin/env bash
# bench/issue4.sh - HotKV vs redis-server, side by side, in one run (issue #4,
# collections).
#
# What it measures (for each server, and the ratio HotKV/redis):
#   1. Throughput: requests/s from redis-benchmark, 50 connections, pipeline
#      1 and 16, median of R runs (higher is better), for its built-in tests
#      LPUSH, RPUSH, LPOP, SADD, SPOP, HSET, ZADD and for ZRANGE of 100
#      members (custom command `ZRANGE zbench 0 99`, members only, no
#      WITHSCORES). The built-in tests each hit ONE key (mylist, myset,
#      myhash, myzset): LPUSH/RPUSH push DSIZE-byte values; SADD, HSET (field,
#      DSIZE-byte value) and ZADD (score and member random) add members
#      element:NNNNNNNNNNNN drawn from -r RAND, so the collection grows large.
#      Every cell runs on a fresh, empty server; before LPOP the list gets
#      requests+POP_MARGIN elements, before SPOP the set gets requests+
#      POP_MARGIN members, so every pop pops something; this is checked after
#      the run (LLEN/SCARD must be exactly POP_MARGIN). zbench holds members
#      member:0..member:99 with scores 0..99 (a small sorted set).
#   2. CPU cost: user-space instructions (Ir) per request for each of those
#      commands at pipeline 16, with valgrind --tool=callgrind (deterministic
#      where wall clock on a shared 2-core box is not). One server per kind
#      under callgrind; per command: the bench keys are deleted, the pop
#      tests' key preloaded, a warm-up run of CG_N/10 requests, counters
#      zeroed (`callgrind_control -z`), CG_N requests, dump
#      (`callgrind_control -d`); Ir = the dump's summary (all server threads
#      and timers during the run). Lower is better; target HotKV <= 0.7x redis.
#   3. Memory: used_memory (INFO memory) growth, and VmRSS growth as a second
#      column, when loading into a fresh server (pipelined, bench/issue4_load.py):
#        hashes    MEM_OBJS x HSET hash:%d f0 V .. f9 V  (V: 8-byte strings
#                  'v0000123', not integers)
#        sets      MEM_OBJS x SADD set:%d with 10 8-byte string members 's%07d'
#        intsets   MEM_OBJS x SADD set:%d with 10 integer members
#        zsets     MEM_OBJS x ZADD zset:%d with 10 members 'z%07d', scores 1..10
#        list      1 list, RPUSH biglist element:0 .. element:LIST_LEN-1
#                  (100 per command)
#      bytes per object (per element for the list) and ratio; lower is
#      better; target HotKV <= 0.8x redis.
#
# Method: only one server is alive at a time, each started fresh on a free
# port with persistence off (one per throughput cell and per memory data
# set). Every server is pinned to core 0 and every load generator
# (redis-benchmark, the python loader) to core 1 (taskset). The two servers'
# cells of one test run back to back; with R>1 their order alternates per
# round. Before measuring, each server is probed
# once: a command it answers with "unknown command" is reported as missing
# (its cells say "missing") and nothing is run for it.
#
# Usage: bench/issue4.sh [-o [FILE]] [-h]
#   -o [FILE]   also write the report to FILE
#               (default docs/benchmarks/issue4-YYYY-MM-DD.md)
# Environment:
#   HOTKV_BIN   HotKV server binary          (default build/hotkv-server)
#   HOTKV_ARGS  extra HotKV args             (default: --threads 1;
#               redis args when HOTKV_BIN is a redis-server, for smoke tests)
#   REDIS_BIN   redis-server binary          (default redis-server)
#   N           requests per test at pipeline 16 (default 200000);
#               pipeline 1 runs N/4
#   R           rounds per throughput/memory test, median reported (default 1)
#   RAND        redis-benchmark -r: member space of SADD/HSET/ZADD (default 1000000)
#   DSIZE       redis-benchmark -d: LPUSH/RPUSH/HSET value size (default 16)
#   POP_MARGIN  elements left in the list/set after the pop tests (default 1000)
#   CG_N        requests per callgrind run   (default 100000)
#   MEM_OBJS    hashes/sets/zsets loaded     (default 100000)
#   LIST_LEN    elements of the big list     (default 1000000)
#   QUICK=1     smoke run: N=20000 CG_N=5000 MEM_OBJS=20000 LIST_LEN=200000
#   PARTS       subset of "throughput cpu memory" (default all)
#   TESTS       subset of "LPUSH RPUSH LPOP SADD SPOP HSET ZADD ZRANGE"
#   MEMSETS     subset of "hashes sets intsets zsets list"
#   OUT         same as -o FILE (OUT=1: default file name)
#   SERVER_CPU / CLIENT_CPU   cores to pin to (default 0 / 1)
#   CG_TOP      functions listed per command from callgrind_annotate (default 5)
#   KEEP=1      keep the scratch directory (logs, callgrind dumps)
set -uo pipefail

START_TS=$(date +%s)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

die() { echo "issue4.sh: error: $*" >&2; exit 1; }
log() { echo "[issue4 $(date +%H:%M:%S)] $*" >&2; }

# the command line that reproduces this run (knobs set in the environment)
CMDLINE=""
for v in HOTKV_BIN HOTKV_ARGS REDIS_BIN N R RAND DSIZE POP_MARGIN CG_N MEM_OBJS LIST_LEN \
         QUICK PARTS TESTS MEMSETS SERVER_CPU CLIENT_CPU CG_TOP; do
    [ -n "${!v+x}" ] && CMDLINE+="$v=$(printf '%q' "${!v}") "
done
CMDLINE+="bench/issue4.sh"; [ $# -gt 0 ] && CMDLINE+="$(printf ' %q' "$@")"

OUT_FILE=""
case "${OUT:-}" in
    "") ;;
    1|yes|true) OUT_FILE="docs/benchmarks/issue4-$(date +%F).md" ;;
    *) OUT_FILE="$OUT" ;;
esac
while [ $# -gt 0 ]; do
    case "$1" in
        -o) if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then OUT_FILE="$2"; shift
            else OUT_FILE="docs/benchmarks/issue4-$(date +%F).md"; fi ;;
        -o*) OUT_FILE="${1#-o}" ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try -h)" ;;
    esac
    shift
done

# ---------------------------------------------------------------- settings
if [ "${QUICK:-0}" = 1 ]; then
    : "${N:=20000}" "${CG_N:=5000}" "${MEM_OBJS:=20000}" "${LIST_LEN:=200000}"
fi
N=${N:-200000}; R=${R:-1}; RAND=${RAND:-1000000}; DSIZE=${DSIZE:-16}
POP_MARGIN=${POP_MARGIN:-1000}; CG_N=${CG_N:-100000}
MEM_OBJS=${MEM_OBJS:-100000}; LIST_LEN=${LIST_LEN:-1000000}; CG_TOP=${CG_TOP:-5}
PARTS=${PARTS:-throughput cpu memory}
ALL_TESTS="LPUSH RPUSH LPOP SADD SPOP HSET ZADD ZRANGE"
TESTS=${TESTS:-$ALL_TESTS}
ALL_MEMSETS="hashes sets intsets zsets list"
MEMSETS=${MEMSETS:-$ALL_MEMSETS}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
CONNS=50; PIPELINES="1 16"; MEM_FIELDS=10
HOTKV_BIN=${HOTKV_BIN:-build/hotkv-server}
REDIS_BIN=${REDIS_BIN:-redis-server}
RB=${REDIS_BENCHMARK:-redis-benchmark}
RCLI=${REDIS_CLI:-redis-cli}
PY=/usr/bin/python3
LOADER="$ROOT/bench/issue4_load.py"
BENCH_TIMEOUT=${BENCH_TIMEOUT:-600}   # seconds per redis-benchmark / loader run

for v in N R RAND DSIZE POP_MARGIN CG_N MEM_OBJS LIST_LEN; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
[[ "$CG_TOP" =~ ^[0-9]+$ ]] || die "CG_TOP must be a number (got '$CG_TOP')"
CG_N=$(( (CG_N + 15) / 16 * 16 ))   # redis-benchmark -P 16 sends whole batches
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
want throughput || want memory || want cpu || die "PARTS selects nothing: '$PARTS'"
for t in $TESTS; do case " $ALL_TESTS " in *" $t "*) ;; *) die "unknown test in TESTS: $t (known: $ALL_TESTS)" ;; esac; done
for m in $MEMSETS; do case " $ALL_MEMSETS " in *" $m "*) ;; *) die "unknown data set in MEMSETS: $m (known: $ALL_MEMSETS)" ;; esac; done

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
    for t in valgrind callgrind_control callgrind_annotate; do
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

W=$(mktemp -d /tmp/hotkv-issue4.XXXXXX) || die "mktemp failed"
mkdir -p "$W/res" "$W/run" "$W/bin"

# ---------------------------------------------------------------- servers
. "$ROOT/bench/lib.sh"

# run a private copy of the HotKV binary, so that a rebuild of build/ during
# the run cannot change (or briefly remove) the server under test
HOTKV_BUILT=$(date -r "$HOTKV" '+%F %H:%M:%S')
HOTKV_SUM=$(sha1sum "$HOTKV" | cut -c1-12)
cp "$HOTKV" "$W/bin/$(basename "$HOTKV")" || die "could not copy $HOTKV"
HOTKV="$W/bin/$(basename "$HOTKV")"

# alive NAME WHAT -> true if the current server still runs; otherwise logs,
# notes the crash for the report and returns false (the caller moves on)
alive() {
    kill -0 "$SRV_PID" 2>/dev/null && return 0
    log "$1 DIED during $2 (last lines of $SRV_LOG:)"
    tail -n 10 "$SRV_LOG" >&2
    echo "$1 died during $2 (log: $(tail -n 3 "$SRV_LOG" | tr '\n' ' ' | cut -c1-300))" >>"$W/res/crashes"
    wait "$SRV_PID" 2>/dev/null
    return 1
}

cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }   # utime+stime, all threads
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
used_memory() { "$RCLI" -h 127.0.0.1 -p "$1" INFO memory 2>/dev/null | tr -d '\r' | awk -F: '$1 == "used_memory" {print $2}'; }
client() { taskset -c "$CLIENT_CPU" "$@"; }
cli() { local port=$1; shift; timeout 30 "$RCLI" -h 127.0.0.1 -p "$port" "$@" 2>&1; }
load() {  # PORT WHAT ARGS... -> prints loader output; status of the loader
    local port=$1 what=$2; shift 2
    client timeout "$BENCH_TIMEOUT" "$PY" "$LOADER" "$what" "$port" "$@" 2>>"$W/loader.err"
}

# ---------------------------------------------------------------- tests
test_args() {  # TEST -> redis-benchmark selector (custom command for ZRANGE)
    case "$1" in
        ZRANGE) echo "ZRANGE zbench 0 99" ;;
        *) echo "-t ${1,,}" ;;
    esac
}
test_cmds() {  # TEST -> server commands it needs (preload included)
    case "$1" in
        LPOP) echo "LPOP RPUSH" ;; SPOP) echo "SPOP SADD" ;; ZRANGE) echo "ZRANGE ZADD" ;;
        *) echo "$1" ;;
    esac
}
test_key() {  # TEST -> key it works on, and the size command for it
    case "$1" in
        LPUSH|RPUSH|LPOP) echo "mylist LLEN" ;; SADD|SPOP) echo "myset SCARD" ;;
        HSET) echo "myhash HLEN" ;; ZADD) echo "myzset ZCARD" ;; ZRANGE) echo "zbench ZCARD" ;;
    esac
}
test_label() {
    case "$1" in
        LPUSH|RPUSH) echo "$1 ($DSIZE-byte values)" ;;
        HSET) echo "HSET (random field, $DSIZE-byte value)" ;;
        SADD|ZADD) echo "$1 (random member)" ;;
        ZRANGE) echo "ZRANGE zbench 0 99 (100 members)" ;;
        *) echo "$1" ;;
    esac
}
test_n() {  # TEST PIPELINE -> request count
    local n=$N
    [ "$2" = 1 ] && n=$((n / 4))
    [ "$n" -lt 1000 ] && n=1000
    echo $(( (n + 15) / 16 * 16 ))
}
mem_cmds() { case "$1" in hashes) echo HSET ;; sets|intsets) echo SADD ;; zsets) echo ZADD ;; list) echo RPUSH ;; esac; }
mem_label() {
    case "$1" in
        hashes) echo "hashes, $MEM_FIELDS fields (f0..f9 -> 8-byte string)" ;;
        sets) echo "sets, $MEM_FIELDS 8-byte string members" ;;
        intsets) echo "sets, $MEM_FIELDS integer members" ;;
        zsets) echo "sorted sets, $MEM_FIELDS 8-byte members" ;;
        list) echo "1 list of $LIST_LEN elements (element:%d), per element" ;;
    esac
}
mem_objs() { [ "$1" = list ] && echo "$LIST_LEN" || echo "$MEM_OBJS"; }
mem_sample() { case "$1" in hashes) echo hash:0 ;; sets|intsets) echo set:0 ;; zsets) echo zset:0 ;; list) echo biglist ;; esac; }
mem_load() {  # PORT SET -> loader output
    case "$2" in
        hashes) load "$1" hashes "$MEM_OBJS" "$MEM_FIELDS" 8 ;;
        sets) load "$1" sets "$MEM_OBJS" "$MEM_FIELDS" str ;;
        intsets) load "$1" sets "$MEM_OBJS" "$MEM_FIELDS" int ;;
        zsets) load "$1" zsets "$MEM_OBJS" "$MEM_FIELDS" ;;
        list) load "$1" list biglist "$LIST_LEN" 100 ;;
    esac
}

# the commands each server is missing ("unknown command"), from probe()
missing() {  # SERVER CMD -> true if missing
    grep -qx "$2" "$W/res/$1.missing" 2>/dev/null
}
missing_any() {  # SERVER CMDS... -> prints the missing ones
    local s=$1 c out=""; shift
    for c in "$@"; do missing "$s" "$c" && out+="$c "; done
    echo -n "${out% }"
}

# probe SERVER: fresh server; each command once on scratch keys; a reply of
# "unknown command" marks it missing, any other unexpected reply is noted
probe() {
    local s=$1 port got spec cmd want
    start_server "$s" probe
    port=$SRV_PORT
    : >"$W/res/$s.missing"
    # "COMMAND ARGS|expected reply (redis-cli raw output, lines joined by ,)"
    local specs=(
        "LPUSH issue4:l a b|2"  "RPUSH issue4:l c|3"  "LPOP issue4:l|b"  "LLEN issue4:l|2"
        "SADD issue4:s a b c|3"  "SPOP issue4:s|*"  "SCARD issue4:s|2"
        "HSET issue4:h f1 v1 f2 v2|2"  "HLEN issue4:h|2"
        "ZADD issue4:z 1 a 2 b 3 c|3"  "ZRANGE issue4:z 0 -1 WITHSCORES|a,1,b,2,c,3"
        "ZRANGE issue4:z 0 1|a,b"  "ZCARD issue4:z|3"
    )
    for spec in "${specs[@]}"; do
        cmd=${spec%%|*}; want=${spec#*|}
        # shellcheck disable=SC2086
        got=$(cli "$port" $cmd | paste -sd, -)
        if [[ "$got" == *"nknown command"* ]]; then
            grep -qx "${cmd%% *}" "$W/res/$s.missing" || echo "${cmd%% *}" >>"$W/res/$s.missing"
        elif [ "$want" != "*" ] && [ "$got" != "$want" ]; then
            echo "$s: \`$cmd\` -> '$got' (expected '$want')" >>"$W/res/sanity"
        fi
        alive "$s" "probe ($cmd)" || { start_server "$s" probe; port=$SRV_PORT; }
    done
    stop_server "$SRV_PID"
    if [ -s "$W/res/$s.missing" ]; then
        log "$s: missing commands: $(paste -sd' ' "$W/res/$s.missing")"
    else
        log "$s: all commands present"
    fi
}

# bench PORT TEST PIPELINE N -> prints requests/s (empty on failure)
bench() {
    local port=$1 t=$2 p=$3 n=$4 out sel
    sel=$(test_args "$t")
    # shellcheck disable=SC2086
    out=$(client timeout "$BENCH_TIMEOUT" "$RB" -h 127.0.0.1 -p "$port" -c "$CONNS" -d "$DSIZE" \
          -r "$RAND" -P "$p" -n "$n" --csv $sel 2>>"$W/benchmark.err")
    local rc=$?
    [ $rc -eq 0 ] || { log "redis-benchmark $t -P $p failed (rc=$rc)"; return 0; }
    printf '%s\n' "$out" | awk -F'","' '/^"/ && $1 != "\"test" && NF > 1 {v = $2} END {if (v != "") print v}'
}

# preload PORT TEST N -> sets up the key TEST works on for N requests
preload() {
    case "$2" in
        LPOP) load "$1" fill-list mylist $(( $3 + POP_MARGIN )) "$DSIZE" >/dev/null ;;
        SPOP) load "$1" fill-set myset $(( $3 + POP_MARGIN )) >/dev/null ;;
        ZRANGE) load "$1" fill-zset zbench 100 >/dev/null ;;
        *) return 0 ;;
    esac
}
key_size() {  # PORT TEST -> size of the test's key after the run
    local k
    read -r -a k <<<"$(test_key "$2")"
    cli "$1" "${k[1]}" "${k[0]}"
}

ratio() {  # A B -> A/B
    awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || a !~ /^[0-9.]+$/ || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b}'
}
fmt_int() { awk -v a="$1" 'BEGIN {if (a == "") print "n/a"; else if (a !~ /^[0-9.e+-]+$/) print a; else printf "%.0f\n", a}'; }
record() { echo "$3" >>"$W/res/$1.$2"; }   # SERVER KEY VALUE
result() {  # SERVER KEY -> median, or the note recorded (missing, failed, crashed)
    local f="$W/res/$1.$2"
    [ -f "$f" ] || return 0
    if grep -Evq '^-?[0-9.]+$' "$f"; then grep -Ev '^-?[0-9.]+$' "$f" | tail -n1; else median <"$f"; fi
}
last() { [ -f "$W/res/$1.$2" ] && tail -n1 "$W/res/$1.$2"; }

# ---------------------------------------------------------------- throughput
cell() {  # SERVER ROUND TEST PIPELINE
    local s=$1 r=$2 t=$3 p=$4 n miss v sz c0 c1 us
    n=$(test_n "$t" "$p")
    # shellcheck disable=SC2046
    miss=$(missing_any "$s" $(test_cmds "$t"))
    if [ -n "$miss" ]; then record "$s" "tput.$t.$p" "missing ($miss)"; return; fi
    start_server "$s" "r$r-$t-p$p"
    if ! preload "$SRV_PORT" "$t" "$n"; then
        alive "$s" "$t preload" && stop_server "$SRV_PID"
        log "$s round $r: $t -P $p: preload failed ($(tail -n1 "$W/loader.err"))"
        record "$s" "tput.$t.$p" "preload failed"; return
    fi
    [ "$t" = ZRANGE ] && cli "$SRV_PORT" OBJECT ENCODING zbench | head -c 60 >"$W/res/$s.zbench.enc"
    c0=$(cpu_ticks "$SRV_PID")
    v=$(bench "$SRV_PORT" "$t" "$p" "$n")
    if ! alive "$s" "$t -P $p"; then record "$s" "tput.$t.$p" "server crashed"; return; fi
    c1=$(cpu_ticks "$SRV_PID")
    sz=$(key_size "$SRV_PORT" "$t")
    stop_server "$SRV_PID"
    us=$(awk -v c="$((c1 - c0))" -v hz="$CLK_TCK" -v n="$n" 'BEGIN {printf "%.2f", c * 1e6 / hz / n}')
    log "$s round $r: $t -P $p -n $n: ${v:-FAILED} req/s, server CPU $us us/request (size after: $sz)"
    record "$s" "tput.$t.$p" "${v:-failed}"
    [ -n "$v" ] && record "$s" "cpu.$t.$p" "$us"
    echo "$sz" >"$W/res/$s.size.$t.$p"
}

# ---------------------------------------------------------------- memory
mem_run() {  # SERVER ROUND SET
    local s=$1 r=$2 m=$3 miss ub ua rb ra out
    # shellcheck disable=SC2046
    miss=$(missing_any "$s" $(mem_cmds "$m"))
    if [ -n "$miss" ]; then record "$s" "mem.$m.used" "missing ($miss)"; record "$s" "mem.$m.rss" "missing ($miss)"; return; fi
    start_server "$s" "r$r-mem-$m"
    sleep 0.5
    ub=$(used_memory "$SRV_PORT"); rb=$(rss_kb "$SRV_PID")
    if ! out=$(mem_load "$SRV_PORT" "$m"); then
        log "$s round $r: loading $m failed ($(tail -n1 "$W/loader.err"))"
        alive "$s" "loading $m" && stop_server "$SRV_PID"
        record "$s" "mem.$m.used" "load failed"; record "$s" "mem.$m.rss" "load failed"; return
    fi
    sleep 1
    alive "$s" "loading $m" || { record "$s" "mem.$m.used" "server crashed"; record "$s" "mem.$m.rss" "server crashed"; return; }
    ua=$(used_memory "$SRV_PORT"); ra=$(rss_kb "$SRV_PID")
    cli "$SRV_PORT" DBSIZE >"$W/res/$s.mem.$m.dbsize"
    cli "$SRV_PORT" OBJECT ENCODING "$(mem_sample "$m")" | head -n1 | cut -c1-60 >"$W/res/$s.mem.$m.enc"
    sed -n 's/.*payload_bytes=\([0-9]*\).*/\1/p' <<<"$out" >"$W/res/mem.$m.payload"
    stop_server "$SRV_PID"
    if [ -n "$ub" ] && [ -n "$ua" ]; then record "$s" "mem.$m.used" $((ua - ub)); else record "$s" "mem.$m.used" "no used_memory"; fi
    record "$s" "mem.$m.rss" $(( (ra - rb) * 1024 ))
    log "$s round $r: $m: used_memory +$(( (${ua:-0} - ${ub:-0}) / 1024 )) kB, RSS +$((ra - rb)) kB, DBSIZE $(cat "$W/res/$s.mem.$m.dbsize"), encoding $(cat "$W/res/$s.mem.$m.enc")"
}

# ---------------------------------------------------------------- callgrind
cg_start() {  # SERVER
    start_server "$1" "cg$CG_STARTS" valgrind --tool=callgrind --compress-strings=no --callgrind-out-file="$W/cg-$1-$CG_STARTS.out"
    CG_STARTS=$((CG_STARTS + 1)); CG_DUMPS=0
}
cg_server() {  # SERVER
    local s=$1 t miss v f ir sz up=0
    local warm=$(( (CG_N / 10 + 15) / 16 * 16 ))
    CG_STARTS=0
    for t in $TESTS; do
        # shellcheck disable=SC2046
        miss=$(missing_any "$s" $(test_cmds "$t"))
        if [ -n "$miss" ]; then echo "missing ($miss)" >"$W/res/$s.cg.$t"; continue; fi
        if [ $up = 0 ]; then log "$s: starting under callgrind (slow)"; cg_start "$s"; up=1; fi
        cli "$SRV_PORT" DEL mylist myset myhash myzset zbench >/dev/null
        if ! preload "$SRV_PORT" "$t" $((warm + CG_N)); then
            echo "preload failed" >"$W/res/$s.cg.$t"
            alive "$s" "callgrind $t preload" || up=0
            continue
        fi
        bench "$SRV_PORT" "$t" 16 "$warm" >/dev/null
        alive "$s" "callgrind $t warm-up" || { echo "server crashed" >"$W/res/$s.cg.$t"; up=0; continue; }
        callgrind_control -z "$SRV_PID" >"$W/cgctl.log" 2>&1 || { cat "$W/cgctl.log" >&2; die "callgrind_control -z failed for $s"; }
        v=$(bench "$SRV_PORT" "$t" 16 "$CG_N")
        alive "$s" "callgrind $t" || { echo "server crashed" >"$W/res/$s.cg.$t"; up=0; continue; }
        if [ -z "$v" ]; then echo "failed" >"$W/res/$s.cg.$t"; continue; fi
        callgrind_control -d "$SRV_PID" >"$W/cgctl.log" 2>&1 || { cat "$W/cgctl.log" >&2; die "callgrind_control -d failed for $s"; }
        CG_DUMPS=$((CG_DUMPS + 1))
        f="$W/cg-$s-$((CG_STARTS - 1)).out.$CG_DUMPS"
        for _ in $(seq 100); do grep -qs '^totals:' "$f" && break; sleep 0.1; done
        ir=$(awk '/^summary:/ {print $2; exit}' "$f")
        [ -n "$ir" ] || die "no callgrind summary in $f"
        cp "$f" "$W/cg-$s-$t.dump"
        sz=$(key_size "$SRV_PORT" "$t")
        echo "$ir" >"$W/res/$s.cg.$t"
        echo "$sz" >"$W/res/$s.cgsize.$t"
        log "$s: $t x $CG_N under callgrind: $ir Ir, $(awk -v a="$ir" -v n="$CG_N" 'BEGIN {printf "%.0f", a / n}') Ir/request (size after: $sz)"
        if [ "$CG_TOP" -gt 0 ]; then
            # the function table; functions still on the stack when the
            # counters were zeroed (main, thread starts, the event loop) show
            # ~100% there, whatever their own cost: lines >= 90% are skipped
            callgrind_annotate --threshold=100 "$W/cg-$s-$t.dump" 2>/dev/null |
                awk '/file:function/ {f = 1; next} f == 1 && /^-+$/ {f = 2; next} f == 2 && /^ *$/ {exit}
                     f == 2 && match($0, /\( *[0-9.]+%\)/) {
                         pct = substr($0, RSTART + 1, RLENGTH - 3) + 0; if (pct < 90) print }' |
                sed -E 's/^( *[0-9,]+ *\( *[0-9.]+%\)) +[^ ]*:([^ :]+) \[.*\/([^/]+)\]$/\1  \2 [\3]/' |
                head -n "$CG_TOP" >"$W/res/$s.cgtop.$t"
        fi
    done
    [ $up = 1 ] && stop_server "$SRV_PID"
}

# ---------------------------------------------------------------- run
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
log "HotKV: $HOTKV$(printf ' %q' "${HOTKV_EXTRA[@]}")"
log "redis: $REDIS$(printf ' %q' "${REDIS_ARGS[@]}")"
log "N=$N R=$R RAND=$RAND DSIZE=$DSIZE CG_N=$CG_N MEM_OBJS=$MEM_OBJS LIST_LEN=$LIST_LEN PARTS='$PARTS' scratch=$W"
[ $SMOKE = 1 ] && log "NOTE: HOTKV_BIN is redis-server: smoke run, expect ratios near 1.0"

for s in hotkv redis; do probe "$s"; done
if want memory; then
    for ((r = 1; r <= R; r++)); do
        if ((r % 2)); then order="hotkv redis"; else order="redis hotkv"; fi
        for m in $MEMSETS; do for s in $order; do mem_run "$s" "$r" "$m"; done; done
    done
fi
if want throughput; then
    for ((r = 1; r <= R; r++)); do
        if ((r % 2)); then order="hotkv redis"; else order="redis hotkv"; fi
        # the two servers' cells of a test run back to back, so a burst of
        # other load on the box hits both rather than one server's column
        for p in $PIPELINES; do for t in $TESTS; do
            for s in $order; do cell "$s" "$r" "$t" "$p"; done
        done; done
    done
fi
if want cpu; then
    for s in hotkv redis; do cg_server "$s"; done
fi
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(( $(date +%s) - START_TS ))

# ---------------------------------------------------------------- report
verdict() {  # RATIO TARGET -> yes / NO / blank
    awk -v r="$1" -v t="$2" 'BEGIN {if (r !~ /^[0-9.]+$/) print ""; else if (r + 0 <= t + 0) print "yes"; else print "**NO**"}'
}
REPORT="$W/report.md"
{
    echo "# HotKV vs redis-server - issue #4 benchmark: collections ($(date '+%F %H:%M'))"
    echo
    [ $SMOKE = 1 ] && { echo "**Smoke run: HOTKV_BIN is redis-server, so both columns are redis (ratios should be ~1.0).**"; echo; }
    if hk_rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
        [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] || hk_rev="$hk_rev + local changes"
    else
        hk_rev="no commit yet"
    fi
    echo "- command: \`$CMDLINE\`"
    echo "- HotKV: \`$HOTKV_BIN$(printf ' %q' "${HOTKV_EXTRA[@]}")\` (repo: $hk_rev; binary built $HOTKV_BUILT, sha1 $HOTKV_SUM)"
    echo "- redis: \`$REDIS_BIN$(printf ' %q' "${REDIS_ARGS[@]}")\` ($("$REDIS" --version 2>/dev/null | head -n1))"
    echo "- host: $NCPU CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(uname -sr); servers on core $SERVER_CPU, load generator on core $CLIENT_CPU; one server alive at a time, a fresh one per measurement"
    echo "- load average at start / end: $LOAD_START / $LOAD_END (other load on the box skews throughput, not Ir or memory)"
    echo "- settings: N=$N R=$R RAND=$RAND DSIZE=$DSIZE POP_MARGIN=$POP_MARGIN CG_N=$CG_N MEM_OBJS=$MEM_OBJS LIST_LEN=$LIST_LEN${QUICK:+ QUICK=$QUICK}; runtime ${ELAPSED}s"
    if awk -v l="${LOAD_START%% *}" 'BEGIN {exit !(l > 1.0)}'; then
        echo "- **WARNING: the box was busy before the run started (1-min load ${LOAD_START%% *} on $NCPU CPUs): throughput numbers and ratios are unreliable; rerun on an idle machine and/or with R=3. Ir/request and memory are not affected.**"
    fi
    for s in hotkv redis; do
        [ -s "$W/res/$s.missing" ] && echo "- **missing on $s** (answered \"unknown command\", not measured): $(paste -sd' ' "$W/res/$s.missing")"
    done
    [ -f "$W/res/sanity" ] && echo "- **unexpected replies in the command check:** $(paste -sd';' "$W/res/sanity")"
    [ -f "$W/res/crashes" ] && echo "- **server crashes:** $(paste -sd';' "$W/res/crashes")"
    echo
    if want throughput; then
        echo "## 1. Throughput (requests/s, median of $R; higher is better)"
        echo
        echo "redis-benchmark -c $CONNS -d $DSIZE -r $RAND -P 1|16, a fresh empty server per cell. LPUSH/RPUSH/LPOP work on one list (mylist), SADD/SPOP on one set (myset), HSET on one hash (myhash), ZADD on one sorted set (myzset, random score); SADD/HSET/ZADD members are element:%012d drawn from $RAND, so each run builds one large collection. LPOP and SPOP run on a list/set preloaded with requests+$POP_MARGIN elements (bench/issue4_load.py: RPUSH of $DSIZE-byte values / SADD element:%012d), so every pop returns an element: the size column must then read $POP_MARGIN. ZRANGE is the custom command \`ZRANGE zbench 0 99\` (members only, no WITHSCORES) on a 100-member sorted set (member:0..99, scores 0..99; OBJECT ENCODING: HotKV $(cat "$W/res/hotkv.zbench.enc" 2>/dev/null || echo -), redis $(cat "$W/res/redis.zbench.enc" 2>/dev/null || echo -))."
        echo
        echo "Server CPU: user+system time of the server process (/proc/PID/stat, all threads, ${CLK_TCK} Hz ticks) during the redis-benchmark run, per request, median of $R; lower is better. Other load on the box slows both servers' clocks alike far less than it scatters requests/s, so read this ratio first when the box was busy."
        echo
        echo "| test | pipeline | requests | HotKV req/s | redis req/s | HotKV/redis | HotKV CPU us/req | redis CPU us/req | HotKV/redis | size after (HotKV / redis) |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
        for p in $PIPELINES; do
            for t in $TESTS; do
                a=$(result hotkv "tput.$t.$p"); b=$(result redis "tput.$t.$p")
                kk=$(test_key "$t")
                c=$(result hotkv "cpu.$t.$p"); d=$(result redis "cpu.$t.$p")
                echo "| $(test_label "$t") | $p | $(test_n "$t" "$p") | $(fmt_int "$a") | $(fmt_int "$b") | $(ratio "$a" "$b") | ${c:-n/a} | ${d:-n/a} | $(ratio "$c" "$d") | ${kk#* } $(cat "$W/res/hotkv.size.$t.$p" 2>/dev/null || echo -) / $(cat "$W/res/redis.size.$t.$p" 2>/dev/null || echo -) |"
            done
        done
        echo
    fi
    if want cpu; then
        echo "## 2. CPU instructions per request (callgrind Ir, pipeline 16; lower is better; target HotKV/redis <= 0.7)"
        echo
        echo "valgrind --tool=callgrind, one server per kind; per command: bench keys deleted, LPOP/SPOP/ZRANGE key preloaded as in section 1 (for warm-up + measured requests), a warm-up of $(( (CG_N / 10 + 15) / 16 * 16 )) requests, counters zeroed, then $CG_N requests with redis-benchmark -P 16 -c $CONNS -d $DSIZE -r $RAND. Counts user-space instructions of all server threads during the run (kernel time is not included)."
        echo
        echo "| command | requests | HotKV Ir/req | redis Ir/req | HotKV/redis | <= 0.7 | size after (HotKV / redis) |"
        echo "|---|---:|---:|---:|---:|:---:|---|"
        for t in $TESTS; do
            a=$(cat "$W/res/hotkv.cg.$t" 2>/dev/null); b=$(cat "$W/res/redis.cg.$t" 2>/dev/null)
            a=$(awk -v a="$a" -v n="$CG_N" 'BEGIN {if (a ~ /^[0-9]+$/) printf "%.0f", a / n; else print a}')
            b=$(awk -v a="$b" -v n="$CG_N" 'BEGIN {if (a ~ /^[0-9]+$/) printf "%.0f", a / n; else print a}')
            rr=$(ratio "$a" "$b"); kk=$(test_key "$t")
            echo "| $t | $CG_N | ${a:-n/a} | ${b:-n/a} | $rr | $(verdict "$rr" 0.7) | ${kk#* } $(cat "$W/res/hotkv.cgsize.$t" 2>/dev/null || echo -) / $(cat "$W/res/redis.cgsize.$t" 2>/dev/null || echo -) |"
        done
        echo
        if [ "$CG_TOP" -gt 0 ] && ls "$W"/res/hotkv.cgtop.* >/dev/null 2>&1; then
            echo "Top $CG_TOP functions by own (exclusive) Ir in HotKV per command (\`callgrind_annotate\` of the measured dump; Ir over all $CG_N requests):"
            echo
            echo '```'
            for t in $TESTS; do
                [ -s "$W/res/hotkv.cgtop.$t" ] || continue
                echo "$t:"; sed 's/^/  /' "$W/res/hotkv.cgtop.$t"
            done
            echo '```'
            echo
        fi
    fi
    if want memory; then
        echo "## 3. Memory (growth after loading into a fresh server, median of $R; lower is better; target HotKV/redis <= 0.8)"
        echo
        echo "used_memory (INFO memory) and VmRSS before and after a pipelined load by bench/issue4_load.py (batches of ~256 kB of commands). bytes/object = growth / objects (per element for the list); payload = key + field/member + value bytes sent per object (scores excluded)."
        echo
        echo "| data set | objects | payload B/obj | HotKV used B/obj | redis used B/obj | HotKV/redis | <= 0.8 | HotKV RSS B/obj | redis RSS B/obj | HotKV/redis | encoding (HotKV / redis) | DBSIZE (HotKV / redis) |"
        echo "|---|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---|---|"
        for m in $MEMSETS; do
            o=$(mem_objs "$m")
            pl=$(awk -v a="$(cat "$W/res/mem.$m.payload" 2>/dev/null)" -v o="$o" 'BEGIN {if (a != "") printf "%.1f", a / o; else print "n/a"}')
            row="| $(mem_label "$m") | $o | $pl"
            for kind in used rss; do
                a=$(result hotkv "mem.$m.$kind"); b=$(result redis "mem.$m.$kind")
                a=$(awk -v a="$a" -v o="$o" 'BEGIN {if (a ~ /^-?[0-9.]+$/) printf "%.1f", a / o; else print a}')
                b=$(awk -v a="$b" -v o="$o" 'BEGIN {if (a ~ /^-?[0-9.]+$/) printf "%.1f", a / o; else print a}')
                rr=$(ratio "$a" "$b")
                row+=" | ${a:-n/a} | ${b:-n/a} | $rr"
                [ $kind = used ] && row+=" | $(verdict "$rr" 0.8)"
            done
            row+=" | $(cat "$W/res/hotkv.mem.$m.enc" 2>/dev/null || echo -) / $(cat "$W/res/redis.mem.$m.enc" 2>/dev/null || echo -)"
            row+=" | $(cat "$W/res/hotkv.mem.$m.dbsize" 2>/dev/null || echo -) / $(cat "$W/res/redis.mem.$m.dbsize" 2>/dev/null || echo -) |"
            echo "$row"
        done
        echo
    fi
} >"$REPORT"

cat "$REPORT"
if [ -n "$OUT_FILE" ]; then
    mkdir -p "$(dirname "$OUT_FILE")" && cp "$REPORT" "$OUT_FILE" && log "report written to $OUT_FILE"
fi
log "done in ${ELAPSED}s"
