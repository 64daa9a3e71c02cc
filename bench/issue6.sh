#!/usr/bin/env bash
# bench/issue6.sh - HotKV vs redis-server, side by side, in one run (issue #6:
# persistence).
#
# What it measures (for each server, and the ratio HotKV/redis):
#   1. save/load: KEYS keys of VSIZE bytes (DEBUG POPULATE), then SAVE
#      (wall time of the command) and a restart that loads the file (the
#      "DB loaded from disk: X seconds" line both servers log), R runs,
#      median; file sizes.  Target: HotKV at least 1.5x faster both ways.
#   2. SETs during BGSAVE: the same dataset, an open-loop SET load at RATE/s
#      (50 connections, VSIZE-byte values over the KEYS keys) for SNAP_T
#      seconds with one BGSAVE issued 1 s in; reported (median of R runs,
#      servers alternating): p50/p99/p99.9/max over the whole step, the
#      save's duration, fork time (latest_fork_usec) and copy-on-write bytes
#      (rdb_last_cow_size); plus the same load with no BGSAVE as the
#      baseline.  The child shares the server's core (taskset), as a
#      snapshot competes with serving on a fully used machine.
#      Target: HotKV p99 during the snapshot <= redis-server's.
#   3. AOF: closed-loop SET throughput (50 connections, pipeline 1, 16-byte
#      values) with appendonly yes and appendfsync everysec, then always,
#      and with the AOF off, R runs, median.
#
# Method: one server alive at a time, fresh, in its own scratch dir on the
# same filesystem, pinned to core SERVER_CPU; generators on CLIENT_CPU.
# HotKV runs with HOTKV_ARGS (default --threads 1: the one core
# redis-server gets).
#
# Usage: bench/issue6.sh [-o FILE]
# Environment: HOTKV_BIN, HOTKV_ARGS (--threads 1), REDIS_BIN, KEYS (1000000),
#   VSIZE (256), R (3), RATE (10000), SNAP_T (8), AOF_N (200000),
#   PARTS ("saveload snapshot aof"), SERVER_CPU / CLIENT_CPU (0 / 1), KEEP=1.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
die() { echo "issue6.sh: error: $*" >&2; exit 1; }
log() { echo "[issue6 $(date +%H:%M:%S)] $*" >&2; }

CMDLINE=""
for v in HOTKV_BIN HOTKV_ARGS REDIS_BIN KEYS VSIZE R RATE SNAP_T AOF_N PARTS SERVER_CPU CLIENT_CPU; do
    [ -n "${!v+x}" ] && CMDLINE+="$v=$(printf '%q' "${!v}") "
