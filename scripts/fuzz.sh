#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets of tests/fuzz/ with clang, libFuzzer,
# AddressSanitizer and UBSan, then fuzz each for FUZZ_SECONDS (default 600)
# with its committed corpus and dictionary.
#
# Targets (tests/fuzz/fuzz_<name>.c, body in fuzz_<name>_harness.h):
#   resp      the RESP request parser (proto/resp.c)
#   restore   RESTORE payloads: the value decoder (persist/rdb_types.c,
#             rdb_stream.c, rdb_vset.c with the vector-set HNSW graph)
#   rdb       whole RDB files through rdb_load_in (aux fields, expires,
#             functions, every value type)
#   aof       AOF files (RESP command stream, RDB preamble) replayed by the
#             server's loader, as DEBUG LOADAOF does
#   manifest  the multi-part AOF manifest parser (aof_manifest_load)
#   vexpr     VSIM FILTER expressions (ds/vexpr.c): compile + evaluate
#   config    config-file text (config_load_file)
#   bus       cluster bus messages (cluster/cluster.c: Redis 7.0's header,
#             gossip, extensions, every message type) against a fixed view
#
# The server's objects (all of src/ but main.c) are built by the Makefile's
# rules into build-fuzz/obj with -fsanitize=fuzzer-no-link,address,undefined;
# each target links them with -fsanitize=fuzzer into build-fuzz/fuzz_<name>.
# Working corpora grow in build-fuzz/corpus-<name> (seeded from
# tests/fuzz/corpus-<name>/; resp: tests/fuzz/corpus/).  Exits non-zero if an
# input crashed, leaked, timed out or ran out of memory, and leaves it in
# build-fuzz/<name>-crash-* (-oom-, -timeout-, -leak-); reproduce with
# build-fuzz/fuzz_<name> <file>.  Prints each target's execution count.
#
# Environment:
#   FUZZ_SECONDS   seconds per target (default 600)
#   FUZZ_TARGETS   which targets (default: all of the above)
#   FUZZ_JOBS      targets fuzzed at once (default 1)
#   FUZZ_ARGS      extra libFuzzer flags for every target
#   FUZZ_SEED      a fixed libFuzzer seed, and a working corpus made afresh
#                  from the committed one: every run tries the same inputs
#                  (in the same order; a slower machine tries a prefix).
#                  make test uses this, so CI is a repeatable regression
#                  check; make fuzz (no seed) explores
#   FUZZ_BUILD_ONLY=1  build, do not run
#   FUZZ_SKIP_BUILD=1  run the binaries built before (while sources change)
#   FUZZ_MERGE=1   instead of fuzzing, minimise the working corpora into the
#                  committed ones (-merge=1: only inputs with new coverage)
#   CLANG          default clang-14, else clang
set -euo pipefail

cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-600}
ALL_TARGETS="resp restore hnsw rdb aof manifest function vexpr config bus"
FUZZ_TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}
FUZZ_JOBS=${FUZZ_JOBS:-1}
CLANG=${CLANG:-}
if [ -z "$CLANG" ]; then
    if command -v clang-14 >/dev/null 2>&1; then CLANG=clang-14; else CLANG=clang; fi
fi
OUT=build-fuzz
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

for t in $FUZZ_TARGETS; do
    case " $ALL_TARGETS " in *" $t "*) ;; *) echo "fuzz.sh: unknown target '$t' (have: $ALL_TARGETS)" >&2; exit 2;; esac
done

