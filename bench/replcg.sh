#!/usr/bin/env bash
# bench/replcg.sh - what feeding replicas costs a master per write, in
# instructions, HotKV and redis-server side by side (issue #19).
#
# For each kind, a one-thread master runs under valgrind --tool=callgrind
# (the load on the other core: redis-benchmark SET key:__rand_int__ with
# 256-byte values, 50 connections, pipeline 16, KEYS keys); replicas of the
# same kind run outside valgrind.  Ir per SET (counters zeroed after a
# warm-up, then CG_N requests, all of the master's threads) with 0, 1 and 2
# replicas attached and online; the difference from 0 is what the stream
# costs the master in user space: encoding and appending each write, and
# the sends (the kernel's side of a send is not counted here; bench/repl.sh
# measures the master's whole CPU time per SET).
#
# Then the other side: a master outside valgrind and one replica of the
# same kind under callgrind (on the load's core); its Ir per SET it applies
# (counters zeroed once it has caught up with a warm-up, then CG_N requests
# on the master, read when its offset reaches the master's): parsing and
# running the stream, and HotKV's own history for chained replicas.
#
# Usage: bench/replcg.sh [-o [FILE]]   (default docs/benchmarks/replcg-DATE.md)
# Environment: HOTKV_BIN (build/hotkv-server), REDIS_BIN (redis-server),
#   CG_N (requests per callgrind run, 100000), KEYS (10000), KEEP=1 (keep the
#   scratch dir).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
START_TS=$(date +%s)
die() { echo "replcg.sh: error: $*" >&2; exit 1; }
log() { echo "[replcg $(date +%H:%M:%S)] $*" >&2; }

OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) OUT_FILE=${2:-docs/benchmarks/replcg-$(date +%F).md}; [ $# -gt 1 ] && shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
cg_bench_env replcg
KEYS=${KEYS:-10000}
REDIS_ARGS+=(--repl-diskless-sync yes --repl-diskless-sync-delay 0)
HOTKV_EXTRA+=(--appendonly no --repl-diskless-sync-delay 0)

# run PORT TEST N -> requests/s (TEST is SET; the name cg_measure passes)
run() {
    local port=$1 n=$3
    client timeout 900 "$RB" -h 127.0.0.1 -p "$port" -c 50 -P 16 -r "$KEYS" -n "$n" -d 256 --csv \
        SET key:__rand_int__ __data__ 2>>"$W/rb.err" |
        awk -F'","' '/^"/ && $1 != "\"test" && NF > 1 {v = $2} END {if (v != "") print v}'
}

# replica KIND MPORT LABEL [wrapper...] -> a replica on the load's core (under
# the wrapper, valgrind, when one is given), once its link is up and its
# sync done (REP_PID, REP_PORT)
replica() {
    local kind=$1 mport=$2 label=$3 port info i; shift 3
    port=$(free_port) || die "no free port"
    mkdir -p "$W/run/$label"
    if [ "$kind" = hotkv ]; then
        ( cd "$W/run/$label" && exec taskset -c "$CLIENT_CPU" "$@" "$HOTKV" --port "$port" --bind 127.0.0.1 --threads 1 \
            --save "" --appendonly no --replicaof 127.0.0.1 "$mport" ) >"$W/$label.log" 2>&1 </dev/null &
    else
        ( cd "$W/run/$label" && exec taskset -c "$CLIENT_CPU" "$@" "$REDIS" --port "$port" --bind 127.0.0.1 \
            --save "" --appendonly no --replicaof 127.0.0.1 "$mport" ) >"$W/$label.log" 2>&1 </dev/null &
    fi
    REP_PID=$! REP_PORT=$port
    SERVER_PIDS+=("$REP_PID")
    for ((i = 0; i < 6000; i++)); do
        info=$($RCLI -p "$port" INFO replication 2>/dev/null | tr -d '\r')
        grep -q '^master_link_status:up' <<<"$info" && grep -q '^master_sync_in_progress:0' <<<"$info" && return 0
        kill -0 "$REP_PID" 2>/dev/null || die "replica $label exited (log $W/$label.log)"
        sleep 0.05
    done
    die "replica $label did not sync (log $W/$label.log)"
}

for s in hotkv redis; do
    log "$s: master under callgrind"
    start_server "$s" cg valgrind --tool=callgrind --callgrind-out-file="$W/cg-$s.%p.out"
    pid=$SRV_PID; port=$SRV_PORT; out="$W/cg-$s.$pid.out"; d=0
    run "$port" SET "$KEYS" >/dev/null || die "preload failed ($s)"
    reps=()
    for n in 0 1 2; do
        while [ "${#reps[@]}" -lt "$n" ]; do
            replica "$s" "$port" "r$((${#reps[@]} + 1))-$s"
            reps+=("$REP_PID")
        done
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" SET "$out" $d)
        echo "$v" >"$W/res/$s.$n"
        log "$s: SET with $n replica(s): $v Ir/request"
    done
    for p in "${reps[@]}"; do stop_server "$p"; done
    stop_server "$pid"
done

# offset PORT FIELD -> that field of INFO replication
offset() { $RCLI -p "$1" INFO replication 2>/dev/null | tr -d '\r' | awk -F: -v f="$2" '$1 == f {print $2}'; }
# caught_up MPORT RPORT: wait until the replica has applied all the master fed
caught_up() {
    local want i have
    want=$(offset "$1" master_repl_offset)
    for ((i = 0; i < 6000; i++)); do
        have=$(offset "$2" slave_repl_offset)
        [ -n "$have" ] && [ -n "$want" ] && [ "$have" -ge "$want" ] && return 0
        sleep 0.05
    done
    die "replica on port $2 did not catch up ($have of $want)"
}

for s in hotkv redis; do
    log "$s: replica under callgrind"
    start_server "$s" rm
    mpid=$SRV_PID; mport=$SRV_PORT
    run "$mport" SET "$KEYS" >/dev/null || die "preload failed ($s)"
    replica "$s" "$mport" "cgr-$s" valgrind --tool=callgrind --callgrind-out-file="$W/cgr-$s.%p.out"
    rpid=$REP_PID; rport=$REP_PORT
    run "$mport" SET $((CG_N / 10 / 16 * 16 + 16)) >/dev/null
    caught_up "$mport" "$rport"
    callgrind_control -z "$rpid" >/dev/null 2>&1 || die "callgrind_control -z failed"
    run "$mport" SET "$CG_N" >/dev/null
    caught_up "$mport" "$rport"
    callgrind_control -d "$rpid" >/dev/null 2>&1 || die "callgrind_control -d failed"
    f="$W/cgr-$s.$rpid.out.1"
    for _ in $(seq 100); do grep -qs '^totals:' "$f" && break; sleep 0.1; done
    ir=$(awk '/^summary:/ {print $2; exit}' "$f")
    [ -n "$ir" ] || die "no callgrind summary in $f"
    awk -v a="$ir" -v n="$CG_N" 'BEGIN {printf "%.0f\n", a / n}' >"$W/res/$s.replica"
    log "$s: the replica applies a SET in $(cat "$W/res/$s.replica") Ir"
    stop_server "$rpid"
    stop_server "$mpid"
done

get() { cat "$W/res/$1" 2>/dev/null; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f\n", a / b}'; }
REPORT="$W/report.md"
{
    echo "# What feeding replicas costs a master per SET (callgrind): HotKV vs redis-server ($(date '+%F %H:%M'))"
    echo
    echo "- HotKV: \`$HOTKV ${HOTKV_EXTRA[*]}\` (repo: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet || echo ', tree modified'))"
    echo "- redis: \`$REDIS ${REDIS_ARGS[*]}\` ($("$REDIS" --version | head -n1))"
    echo "- host: $(nproc) CPUs, master on core $SERVER_CPU, load and replicas on core $CLIENT_CPU; CG_N=$CG_N, KEYS=$KEYS; runtime $(( $(date +%s) - START_TS ))s"
    echo "- command: \`bench/replcg.sh\`"
    echo
    echo "Master's user-space instructions per SET (256-byte values, pipeline 16, 50"
    echo "connections), all threads; \"+N\" is the difference from no replica."
    echo
    echo "| replicas | HotKV Ir/SET | redis Ir/SET | HotKV/redis | HotKV +N | redis +N |"
    echo "|---|---:|---:|---:|---:|---:|"
    for n in 0 1 2; do
        h=$(get hotkv.$n) r=$(get redis.$n)
        echo "| $n | $h | $r | $(ratio "$h" "$r") | $(( ${h:-0} - $(get hotkv.0) )) | $(( ${r:-0} - $(get redis.0) )) |"
    done
    echo
    echo "A replica's user-space instructions per SET it applies (all its threads;"
    echo "one replica, the master outside valgrind):"
    echo
    echo "| | HotKV Ir/SET | redis Ir/SET | HotKV/redis |"
    echo "|---|---:|---:|---:|"
    h=$(get hotkv.replica) r=$(get redis.replica)
    echo "| replica | $h | $r | $(ratio "$h" "$r") |"
} >"$REPORT"
cat "$REPORT"
[ -n "$OUT_FILE" ] && cp "$REPORT" "$OUT_FILE" && log "report written to $OUT_FILE"
exit 0
