#!/usr/bin/env bash
# bench/vector8.sh - issue #21 part 1: HotKV's vector sets against a real
# Redis 8 (vector sets built in), side by side on the same data, same
# client, same machine.
#
# The Redis 8 binary comes from REDIS8_SERVER (built by hand outside the
# repository; the project holds no Redis code, binary or build recipe).
# Without it the script says so and runs bench/issue8.sh, which compares
# with hnswlib in-process, as before.
#
# Data (bench/vecbench.c gen, cached in DATA_DIR): normalised clustered
# embeddings of low intrinsic dimension: for 1536 dims N1536 points whose
# clusters live in a LATENT1536-dimensional space mapped into the full one
# by a fixed random linear map (plus faint full-rank noise); for 128 dims
# N128 points clustered in the full space (LATENT128=0); NQ held-out
# queries with the exact top 10 by brute force.
#
# For each set in SETS and each quantisation in QUANTS, one server at a
# time on all cores (HotKV with HOTKV_ARGS, default --threads 2; Redis 8
# with its defaults, which run VSIM on its own threads): VADD of every
# point pipelined (PIPELINE in flight) -> VADD/s and used_memory growth per
# element; then for each EF in EFS and each client count in CLIENTS:
# VSIM key FP32 <blob> COUNT 10 EF ef, one request in flight per client,
# until every query ran once and T seconds passed -> recall@10, queries/s,
# p50/p99, and the server's CPU time per query.  vecbench runs on the same
# cores (this is a 2-core machine: the load generator shares them).
#
# Targets (issue #21 part 1): HotKV >= 3x Redis 8's queries/s at every EF
# (40..500) with 1 and with 8 clients, at equal or better recall@10;
# memory per element <= Redis 8's; VADD/s >= 2x Redis 8's.
#
# Output: a markdown report (tables per set and quantisation, the targets)
# and an SVG plot of recall@10 against queries/s for both servers (-o FILE
# writes FILE and FILE's .svg; -o alone: docs/benchmarks/vector8-DATE.md).
#
# Usage: bench/vector8.sh [-o [FILE]]
# Environment: REDIS8_SERVER, HOTKV_BIN (build/hotkv-server), HOTKV_ARGS
#   (--threads 2), SETS ("1536 128"), N1536 (20000), N128 (100000),
#   LATENT1536 (64), LATENT128 (0), NQ (500), CLUSTERS (100), SIGMA (1.0),
#   SEED (8), EFS (40,80,150,300,500), CLIENTS (1,8), QUANTS
#   ("NOQUANT Q8"), T (3), R (1: query runs per server, figures are
#   their medians), PIPELINE (32), DATA_DIR (/tmp/hotkv-vecdata),
#   BENCH_BUILD (build), SERVER_CPU (all cores), KEEP=1, QUICK=1
#   (N1536=5000 N128=20000 NQ=200 T=2 EFS=40,150,500).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
die() { echo "vector8.sh: error: $*" >&2; exit 1; }
log() { echo "[vector8 $(date +%H:%M:%S)] $*" >&2; }

