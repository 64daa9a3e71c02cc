"""tls-auth-clients-user CN (Redis 8.6): a TLS client certificate's
subject CN names the ACL user the connection is from the handshake on.

Certificates come from test_tls.py's module fixture (the client
certificate's CN is "client").  Redis 7.0 has no such parameter, so these
run against HotKV only."""
import pytest
import redis

from helpers import IS_REDIS
from test_tls import TlsServer, certs, client_ctx, py_client, refused, tls_resp  # noqa: F401 (certs: fixture)

pytestmark = pytest.mark.skipif(IS_REDIS, reason="tls-auth-clients-user is Redis 8.6")


def info_denied(plain):
    return int(plain.info("stats")["acl_access_denied_tls_cert"])


@pytest.fixture(scope="module")
def srv(certs):  # noqa: F811
    s = TlsServer(certs, "--tls-auth-clients-user", "CN", auth="optional")
    yield s
    assert s.stop() == 0, "server exited badly, see %s" % s.dir


@pytest.fixture
def plain(srv):
    p = srv.plain()
    p.execute_command("ACL", "DELUSER", "client")
    p.config_set("requirepass", "")
    p.execute_command("ACL", "LOG", "RESET")
    yield p
    p.execute_command("ACL", "DELUSER", "client")
    p.config_set("requirepass", "")


def test_config_values(srv):
    p = srv.plain()
    assert p.config_get("tls-auth-clients-user") == {"tls-auth-clients-user": "CN"}
    p.config_set("tls-auth-clients-user", "off")
    assert p.config_get("tls-auth-clients-user") == {"tls-auth-clients-user": "off"}
    p.config_set("tls-auth-clients-user", "cn")
    assert p.config_get("tls-auth-clients-user") == {"tls-auth-clients-user": "CN"}
    with pytest.raises(redis.ResponseError, match="argument\\(s\\) must be one of the following: off, CN"):
        p.config_set("tls-auth-clients-user", "uri")


def test_cn_names_the_user(srv, certs, plain):  # noqa: F811
    # The user's password plays no part, and its permissions apply.
    plain.execute_command("ACL", "SETUSER", "client", "on", ">not-sent", "+get", "+acl|whoami", "~k*")
    plain.config_set("requirepass", "secret")
    plain = srv.plain(password="secret")
    c = py_client(srv, certs)
    assert c.execute_command("ACL", "WHOAMI") == "client"
    assert c.get("k1") is None
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.set("k1", "v")
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.get("other")
    line = [x for x in plain.client_list() if x["user"] == "client"]
    assert len(line) == 1
    assert info_denied(plain) == 0
    c.close()
    # Off: the same certificate is the default user again, which needs AUTH.
    plain.config_set("tls-auth-clients-user", "off")
    try:
        r = tls_resp(srv.tls_port, client_ctx(certs))
        assert "NOAUTH" in str(r.call("GET", "k1"))
    finally:
        plain.config_set("tls-auth-clients-user", "CN")


@pytest.mark.parametrize("kind", ["missing", "disabled"])
def test_no_usable_user_is_a_logged_denial(srv, certs, plain, kind):  # noqa: F811
    if kind == "disabled":
        plain.execute_command("ACL", "SETUSER", "client", "on", ">pw", "+@all", "~*")
        plain.execute_command("ACL", "SETUSER", "client", "off")
    before = info_denied(plain)
    c = py_client(srv, certs)
    assert c.execute_command("ACL", "WHOAMI") == "default"
    assert info_denied(plain) == before + 1
    log = plain.acl_log()
    assert len(log) == 1
    e = log[0]
    assert (e["reason"], e["context"], e["object"], e["username"]) == ("tls-cert", "toplevel", "tls-cert", "client")
    info = e["client-info"]  # redis-py parses it into a dict
    assert (info["cmd"], info["user"]) == ("NULL", "default")
    # A password still works after the certificate did not.
    plain.execute_command("ACL", "SETUSER", "pwuser", "on", ">pw2", "+@all", "~*")
    try:
        assert c.execute_command("AUTH", "pwuser", "pw2") is True
        assert c.execute_command("ACL", "WHOAMI") == "pwuser"
    finally:
        plain.execute_command("ACL", "DELUSER", "pwuser")
    c.close()
    # A second refusal within the minute is the same log entry, counted.
    py_client(srv, certs).ping()
    log = plain.acl_log()
    assert len(log) == 1 and log[0]["count"] == 2
    assert info_denied(plain) == before + 2


def test_no_certificate_or_foreign_one(srv, certs, plain):  # noqa: F811
    # tls-auth-clients optional: a client without a certificate is simply
    # the default user, and no denial is counted.
    before = info_denied(plain)
    r = tls_resp(srv.tls_port, client_ctx(certs, cert=None))
    assert r.call("ACL", "WHOAMI") == b"default"
    assert info_denied(plain) == before
    assert plain.acl_log() == []
    # A certificate from an unknown CA never gets that far.
    assert refused(srv.tls_port, client_ctx(certs, cert="stranger"))
    assert info_denied(plain) == before
