"""The include-direction check (scripts/check-layers.py, issue 16): the tree
passes it, and it catches an include that goes up the layer order, so the
check in `make test` can fail."""
import os
import shutil
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "check-layers.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_tree_passes():
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "include direction: ok" in r.stdout


def copy_src(tmp_path):
    dst = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "src"), dst, ignore=shutil.ignore_patterns("tools"))
    return dst


def add_include(path, inc):
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write('#include "%s"\n' % inc + text)


def test_upward_include_fails(tmp_path):
    src = copy_src(tmp_path)
    # db/ may not see cmd/ (the dispatcher is above the keyspace).
    add_include(src / "db" / "db.c", "../cmd/cmd.h")
    r = run("--root", str(src))
    assert r.returncode == 1, r.stdout
    assert "db/db.c (db) includes cmd/cmd.h (cmd)" in r.stdout


def test_types_may_not_see_persist(tmp_path):
    src = copy_src(tmp_path)
    add_include(src / "types" / "hash.c", "../persist/rdb.h")
    r = run("--root", str(src))
    assert r.returncode == 1, r.stdout
    assert "types/hash.c (types) includes persist/rdb.h (persist)" in r.stdout


def test_downward_include_passes(tmp_path):
    src = copy_src(tmp_path)
    add_include(src / "cmd" / "keys.c", "../types/hash.h")
    r = run("--root", str(src))
    assert r.returncode == 0, r.stdout


def test_net_may_not_see_features(tmp_path):
    src = copy_src(tmp_path)
    add_include(src / "net" / "worker.c", "../cmd/multi.h")
    r = run("--root", str(src))
    assert r.returncode == 1, r.stdout
    assert "net/worker.c (net) includes cmd/multi.h (cmd)" in r.stdout
