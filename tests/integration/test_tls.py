"""TLS (tls-port and the tls-* parameters): server and client
authentication, rotation by CONFIG SET, refusals, and every client path
(pipelining, big values, pub/sub, blocking commands, MONITOR, CLIENT KILL,
output-buffer limits and back-pressure) over TLS; ioredis (Node.js) over
TLS, protected mode's -DENIED over TLS, CONFIG REWRITE of the tls-*
parameters, a 500 MB value in pieces (release build only), and the plain
and TLS ports served together.

Certificates are made at test time with the openssl CLI (EC P-256 keys, a
few ms each): a CA, a server certificate and a second one for rotation, a
client certificate, an expired server certificate, and a CA of strangers
with a client and a server certificate of its own.  Runs against
redis-server too (HOTKV_SERVER=redis: Debian's is built with TLS)."""
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from helpers import IS_REDIS, IS_SANITIZER, Resp, Server, encode_command, free_port, wait_until

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl CLI")


# ------------------------------------------------------------ certificates

def _openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def _key_and_csr(d, name, cn):
    _openssl("req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + cn, cwd=d)


def _ca(d, name, cn):
    _openssl("req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-keyout", name + ".key", "-out", name + ".crt", "-days", "30", "-subj", "/CN=" + cn, cwd=d)


def _sign(d, name, ca, serial, server=True):
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n" if server else "extendedKeyUsage=clientAuth\n")
    _openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
             "-set_serial", str(serial), "-days", "30", "-out", name + ".crt", "-extfile", ext, cwd=d)


def _sign_expired(d, name, ca):
    """A certificate valid for one day in 2020 (openssl ca: x509 -req
    cannot set dates in the past)."""
    os.makedirs(os.path.join(d, "newcerts"), exist_ok=True)
    open(os.path.join(d, "index.txt"), "w").close()
    with open(os.path.join(d, "serial"), "w") as f:
        f.write("5005\n")
    with open(os.path.join(d, "ca.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca = d\n[d]\ndatabase = %s/index.txt\nnew_certs_dir = %s/newcerts\n"
                "serial = %s/serial\ndefault_md = sha256\npolicy = p\ncopy_extensions = none\n"
                "x509_extensions = e\n[p]\ncommonName = supplied\n"
                "[e]\nsubjectAltName = DNS:localhost,IP:127.0.0.1\n" % (d, d, d))
    _openssl("ca", "-batch", "-config", "ca.cnf", "-cert", ca + ".crt", "-keyfile", ca + ".key",
             "-in", name + ".csr", "-out", name + ".crt", "-notext",
             "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", cwd=d)


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="hotkv-tls-")
    _ca(d, "ca", "HotKV Test CA")
    _ca(d, "other-ca", "Stranger CA")
    for name, cn, ca, serial, server in [
            ("server", "localhost", "ca", 0x1001, True),
            ("rotated", "hotkv-rotated", "ca", 0x2002, True),
            ("client", "client", "ca", 0x3003, False),
            ("stranger", "stranger", "other-ca", 0x4004, False),
            ("stranger-server", "localhost", "other-ca", 0x6006, True)]:
        _key_and_csr(d, name, cn)
        _sign(d, name, ca, serial, server)
    _key_and_csr(d, "expired", "expired")
    _sign_expired(d, "expired", "ca")
    # The server key under a pass phrase, and DH parameters (a named group:
    # no slow generation).
    _openssl("pkey", "-in", "server.key", "-out", "server-pass.key", "-aes256", "-passout", "pass:s3cret", cwd=d)
    _openssl("genpkey", "-genparam", "-algorithm", "DH", "-pkeyopt", "dh_param:ffdhe2048", "-out", "dh.pem", cwd=d)
    paths = {n: os.path.join(d, n) for n in ("ca", "other-ca", "server", "rotated", "client", "stranger",
                                            "stranger-server", "expired", "server-pass", "dh")}
    yield paths
    shutil.rmtree(d, ignore_errors=True)


def server_args(certs, name="server", auth="yes", ca="ca"):
    return ["--tls-cert-file", certs[name] + ".crt", "--tls-key-file", certs[name] + ".key",
            "--tls-ca-cert-file", certs[ca] + ".crt", "--tls-auth-clients", auth]


class TlsServer:
    """A Server (conftest) with a TLS port next to its TCP one."""

    def __init__(self, certs, *extra, threads=2, **kw):
        self.tls_port = free_port()
        self.srv = Server("--tls-port", self.tls_port, *(server_args(certs, **kw) + list(extra)), threads=threads)
        self.port = self.srv.port
        self.dir = self.srv.dir

    def plain(self, **kw):
        return self.srv.client(decode_responses=True, **kw)

    def stop(self):
        return self.srv.stop()