# --- build ----------------------------------------------------------------
mkdir -p "$OUT"
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
    SRCS=$(ls src/base/*.c src/proto/*.c src/ds/*.c src/db/*.c $(ls src/types/*.c 2>/dev/null) src/net/*.c src/cmd/*.c src/config/*.c \
        src/script/*.c src/persist/*.c src/cluster/*.c src/server.c src/commands.c)
    OBJS=
    for f in $SRCS; do
        o=${f#src/}
        OBJS="$OBJS $OUT/obj/${o%.c}.o"
    done
    echo "fuzz.sh: building the server objects into $OUT/obj with $CLANG"
    make --no-print-directory -s -j"$(nproc 2>/dev/null || echo 2)" CC="$CLANG" BUILD="$OUT" OPT=-O1 \
        EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $SAN -DHK_NO_JEMALLOC" $OBJS
    CFLAGS="-g -O1 -std=c11 -D_GNU_SOURCE -DHK_NO_JEMALLOC -Wall -Wextra -Werror -Wno-missing-field-initializers \
        -pthread -Isrc -I/usr/include/lua5.1"
    for t in $FUZZ_TARGETS; do
        bin=$OUT/fuzz_$t
        # Relink when the target, a harness header or an object is newer.
        if [ -f "$bin" ] && [ -z "$(find tests/fuzz/fuzz_*.[ch] $OBJS -newer "$bin" 2>/dev/null | head -n 1)" ]; then
            continue
        fi
        echo "fuzz.sh: linking $bin"
        # shellcheck disable=SC2086
        "$CLANG" -fsanitize=fuzzer $SAN $CFLAGS "tests/fuzz/fuzz_$t.c" $OBJS -o "$bin" -llua5.1 -luring -lssl -lcrypto -lm
    done
fi
if [ "${FUZZ_BUILD_ONLY:-0}" = 1 ]; then
    echo "fuzz.sh: built ($FUZZ_TARGETS)"
    exit 0
fi

# --- run ------------------------------------------------------------------
# Per target: committed corpus, input size cap, allocation cap (MB: one
# allocation that large is reported as a finding, oom-*).
corpus_of() { if [ "$1" = resp ]; then echo tests/fuzz/corpus; else echo "tests/fuzz/corpus-$1"; fi; }
max_len_of() {
    case $1 in
    rdb | aof) echo 16384 ;;
    restore | bus) echo 8192 ;;
    *) echo 4096 ;;
    esac
}

run_target() {
    local t=$1 work=$OUT/corpus-$t log=$OUT/$t.log dict=tests/fuzz/$t.dict
    local -a extra=()
    if [ -n "${FUZZ_SEED:-}" ]; then
        # A repeatable run: the committed corpus only, a fixed seed.
        work=$OUT/seeded-corpus-$t
        rm -rf "$work"
        extra+=("-seed=$FUZZ_SEED")
    fi
    mkdir -p "$work"
    cp -n "$(corpus_of "$t")"/* "$work"/ 2>/dev/null || true
    [ -f "$dict" ] && extra+=("-dict=$dict")
    rm -f "$OUT/$t"-crash-* "$OUT/$t"-oom-* "$OUT/$t"-timeout-* "$OUT/$t"-leak-* "$OUT/$t"-slow-unit-*
    # shellcheck disable=SC2086
    "$OUT/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -max_len="$(max_len_of "$t")" -print_final_stats=1 -artifact_prefix="$OUT/$t-" "${extra[@]}" \
        ${FUZZ_ARGS:-} "$work" >"$log" 2>&1
}

# FUZZ_MERGE=1: no fuzzing; add to each committed corpus the inputs of the
# working corpus that reach an edge it does not (libFuzzer -merge=1 without
# hit counters, which keeps the committed files and names the new ones by
# SHA-1).
if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    for t in $FUZZ_TARGETS; do
        dir=$(corpus_of "$t")
        before=$(ls "$dir" | wc -l)
        "$OUT/fuzz_$t" -merge=1 -use_counters=0 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len="$(max_len_of "$t")" \
            "$dir" "$OUT/corpus-$t" >"$OUT/$t-merge.log" 2>&1 || { echo "fuzz.sh: $t: merge failed (see $OUT/$t-merge.log)"; exit 1; }
        echo "fuzz.sh: $t: $dir: $before -> $(ls "$dir" | wc -l) inputs, $(du -sk "$dir" | cut -f1) KB"
    done
    exit 0
fi

echo "fuzz.sh: fuzzing $FUZZ_TARGETS for ${FUZZ_SECONDS}s each, $FUZZ_JOBS at a time (logs: $OUT/<target>.log)"
running=()
for t in $FUZZ_TARGETS; do
    while [ "${#running[@]}" -ge "$FUZZ_JOBS" ]; do
        wait -n || true
        still=()
        for p in "${running[@]}"; do kill -0 "${p#*:}" 2>/dev/null && still+=("$p"); done
        running=("${still[@]}")
    done
    rm -f "$OUT/$t.rc"
    ( rc=0; run_target "$t" || rc=$?; echo "$rc" >"$OUT/$t.rc" ) &
    running+=("$t:$!")
done
wait

failed=0
for t in $FUZZ_TARGETS; do
    log=$OUT/$t.log
    rc=$(cat "$OUT/$t.rc" 2>/dev/null || echo 99)
    execs=$(grep -E '^stat::number_of_executed_units' "$log" 2>/dev/null | awk '{print $2}' | tail -n 1 || true)
    work=$OUT/corpus-$t
    [ -n "${FUZZ_SEED:-}" ] && work=$OUT/seeded-corpus-$t
    echo "fuzz.sh: $t: libFuzzer status $rc, ${execs:-?} executions, corpus $work holds $(ls "$work" | wc -l) inputs"
    found=$(ls "$OUT/$t"-crash-* "$OUT/$t"-oom-* "$OUT/$t"-timeout-* "$OUT/$t"-leak-* 2>/dev/null || true)
    if [ -n "$found" ] || [ "$rc" -ne 0 ]; then
        failed=1
        echo "fuzz.sh: $t: FOUND A PROBLEM (see $log):"
        grep -E 'ERROR|invariant failed|runtime error|SUMMARY' "$log" 2>/dev/null | head -n 20 || true
        for f in $found; do
            echo "== $f ($(stat -c %s "$f") bytes; reproduce: $OUT/fuzz_$t $f)"
            od -c "$f" | head -n 10
        done
    fi
done
if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "fuzz.sh: nothing found"