OUT=""
if [ "${1:-}" = -o ]; then
    OUT=${2:-docs/benchmarks/vector8-$(date +%Y-%m-%d).md}
    shift; [ $# -gt 0 ] && shift
fi
[ $# -eq 0 ] || die "usage: bench/vector8.sh [-o [FILE]]"

if [ -z "${REDIS8_SERVER:-}" ]; then
    log "REDIS8_SERVER is not set: no Redis 8 to compare with; running bench/issue8.sh (HotKV against hnswlib) instead"
    exec bash "$ROOT/bench/issue8.sh" ${OUT:+-o "$OUT"}
fi
[ -x "$REDIS8_SERVER" ] || die "REDIS8_SERVER is not an executable: $REDIS8_SERVER"

CMDLINE=""
for v in QUICK HOTKV_BIN HOTKV_ARGS SETS N1536 N128 LATENT1536 LATENT128 NQ CLUSTERS SIGMA SEED EFS CLIENTS QUANTS T R \
         PIPELINE SERVER_CPU; do
    [ -n "${!v+x}" ] && CMDLINE+="$v=$(printf '%q' "${!v}") "
done
if [ "${QUICK:-0}" = 1 ]; then
    : "${N1536:=5000}" "${N128:=20000}" "${NQ:=200}" "${T:=2}" "${EFS:=40,150,500}"
fi
SETS=${SETS:-1536 128}; N1536=${N1536:-20000}; N128=${N128:-100000}
LATENT1536=${LATENT1536:-64}; LATENT128=${LATENT128:-0}; NQ=${NQ:-500}
CLUSTERS=${CLUSTERS:-100}; SIGMA=${SIGMA:-1.0}; SEED=${SEED:-8}
EFS=${EFS:-40,80,150,300,500}; CLIENTS=${CLIENTS:-1,8}; QUANTS=${QUANTS:-NOQUANT Q8}
T=${T:-3}; R=${R:-1}; PIPELINE=${PIPELINE:-32}; DATA_DIR=${DATA_DIR:-/tmp/hotkv-vecdata}
BENCH_BUILD=${BENCH_BUILD:-build}
SERVER_CPU=${SERVER_CPU:-0-$(( $(nproc) - 1 ))}
read -r -a HOTKV_BASE <<< "${HOTKV_ARGS:---threads 2}"
PY=/usr/bin/python3; RCLI=redis-cli
HOTKV=$(readlink -f "${HOTKV_BIN:-build/hotkv-server}")
[ -x "$HOTKV" ] || die "no HotKV binary at ${HOTKV_BIN:-build/hotkv-server} (run make)"
command -v "$RCLI" >/dev/null || die "redis-cli not found"
R8VER=$("$REDIS8_SERVER" --version | sed 's/^Redis server //')

VB=$ROOT/$BENCH_BUILD/vecbench
W=$(mktemp -d /tmp/hotkv-vector8.XXXXXX)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
build_vecbench "$VB"
REDIS=$REDIS8_SERVER
# shellcheck disable=SC2034
HOTKV_EXTRA=("${HOTKV_BASE[@]}" --save "" --appendonly no)
# shellcheck disable=SC2034
REDIS_ARGS=(--save "" --appendonly no)
RES=$W/results.txt
: > "$RES"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

mkdir -p "$DATA_DIR" || die "cannot create $DATA_DIR"
declare -A FILE_OF=()
for d in $SETS; do
    case $d in 1536) n=$N1536; lat=$LATENT1536 ;; 128) n=$N128; lat=$LATENT128 ;; *) die "unknown set $d" ;; esac
    f="$DATA_DIR/vec-n$n-d$d-q$NQ-c$CLUSTERS-s$SIGMA-seed$SEED-l$lat.bin"
    vec_dataset "$d" "$f" -n "$n" -d "$d" -q "$NQ" -k 10 --clusters "$CLUSTERS" --sigma "$SIGMA" --seed "$SEED" \
        --latent "$lat"
    FILE_OF[$d]=$f
done

for d in $SETS; do
    for q in $QUANTS; do
        for side in hotkv redis8; do
            name=hotkv; [ $side = redis8 ] && name=redis
            start_server "$name" "$d-$q"
            log "$side $d dims $q: loading on port $SRV_PORT"
            "$VB" load -p "$SRV_PORT" -f "${FILE_OF[$d]}" -K vs --quant "$q" -P "$PIPELINE" --server-pid "$SRV_PID" \
                > "$W/load.txt" 2>&1 || { cat "$W/load.txt" >&2; die "$side load failed"; }
            l=$(grep '^VECBENCH load ' "$W/load.txt"); log "$l"
            echo "set=$d quant=$q side=$side ${l#VECBENCH load }" >> "$RES"
            for ((rep = 1; rep <= R; rep++)); do
                "$VB" query -p "$SRV_PORT" -f "${FILE_OF[$d]}" -K vs --ef "$EFS" --clients "$CLIENTS" -T "$T" \
                    --server-pid "$SRV_PID" > "$W/query.txt" 2>&1 || { cat "$W/query.txt" >&2; die "$side query failed"; }
                grep '^VECBENCH query ' "$W/query.txt" | while read -r ql; do
                    log "$ql"; echo "set=$d quant=$q side=$side rep=$rep ${ql#VECBENCH query }" >> "$RES"
                done
            done
            stop_server "$SRV_PID"
        done
    done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

