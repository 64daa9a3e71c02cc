#!/usr/bin/env bash
# bench/acl.sh - what ACL checks cost, HotKV and redis-server side by side.
#
# CPU per request (valgrind --tool=callgrind instructions, Ir; counters are
# zeroed after preload and a warm-up, then a measured run is dumped) for GET
# and SET at pipeline 16 (redis-benchmark, 50 connections, 1000 keys
# key:0..999), each server with one thread, in three settings:
#   default    no ACL rules at all (the default user, +@all ~* &*);
#   10users    ten more users exist, the load still runs as the default user
#              (the all-permitted path must not notice them);
#   restricted the load runs as user u9 (+@all, 100 key patterns of which
#              only the last, ~key:*, matches: the worst case of a pattern
#              scan), authenticated with --user/-a.
# The report gives Ir/request per server and setting, and HotKV/redis.
#
# Usage: bench/acl.sh [-o FILE]
# Environment: HOTKV_BIN (build/hotkv-server), REDIS_BIN (redis-server),
#   CG_N (requests per callgrind run, 100000), KEEP=1 (keep the scratch dir).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
START_TS=$(date +%s)
die() { echo "acl.sh: error: $*" >&2; exit 1; }
log() { echo "[acl $(date +%H:%M:%S)] $*" >&2; }

OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) OUT_FILE=${2:-docs/benchmarks/acl-$(date +%F).md}; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
cg_bench_env acl

# setup PORT: 1000 keys; users u0..u9, u9 with 100 key patterns
setup() {
    client "$PY" - "$1" <<'PYEOF'
import sys
import redis
r = redis.Redis(port=int(sys.argv[1]))
p = r.pipeline(transaction=False)
for i in range(1000):
    p.set("key:%d" % i, "x" * 64)
p.execute()
for u in range(9):
    r.execute_command("ACL", "SETUSER", "u%d" % u, "on", ">pw", "+@read", "~app%d:*" % u, "&chan%d" % u)
pats = ["~other%d:*" % i for i in range(99)] + ["~key:*"]
r.execute_command("ACL", "SETUSER", "u9", "on", ">pw", "+@all", *pats)
PYEOF
}

TESTS="GET SET"
# run PORT TEST N [AUTH...] -> requests/s
run() {
    local port=$1 t=$2 n=$3; shift 3
    # shellcheck disable=SC2046
    client timeout 600 $RB -h 127.0.0.1 -p "$port" "$@" -c 50 -P 16 -r 1000 -n "$n" --csv \
        $( [ "$t" = GET ] && echo "GET key:__rand_int__" || echo "SET key:__rand_int__ xxxxxxxx" ) 2>>"$W/rb.err" |
        awk -F'","' '/^"/ && $1 != "\"test" && NF > 1 {v = $2} END {if (v != "") print v}'
}

for s in hotkv redis; do
    log "$s: callgrind"
    start_server "$s" cg valgrind --tool=callgrind --callgrind-out-file="$W/cg-$s.out"
    pid=$SRV_PID; port=$SRV_PORT; d=0
    client "$PY" -c "import redis; r=redis.Redis(port=$port); p=r.pipeline(transaction=False)
for i in range(1000): p.set('key:%d' % i, 'x' * 64)
p.execute()" || die "preload failed ($s)"
    for t in $TESTS; do
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" "$t" "$W/cg-$s.out" $d); echo "$v" >"$W/res/$s.default.$t"
        log "$s: $t default $v Ir/request"
    done
    setup "$port" || die "setup failed ($s)"
    for t in $TESTS; do
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" "$t" "$W/cg-$s.out" $d); echo "$v" >"$W/res/$s.10users.$t"
        log "$s: $t 10users $v Ir/request"
        d=$((d + 1)); v=$(cg_measure "$pid" "$port" "$t" "$W/cg-$s.out" $d --user u9 -a pw); echo "$v" >"$W/res/$s.restricted.$t"
        log "$s: $t restricted $v Ir/request"
    done
    stop_server "$pid"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f\n", a / b}'; }
get() { cat "$W/res/$1" 2>/dev/null; }
REPORT="$W/report.md"
{
    echo "# ACL check cost: HotKV vs redis-server ($(date '+%F %H:%M'))"
    echo
    echo "- HotKV: \`$HOTKV ${HOTKV_EXTRA[*]}\` (repo: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null))"
    echo "- redis: \`$REDIS ${REDIS_ARGS[*]}\` ($("$REDIS" --version | head -n1))"
    echo "- host: $(nproc) CPUs, server on core $SERVER_CPU, load on core $CLIENT_CPU; CG_N=$CG_N; runtime $(( $(date +%s) - START_TS ))s"
    echo "- command: \`bench/acl.sh\`"
    echo
    echo "Callgrind Ir per request, pipeline 16, 50 connections.  default: no rules;"
    echo "10users: ten users exist, the load runs as the default user; restricted:"
    echo "the load runs as u9 (+@all and 100 key patterns, only the last matching)."
    echo
    echo "| test | setting | HotKV Ir/req | redis Ir/req | HotKV/redis |"
    echo "|---|---|---:|---:|---:|"
    for t in $TESTS; do
        for m in default 10users restricted; do
            echo "| $t | $m | $(get hotkv.$m.$t) | $(get redis.$m.$t) | $(ratio "$(get hotkv.$m.$t)" "$(get redis.$m.$t)") |"
        done
    done
} >"$REPORT"
cat "$REPORT"
[ -n "$OUT_FILE" ] && cp "$REPORT" "$OUT_FILE" && log "report written to $OUT_FILE"
exit 0
