#!/usr/bin/env bash
# bench/cpusplit.sh - where a request's server CPU goes, user space against
# kernel, HotKV and redis-server side by side (issue #21 part 2).
#
# For each server (HotKV --threads 1; Debian's redis-server; and a Redis 8
# when REDIS8_SERVER names its binary - built by hand outside the repo):
#   1. CPU split: the server pinned to SERVER_CPU with KEYS keys of 256 bytes
#      (key:%012d, as redis-benchmark -r names them), redis-benchmark on
#      CLIENT_CPU (50 connections, pipeline 16, -r KEYS, -d 256) runs GET
#      and SET, N requests each.  The server's utime and stime
#      (/proc/PID/stat, clock ticks) before and after give user and kernel
#      microseconds per request; requests per server-CPU-second is their
#      inverse.  Median of R rounds (servers alternate per round).
#   2. User-space instructions: the same requests under valgrind
#      --tool=callgrind (CG_KEYS keys preloaded, a warm-up, counters zeroed,
#      CG_N requests, dump): Ir per request, the part of the user time that
#      does not depend on the machine's noise.
#   3. Side by side (PAIR=1, the default): HotKV and the last other server
#      (Redis 8 when given, else redis-server) on SERVER_CPU at the same
#      time, one redis-benchmark each on CLIENT_CPU, so that both see the
#      host in the same state (run one after the other, the two servers'
#      figures move with the host by more than the difference measured).
#      The other server's N is scaled by the req/s of step 1, so that both
#      runs end together.  Medians of R rounds.
# With NOPF=1 (the default) the same HotKV binary also runs with
# HOTKV_NO_PREFETCH=1 (kind hotkv-nopf): pipelined keys not looked up
# ahead (net/worker.c prefetch_ahead), a same-binary A/B of that step.
# The report has one row per server and command, and HotKV's ratios to each
# other server (requests per CPU-second: higher is better for HotKV).
#
# Usage: bench/cpusplit.sh [-o [FILE]]   (default docs/benchmarks/cpusplit-DATE.md)
# Environment: HOTKV_BIN (build/hotkv-server), REDIS_BIN (redis-server),
#   REDIS8_SERVER (optional), N (2000000), R (3), KEYS (1000000),
#   CG_N (100000), CG_KEYS (100000), SERVER_CPU / CLIENT_CPU (0 / 1), KEEP=1,
#   NOPF (1), PAIR (1), CG (1; 0 skips step 2, for a machine without
#   valgrind: the Ir columns then read "-"), HOTKV_REV (the revision the
#   report names; default from git).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
START_TS=$(date +%s)
die() { echo "cpusplit.sh: error: $*" >&2; exit 1; }
log() { echo "[cpusplit $(date +%H:%M:%S)] $*" >&2; }

OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then OUT_FILE=$2; shift
            else OUT_FILE=docs/benchmarks/cpusplit-$(date +%F).md; fi ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done

. "$ROOT/bench/lib.sh"
cg_bench_env cpusplit
N=${N:-2000000}; R=${R:-3}; KEYS=${KEYS:-1000000}; CG_KEYS=${CG_KEYS:-100000}  # CG_N: cg_bench_env
CG_N=$(( (CG_N + 15) / 16 * 16 ))
REDIS7=$REDIS
KINDS=(hotkv)
[ "${NOPF:-1}" = 1 ] && KINDS+=(hotkv-nopf)
KINDS+=(redis7)
if [ -n "${REDIS8_SERVER:-}" ]; then
    [ -x "$REDIS8_SERVER" ] || die "REDIS8_SERVER is not an executable: $REDIS8_SERVER"
    KINDS+=(redis8)
else
    log "REDIS8_SERVER not set: comparing with Debian's redis-server only"
fi
TICK=$(getconf CLK_TCK)
REV=${HOTKV_REV:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)}

bin_of() { case $1 in hotkv|hotkv-nopf) echo "$HOTKV" ;; redis7) echo "$REDIS7" ;; redis8) echo "$REDIS8_SERVER" ;; esac; }
version_of() {
    case $1 in
        hotkv) echo "HotKV $REV, --threads 1" ;;
        hotkv-nopf) echo "HotKV $REV, --threads 1, HOTKV_NO_PREFETCH=1" ;;
        *) "$(bin_of "$1")" --version | head -1 ;;
    esac
}

# start KIND LABEL [WRAPPER...]: the server of KIND (redis kinds run with
# start_server's redis settings and their own binary).
start() {
    local kind=$1 label=$2; shift 2
    if [ "$kind" = hotkv ]; then start_server hotkv "$label" "$@"
    elif [ "$kind" = hotkv-nopf ]; then HOTKV_NO_PREFETCH=1 start_server hotkv "nopf-$label" "$@"
    else REDIS=$(bin_of "$kind") start_server "$kind" "$label" "$@"; fi
}

cpu_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }

run() {  # PORT TEST N: redis-benchmark on the client core, quiet CSV
    client "$RB" -h 127.0.0.1 -p "$1" -t "$2" -n "$3" -r "$KEYS" -d 256 -P 16 -c 50 --csv 2>/dev/null
}

preload() {  # PORT NKEYS
    client "$PY" "$ROOT/bench/memkey.py" "$1" "$2" 256 >/dev/null || die "preload failed on port $1"
}

declare -A RPS USR SYS IR
for ((round = 1; round <= R; round++)); do
    order=("${KINDS[@]}")
    if ((round % 2 == 0)); then order=(); for ((i = ${#KINDS[@]} - 1; i >= 0; i--)); do order+=("${KINDS[i]}"); done; fi
    for kind in "${order[@]}"; do
        start "$kind" "r$round"
        pid=$SRV_PID port=$SRV_PORT
        preload "$port" "$KEYS"
        for t in get set; do
            run "$port" "$t" $((N / 10)) >/dev/null   # warm-up
            read -r u0 s0 < <(cpu_ticks "$pid")
            out=$(run "$port" "$t" "$N")
            read -r u1 s1 < <(cpu_ticks "$pid")
            rps=$(echo "$out" | awk -F'"' 'NR == 2 {print $4}')
            [ -n "$rps" ] || die "no redis-benchmark result for $kind $t"
            RPS[$kind,$t]+="$rps "
            USR[$kind,$t]+="$(awk -v a="$u0" -v b="$u1" -v n="$N" -v hz="$TICK" 'BEGIN {printf "%.4f", (b - a) / hz * 1e6 / n}') "
            SYS[$kind,$t]+="$(awk -v a="$s0" -v b="$s1" -v n="$N" -v hz="$TICK" 'BEGIN {printf "%.4f", (b - a) / hz * 1e6 / n}') "
            log "round $round $kind $t: $rps req/s, user $((u1 - u0)) ticks, sys $((s1 - s0)) ticks"
        done
        stop_server "$pid"
    done
done

med() { tr ' ' '\n' | grep -v '^$' | median; }
per_req() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$TICK" 'BEGIN {printf "%.4f", (b - a) / hz * 1e6 / n}'; }

declare -A PU PS
OTHER=${KINDS[${#KINDS[@]} - 1]}
if [ "${PAIR:-1}" = 1 ]; then
    for ((round = 1; round <= R; round++)); do
        start hotkv "pair$round"; hpid=$SRV_PID hport=$SRV_PORT
        start "$OTHER" "pair$round"; opid=$SRV_PID oport=$SRV_PORT
        preload "$hport" "$KEYS"
        preload "$oport" "$KEYS"
        for t in get set; do
            on=$(awk -v n="$N" -v a="$(echo "${RPS[hotkv,$t]}" | med)" -v b="$(echo "${RPS[$OTHER,$t]}" | med)" \
                'BEGIN {printf "%d", n * b / a}')
            run "$hport" "$t" $((N / 10)) >/dev/null & j=$!
            run "$oport" "$t" $((on / 10)) >/dev/null; wait "$j"   # warm-up
            read -r hu0 hs0 < <(cpu_ticks "$hpid"); read -r ou0 os0 < <(cpu_ticks "$opid")
            run "$hport" "$t" "$N" >/dev/null & j=$!
            run "$oport" "$t" "$on" >/dev/null; wait "$j"
            read -r hu1 hs1 < <(cpu_ticks "$hpid"); read -r ou1 os1 < <(cpu_ticks "$opid")
            PU[hotkv,$t]+="$(per_req "$hu0" "$hu1" "$N") "; PS[hotkv,$t]+="$(per_req "$hs0" "$hs1" "$N") "
            PU[$OTHER,$t]+="$(per_req "$ou0" "$ou1" "$on") "; PS[$OTHER,$t]+="$(per_req "$os0" "$os1" "$on") "
            log "pair round $round $t: hotkv user+sys $((hu1 - hu0))+$((hs1 - hs0)) ticks / $N, $OTHER $((ou1 - ou0))+$((os1 - os0)) ticks / $on"
        done
        stop_server "$hpid"
        stop_server "$opid"
    done
fi

for kind in "${KINDS[@]}"; do
    if [ "${CG:-1}" = 0 ]; then IR[$kind,get]=-; IR[$kind,set]=-; continue; fi
    start "$kind" cg valgrind --tool=callgrind --callgrind-out-file="$W/cg-$kind.out" --collect-atstart=yes
    pid=$SRV_PID port=$SRV_PORT
    preload "$port" "$CG_KEYS"
    n=1
    for t in get set; do
        IR[$kind,$t]=$(KEYS=$CG_KEYS cg_measure "$pid" "$port" "$t" "$W/cg-$kind.out" "$n")
        log "callgrind $kind $t: ${IR[$kind,$t]} Ir/request"
        n=$((n + 1))
    done
    stop_server "$pid"
done

report() {
    echo "# Server CPU per request, user space and kernel: HotKV against redis-server ($(date '+%Y-%m-%d %H:%M'))"
    echo
    echo "Command: \`bench/cpusplit.sh${OUT_FILE:+ -o $OUT_FILE}\`$( [ -n "${REDIS8_SERVER:-}" ] && echo " with REDIS8_SERVER set")"
    echo
    for kind in "${KINDS[@]}"; do echo "- $kind: $(version_of "$kind")"; done
    echo "- host: $(nproc) CPUs, $(uname -r); server on core $SERVER_CPU, redis-benchmark on core $CLIENT_CPU; one server alive at a time (but in the side-by-side table)"
    echo "- settings: N=$N R=$R KEYS=$KEYS (256-byte values), pipeline 16, 50 connections; callgrind CG_N=$CG_N CG_KEYS=$CG_KEYS; runtime $(( $(date +%s) - START_TS ))s"
    echo
    echo "CPU from /proc/PID/stat (utime, stime) over the measured run, medians of $R; Ir: callgrind, user space only, all server threads."
    echo
    echo "| server | command | req/s | user us/req | kernel us/req | total us/req | req per CPU-second | Ir/req |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|"
    declare -A TOT
    for t in get set; do
        for kind in "${KINDS[@]}"; do
            local rps u s tot
            rps=$(echo "${RPS[$kind,$t]}" | med); u=$(echo "${USR[$kind,$t]}" | med); s=$(echo "${SYS[$kind,$t]}" | med)
            tot=$(awk -v a="$u" -v b="$s" 'BEGIN {printf "%.3f", a + b}')
            TOT[$kind,$t]=$tot
            printf '| %s | %s | %.0f | %.3f | %.3f | %s | %.0f | %s |\n' "$kind" "${t^^}" "$rps" "$u" "$s" "$tot" \
                "$(awk -v x="$tot" 'BEGIN {print (x > 0 ? 1e6 / x : 0)}')" "${IR[$kind,$t]}"
        done
    done
    echo
    echo "HotKV's requests per server-CPU-second over the other server's (higher is better for HotKV), and its share of each part:"
    echo
    echo "| against | command | per CPU-second | user time | kernel time | Ir |"
    echo "|---|---|---:|---:|---:|---:|"
    for kind in "${KINDS[@]}"; do
        [ "$kind" = hotkv ] && continue
        for t in get set; do
            local hu hs ou os
            hu=$(echo "${USR[hotkv,$t]}" | med); hs=$(echo "${SYS[hotkv,$t]}" | med)
            ou=$(echo "${USR[$kind,$t]}" | med); os=$(echo "${SYS[$kind,$t]}" | med)
            awk -v k="$kind" -v t="${t^^}" -v ht="${TOT[hotkv,$t]}" -v ot="${TOT[$kind,$t]}" -v hu="$hu" -v ou="$ou" \
                -v hs="$hs" -v os="$os" -v hi="${IR[hotkv,$t]}" -v oi="${IR[$kind,$t]}" \
                'BEGIN {printf "| %s | %s | %.2fx | %.2fx | %.2fx | %s |\n", k, t, ot / ht, hu / ou, hs / os, hi == "-" ? "-" : sprintf("%.2fx", hi / oi)}'
        done
    done
    [ "${PAIR:-1}" = 1 ] || return 0
    echo
    echo "Side by side: HotKV and $OTHER on core $SERVER_CPU at the same time, a redis-benchmark for each on core $CLIENT_CPU (the same settings; $OTHER's N scaled so that both end together); CPU per request, medians of $R rounds:"
    echo
    echo "| command | hotkv user | hotkv kernel | hotkv total | $OTHER user | $OTHER kernel | $OTHER total | HotKV per CPU-second over $OTHER |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for t in get set; do
        awk -v t="${t^^}" -v hu="$(echo "${PU[hotkv,$t]}" | med)" -v hs="$(echo "${PS[hotkv,$t]}" | med)" \
            -v ou="$(echo "${PU[$OTHER,$t]}" | med)" -v os="$(echo "${PS[$OTHER,$t]}" | med)" \
            'BEGIN {printf "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2fx |\n", t, hu, hs, hu + hs, ou, os, ou + os, (ou + os) / (hu + hs)}'
    done
    echo
    echo "Per round (HotKV's per CPU-second over $OTHER's): $(for t in get set; do
        printf '%s' "${t^^}"
        paste -d' ' <(echo "${PU[hotkv,$t]}" | tr ' ' '\n' | grep -v '^$') <(echo "${PS[hotkv,$t]}" | tr ' ' '\n' | grep -v '^$') \
            <(echo "${PU[$OTHER,$t]}" | tr ' ' '\n' | grep -v '^$') <(echo "${PS[$OTHER,$t]}" | tr ' ' '\n' | grep -v '^$') |
            awk '{printf " %.2f", ($3 + $4) / ($1 + $2)}'
        printf '; '
    done)"
}
report | tee ${OUT_FILE:+"$OUT_FILE"}
log "done in $(( $(date +%s) - START_TS ))s"
