#!/usr/bin/env bash
# scaling.sh - throughput against server threads, HotKV next to redis-server
# (and Valkey with io-threads when VALKEY_SERVER names one), on one machine.
#
# The cores are split in two halves: the server is pinned to the first half
# (cores 0..S-1, S = nproc/2, at least 1) and hotkv-benchmark to the second
# (with one load thread per core there).  On a machine with fewer than 4
# cores there is no room for that: the server then gets the first T cores
# it runs threads on and the load generator the last core, shared with the
# server's once T reaches it (the report says so).
#
# For every thread count T in THREADS (default 1 2 4 ... S): HotKV with
# --threads T; redis-server once (it has one thread); Valkey, if given, with
# --io-threads T.  Each server runs every test of TESTS for SECS seconds
# (closed loop, hotkv-benchmark --test-time), after a preload of KEYS keys:
#   get1 / get16   GET at pipeline 1 / 16
#   set1 / set16   SET of 16-byte values at pipeline 1 / 16
#   evalsha16      EVALSHA of a rate-limiter-like script over 3 keys of one
#                  hash slot (INCR + PEXPIRE, SET, GET), pipeline 16
#   fcall16        the same script as a function (FUNCTION LOAD, FCALL)
# Connections: CONNS (default 50, or 32 per server thread if more).
# Output: a Markdown report (-o FILE, else stdout) with requests/s per test
# and server, HotKV's speed-up over its own 1-thread figure and its ratio to
# redis-server, and an SVG plot of requests/s against threads next to it
# (FILE with .svg for .md).  On 16 cores the default run took 289 s
# (docs/benchmarks/scaling-16core-2026-12-04.md).  Cells where hotkv-benchmark
# reports its own threads saturated are marked *; p99 latencies and the
# server's CPU (cores busy, from /proc/PID/stat) are tabled too.
#
# usage: bench/scaling.sh [-o REPORT.md]
#   THREADS, TESTS (get1 get16 set1 set16 evalsha16 fcall16), SECS (5), KEYS
#   (1000000), CONNS, HOTKV_BIN (build/hotkv-server), GEN_BIN
#   (build/hotkv-benchmark), REDIS_BIN (redis-server), VALKEY_SERVER (none),
#   HOTKV_REV (the revision the report names; default from git), KEEP=1
#   (keep the scratch dir with the servers' logs)
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
NCPU=$(nproc)
S=$((NCPU / 2)); [ "$S" -ge 1 ] || S=1
if [ -z "${THREADS:-}" ]; then
    THREADS=1; t=2
    while [ "$t" -le "$S" ]; do THREADS="$THREADS $t"; t=$((t * 2)); done
fi
TESTS=${TESTS:-get1 get16 set1 set16 evalsha16 fcall16}
SECS=${SECS:-5} KEYS=${KEYS:-1000000}
HOTKV=$(realpath "${HOTKV_BIN:-build/hotkv-server}") GEN=$(realpath "${GEN_BIN:-build/hotkv-benchmark}")
REDIS=${REDIS_BIN:-redis-server} VALKEY=${VALKEY_SERVER:-}
RCLI=redis-cli PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || die "no python3"
# the revision measured: HOTKV_REV when the tree is a copy without git
REV=${HOTKV_REV:-$( { git rev-parse --short HEAD && { git diff --quiet || echo ', tree modified'; }; } 2>/dev/null | tr -d '\n' || true)}
[ -x "$HOTKV" ] || die "no $HOTKV (make first)"
[ -x "$GEN" ] || die "no $GEN (make first)"
command -v "$REDIS" >/dev/null || die "no $REDIS"
[ -z "$VALKEY" ] || [ -x "$VALKEY" ] || die "VALKEY_SERVER=$VALKEY is not executable"
W=$(mktemp -d /tmp/scaling.XXXXXX)
. bench/lib.sh

# cores: the server's for T threads, and the load generator's
server_cores() {
    local t=$1
    if [ "$NCPU" -ge 4 ]; then echo "0-$((S - 1))"
    elif [ "$t" -ge "$NCPU" ]; then echo "0-$((NCPU - 1))"
    else echo "0-$((t - 1))"; fi
}
if [ "$NCPU" -ge 4 ]; then GEN_CORES="$S-$((NCPU - 1))" GEN_THREADS=$((NCPU - S))
else GEN_CORES=$((NCPU - 1)) GEN_THREADS=1; fi

