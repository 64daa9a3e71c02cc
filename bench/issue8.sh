#!/usr/bin/env bash
# bench/issue8.sh - the vector-set benchmark of issue #8: HotKV's VADD/VSIM
# against hnswlib in-process, same data, side by side.
#
# Datasets (bench/vecbench.c `gen`, built here into build/vecbench, cached
# in DATA_DIR by their parameters): clustered Gaussian data, CLUSTERS
# centres with N(0,1) components, points = centre + N(0, SIGMA^2) per
# component, a fixed SEED; DIM=128 with N128 points and DIM=1536 with N1536
# points, NQ held-out queries from the same distribution, exact top-10 by
# brute-force cosine.  Both sides read the same file.
#
# hnswlib (bench/hnswlib_ref.py, /usr/bin/python3 + python3-hnswlib):
# space 'cosine', M=16, ef_construction=200, one thread, on core
# SERVER_CPU: build rate, resident memory growth per element, and per EF
# recall@10 and queries/s, batch (knn_query over all queries with
# num_threads=1: the figure the targets compare with) and loop (one call
# per query from Python).
#
# HotKV (HOTKV_BIN, HOTKV_ARGS, default --threads 1, on core SERVER_CPU;
# vecbench on CLIENT_CPU): for each quantisation in QUANTS a fresh server,
# VADD key FP32 <blob> <id> <quant> pipelined (PIPELINE in flight) ->
# VADD/s and used_memory growth per element, then for each EF and each
# client count in CLIENTS: VSIM key FP32 <blob> COUNT 10 EF <ef>, one
# request in flight per client, until every query ran once and T seconds
# passed -> recall@10, queries/s, p50/p99, and the server's CPU time per
# query (compared with hnswlib's CPU time per query: on a machine shared
# with other work, q/s moves with the load and CPU time much less).  Then (STALL_SETS) a PING client's
# latency while another client runs STALL_REPS VSIMs with EF STALL_EF COUNT
# STALL_COUNT on the same worker, against the same PING client alone.
#
# Targets (issue #8): recall@10 >= hnswlib's - 0.005 at every EF; queries/s
# with one worker thread and 8 clients >= 0.7x hnswlib's single-thread
# batch figure at EF >= 80; memory per element <= raw vector + 300 B
# (NOQUANT), + 250 B (Q8, raw = dim bytes); VADD/s >= 2000 at 128 dims.
#
# Usage: bench/issue8.sh [-o FILE] [-h]
#   -o FILE   also write the markdown report to FILE (-o alone:
#             docs/benchmarks/issue8-YYYY-MM-DD.md, -quick.md with QUICK=1)
# Environment: HOTKV_BIN (build/hotkv-server), HOTKV_ARGS (--threads 1),
#   BENCH_BUILD (build: where vecbench is built), DATA_DIR
#   (/tmp/hotkv-vecdata), SETS ("128 1536"), N128 (100000), N1536 (50000),
#   NQ (1000), CLUSTERS (100 for the full sizes; scaled with N so that a
#   cluster keeps the full set's size when N is smaller), SIGMA (1.0), SEED
#   (8), EFS (40,80,150,300,500), CLIENTS (1,8), QUANTS ("NOQUANT Q8"),
#   T (5, seconds per measurement), PIPELINE (32), STALL_SETS (128),
#   STALL_EF (5000), STALL_COUNT (1000), STALL_REPS (5), SIDES
#   ("hnswlib hotkv"), PORTS (LO-HI), SERVER_CPU / CLIENT_CPU (0 / 1),
#   KEEP=1 (keep the scratch dir), QUICK=1 (N128=20000 N1536=5000 NQ=200
#   T=2 STALL_REPS=3: a few minutes; any variable set explicitly wins).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
die() { echo "issue8.sh: error: $*" >&2; exit 1; }
log() { echo "[issue8 $(date +%H:%M:%S)] $*" >&2; }

CMDLINE=""
for v in QUICK HOTKV_BIN HOTKV_ARGS BENCH_BUILD DATA_DIR SETS N128 N1536 NQ CLUSTERS SIGMA SEED EFS CLIENTS QUANTS \
         T PIPELINE STALL_SETS STALL_EF STALL_COUNT STALL_REPS SIDES PORTS SERVER_CPU CLIENT_CPU; do
    [ -n "${!v+x}" ] && CMDLINE+="$v=$(printf '%q' "${!v}") "
