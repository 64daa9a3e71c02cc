#!/usr/bin/env bash
# tls.sh - TLS side by side: HotKV (--threads 1) and redis-server, both
# serving TLS with the same certificates, protocol and cipher suite.
#
# Certificates are made here with the openssl CLI (a CA, a server and a
# client certificate; KEY=rsa:2048 by default, KEY=ec for P-256): both
# servers run with tls-auth-clients yes (Redis's default), TLSv1.3 only and
# TLS_AES_128_GCM_SHA256, and redis-benchmark presents the client
# certificate.  Servers are pinned to core SERVER_CPU, redis-benchmark
# (one thread) to CLIENT_CPU.  Each round runs, against each server in
# turn (interleaved, so background load hits both alike):
#   GET and SET of 3-byte values over 100,000 keys, 50 connections, at
#   pipeline 16 (N16 requests) and pipeline 1 (N1 requests);
#   handshakes: PING with a new connection per request (redis-benchmark
#   -k 0, HS requests), i.e. a full TLS handshake each.
# HotKV runs twice: with io-uring (the default: TLS reads join the loop
# turn's io_uring batch) and with --io-uring no (read(2)), so the report
# says which is faster (docs/architecture.md, "TLS").
# Per run: requests/s and the server's CPU time per request (utime + stime
# from /proc/<pid>/stat).  Requests per second per server core is 1 / CPU
# per request: the figure that counts when the load generator, not the
# server, sets the pace.  Medians over ROUNDS, and per-round ratios.
#
# usage: bench/tls.sh [-o REPORT.md]
#   ROUNDS (5), N16 (1000000), N1 (150000), HS (3000), CONNS (50), KEY,
#   HOTKV_BIN (build/hotkv-server), REDIS_BIN (redis-server), PORTS (a
#   LO-HI range for the servers' ports, default any free one),
#   SERVER_CPU (0), CLIENT_CPU (1), TESTS (the tests to run, default
#   "get16 set16 get1 set1 hs")
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=
while [ $# -gt 0 ]; do
    case $1 in
        -o) OUT=$2; shift 2 ;;
        *) echo "usage: $0 [-o REPORT.md]" >&2; exit 2 ;;
    esac
done
TESTS=${TESTS:-get16 set16 get1 set1 hs}
ROUNDS=${ROUNDS:-5} N16=${N16:-1000000} N1=${N1:-150000} HS=${HS:-3000} CONNS=${CONNS:-50}
KEY=${KEY:-rsa:2048}
HOTKV=$(realpath "${HOTKV_BIN:-build/hotkv-server}") REDIS=${REDIS_BIN:-redis-server}
RCLI=redis-cli RBENCH=redis-benchmark PY=/usr/bin/python3
SERVER_CPU=${SERVER_CPU:-0} CLIENT_CPU=${CLIENT_CPU:-1}
SUITE=TLS_AES_128_GCM_SHA256
W=$(mktemp -d /tmp/tlsbench.XXXXXX)
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
. bench/lib.sh
[ -x "$HOTKV" ] || die "no $HOTKV (make first)"
command -v openssl >/dev/null || die "no openssl CLI"
$REDIS --version >/dev/null || die "no $REDIS"
TICK=$(getconf CLK_TCK)

# --- certificates ---------------------------------------------------------
C=$W/certs
mkdir -p "$C"
if [ "$KEY" = ec ]; then NEWKEY=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1); else NEWKEY=(-newkey "$KEY"); fi
openssl req -x509 -new -nodes "${NEWKEY[@]}" -keyout "$C/ca.key" -out "$C/ca.crt" -days 2 -subj "/CN=bench CA" 2>/dev/null
for n in server client; do
    openssl req -new -nodes "${NEWKEY[@]}" -keyout "$C/$n.key" -out "$C/$n.csr" -subj "/CN=$n" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$C/$n.ext"
    openssl x509 -req -in "$C/$n.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" -CAcreateserial -days 2 \
        -out "$C/$n.crt" -extfile "$C/$n.ext" 2>/dev/null
