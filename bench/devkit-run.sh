#!/usr/bin/env bash
# devkit-run.sh - on a lent many-core machine, from the repo root with
# .devkit/ carried (bench/devkit.sh packs it): machine facts, a check that
# the packed servers start, then the parts named in PARTS, in order:
#   inproc    bench/inproc_scaling's binary at 1, 2, 4 ... IP_MAXT threads
#   scaling   bench/scaling.sh against HotKV, redis-server and (VK=1) Valkey
#   repl      bench/repl.sh (issue #19) with the master on core 0, its
#             replicas on cores 2 and 3 and the load generator on 4-7 (4
#             threads): on a 2-core machine the replicas share the load
#             generator's core (with fewer than 8 cores, repl.sh's defaults)
#   cpusplit  bench/cpusplit.sh (issue #21 part 2; no callgrind: CG=0),
#             against Redis 8 too when it was packed (R8=1)
#   sweep     bench/suite.sh's fixed-rate latency sweep (issue #21 part 3:
#             GET and 10:1 GET:SET at pipeline 1, 48 connections, one
#             server thread on core 0) with the load generator's 4 threads
#             on cores 2-5, so that it is not late itself; SW_RATES, SW_STEP
#             (3 s), SW_LIMIT (300 s)
#   loopturn  bench/loopturn.sh (issue #21 part 3: server CPU per request at
#             pipeline 1, HotKV with and without io_uring against
#             redis-server), LT_ROUNDS (5), LT_LIMIT (150 s)
# Everything goes to $OUT (the device tool's folder that comes back):
# run.log, hk-sanity.log, inproc.txt, scaling.md/.svg, repl.md,
# cpusplit.md, sweep.tgz (the suite's results directory, packed: the
# device tool brings back only a few files), loopturn.md and logs.tgz (the servers' logs and the load generator's
# JSON, for scaling).
#
# Env: PARTS ("inproc scaling"), VK=1 (Valkey packed), R8=1 (Redis 8
# packed), HOTKV_REV (the revision the reports name), IP_MAXT (8),
# IP_ROUNDS (3), IP_SECS (2), SC_LIMIT (470 s for scaling.sh), RP_LIMIT
# (240 s for repl.sh, RP_ROUNDS 2), CS_LIMIT (200 s for cpusplit.sh, CS_R
# 2, CS_N 2000000), and scaling.sh's own THREADS, TESTS, SECS, KEYS.  On 16
# cores "inproc scaling" took 315 s
# (docs/benchmarks/scaling-16core-2026-12-04.md).
set -u
cd "$(dirname "$0")/.."
K=$PWD/.devkit
[ -d "$K/w" ] || { echo "devkit-run.sh: no $K (bench/devkit.sh, and carry it)" >&2; exit 1; }
export PATH=$K/w:$PATH:$K/fb
O=${OUT:-/tmp/devout}
mkdir -p "$O"
exec > >(tee "$O/run.log") 2>&1
T0=$(date +%s)
echo "== facts"
date -u; nproc; uname -r; grep -m1 'model name' /proc/cpuinfo
lscpu 2>/dev/null | grep -E '^(Socket|Core|Thread|NUMA node\(s\)|L3)'; free -g | head -2
ulimit -n 65536 2>/dev/null || ulimit -n 4096; ulimit -n
cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>&1
hotkv-server --version; redis-server --version; [ -z "${VK:-}" ] || valkey-server --version
[ -z "${R8:-}" ] || redis8-server --version
echo "== the packed HotKV starts and answers"
p=7379
hotkv-server --port $p --bind 127.0.0.1 --save "" --threads 2 >"$O/hk-sanity.log" 2>&1 &
hp=$!
for _ in $(seq 50); do [ "$(redis-cli -p $p PING 2>/dev/null)" = PONG ] && break; sleep 0.1; done
redis-cli -p $p SET a b; redis-cli -p $p GET a
redis-cli -p $p SHUTDOWN NOSAVE >/dev/null 2>&1; sleep 0.5; kill -9 $hp 2>/dev/null; wait $hp 2>/dev/null
for part in ${PARTS:-inproc scaling}; do
    echo "== $part at $(( $(date +%s) - T0 )) s"
    P0=$(date +%s)
    case $part in
    inproc)
        MAXT=${IP_MAXT:-8} ROUNDS=${IP_ROUNDS:-3} SPLIT=ranges MODE=mix timeout 120 inproc-scaling "${IP_SECS:-2}" 100000 \
            >"$O/inproc.txt" 2>&1
        echo "inproc rc=$?"
        grep -E '^T=|ratio' "$O/inproc.txt" ;;
    scaling)
        rm -rf /tmp/scaling.*
        env KEEP=1 HOTKV_REV="${HOTKV_REV:-unknown}" HOTKV_BIN="$K/w/hotkv-server" GEN_BIN="$K/w/hotkv-benchmark" \
            REDIS_BIN="$K/w/redis-server" ${VK:+VALKEY_SERVER=$K/w/valkey-server} \
            timeout "${SC_LIMIT:-470}" bash bench/scaling.sh -o "$O/scaling.md"
        echo "scaling rc=$?"
        tar czf "$O/logs.tgz" -C /tmp $(cd /tmp && ls -d scaling.* 2>/dev/null) 2>/dev/null ;;
    repl)
        place=(SERVER_CPU=0)
        [ "$(nproc)" -ge 8 ] && place+=("REPLICA_CPUS=2 3" LOAD_CPU=4-7 GEN_THREADS=4)
        env "${place[@]}" HOTKV_REV="${HOTKV_REV:-unknown}" HOTKV_BIN="$K/w/hotkv-server" GEN_BIN="$K/w/hotkv-benchmark" \
            REDIS_BIN="$K/w/redis-server" \
            ROUNDS="${RP_ROUNDS:-2}" timeout "${RP_LIMIT:-240}" bash bench/repl.sh -o "$O/repl.md"
        echo "repl rc=$?" ;;
    cpusplit)
        env HOTKV_REV="${HOTKV_REV:-unknown}" HOTKV_BIN="$K/w/hotkv-server" REDIS_BIN="$K/w/redis-server" \
            ${R8:+REDIS8_SERVER=$K/w/redis8-server} CG=0 NOPF=0 R="${CS_R:-2}" N="${CS_N:-2000000}" \
            timeout "${CS_LIMIT:-200}" bash bench/cpusplit.sh -o "$O/cpusplit.md"
        echo "cpusplit rc=$?" ;;
    sweep)
        place=(SERVER_CPU=0 CLIENT_CPU=0 GEN_THREADS=1)
        [ "$(nproc)" -ge 8 ] && place=(SERVER_CPU=0 CLIENT_CPU=2-5 GEN_THREADS=4)
        [ "$(nproc)" -ge 2 ] && [ "$(nproc)" -lt 8 ] && place=(SERVER_CPU=0 CLIENT_CPU=1 GEN_THREADS=1)
        env "${place[@]}" HOTKV_BIN="$K/w/hotkv-server" REDIS_BIN="$K/w/redis-server" BENCH_BIN="$K/w/hotkv-benchmark" \
            NO_INSTALL=1 PARTS=sweep RATES="${SW_RATES:-50k,75k,100k,110k,120k,130k,140k,150k,160k,180k,200k}" \
            STEP_SECONDS="${SW_STEP:-3}" RUNS=1 OUT="$O/sweep" timeout "${SW_LIMIT:-300}" bash bench/suite.sh
        echo "sweep rc=$?"
        # One file: the device tool brings back only a few files a run.
        tar czf "$O/sweep.tgz" -C "$O" sweep && rm -rf "$O/sweep" ;;
    loopturn)
        env HOTKV_REV="${HOTKV_REV:-unknown}" HOTKV_BIN="$K/w/hotkv-server" GEN_BIN="$K/w/hotkv-benchmark" \
            REDIS_BIN="$K/w/redis-server" ROUNDS="${LT_ROUNDS:-5}" timeout "${LT_LIMIT:-150}" \
            bash bench/loopturn.sh -o "$O/loopturn.md"
        echo "loopturn rc=$?" ;;
    *) echo "unknown part $part" ;;
    esac
    echo "$part took $(( $(date +%s) - P0 )) s"
done
echo "== done in $(( $(date +%s) - T0 )) s"
