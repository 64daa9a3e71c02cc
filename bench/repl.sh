#!/usr/bin/env bash
# repl.sh - replication: HotKV -> HotKV against redis-server ->
# redis-server, side by side (issue #19's three measures).
#
# For each kind (HotKV --threads 1 master and replicas, redis-server master
# and replicas), in one script:
#   1. full sync: KEYS keys of VSIZE-byte values are loaded, then a replica
#      of the same kind is started; the time from its start until its link
#      is up with the sync done (INFO replication, polled every 20 ms).
#      Diskless first (repl-diskless-sync yes, delay 0), then disk-based
#      (CONFIG SET repl-diskless-sync no) with a fresh replica.
#   2. throughput: SET of VSIZE-byte values at pipeline 16, 50 connections
#      (hotkv-benchmark, SECS seconds, after WARM seconds of the same load
#      that absorb the page faults the last sync's fork left), with 0, 1
#      and 2 replicas attached; the master's requests/s with N replicas
#      over its own with none, its CPU time (all threads, /proc) per
#      request, and how many replicas it cut at the output-buffer limit
#      during the run (each one resyncs: a fork of the master).
#   3. lag: with one replica and a fixed background load of LAG_RATE SET/s
#      (hotkv-benchmark --rate), a probe writes a counter on the master
#      every 10 ms and polls the replica until it reads it back: the time
#      from the master's reply to the value being readable there, p50 and
#      p99 over LAG_PROBES probes.
# The master is pinned to core SERVER_CPU, the load generator and the
# replicas to LOAD_CPU (a 2-core machine has no third core: the replicas'
# work competes with the load generator alike for both kinds).  On a larger
# machine REPLICA_CPUS="a b" gives the replicas cores of their own (the
# first replica of each step the first core, the second the second) and
# LOAD_CPU may name several cores ("4-7") with GEN_THREADS load threads.
# REPLICA_NICE (default 0) runs the replicas at that nice level, for both
# kinds: with 19 the load generator keeps its core, which isolates the
# master's own cost of feeding replicas from the replicas' CPU.  The lag
# measure always runs its replica at nice 0, after it has caught up.
#
# usage: bench/repl.sh [-o REPORT.md]
#   KEYS (1000000), VSIZE (256), SECS (5), ROUNDS (3), LAG_RATE (50000),
#   LAG_PROBES (300), REPLICA_NICE (0), WARM (2), HOTKV_BIN (build/hotkv-server), GEN_BIN
#   (build/hotkv-benchmark), REDIS_BIN (redis-server), SERVER_CPU (0),
#   LOAD_CPU (1), REPLICA_CPUS (LOAD_CPU for each), GEN_THREADS (1),
#   HOTKV_REV (the revision the report names; default from git)
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
LAG_RATE=${LAG_RATE:-50000} LAG_PROBES=${LAG_PROBES:-300} REPLICA_NICE=${REPLICA_NICE:-0} WARM=${WARM:-2}
HZ=$(getconf CLK_TCK)
# A replica cut at the output-buffer limit: HotKV's and redis-server's log lines.
DROP_RE='over the replica output buffer|overcoming of output buffer limits'
SERVER_CPU=${SERVER_CPU:-0} LOAD_CPU=${LOAD_CPU:-1} GEN_THREADS=${GEN_THREADS:-1}
read -r -a RCPUS <<<"${REPLICA_CPUS:-$LOAD_CPU $LOAD_CPU}"
[ "${#RCPUS[@]}" -ge 2 ] || RCPUS+=("${RCPUS[0]}")
REV=${HOTKV_REV:-$( { git rev-parse --short HEAD && { git diff --quiet || echo ', tree modified'; }; } 2>/dev/null | tr -d '\n' || true)}
HOTKV=$(realpath "${HOTKV_BIN:-build/hotkv-server}") GEN=$(realpath "${GEN_BIN:-build/hotkv-benchmark}")
REDIS=${REDIS_BIN:-redis-server} RCLI=redis-cli PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || die "no python3"
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
    (cd "$W/run/$label" && exec nice -n "${NICE:-0}" taskset -c "$core" "$bin" --port "$port" --bind 127.0.0.1 --save "" --appendonly no "$@") \
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