done
CMDLINE+="bench/issue8.sh"; [ $# -gt 0 ] && CMDLINE+="$(printf ' %q' "$@")"
OUT_FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o) if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then OUT_FILE=$2; shift
            else OUT_FILE="docs/benchmarks/issue8-$(date +%F)$( [ "${QUICK:-0}" = 1 ] && echo -quick).md"; fi ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done

if [ "${QUICK:-0}" = 1 ]; then
    N128=${N128:-20000}; N1536=${N1536:-5000}; NQ=${NQ:-200}; T=${T:-2}; STALL_REPS=${STALL_REPS:-3}
fi
HOTKV=$(readlink -f "${HOTKV_BIN:-build/hotkv-server}")
# shellcheck disable=SC2034  # REDIS, HOTKV_EXTRA, REDIS_ARGS: read by lib.sh's start_server
REDIS=${REDIS_BIN:-redis-server}
RCLI=${REDIS_CLI:-redis-cli}
PY=/usr/bin/python3
read -r -a HOTKV_BASE <<< "${HOTKV_ARGS:---threads 1}"
BENCH_BUILD=${BENCH_BUILD:-build}; DATA_DIR=${DATA_DIR:-/tmp/hotkv-vecdata}
SETS=${SETS:-128 1536}; N128=${N128:-100000}; N1536=${N1536:-50000}; NQ=${NQ:-1000}
SIGMA=${SIGMA:-1.0}; SEED=${SEED:-8}; EFS=${EFS:-40,80,150,300,500}; CLIENTS=${CLIENTS:-1,8}
QUANTS=${QUANTS:-NOQUANT Q8}; T=${T:-5}; PIPELINE=${PIPELINE:-32}
STALL_SETS=${STALL_SETS:-128}; STALL_EF=${STALL_EF:-5000}; STALL_COUNT=${STALL_COUNT:-1000}; STALL_REPS=${STALL_REPS:-5}
SIDES=${SIDES:-hnswlib hotkv}; SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
case " $SIDES " in *" hotkv "*) [ -x "$HOTKV" ] || die "no HotKV binary at ${HOTKV_BIN:-build/hotkv-server} (run make)" ;; esac
case " $SIDES " in *" hnswlib "*) $PY -c 'import hnswlib, numpy' 2>/dev/null ||
    die "$PY cannot import hnswlib and numpy (apt-get install python3-hnswlib python3-numpy)" ;; esac
command -v "$RCLI" >/dev/null || die "redis-cli not found (used to wait for the server)"
set_n() {  # DIM -> N, FULL_N
    case $1 in 128) N=$N128; FULL_N=100000 ;; 1536) N=$N1536; FULL_N=50000 ;; *) die "unknown set $1 (128 or 1536)" ;; esac
}

# ---------------------------------------------------------- the client
VB=$ROOT/$BENCH_BUILD/vecbench
W=$(mktemp -d /tmp/hotkv-issue8.XXXXXX)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
build_vecbench "$VB"
# shellcheck disable=SC2034
HOTKV_EXTRA=("${HOTKV_BASE[@]}" --save "" --appendonly no --dir "$W")
# shellcheck disable=SC2034
REDIS_ARGS=()
RES=$W/results.txt
: > "$RES"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------------------ datasets
mkdir -p "$DATA_DIR" || die "cannot create $DATA_DIR"
declare -A FILE_OF=()
for d in $SETS; do
    set_n "$d"
    if [ -n "${CLUSTERS:-}" ]; then C=$CLUSTERS; else C=$(( (100 * N + FULL_N / 2) / FULL_N )); [ "$C" -ge 1 ] || C=1; fi
    f="$DATA_DIR/vec-n$N-d$d-q$NQ-c$C-s$SIGMA-seed$SEED.bin"
    vec_dataset "$d" "$f" -n "$N" -d "$d" -q "$NQ" -k 10 --clusters "$C" --sigma "$SIGMA" --seed "$SEED"
    FILE_OF[$d]=$f
