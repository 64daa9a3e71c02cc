#!/usr/bin/env bash
# cluster.sh - Redis Cluster: a 3-master HotKV cluster against a 3-master
# redis-server cluster, side by side (issue #20's three measures).
#
# Every node is started with cluster-enabled yes, persistence off, on a port
# whose port+10000 (the bus) is free too; clusters are made with
# `redis-cli --cluster create ... --cluster-yes` and used once every node
# reports cluster_state:ok and all nodes agree on the map.  HotKV nodes run
# with --threads 1, so each node of either kind is one thread.
#   1. throughput: a 3-master cluster of each kind (no replicas, node
#      timeout 15000 ms), both alive side by side, KEYS keys of VSIZE bytes
#      preloaded (hotkv-benchmark --cluster --preload); then GET and SET at
#      pipeline 1 and 16, hotkv-benchmark --cluster with CLIENTS logical
#      clients (one connection to every master each), SECS seconds per
#      cell.  Requests/s per node and in total, and the nodes' CPU time
#      (/proc/PID/stat) per request; ROUNDS rounds, the two kinds back to
#      back in each cell, the order alternating from round to round; the
#      HotKV/redis ratios are medians of the per-round ratios.
#   2. slot migration: on the same clusters (KEYS keys), `redis-cli
#      --cluster reshard --cluster-from A --cluster-to B --cluster-slots
#      5461 --cluster-pipeline N` moves every slot of master A (0-5460,
#      about a third of the keys) to master B, then the same slots back
#      from B to A; keys moved (DBSIZE of the target, after - before) over
#      the wall time of redis-cli (which includes its own SETSLOT
#      IMPORTING/MIGRATING/NODE and GETKEYSINSLOT round trips, as in a real
#      reshard).  Once per pipeline of MIG_PIPELINES, HotKV and redis-server
#      alternating first.  Every node runs with
#      cluster-allow-replica-migration no, so a master left without slots
#      stays a master for the move back.  Before and after the moves, the
#      cost of one CLUSTER SETSLOT (IMPORTING, then STABLE, 1,000 slots)
#      against a CLUSTER COUNTKEYSINSLOT round trip: redis-cli sends 5
#      SETSLOTs per slot moved.
#   3. failover: a fresh 3-master + 3-replica cluster per round and kind
#      (--cluster-replicas 1, cluster-node-timeout FO_TIMEOUT ms), FO_KEYS
#      keys preloaded, every replica synced (each master's INFO replication
#      shows its slave online at an offset equal to master_repl_offset); the
#      master of one key's slot is killed with SIGKILL and a SET of that key
#      is sent to its replica every 20 ms until it answers OK: the time from
#      the kill to that OK.  FO_ROUNDS rounds, order alternating.
# The nodes are pinned to core SERVER_CPU, hotkv-benchmark, redis-cli and
# the failover probe to LOAD_CPU (2 cores: the three nodes of a cluster
# share one core, so part 1 measures what one core of cluster nodes serves;
# the idle other cluster costs a few cron ticks).  PARTS picks a subset of
# "throughput migrate failover" (migrate implies the throughput clusters,
# loaded but without the throughput cells when throughput is left out).
#
# usage: bench/cluster.sh [-o REPORT.md]
#   KEYS (1000000), VSIZE (256), CLIENTS (50), SECS (5), ROUNDS (5),
#   MIG_PIPELINES ("10 100"), FO_ROUNDS (5), FO_KEYS (100000), FO_TIMEOUT
#   (2000), PARTS ("throughput migrate failover"), HOTKV_BIN
#   (build/hotkv-server), GEN_BIN (build/hotkv-benchmark), REDIS_BIN
#   (redis-server), SERVER_CPU (0), LOAD_CPU (1), KEEP (0: 1 keeps the
#   scratch dir with the node logs)
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
# the command line as given (variables set in the environment, then the script)
CMDLINE=
for v in KEYS VSIZE CLIENTS SECS ROUNDS MIG_PIPELINES FO_ROUNDS FO_KEYS FO_TIMEOUT PARTS \
         HOTKV_BIN GEN_BIN REDIS_BIN SERVER_CPU LOAD_CPU; do
    if [ -n "${!v+x}" ]; then
        case ${!v} in *' '*|'') CMDLINE+="$v=\"${!v}\" " ;; *) CMDLINE+="$v=${!v} " ;; esac
    fi
