#!/usr/bin/env bash
# p1profile.sh - where a server's CPU goes at pipeline 1, HotKV against
# redis-server side by side (issue #21 part 3): how much of it is the
# kernel's per-packet TCP work that any server pays, and how much is left
# for a server to save.
#
# For each server (HotKV --threads 1 and redis-server, pinned to core 0;
# a Redis 8 too when REDIS8_SERVER names its binary), hotkv-benchmark on
# core 1 runs GET of 16-byte values over 100,000 keys at pipeline 1 with 50
# connections; after a second of warm-up, /proc/PID/stat and INFO's
# total_commands_processed give its CPU time per request over SECS
# seconds, then `perf record -g` samples it (software cpu-clock: this
# machine has no hardware counters) for SECS more seconds.  The
# samples are split by the call chains they fall in:
#   send         the reply's send (tcp_sendmsg), without the part below
#   peer rx      inside that send: the loopback delivery of the reply to
#                the client's socket (softirq net_rx_action run by the
#                sender: the client's TCP receive and its wake-up)
#   recv         reading the request (tcp_recvmsg)
#   poll         epoll_wait
#   syscall rest every other sample in the kernel (syscall entry and exit,
#                io_uring's own work, scheduling, timers)
#   user         the server's own code and libraries
# Each share is also given in microseconds per request.  "send" + "peer
# rx" + "recv" is the per-packet TCP work a server cannot batch away at
# pipeline 1 (one request and one reply per client per turn).
#
# usage: bench/p1profile.sh [-o REPORT.md]
#   SECS (5), CONNS (50), ROUNDS (2), HOTKV_BIN (build/hotkv-server),
#   GEN_BIN (build/hotkv-benchmark), REDIS_BIN (redis-server), REDIS8_SERVER
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
SECS=${SECS:-5} CONNS=${CONNS:-50} ROUNDS=${ROUNDS:-2}
HOTKV=$(realpath "${HOTKV_BIN:-build/hotkv-server}") REDIS=${REDIS_BIN:-redis-server}
GEN=$(realpath "${GEN_BIN:-build/hotkv-benchmark}")
RCLI=redis-cli PY=/usr/bin/python3 SERVER_CPU=0 CLIENT_CPU=1
W=$(mktemp -d /tmp/p1profile.XXXXXX)
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/lib.sh
for t in perf taskset "$RCLI"; do command -v "$t" >/dev/null || die "missing tool: $t"; done
[ -x "$HOTKV" ] || die "no $HOTKV (make first)"
[ -x "$GEN" ] || die "no $GEN (make first)"
TICK=$(getconf CLK_TCK)
KINDS="hotkv redis7"
[ -n "${REDIS8_SERVER:-}" ] && KINDS="$KINDS redis8"
RES=$W/results.txt

profile_one() {  # KIND ROUND
    local kind=$1 round=$2 c0 c1 rps
    case $kind in
        hotkv) HOTKV_EXTRA=(--threads 1 --save "" --appendonly no); start_server hotkv "$round" ;;
        redis7) REDIS_ARGS=(--save "" --appendonly no); start_server redis "$round" ;;
        redis8) REDIS_ARGS=(--save "" --appendonly no); REDIS_SAVED=$REDIS; REDIS=$REDIS8_SERVER
                start_server redis "8-$round"; REDIS=$REDIS_SAVED ;;
    esac
    taskset -c "$CLIENT_CPU" "$GEN" -p "$SRV_PORT" -c "$CONNS" --workload set -d 16 -r 100000 -n 200000 -q \
        >/dev/null 2>&1 || die "preload failed ($kind)"
    # One run of the generator: 1 s of warm-up, SECS s of CPU measurement
    # (no perf attached: its call-chain sampling costs the server kernel
    # time), then SECS s under perf for the shares.
    taskset -c "$CLIENT_CPU" "$GEN" -p "$SRV_PORT" -c "$CONNS" -P 1 --test-time $((2 * SECS + 2)) --workload get \
        -d 16 -r 100000 -q --json "$W/gen-$kind-$round.json" >/dev/null 2>&1 &
    local gen=$!
    sleep 1
    c0=$(awk '{print $14 + $15}' "/proc/$SRV_PID/stat")
    local n0 n1
    n0=$("$RCLI" -p "$SRV_PORT" INFO stats | tr -d '\r' | awk -F: '$1 == "total_commands_processed" {print $2}')
    sleep "$SECS"
    c1=$(awk '{print $14 + $15}' "/proc/$SRV_PID/stat")
    n1=$("$RCLI" -p "$SRV_PORT" INFO stats | tr -d '\r' | awk -F: '$1 == "total_commands_processed" {print $2}')
    perf record -q -g -p "$SRV_PID" -o "$W/perf-$kind-$round.data" -- sleep "$SECS" >/dev/null 2>&1 ||
        die "perf record failed (perf_event_paranoid? run as root)"
    wait "$gen" || die "hotkv-benchmark failed ($kind)"
    rps=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["steps"][0]["achieved_rps"])' \
        "$W/gen-$kind-$round.json")
    stop_server "$SRV_PID"
    perf report -i "$W/perf-$kind-$round.data" --children --sort sym --stdio -g none 2>/dev/null \
        >"$W/children-$kind-$round.txt"
    perf report -i "$W/perf-$kind-$round.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null \
        >"$W/self-$kind-$round.txt"
    "$PY" - "$W/children-$kind-$round.txt" "$W/self-$kind-$round.txt" "$kind" "$round" "$rps" \
        "$(( c1 - c0 ))" "$TICK" "$(( n1 - n0 - 1 ))" <<'PYEOF' >>"$RES"