def client_ctx(certs, cert="client", ca="ca", verify=True):
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    if verify:
        c.load_verify_locations(certs[ca] + ".crt")
        c.verify_mode = ssl.CERT_REQUIRED
    else:
        c.verify_mode = ssl.CERT_NONE
    if cert:
        c.load_cert_chain(certs[cert] + ".crt", certs[cert] + ".key")
    return c


def tls_socket(port, ctx, timeout=5.0, session=None):
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        return ctx.wrap_socket(raw, server_hostname="localhost", session=session)
    except Exception:
        raw.close()
        raise


def tls_resp(port, ctx, timeout=5.0):
    """conftest's raw RESP client over a TLS socket."""
    r = Resp.__new__(Resp)
    r.s = tls_socket(port, ctx, timeout)
    r.buf = b""
    return r


def refused(port, ctx):
    """True when the server refuses the connection during the handshake
    or closes it at the first request (TLS 1.3 clients finish their side
    of the handshake before the server has checked their certificate)."""
    try:
        s = tls_socket(port, ctx, timeout=3)
    except (ssl.SSLError, ConnectionError, OSError):
        return True
    try:
        s.sendall(encode_command("PING"))
        return s.recv(64) == b""
    except (ssl.SSLError, ConnectionError, OSError):
        return True
    finally:
        s.close()


def py_client(srv, certs, cert="client", **kw):
    args = dict(host="127.0.0.1", port=srv.tls_port, ssl=True, ssl_ca_certs=certs["ca"] + ".crt",
                ssl_cert_reqs="required", decode_responses=True)
    if cert:
        args.update(ssl_certfile=certs[cert] + ".crt", ssl_keyfile=certs[cert] + ".key")
    args.update(kw)
    return redis.Redis(**args)


@pytest.fixture(scope="module")
def srv(certs):
    s = TlsServer(certs)
    yield s
    assert s.stop() == 0, "server exited badly, see %s" % s.dir


@pytest.fixture
def ctx(certs):
    return client_ctx(certs)


# ------------------------------------------------------------------ clients

