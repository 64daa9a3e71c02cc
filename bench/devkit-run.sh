#!/usr/bin/env bash
# devkit-run.sh - on a lent many-core machine, from the repo root with
# .devkit/ carried (bench/devkit.sh packs it): machine facts, a check that
# the packed servers start, bench/inproc_scaling's binary at 1, 2, 4 ...
# IP_MAXT threads, then bench/scaling.sh against HotKV, redis-server and
# (VK=1) Valkey.  Everything goes to $OUT (the device tool's folder that
# comes back): run.log, hk-sanity.log, inproc.txt, scaling.md/.svg and
# logs.tgz (the servers' logs and the load generator's JSON).
#
# Env: VK=1 (Valkey packed), HOTKV_REV (the revision the report names),
# IP_MAXT (8), IP_ROUNDS (3), IP_SECS (2), SC_LIMIT (470 s for scaling.sh),
# and scaling.sh's own THREADS, TESTS, SECS, KEYS.  On 16 cores the whole
# run took 315 s (docs/benchmarks/scaling-16core-2026-12-04.md).
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
echo "== the packed HotKV starts and answers"
p=7379
hotkv-server --port $p --bind 127.0.0.1 --save "" --threads 2 >"$O/hk-sanity.log" 2>&1 &
hp=$!
for _ in $(seq 50); do [ "$(redis-cli -p $p PING 2>/dev/null)" = PONG ] && break; sleep 0.1; done
redis-cli -p $p SET a b; redis-cli -p $p GET a
redis-cli -p $p SHUTDOWN NOSAVE >/dev/null 2>&1; sleep 0.5; kill -9 $hp 2>/dev/null; wait $hp 2>/dev/null
echo "== in-process scaling at $(( $(date +%s) - T0 )) s"
MAXT=${IP_MAXT:-8} ROUNDS=${IP_ROUNDS:-3} SPLIT=ranges MODE=mix timeout 120 inproc-scaling "${IP_SECS:-2}" 100000 \
    >"$O/inproc.txt" 2>&1
echo "inproc rc=$?"
grep -E '^T=|ratio' "$O/inproc.txt"
echo "== scaling.sh at $(( $(date +%s) - T0 )) s"
rm -rf /tmp/scaling.*
S0=$(date +%s)
env KEEP=1 HOTKV_REV="${HOTKV_REV:-unknown}" HOTKV_BIN="$K/w/hotkv-server" GEN_BIN="$K/w/hotkv-benchmark" \
    REDIS_BIN="$K/w/redis-server" ${VK:+VALKEY_SERVER=$K/w/valkey-server} \
    timeout "${SC_LIMIT:-470}" bash bench/scaling.sh -o "$O/scaling.md"
echo "scaling rc=$? in $(( $(date +%s) - S0 )) s"
tar czf "$O/logs.tgz" -C /tmp $(cd /tmp && ls -d scaling.* 2>/dev/null) 2>/dev/null
echo "== done in $(( $(date +%s) - T0 )) s"