done
TLS_ARGS=(--tls-cert-file "$C/server.crt" --tls-key-file "$C/server.key" --tls-ca-cert-file "$C/ca.crt"
          --tls-auth-clients yes --tls-protocols TLSv1.3 --tls-ciphersuites "$SUITE")
CLIENT_TLS=(--tls --cacert "$C/ca.crt" --cert "$C/client.crt" --key "$C/client.key")

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_one LABEL TEST -> one line of results on stdout
run_one() {
    local label=$1 test=$2 n args c0 c1 rps
    case $test in
        get16) n=$N16; args=(-t get -P 16 -r 100000) ;;
        set16) n=$N16; args=(-t set -P 16 -r 100000) ;;
        get1) n=$N1; args=(-t get -P 1 -r 100000) ;;
        set1) n=$N1; args=(-t set -P 1 -r 100000) ;;
        hs) n=$HS; args=(-t ping_mbulk -P 1 -k 0) ;;
    esac
    c0=$(cpu_ticks "$SRV_PID")
    rps=$(taskset -c "$CLIENT_CPU" "$RBENCH" -p "$TLS_PORT" "${CLIENT_TLS[@]}" -c "$CONNS" -n "$n" "${args[@]}" --csv 2>/dev/null |
          awk -F'"' 'NR == 2 {print $4}')
    c1=$(cpu_ticks "$SRV_PID")
    [ -n "$rps" ] || die "redis-benchmark failed ($label $test)"
    awk -v l="$label" -v t="$test" -v r="$rps" -v c=$((c1 - c0)) -v tk="$TICK" -v n="$n" \
        'BEGIN {printf "%s %s rps=%.0f cpu_us_per_req=%.3f\n", l, t, r, c * 1e6 / tk / n}'
}

# Both servers stay up; the TLS port is opened after the start (CONFIG SET
# tls-port: both servers support it), on a second free port.
RES=$W/results.txt
if [ -n "${RESULTS:-}" ]; then
    # RESULTS=<results.txt of an earlier run (KEEP=1)>: the report only.
    cp "$RESULTS" "$RES"
    ROUNDS=$(awk '{sub("round=", "", $1); print $1}' "$RES" | sort -n | tail -n 1)
fi
declare -A PID PORT TPORT
SERVERS="hotkv hotkv-noring redis"
for s in $([ -n "${RESULTS:-}" ] || echo $SERVERS); do
    case $s in
        hotkv) HOTKV_EXTRA=(--threads 1 --save "" --appendonly no "${TLS_ARGS[@]}") ;;
        hotkv-noring) HOTKV_EXTRA=(--threads 1 --save "" --appendonly no --io-uring no "${TLS_ARGS[@]}") ;;
        redis) REDIS_ARGS=(--save "" --appendonly no "${TLS_ARGS[@]}") ;;
    esac
    start_server "${s%-noring}" "$s"
    PID[$s]=$SRV_PID PORT[$s]=$SRV_PORT
    TPORT[$s]=$(free_port) || die "no free port"
    [ "$("$RCLI" -p "$SRV_PORT" CONFIG SET tls-port "${TPORT[$s]}")" = OK ] || die "$s: CONFIG SET tls-port failed"
    [ "$("$RCLI" -p "${TPORT[$s]}" "${CLIENT_TLS[@]}" PING)" = PONG ] || die "$s: no PING over TLS"
done
for r in $([ -n "${RESULTS:-}" ] || seq "$ROUNDS"); do
    for t in $TESTS; do
        for s in $SERVERS; do
            SRV_PID=${PID[$s]} SRV_PORT=${PORT[$s]} TLS_PORT=${TPORT[$s]}
            line=$(run_one "$s" "$t")
            log "round $r: $line"
            echo "round=$r $line" >>"$RES"
        done
    done
done

name_of() {
    case $1 in
        get16) echo "GET, pipeline 16" ;; set16) echo "SET, pipeline 16" ;; get1) echo "GET, pipeline 1" ;;
        set1) echo "SET, pipeline 1" ;; hs) echo "new connection per request (handshakes)" ;;
    esac
}