done

# ------------------------------------------------------------- hnswlib
case " $SIDES " in *" hnswlib "*)
for d in $SETS; do
    log "hnswlib on the $d-dim set"
    taskset -c "$SERVER_CPU" "$PY" bench/hnswlib_ref.py "${FILE_OF[$d]}" --ef "$EFS" --time "$T" \
        > "$W/hnswlib-$d.txt" 2> "$W/hnswlib-$d.err" || { cat "$W/hnswlib-$d.err" >&2; die "hnswlib_ref.py failed"; }
    while read -r _ what rest; do
        echo "set=$d side=hnswlib what=$what $rest" >> "$RES"
        log "  hnswlib $what $rest"
    done < <(grep '^HNSWLIB ' "$W/hnswlib-$d.txt")
done ;;
esac

# --------------------------------------------------------------- HotKV
vb() { taskset -c "$CLIENT_CPU" "$VB" "$@"; }
case " $SIDES " in *" hotkv "*)
for d in $SETS; do
    for q in $QUANTS; do
        start_server hotkv "$d-$q"
        log "HotKV ${HOTKV_BASE[*]} (port $SRV_PORT), $d-dim set, $q: loading"
        key="vs"
        if ! vb load -p "$SRV_PORT" -f "${FILE_OF[$d]}" -K "$key" --quant "$q" -P "$PIPELINE" --server-pid "$SRV_PID" > "$W/load-$d-$q.txt" 2>&1; then
            tail -n 5 "$W/load-$d-$q.txt" >&2; log "loading failed; skipping $d $q"; stop_server "$SRV_PID"; continue
        fi
        line=$(grep '^VECBENCH load ' "$W/load-$d-$q.txt"); log "  ${line#VECBENCH }"
        echo "set=$d side=hotkv what=load ${line#VECBENCH load }" >> "$RES"
        vb query -p "$SRV_PORT" -f "${FILE_OF[$d]}" -K "$key" --ef "$EFS" --clients "$CLIENTS" -T "$T" --server-pid "$SRV_PID" \
            > "$W/query-$d-$q.txt" 2>&1 || { tail -n 5 "$W/query-$d-$q.txt" >&2; log "queries failed ($d $q)"; }
        while read -r line; do
            log "  ${line#VECBENCH }"
            echo "set=$d side=hotkv what=query quant=$q ${line#VECBENCH query }" >> "$RES"
        done < <(grep '^VECBENCH query ' "$W/query-$d-$q.txt")
        case " $STALL_SETS " in *" $d "*)
            vb stall -p "$SRV_PORT" -f "${FILE_OF[$d]}" -K "$key" --ef "$STALL_EF" --count "$STALL_COUNT" -R "$STALL_REPS" \
                > "$W/stall-$d-$q.txt" 2>&1 || { tail -n 5 "$W/stall-$d-$q.txt" >&2; log "stall test failed ($d $q)"; }
            line=$(grep '^VECBENCH stall ' "$W/stall-$d-$q.txt")
            if [ -n "$line" ]; then
                log "  ${line#VECBENCH }"
                echo "set=$d side=hotkv what=stall quant=$q ${line#VECBENCH stall }" >> "$RES"
            fi ;;
        esac
        stop_server "$SRV_PID"
    done
done ;;
esac
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# -------------------------------------------------------------- report
REPORT="$W/report.md"
HOTKV_REV="binary of $(stat -c %y "$HOTKV" 2>/dev/null | cut -d. -f1), sha1 $(sha1sum "$HOTKV" 2>/dev/null | cut -c1-12); HEAD now $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo "+dirty")"
HNSWLIB_VER=$($PY -c 'import importlib.metadata as m; print(m.version("hnswlib"))' 2>/dev/null ||
              dpkg-query -W -f '${Version}' python3-hnswlib 2>/dev/null)
{
    echo "# Issue 8 vector-set benchmark: HotKV VADD/VSIM vs hnswlib ($(date +%F))"
    echo
    echo "Command: \`$CMDLINE\`$( [ "${QUICK:-0}" = 1 ] && echo " (QUICK mode: small sets, short measurements)")  "
    echo "HotKV: \`$HOTKV ${HOTKV_BASE[*]} --save \"\" --appendonly no\` ($HOTKV_REV); hnswlib ${HNSWLIB_VER:-?} (python3-hnswlib, in-process, one thread).  "
    echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load $LOAD0 at start, $LOAD1 at end; server and hnswlib on core $SERVER_CPU, vecbench on core $CLIENT_CPU.  "
    echo "Method: each measurement runs until every query ran once and $T s passed; recall@10 over the first pass; one request in flight per client; a fresh server per set and quantisation, loaded with pipelined VADD ($PIPELINE in flight)."
    echo
} > "$REPORT"
$PY - "$RES" "$EFS" >> "$REPORT" <<'EOF'
import sys
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[1]) if l.strip()]
efs = [int(x) for x in sys.argv[2].split(",") if x]
def f(x, d=float("nan")):
    try:
        return float(x)
    except Exception:
        return d