def test_redis_cli_tls(srv, certs):
    base = ["redis-cli", "-p", str(srv.tls_port), "--tls", "--cacert", certs["ca"] + ".crt",
            "--cert", certs["client"] + ".crt", "--key", certs["client"] + ".key"]
    out = subprocess.run(base + ["SET", "cli", "v1"], capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() == "OK", out
    out = subprocess.run(base + ["GET", "cli"], capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() == "v1"
    # The plain port is unaffected and sees the same data.
    assert srv.plain().get("cli") == "v1"


def test_redis_py_ssl(srv, certs):
    c = py_client(srv, certs)
    assert c.ping()
    c.set("py", "x" * 100)
    assert c.get("py") == "x" * 100
    assert c.incr("ctr") == 1
    c.close()


def test_config_get(srv):
    got = srv.plain().config_get("tls-*")
    assert got["tls-port"] == str(srv.tls_port)
    assert got["tls-auth-clients"] == "yes"
    assert got["tls-session-caching"] == "yes"
    assert got["tls-session-cache-size"] == "20480"
    assert got["tls-session-cache-timeout"] == "300"
    assert got["tls-protocols"] == "" and got["tls-ciphers"] == ""
    assert got["tls-replication"] == "no" and got["tls-cluster"] == "no"


def test_pipelining_many_records(srv, ctx):
    """10,000 commands in one send: several TLS records, read-ahead and a
    record that does not fit the room left in the query buffer."""
    c = tls_resp(srv.tls_port, ctx)
    n = 10000
    c.s.sendall(b"".join(encode_command("SET", "p:%d" % i, "v" * (i % 50)) for i in range(n)))
    for _ in range(n):
        assert c.read() == "OK"
    c.s.sendall(b"".join(encode_command("GET", "p:%d" % i) for i in range(n)))
    for i in range(n):
        assert c.read() == b"v" * (i % 50)
    c.close()


@pytest.mark.skipif(IS_REDIS, reason="io-uring is HotKV's own option")
@pytest.mark.parametrize("ring", ["yes", "no"])
def test_ring_and_plain_reads(certs, ring):
    """TLS reads come in through the worker's io_uring batch (a 4 KB slot
    per client, fed to OpenSSL before it reads the socket itself) or with
    read(2) (io-uring no): pipelines, records bigger than a slot, and many
    clients in one loop turn, both ways."""
    s = TlsServer(certs, "--io-uring", ring)
    try:
        ctx = client_ctx(certs)
        cs = [tls_resp(s.tls_port, ctx) for _ in range(20)]
        for k, c in enumerate(cs):  # every client's request in the same turns
            c.s.sendall(b"".join(encode_command("SET", "r:%d:%d" % (k, i), "x" * (i * 37 % 9000)) for i in range(40)))
        for c in cs:
            for _ in range(40):
                assert c.read() == "OK"
        for k, c in enumerate(cs):
            c.s.sendall(b"".join(encode_command("GET", "r:%d:%d" % (k, i)) for i in range(40)))
        for k, c in enumerate(cs):
            for i in range(40):
                assert c.read() == b"x" * (i * 37 % 9000)
            c.close()
        info = s.plain().info("server")
        with open(os.path.join(s.dir, "server.log")) as f:
            refused = "io_uring unavailable" in f.read()  # a kernel without io_uring: the fallback ran
        assert int(info["io_uring_workers"]) == (2 if ring == "yes" and not refused else 0)
    finally:
        assert s.stop() == 0


def test_pipelining_byte_by_byte(srv, ctx):
    """One TLS record per byte: a command assembled from 1-byte records."""
    c = tls_resp(srv.tls_port, ctx)
    for b in encode_command("SET", "bytewise", "hello"):
        c.s.sendall(bytes([b]))
    assert c.read() == "OK"
    assert c.call("GET", "bytewise") == b"hello"
    c.close()


def test_large_value(srv, certs):
    """A 20 MB bulk in (many records, read over many loop turns) and out
    (SSL_write through a full socket)."""
    c = py_client(srv, certs, decode_responses=False)
    big = os.urandom(1 << 20) * 20
    assert c.set("big", big)
    assert c.strlen("big") == len(big)
    assert c.get("big") == big
    c.delete("big")
    c.close()


def test_back_pressure(srv, ctx):
    """200 GETs of a 100 KB value sent without reading: the server stops
    reading at its output limit and writes as the client drains."""
    srv.plain().set("bp", "z" * 100000)
    c = tls_resp(srv.tls_port, ctx, timeout=10)
    c.s.sendall(encode_command("GET", "bp") * 200)
    time.sleep(0.3)
    for _ in range(200):
        assert len(c.read()) == 100000
    assert c.call("PING") == "PONG"
    c.close()


def test_pubsub(srv, ctx):
    sub = tls_resp(srv.tls_port, ctx)
    assert sub.call("SUBSCRIBE", "news") == [b"subscribe", b"news", 1]
    pub = tls_resp(srv.tls_port, ctx)
    assert pub.call("PUBLISH", "news", "hello") == 1
    assert sub.read() == [b"message", b"news", b"hello"]
    # ... and from a plain TCP publisher.
    assert srv.plain().publish("news", "again") == 1
    assert sub.read() == [b"message", b"news", b"again"]
    sub.close()
    pub.close()


def test_blpop_served_over_tls(srv, ctx):
    srv.plain().delete("q")
    waiter = tls_resp(srv.tls_port, ctx)
    waiter.send("BLPOP", "q", "5")
    time.sleep(0.2)
    pusher = tls_resp(srv.tls_port, ctx)
    assert pusher.call("LPUSH", "q", "job") == 1
    t0 = time.time()
    assert waiter.read() == [b"q", b"job"]
    assert time.time() - t0 < 2
    waiter.close()
    pusher.close()


def test_monitor(srv, ctx):
    mon = tls_resp(srv.tls_port, ctx)
    assert mon.call("MONITOR") == "OK"
    other = tls_resp(srv.tls_port, ctx)
    other.call("SET", "watched", "1")
    line = mon.read()
    while "watched" not in line:
        line = mon.read()
    assert '"set" "watched" "1"' in line.lower()
    mon.close()
    other.close()


def test_client_kill(srv, ctx):
    victim = tls_resp(srv.tls_port, ctx)
    vid = victim.call("CLIENT", "ID")
    assert srv.plain().execute_command("CLIENT", "KILL", "ID", vid) == 1
    victim.s.settimeout(3)
    try:
        victim.s.sendall(encode_command("PING"))
        got = victim.s.recv(64)
    except (ssl.SSLError, ConnectionError, OSError):
        got = b""
    assert got == b""
    victim.close()


def test_quit_closes_cleanly(srv, ctx):
    c = tls_resp(srv.tls_port, ctx)
    assert c.call("QUIT") == "OK"
    c.s.settimeout(3)
    try:
        assert c.s.recv(64) == b""  # the server's close_notify: a clean EOF
    except (ssl.SSLError, ConnectionError):
        pass
    c.close()


def test_output_buffer_limit_closes_tls_client(srv, ctx):
    p = srv.plain()
    p.set("ob", "o" * 100000)
    old = p.config_get("client-output-buffer-limit")["client-output-buffer-limit"]
    p.config_set("client-output-buffer-limit", "normal 1mb 0 0")
    try:
        c = tls_resp(srv.tls_port, ctx, timeout=5)
        c.s.sendall(encode_command("GET", "ob") * 200)  # 20 MB of replies, never read
        time.sleep(0.5)
        got, closed = b"", False
        try:
            while len(got) < 30 << 20:
                chunk = c.s.recv(1 << 20)
                if not chunk:
                    closed = True
                    break
                got += chunk
        except (ssl.SSLError, ConnectionError, socket.timeout):
            closed = True
        assert closed and len(got) < 20 * 100000
        c.close()
    finally:
        p.config_set("client-output-buffer-limit", old)


def test_query_buffer_limit(srv, ctx):
    p = srv.plain()
    p.config_set("client-query-buffer-limit", "1mb")
    try:
        c = tls_resp(srv.tls_port, ctx)
        closed = False
        try:
            c.s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"x" * (1500 << 10))
            closed = c.s.recv(64) == b""
        except (ssl.SSLError, ConnectionError, OSError):
            closed = True
        assert closed
        c.close()
    finally:
        p.config_set("client-query-buffer-limit", "1gb")


def test_maxclients(certs, ctx):
    # A server of its own: on the shared one, clients of earlier tests may
    # still be closing, so a count read now may be too high a moment later.
    s = TlsServer(certs)
    try:
        p = s.plain()
        # Only this client (the start-up check's connection may be closing).
        assert wait_until(lambda: int(p.info("clients")["connected_clients"]) == 1)
        p.config_set("maxclients", 1)
        try:
            assert refused(s.tls_port, ctx)
        finally:
            p.config_set("maxclients", 10000)
        c = tls_resp(s.tls_port, ctx)
        assert c.call("PING") == "PONG"
        c.close()
    finally:
        assert s.stop() == 0


def test_session_resumption(srv, ctx):
    s1 = tls_socket(srv.tls_port, ctx)
    s1.sendall(encode_command("PING"))
    assert s1.recv(64) == b"+PONG\r\n"  # TLS 1.3: the ticket arrives after the handshake
    sess = s1.session
    s1.close()
    s2 = tls_socket(srv.tls_port, ctx, session=sess)
    s2.sendall(encode_command("PING"))
    assert s2.recv(64) == b"+PONG\r\n"
    assert s2.session_reused
    s2.close()


@pytest.mark.skipif(IS_REDIS, reason="Redis 7.0 still issues TLS 1.3 tickets with its cache off, and then fails "
                                      "the resumption they invite with an internal-error alert")
def test_session_caching_off(certs):
    """tls-session-caching no: nothing resumes, and a client that tries
    gets a full handshake (HotKV issues no TLS 1.3 tickets either)."""
    s = TlsServer(certs, "--tls-session-caching", "no")
    try:
        ctx = client_ctx(certs)
        s1 = tls_socket(s.tls_port, ctx)
        s1.sendall(encode_command("PING"))
        assert s1.recv(64) == b"+PONG\r\n"
        sess = s1.session
        s1.close()
        s2 = tls_socket(s.tls_port, ctx, session=sess)
        s2.sendall(encode_command("PING"))
        assert s2.recv(64) == b"+PONG\r\n"
        assert not s2.session_reused
        s2.close()
    finally:
        assert s.stop() == 0


def test_protocols(srv, certs):
    """tls-protocols: a TLS 1.3-only client is refused by a TLSv1.2 server,
    a TLS 1.2 one served; back to the default (1.2 and 1.3)."""
    p = srv.plain()
    only13 = client_ctx(certs)
    only13.minimum_version = ssl.TLSVersion.TLSv1_3
    only12 = client_ctx(certs)
    only12.maximum_version = ssl.TLSVersion.TLSv1_2
    assert p.config_set("tls-protocols", "TLSv1.2")
    try:
        with pytest.raises(ssl.SSLError):
            tls_socket(srv.tls_port, only13)
        c = tls_resp(srv.tls_port, only12)
        assert c.s.version() == "TLSv1.2"
        assert c.call("PING") == "PONG"
        c.close()
    finally:
        assert p.config_set("tls-protocols", "")
    c = tls_resp(srv.tls_port, only13)
    assert c.s.version() == "TLSv1.3" and c.call("PING") == "PONG"
    c.close()


def test_key_pass_phrase_and_dh_params(certs):
    s = TlsServer(certs, "--tls-key-file", certs["server-pass"] + ".key", "--tls-key-file-pass", "s3cret",
                  "--tls-dh-params-file", certs["dh"] + ".pem")
    try:
        assert tls_resp(s.tls_port, client_ctx(certs)).call("PING") == "PONG"
        p = s.plain()
        for args in (["tls-key-file-pass", "wrong"], ["tls-dh-params-file", certs["ca"] + ".crt"]):
            with pytest.raises(redis.ResponseError) as e:
                p.execute_command("CONFIG", "SET", *args)
            assert "Unable to update TLS configuration" in str(e.value)
        assert p.config_get("tls-key-file-pass")["tls-key-file-pass"] == "s3cret"
        assert tls_resp(s.tls_port, client_ctx(certs)).call("PING") == "PONG"
    finally:
        assert s.stop() == 0


# ----------------------------------------------------- client certificates

def test_auth_yes_refuses_client_without_certificate(srv, certs):
    assert refused(srv.tls_port, client_ctx(certs, cert=None))
    # ... and one from another CA.
    assert refused(srv.tls_port, client_ctx(certs, cert="stranger"))
    out = subprocess.run(["redis-cli", "-p", str(srv.tls_port), "--tls", "--cacert", certs["ca"] + ".crt", "PING"],
                         capture_output=True, text=True, timeout=10)
    assert "PONG" not in out.stdout


def test_auth_optional_and_no(certs):
    s = TlsServer(certs, auth="optional")
    try:
        assert tls_resp(s.tls_port, client_ctx(certs, cert=None)).call("PING") == "PONG"
        assert tls_resp(s.tls_port, client_ctx(certs)).call("PING") == "PONG"
        # A certificate that is presented is verified.
        assert refused(s.tls_port, client_ctx(certs, cert="stranger"))
        # tls-auth-clients changes for the next connections.
        s.plain().config_set("tls-auth-clients", "no")
        assert tls_resp(s.tls_port, client_ctx(certs, cert="stranger")).call("PING") == "PONG"
        s.plain().config_set("tls-auth-clients", "yes")
        assert refused(s.tls_port, client_ctx(certs, cert=None))
    finally:
        assert s.stop() == 0


def test_wrong_ca_server_refused_by_client(certs):
    s = TlsServer(certs, name="stranger-server", auth="no")
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            tls_socket(s.tls_port, client_ctx(certs, cert=None))
        assert tls_resp(s.tls_port, client_ctx(certs, cert=None, ca="other-ca")).call("PING") == "PONG"
    finally:
        assert s.stop() == 0


def test_expired_server_certificate_refused_by_verifying_client(certs):
    s = TlsServer(certs, name="expired", auth="no")
    try:
        with pytest.raises(ssl.SSLCertVerificationError) as e:
            tls_socket(s.tls_port, client_ctx(certs, cert=None))
        assert "expired" in str(e.value)
        # A client that does not verify still gets through.
        assert tls_resp(s.tls_port, client_ctx(certs, cert=None, verify=False)).call("PING") == "PONG"
    finally:
        assert s.stop() == 0


# --------------------------------------------------------------- rotation

def peer_cert(port, certs):
    s = tls_socket(port, client_ctx(certs))
    try:
        return s.getpeercert()
    finally:
        s.close()


def cn(cert):
    return dict(x[0] for x in cert["subject"])["commonName"]


def test_rotation_keeps_connected_clients(certs):
    s = TlsServer(certs)
    try:
        old = tls_resp(s.tls_port, client_ctx(certs))
        assert old.call("SET", "r", "1") == "OK"
        assert cn(peer_cert(s.tls_port, certs)) == "localhost"
        p = s.plain()
        assert p.execute_command("CONFIG", "SET", "tls-cert-file", certs["rotated"] + ".crt",
                                 "tls-key-file", certs["rotated"] + ".key") == "OK"
        # The connected client keeps its session ...
        assert old.call("GET", "r") == b"1"
        # ... new ones see the new certificate.
        new = peer_cert(s.tls_port, certs)
        assert cn(new) == "hotkv-rotated" and new["serialNumber"] == "2002"
        assert old.call("INCR", "r") == 2
        old.close()
        assert p.config_get("tls-cert-file")["tls-cert-file"] == certs["rotated"] + ".crt"
    finally:
        assert s.stop() == 0


def test_bad_certificate_refused_old_kept(certs):
    s = TlsServer(certs)
    try:
        p = s.plain()
        kept = tls_resp(s.tls_port, client_ctx(certs))
        for args in (["tls-cert-file", "/nonexistent/cert.pem"],
                     ["tls-cert-file", certs["rotated"] + ".crt"],  # does not match the key
                     ["tls-key-file", certs["ca"] + ".crt"],         # not a key
                     ["tls-ca-cert-file", "/nonexistent/ca.pem"],
                     ["tls-protocols", "TLSv1.5"],
                     ["tls-ciphers", "NO-SUCH-CIPHER"]):
            with pytest.raises(redis.ResponseError) as e:
                p.execute_command("CONFIG", "SET", *args)
            assert str(e.value) == ("CONFIG SET failed (possibly related to argument '%s') - Unable to update TLS "
                                    "configuration. Check server logs." % args[0])
        got = p.config_get("tls-*")
        assert got["tls-cert-file"] == certs["server"] + ".crt"
        assert got["tls-key-file"] == certs["server"] + ".key"
        assert got["tls-protocols"] == "" and got["tls-ciphers"] == ""
        # The old certificate still serves old and new clients.
        assert kept.call("PING") == "PONG"
        assert cn(peer_cert(s.tls_port, certs)) == "localhost"
        kept.close()
    finally:
        assert s.stop() == 0


def test_tls_port_at_run_time(certs):
    """CONFIG SET tls-port opens, moves and closes the TLS listener."""
    srv = Server(*server_args(certs))
    try:
        p = srv.client(decode_responses=True)
        assert p.config_get("tls-port")["tls-port"] == "0"
        port = free_port()
        assert p.config_set("tls-port", port)
        assert tls_resp(port, client_ctx(certs)).call("PING") == "PONG"
        port2 = free_port()
        assert p.config_set("tls-port", port2)
        assert tls_resp(port2, client_ctx(certs)).call("PING") == "PONG"
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2)
        # A port in use fails and changes nothing.
        with pytest.raises(redis.ResponseError) as e:
            p.config_set("tls-port", srv.port)
        assert "Unable to listen on this port" in str(e.value)
        assert p.config_get("tls-port")["tls-port"] == str(port2)
        assert p.config_set("tls-port", 0)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port2), timeout=2)
    finally:
        assert srv.stop() == 0


