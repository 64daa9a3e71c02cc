# lib.sh - server lifecycle helpers shared by the bench/ scripts (sourced).
# The sourcing script defines log, die, PY (python3 path) and W (scratch
# dir), and appends every server it starts to SERVER_PIDS; cleanup() stops
# them (TERM, then KILL after 5 s) and removes W unless KEEP=1.
# start_server also reads HOTKV, REDIS, HOTKV_EXTRA, REDIS_ARGS, RCLI,
# SERVER_CPU and PORTS (free_port) (a script may define its own start_server/stop_server after
# sourcing this, as suite.sh does).
SERVER_PIDS=()
W=${W:-}

# cg_bench_env NAME: the set-up of the scripts that run HotKV and
# redis-server side by side under callgrind and redis-benchmark (acl.sh,
# issue17.sh): CG_N (requests per callgrind run, a multiple of 16),
# SERVER_CPU / CLIENT_CPU, HOTKV / REDIS (checked), RB, RCLI, PY, the tools
# they need (valgrind only unless CG=0), the scratch dir W (with W/res),
# one-thread servers without persistence, and client() to run a command on
# the client core.
cg_bench_env() {
    W=$(mktemp -d "/tmp/hotkv-$1.XXXXXX")
    mkdir -p "$W/res"
    CG_N=${CG_N:-100000}
    CG_N=$(( (CG_N + 15) / 16 * 16 ))
    SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
    HOTKV=$(readlink -f "${HOTKV_BIN:-build/hotkv-server}")
    REDIS=$(command -v "${REDIS_BIN:-redis-server}") || die "redis-server not found"
    [ -x "$HOTKV" ] || die "HotKV binary not found: ${HOTKV_BIN:-build/hotkv-server} (make first)"
    RB=redis-benchmark; RCLI=redis-cli; PY=/usr/bin/python3
    [ -x "$PY" ] || PY=$(command -v python3) || die "no python3"
    local t
    local need="$RB $RCLI taskset"
    [ "${CG:-1}" = 0 ] || need+=" valgrind callgrind_control"
    for t in $need; do command -v $t >/dev/null || die "missing tool: $t"; done
    HOTKV_EXTRA=(--threads 1 --save "")
    REDIS_ARGS=(--save "" --appendonly no)
}
client() { taskset -c "$CLIENT_CPU" "$@"; }

