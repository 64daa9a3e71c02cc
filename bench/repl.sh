#!/usr/bin/env bash
# repl.sh - replication, master side: HotKV and redis-server as masters of
# Debian's redis-server replicas, side by side.
#
# For each master (HotKV --threads 1, redis-server), in one script:
#   1. full sync: KEYS keys of VSIZE-byte values are loaded, then a
#      redis-server replica is started; the time from its start until its
#      link is up with the sync done (INFO replication, polled every 20 ms).
#      Both masters sync diskless (the RDB straight to the socket), HotKV's
#      only kind so far, with repl-diskless-sync-delay 0.
#   2. throughput: SET of VSIZE-byte values at pipeline 16, 50 connections
#      (hotkv-benchmark, SECS seconds), with 0, 1 and 2 replicas attached;
#      the master's requests/s with N replicas over its own with none.
# The master is pinned to core SERVER_CPU, the load generator and the
# replicas to LOAD_CPU (a 2-core machine has no third core: the replicas'
# work competes with the load generator alike for both masters).
#
# usage: bench/repl.sh [-o REPORT.md]
#   KEYS (1000000), VSIZE (256), SECS (5), ROUNDS (3), HOTKV_BIN
#   (build/hotkv-server), GEN_BIN (build/hotkv-benchmark), REDIS_BIN
#   (redis-server), SERVER_CPU (0), LOAD_CPU (1)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=
while [ $# -gt 0 ]; do
    case $1 in
        -o) OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "usage: $0 [-o REPORT.md]" >&2; exit 2 ;;
    esac
done
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
KEYS=${KEYS:-1000000} VSIZE=${VSIZE:-256} SECS=${SECS:-5} ROUNDS=${ROUNDS:-3}
SERVER_CPU=${SERVER_CPU:-0} LOAD_CPU=${LOAD_CPU:-1}
HOTKV=$(realpath "${HOTKV_BIN:-build/hotkv-server}") GEN=$(realpath "${GEN_BIN:-build/hotkv-benchmark}")
REDIS=${REDIS_BIN:-redis-server} RCLI=redis-cli PY=/usr/bin/python3
[ -x "$HOTKV" ] || die "no $HOTKV (make first)"
[ -x "$GEN" ] || die "no $GEN (make first)"
command -v "$REDIS" >/dev/null || die "no $REDIS"
W=$(mktemp -d /tmp/replbench.XXXXXX)
. bench/lib.sh
RES=$W/results.txt

# start PROG CORE LABEL ARGS... -> prints the port; the pid goes to SERVER_PIDS
launch() {
    local bin=$1 core=$2 label=$3; shift 3
    local port
    port=$(free_port) || die "no free port"
    mkdir -p "$W/run/$label"
    (cd "$W/run/$label" && exec taskset -c "$core" "$bin" --port "$port" --bind 127.0.0.1 --save "" --appendonly no "$@") \
        >"$W/$label.log" 2>&1 </dev/null &
    SERVER_PIDS+=("$!")
    LAUNCHED_PID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$($RCLI -p "$port" PING 2>/dev/null)" = PONG ] && { LAUNCHED_PORT=$port; return 0; }
        sleep 0.1
    done
    die "$label did not start (log $W/$label.log)"
}

synced() {  # REPLICA_PORT -> true once the link is up and the sync done
    local info
    info=$($RCLI -p "$1" INFO replication 2>/dev/null | tr -d '\r')
    grep -q '^master_link_status:up' <<<"$info" && grep -q '^master_sync_in_progress:0' <<<"$info"
}

