#!/usr/bin/env bash
# fuzz.sh - build the RESP parser fuzz target (tests/fuzz/fuzz_resp.c) with
# clang's libFuzzer, AddressSanitizer and UBSan into build-fuzz/fuzz_resp,
# then fuzz it for FUZZ_SECONDS (default 600) with tests/fuzz/resp.dict,
# growing a working corpus in build-fuzz/corpus seeded from tests/fuzz/corpus.
# Exits non-zero if an input crashed, leaked, timed out or ran out of memory,
# and leaves it in build-fuzz/ (crash-*, oom-*, timeout-*, leak-*).
# Environment: CLANG (default clang-14, else clang), FUZZ_SECONDS, FUZZ_ARGS
# (extra libFuzzer flags, e.g. -max_len=100000 to reach the 64 KB limits).
set -euo pipefail

cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-600}
CLANG=${CLANG:-}
if [ -z "$CLANG" ]; then
    if command -v clang-14 >/dev/null 2>&1; then CLANG=clang-14; else CLANG=clang; fi
fi
OUT=build-fuzz
BIN=$OUT/fuzz_resp
CORPUS=$OUT/corpus

mkdir -p "$OUT" "$CORPUS"
echo "fuzz.sh: building $BIN with $CLANG"
"$CLANG" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -g -O1 -std=c11 -D_GNU_SOURCE -DHK_NO_JEMALLOC -Wall -Wextra -Isrc \
    tests/fuzz/fuzz_resp.c src/proto/resp.c src/base/mem.c src/base/log.c src/base/util.c \
    -o "$BIN" -lm
cp -n tests/fuzz/corpus/* "$CORPUS"/ 2>/dev/null || true

# Earlier findings would be mistaken for new ones.
rm -f "$OUT"/crash-* "$OUT"/oom-* "$OUT"/timeout-* "$OUT"/leak-* "$OUT"/slow-unit-*
LOG=$OUT/fuzz.log
echo "fuzz.sh: fuzzing for ${FUZZ_SECONDS}s (log: $LOG)"
set +e
"$BIN" -max_total_time="$FUZZ_SECONDS" -dict=tests/fuzz/resp.dict \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$OUT/" ${FUZZ_ARGS:-} "$CORPUS" >"$LOG" 2>&1
rc=$?
set -e

echo "fuzz.sh: libFuzzer exited with status $rc"
grep -E '^stat::|^#[0-9]+.*DONE' "$LOG" || tail -n 5 "$LOG"
echo "fuzz.sh: corpus $CORPUS holds $(ls "$CORPUS" | wc -l) inputs"
found=$(ls "$OUT"/crash-* "$OUT"/oom-* "$OUT"/timeout-* "$OUT"/leak-* 2>/dev/null || true)
if [ -n "$found" ] || [ "$rc" -ne 0 ]; then
    echo "fuzz.sh: FOUND A PROBLEM (see $LOG):"
    grep -E 'ERROR|invariant failed|differs|SUMMARY' "$LOG" | head -n 20 || true
    for f in $found; do
        echo "== $f ($(stat -c %s "$f") bytes; reproduce: $BIN $f)"
        od -c "$f" | head -n 20
    done
    exit 1
fi
echo "fuzz.sh: nothing found"
