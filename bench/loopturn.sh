#!/usr/bin/env bash
# loopturn.sh - what batching a loop turn's socket I/O in io_uring buys at
# pipeline 1, where the kernel dominates a command's cost.
#
# Three servers, one worker thread each, pinned to core 0: HotKV with
# io-uring yes (one io_uring_enter for a turn's reads, one for its replies),
# HotKV with io-uring no (one read(2) and one write(2) per client), and
# redis-server.  hotkv-benchmark (build/hotkv-benchmark: it needs about
# half the CPU per request that redis-benchmark does, so the server is the
# busier side) on core 1 runs GET and SET of 16-byte values over 100,000
# keys at pipeline 1 with 50 connections.  Rounds are interleaved (every server once per
# round) so background load hits all three alike.  Per run: requests/s and
# the server's CPU time per request (utime + stime from /proc, both ratios
# against redis-server, and io-uring yes against no, per round, then the
# median).  The CPU figure is the steadier one on a shared machine.
#
# usage: bench/loopturn.sh [-o REPORT.md]
#   ROUNDS (15), N requests per run (150000), CONNS (50), PIPE (1),
#   HOTKV_BIN (build/hotkv-server), GEN_BIN (build/hotkv-benchmark),
#   REDIS_BIN (redis-server), HOTKV_REV (the revision the report names;
#   default from git)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=
while [ $# -gt 0 ]; do
    case $1 in
        -o) OUT=$2; shift 2 ;;
        *) echo "usage: $0 [-o REPORT.md]" >&2; exit 2 ;;
    esac
done
ROUNDS=${ROUNDS:-15} N=${N:-150000} CONNS=${CONNS:-50} PIPE=${PIPE:-1}
HOTKV=$(realpath "${HOTKV_BIN:-build/hotkv-server}") REDIS=${REDIS_BIN:-redis-server}
RCLI=redis-cli PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
SERVER_CPU=0 CLIENT_CPU=1
# the revision measured: HOTKV_REV when the tree is a copy without git
REV=${HOTKV_REV:-$( { git rev-parse --short HEAD && { git diff --quiet || echo ', tree modified'; }; } 2>/dev/null | tr -d '\n' || true)}
W=$(mktemp -d /tmp/loopturn.XXXXXX)
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/lib.sh
[ -x "$HOTKV" ] || die "no $HOTKV (make first)"
GEN=$(realpath "${GEN_BIN:-build/hotkv-benchmark}")
[ -x "$GEN" ] || die "no $GEN (make first)"
TICK=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_one LABEL TEST -> one line of results on stdout
run_one() {
    local label=$1 test=$2 c0 c1 rps
    "$RCLI" -p "$SRV_PORT" set key:000000000001 xxx >/dev/null
    c0=$(cpu_ticks "$SRV_PID")
    taskset -c "$CLIENT_CPU" "$GEN" -p "$SRV_PORT" -c "$CONNS" -P "$PIPE" -n "$N" --workload "$test" \
        -d 16 -r 100000 -q --json "$W/gen.json" >/dev/null 2>&1 || die "hotkv-benchmark failed"
    rps=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["steps"][0]["achieved_rps"])' "$W/gen.json")
    c1=$(cpu_ticks "$SRV_PID")
    awk -v l="$label" -v t="$test" -v r="$rps" -v c=$((c1 - c0)) -v tk="$TICK" -v n="$N" \
        'BEGIN {printf "%s %s rps=%.0f cpu_us_per_req=%.3f\n", l, t, r, c * 1e6 / tk / n}'
}

# All three servers stay up (idle ones cost nothing); each round runs every
# test against each in turn, so a round's runs see about the same load.
RES=$W/results.txt
declare -A PID PORT
for s in uring epoll redis; do
    case $s in
        uring) HOTKV_EXTRA=(--threads 1 --save "" --appendonly no --io-uring yes); name=hotkv ;;
        epoll) HOTKV_EXTRA=(--threads 1 --save "" --appendonly no --io-uring no); name=hotkv ;;
        redis) REDIS_ARGS=(--save "" --appendonly no); name=redis ;;
    esac
    start_server "$name" "$s"
    PID[$s]=$SRV_PID PORT[$s]=$SRV_PORT
