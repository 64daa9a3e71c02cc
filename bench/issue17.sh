#!/usr/bin/env bash
# bench/issue17.sh - the commands of issue #17 against redis-server, side by
# side in one run, and what MONITOR and latency tracking cost.
#
# What it measures:
#   1. CPU: user-space instructions (Ir) per request, valgrind --tool=callgrind
#      (hardware counters are not available here; instruction counts are
#      deterministic where wall-clock numbers on a shared box are not), for
#      PFADD (one element into one of 1000 HLLs), PFCOUNT of 1 key and of 10
#      keys (the union), and GEOSEARCH (BYRADIUS 50 km around a random point
#      of a 10,000-member geo set, COUNT 10 ASC), at pipeline 16: after
#      preload and a warm-up the counters are zeroed (callgrind_control -z),
#      the measured run is driven and dumped.  HotKV and redis-server, and
#      the ratio (target: HotKV at most 0.7x redis's Ir/request).
#   2. Throughput: requests/s of the same four tests (redis-benchmark -P 16,
#      50 connections), one server at a time, server on core 0, load on core 1.
#   3. HotKV only, GET at pipeline 16 (Ir/request): no monitor vs one MONITOR
#      client attached and reading; latency-tracking no vs yes (the default).
#
# Usage: bench/issue17.sh [-o FILE]
# Environment: HOTKV_BIN (build/hotkv-server), REDIS_BIN (redis-server),
#   CG_N (requests per callgrind run, 100000), N (requests per throughput
#   run, 400000), KEEP=1 (keep the scratch directory).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
START_TS=$(date +%s)
die() { echo "issue17.sh: error: $*" >&2; exit 1; }
log() { echo "[issue17 $(date +%H:%M:%S)] $*" >&2; }

OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) OUT_FILE=${2:-docs/benchmarks/issue17-$(date +%F).md}; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done
N=${N:-400000}
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
cg_bench_env issue17

# preload PORT: 1000 HLLs of 100 elements, a 10,000-member geo set
preload() {
    client "$PY" - "$1" <<'PYEOF'
import random, sys
import redis
r = redis.Redis(port=int(sys.argv[1]))
p = r.pipeline(transaction=False)
for k in range(1000):
    p.pfadd("hll:%d" % k, *["e%d" % i for i in range(k, k + 100)])
rnd = random.Random(17)
for i in range(10000):
    p.geoadd("geo", (rnd.uniform(-10, 10), rnd.uniform(40, 55), "m%d" % i))
    if i % 1000 == 999:
        p.execute()
p.execute()
PYEOF
}

TESTS="PFADD PFCOUNT1 PFCOUNT10 GEOSEARCH"
cmd_of() {  # TEST -> redis-benchmark command words
    case "$1" in
        PFADD) echo "PFADD hll:__rand_int__ __rand_int__" ;;
        PFCOUNT1) echo "PFCOUNT hll:__rand_int__" ;;
        PFCOUNT10) echo "PFCOUNT hll:1 hll:2 hll:3 hll:4 hll:5 hll:6 hll:7 hll:8 hll:9 hll:__rand_int__" ;;
        GEOSEARCH) echo "GEOSEARCH geo FROMLONLAT 2.5 47.5 BYRADIUS 50 km ASC COUNT 10" ;;
        GET) echo "GET key:__rand_int__" ;;
    esac
}
# run PORT TEST N -> requests/s
run() {
    # shellcheck disable=SC2046
    client timeout 600 $RB -h 127.0.0.1 -p "$1" -c 50 -P 16 -r 1000 -n "$3" --csv $(cmd_of "$2") 2>>"$W/rb.err" |
        awk -F'","' '/^"/ && $1 != "\"test" && NF > 1 {v = $2} END {if (v != "") print v}'
}

for s in hotkv redis; do
    log "$s: callgrind"
    start_server "$s" cg valgrind --tool=callgrind --callgrind-out-file="$W/cg-$s.out"
    pid=$SRV_PID; port=$SRV_PORT; d=0
    preload "$port" || die "preload failed ($s)"
    for t in $TESTS; do
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" "$t" "$W/cg-$s.out" $d)
        echo "$v" >"$W/res/$s.cg.$t"; log "$s: $t $v Ir/request"
    done
    if [ "$s" = hotkv ]; then
        client "$PY" -c "import redis; r=redis.Redis(port=$port); p=r.pipeline(transaction=False)