def get(**kw):
    return [r for r in rows if all(r.get(k) == str(v) for k, v in kw.items())]
sets = list(dict.fromkeys(r["set"] for r in rows))
verdicts = []
print("## Datasets\n")
print("| dims | points | queries | clusters | sigma | seed | mean top-1 / top-10 cosine | file |")
print("|---|---|---|---|---|---|---|---|")
for s in sets:
    for r in get(set=s, side="data"):
        print("| %s | %s | %s | %s | %s | %s | %s / %s | `%s` |" % (r["dim"], r["n"], r["nq"], r["clusters"], r["sigma"], r["seed"],
              r.get("mean_top1_sim", "-"), r.get("mean_topk_sim", "-"), r["file"]))
print()
print("## Build / load and memory\n")
print("| dims | side | inserts/s | CPU us per insert | memory per element (B) | raw vector (B) | overhead (B) | target |")
print("|---|---|---|---|---|---|---|---|")
for s in sets:
    for r in get(set=s, side="hnswlib", what="build"):
        per = f(r["bytes_per_elem"])
        print("| %s | hnswlib (RSS growth) | %.0f | %.0f | %.0f | %s | %.0f | |" % (s, f(r["inserts_per_s"]),
              f(r.get("cpu_us_per_insert")), per, r["raw_vector_bytes"], per - f(r["raw_vector_bytes"])))
    for r in get(set=s, side="hotkv", what="load"):
        per, raw, ov = f(r["bytes_per_elem"]), f(r["raw_vector_bytes"]), f(r["overhead_per_elem"])
        lim = 300 if r["quant"] == "NOQUANT" else 250
        ok_mem = ov <= lim
        tgt = "overhead <= %d: %s" % (lim, "ok" if ok_mem else "MISSED")
        verdicts.append(("memory %s-dim %s: %.0f B over the raw vector (limit %d)" % (s, r["quant"], ov, lim), ok_mem))
        if s == "128":
            ok_rate = f(r["vadd_per_s"]) >= 2000
            tgt += "; VADD/s >= 2000: %s" % ("ok" if ok_rate else "MISSED")
            verdicts.append(("load rate %s-dim %s: %.0f VADD/s (target 2000)" % (s, r["quant"], f(r["vadd_per_s"])), ok_rate))
        err = "" if r.get("errors", "0") == "0" else " (%s errors)" % r["errors"]
        print("| %s | HotKV %s%s | %.0f | %.0f | %.0f | %.0f | %.0f | %s |" % (s, r["quant"], err, f(r["vadd_per_s"]),
              f(r.get("server_cpu_us_per_vadd")), per, raw, ov, tgt))
print()
print("## Queries: recall@10 and queries/s\n")
print("hnswlib: batch = knn_query over all queries with num_threads=1 (the reference for the targets), loop = one knn_query call "
      "per query from Python; CPU = process CPU time per query in the batch runs.  HotKV: VSIM key FP32 <blob> COUNT 10 EF ef over "
      "TCP, one request in flight per client; ratio = HotKV q/s with the most clients / hnswlib batch q/s; server CPU = the server "
      "process's CPU time (all threads) per query with the most clients; CPU ratio = hnswlib CPU per query / HotKV's (above 1: "
      "HotKV spends less), which is less disturbed than q/s by other work on the machine.\n")