# replica KIND CORE LABEL MPORT -> a replica of that kind (LAUNCHED_PORT / _PID)
replica() {
    local kind=$1 core=$2 label=$3 mport=$4
    if [ "$kind" = hotkv ]; then
        NICE=$REPLICA_NICE launch "$HOTKV" "$core" "$label" --threads 1 --replicaof 127.0.0.1 "$mport"
    else
        NICE=$REPLICA_NICE launch "$REDIS" "$core" "$label" --replicaof 127.0.0.1 "$mport"
    fi
}

# wait_caught_up MPORT RPORT LABEL: synced, and the replica's offset has
# reached the master's (no writes meanwhile)
wait_caught_up() {
    local want got
    wait_synced "$2" "$3"
    want=$($RCLI -p "$1" INFO replication | tr -d '\r' | awk -F: '$1 == "master_repl_offset" {print $2}')
    for ((i = 0; i < 3000; i++)); do
        got=$($RCLI -p "$2" INFO replication | tr -d '\r' | awk -F: '$1 == "slave_repl_offset" {print $2}')
        [ -n "$got" ] && [ "$got" -ge "$want" ] && return 0
        sleep 0.02
    done
    die "the replica did not catch up (log $W/$3.log)"
}

wait_synced() {  # PORT LABEL
    for ((i = 0; i < 3000; i++)); do synced "$1" && return 0; sleep 0.02; done
    die "the replica did not sync (log $W/$2.log)"
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
        taskset -c "$LOAD_CPU" "$GEN" -p "$mport" --threads "$GEN_THREADS" -c 50 -P 64 --key-space "$KEYS" --key-pattern sequential \
            --requests "$KEYS" --command 'SET key:__rand_int__ __data__' -d "$VSIZE" -q >/dev/null
        # 1. full sync time, diskless then disk-based
        for mode in diskless disk; do
            [ "$mode" = disk ] && $RCLI -p "$mport" CONFIG SET repl-diskless-sync no >/dev/null
            t0=$(date +%s.%N)
            replica "$kind" "${RCPUS[0]}" "r1-$kind-$round-$mode" "$mport"
            wait_synced "$LAUNCHED_PORT" "r1-$kind-$round-$mode"
            t1=$(date +%s.%N)
            sync_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
            log "round $round $kind: $mode full sync of $KEYS keys in $sync_s s"
            echo "$round $kind sync-$mode $sync_s" >>"$RES"
            stop_server "$LAUNCHED_PID"
        done
        $RCLI -p "$mport" CONFIG SET repl-diskless-sync yes >/dev/null
        # 2. throughput with 0, 1, 2 replicas
        pids=() ports=()
        for n in 0 1 2; do
            while [ "${#pids[@]}" -lt "$n" ]; do
                replica "$kind" "${RCPUS[${#pids[@]}]}" "r$((${#pids[@]} + 2))-$kind-$round-$n" "$mport"
                pids+=("$LAUNCHED_PID") ports+=("$LAUNCHED_PORT")
                wait_synced "$LAUNCHED_PORT" "replica"
            done
            # Warm-up: a sync just forked the master, and its first write to
            # each page of the dataset after that takes a fault.
            [ "$WARM" -gt 0 ] && taskset -c "$LOAD_CPU" "$GEN" -p "$mport" --threads "$GEN_THREADS" -c 50 -P 16 --key-space "$KEYS" \
                --test-time "$WARM" --command 'SET key:__rand_int__ __data__' -d "$VSIZE" -q >/dev/null
            t0=$(awk '{print $14 + $15}' "/proc/$mpid/stat")
            d0=$(grep -c -E "$DROP_RE" "$W/m-$kind-$round.log" || true)
            taskset -c "$LOAD_CPU" "$GEN" -p "$mport" --threads "$GEN_THREADS" -c 50 -P 16 --key-space "$KEYS" --test-time "$SECS" \
                --command 'SET key:__rand_int__ __data__' -d "$VSIZE" --json "$W/tp.json" -q >/dev/null
            t1=$(awk '{print $14 + $15}' "/proc/$mpid/stat")
            d1=$(grep -c -E "$DROP_RE" "$W/m-$kind-$round.log" || true)
            rps=$("$PY" -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["steps"][0]["achieved_rps"]))' "$W/tp.json")
            cpu=$(awk -v t="$((t1 - t0))" -v hz="$HZ" -v r="$rps" -v s="$SECS" 'BEGIN {printf "%.3f", t / hz / (r * s) * 1e6}')
            log "round $round $kind: SET P16 with $n replica(s): $rps requests/s, master CPU $cpu us/request, $((d1 - d0)) replica(s) dropped"
            echo "$round $kind set$n $rps" >>"$RES"
            echo "$round $kind cpu$n $cpu" >>"$RES"
            echo "$round $kind drop$n $((d1 - d0))" >>"$RES"
        done
        # 3. lag at a fixed write rate, one replica: once it has caught up
        # (a replica cut during the 2-replica run may still be resyncing)
        stop_server "${pids[1]}"
        wait_caught_up "$mport" "${ports[0]}" "r-$kind-$round"
        # ... and at normal priority whatever REPLICA_NICE: a nice-19
        # replica on the core of the load generator and of the probe, which
        # polls it without pause, gets almost no CPU and falls seconds
        # behind (either kind); that measures the scheduler.
        for t in /proc/"${pids[0]}"/task/*; do renice -n 0 -p "${t##*/}" >/dev/null 2>&1 || true; done
        taskset -c "$LOAD_CPU" "$GEN" -p "$mport" --threads "$GEN_THREADS" -c 20 --key-space "$KEYS" --rate "$LAG_RATE" \
            --test-time $((LAG_PROBES / 100 + 3)) --command 'SET key:__rand_int__ __data__' -d "$VSIZE" -q \
            >/dev/null 2>&1 &
        gen_pid=$!
        sleep 1
        taskset -c "$LOAD_CPU" "$PY" - "$mport" "${ports[0]}" "$LAG_PROBES" >>"$RES.lag-$kind" <<'PYEOF'