done
CMDLINE+="bench/issue6.sh"; [ $# -gt 0 ] && CMDLINE+="$(printf ' %q' "$@")"
OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) OUT_FILE="${2:-docs/benchmarks/issue6-$(date +%F).md}"; [ $# -ge 2 ] && shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done

HOTKV=$(readlink -f "${HOTKV_BIN:-build/hotkv-server}")
REDIS=$(command -v "${REDIS_BIN:-redis-server}")
BENCH=$(readlink -f build/hotkv-benchmark)
RCLI=${REDIS_CLI:-redis-cli}
PY=/usr/bin/python3
read -r -a HOTKV_BASE <<< "${HOTKV_ARGS:---threads 1}"
KEYS=${KEYS:-1000000}; VSIZE=${VSIZE:-256}; R=${R:-3}; RATE=${RATE:-10000}; SNAP_T=${SNAP_T:-8}
AOF_N=${AOF_N:-200000}
PARTS=${PARTS:-saveload snapshot aof}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
[ -x "$HOTKV" ] || die "no HotKV binary at ${HOTKV_BIN:-build/hotkv-server} (run make)"
[ -x "$BENCH" ] || die "no build/hotkv-benchmark (run make)"
[ -n "$REDIS" ] || die "redis-server not found"
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
W=$(mktemp -d /tmp/hotkv-issue6.XXXXXX)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
cli() { timeout 600 "$RCLI" -h 127.0.0.1 -p "$SRV_PORT" "$@" 2>&1; }
gen() { taskset -c "$CLIENT_CPU" "$@"; }
now() { date +%s.%N; }
info_field() { cli INFO "$1" | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }
wait_bgsave() {
    local i
    for ((i = 0; i < 6000; i++)); do
        [ "$(info_field persistence rdb_bgsave_in_progress)" = 0 ] && return 0
        sleep 0.05
    done
    return 1
}
# set_args NAME DIR EXTRA... -> HOTKV_EXTRA / REDIS_ARGS for start_server
set_args() {
    local name=$1 dir=$2; shift 2
    REDIS_ARGS=(--save "" --appendonly no --enable-debug-command yes --dir "$dir" "$@")
    HOTKV_EXTRA=("${HOTKV_BASE[@]}" --save "" --appendonly no --enable-debug-command yes --dir "$dir" "$@")
}

REPORT="$W/report.md"
{
    echo "# Issue 6 benchmarks: save/load, SETs during BGSAVE, AOF ($(date +%F))"
    echo
    echo "Command: \`$CMDLINE\`  "
    echo "HotKV: \`$HOTKV ${HOTKV_BASE[*]}\`; redis: \`$($REDIS --version | cut -d' ' -f1-3)\`  "
    echo "Machine: $(nproc) cores, load at start $(cut -d' ' -f1-3 /proc/loadavg); server on core $SERVER_CPU, generators on core $CLIENT_CPU; files on $(df -h "$W" | awk 'NR==2 {print $1}')."
    echo
} > "$REPORT"

# ---------------------------------------------------------- 1. save/load
if want saveload; then
    for s in hotkv redis; do
        d="$W/sl-$s"; mkdir -p "$d"
        : > "$W/save-$s"; : > "$W/load-$s"
        for ((i = 0; i < R; i++)); do
            rm -f "$d/dump.rdb"
            set_args "$s" "$d"
            start_server "$s" "save$i"
            cli DEBUG POPULATE "$KEYS" key "$VSIZE" >/dev/null
            t0=$(now); out=$(cli SAVE); t1=$(now)
            [ "$out" = OK ] || log "$s SAVE: $out"
            echo "$t1 - $t0" | bc -l >> "$W/save-$s"
            stat -c %s "$d/dump.rdb" > "$W/size-$s"
            stop_server "$SRV_PID"
            set_args "$s" "$d"
            start_server "$s" "load$i"
            n=$(cli DBSIZE)
            [ "$n" = "$KEYS" ] || log "$s loaded $n keys, expected $KEYS"
            sec=$(grep -o 'DB loaded from disk: [0-9.]* seconds' "$SRV_LOG" | awk '{print $5}')
            echo "${sec:-nan}" >> "$W/load-$s"
            stop_server "$SRV_PID"
        done
    done
fi

# ----------------------------------------------------- 2. snapshot load
if want snapshot; then
    for ((i = 0; i < R; i++)); do
        for s in hotkv redis; do
            for mode in base bgsave; do
                d="$W/sn-$s-$mode"; mkdir -p "$d"
                set_args "$s" "$d"
                start_server "$s" "snap-$mode-$i"
                cli DEBUG POPULATE "$KEYS" key "$VSIZE" >/dev/null
                gen "$BENCH" -p "$SRV_PORT" --clients 50 --threads 1 -q --key-space "$KEYS" --data-size "$VSIZE" \
                    --command "SET key:__rand_int__ __data__" --rate "$RATE" --test-time "$SNAP_T" \
                    --json "$W/sn-$s-$mode-$i.json" > "$W/sn-$s-$mode-$i.txt" 2>&1 &
                bp=$!
                if [ "$mode" = bgsave ]; then
                    sleep 1
                    out=$(cli BGSAVE)
                    case "$out" in *started*) ;; *) log "$s BGSAVE: $out" ;; esac
                    wait_bgsave || log "$s: BGSAVE did not finish"
                    echo "$(info_field persistence rdb_last_bgsave_time_sec) $(info_field stats latest_fork_usec) $(info_field persistence rdb_last_cow_size) $(info_field persistence rdb_last_bgsave_status)" \
                        > "$W/sn-$s-$i.meta"
                fi
                wait "$bp"
                stop_server "$SRV_PID"
                rm -rf "$d"
            done
        done
    done
fi

# ------------------------------------------------------------------ 3. aof
if want aof; then
    for s in hotkv redis; do
        for pol in off everysec always; do
            : > "$W/aof-$s-$pol.rps"
            for ((i = 0; i < R; i++)); do
                d="$W/aof-$s-$pol-$i"; mkdir -p "$d"
                if [ "$pol" = off ]; then set_args "$s" "$d"
                else set_args "$s" "$d" --appendonly yes --appendfsync "$pol"; fi
                start_server "$s" "aof-$pol-$i"
                gen "$BENCH" -p "$SRV_PORT" --clients 50 --threads 1 -q --requests "$AOF_N" --data-size 16 \
                    --key-space 100000 --workload set --json "$W/aof-$s-$pol-$i.json" > /dev/null 2>&1
                $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["steps"][0]; print(s["achieved_rps"], s["p99_ms"], s["errors"] + s["error_replies"])' \
                    "$W/aof-$s-$pol-$i.json" >> "$W/aof-$s-$pol.rps" 2>/dev/null || log "$s aof $pol: no result"
                stop_server "$SRV_PID"
                rm -rf "$d"
            done
        done
    done
fi