for round in $(seq "$ROUNDS"); do
    for kind in hotkv redis; do
        if [ "$kind" = hotkv ]; then
            launch "$HOTKV" "$SERVER_CPU" "m-$kind-$round" --threads 1 --repl-diskless-sync-delay 0
        else
            launch "$REDIS" "$SERVER_CPU" "m-$kind-$round" --repl-diskless-sync yes --repl-diskless-sync-delay 0
        fi
        mport=$LAUNCHED_PORT mpid=$LAUNCHED_PID
        log "round $round $kind: loading $KEYS keys"
        taskset -c "$LOAD_CPU" "$GEN" -p "$mport" -c 50 -P 64 --key-space "$KEYS" --key-pattern sequential \
            --requests "$KEYS" --command 'SET key:__rand_int__ __data__' -d "$VSIZE" -q >/dev/null
        # 1. full sync time
        t0=$(date +%s.%N)
        launch "$REDIS" "$LOAD_CPU" "r1-$kind-$round" --replicaof 127.0.0.1 "$mport"
        r1port=$LAUNCHED_PORT r1pid=$LAUNCHED_PID
        for ((i = 0; i < 3000; i++)); do synced "$r1port" && break; sleep 0.02; done
        synced "$r1port" || die "$kind: the replica did not sync (log $W/r1-$kind-$round.log)"
        t1=$(date +%s.%N)
        sync_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
        log "round $round $kind: full sync of $KEYS keys in $sync_s s"
        echo "$round $kind sync $sync_s" >>"$RES"
        stop_server "$r1pid"
        # 2. throughput with 0, 1, 2 replicas
        pids=()
        for n in 0 1 2; do
            while [ "${#pids[@]}" -lt "$n" ]; do
                launch "$REDIS" "$LOAD_CPU" "r$((${#pids[@]} + 2))-$kind-$round-$n" --replicaof 127.0.0.1 "$mport"
                pids+=("$LAUNCHED_PID")
                for ((i = 0; i < 3000; i++)); do synced "$LAUNCHED_PORT" && break; sleep 0.02; done
            done
            taskset -c "$LOAD_CPU" "$GEN" -p "$mport" -c 50 -P 16 --key-space "$KEYS" --test-time "$SECS" \
                --command 'SET key:__rand_int__ __data__' -d "$VSIZE" --json "$W/tp.json" -q >/dev/null
            rps=$("$PY" -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["steps"][0]["achieved_rps"]))' "$W/tp.json")
            log "round $round $kind: SET P16 with $n replica(s): $rps requests/s"
            echo "$round $kind set$n $rps" >>"$RES"
        done
        for p in "${pids[@]}"; do stop_server "$p"; done
        stop_server "$mpid"
    done
done

"$PY" - "$RES" "$KEYS" "$VSIZE" "$SECS" "$ROUNDS" "$(git rev-parse --short HEAD)$(git diff --quiet || echo ', tree modified')" \
    "$($REDIS --version | awk '{print $3}')" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$W/report.md" <<'PYEOF'
import statistics, sys
res, keys, vsize, secs, rounds, rev, rver, ncpu, load = sys.argv[1:10]
d = {}
for line in open(res):
    r, kind, what, v = line.split()
    d.setdefault((kind, what), []).append(float(v))
med = lambda k: statistics.median(d[k]) if k in d else 0
print("# Replication, master side: HotKV and redis-server as masters of redis-server replicas\n")
print("Command: `bench/repl.sh` (KEYS=%s VSIZE=%s SECS=%s ROUNDS=%s)  " % (keys, vsize, secs, rounds))
print("HotKV %s `--threads 1`; redis-server %s (master and replicas).  Machine: %s cores, load %s at the end; "
      "master on one core, load generator and replicas on the other.  Medians over %s rounds.\n" % (rev, rver, ncpu, load, rounds))
print("| measure | HotKV master | redis-server master | HotKV / redis |")
print("|---|---|---|---|")
h, r = med(("hotkv", "sync")), med(("redis", "sync"))
print("| full sync of %s keys of %s bytes, diskless (s, lower is better) | %.2f | %.2f | %.2fx |" % (keys, vsize, h, r, h / r if r else 0))
for n in (0, 1, 2):
    h, r = med(("hotkv", "set%d" % n)), med(("redis", "set%d" % n))
    print("| SET pipeline 16, %d replica(s) (requests/s) | %d | %d | %.2fx |" % (n, h, r, h / r if r else 0))
for kind in ("hotkv", "redis"):
    base = med((kind, "set0"))
    print("\n%s with 2 replicas keeps %.2fx of its own 0-replica throughput (1 replica: %.2fx)." % (
        "HotKV" if kind == "hotkv" else "redis-server", med((kind, "set2")) / base if base else 0,
        med((kind, "set1")) / base if base else 0))
print("\nEvery run (round, master, measure, value):\n\n```")
print(open(res).read().rstrip())
print("```")
PYEOF
if [ -n "$OUT" ]; then cp "$W/report.md" "$OUT"; log "report: $OUT"; else cat "$W/report.md"; fi
