# lib.sh - server lifecycle helpers shared by the bench/ scripts (sourced).
# The sourcing script defines log, PY (python3 path) and W (scratch dir),
# and appends every server it starts to SERVER_PIDS; cleanup() stops them
# (TERM, then KILL after 5 s) and removes W unless KEEP=1.
SERVER_PIDS=()
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
    if [ "${KEEP:-0}" = 1 ]; then log "scratch kept in $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
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