for i in range(1000): p.set('key:%d' % i, 'x' * 64)
p.execute()"
        "$RCLI" -p "$port" CONFIG SET latency-tracking no >/dev/null
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" GET "$W/cg-$s.out" $d); echo "$v" >"$W/res/get.lt-no"
        "$RCLI" -p "$port" CONFIG SET latency-tracking yes >/dev/null
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" GET "$W/cg-$s.out" $d); echo "$v" >"$W/res/get.lt-yes"
        client "$RCLI" -p "$port" MONITOR >/dev/null 2>&1 &
        mon=$!
        sleep 1
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" GET "$W/cg-$s.out" $d); echo "$v" >"$W/res/get.mon-1"
        kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
        log "hotkv: GET Ir/request: latency-tracking no $(cat "$W/res/get.lt-no") yes $(cat "$W/res/get.lt-yes"), one monitor $(cat "$W/res/get.mon-1")"
    fi
    stop_server "$pid"
done
for s in hotkv redis; do
    log "$s: throughput"
    start_server "$s" tput
    preload "$SRV_PORT" || die "preload failed ($s)"
    for t in $TESTS; do
        v=$(run "$SRV_PORT" "$t" "$N"); echo "$v" >"$W/res/$s.tput.$t"; log "$s: $t $v req/s"
    done
    stop_server "$SRV_PID"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f\n", a / b}'; }
get() { cat "$W/res/$1" 2>/dev/null; }
REPORT="$W/report.md"
{
    echo "# Issue #17 commands: HotKV vs redis-server ($(date '+%F %H:%M'))"
    echo
    echo "- HotKV: \`$HOTKV ${HOTKV_EXTRA[*]}\` (repo: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$( [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && echo ' + local changes'))"
    echo "- redis: \`$REDIS ${REDIS_ARGS[*]}\` ($("$REDIS" --version | head -n1))"
    echo "- host: $(nproc) CPUs, server on core $SERVER_CPU, load on core $CLIENT_CPU; CG_N=$CG_N N=$N; runtime $(( $(date +%s) - START_TS ))s"
    echo "- command: \`bench/issue17.sh\`"
    echo
    echo "## CPU per request (callgrind Ir, pipeline 16; lower is better; target HotKV/redis <= 0.70)"
    echo
    echo "| test | HotKV Ir/req | redis Ir/req | HotKV/redis |"
    echo "|---|---:|---:|---:|"
    for t in $TESTS; do
        echo "| $(cmd_of "$t" | sed 's/__rand_int__/N/g') | $(get hotkv.cg.$t) | $(get redis.cg.$t) | $(ratio "$(get hotkv.cg.$t)" "$(get redis.cg.$t)") |"
    done
    echo
    echo "## Throughput (requests/s, pipeline 16, 50 connections; shared box: indicative)"
    echo
    echo "| test | HotKV | redis | HotKV/redis |"
    echo "|---|---:|---:|---:|"
    for t in $TESTS; do
        echo "| $t | $(get hotkv.tput.$t) | $(get redis.tput.$t) | $(ratio "$(get hotkv.tput.$t)" "$(get redis.tput.$t)") |"
    done
    echo
    echo "## HotKV: the cost of latency tracking and of MONITOR (GET, pipeline 16, Ir/request)"
    echo
    echo "| setting | Ir/request |"
    echo "|---|---:|"
    echo "| latency-tracking no, no monitor | $(get get.lt-no) |"
    echo "| latency-tracking yes (default), no monitor | $(get get.lt-yes) |"
    echo "| latency-tracking yes, one MONITOR client | $(get get.mon-1) |"
} >"$REPORT"
cat "$REPORT"
[ -n "$OUT_FILE" ] && cp "$REPORT" "$OUT_FILE" && log "report written to $OUT_FILE"
exit 0
