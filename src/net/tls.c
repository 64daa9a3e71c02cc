/* tls.c - see tls.h.
 *
 * Two locks, neither on a request's path:
 * - build_lock serialises context builds (two CONFIG SETs at once);
 * - ctx_lock guards the installed context pointers: an accept takes it for
 *   the SSL_new that references the context, an install for the swap.  The
 *   old context is freed after the swap; OpenSSL frees it for real when
 *   the last connection made from it is gone.
 *
 * OpenSSL's error queue is per thread.  Every path that fails empties it
 * before returning, so the hot path (SSL_read/SSL_write that worked or
 * would block) need not clear it first. */
#include "tls.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../server.h"

struct tls_settings tls_cfg;

static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static SSL_CTX *server_ctx; /* under ctx_lock */
static SSL_CTX *client_ctx; /* outgoing links (a replica's link to its master), under ctx_lock */

void tls_settings_defaults(void)
{
    memset(&tls_cfg, 0, sizeof(tls_cfg));
    tls_cfg.auth_clients = TLS_AUTH_YES;
    tls_cfg.session_caching = 1;
    tls_cfg.session_cache_size = 20 * 1024;
    tls_cfg.session_cache_timeout = 300;
}

int tls_in_use(void)
{
    return __atomic_load_n(&tls_cfg.port, __ATOMIC_RELAXED) || __atomic_load_n(&tls_cfg.replication, __ATOMIC_RELAXED) ||
           __atomic_load_n(&tls_cfg.cluster, __ATOMIC_RELAXED);
}

/* A configured string: NULL when unset or empty (Redis's
 * EMPTY_STRING_IS_NULL). */
static const char *opt(const char *s)
{
    return s && s[0] ? s : NULL;
}

/* The last OpenSSL error of this thread as text, queue emptied. */
static void ssl_errstr(char *buf, size_t cap)
{
    unsigned long e = ERR_peek_last_error();
    if (e)
        ERR_error_string_n(e, buf, cap);
    else
        snprintf(buf, cap, "unknown error");
    ERR_clear_error();
}

#define PROTO_TLS1 1
#define PROTO_TLS11 2
#define PROTO_TLS12 4
#define PROTO_TLS13 8

/* tls-protocols: a space-separated subset of TLSv1 TLSv1.1 TLSv1.2
 * TLSv1.3 (any case); unset means TLSv1.2 and TLSv1.3, as in Redis. */
static int parse_protocols(const char *s)
{
    char buf[256];
    int v = 0;
    if (!opt(s))
        return PROTO_TLS12 | PROTO_TLS13;
    if (strlen(s) >= sizeof(buf)) {
        log_msg(LL_WARNING, "TLS: tls-protocols is too long");
        return -1;
    }
    memcpy(buf, s, strlen(s) + 1);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (!strcasecmp(t, "tlsv1"))
            v |= PROTO_TLS1;
        else if (!strcasecmp(t, "tlsv1.1"))
            v |= PROTO_TLS11;
        else if (!strcasecmp(t, "tlsv1.2"))
            v |= PROTO_TLS12;
        else if (!strcasecmp(t, "tlsv1.3"))
            v |= PROTO_TLS13;
        else {
            log_msg(LL_WARNING, "TLS: unknown protocol '%s' in tls-protocols (use TLSv1, TLSv1.1, TLSv1.2 and/or TLSv1.3)", t);
            return -1;
        }
    }
    return v ? v : PROTO_TLS12 | PROTO_TLS13;
}

/* The key's pass phrase (tls-key-file-pass / tls-client-key-file-pass),
 * handed to OpenSSL while the key loads. */
static int pass_cb(char *buf, int size, int rwflag, void *u)
{
    const char *pass = u;
    (void)rwflag;
    if (!pass)
        return -1;
    size_t n = strlen(pass);
    if (n > (size_t)size)
        return -1;
    memcpy(buf, pass, n);
    return (int)n;
}

/* A file OpenSSL is about to load can be read (its own error for a
 * missing file says only "system lib"). */
static int readable(const char *what, const char *path)
{
    if (path && access(path, R_OK) < 0) {
        log_msg(LL_WARNING, "TLS: cannot read the %s %s: %s", what, path, strerror(errno));
        return 0;
    }
    return 1;
}

/* What the server and the client contexts share: protocols, certificate
 * and key, CAs, ciphers. */
