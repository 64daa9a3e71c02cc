#!/usr/bin/env bash
# inproc_scaling.sh - build bench/inproc_scaling.c against the server objects
# already in build/obj/ (run `make` first; this script never runs it) into
# build/inproc-scaling, then run it.
#
#   bench/inproc_scaling.sh [SECS [NKEYS]]     (or SECS=5 NKEYS=... in env;
#   also ROUNDS, MODE=mix|get|set, SPLIT=ranges|interleaved: see the .c)
#
# The objects linked are the Makefile's OBJS: build/obj/<x>.o for every
# server source src/<x>.c (src/{base,proto,ds,db,types,net,cmd,config,
# script,persist,cluster}/*.c, src/server.c, src/commands.c) - that is every
# build/obj/**/*.o except main.o, tools/ (hotkv-benchmark) and tests/ (the
# unit tests, which have their own main).  Flags and libraries are the
# Makefile's.  BUILD=build-clang etc. selects another build tree (its
# objects must be jemalloc builds: not SANITIZER=address/thread).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
CC=${CC:-gcc}
OUT=$BUILD/inproc-scaling
CFLAGS=(-std=c11 -D_GNU_SOURCE -O2 -g -pthread -Isrc -I/usr/include/lua5.1
        -Wall -Wextra -Werror -Wno-missing-field-initializers)
LIBS=(-ljemalloc -llua5.1 -luring -lssl -lcrypto -lm)

objs=()
missing=0
stale=0
shopt -s nullglob
for src in src/base/*.c src/proto/*.c src/ds/*.c src/db/*.c src/types/*.c src/net/*.c \
           src/cmd/*.c src/config/*.c src/script/*.c src/persist/*.c src/cluster/*.c \
           src/server.c src/commands.c; do
    obj=$BUILD/obj/${src#src/}
    obj=${obj%.c}.o
    if [[ ! -f $obj ]]; then
        echo "inproc_scaling.sh: missing $obj (run make)" >&2
        missing=1
        continue
    fi
    [[ $src -nt $obj ]] && stale=1
    objs+=("$obj")
done
shopt -u nullglob
if (( missing )); then
    exit 1
fi
if (( stale )); then
    echo "inproc_scaling.sh: warning: some sources are newer than their objects in $BUILD/obj (run make)" >&2
fi

$CC "${CFLAGS[@]}" -o "$OUT" bench/inproc_scaling.c "${objs[@]}" "${LIBS[@]}"
exec "./$OUT" "$@"
