#!/usr/bin/env bash
# Install the Debian packages HotKV needs to build and test, when missing.
# Each is chosen on purpose (see README "Dependencies").  Runs apt-get only
# as root and only if something is missing; otherwise just reports.
set -euo pipefail
PKGS=(
  gcc make                      # the compiler and build
  libjemalloc-dev               # the allocator (and its statistics for INFO)
  liblua5.1-0-dev               # Lua 5.1, the scripting engine Redis uses (EVAL, FUNCTION)
  liburing-dev                  # io_uring: one syscall for a loop turn's reads, one for its writes
  libssl-dev openssl            # OpenSSL 3: TLS (tls-port, net/tls.c); the openssl CLI makes the TLS tests' certificates
  clang libclang-rt-14-dev      # libFuzzer for `make fuzz`, clang -Werror check
  redis-server redis-tools      # the reference server and redis-cli/redis-benchmark
  redis-sentinel                # Sentinel: the failover tests (tests/integration/test_sentinel.py)
  python3 python3-redis python3-pytest   # integration tests (Debian's python3)
  valgrind                      # callgrind instruction counts in bench/
)
# Node.js and npm run the BullMQ end-to-end test (tests/e2e/bullmq); a
# machine that already has node/npm on PATH (e.g. from nodesource) keeps it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PKGS+=(nodejs npm)
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's redis-server package starts a system instance on 6379; HotKV's
# `make run` wants that port, and tests spawn their own servers.
if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-server 2>/dev/null || true; fi
service redis-server stop >/dev/null 2>&1 || true
if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-sentinel 2>/dev/null || true; fi
service redis-sentinel stop >/dev/null 2>&1 || true
exit 0