import re, sys
children, selff, kind, rnd, rps, ticks, tick, nreq = sys.argv[1:]
def pct(path, col):
    out = {}
    for line in open(path):
        m = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+\[(.)\]\s+(\S+)", line)
        if m:
            out[m.group(4)] = float(m.group(col))
    return out
ch = pct(children, 1)
user = 0.0
for line in open(selff):
    m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)", line)
    if m and m.group(3) == ".":
        user += float(m.group(1))
send = ch.get("tcp_sendmsg", 0.0)
peer = min(ch.get("net_rx_action", 0.0), send)
recv = ch.get("tcp_recvmsg", 0.0)
poll = ch.get("do_epoll_wait", 0.0)
kernel = 100.0 - user
rest = max(kernel - send - recv - poll, 0.0)
rps = float(rps)
cpu_us = int(ticks) * 1e6 / int(tick) / int(nreq)
print("%s %s rps=%.0f cpu_us=%.3f send=%.1f peer=%.1f recv=%.1f poll=%.1f rest=%.1f user=%.1f"
      % (kind, rnd, rps, cpu_us, send - peer, peer, recv, poll, rest, user))
PYEOF
    log "$(tail -n 1 "$RES")"
}

for r in $(seq "$ROUNDS"); do
    for k in $KINDS; do profile_one "$k" "$r"; done
done

report() {
    echo "# Pipeline 1: where the server's CPU goes (HotKV against redis-server)"
    echo
    echo "Command: \`bench/p1profile.sh${OUT:+ -o $OUT}\` (SECS=$SECS CONNS=$CONNS ROUNDS=$ROUNDS)  "
    echo "HotKV: \`$HOTKV --threads 1\` ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', tree modified')); redis7: $($REDIS --version | awk '{print $3}')${REDIS8_SERVER:+; redis8: $($REDIS8_SERVER --version | awk '{print $3}')}  "
    echo "Machine: $(nproc) cores, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg) at the end; server on core $SERVER_CPU, hotkv-benchmark (GET, 16-byte values, 100,000 keys, $CONNS connections, pipeline 1) on core $CLIENT_CPU.  "
    echo "CPU per request measured without perf attached; then perf cpu-clock samples of the server, split by call chain (bench/p1profile.sh -h); medians over $ROUNDS rounds.  Microseconds per request = share x server CPU per request."
    echo
    echo "| server | req/s | CPU us/req | send | peer rx (in send) | recv | epoll_wait | other kernel | user |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    local k f
    for k in $KINDS; do
        "$PY" - "$RES" "$k" <<'PYEOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.split()[0] == sys.argv[2]]
def med(key):
    return statistics.median(float(w.split("=")[1]) for r in rows for w in r[2:] if w.startswith(key + "="))
cpu = med("cpu_us")
cells = []
for key in ("send", "peer", "recv", "poll", "rest", "user"):
    v = med(key)
    cells.append("%.0f%% (%.2f us)" % (v, v * cpu / 100))
print("| %s | %.0f | %.2f | %s |" % (sys.argv[2], med("rps"), cpu, " | ".join(cells)))
PYEOF
    done
    echo
    echo "Every run:"
    echo
    echo '```'
    cat "$RES"
    echo '```'
}
if [ -n "$OUT" ]; then report >"$OUT"; log "report: $OUT"; else report; fi