def test_tls_port_needs_a_certificate():
    srv = Server()
    try:
        p = srv.client(decode_responses=True)
        with pytest.raises(redis.ResponseError) as e:
            p.config_set("tls-port", free_port())
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-port') - Unable to update TLS "
                                "configuration. Check server logs.")
        assert p.config_get("tls-port")["tls-port"] == "0"
        # Without a TLS port the files are only stored (nothing is loaded).
        assert p.config_set("tls-cert-file", "/nonexistent.pem")
    finally:
        assert srv.stop() == 0


def test_tls_only_server(certs):
    """port 0: TLS only."""
    tport = free_port()
    d = tempfile.mkdtemp(prefix="hotkv-tls-only-")
    if IS_REDIS:
        cmd = ["redis-server", "--save", "", "--appendonly", "no", "--dir", d]
    else:
        cmd = [os.environ.get("HOTKV_BIN", "build/hotkv-server"), "--threads", "2", "--dir", d, "--save", ""]
    cmd += ["--port", "0", "--bind", "127.0.0.1", "--tls-port", str(tport)] + server_args(certs)
    log = open(os.path.join(d, "server.log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        def up():
            try:
                return tls_resp(tport, client_ctx(certs)).call("PING") == "PONG"
            except OSError:
                return False
        assert wait_until(up, 10), open(os.path.join(d, "server.log")).read()
        c = tls_resp(tport, client_ctx(certs))
        assert c.call("SET", "only", "tls") == "OK"
        c.send("SHUTDOWN", "NOSAVE")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(d, ignore_errors=True)


# -------------------------------------------------------- stalled handshake

def test_stalled_handshake_does_not_block_the_worker(certs):
    """One worker thread: a client that sends half a ClientHello and stops,
    and one that connects and sends nothing, must not delay anybody."""
    s = TlsServer(certs, threads=1)
    try:
        hello = socket.create_connection(("127.0.0.1", s.tls_port))
        # A handshake record header announcing 512 bytes, then 40 of them.
        hello.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 29)
        silent = socket.create_connection(("127.0.0.1", s.tls_port))
        time.sleep(0.1)
        t0 = time.time()
        for _ in range(5):
            c = tls_resp(s.tls_port, client_ctx(certs))
            assert c.call("PING") == "PONG"
            c.close()
        assert s.plain().ping()
        assert time.time() - t0 < 2.0
        # The stalled connections are clients in INFO until they go.
        hello.close()
        silent.close()
    finally:
        assert s.stop() == 0


def test_concurrent_clients_and_handshakes(srv, certs):
    """Threads connect (a handshake each time) and send a request at once:
    a handshake that finishes within the accept's own step, with the first
    request already read along (read-ahead), must still have that request
    served (it once waited for the next bytes of its connection)."""
    errors = []

    def worker(i):
        try:
            for j in range(25):
                c = tls_resp(srv.tls_port, client_ctx(certs), timeout=3)
                assert c.call("SET", "c:%d:%d" % (i, j), j) == "OK"
                assert c.call("GET", "c:%d:%d" % (i, j)) == str(j).encode()
                c.close()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ------------------------------------------------- ioredis (Node.js) client

E2E_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e", "bullmq")


def test_ioredis_over_tls(srv, certs):
    """ioredis, unchanged, with its `tls: {ca, cert, key}` options
    (tests/e2e/bullmq/tls_client.js): SET/GET, a pipeline, a 1 MB value
    and a pub/sub round trip.  ioredis comes with BullMQ's packages
    (`cd tests/e2e/bullmq && npm ci`); skipped without them, as
    test_bullmq.py is (a failure under scripts/test.sh)."""
    node = shutil.which("node")
    if not (node and os.path.isdir(os.path.join(E2E_DIR, "node_modules", "ioredis"))):
        msg = "node or tests/e2e/bullmq/node_modules/ioredis missing (run: cd tests/e2e/bullmq && npm ci)"
        if os.environ.get("HOTKV_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    p = subprocess.run([node, "tls_client.js", str(srv.tls_port), certs["ca"] + ".crt", certs["client"] + ".crt",
                        certs["client"] + ".key"], cwd=E2E_DIR, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["set"] == "OK" and got["get"] == "hello"
    assert got["pipeline"] == [[None, "OK"], [None, 2], [None, "2"]]
    assert got["big"] is True
    assert got["subscribed"] == 1 and got["receivers"] == 1
    assert got["message"] == ["io:ch", "ping over tls"]
    assert got["tls"] in ("TLSv1.2", "TLSv1.3")
    assert got["quit"] == ["OK", "OK"]
    # The same keys through the plain port.
    assert srv.plain().get("io:n") == "2"


# ----------------------------------------------------------- protected mode

def _read_to_close(s):
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ssl.SSLError, ConnectionError, socket.timeout):
        pass
    return data