# -------------------------------------------------------------- report
$PY - "$W" "$PARTS" "$KEYS" "$VSIZE" "$RATE" "$SNAP_T" "$R" >> "$REPORT" <<'EOF'
import json, os, statistics, sys
W, parts, KEYS, VSIZE, RATE, SNAP_T, R = sys.argv[1], sys.argv[2].split(), *sys.argv[3:]
def nums(p):
    try:
        return [float(x) for x in open(p).read().split() if x != "nan"]
    except Exception:
        return []
def med(p):
    v = nums(p)
    return statistics.median(v) if v else float("nan")
def ratio(a, b):
    return a / b if b and a == a and b == b else float("nan")
if "saveload" in parts:
    print("## 1. Save and load: %s keys of %s bytes (median of %s)\n" % (KEYS, VSIZE, R))
    print("| | HotKV | redis | speed-up (redis time / HotKV time) |")
    print("|---|---|---|---|")
    hs, rs = med(os.path.join(W, "save-hotkv")), med(os.path.join(W, "save-redis"))
    hl, rl = med(os.path.join(W, "load-hotkv")), med(os.path.join(W, "load-redis"))
    print("| SAVE (s) | %.3f | %.3f | %.2fx |" % (hs, rs, ratio(rs, hs)))
    print("| load at start-up (s) | %.3f | %.3f | %.2fx |" % (hl, rl, ratio(rl, hl)))
    try:
        hz, rz = int(open(os.path.join(W, "size-hotkv")).read()), int(open(os.path.join(W, "size-redis")).read())
        print("| file size (MB) | %.1f | %.1f | %.2f (HotKV/redis) |" % (hz / 1e6, rz / 1e6, hz / rz))
    except Exception:
        pass
    print()
if "snapshot" in parts:
    print("## 2. Open-loop SET at %s/s over %s keys, %s s per run, one BGSAVE at t = 1 s (median of %s runs)\n" % (RATE, KEYS, SNAP_T, R))
    print("| server | load | achieved/s | p50 ms | p99 ms | p99.9 ms | max ms | save s | fork us | CoW MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    p99 = {}
    for s in ("hotkv", "redis"):
        metas = []
        for i in range(int(R)):
            try:
                m = open(os.path.join(W, "sn-%s-%d.meta" % (s, i))).read().split()
                metas.append([float(m[0]), float(m[1]), float(m[2]) / 1e6])
            except Exception:
                pass
        for mode in ("base", "bgsave"):
            rows = []
            for i in range(int(R)):
                try:
                    d = json.load(open(os.path.join(W, "sn-%s-%s-%d.json" % (s, mode, i))))
                    rows.append(d["summary"][0])
                except Exception:
                    pass
            if not rows:
                print("| %s | %s | (no result) |||||||" % (s, mode))
                continue
            m = lambda k: statistics.median(r[k] for r in rows)
            p99[(s, mode)] = m("p99_ms")
            extra = "| | | |"
            if mode == "bgsave" and metas:
                extra = "| %.0f | %.0f | %.1f |" % tuple(statistics.median(x[j] for x in metas) for j in range(3))
            print("| %s | %s | %.0f | %.3f | %.3f | %.3f | %.3f %s" % (s, "no save" if mode == "base" else "one BGSAVE", m("achieved_rps"), m("p50_ms"), m("p99_ms"), m("p999_ms"), m("max_ms"), extra))
    if ("hotkv", "bgsave") in p99 and ("redis", "bgsave") in p99:
        print("\np99 of runs with a snapshot, HotKV/redis: **%.2f**; per-run p99s in the scratch JSON." % ratio(p99[("hotkv", "bgsave")], p99[("redis", "bgsave")]))
    print()
if "aof" in parts:
    print("## 3. SET throughput with the AOF (50 connections, pipeline 1, median of %s)\n" % R)
    print("| appendfsync | HotKV SET/s | redis SET/s | ratio | HotKV p99 ms | redis p99 ms |")
    print("|---|---|---|---|---|---|")
    for pol in ("off", "everysec", "always"):
        def rows(s):
            try:
                return [l.split() for l in open(os.path.join(W, "aof-%s-%s.rps" % (s, pol))) if l.strip()]
            except Exception:
                return []
        h, r = rows("hotkv"), rows("redis")
        hm = statistics.median(float(x[0]) for x in h) if h else float("nan")
        rm = statistics.median(float(x[0]) for x in r) if r else float("nan")
        hp = statistics.median(float(x[1]) for x in h) if h else float("nan")
        rp = statistics.median(float(x[1]) for x in r) if r else float("nan")
        errs = sum(int(float(x[2])) for x in h + r)
        print("| %s | %.0f | %.0f | %.2f | %.3f | %.3f |%s" % (pol, hm, rm, ratio(hm, rm), hp, rp, " (errors: %d)" % errs if errs else ""))
    print()
EOF
cat "$REPORT"
if [ -n "$OUT_FILE" ]; then
    mkdir -p "$(dirname "$OUT_FILE")"
    cp "$REPORT" "$OUT_FILE"
    log "report written to $OUT_FILE"
fi