done
[ "$("$RCLI" -p "${PORT[uring]}" info server | tr -d '\r' | awk -F: '$1 == "io_uring_workers" {print $2}')" = 1 ] ||
    die "io-uring yes server runs without io_uring (see its log)"
for r in $(seq "$ROUNDS"); do
    for t in get set; do
        for s in uring epoll redis; do
            SRV_PID=${PID[$s]} SRV_PORT=${PORT[$s]}
            line=$(run_one "$s" "$t")
            log "round $r: $line"
            echo "round=$r $line" >>"$RES"
        done
    done
done

report() {
    echo "# io_uring loop-turn batching: HotKV (io-uring yes / no) vs redis-server"
    echo
    echo "Command: \`bench/loopturn.sh${OUT:+ -o $OUT}\` (ROUNDS=$ROUNDS N=$N CONNS=$CONNS PIPE=$PIPE)  "
    echo "HotKV: \`$HOTKV --threads 1\` ($REV); redis: $($REDIS --version | awk '{print $3, $4}')  "
    echo "Machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end; server on core $SERVER_CPU, hotkv-benchmark on core $CLIENT_CPU.  "
    echo "Medians over $ROUNDS interleaved rounds; ratios are HotKV / redis (requests/s) and redis / HotKV (server CPU per request), so above 1 means HotKV is ahead."
    echo
    echo "| test | server | requests/s | server CPU us/request | requests/s vs redis | CPU/request advantage vs redis |"
    echo "|---|---|---|---|---|---|"
    local t s rr cc rr0 cc0
    for t in get set; do
        rr0=$(awk -v t=$t '$3 == t && $2 == "redis" {sub("rps=", "", $4); print $4}' "$RES" | median)
        cc0=$(awk -v t=$t '$3 == t && $2 == "redis" {sub("cpu_us_per_req=", "", $5); print $5}' "$RES" | median)
        for s in uring epoll redis; do
            rr=$(awk -v t=$t -v s=$s '$3 == t && $2 == s {sub("rps=", "", $4); print $4}' "$RES" | median)
            cc=$(awk -v t=$t -v s=$s '$3 == t && $2 == s {sub("cpu_us_per_req=", "", $5); print $5}' "$RES" | median)
            awk -v t=$t -v s=$s -v r="$rr" -v c="$cc" -v r0="$rr0" -v c0="$cc0" \
                'BEGIN {n = s == "uring" ? "HotKV io-uring yes" : s == "epoll" ? "HotKV io-uring no" : "redis-server";
                        printf "| %s | %s | %.0f | %.2f | %.2fx | %.2fx |\n", toupper(t), n, r, c, r / r0, c0 / c}'
        done
    done
    echo
    echo "Paired per round (the three runs of a round are back to back), median over rounds:"
    echo
    echo "| test | io-uring yes / no, requests/s | io-uring no / yes, CPU per request | yes vs redis, requests/s | redis / yes, CPU per request |"
    echo "|---|---|---|---|---|"
    for t in get set; do
        awk -v t=$t '$3 == t {sub("rps=", "", $4); sub("cpu_us_per_req=", "", $5); r[$1, $2] = $4; c[$1, $2] = $5; rounds[$1] = 1}
            END {for (k in rounds) printf "%s %s %s %s\n", r[k, "uring"] / r[k, "epoll"], c[k, "epoll"] / c[k, "uring"],
                                                   r[k, "uring"] / r[k, "redis"], c[k, "redis"] / c[k, "uring"]}' "$RES" >"$W/pairs"
        printf "| %s | %.2fx | %.2fx | %.2fx | %.2fx |\n" "$(echo $t | tr a-z A-Z)" \
            "$(cut -d' ' -f1 "$W/pairs" | median)" "$(cut -d' ' -f2 "$W/pairs" | median)" \
            "$(cut -d' ' -f3 "$W/pairs" | median)" "$(cut -d' ' -f4 "$W/pairs" | median)"
    done
    echo
    echo "Every run:"
    echo
    echo '```'
    cat "$RES"
    echo '```'
}
if [ -n "$OUT" ]; then report >"$OUT"; log "report: $OUT"; else report; fi
