"""A real application end to end (issue 5): BullMQ, the Node.js job queue
built on MULTI/EXEC, Lua scripts (cmsgpack, cjson), sorted sets, lists,
hashes, streams (XADD from scripts, XREAD BLOCK in QueueEvents) and
BZPOPMIN.  tests/e2e/bullmq/scenario.js adds jobs (single, bulk, delayed,
prioritized, retried with backoff, failing) and checks every count exactly.

scripts/test.sh installs the pinned package (npm ci) and sets
HOTKV_REQUIRE_E2E=1, so in `make test` a missing Node or package is a
failure; a bare pytest run without them skips."""
import os
import shutil
import subprocess

import pytest

from conftest import MODE, ROOT, Server

DIR = os.path.join(ROOT, "tests", "e2e", "bullmq")


def _ready():
    node = shutil.which("node")
    mods = os.path.isdir(os.path.join(DIR, "node_modules", "bullmq"))
    return node, mods


@pytest.fixture(scope="module")
def server():
    s = Server(threads=4) if MODE != "redis" else Server()
    yield s
    assert s.stop() == 0


def test_bullmq_scenario(server):
    node, mods = _ready()
    if not (node and mods):
        msg = "node or tests/e2e/bullmq/node_modules missing (run: cd tests/e2e/bullmq && npm ci)"
        if os.environ.get("HOTKV_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    p = subprocess.run([node, "scenario.js", str(server.port)], cwd=DIR, capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, "scenario failed:\n" + p.stdout[-6000:] + "\n" + p.stderr[-3000:]
