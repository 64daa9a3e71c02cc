"""LOLWUT (issue 17): HotKV's own art, sized by columns/rows, then the
version line; bad numbers get Redis's integer error."""
import pytest

from conftest import MODE

pytestmark = pytest.mark.skipif(MODE == "redis", reason="HotKV's own art and version line")


def test_lolwut_default_and_sizes(r):
    out = r.execute_command("LOLWUT")
    if isinstance(out, bytes):
        out = out.decode()
    art, _, version = out.rstrip("\n").rpartition("\n\n")
    assert version.startswith("HotKV ver. ")
    rows = art.split("\n")
    assert len(rows) == 16 and all(len(x) == 64 for x in rows)
    out = r.execute_command("LOLWUT", "VERSION", 6, 10, 3)
    art = out.split("\n\n")[0].split("\n")
    assert len(art) == 3 and all(len(x) == 10 for x in art)
    # Sizes are clamped, never refused or unbounded.
    out = r.execute_command("LOLWUT", 100000, 100000)
    art = out.split("\n\n")[0].split("\n")
    assert len(art) == 200 and len(art[0]) == 1000


def test_lolwut_errors(r):
    with pytest.raises(Exception, match="value is not an integer or out of range"):
        r.execute_command("LOLWUT", "VERSION", "x")
    with pytest.raises(Exception, match="value is not an integer or out of range"):
        r.execute_command("LOLWUT", "abc")