cleanup() {
    local p
    for p in "${SERVER_PIDS[@]:-}"; do
        [ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
    done
    for p in "${SERVER_PIDS[@]:-}"; do
        [ -n "$p" ] || continue
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    done
    [ -n "$W" ] || return 0
    if [ "${KEEP:-0}" = 1 ]; then log "scratch kept in $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# A free port of 127.0.0.1: any, or with PORTS=LO-HI the first free one in
# that range.
free_port() {
    "$PY" - "${PORTS:-}" <<'PYEOF'
import socket, sys
rng = sys.argv[1]
ports = range(*(lambda lo, hi: (lo, hi + 1))(*map(int, rng.split("-")))) if rng else [0]
for p in ports:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        print(s.getsockname()[1])
        break
    except OSError:
        continue
    finally:
        s.close()
else:
    sys.exit(1)
PYEOF
}

owns_port() {  # PID PORT -> true if PID holds the listening socket on PORT
    local inode i
    inode=$(awk -v port="$(printf '%04X' "$2")" '$4 == "0A" {split($2, a, ":"); if (a[2] == port) print $10}' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null)
    [ -n "$inode" ] || return 1
    for i in $inode; do
        find /proc/"$1"/fd -lname "socket:\[$i\]" 2>/dev/null | grep -q . && return 0
    done
    return 1
}

# start_server NAME LABEL [valgrind args...] -> sets SRV_PID, SRV_PORT, SRV_LOG
start_server() {
    local name=$1 label=$2; shift 2
    local bin args
    if [ "$name" = hotkv ]; then bin=$HOTKV; args=("${HOTKV_EXTRA[@]}")
    else bin=$REDIS; args=("${REDIS_ARGS[@]}"); fi
    SRV_PORT=$(free_port) || die "could not find a free port"
    SRV_LOG="$W/$name-$label.log"
    mkdir -p "$W/run/$name-$label"
    ( cd "$W/run/$name-$label" &&
      exec taskset -c "$SERVER_CPU" "$@" "$bin" --port "$SRV_PORT" --bind 127.0.0.1 "${args[@]}" ) \
        >"$SRV_LOG" 2>&1 </dev/null &
    SRV_PID=$!
    SERVER_PIDS+=("$SRV_PID")
    local limit=100; [ $# -gt 0 ] && limit=1200   # 10 s, or 120 s under valgrind
    local i
    for ((i = 0; i < limit; i++)); do
        if ! kill -0 "$SRV_PID" 2>/dev/null; then
            tail -n 20 "$SRV_LOG" >&2
            die "$name ($bin) exited during startup (log above: $SRV_LOG)"
        fi
        if [ "$(timeout 2 "$RCLI" -h 127.0.0.1 -p "$SRV_PORT" PING 2>/dev/null)" = PONG ]; then
            owns_port "$SRV_PID" "$SRV_PORT" && return 0
            # PONG from a stranger that grabbed the port: keep waiting; our
            # server will exit on EADDRINUSE and we report that
        fi
        sleep 0.1
    done
    tail -n 20 "$SRV_LOG" >&2
    die "$name did not answer PING on port $SRV_PORT (log above: $SRV_LOG)"
}

stop_server() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 600; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { log "pid $pid ignored SIGTERM, killing"; kill -KILL "$pid" 2>/dev/null; }
    wait "$pid" 2>/dev/null
    local keep=() p
    for p in "${SERVER_PIDS[@]}"; do [ "$p" != "$pid" ] && keep+=("$p"); done
    SERVER_PIDS=("${keep[@]:-}")
}

# build_vecbench VB: build bench/vecbench.c (with the server's distance
# kernels) into VB when it is missing or older than its sources
# (issue8.sh, vector8.sh).
build_vecbench() {
    local vb=$1 f need=0
    [ -x "$vb" ] || need=1
    for f in bench/vecbench.c src/ds/vdist.c src/ds/vdist.h; do [ "$f" -nt "$vb" ] && need=1; done
    [ "$need" = 1 ] || return 0
    mkdir -p "$(dirname "$vb")"
    ${CC:-cc} -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread -Isrc -o "$vb.tmp.$$" \
        bench/vecbench.c src/ds/vdist.c -lm || die "could not build $vb"
    mv -f "$vb.tmp.$$" "$vb"
}

# vec_dataset SET FILE GEN-ARGS...: make sure the vecbench dataset FILE
# exists (vecbench gen -o FILE GEN-ARGS when it is missing or older than
# $VB), log its description and record it in $RES as "set=SET side=data".
vec_dataset() {
    local d=$1 f=$2 line; shift 2
    if [ ! -s "$f" ] || [ "$VB" -nt "$f" ]; then
        log "generating $f"
        "$VB" gen -o "$f" "$@" > "$W/gen-$d.txt" || die "dataset generation failed"
        line=$(grep '^VECBENCH gen ' "$W/gen-$d.txt")
    else
        line="VECBENCH gen file=$f $("$VB" info "$f" | sed 's/^VECBENCH info //') cached=1"
    fi
    log "$line"
    echo "set=$d side=data ${line#VECBENCH gen }" >> "$RES"
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

median() {  # numbers on stdin -> median
    sort -g | awk '{a[NR] = $1} END {if (NR == 0) exit; if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# cg_measure PID PORT TEST OUT DUMPNO [ARGS...] -> Ir per request of a
# server running under valgrind --tool=callgrind --callgrind-out-file=OUT:
# a warm-up of CG_N/10 requests, counters zeroed, CG_N requests, dump
# number DUMPNO read back.  The sourcing script defines run PORT TEST N
# [ARGS...] (drives the load; ARGS are passed on, e.g. --user u -a pw) and
# CG_N.
cg_measure() {
    local pid=$1 port=$2 t=$3 out=$4 n=$5 f ir; shift 5
    run "$port" "$t" $((CG_N / 10 / 16 * 16 + 16)) "$@" >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1 || die "callgrind_control -z failed"
    run "$port" "$t" "$CG_N" "$@" >/dev/null
    callgrind_control -d "$pid" >/dev/null 2>&1 || die "callgrind_control -d failed"
    f="$out.$n"
    for _ in $(seq 100); do grep -qs '^totals:' "$f" && break; sleep 0.1; done
    ir=$(awk '/^summary:/ {print $2; exit}' "$f")
    [ -n "$ir" ] || die "no callgrind summary in $f"
    awk -v a="$ir" -v n="$CG_N" 'BEGIN {printf "%.0f\n", a / n}'
}