import socket, sys, time
def conn(port):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
def cmd(s, *a):
    s.sendall(("*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in a)).encode())
    buf = b""
    while not complete(buf):
        buf += s.recv(65536)
    return buf
def complete(b):
    if not b.endswith(b"\r\n"):
        return False
    if b[:1] != b"$" or b.startswith(b"$-1"):
        return True
    return len(b) >= b.index(b"\r\n") + 2 + int(b[1:b.index(b"\r\n")]) + 2
m, r, n = conn(sys.argv[1]), conn(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    v = "p%d" % i
    cmd(m, "SET", "lag:probe", v)
    t0 = time.perf_counter()
    want = ("$%d\r\n%s\r\n" % (len(v), v)).encode()
    while cmd(r, "GET", "lag:probe") != want:
        pass
    print("lag %.1f" % ((time.perf_counter() - t0) * 1e6))
    time.sleep(0.01)
PYEOF
        wait "$gen_pid" || true
        "$PY" - "$RES.lag-$kind" "$round" "$kind" >>"$RES" <<'PYEOF'
import sys
v = sorted(float(l.split()[1]) for l in open(sys.argv[1]))
q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
print("%s %s lag50 %.1f" % (sys.argv[2], sys.argv[3], q(0.5)))
print("%s %s lag99 %.1f" % (sys.argv[2], sys.argv[3], q(0.99)))
PYEOF
        rm -f "$RES.lag-$kind"
        log "round $round $kind: lag p50/p99 $(tail -2 "$RES" | awk '{printf "%s ", $4}')us"
        for p in "${pids[@]}"; do stop_server "$p" 2>/dev/null || true; done
        stop_server "$mpid"
    done
done

"$PY" - "$RES" "$KEYS" "$VSIZE" "$SECS" "$ROUNDS" "$REV" \
    "$($REDIS --version | awk '{print $3}')" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$LAG_RATE" "$LAG_PROBES" "$REPLICA_NICE" \
    "master on core(s) $SERVER_CPU, load generator on $LOAD_CPU ($GEN_THREADS thread(s)), replicas on ${RCPUS[0]} and ${RCPUS[1]}" \
    >"$W/report.md" <<'PYEOF'
import statistics, sys
res, keys, vsize, secs, rounds, rev, rver, ncpu, load, lag_rate, lag_probes, rnice, placement = sys.argv[1:14]
d = {}
for line in open(res):
    r, kind, what, v = line.split()
    d.setdefault((kind, what), []).append(float(v))
med = lambda k: statistics.median(d[k]) if k in d else 0
print("# Replication: HotKV -> HotKV against redis-server -> redis-server\n")
print("Command: `bench/repl.sh` (KEYS=%s VSIZE=%s SECS=%s ROUNDS=%s REPLICA_NICE=%s; lag at LAG_RATE=%s SET/s, %s probes)  " % (keys, vsize, secs, rounds, rnice, lag_rate, lag_probes))
print("HotKV %s `--threads 1` (master and replicas); redis-server %s (master and replicas).  Machine: %s cores, load %s at the end; "
      "%s.  Medians over %s rounds.\n" % (rev, rver, ncpu, load, placement, rounds))
print("| measure | HotKV | redis-server | HotKV / redis |")
print("|---|---|---|---|")
for mode in ("diskless", "disk"):
    h, r = med(("hotkv", "sync-" + mode)), med(("redis", "sync-" + mode))
    print("| full sync of %s keys of %s bytes, %s (s, lower is better) | %.2f | %.2f | %.2fx |" % (keys, vsize, mode, h, r, h / r if r else 0))
for q in ("50", "99"):
    h, r = med(("hotkv", "lag" + q)), med(("redis", "lag" + q))
    print("| replication lag p%s at a fixed write load, 1 replica (us, lower is better) | %.0f | %.0f | %.2fx |" % (q, h, r, h / r if r else 0))
for n in (0, 1, 2):
    h, r = med(("hotkv", "set%d" % n)), med(("redis", "set%d" % n))
    print("| SET pipeline 16, %d replica(s) (requests/s) | %d | %d | %.2fx |" % (n, h, r, h / r if r else 0))
for n in (0, 1, 2):
    h, r = med(("hotkv", "cpu%d" % n)), med(("redis", "cpu%d" % n))
    print("| master CPU per SET, %d replica(s) (us, lower is better) | %.3f | %.3f | %.2fx |" % (n, h, r, h / r if r else 0))
for n in (1, 2):
    h, r = d.get(("hotkv", "drop%d" % n), []), d.get(("redis", "drop%d" % n), [])
    print("| replicas cut at the output-buffer limit during the %d-replica runs (all rounds) | %d | %d | |" % (n, sum(h), sum(r)))
for kind in ("hotkv", "redis"):
    base = med((kind, "set0"))
    print("\n%s with 2 replicas keeps %.2fx of its own 0-replica throughput (1 replica: %.2fx)." % (
        "HotKV" if kind == "hotkv" else "redis-server", med((kind, "set2")) / base if base else 0,
        med((kind, "set1")) / base if base else 0))
    c0 = med((kind, "cpu0"))
    if c0:
        print("Per master CPU-second it keeps %.2fx with 2 replicas (1 replica: %.2fx)." % (
            c0 / med((kind, "cpu2")) if med((kind, "cpu2")) else 0, c0 / med((kind, "cpu1")) if med((kind, "cpu1")) else 0))
print("\nEvery run (round, master, measure, value):\n\n```")
print(open(res).read().rstrip())
print("```")
PYEOF
if [ -n "$OUT" ]; then cp "$W/report.md" "$OUT"; log "report: $OUT"; else cat "$W/report.md"; fi