def _tls_from(src, port, ctx):
    """A TLS socket whose source address is src: 127.0.0.2 is a non-local
    peer for protected mode (only 127.0.0.1 and ::1 are local, as in
    Redis), without leaving the loopback interface (test_hardening.py)."""
    raw = socket.socket()
    raw.settimeout(5)
    raw.bind((src, 0))
    raw.connect(("127.0.0.1", port))
    return ctx.wrap_socket(raw, server_hostname="localhost")


def test_protected_mode_denies_remote_tls_client(certs):
    """protected-mode yes, no password: a TLS client from a non-local
    address finishes its handshake, gets Redis's -DENIED text over TLS and
    is closed; local TLS clients are served."""
    s = TlsServer(certs, "--protected-mode", "yes")
    try:
        far = _tls_from("127.0.0.2", s.tls_port, client_ctx(certs))  # the handshake succeeds
        data = _read_to_close(far)
        far.close()
        # (HotKV's text leaves out the product name, as the plain-TCP test
        # in test_hardening.py allows.)
        assert data.startswith(b"-DENIED "), data
        assert b"protected mode is enabled and no password is set for the default user" in data
        assert data.endswith(b"\r\n") and data.count(b"\r\n") == 1
        assert tls_resp(s.tls_port, client_ctx(certs)).call("PING") == "PONG"
        # Off: the same remote client is served.
        assert s.plain().config_set("protected-mode", "no")
        far = _tls_from("127.0.0.2", s.tls_port, client_ctx(certs))
        far.sendall(encode_command("PING"))
        assert far.recv(64) == b"+PONG\r\n"
        far.close()
    finally:
        assert s.stop() == 0