SVG=""; [ -n "$OUT" ] && SVG=${OUT%.md}.svg
"$PY" - "$RES" "$SVG" "$OUT" "$R8VER" "$HOTKV" "${HOTKV_BASE[*]}" "$LOAD0" "$LOAD1" "$(nproc)" \
    "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" "$SERVER_CPU" "$CMDLINE" <<'PYEOF' > "$W/report.md"
import sys, collections
res, svg, out, r8ver, hotkv, hargs, load0, load1, ncpu, rev, cpus, cmdline = sys.argv[1:13]
rows = []
for line in open(res):
    kv = dict(t.split("=", 1) for t in line.split() if "=" in t)
    rows.append(kv)
data = {r["set"]: r for r in rows if r.get("side") == "data"}
loads = {(r["set"], r["quant"], r["side"]): r for r in rows if "vadd_per_s" in r}
f = lambda x: float(x)
# with R repetitions, each figure is the median of its runs
runs = collections.defaultdict(list)
for r in rows:
    if "qps" in r:
        runs[(r["set"], r["quant"], int(r["clients"]), r["side"], int(r["ef"]))].append(r)
qs = collections.defaultdict(dict)
reps = 1
for (s_, q_, c_, side_, ef_), rs in runs.items():
    reps = max(reps, len(rs))
    med = {}
    for fld in ("qps", "recall", "server_cpu_us_per_query", "p99_ms"):
        v = sorted(f(r[fld]) for r in rs)
        med[fld] = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    qs[(s_, q_, c_)][(side_, ef_)] = med
print("# Vector sets: HotKV against Redis 8 (issue 21 part 1)\n")
print("Command: `%sbench/vector8.sh%s` with REDIS8_SERVER set  " % (cmdline, " -o " + out if out else ""))
print("HotKV: `%s %s` (HEAD %s); Redis 8: `%s` (defaults; VSIM on its own threads).  " % (hotkv, hargs, rev, r8ver))
print("Machine: %s cores; servers on cores %s, vecbench on the same cores; load %s at start, %s at end.  " % (ncpu, cpus, load0, load1))
print("Method: one server at a time; VADD of every point pipelined, then per EF and client count VSIM FP32 COUNT 10 EF ef, one request in flight per client, until every query ran once and the time passed; recall@10 over the first pass against the exact top 10%s.\n" % (
    "; every query figure is the median of %d runs on the same loaded server" % reps if reps > 1 else ""))
print("## Data\n")
print("| dims | points | queries | clusters | latent dims | mean top-1 / top-10 cosine |")
print("|---|---|---|---|---|---|")
for s, r in data.items():
    print("| %s | %s | %s | %s | %s | %s / %s |" % (s, r.get("n"), r.get("nq"), r.get("clusters"), r.get("latent", "0"),
          r.get("mean_top1_sim", "-"), r.get("mean_topk_sim", "-")))
targets = []
print("\n## Load and memory\n")
print("| dims | quant | HotKV VADD/s | Redis 8 VADD/s | ratio | HotKV B/element | Redis 8 B/element |")
print("|---|---|---|---|---|---|---|")
for (s, q, side), r in sorted(loads.items()):
    if side != "hotkv" or (s, q, "redis8") not in loads:
        continue
    o = loads[(s, q, "redis8")]
    ra = f(r["vadd_per_s"]) / f(o["vadd_per_s"])
    print("| %s | %s | %.0f | %.0f | %.2fx | %.0f | %.0f |" % (s, q, f(r["vadd_per_s"]), f(o["vadd_per_s"]), ra,
          f(r["bytes_per_elem"]), f(o["bytes_per_elem"])))
    targets.append("VADD/s %s dims %s: %.2fx Redis 8 (target 2x): %s" % (s, q, ra, "ok" if ra >= 2 else "**MISSED**"))
    mm = f(r["bytes_per_elem"]) <= f(o["bytes_per_elem"])
    targets.append("memory per element %s dims %s: %.0f vs %.0f B (target <=): %s" % (s, q, f(r["bytes_per_elem"]),
                   f(o["bytes_per_elem"]), "ok" if mm else "**MISSED**"))