report() {
    echo "# TLS: HotKV vs redis-server"
    echo
    echo "Command: \`bench/tls.sh${OUT:+ -o $OUT}\` (TESTS=\"$TESTS\" ROUNDS=$ROUNDS N16=$N16 N1=$N1 HS=$HS CONNS=$CONNS KEY=$KEY)  "
    echo "HotKV: \`$HOTKV --threads 1\` ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', tree modified')); redis: $($REDIS --version | awk '{print $3, $4}'); $(openssl version)  "
    echo "TLS: TLSv1.3, $SUITE, $KEY certificates, tls-auth-clients yes (redis-benchmark presents a client certificate), session caching on (redis-benchmark does not resume).  "
    echo "Machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end; servers on core $SERVER_CPU, redis-benchmark (1 thread) on core $CLIENT_CPU.  "
    echo "Medians over $ROUNDS interleaved rounds.  Requests/s per server core = 1e6 / (server CPU us per request).  Ratios: HotKV / redis, above 1 means HotKV is ahead."
    echo
    echo "| test | server | requests/s | server CPU us/request | requests/s per server core | requests/s vs redis | per core vs redis |"
    echo "|---|---|---|---|---|---|---|"
    local t s rr cc rr0 cc0
    for t in $TESTS; do
        rr0=$(awk -v t=$t '$3 == t && $2 == "redis" {sub("rps=", "", $4); print $4}' "$RES" | median)
        cc0=$(awk -v t=$t '$3 == t && $2 == "redis" {sub("cpu_us_per_req=", "", $5); print $5}' "$RES" | median)
        for s in $SERVERS; do
            rr=$(awk -v t=$t -v s=$s '$3 == t && $2 == s {sub("rps=", "", $4); print $4}' "$RES" | median)
            cc=$(awk -v t=$t -v s=$s '$3 == t && $2 == s {sub("cpu_us_per_req=", "", $5); print $5}' "$RES" | median)
            awk -v n="$(name_of $t)" -v s=$s -v r="$rr" -v c="$cc" -v r0="$rr0" -v c0="$cc0" \
                'BEGIN {label = "redis-server"; if (s == "hotkv") label = "HotKV"; if (s == "hotkv-noring") label = "HotKV, io-uring no";
                        pc = 0; adv = 0;
                        if (c > 0) { pc = 1e6 / c; adv = c0 / c }
                        printf "| %s | %s | %.0f | %.2f | %.0f | %.2fx | %.2fx |\n", n, label, r, c, pc, r / r0, adv}'
        done
    done
    echo
    echo "Paired per round (the runs of a round are back to back), median of the per-round ratios; the last column is HotKV's server CPU per request with io-uring no over with io-uring yes (above 1: the ring path is cheaper):"
    echo
    echo "| test | requests/s, HotKV / redis | per server core, HotKV / redis | CPU/request, io-uring no / yes |"
    echo "|---|---|---|---|"
    for t in $TESTS; do
        awk -v t=$t '$3 == t {sub("rps=", "", $4); sub("cpu_us_per_req=", "", $5); r[$1, $2] = $4; c[$1, $2] = $5; rounds[$1] = 1}
            END {for (k in rounds) { if (c[k, "hotkv"] > 0) printf "%s %s %s\n", r[k, "hotkv"] / r[k, "redis"], c[k, "redis"] / c[k, "hotkv"],
                                                                 c[k, "hotkv-noring"] / c[k, "hotkv"] }}' \
            "$RES" >"$W/pairs"
        printf "| %s | %.2fx | %.2fx | %.2fx |\n" "$(name_of $t)" "$(cut -d' ' -f1 "$W/pairs" | median)" "$(cut -d' ' -f2 "$W/pairs" | median)" \
            "$(cut -d' ' -f3 "$W/pairs" | median)"
    done
    echo
    echo "Every run:"
    echo
    echo '```'
    cat "$RES"
    echo '```'
}
if [ -n "$OUT" ]; then report >"$OUT"; log "report: $OUT"; else report; fi