for s in sets:
    quants = list(dict.fromkeys(r["quant"] for r in get(set=s, side="hotkv", what="query")))
    for q in quants:
        clients = sorted(set(int(r["clients"]) for r in get(set=s, side="hotkv", what="query", quant=q)))
        cm = clients[-1]
        hdr = ["EF", "hnswlib recall", "HotKV recall", "recall diff", "hnswlib q/s batch / loop"]
        hdr += ["HotKV q/s %dc" % c for c in clients]
        hdr += ["ratio %dc" % cm, "hnswlib CPU us/q", "HotKV server CPU us/q %dc" % cm, "CPU ratio", "HotKV p50 / p99 ms %dc" % cm]
        print("### %s dimensions, %s\n" % (s, q))
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for ef in efs:
            h = get(set=s, side="hnswlib", what="query", ef=ef)
            h = h[0] if h else {}
            qr = {int(r["clients"]): r for r in get(set=s, side="hotkv", what="query", quant=q, ef=ef)}
            if not qr:
                continue
            hr, hq, hc = f(h.get("recall")), f(h.get("qps_batch")), f(h.get("cpu_us_per_query"))
            rec = f(qr[min(qr)]["recall"])
            top = qr[max(qr)]
            sc = f(top.get("server_cpu_us_per_query"), -1)
            ratio = f(top["qps"]) / hq if h and hq > 0 else float("nan")
            cratio = hc / sc if h and sc > 0 and hc == hc else float("nan")
            cells = [str(ef), "%.4f" % hr if h else "-", "%.4f" % rec, "%+.4f" % (rec - hr) if h else "-",
                     "%.0f / %.0f" % (hq, f(h.get("qps_loop"))) if h else "-"]
            cells += ["%.0f" % f(qr[c]["qps"]) if c in qr else "-" for c in clients]
            cells += ["%.2fx" % ratio if ratio == ratio else "-", "%.1f" % hc if hc == hc else "-",
                      "%.1f" % sc if sc > 0 else "-", "%.2fx" % cratio if cratio == cratio else "-",
                      "%.2f / %.2f" % (f(top["p50_ms"]), f(top["p99_ms"]))]
            print("| " + " | ".join(cells) + " |")
            if h:
                ok = rec >= hr - 0.005
                verdicts.append(("recall %s-dim %s EF %d: %.4f vs hnswlib %.4f (>= -0.005)" % (s, q, ef, rec, hr), ok))
                if ef >= 80:
                    ok = ratio >= 0.7
                    verdicts.append(("q/s %s-dim %s EF %d, %d clients: %.2fx hnswlib (>= 0.7x; CPU ratio %s)" % (
                        s, q, ef, max(qr), ratio, "%.2fx" % cratio if cratio == cratio else "-"), ok))
        print()
st = get(side="hotkv", what="stall")
if st:
    print("## Stall: a PING client's latency while a large VSIM runs on the same worker\n")
    print("| dims | quant | VSIM | results | big VSIM mean / max ms | PING p99 / max ms during | PING p99 / max ms alone |")
    print("|---|---|---|---|---|---|---|")
    for r in st:
        print("| %s | %s | EF %s COUNT %s x %s | %s | %s / %s | %s / %s | %s / %s |" % (r["set"], r["quant"], r["ef"], r["count"], r["reps"],
              r["results"], r["big_mean_ms"], r["big_max_ms"], r["ping_p99_ms"], r["ping_max_ms"], r["baseline_p99_ms"], r["baseline_max_ms"]))
    print()
if verdicts:
    print("## Targets\n")
    for text, ok in verdicts:
        print("- %s: %s" % (text, "ok" if ok else "**MISSED**"))
    print()
    print("%d of %d targets met." % (sum(1 for _, ok in verdicts if ok), len(verdicts)))
EOF
{
    echo
    echo "<details><summary>raw results</summary>"
    echo
    echo '```'
    cat "$RES"
    echo '```'
    echo "</details>"
} >> "$REPORT"
cat "$REPORT"
if [ -n "$OUT_FILE" ]; then
    mkdir -p "$(dirname "$OUT_FILE")"
    cp "$REPORT" "$OUT_FILE" && log "report written to $OUT_FILE"
fi