done
CMDLINE+="bench/cluster.sh${OUT:+ -o $OUT}"
KEYS=${KEYS:-1000000} VSIZE=${VSIZE:-256} CLIENTS=${CLIENTS:-50} SECS=${SECS:-5} ROUNDS=${ROUNDS:-5}
MIG_PIPELINES=${MIG_PIPELINES:-10 100} FO_ROUNDS=${FO_ROUNDS:-5} FO_KEYS=${FO_KEYS:-100000}
FO_TIMEOUT=${FO_TIMEOUT:-2000} PARTS=${PARTS:-throughput migrate failover}
SERVER_CPU=${SERVER_CPU:-0} LOAD_CPU=${LOAD_CPU:-1}
HOTKV=$(realpath "${HOTKV_BIN:-build/hotkv-server}") GEN=$(realpath "${GEN_BIN:-build/hotkv-benchmark}")
REDIS=${REDIS_BIN:-redis-server} RCLI=redis-cli PY=/usr/bin/python3
[ -x "$HOTKV" ] || die "no $HOTKV (make first)"
[ -x "$GEN" ] || die "no $GEN (make first)"
command -v "$REDIS" >/dev/null || die "no $REDIS"
for t in $RCLI taskset "$PY"; do command -v "$t" >/dev/null || die "missing tool: $t"; done
part() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
W=$(mktemp -d /tmp/clusterbench.XXXXXX)
. bench/lib.sh
RES=$W/results.txt
: >"$RES"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
# the binary under test, as it was at the start (a rebuild during the run would show)
HOTKV_ID="built $(date -u -r "$HOTKV" '+%Y-%m-%d %H:%M:%S UTC'), sha1 $(sha1sum "$HOTKV" | cut -c1-12)"
T_START=$(date +%s)

# cl.py: the RESP side of the script (cluster state, sync, the failover probe)
cat >"$W/cl.py" <<'PYEOF'
import os, random, signal, socket, sys, time