# ----------------------------------------------------------- CONFIG REWRITE

def test_config_rewrite_tls_parameters(certs):
    """CONFIG SET of tls-* values, CONFIG REWRITE: the file holds them, and
    a server started from it has the same values and applies them (TLS 1.3
    only, the one cipher suite chosen, optional client certificates)."""
    d = tempfile.mkdtemp(prefix="hotkv-tls-rewrite-")
    path = os.path.join(d, "server.conf")
    port, tport = free_port(), free_port()
    with open(path, "w") as f:
        f.write("# TLS rewrite test\nport %d\nbind 127.0.0.1\ndir %s\nsave \"\"\n" % (port, d))
    binary = "redis-server" if IS_REDIS else os.environ.get("HOTKV_BIN", "build/hotkv-server")

    def start():
        cmd = [binary, path] + ([] if IS_REDIS else ["--threads", "2"])
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)

        def up():
            try:
                return c.ping()
            except redis.ConnectionError:
                assert proc.poll() is None, "server exited"
                return False
        assert wait_until(up, 10)
        return proc, c

    def stop(proc):
        proc.terminate()
        assert proc.wait(10) == 0

    values = {"tls-cert-file": certs["server"] + ".crt", "tls-key-file": certs["server"] + ".key",
              "tls-ca-cert-file": certs["ca"] + ".crt", "tls-port": str(tport),
              "tls-auth-clients": "optional", "tls-protocols": "TLSv1.3",
              "tls-ciphersuites": "TLS_CHACHA20_POLY1305_SHA256", "tls-session-cache-size": "1000",
              "tls-replication": "yes", "tls-cluster": "yes"}
    proc = None
    try:
        proc, c = start()
        args = []
        for k, v in values.items():
            args += [k, v]
        assert c.execute_command("CONFIG", "SET", *args) == "OK"
        before = c.config_get("tls-*")
        for k, v in values.items():
            assert before[k] == v, k
        assert c.config_rewrite()
        lines = open(path).read().splitlines()
        assert lines[0] == "# TLS rewrite test"
        for k in ("tls-cert-file", "tls-key-file", "tls-ca-cert-file", "tls-protocols", "tls-ciphersuites"):
            assert '%s "%s"' % (k, values[k]) in lines, (k, lines)
        for k in ("tls-port", "tls-auth-clients", "tls-session-cache-size", "tls-replication", "tls-cluster"):
            assert "%s %s" % (k, values[k]) in lines, (k, lines)
        # Defaults are not written.
        assert not any(l.startswith(("tls-session-caching", "tls-ciphers ", "tls-key-file-pass")) for l in lines)
        stop(proc)
        proc = None

        proc, c = start()
        assert c.config_get("tls-*") == before
        # Applied: TLS 1.3 with the one suite, client certificate optional.
        t = tls_resp(tport, client_ctx(certs, cert=None))
        assert t.s.version() == "TLSv1.3" and t.s.cipher()[0] == "TLS_CHACHA20_POLY1305_SHA256"
        assert t.call("PING") == "PONG"
        t.close()
        only12 = client_ctx(certs)
        only12.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises(ssl.SSLError):
            tls_socket(tport, only12)
        stop(proc)
        proc = None
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------- a 500 MB value

