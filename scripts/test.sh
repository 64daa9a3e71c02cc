#!/usr/bin/env bash
# Every test tier, in order: the include-direction check, build, C unit tests, integration tests against
# the release build, then the ASan+UBSan build (unit + integration), a short
# run of every libFuzzer target (scripts/fuzz.sh) and the TSan build (the
# integration tests where threads meet; see TSAN_SKIP).  Exits non-zero on the
# first failing tier.  Tests that use python3-redis/pytest run under Debian's
# /usr/bin/python3 (the python3 on PATH may lack Debian's packages).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
JOBS=$(nproc 2>/dev/null || echo 2)
export PYTHONDONTWRITEBYTECODE=1

step() { printf '\n=== %s ===\n' "$*"; }

# integration BIN [pytest args...]: the integration tests against BIN.  The
# cluster scenarios (test_cluster.py: many server processes, mostly waiting
# on node timeouts and elections) run beside the rest rather than after it;
# their output follows the rest's.
integration() {
    local bin=$1 log rc=0 crc=0 pid
    shift
    log=$(mktemp)
    HOTKV_BIN=$bin $PY -m pytest -q -p no:cacheprovider tests/integration/test_cluster.py >"$log" 2>&1 &
    pid=$!
    HOTKV_BIN=$bin $PY -m pytest -q -p no:cacheprovider tests/integration \
        --ignore=tests/integration/test_cluster.py "$@" || rc=$?
    wait "$pid" || crc=$?
    echo "--- tests/integration/test_cluster.py ---"
    cat "$log"
    rm -f "$log"
    [ "$rc" -eq 0 ] && [ "$crc" -eq 0 ]
}

# The include direction (docs/architecture.md, "Layers"): a new #include
# that goes up the layer order fails here, before anything is built.
step "include direction (scripts/check-layers.py)"
$PY scripts/check-layers.py

step "build (release, gcc)"
make -j"$JOBS" all build/unit-tests

# A warnings check only (clang's diagnostics come from its front end), so
# unoptimised: about half the time of an -O2 build.
step "build check (clang -Werror)"
make -j"$JOBS" CC=clang OPT=-O0 BUILD=build-clang all

step "unit tests (release)"
./build/unit-tests

step "end-to-end packages (npm ci: BullMQ for test_bullmq.py)"
(cd tests/e2e/bullmq && npm ci --no-audit --no-fund --loglevel=error)
export HOTKV_REQUIRE_E2E=1

step "integration tests (release)"
integration build/hotkv-server

step "build (ASan+UBSan)"
make -j"$JOBS" SANITIZER=address all build-address/unit-tests
export ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

step "unit tests (ASan+UBSan)"
./build-address/unit-tests

# Every libFuzzer target (tests/fuzz/) built and fuzzed briefly from its
# committed corpus, two at a time, with a fixed seed so that every run tries
# the same inputs (a regression check, not a lottery); `make fuzz` explores
# with random seeds for as long as it is given.
step "fuzz targets (libFuzzer, ${FUZZ_SECONDS:-10}s each, seed ${FUZZ_SEED:-1})"
FUZZ_SECONDS=${FUZZ_SECONDS:-10} FUZZ_SEED=${FUZZ_SEED:-1} FUZZ_JOBS=2 ./scripts/fuzz.sh

step "integration tests (ASan+UBSan)"
integration build-address/hotkv-server

step "build (TSan)"
make -j"$JOBS" SANITIZER=thread all
# history_size=4: enough history that the earlier access of a race keeps its
# stack (a suppression can only match a stack TSan could restore).
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:history_size=4:suppressions=$PWD/tests/tsan.supp"

# TSan looks for data races, so it runs the tests where threads meet
# (several clients, workers, the background threads, replication); the
# files that check one connection's command semantics (data types,
# protocol parsing, INFO/CONFIG, command docs) run on the release and ASan
# builds only, which keeps `make test` near 20 minutes.
TSAN_SKIP=(test_strings test_sets test_bitops test_zsets test_hashes test_lists test_hll test_geo test_dump
           test_restore_hostile test_protocol test_server test_command_docs test_command_meta test_migrate)
step "integration tests (TSan)"
integration build-thread/hotkv-server $(printf -- '--ignore=tests/integration/%s.py ' "${TSAN_SKIP[@]}")

step "all tiers passed"
