#!/usr/bin/env bash
# devkit.sh - pack what bench/devkit-run.sh needs on a lent machine (the
# workplace's `device` tool) into .devkit/, which the run carries.
#
# The lent machine is bare: no Debian packages, no build tools we can rely
# on, nothing to fetch.  So the binaries built here travel with every
# shared library they load, glibc and its loader included, and each one is
# started through that loader (.devkit/w/NAME is a wrapper doing
# `ld-linux-x86-64.so.2 --library-path .devkit/lib .devkit/bin/NAME`): the
# code that runs there is the code built here, whatever that machine's own
# libraries are.
#
# Packed: build/hotkv-server, build/hotkv-benchmark, build/inproc-scaling
# (bench/inproc_scaling.sh builds it), Debian's redis-server, redis-cli and
# redis-benchmark, VALKEY_SERVER and REDIS8_SERVER when they name a binary
# (references built by hand outside the repo; never committed; Redis 8's
# is packed as redis8-server), and taskset as a fallback (.devkit/fb, last
# on PATH).  .devkit/ must be ignored (.git/info/exclude) and named in the
# device run's `carry`.  Typical use:
#
#   make && bench/inproc_scaling.sh 1 && VALKEY_SERVER=/tmp/valkey/src/valkey-server bench/devkit.sh
#   device run:  command "VK=1 HOTKV_REV=<rev> bash bench/devkit-run.sh", carry [".devkit"]
set -euo pipefail
cd "$(dirname "$0")/.."
K=.devkit
git check-ignore -q "$K/x" || { echo "devkit.sh: $K/ is not ignored; add '/$K/' to .git/info/exclude" >&2; exit 1; }
# SOURCE[:NAME]: the binary, and the name it is packed under
bins=(build/hotkv-server build/hotkv-benchmark build/inproc-scaling "$(command -v redis-server)" "$(command -v redis-cli)"
      "$(command -v redis-benchmark)")
[ -n "${VALKEY_SERVER:-}" ] && bins+=("$VALKEY_SERVER")
[ -n "${REDIS8_SERVER:-}" ] && bins+=("$REDIS8_SERVER:redis8-server")
rm -rf "$K"
mkdir -p "$K/bin" "$K/lib" "$K/w" "$K/fb"
wrapper() { # NAME DIR: a script that starts .devkit/bin/NAME through the packed loader
    cat >"$2/$1" <<W
#!/bin/sh
K=\$(dirname "\$(dirname "\$(readlink -f "\$0")")")
exec "\$K/lib/ld-linux-x86-64.so.2" --library-path "\$K/lib" "\$K/bin/$1" "\$@"
W
    chmod +x "$2/$1"
}
pack_libs() { # every library BIN loads, and the loader
    ldd "$1" | awk '/=>/ { print $3 } /ld-linux/ && !/=>/ { print $1 }' | while read -r l; do
        [ -f "$l" ] && cp -Ln "$l" "$K/lib/" 2>/dev/null || true
    done
}
for e in "${bins[@]}"; do
    b=${e%%:*} n=$(basename "$b")
    [ "$e" = "$b" ] || n=${e#*:}
    [ -x "$b" ] || { echo "devkit.sh: missing $b" >&2; exit 1; }
    cp -L "$b" "$K/bin/$n"
    strip "$K/bin/$n"
    pack_libs "$b"
    wrapper "$n" "$K/w"
done
cp -L "$(command -v taskset)" "$K/bin/taskset"
pack_libs "$(command -v taskset)"
wrapper taskset "$K/fb"
du -sh "$K"