class Conn:
    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection(("127.0.0.1", int(port)), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise ConnectionError("closed")
            self.buf += d
        l, self.buf = self.buf.split(b"\r\n", 1)
        return l
    def _read(self):
        l = self._line()
        t, rest = l[:1], l[1:]
        if t in (b"+", b"-"):
            return (t.decode() + rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                d = self.s.recv(65536)
                if not d:
                    raise ConnectionError("closed")
                self.buf += d
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v.decode(errors="replace")
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ValueError("bad reply %r" % l)
    def cmd(self, *a):
        a = [str(x).encode() for x in a]
        self.s.sendall(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
        return self._read()

def q(port, *a):
    c = Conn(port)
    try:
        return c.cmd(*a)
    finally:
        c.s.close()

def nodes(port):
    """CLUSTER NODES of one node: {id: (port, flags, master, slots)}"""
    out = {}
    for line in q(port, "CLUSTER", "NODES").splitlines():
        f = line.split()
        if len(f) < 8:
            continue
        slots = set()
        for r in f[8:]:
            if r.startswith("["):
                continue
            lo, _, hi = r.partition("-")
            slots.update(range(int(lo), int(hi or lo) + 1))
        p = int(f[1].split("@")[0].rsplit(":", 1)[1] or 0)
        out[f[0]] = (p, set(f[2].replace("myself,", "").split(",")), f[3], frozenset(slots), f[7])
    return out

def agree(ports):
    """every node ok and all with the same view: nodes, roles, slots, links up"""
    views = []
    for p in ports:
        info = q(p, "CLUSTER", "INFO")
        if "cluster_state:ok" not in info:
            return "%s: not ok" % p
        n = nodes(p)
        if len(n) != len(ports):
            return "%s knows %d nodes" % (p, len(n))
        for nid, (np, fl, m, sl, link) in n.items():
            if fl & {"fail", "fail?", "handshake", "noaddr"} or (np != p and link != "connected"):
                return "%s sees %s as %s/%s" % (p, np, ",".join(sorted(fl)), link)
        views.append({nid: (np, "master" if "master" in fl else "slave", m, sl) for nid, (np, fl, m, sl, link) in n.items()})
    if any(v != views[0] for v in views):
        return "views differ"
    if sum(len(v[3]) for v in views[0].values()) != 16384:
        return "slots not all assigned"
    return ""

def wait(fn, timeout, what):
    t0 = time.time()
    why = ""
    while time.time() - t0 < timeout:
        try:
            why = fn()
        except (OSError, ValueError) as e:
            why = str(e)
        if not why:
            return
        time.sleep(0.05)
    sys.exit("timeout waiting for %s: %s" % (what, why))

def synced(masters):
    for p in masters:
        info = dict(l.split(":", 1) for l in q(p, "INFO", "replication").splitlines() if ":" in l)
        if int(info.get("connected_slaves", 0)) < 1:
            return "%s: no replica" % p
        off = int(info["master_repl_offset"])
        for k, v in info.items():
            if k.startswith("slave") and k[5:].isdigit():
                kv = dict(x.split("=", 1) for x in v.split(","))
                if kv.get("state") != "online" or int(kv.get("offset", -1)) != off:
                    return "%s: %s %s/%s" % (p, k, kv.get("state"), kv.get("offset"))
    return ""

op = sys.argv[1]
if op == "agree":               # TIMEOUT PORT...
    ports = [int(p) for p in sys.argv[3:]]
    wait(lambda: agree(ports), float(sys.argv[2]), "cluster_state:ok and one view on every node")
elif op == "synced":            # TIMEOUT MASTER_PORT...
    ports = [int(p) for p in sys.argv[3:]]
    wait(lambda: synced(ports), float(sys.argv[2]), "the replicas to sync")
elif op == "roles":             # PORT -> "port role master_port nslots" per node
    n = nodes(sys.argv[2])
    byid = {nid: v[0] for nid, v in n.items()}
    for nid, (p, fl, m, sl, link) in sorted(n.items(), key=lambda x: x[1][0]):
        print(p, "master" if "master" in fl else "slave", byid.get(m, 0), len(sl), min(sl) if sl else -1, nid)
elif op == "keyfor":            # PORT MASTER_PORT -> a key of a slot MASTER_PORT owns
    n = nodes(sys.argv[2])
    mine = next(v[3] for v in n.values() if v[0] == int(sys.argv[3]))
    c = Conn(sys.argv[2])
    for i in range(100000):
        k = "failover:probe:%d" % i
        if c.cmd("CLUSTER", "KEYSLOT", k) in mine:
            print(k)
            break
    else:
        sys.exit("no key found")
elif op == "failover":          # REPLICA_PORT MASTER_PID KEY TIMEOUT_S
    port, pid, key, limit = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
    c = Conn(port)
    c.cmd("PING")
    os.kill(pid, signal.SIGKILL)
    t0 = time.monotonic()
    seen, tries, nxt, down = {}, 0, t0, None
    while True:
        tries += 1
        try:
            r = c.cmd("SET", key, "after-failover")
        except OSError as e:
            r = "-(%s)" % e
            c = Conn(port)
        now = time.monotonic()
        if r == "+OK":
            break
        kind = str(r).split()[0]
        seen[kind] = seen.get(kind, 0) + 1
        if kind != "-MOVED" and down is None:
            down = now - t0
        if now - t0 > limit:
            sys.exit("no OK from the replica %.1f s after the kill (%s)" % (now - t0, seen))
        nxt += 0.02
        time.sleep(max(0.0, nxt - time.monotonic()))
    print("%.0f %s %d %s" % ((now - t0) * 1000, "%.0f" % (down * 1000) if down is not None else "-", tries,
                             ",".join("%s=%d" % kv for kv in sorted(seen.items())) or "-"))
elif op == "setslot-cost":      # PORT OWNER_PORT N -> ms per SETSLOT, ms per COUNTKEYSINSLOT
    port, owner, n = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    oid, osl = next((nid, v[3]) for nid, v in nodes(port).items() if v[0] == owner)
    slots = sorted(osl)[:n]
    c = Conn(port)
    t0 = time.perf_counter()
    for sl in slots:
        r1, r2 = c.cmd("CLUSTER", "SETSLOT", sl, "IMPORTING", oid), c.cmd("CLUSTER", "SETSLOT", sl, "STABLE")
        if r1 != "+OK" or r2 != "+OK":
            sys.exit("SETSLOT %d: %s %s" % (sl, r1, r2))
    t1 = time.perf_counter()
    for sl in slots:
        c.cmd("CLUSTER", "COUNTKEYSINSLOT", sl)
    t2 = time.perf_counter()
    print("%.3f %.3f" % ((t1 - t0) / (2 * len(slots)) * 1000, (t2 - t1) / len(slots) * 1000))
elif op == "ports":             # N -> N ports p with p and p+10000 free
    want, got = int(sys.argv[2]), []
    while len(got) < want:
        p = random.randint(20000, 55000)
        if any(abs(p - g) in (0, 10000) for g in got):
            continue
        ok = True
        for x in (p, p + 10000):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", x))
            except OSError:
                ok = False
            finally:
                s.close()
        if ok:
            got.append(p)
    print(" ".join(map(str, got)))
PYEOF
cl() { "$PY" "$W/cl.py" "$@"; }

# node KIND LABEL PORT TIMEOUT_MS -> starts one cluster node (pid in NODE_PID)
node() {
    local kind=$1 label=$2 port=$3 to=$4 bin extra=()
    if [ "$kind" = hotkv ]; then bin=$HOTKV; extra=(--threads 1); else bin=$REDIS; fi
    mkdir -p "$W/run/$label"
    (cd "$W/run/$label" && exec taskset -c "$SERVER_CPU" "$bin" --port "$port" --bind 127.0.0.1 \
        --save "" --appendonly no --cluster-enabled yes --cluster-config-file nodes.conf \
        --cluster-node-timeout "$to" --cluster-allow-replica-migration no --repl-diskless-sync yes --repl-diskless-sync-delay 0 "${extra[@]}") \
        >"$W/$label.log" 2>&1 </dev/null &
    NODE_PID=$!
    SERVER_PIDS+=("$NODE_PID")
}

# make_cluster KIND TAG REPLICAS TIMEOUT_MS -> CL_PORTS / CL_PIDS (masters
# first, in slot order, then replicas); the cluster is ok and agreed
make_cluster() {
    local kind=$1 tag=$2 reps=$3 to=$4 n ports pids=() p i
    n=$((3 * (1 + reps)))
    read -r -a ports <<<"$(cl ports "$n")"
    for ((i = 0; i < n; i++)); do
        node "$kind" "$tag-n$i" "${ports[i]}" "$to"
        pids+=("$NODE_PID")
    done
    for ((i = 0; i < n; i++)); do
        for _ in $(seq 100); do
            [ "$($RCLI -p "${ports[i]}" PING 2>/dev/null)" = PONG ] && break
            kill -0 "${pids[i]}" 2>/dev/null || { tail -5 "$W/$tag-n$i.log" >&2; die "$kind node $i exited"; }
            sleep 0.1
        done
    done
    local addrs=()
    for p in "${ports[@]}"; do addrs+=("127.0.0.1:$p"); done
    taskset -c "$LOAD_CPU" $RCLI --cluster create "${addrs[@]}" --cluster-replicas "$reps" --cluster-yes \
        >"$W/$tag-create.log" 2>&1 || { tail -20 "$W/$tag-create.log" >&2; die "$kind: cluster create failed"; }
    cl agree 60 "${ports[@]}" || die "$kind cluster $tag never agreed (logs in $W, KEEP=1 keeps them)"
    # order: masters by their first slot, then each master's replica
    CL_PORTS=() CL_PIDS=()
    local roles
    roles=$(cl roles "${ports[0]}")
    local mports
    mports=$(awk '$2 == "master" {print $5, $1}' <<<"$roles" | sort -n | awk '{print $2}')
    for p in $mports; do CL_PORTS+=("$p"); done
    for p in $mports; do
        local r
        r=$(awk -v m="$p" '$2 == "slave" && $3 == m {print $1}' <<<"$roles" | head -1)
        if [ -n "$r" ]; then CL_PORTS+=("$r"); fi
    done
    [ "${#CL_PORTS[@]}" = "$n" ] || die "$kind cluster $tag: unexpected roles: $roles"
    for p in "${CL_PORTS[@]}"; do
        for ((i = 0; i < n; i++)); do
            if [ "${ports[i]}" = "$p" ]; then CL_PIDS+=("${pids[i]}"); fi
        done
    done
    [ "${#CL_PIDS[@]}" = "$n" ] || die "$kind cluster $tag: pids and ports do not match"
}

# stop_pids PID... -> TERM, wait (KILL after 10 s), forget them
stop_pids() {
    local p keep=() q
    for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "$@"; do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    for q in "${SERVER_PIDS[@]}"; do
        for p in "$@"; do [ "$p" = "$q" ] && continue 2; done
        keep+=("$q")
    done
    SERVER_PIDS=("${keep[@]:-}")
}

cpu_ticks() {  # PID... -> user+system clock ticks of them all
    local t=0 p
    for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
    echo "$t"
}
HZ=$(getconf CLK_TCK)
dbsize() { $RCLI -p "$1" DBSIZE | tr -d '\r'; }
gen() { taskset -c "$LOAD_CPU" "$GEN" --cluster "$@"; }
order() {  # ROUND -> "hotkv redis" or "redis hotkv"
    if (($1 % 2)); then echo hotkv redis; else echo redis hotkv; fi
}

# ---- parts 1 and 2: 3 masters of each kind, KEYS keys ----------------------
declare -A MP MPID
if part throughput || part migrate; then
    for kind in hotkv redis; do
        make_cluster "$kind" "$kind-tp" 0 15000
        MP[$kind]="${CL_PORTS[*]}" MPID[$kind]="${CL_PIDS[*]}"
        log "$kind: 3-master cluster up on ports ${MP[$kind]}; preloading $KEYS keys of $VSIZE bytes"
        read -r -a ps <<<"${MP[$kind]}"
        t0=$(date +%s.%N)
        gen -p "${ps[0]}" -c "$CLIENTS" -P 32 --preload --key-space "$KEYS" -d "$VSIZE" \
            --workload get --requests 1 -q >"$W/$kind-preload.txt" 2>&1 \
            || { cat "$W/$kind-preload.txt" >&2; die "$kind preload failed"; }
        n=0; per=
        for p in "${ps[@]}"; do k=$(dbsize "$p"); n=$((n + k)); per+=" $k"; done
        log "$kind: preloaded in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s, keys per node:$per"
        [ "$n" = "$KEYS" ] || die "$kind: $n keys after the preload, not $KEYS"
    done
fi

if part throughput; then
    for round in $(seq "$ROUNDS"); do
        for test in get set; do
            for pl in 1 16; do
                for kind in $(order "$round"); do
                    read -r -a ps <<<"${MP[$kind]}"
                    read -r -a pids <<<"${MPID[$kind]}"
                    c0=$(cpu_ticks "${pids[@]}")
                    gen -p "${ps[0]}" -c "$CLIENTS" -P "$pl" --key-space "$KEYS" -d "$VSIZE" \
                        --workload "$test" --test-time "$SECS" --json "$W/tp.json" -q >"$W/tp.txt" 2>&1 \
                        || { cat "$W/tp.txt" >&2; die "hotkv-benchmark failed against $kind"; }
                    c1=$(cpu_ticks "${pids[@]}")
                    line=$("$PY" - "$W/tp.json" "$((c1 - c0))" "$HZ" "${ps[@]}" <<'PYEOF'
import json, sys
s = json.load(open(sys.argv[1]))["steps"][0]
by = {n["node"].rsplit(":", 1)[1]: n["achieved_rps"] for n in s["cluster"]["nodes"]}
print(int(s["achieved_rps"]), *[int(by.get(p, 0)) for p in sys.argv[4:]], s["errors"],
      s["cluster"]["moved"], "%.0f" % (s.get("generator_cpu_pct") or 0),
      "%.2f" % (int(sys.argv[2]) / int(sys.argv[3]) * 1e6 / max(1, s["requests"])))
PYEOF
)
                    echo "tp $round $kind $test $pl $line" >>"$RES"
                    log "round $round $kind: $test P$pl: total/per node/errors/MOVED/gen%/server us per request: $line"
                done
            done
        done
    done
fi

# slot_cost WHEN: what one slot's bookkeeping costs, CLUSTER SETSLOT (a
# config change, no keys) against COUNTKEYSINSLOT (a round trip without
# one), on node 1 for 1,000 slots of node 3, both kinds
slot_cost() {
    local kind c ps
    for kind in $(order "$([ "$1" = before ] && echo 1 || echo 2)"); do
        read -r -a ps <<<"${MP[$kind]}"
        c=$(taskset -c "$LOAD_CPU" "$PY" "$W/cl.py" setslot-cost "${ps[0]}" "${ps[2]}" 1000) \
            || die "$kind: CLUSTER SETSLOT IMPORTING/STABLE failed"
        echo "slot $1 $kind $c" >>"$RES"
        log "$kind ($1 the moves): CLUSTER SETSLOT $(cut -d' ' -f1 <<<"$c") ms, COUNTKEYSINSLOT $(cut -d' ' -f2 <<<"$c") ms per command"
    done
}

if part migrate; then
    slot_cost before
    declare -A MID_A MID_B
    for kind in hotkv redis; do
        read -r -a ps <<<"${MP[$kind]}"
        MID_A[$kind]=$($RCLI -p "${ps[0]}" CLUSTER MYID | tr -d '\r')
        MID_B[$kind]=$($RCLI -p "${ps[1]}" CLUSTER MYID | tr -d '\r')
    done
    i=0
    for mp in $MIG_PIPELINES; do
        for dir in there back; do
            i=$((i + 1))
            for kind in $(order "$i"); do
                read -r -a ps <<<"${MP[$kind]}"
                if [ "$dir" = there ]; then from=${MID_A[$kind]} to=${MID_B[$kind]} tport=${ps[1]} sport=${ps[0]}
                else from=${MID_B[$kind]} to=${MID_A[$kind]} tport=${ps[0]} sport=${ps[1]}; fi
                before=$(dbsize "$tport") sbefore=$(dbsize "$sport")
                t0=$(date +%s.%N)
                taskset -c "$LOAD_CPU" $RCLI --cluster reshard "127.0.0.1:${ps[0]}" --cluster-from "$from" \
                    --cluster-to "$to" --cluster-slots 5461 --cluster-yes --cluster-pipeline "$mp" \
                    >"$W/$kind-reshard-$i.log" 2>&1 \
                    || { grep -v 'Moving slot' "$W/$kind-reshard-$i.log" | tail -20 >&2; die "$kind: reshard $dir (pipeline $mp) failed"; }
                t1=$(date +%s.%N)
                after=$(dbsize "$tport") safter=$(dbsize "$sport")
                moved=$((after - before))
                secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
                kps=$(awk -v m="$moved" -v s="$secs" 'BEGIN {printf "%.0f", m / s}')
                [ "$moved" -gt 0 ] || die "$kind: reshard moved no keys"
                [ $((sbefore - safter)) = "$moved" ] || log "warning: $kind source lost $((sbefore - safter)) keys, target gained $moved"
                echo "mig $i $kind $mp $dir $moved $secs $kps" >>"$RES"
                log "$kind: reshard $dir, pipeline $mp: $moved keys in $secs s = $kps keys/s (source left with $safter keys)"
                cl agree 60 "${ps[@]}" || die "$kind cluster did not settle after the reshard"
            done
        done
    done
fi

if part migrate; then slot_cost after; fi

if part throughput || part migrate; then
    for kind in hotkv redis; do read -r -a pids <<<"${MPID[$kind]}"; stop_pids "${pids[@]}"; done
fi

# ---- part 3: failover, 3 masters + 3 replicas per round ---------------------
if part failover; then
    for round in $(seq "$FO_ROUNDS"); do
        for kind in $(order "$round"); do
            make_cluster "$kind" "$kind-fo$round" 1 "$FO_TIMEOUT"
            ps=("${CL_PORTS[@]}") pids=("${CL_PIDS[@]}")
            gen -p "${ps[0]}" -c "$CLIENTS" -P 32 --preload --key-space "$FO_KEYS" -d "$VSIZE" \
                --workload get --requests 1 -q >"$W/$kind-fo-preload.txt" 2>&1 \
                || { cat "$W/$kind-fo-preload.txt" >&2; die "$kind preload failed"; }
            cl synced 120 "${ps[@]:0:3}" || die "$kind replicas did not sync"
            # victim: the master of slots 0-5460; its replica is ps[3]
            key=$(cl keyfor "${ps[3]}" "${ps[0]}")
            $RCLI -p "${ps[0]}" SET "$key" before >/dev/null
            cl synced 30 "${ps[@]:0:3}" || die "$kind replicas did not sync"
            res=$(taskset -c "$LOAD_CPU" "$PY" "$W/cl.py" failover "${ps[3]}" "${pids[0]}" "$key" 60) \
                || die "$kind: the replica did not take over"
            wait "${pids[0]}" 2>/dev/null || true
            read -r ms down tries seen <<<"$res"
            echo "fo $round $kind $ms $down $tries $seen" >>"$RES"
            log "round $round $kind: writable again $ms ms after the kill (first reply other than MOVED at $down ms; $tries SETs; replies before OK: $seen)"
            stop_pids "${pids[@]}"
        done
    done
fi

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
"$PY" - "$RES" "$CMDLINE" "$KEYS" "$VSIZE" "$CLIENTS" "$SECS" "$ROUNDS" "$FO_ROUNDS" "$FO_KEYS" "$FO_TIMEOUT" \
    "$(git rev-parse --short HEAD)$(git diff --quiet || echo ', tree modified')" \
    "$($REDIS --version | awk '{print $3}')" "$(nproc)" "$LOAD_START" "$LOAD_END" \
    "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)" "$(( $(date +%s) - T_START ))" \
    "$HOTKV" "$SERVER_CPU" "$LOAD_CPU" "$HOTKV_ID" >"$W/report.md" <<'PYEOF'
import statistics, sys
(res, cmdline, keys, vsize, clients, secs, rounds, fo_rounds, fo_keys, fo_to, rev, rver, ncpu,
 load0, load1, cpu, elapsed, hotkv, scpu, lcpu, hotkv_id) = sys.argv[1:22]
rows = [l.split() for l in open(res) if l.strip()]
med = statistics.median
name = {"hotkv": "HotKV", "redis": "redis-server"}
print("# Redis Cluster: 3-master HotKV against 3-master redis-server\n")
print("Command: `%s`  " % cmdline)
print("HotKV %s (`%s`, %s; every node `--threads 1`); redis-server %s.  Run took %d min %d s.\n"
      % (rev, hotkv, hotkv_id, rver, int(elapsed) // 60, int(elapsed) % 60))
print("Machine: %s cores (%s), shared with other work: load average %s at the start, %s at the end.  "
      "All cluster nodes on core %s, hotkv-benchmark / redis-cli / the failover probe on core %s, so the "
      "three nodes of a cluster share one core and the generator has the other.  Absolute numbers mean "
      "little on this box; the HotKV / redis-server ratios, measured back to back in one script, are "
      "what to read.\n" % (ncpu, cpu, load0, load1, scpu, lcpu))

tp = [r for r in rows if r[0] == "tp"]
if tp:
    print("## 1. Throughput: 3 masters, no replicas\n")
    print("%s keys of %s bytes preloaded (hotkv-benchmark `--cluster --preload`); hotkv-benchmark `--cluster`, "
          "%s logical clients (one connection to each master: %d connections), uniform keys, %s s per cell, "
          "%s rounds; in each cell the two clusters ran back to back, the order alternating from round to "
          "round.  Node 1 owns slots 0-5460, node 2 5461-10922, node 3 10923-16383 (as `redis-cli --cluster "
          "create` assigns them).  Medians over the rounds; the ratio is the median of the per-round "
          "HotKV/redis ratios of the totals.\n" % (keys, vsize, clients, 3 * int(clients), secs, rounds))
    print("| command | pipeline | HotKV node 1 / 2 / 3 (req/s) | HotKV total | redis node 1 / 2 / 3 (req/s) | redis total | HotKV / redis (req/s) | server CPU us per request, HotKV / redis | HotKV / redis (CPU per request) | generator CPU % (HotKV / redis) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for test in ("get", "set"):
        for pl in ("1", "16"):
            cell = {}
            for r in tp:
                if r[3] == test and r[4] == pl:
                    cell.setdefault(r[2], {})[r[1]] = r[5:]
            if not cell:
                continue
            def col(kind, i):
                return med([float(v[i]) for v in cell[kind].values()])
            ratios = [float(cell["hotkv"][rd][0]) / float(cell["redis"][rd][0])
                      for rd in cell["hotkv"] if rd in cell.get("redis", {}) and float(cell["redis"][rd][0])]
            cratios = [float(cell["hotkv"][rd][7]) / float(cell["redis"][rd][7])
                       for rd in cell["hotkv"] if rd in cell.get("redis", {}) and float(cell["redis"][rd][7])]
            print("| %s | %s | %s | %s | %s | %s | %.2fx | %.2f / %.2f | %.2fx | %s / %s |" % (
                test.upper(), pl,
                " / ".join("{:,.0f}".format(col("hotkv", i)) for i in (1, 2, 3)), "{:,.0f}".format(col("hotkv", 0)),
                " / ".join("{:,.0f}".format(col("redis", i)) for i in (1, 2, 3)), "{:,.0f}".format(col("redis", 0)),
                med(ratios) if ratios else 0, col("hotkv", 7), col("redis", 7), med(cratios) if cratios else 0,
                "%.0f" % col("hotkv", 6), "%.0f" % col("redis", 6)))
    errs = sum(int(r[9]) for r in tp)
    moved = sum(int(r[10]) for r in tp)
    print("\nErrors over all throughput runs: %d; MOVED redirects: %d.  Server CPU per request: the "
          "user+system CPU time of the three nodes (/proc/PID/stat) over the run, divided by the replies; lower is "
          "better, and other work on the shared machine disturbs it far less than requests/s.  A generator CPU "
          "near 100%% means the single generator core, not the servers, set the pace (then the req/s ratio says "
          "little).\n" % (errs, moved))

mig = [r for r in rows if r[0] == "mig"]
if mig:
    print("## 2. Slot migration: `redis-cli --cluster reshard`\n")
    print("On the clusters of part 1 (%s keys of %s bytes over 3 masters): `redis-cli --cluster reshard "
          "--cluster-from A --cluster-to B --cluster-slots 5461 --cluster-yes --cluster-pipeline N` moves "
          "**all the slots of one master** (0-5460, about a third of the keys) to another, then the "
          "same slots back.  keys/s = keys moved (the target's DBSIZE after - before) / wall time of "
          "redis-cli, which includes its per-slot SETSLOT IMPORTING/MIGRATING/NODE and GETKEYSINSLOT "
          "round trips besides the MIGRATE calls (N keys per MIGRATE).\n" % (keys, vsize))
    print("| pipeline (keys per MIGRATE) | direction | keys moved | HotKV s | HotKV keys/s | redis s | redis keys/s | HotKV / redis |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = {}
    for i in sorted({int(r[1]) for r in mig}):
        c = {r[2]: r for r in mig if int(r[1]) == i}
        h, rr = c.get("hotkv"), c.get("redis")
        if not h or not rr:
            continue
        ratio = float(h[7]) / float(rr[7])
        ratios.setdefault(h[3], []).append(ratio)
        print("| %s | %s | %s / %s | %s | %s | %s | %s | %.2fx |" % (
            h[3], "A -> B" if h[4] == "there" else "B -> A", "{:,}".format(int(h[5])), "{:,}".format(int(rr[5])),
            h[6], "{:,}".format(int(h[7])), rr[6], "{:,}".format(int(rr[7])), ratio))
    for mp, rs in ratios.items():
        print("\nPipeline %s: HotKV / redis keys/s, median of the %d moves: %.2fx." % (mp, len(rs), med(rs)))
    sc = {(r[1], r[2]): (float(r[3]), float(r[4])) for r in rows if r[0] == "slot"}
    whens = [w for w in ("before", "after") if (w, "hotkv") in sc and (w, "redis") in sc]
    if whens:
        print("\nPer-slot bookkeeping, measured on node 1 of each cluster before and after the moves (1,000 slots "
              "of node 3, each `CLUSTER SETSLOT s IMPORTING <node 3>` then `CLUSTER SETSLOT s STABLE`, one "
              "connection), against `CLUSTER COUNTKEYSINSLOT s`, a round trip that changes nothing:\n")
        print("| ms per command | HotKV | redis-server |")
        print("|---|---|---|")
        for w in whens:
            print("| CLUSTER SETSLOT (IMPORTING / STABLE), %s the moves | %.3f | %.3f |" % (w, sc[(w, "hotkv")][0], sc[(w, "redis")][0]))
        for w in whens:
            print("| CLUSTER COUNTKEYSINSLOT, %s the moves | %.3f | %.3f |" % (w, sc[(w, "hotkv")][1], sc[(w, "redis")][1]))
        hs = [sc[(w, "hotkv")][0] for w in whens]
        rs = [sc[(w, "redis")][0] for w in whens]
        print("\nredis-cli sends 5 SETSLOTs per slot with 3 masters (IMPORTING to the target, MIGRATING to the "
              "source, NODE to all three): 27,305 per move of 5461 slots, which at the costs above come to "
              "%.0f-%.0f s of each HotKV move and %.1f-%.1f s of each redis-server move, whatever the keys "
              "(a command that writes a file costs what the shared disk gives at that moment, hence the spread)."
              % (5 * 5461 * min(hs) / 1000, 5 * 5461 * max(hs) / 1000, 5 * 5461 * min(rs) / 1000, 5 * 5461 * max(rs) / 1000))
    print()

fo = [r for r in rows if r[0] == "fo"]
if fo:
    print("## 3. Failover: time until the cluster is writable again\n")
    print("A fresh cluster of 3 masters + 3 replicas per round and kind (`redis-cli --cluster create "
          "--cluster-replicas 1`), `cluster-node-timeout %s`, %s keys of %s bytes preloaded, every "
          "replica in sync (INFO replication of each master: the slave online at master_repl_offset).  "
          "Then `kill -9` of the master of slots 0-5460 and, from that moment, a `SET` of a key of one "
          "of its slots sent to its replica every 20 ms until the answer is OK (before that: MOVED to the "
          "dead master, or CLUSTERDOWN).  Milliseconds from the kill to the OK (20 ms resolution).  "
          "The order alternates from round to round.\n" % (fo_to, fo_keys, vsize))
    print("| round | HotKV: writable (ms) | HotKV: down seen (ms) | redis: writable (ms) | redis: down seen (ms) | HotKV / redis (writable) |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for rd in sorted({int(r[1]) for r in fo}):
        c = {r[2]: r for r in fo if int(r[1]) == rd}
        h, rr = c.get("hotkv"), c.get("redis")
        if not h or not rr:
            continue
        ratios.append(float(h[3]) / float(rr[3]))
        print("| %d | %s | %s | %s | %s | %.2fx |" % (rd, h[3], h[4], rr[3], rr[4], ratios[-1]))
    def mcol(kind, i):
        v = [float(r[i]) for r in fo if r[2] == kind and r[i] != "-"]
        return "%.0f" % med(v) if v else "-"
    print("| **median** | **%s** | **%s** | **%s** | **%s** | **%.2fx** |" % (
        mcol("hotkv", 3), mcol("hotkv", 4), mcol("redis", 3), mcol("redis", 4), med(ratios) if ratios else 0))
    print("\n\"writable\": kill to the first OK.  \"down seen\": kill to the replica's first answer other than "
          "MOVED (CLUSTERDOWN: it has marked its master failed, the cluster is down until the election is won); "
          "the difference is the election (the replica's delay, the votes, the promotion).")
    print("\nBoth follow Redis 7.0's rules: a master is marked failed after `cluster-node-timeout` without a "
          "pong plus the failure reports of a majority of masters; its replica then waits 500 ms + a random "
          "0-500 ms (+ 1 s per better-ranked replica; one replica here) before asking for votes.  So neither "
          "can go much below 2.5 s with a 2000 ms timeout; the rest is how fast the failure is detected and "
          "spread, and the random delay.\n")

print("Every run (part, round, server, ...; tp: test pipeline total node1 node2 node3 errors MOVED gen% server-us-per-request; "
      "mig: pipeline direction keys s keys/s; slot: ms per SETSLOT, ms per COUNTKEYSINSLOT; fo: ms down-seen-ms SETs replies):\n\n```")
print(open(res).read().rstrip())
print("```")
PYEOF
if [ -n "$OUT" ]; then cp "$W/report.md" "$OUT"; log "report: $OUT"; else cat "$W/report.md"; fi