static SSL_CTX *ctx_new(int client, int protocols)
{
    /* The client side presents tls-client-cert-file when both it and its
     * key are set, else the server's certificate (as Redis does). */
    int own = client && opt(tls_cfg.client_cert_file) && opt(tls_cfg.client_key_file);
    const char *cert = opt(own ? tls_cfg.client_cert_file : tls_cfg.cert_file);
    const char *key = opt(own ? tls_cfg.client_key_file : tls_cfg.key_file);
    const char *pass = opt(own ? tls_cfg.client_key_file_pass : tls_cfg.key_file_pass);
    const char *ca_file = opt(tls_cfg.ca_cert_file), *ca_dir = opt(tls_cfg.ca_cert_dir);
    const char *ciphers = opt(tls_cfg.ciphers), *suites = opt(tls_cfg.ciphersuites);
    char e[256];
    SSL_CTX *ctx = SSL_CTX_new(client ? TLS_client_method() : TLS_server_method());
    if (!ctx) {
        ssl_errstr(e, sizeof(e));
        log_msg(LL_WARNING, "TLS: cannot create a context: %s", e);
        return NULL;
    }
    long o = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION;
    if (!(protocols & PROTO_TLS1))
        o |= SSL_OP_NO_TLSv1;
    if (!(protocols & PROTO_TLS11))
        o |= SSL_OP_NO_TLSv1_1;
    if (!(protocols & PROTO_TLS12))
        o |= SSL_OP_NO_TLSv1_2;
    if (!(protocols & PROTO_TLS13))
        o |= SSL_OP_NO_TLSv1_3;
    SSL_CTX_set_options(ctx, o);
    /* Writes go out record by record from a reply buffer that may move
     * (it grows) between a write that would block and its retry. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_default_passwd_cb(ctx, pass_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)pass);
    if (!readable("certificate", cert) || !readable("private key", key) || !readable("CA certificates", ca_file))
        goto fail;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        ssl_errstr(e, sizeof(e));
        log_msg(LL_WARNING, "TLS: cannot load the certificate %s: %s", cert, e);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0) {
        ssl_errstr(e, sizeof(e));
        log_msg(LL_WARNING, "TLS: cannot load the private key %s: %s", key, e);
        goto fail;
    }
    if (SSL_CTX_check_private_key(ctx) <= 0) {
        ssl_errstr(e, sizeof(e));
        log_msg(LL_WARNING, "TLS: the private key %s does not match the certificate %s: %s", key, cert, e);
        goto fail;
    }
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL); /* the string may be replaced later */
    if ((ca_file || ca_dir) && SSL_CTX_load_verify_locations(ctx, ca_file, ca_dir) <= 0) {
        ssl_errstr(e, sizeof(e));
        log_msg(LL_WARNING, "TLS: cannot load the CA certificates (%s%s%s): %s", ca_file ? ca_file : "",
                ca_file && ca_dir ? ", " : "", ca_dir ? ca_dir : "", e);
        goto fail;
    }
    if (ciphers && !SSL_CTX_set_cipher_list(ctx, ciphers)) {
        ERR_clear_error();
        log_msg(LL_WARNING, "TLS: tls-ciphers names no usable cipher: %s", ciphers);
        goto fail;
    }
    if (suites && !SSL_CTX_set_ciphersuites(ctx, suites)) {
        ERR_clear_error();
        log_msg(LL_WARNING, "TLS: tls-ciphersuites names no usable cipher suite: %s", suites);
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

/* tls-dh-params-file (PEM DH parameters), or OpenSSL's automatic choice. */
static int ctx_dh(SSL_CTX *ctx)
{
    const char *path = opt(tls_cfg.dh_params_file);
    char e[256];
    if (!path) {
        SSL_CTX_set_dh_auto(ctx, 1);
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        log_msg(LL_WARNING, "TLS: cannot open the DH parameters %s: %s", path, strerror(errno));
        return -1;
    }
    EVP_PKEY *dh = NULL;
    OSSL_DECODER_CTX *dc =
        OSSL_DECODER_CTX_new_for_pkey(&dh, "PEM", NULL, "DH", OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, NULL, NULL);
    int ok = dc && OSSL_DECODER_from_fp(dc, f);
    OSSL_DECODER_CTX_free(dc);
    fclose(f);
    if (!ok || !dh) {
        ssl_errstr(e, sizeof(e));
        log_msg(LL_WARNING, "TLS: %s holds no DH parameters: %s", path, e);
        EVP_PKEY_free(dh);
        return -1;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, dh) <= 0) { /* takes dh on success */
        ssl_errstr(e, sizeof(e));
        log_msg(LL_WARNING, "TLS: cannot use the DH parameters %s: %s", path, e);
        EVP_PKEY_free(dh);
        return -1;
    }
    return 0;
}

/* Both contexts from tls_cfg, or -1 with the reason logged. */
static int build(SSL_CTX **srv, SSL_CTX **cli)
{
    *srv = *cli = NULL;
    if (!opt(tls_cfg.cert_file)) {
        log_msg(LL_WARNING, "TLS: no tls-cert-file configured");
        return -1;
    }
    if (!opt(tls_cfg.key_file)) {
        log_msg(LL_WARNING, "TLS: no tls-key-file configured");
        return -1;
    }
    if ((__atomic_load_n(&tls_cfg.auth_clients, __ATOMIC_RELAXED) != TLS_AUTH_NO || tls_cfg.replication || tls_cfg.cluster) &&
        !opt(tls_cfg.ca_cert_file) && !opt(tls_cfg.ca_cert_dir)) {
        log_msg(LL_WARNING, "TLS: tls-auth-clients, tls-replication and tls-cluster verify peers: they need "
                            "tls-ca-cert-file or tls-ca-cert-dir");
        return -1;
    }
    int protocols = parse_protocols(tls_cfg.protocols);
    if (protocols < 0)
        return -1;
    SSL_CTX *s = ctx_new(0, protocols), *c = NULL;
    if (!s)
        return -1;
    if (tls_cfg.session_caching) {
        SSL_CTX_set_session_cache_mode(s, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(s, tls_cfg.session_cache_size);
        SSL_CTX_set_timeout(s, tls_cfg.session_cache_timeout);
        SSL_CTX_set_session_id_context(s, (const unsigned char *)"hotkv", 5);
    } else {
        /* No resumption at all: no cache, and no TLS 1.3 tickets (a ticket
         * would resume a session without the cache). */
        SSL_CTX_set_session_cache_mode(s, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(s, SSL_OP_NO_TICKET);
        SSL_CTX_set_num_tickets(s, 0);
    }
    if (tls_cfg.prefer_server_ciphers)
        SSL_CTX_set_options(s, SSL_OP_CIPHER_SERVER_PREFERENCE);
    /* Read whole socket buffers, not a record header then its body: one
     * read(2) per request instead of two.  The worker drains what OpenSSL
     * keeps before it waits on epoll again (tls_conn_has_pending). */
    SSL_CTX_set_read_ahead(s, 1);
    /* An idle connection keeps no 17 KB record buffers (in and out): about
     * 25 KB of memory per TLS client instead of 35 (bench/tls.sh notes). */
    SSL_CTX_set_mode(s, SSL_MODE_RELEASE_BUFFERS);
    if (ctx_dh(s) < 0)
        goto fail;
    /* The client context: a replica's TLS link to its master verifies the
     * master's certificate against the CA (no host name check, as Redis). */
    c = ctx_new(1, protocols);
    if (!c)
        goto fail;
    *srv = s;
    *cli = c;
    return 0;
fail:
    SSL_CTX_free(s);
    return -1;
}

static void install(SSL_CTX *s, SSL_CTX *c)
{
    pthread_mutex_lock(&ctx_lock);
    SSL_CTX *os = server_ctx, *oc = client_ctx;
    server_ctx = s;
    client_ctx = c;
    pthread_mutex_unlock(&ctx_lock);
    SSL_CTX_free(os); /* connections made from it keep it alive */
    SSL_CTX_free(oc);
}

static int have_ctx(void)
{
    pthread_mutex_lock(&ctx_lock);
    int have = server_ctx != NULL;
    pthread_mutex_unlock(&ctx_lock);
    return have;
}

int tls_configure(int reconfigure)
{
    SSL_CTX *s, *c;
    if (!reconfigure && have_ctx())
        return 0;
    pthread_mutex_lock(&build_lock);
    int rc = build(&s, &c);
    pthread_mutex_unlock(&build_lock);
    ERR_clear_error();
    if (rc < 0)
        return -1;
    install(s, c);
    return 0;
}

int tls_apply(int ctx_changed, int port_changed, int old_port, char *err, size_t errlen)
{
    SSL_CTX *s = NULL, *c = NULL;
    int port = __atomic_load_n(&tls_cfg.port, __ATOMIC_RELAXED);
    int rebuild = ctx_changed && tls_in_use();
    if (rebuild || (port_changed && port && !have_ctx())) {
        pthread_mutex_lock(&build_lock);
        int rc = build(&s, &c);
        pthread_mutex_unlock(&build_lock);
        ERR_clear_error();
        if (rc < 0) {
            snprintf(err, errlen, "Unable to update TLS configuration. Check server logs.");
            return rebuild ? -1 : -2;
        }
    }
    /* The listeners move before the new context is installed: a port
     * that cannot be bound leaves everything as it was.  (No lock is held
     * here: moving listeners waits for every worker.) */
    if (port_changed && port != old_port && workers_rebind_tls(cfg.bind, port, old_port) < 0) {
        log_msg(LL_WARNING, "TLS: could not listen on port %d: %s", port, strerror(errno));
        SSL_CTX_free(s);
        SSL_CTX_free(c);
        snprintf(err, errlen, "Unable to listen on this port. Check server logs.");
        return -2;
    }
    if (s)
        install(s, c);
    return 0;
}

/* ------------------------------------------------- one connection --- */

/* The socket BIO of a connection: OpenSSL's own socket BIO, except that
 * its reads first take the bytes the worker already received for it
 * (tls_conn_feed: a loop turn's io_uring recv, docs/architecture.md,
 * "TLS").  Only then does a read reach the socket, with read(2), as
 * OpenSSL's would; writes are send(2).  So with nothing fed it behaves
 * exactly as a socket BIO, and the worker's epoll logic is the same.
 * Owned by the connection's worker, as its SSL. */
struct tls_io {
    int fd;
    const unsigned char *fed; /* bytes received for OpenSSL, not yet read by it */
    size_t nfed;
    unsigned char *own; /* where fed bytes move when the worker's buffer is reused (tls_conn_keep) */
    size_t owncap;
};

static BIO_METHOD *io_method;
static pthread_once_t io_once = PTHREAD_ONCE_INIT;

static int io_would_block(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

static int io_read(BIO *b, char *out, size_t n, size_t *got)
{
    struct tls_io *io = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (io->nfed) {
        size_t k = n < io->nfed ? n : io->nfed;
        memcpy(out, io->fed, k);
        io->fed += k;
        io->nfed -= k;
        *got = k;
        return 1;
    }
    ssize_t r = read(io->fd, out, n);
    if (r > 0) {
        *got = (size_t)r;
        return 1;
    }
    if (r < 0 && io_would_block(errno))
        BIO_set_retry_read(b);
    return 0; /* 0: the peer closed; -1: errno says why */
}

static int io_write(BIO *b, const char *in, size_t n, size_t *put)
{
    struct tls_io *io = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ssize_t r = send(io->fd, in, n, MSG_NOSIGNAL);
    if (r >= 0) {
        *put = (size_t)r;
        return 1;
    }
    if (io_would_block(errno))
        BIO_set_retry_write(b);
    return 0;
}

static long io_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int io_destroy(BIO *b)
{
    struct tls_io *io = BIO_get_data(b);
    if (io) {
        hk_free(io->own);
        hk_free(io);
        BIO_set_data(b, NULL);
    }
    return 1;
}

static void io_method_make(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "hotkv socket");
    if (m && BIO_meth_set_read_ex(m, io_read) && BIO_meth_set_write_ex(m, io_write) && BIO_meth_set_ctrl(m, io_ctrl) &&
        BIO_meth_set_destroy(m, io_destroy))
        io_method = m;
    else
        BIO_meth_free(m);
}

static struct tls_io *conn_io(void *ssl)
{
    return BIO_get_data(SSL_get_rbio(ssl));
}

/* Our socket BIO on fd under ssl (the SSL owns it, and the BIO its
 * tls_io: io_destroy): ssl, or NULL (ssl freed) if it cannot be made. */
static SSL *attach(SSL *ssl, int fd)
{
    pthread_once(&io_once, io_method_make);
    struct tls_io *io = hk_calloc(sizeof(*io));
    BIO *b = io_method ? BIO_new(io_method) : NULL;
    if (!b) {
        hk_free(io);
        ERR_clear_error();
        SSL_free(ssl);
        return NULL;
    }
    io->fd = fd;
    BIO_set_data(b, io);
    BIO_set_init(b, 1);
    SSL_set_bio(ssl, b, b);
    return ssl;
}

void *tls_conn_new(int fd)
{
    pthread_mutex_lock(&ctx_lock);
    SSL *ssl = server_ctx ? SSL_new(server_ctx) : NULL;
    pthread_mutex_unlock(&ctx_lock);
    if (!ssl) {
        ERR_clear_error();
        return NULL;
    }
    int mode = __atomic_load_n(&tls_cfg.auth_clients, __ATOMIC_RELAXED);
    SSL_set_verify(ssl,
                   mode == TLS_AUTH_YES        ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                   : mode == TLS_AUTH_OPTIONAL ? SSL_VERIFY_PEER
                                               : SSL_VERIFY_NONE,
                   NULL);
    SSL_set_accept_state(ssl);
    return attach(ssl, fd);
}

void *tls_conn_new_client(int fd)
{
    pthread_mutex_lock(&ctx_lock);
    SSL *ssl = client_ctx ? SSL_new(client_ctx) : NULL;
    pthread_mutex_unlock(&ctx_lock);
    if (!ssl) {
        ERR_clear_error();
        return NULL;
    }
    SSL_set_connect_state(ssl);
    return attach(ssl, fd);
}

void tls_conn_set_fd(void *ssl, int fd)
{
    conn_io(ssl)->fd = fd;
}

int tls_conn_connect(void *ssl, int *want, char *err, size_t errlen)
{
    return tls_conn_accept(ssl, want, err, errlen); /* SSL_do_handshake: either side */
}

void tls_conn_free(void *p, int graceful)
{
    SSL *ssl = p;
    if (graceful && SSL_is_init_finished(ssl))
        (void)SSL_shutdown(ssl); /* our close_notify, if the socket takes it now */
    ERR_clear_error();
    SSL_free(ssl);
}

/* SSL_get_error's verdict on a call that returned r: 0 with *want set
 * (would block), or -1 (closed or failed; the queue is emptied). */
static int io_result(SSL *ssl, int r, int *want)
{
    switch (SSL_get_error(ssl, r)) {
    case SSL_ERROR_WANT_READ:
        *want = TLS_WANT_READ;
        return 0;
    case SSL_ERROR_WANT_WRITE:
        *want = TLS_WANT_WRITE;
        return 0;
    default:
        ERR_clear_error();
        return -1;
    }
}

int tls_conn_accept(void *p, int *want, char *err, size_t errlen)
{
    SSL *ssl = p;
    int r = SSL_do_handshake(ssl);
    if (r == 1)
        return 1;
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *want = e == SSL_ERROR_WANT_READ ? TLS_WANT_READ : TLS_WANT_WRITE;
        return 0;
    }
    if (e == SSL_ERROR_SYSCALL && !ERR_peek_error())
        snprintf(err, errlen, "%s", errno ? strerror(errno) : "connection closed by the client");
    else
        ssl_errstr(err, errlen);
    ERR_clear_error();
    return -1;
}

ssize_t tls_conn_read(void *p, void *buf, size_t n, int *want)
{
    SSL *ssl = p;
    size_t got = 0;
    int r = SSL_read_ex(ssl, buf, n, &got);
    if (r == 1)
        return (ssize_t)got;
    return io_result(ssl, r, want);
}

ssize_t tls_conn_write(void *p, const void *buf, size_t n, int *want)
{
    SSL *ssl = p;
    size_t put = 0;
    int r = SSL_write_ex(ssl, buf, n, &put);
    if (r == 1)
        return (ssize_t)put;
    return io_result(ssl, r, want);
}

int tls_conn_has_pending(void *p)
{
    return SSL_has_pending((SSL *)p) || conn_io(p)->nfed;
}

void tls_conn_feed(void *p, const void *buf, size_t n)
{
    struct tls_io *io = conn_io(p);
    io->fed = buf;
    io->nfed = n;
}

size_t tls_conn_fed(void *p)
{
    return conn_io(p)->nfed;
}

void tls_conn_keep(void *p)
{
    struct tls_io *io = conn_io(p);
    if (!io->nfed || (io->own && io->fed >= io->own && io->fed < io->own + io->owncap))
        return;
    if (io->owncap < io->nfed) {
        hk_free(io->own);
        io->own = hk_malloc(io->nfed);
        io->owncap = io->nfed;
    }
    memmove(io->own, io->fed, io->nfed);
    io->fed = io->own;
}

int tls_conn_peer_cn(void *p, char *buf, size_t cap)
{
    SSL *ssl = p;
    X509 *cert = SSL_get0_peer_certificate(ssl);
    if (!cert || SSL_get_verify_result(ssl) != X509_V_OK)
        return -1;
    X509_NAME *subj = X509_get_subject_name(cert);
    int i = subj ? X509_NAME_get_index_by_NID(subj, NID_commonName, -1) : -1;
    if (i < 0)
        return -1;
    ASN1_STRING *d = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, i));
    unsigned char *utf8 = NULL;
    int n = d ? ASN1_STRING_to_UTF8(&utf8, d) : -1;
    int ok = n >= 0 && (size_t)n < cap && !memchr(utf8, 0, (size_t)n);
    if (ok) {
        memcpy(buf, utf8, (size_t)n);
        buf[n] = 0;
    }
    OPENSSL_free(utf8);
    ERR_clear_error();
    return ok ? n : -1;
}