curves = []
for key in sorted(qs, key=lambda k: (k[0], k[1], k[2])):
    s, q, c = key
    d = qs[key]
    efs = sorted({ef for (_, ef) in d})
    print("\n## %s dims, %s, %d client%s\n" % (s, q, c, "" if c == 1 else "s"))
    print("| EF | HotKV recall | Redis 8 recall | HotKV q/s | Redis 8 q/s | ratio | HotKV / Redis 8 server CPU us per query | HotKV / Redis 8 p99 ms |")
    print("|---|---|---|---|---|---|---|---|")
    hc, rc = [], []
    for ef in efs:
        h, r = d.get(("hotkv", ef)), d.get(("redis8", ef))
        if not h or not r:
            continue
        ra = f(h["qps"]) / f(r["qps"])
        print("| %d | %.4f | %.4f | %.0f | %.0f | %.2fx | %.0f / %.0f | %.2f / %.2f |" % (ef, f(h["recall"]), f(r["recall"]),
              f(h["qps"]), f(r["qps"]), ra, f(h["server_cpu_us_per_query"]), f(r["server_cpu_us_per_query"]),
              f(h["p99_ms"]), f(r["p99_ms"])))
        hc.append((f(h["recall"]), f(h["qps"])))
        rc.append((f(r["recall"]), f(r["qps"])))
        ok = ra >= 3 and f(h["recall"]) >= f(r["recall"]) - 1e-9
        targets.append("q/s %s dims %s %d clients EF %d: %.2fx at recall %.4f vs %.4f (target 3x, recall >=): %s" % (
            s, q, c, ef, ra, f(h["recall"]), f(r["recall"]), "ok" if ok else "**MISSED**"))
    curves.append(("%s dims %s, %d client%s" % (s, q, c, "" if c == 1 else "s"), hc, rc))
print("\n## Targets\n")
for t in targets:
    print("- " + t)
if svg:
    print("\n![recall@10 against queries/s](%s)" % svg.rsplit("/", 1)[-1])
    import math
    cols = 2
    pw, ph, m = 380, 260, 50
    nrows = (len(curves) + cols - 1) // cols
    W, H = cols * (pw + m) + m, nrows * (ph + m + 20) + m
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>']
    for i, (title, hc, rc) in enumerate(curves):
        x0 = m + (i % cols) * (pw + m)
        y0 = m + (i // cols) * (ph + m + 20)
        pts = hc + rc
        if not pts:
            continue
        qmax = max(p[1] for p in pts) * 1.1
        rmin = min(p[0] for p in pts)
        rmin = max(0.0, math.floor((rmin - 0.005) * 100) / 100)
        sx = lambda v: x0 + v / qmax * pw
        sy = lambda v: y0 + ph - (v - rmin) / (1.0 - rmin + 1e-9) * ph
        o.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (x0, y0 - 8, title))
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>' % (x0, y0, pw, ph))
        for k in range(5):
            qv = qmax * k / 4
            o.append('<text x="%.0f" y="%d" text-anchor="middle">%.0f</text>' % (sx(qv), y0 + ph + 14, qv))
            rv = rmin + (1.0 - rmin) * k / 4
            o.append('<text x="%d" y="%.0f" text-anchor="end">%.3f</text>' % (x0 - 4, sy(rv) + 4, rv))
        o.append('<text x="%d" y="%d" text-anchor="middle">queries/s</text>' % (x0 + pw / 2, y0 + ph + 28))
        for pts_, col, lab in ((hc, "#d62728", "HotKV"), (rc, "#1f77b4", "Redis 8")):
            if not pts_:
                continue
            o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
                col, " ".join("%.1f,%.1f" % (sx(q), sy(r)) for r, q in pts_)))
            for r, q in pts_:
                o.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (sx(q), sy(r), col))
        o.append('<text x="%d" y="%d" fill="#d62728">HotKV</text><text x="%d" y="%d" fill="#1f77b4">Redis 8</text>' % (
            x0 + pw - 90, y0 + 14, x0 + pw - 45, y0 + 14))
    o.append('<text x="%d" y="%d">recall@10 (y) against queries/s (x); points are EF 40..500, left to right high EF first</text>' % (m, H - 10))
    o.append("</svg>")
    open(svg, "w").write("\n".join(o) + "\n")
PYEOF
cat "$W/report.md"
if [ -n "$OUT" ]; then
    mkdir -p "$(dirname "$OUT")"
    cp "$W/report.md" "$OUT"
    log "wrote $OUT and $SVG"
fi