SCRIPT='local c = redis.call("INCR", KEYS[1]) if c == 1 then redis.call("PEXPIRE", KEYS[1], 1000) end redis.call("SET", KEYS[2], ARGV[1]) return redis.call("GET", KEYS[3])'
LIB="#!lua name=scaling
redis.register_function('rl', function(KEYS, ARGV) $SCRIPT end)"
RES=$W/results.txt

# utime + stime of process PID in clock ticks (/proc/PID/stat fields 14, 15;
# the name field may hold spaces, so count from after its ')')
HZ=$(getconf CLK_TCK)
cpu_ticks() { local st; st=$(cat "/proc/$1/stat"); st=${st##*) }; set -- $st; echo $(( ${12} + ${13} )); }

# one_server KIND LABEL THREADS ARGS... : start, preload, run every test, stop
one_server() {
    local kind=$1 label=$2 t=$3; shift 3
    local port cores
    port=$(free_port) || die "no free port"
    cores=$(server_cores "$t")
    mkdir -p "$W/run/$label"
    (cd "$W/run/$label" && exec taskset -c "$cores" "$@" --port "$port" --bind 127.0.0.1 --save "" --appendonly no) \
        >"$W/$label.log" 2>&1 </dev/null &
    local pid=$!
    SERVER_PIDS+=("$pid")
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$($RCLI -p "$port" PING 2>/dev/null)" = PONG ] && break
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$W/$label.log" >&2; die "$label exited at start"; }
        sleep 0.1
    done
    log "$label: preload $KEYS keys (server cores $cores, load cores $GEN_CORES)"
    taskset -c "$GEN_CORES" "$GEN" -p "$port" --threads "$GEN_THREADS" -c 50 -P 64 --key-space "$KEYS" \
        --key-pattern sequential --requests "$KEYS" --command 'SET key:__rand_int__ __data__' -d 16 -q >/dev/null
    local sha
    sha=$($RCLI -p "$port" SCRIPT LOAD "$SCRIPT")
    $RCLI -p "$port" FUNCTION LOAD REPLACE "$LIB" >/dev/null
    local conns=${CONNS:-$((32 * t > 50 ? 32 * t : 50))}
    local test args
    for test in $TESTS; do
        case $test in
            get1) args=(--workload get -P 1) ;;
            get16) args=(--workload get -P 16) ;;
            set1) args=(--workload set -d 16 -P 1) ;;
            set16) args=(--workload set -d 16 -P 16) ;;
            evalsha16) args=(--command "EVALSHA $sha 3 rl:{__rand_int__}:n rl:{__rand_int__}:v rl:{__rand_int__}:v x" -P 16) ;;
            fcall16) args=(--command "FCALL rl 3 rl:{__rand_int__}:n rl:{__rand_int__}:v rl:{__rand_int__}:v x" -P 16) ;;
            *) die "unknown test $test" ;;
        esac
        local c0 c1 t0 t1
        c0=$(cpu_ticks "$pid") t0=$(date +%s%N)
        taskset -c "$GEN_CORES" "$GEN" -p "$port" --threads "$GEN_THREADS" -c "$conns" --key-space "$KEYS" \
            --test-time "$SECS" "${args[@]}" --json "$W/$label-$test.json" -q >/dev/null 2>>"$W/gen.err" ||
            die "hotkv-benchmark failed ($label $test)"
        c1=$(cpu_ticks "$pid") t1=$(date +%s%N)
        # the server's CPU over the run, in cores busy (user + system)
        local scores
        scores=$(awk -v d=$((c1 - c0)) -v hz="$HZ" -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", d / hz / (ns / 1e9) }')
        local rps errs p99 gcpu sat
        read -r rps errs p99 gcpu sat < <("$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][0]; print(int(s["achieved_rps"]), s["errors"] + s["error_replies"], s["p99_ms"], round(s["generator_cpu_pct"]), int(bool(s["generator_saturated"])))' "$W/$label-$test.json")
        [ "$errs" = 0 ] || die "$label $test: $errs errors"
        log "$label $test: $rps requests/s, p99 $p99 ms, server $scores cores busy, load generator at $gcpu% CPU"
        echo "$kind $t $test $rps $p99 $gcpu $sat $scores" >>"$RES"
    done
    stop_server "$pid"
}

for t in $THREADS; do
    one_server hotkv "hotkv-t$t" "$t" "$HOTKV" --threads "$t"
    [ -z "$VALKEY" ] || one_server valkey "valkey-t$t" "$t" "$VALKEY" --io-threads "$t"
done
one_server redis redis 1 "$REDIS"

SVG=
[ -n "$OUT" ] && SVG=${OUT%.md}.svg
"$PY" - "$RES" "$NCPU" "$S" "$GEN_CORES" "$GEN_THREADS" "$SECS" "$KEYS" "$TESTS" "${SVG:-}" \
    "${REV:-unknown}" "$($REDIS --version | awk '{print $3}')" \
    "${VALKEY:+$($VALKEY --version | awk '{print $3}')}" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$W/report.md" <<'PYEOF'
import sys
res, ncpu, s, gcores, gthreads, secs, keys, tests, svg, rev, rver, vver, load = sys.argv[1:14]
tests = tests.split()
data, lat, busy, saturated = {}, {}, {}, set()
for line in open(res):
    kind, t, test, rps, p99, gcpu, sat, score = line.split()
    busy[(kind, int(t), test)] = float(score)
    data[(kind, int(t), test)] = int(rps)
    lat[(kind, int(t), test)] = float(p99)
    if sat == "1":
        saturated.add((kind, int(t), test))
threads = sorted({t for (k, t, _) in data if k == "hotkv"})
kinds = ["hotkv"] + (["valkey"] if any(k == "valkey" for (k, _, _) in data) else [])
names = {"get1": "GET, pipeline 1", "get16": "GET, pipeline 16", "set1": "SET, pipeline 1",
         "set16": "SET, pipeline 16", "evalsha16": "EVALSHA (3 keys), pipeline 16",
         "fcall16": "FCALL (3 keys), pipeline 16"}
print("# Throughput against server threads: HotKV%s and redis-server\n" % (", Valkey (io-threads)" if "valkey" in kinds else ""))
print("Command: `bench/scaling.sh%s` (THREADS=\"%s\" TESTS=\"%s\" SECS=%s KEYS=%s)  " % (
    (" -o " + svg[:-4] + ".md") if svg else "", " ".join(map(str, threads)), " ".join(tests), secs, keys))
print("HotKV %s; redis-server %s%s.  " % (rev, rver, ("; Valkey " + vver) if vver else ""))
print("Machine: %s cores, load %s at the end.  Server on cores 0..%d (on fewer than 4 cores: its first T cores), "
      "hotkv-benchmark on cores %s with %s load thread(s); %s s per test, closed loop.\n" % (
          ncpu, load, int(s) - 1, gcores, gthreads, secs))
if int(ncpu) < 4:
    print("With %s cores the load generator shares a core with the server once the server has as many threads "
          "as there are cores: the 2-thread figures here measure the two together, not the server alone.\n" % ncpu)
hdr = "| test | " + " | ".join("HotKV %d thr" % t for t in threads)
if "valkey" in kinds:
    hdr += " | " + " | ".join("Valkey %d io-thr" % t for t in threads)
hdr += " | redis-server | HotKV best / redis | HotKV %d thr / 1 thr |" % threads[-1]
print(hdr)
print("|---" * (hdr.count("|") - 1) + "|")
for test in tests:
    row = [names.get(test, test)]
    cell = lambda k: "%d%s" % (data.get(k, 0), "*" if k in saturated else "")
    row += [cell(("hotkv", t, test)) for t in threads]
    if "valkey" in kinds:
        row += [cell(("valkey", t, test)) for t in threads]
    r = data.get(("redis", 1, test), 0)
    best = max(data.get(("hotkv", t, test), 0) for t in threads)
    one = data.get(("hotkv", threads[0], test), 0)
    last = data.get(("hotkv", threads[-1], test), 0)
    row += ["%d" % r, "%.2fx" % (best / r if r else 0), "%.2fx" % (last / one if one else 0)]
    print("| " + " | ".join(row) + " |")
print("\nRequests/s of one %s s run per cell (closed loop, no warm-up beyond the preload)." % secs)
if saturated:
    print("\n\\* the load generator's threads were saturated (hotkv-benchmark's own measure): the server "
          "could do more than this figure says.")
hdr2 = "| test | " + " | ".join("HotKV %d thr" % t for t in threads)
if "valkey" in kinds:
    hdr2 += " | " + " | ".join("Valkey %d io-thr" % t for t in threads)
hdr2 += " | redis-server |"
def per_run_table(values, fmt):
    """One row per test, one column per server and thread count."""
    print(hdr2)
    print("|---" * (hdr2.count("|") - 1) + "|")
    for test in tests:
        row = [names.get(test, test)]
        row += [fmt % values.get(("hotkv", t, test), 0) for t in threads]
        if "valkey" in kinds:
            row += [fmt % values.get(("valkey", t, test), 0) for t in threads]
        row += [fmt % values.get(("redis", 1, test), 0)]
        print("| " + " | ".join(row) + " |")
print("\np99 latency (ms) of the same runs:\n")
per_run_table(lat, "%.3f")
if svg:
    print("\n![requests/s against threads](%s)" % svg.rsplit("/", 1)[-1])
    # A small SVG line chart of our own: one line per test for HotKV (and
    # Valkey, dashed), redis-server's one-thread figure as a dot at x = 1.
    W, H, L, B, T, R = 760, 420, 70, 50, 30, 200
    xs = threads
    ymax = max(data.values()) * 1.1 or 1
    def X(t):
        i = xs.index(t)
        return L + (W - L - R) * (i / max(1, len(xs) - 1) if len(xs) > 1 else 0.5)
    def Y(v):
        return H - B - (H - B - T) * v / ymax
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - R, H - B),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, H - B)]
    for k in range(6):
        v = ymax * k / 5
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.0fk</text>' % (L - 6, Y(v) + 4, v / 1000))
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, Y(v), W - R, Y(v)))
    for t in xs:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(t), H - B + 18, t))
    out.append('<text x="%d" y="%d" text-anchor="middle">server threads</text>' % ((L + W - R) // 2, H - 10))
    out.append('<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">requests/s</text>' % (H // 2, H // 2))
    ly = T
    for i, test in enumerate(tests):
        c = colors[i % len(colors)]
        for kind, dash in (("hotkv", ""), ("valkey", ' stroke-dasharray="6 4"')):
            pts = [(X(t), Y(data[(kind, t, test)])) for t in xs if (kind, t, test) in data]
            if not pts:
                continue
            out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>' % (
                c, dash, " ".join("%.1f,%.1f" % p for p in pts)))
            for p in pts:
                out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (p[0], p[1], c))
        if ("redis", 1, test) in data:
            out.append('<rect x="%.1f" y="%.1f" width="7" height="7" fill="none" stroke="%s" stroke-width="2"/>' % (
                X(xs[0]) - 3.5, Y(data[("redis", 1, test)]) - 3.5, c))
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (W - R + 15, ly, W - R + 35, ly, c))
        out.append('<text x="%d" y="%d">%s</text>' % (W - R + 40, ly + 4, names.get(test, test)))
        ly += 18
    out.append('<text x="%d" y="%d">line: HotKV; dashed: Valkey</text>' % (W - R + 15, ly + 10))
    out.append('<text x="%d" y="%d">square: redis-server (1 thread)</text>' % (W - R + 15, ly + 28))
    out.append('</svg>')
    open(svg, "w").write("\n".join(out) + "\n")
print("\nServer CPU during the same runs, in cores busy (user + system time over the run's wall time; "
      "a server with T threads can keep at most T busy, plus its helper threads):\n")
per_run_table(busy, "%.2f")
print("\nEvery run (server, threads, test, requests/s, p99 ms, load generator CPU %, saturated, "
      "server cores busy):\n\n```")
print(open(res).read().rstrip())
print("```")
PYEOF
if [ -n "$OUT" ]; then cp "$W/report.md" "$OUT"; log "report: $OUT${SVG:+, plot: $SVG}"; else cat "$W/report.md"; fi