@pytest.mark.skipif(IS_SANITIZER, reason="a 500 MB value: release build only (helpers.IS_SANITIZER)")
def test_500mb_value_in_pieces(srv, ctx):
    """A 500 MiB bulk (under proto-max-bulk-len's 512 MB) sent over TLS in
    4 MiB pieces, checked with STRLEN and GETRANGE, then read back whole
    over TLS and compared block by block (1 MiB blocks, each starting with
    its number, so a lost, repeated or misplaced block shows).  Release
    build only (helpers.IS_SANITIZER, as release_only: scripts/test.sh's
    build-address/ and build-thread/ tiers skip it); 3-4 s on 2 cores."""
    blk, nblk, per_send = 1 << 20, 500, 4
    total = blk * nblk
    base = os.urandom(blk)

    def block(i):
        return b"%08d" % i + base[8:]

    c = tls_resp(srv.tls_port, ctx, timeout=60)
    key = "big:500m"
    c.s.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n" % (len(key), key.encode(), total))
    for i in range(0, nblk, per_send):
        c.s.sendall(b"".join(block(j) for j in range(i, i + per_send)))
    c.s.sendall(b"\r\n")
    assert c.read() == "OK"
    try:
        assert c.call("STRLEN", key) == total
        assert c.call("GETRANGE", key, 0, 15) == b"00000000" + base[8:16]
        mid = 250 * blk
        assert c.call("GETRANGE", key, mid - 4, mid + 11) == base[-4:] + b"00000250" + base[8:12]
        assert c.call("GETRANGE", key, -10, -1) == base[-10:]
        assert c.call("GETRANGE", key, total - 3, total + 100) == base[-3:]

        c.send("GET", key)
        assert c._line() == b"$%d" % total
        buf = bytearray(blk)
        mv = memoryview(buf)
        pending, c.buf = c.buf, b""
        for i in range(nblk):
            filled = min(len(pending), blk)
            buf[:filled] = pending[:filled]
            pending = pending[filled:]
            while filled < blk:
                n = c.s.recv_into(mv[filled:])
                assert n, "closed at block %d" % i
                filled += n
            assert buf == block(i), "block %d differs" % i
        c.buf = pending
        assert c._exact(0) == b""  # the final CRLF
        assert c.call("PING") == "PONG"
    finally:
        c.call("DEL", key)
        c.close()


# --------------------------------------------- the plain and TLS ports at once

def test_plain_and_tls_clients_at_once(srv, ctx):
    """port and tls-port on one server: a plain and a TLS client connected
    together share the data, MULTI/WATCH and blocking across the two."""
    plain = Resp(srv.port)
    t = tls_resp(srv.tls_port, ctx)
    assert plain.call("DEL", "both", "bq") >= 0
    assert plain.call("SET", "both", "from-plain") == "OK"
    assert t.call("GET", "both") == b"from-plain"
    assert t.call("APPEND", "both", "+tls") == len("from-plain+tls")
    assert plain.call("GET", "both") == b"from-plain+tls"
    # WATCH on the plain port, broken by a write over TLS.
    assert plain.call("WATCH", "both") == "OK"
    assert t.call("SET", "both", "x") == "OK"
    assert plain.call("MULTI") == "OK"
    assert plain.call("SET", "both", "y") == "QUEUED"
    assert plain.call("EXEC") is None
    # A TLS client blocked, served by a plain one.
    t.send("BLPOP", "bq", "5")
    time.sleep(0.1)
    assert plain.call("RPUSH", "bq", "v") == 1
    assert t.read() == [b"bq", b"v"]
    plain.s.close()
    t.close()
